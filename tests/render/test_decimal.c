/* sc_strtof and sc_strtol (scenes/decimal.c) give strtof's and strtol's value, to the
 * bit, and end pointer: on every number of the meshes in ../shared/scenes, on 400,000
 * generated decimals of every shape the fast path takes or refuses (digit counts
 * around 2^24, exponents around +-10, signs, leading space, what follows the number),
 * and on forms it must leave to the C library (hexadecimal, inf, nan, "1e", ".",
 * overlong integers). */
#include "scenes/decimal.h"
#include "tests/check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int float_mismatches, long_mismatches;

static void compare_float(const char *s)
{
    char *e1, *e2;
    float a = strtof(s, &e1), b = sc_strtof(s, &e2);
    if (memcmp(&a, &b, sizeof a) || e1 != e2) {
        if (float_mismatches++ < 5)
            fprintf(stderr, "  \"%s\": strtof %a (+%td), sc_strtof %a (+%td)\n", s, a, e1 - s, b, e2 - s);
    }
}

static void compare_long(const char *s)
{
    char *e1, *e2;
    long a = strtol(s, &e1, 10), b = sc_strtol(s, &e2);
    if (a != b || e1 != e2) {
        if (long_mismatches++ < 5)
            fprintf(stderr, "  \"%s\": strtol %ld (+%td), sc_strtol %ld (+%td)\n", s, a, e1 - s, b, e2 - s);
    }
}

static void test_fixed_forms(void)
{
    static const char *forms[] = {
        "0", "-0", "+0", "0.0", "-0.0", ".5", "-.5", "5.", "1e5", "1E-5", "1e+05", "1e", "1e+",
        "1e-", "1.5e", ".", "-", "+", "", "  \t\n2.5", "0x1p3", "0X10", "-0x1.8p1", "inf",
        "-infinity", "nan", "NaN(1)", "1.5.2", "1..5", "16777216", "16777217", "16777216.5",
        "1677721.6", "0.0000000001", "0.00000000001", "1e10", "1e11", "12345678e-7",
        "3.4028235e38", "1e39", "1e-46", "1.17549435e-38", "999999999999999999999",
        "9223372036854775807", "9223372036854775808", "-9223372036854775809",
        "123456789012345678", "1234567890123456789", "42/7", "-3//2", "7x", "1,5", "1 2",
    };
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        compare_float(forms[i]);
        compare_long(forms[i]);
    }
    CHECK_MSG(!float_mismatches && !long_mismatches, "%d float and %d integer forms differ",
              float_mismatches, long_mismatches);
}

static uint32_t rnd(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* [space][sign]digits[.digits][e[sign]digits][tail], each part at random. */
static void random_decimal(uint32_t *seed, char *buf)
{
    static const char tails[] = " xXeE./a-+9";
    char *p = buf;
    for (uint32_t n = rnd(seed) % 3; n; n--) *p++ = rnd(seed) % 2 ? ' ' : '\t';
    uint32_t sign = rnd(seed) % 4;
    if (sign == 1) *p++ = '-';
    if (sign == 2) *p++ = '+';
    for (uint32_t n = rnd(seed) % 10; n; n--) *p++ = (char)('0' + rnd(seed) % 10);
    if (rnd(seed) % 4) {
        *p++ = '.';
        for (uint32_t n = rnd(seed) % 10; n; n--) *p++ = (char)('0' + rnd(seed) % 10);
    }
    if (rnd(seed) % 3 == 0) {
        *p++ = rnd(seed) % 2 ? 'e' : 'E';
        uint32_t es = rnd(seed) % 3;
        if (es == 1) *p++ = '-';
        if (es == 2) *p++ = '+';
        for (uint32_t n = rnd(seed) % 3; n; n--) *p++ = (char)('0' + rnd(seed) % 10);
    }
    if (rnd(seed) % 2) *p++ = tails[rnd(seed) % (sizeof tails - 1)];
    *p = 0;
}

static void test_generated_decimals(void)
{
    uint32_t seed = 2024;
    char buf[64];
    for (int i = 0; i < 400000; i++) {
        random_decimal(&seed, buf);
        compare_float(buf);
        compare_long(buf);
    }
    CHECK_MSG(!float_mismatches && !long_mismatches, "%d floats and %d integers differ",
              float_mismatches, long_mismatches);
}

/* Every token of every "v", "vn", "vt" and "f" line, from each of its characters on. */
static long compare_mesh(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[4096];
    long n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] != 'v' && line[0] != 'f') continue;
        for (char *p = line + 1; *p; p++) {
            compare_float(p);
            compare_long(p);
            n++;
        }
    }
    fclose(f);
    return n;
}

static void test_shared_meshes(void)
{
    static const char *meshes[] = {"bunny.obj", "dragon.obj", "horse.obj", "teapot.obj",
                                   "CornellBox-Original.obj"};
    long total = 0;
    for (size_t i = 0; i < sizeof meshes / sizeof *meshes; i++) {
        char path[256];
        snprintf(path, sizeof path, "../shared/scenes/%s", meshes[i]);
        long n = compare_mesh(path);
        if (n < 0) SKIP("%s is missing", path);
        total += n;

    }
    CHECK_MSG(!float_mismatches && !long_mismatches, "%d of %ld float and %d integer positions differ",
              float_mismatches, total, long_mismatches);
}

int main(void)
{
    RUN(test_fixed_forms);
    RUN(test_generated_decimals);
    RUN(test_shared_meshes);
    return check_finish();
}

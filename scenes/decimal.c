/* decimal.c — strtof and strtol with a fast path for short decimals (see decimal.h). */
#include "scenes/decimal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define FAST_MAX_MANTISSA (1u << 24)      /* every integer up to it is a float */
#define FAST_MAX_EXP 10                   /* 10^10 is a float exactly; 10^11 is not */

static const float pow10f_exact[FAST_MAX_EXP + 1] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                                      1e6f, 1e7f, 1e8f, 1e9f, 1e10f};

static bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Digits into *m (stopping to count past `limit`), with how many were read. */
static const char *digits(const char *p, uint64_t *m, int *count, uint64_t limit)
{
    for (; is_digit(*p); p++, (*count)++)
        if (*m <= limit) *m = *m * 10 + (uint64_t)(*p - '0');
    return p;
}

/* The fast path: [space][sign]digits[.digits][(e|E)[sign]digits]; false to fall back. */
static bool fast_float(const char *p, char **end, float *out)
{
    while (is_space(*p)) p++;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+') p++;
    uint64_t m = 0;
    int whole = 0, frac = 0;
    p = digits(p, &m, &whole, FAST_MAX_MANTISSA);
    if (*p == '.') p = digits(p + 1, &m, &frac, FAST_MAX_MANTISSA);
    if (whole + frac == 0 || m > FAST_MAX_MANTISSA) return false;
    int exp = -frac;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        bool eneg = *q == '-';
        if (*q == '-' || *q == '+') q++;
        uint64_t e = 0;
        int n = 0;
        q = digits(q, &e, &n, 1000);
        if (n == 0 || e > 1000) return false;       /* "1e", "1e+": strtof's call */
        exp += eneg ? -(int)e : (int)e;
        p = q;
    }
    if (*p == 'x' || *p == 'X' || exp < -FAST_MAX_EXP || exp > FAST_MAX_EXP)
        return false;                     /* "0x1p3" is hexadecimal to strtof */
    float v = (float)m;
    v = exp < 0 ? v / pow10f_exact[-exp] : v * pow10f_exact[exp];
    *out = neg ? -v : v;
    *end = (char *)p;
    return true;
}

float sc_strtof(const char *p, char **end)
{
    float v;
    return fast_float(p, end, &v) ? v : strtof(p, end);
}

/* [space][sign]digits, up to 18 of them (no overflow); false to fall back. */
static bool fast_long(const char *p, char **end, long *out)
{
    while (is_space(*p)) p++;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+') p++;
    uint64_t m = 0;
    int n = 0;
    p = digits(p, &m, &n, UINT64_MAX / 100);
    if (n == 0 || n > 18) return false;
    *out = neg ? -(long)m : (long)m;
    *end = (char *)p;
    return true;
}

long sc_strtol(const char *p, char **end)
{
    long v;
    return fast_long(p, end, &v) ? v : strtol(p, end, 10);
}

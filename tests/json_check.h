/* A strict JSON validator for tests (RFC 8259): objects, arrays, strings with only the
 * standard escapes and no raw control characters or invalid UTF-8, numbers in JSON's
 * grammar, true/false/null, nothing after the value but whitespace. Written here
 * because the tests cannot count on python3 being installed.
 *
 * json_valid(text): whether text is exactly one valid JSON value. */
#ifndef TESTS_JSON_CHECK_H
#define TESTS_JSON_CHECK_H

#include <stdbool.h>
#include <string.h>

static const char *json_value(const char *s, int depth);

static const char *json_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

/* One UTF-8 sequence at s (first byte >= 0x80): its length, or 0 if malformed. */
static int json_utf8_len(const unsigned char *s)
{
    int n = *s >= 0xc2 && *s <= 0xdf ? 2 : *s >= 0xe0 && *s <= 0xef ? 3
          : *s >= 0xf0 && *s <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

static const char *json_string_end(const char *s)
{
    if (*s++ != '"') return NULL;
    while (*s != '"') {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20) return NULL;                        /* includes the terminating 0 */
        if (c == '\\') {
            s++;
            if (*s == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i]) return NULL;
                s += 5;
            } else if (*s && strchr("\"\\/bfnrt", *s)) {
                s++;
            } else {
                return NULL;
            }
        } else if (c >= 0x80) {
            int n = json_utf8_len((const unsigned char *)s);
            if (!n) return NULL;
            s += n;
        } else {
            s++;
        }
    }
    return s + 1;
}

static const char *json_digits(const char *s)
{
    if (*s < '0' || *s > '9') return NULL;
    while (*s >= '0' && *s <= '9') s++;
    return s;
}

static const char *json_number(const char *s)
{
    if (*s == '-') s++;
    if (*s == '0') s++;
    else if (!(s = json_digits(s))) return NULL;
    if (*s == '.' && !(s = json_digits(s + 1))) return NULL;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(s = json_digits(s))) return NULL;
    }
    return s;
}

/* Members of an object (is_object) or elements of an array, after the opening bracket. */
static const char *json_members(const char *s, bool is_object, int depth)
{
    char close = is_object ? '}' : ']';
    s = json_ws(s);
    if (*s == close) return s + 1;
    for (;;) {
        if (is_object) {
            if (!(s = json_string_end(json_ws(s)))) return NULL;
            s = json_ws(s);
            if (*s++ != ':') return NULL;
        }
        if (!(s = json_value(s, depth + 1))) return NULL;
        s = json_ws(s);
        if (*s == close) return s + 1;
        if (*s++ != ',') return NULL;
    }
}

static const char *json_value(const char *s, int depth)
{
    s = json_ws(s);
    if (depth > 64) return NULL;
    if (*s == '{' || *s == '[') return json_members(s + 1, *s == '{', depth);
    if (*s == '"') return json_string_end(s);
    if (!strncmp(s, "true", 4)) return s + 4;
    if (!strncmp(s, "false", 5)) return s + 5;
    if (!strncmp(s, "null", 4)) return s + 4;
    return json_number(s);
}

static bool json_valid(const char *text)
{
    const char *end = json_value(text, 0);
    return end && *json_ws(end) == 0;
}

#endif

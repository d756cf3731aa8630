/* default_output.c — the default image name (see default_output.h). */
#include "tools/common/default_output.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The last component of path without its extension, made safe for a file name, into
 * out (at most `room` characters). */
static size_t put_stem(const char *path, char *out, size_t room)
{
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    if (n > room) n = room;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)base[i];
        out[i] = isalnum(c) || c == '.' || c == '_' || c == '-' ? (char)c : '_';
    }
    return n;
}

void do_default_name(const char *scene, const char *graph, char *name, size_t size)
{
    char stem[2][120];
    size_t n0 = put_stem(scene, stem[0], sizeof stem[0] - 1);
    size_t n1 = put_stem(graph, stem[1], sizeof stem[1] - 1);
    stem[0][n0] = stem[1][n1] = 0;
    snprintf(name, size, "%s-%s.png", stem[0], stem[1]);
}

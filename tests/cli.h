/* cli.h — for the tests that run a project program as a user would: its exit status and
 * what it printed (stdout and stderr together), the program found beside the test's
 * build directory, and files read whole. Include once per test program. */
#ifndef TESTS_CLI_H
#define TESTS_CLI_H

#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char tool[512];
static char out[65536];             /* --list-stages alone is 17 KB */

/* tool = <build>/bin/NAME for a test at <build>/tests/<group>/<test>. */
static inline void find_tool(const char *argv0, const char *name)
{
    char self[512];
    snprintf(self, sizeof self, "%s", argv0);
    snprintf(tool, sizeof tool, "%s/../../bin/%s", dirname(self), name);
}

/* Runs `tool args`; its output is in `out`. The exit status, or -1 if it did not exit. */
static inline int run(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", tool, args);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int st = p ? pclose(p) : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The whole file, NUL-terminated (NULL if unreadable); its size in *n when n != NULL. */
static inline char *slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *buf = size >= 0 ? calloc(1, (size_t)size + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) { free(buf); buf = NULL; }
    fclose(f);
    if (n) *n = size;
    return buf;
}

/* The integer after `"name": ` in the text of a --stats file (-1 where stats is NULL or
 * has no such field). */
static inline long long stat_of(const char *stats, const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "\"%s\": ", name);
    const char *at = stats ? strstr(stats, key) : NULL;
    return at ? strtoll(at + strlen(key), NULL, 10) : -1;
}

/* Two files with the same bytes (false if either is unreadable). */
static inline bool same_files(const char *a, const char *b)
{
    long na = 0, nb = 0;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, (size_t)na) == 0;
    free(x);
    free(y);
    return same;
}

#endif

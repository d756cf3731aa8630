/* scratch_dir.h — for tests that write their inputs and outputs into a folder of their
 * own (made with mkdtemp, so that tests running side by side never share a path): write
 * a file there, and remove the folder with all it holds when the test ends. */
#ifndef TESTS_SCRATCH_DIR_H
#define TESTS_SCRATCH_DIR_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes the n bytes at data to DIR/NAME (a failure shows in what the test reads back). */
static inline void scratch_write(const char *dir, const char *name, const void *data, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) fwrite(data, 1, n, f), fclose(f);
}

static inline void scratch_write_text(const char *dir, const char *name, const char *text)
{
    scratch_write(dir, name, text, strlen(text));
}

/* Writes text to DIR/NAME and returns that path. The path lies in one buffer per test
 * program, overwritten by the next call: use it before writing another file. */
static inline const char *scratch_file(const char *dir, const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    scratch_write_text(dir, name, text);
    return path;
}

/* Removes dir and everything in it; false, with a line on stderr, where that failed.
 * A path too long for the command is refused rather than cut short (a cut path could
 * name a folder above the test's own). */
static inline bool scratch_dir_remove(const char *dir)
{
    char cmd[600];
    const int n = snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    const bool removed = n > 0 && (size_t)n < sizeof cmd && system(cmd) == 0;
    if (!removed) fprintf(stderr, "  could not remove %s\n", dir);
    return removed;
}

#endif

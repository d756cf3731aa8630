/* input_file.c — see input_file.h. */
#include "scenes/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *sc_open_input(const char *path, const char *mode, size_t max_bytes, char err[SC_ERR_MAX])
{
    /* O_NONBLOCK: opening a FIFO with no writer would wait for one. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, SC_ERR_MAX, "%.400s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *why = NULL;
    char size[128];
    if (fstat(fd, &st) != 0) why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a regular file (a FIFO, device or directory)";
    else if (max_bytes && (size_t)st.st_size > max_bytes) {
        snprintf(size, sizeof size, "%lld bytes, more than the memory limit of %zu",
                 (long long)st.st_size, max_bytes);
        why = size;
    }
    int flags = why ? 0 : fcntl(fd, F_GETFL);
    if (!why && (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)) why = strerror(errno);
    FILE *f = why ? NULL : fdopen(fd, mode);
    if (!f) {
        if (!why) why = strerror(errno);
        snprintf(err, SC_ERR_MAX, "%.300s: %s", path, why);
        close(fd);
    }
    return f;
}

ssize_t sc_read_line(FILE *f, char **buf, size_t *cap)
{
    size_t n = 0;
    for (;;) {
        if (*cap - n < 2 || !*buf) {
            size_t want = *cap ? *cap * 2 : 256;
            if (want > SC_MAX_LINE + 2) want = SC_MAX_LINE + 2;
            if (want <= *cap) return -1;          /* full at the limit: too long */
            char *grown = realloc(*buf, want);
            if (!grown) return -1;
            *buf = grown;
            *cap = want;
        }
        if (!fgets(*buf + n, (int)(*cap - n), f)) return (ssize_t)n;
        n += strlen(*buf + n);
        if (n > 0 && (*buf)[n - 1] == '\n') return (ssize_t)n;
        if (n > SC_MAX_LINE) return -1;
    }
}

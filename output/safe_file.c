/* safe_file.c — staged, checked file replacement (see safe_file.h). */
#include "output/safe_file.h"

#include "output/interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *path, const char *what, int e)
{
    snprintf(err, errlen, "%s: %s: %s", path, what, strerror(e));
    return -1;
}

static int write_all(int fd, const void *data, size_t n)
{
    for (const char *p = data; n > 0;) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The file a path names: an existing path with its symlinks resolved, or the path itself
 * when nothing is there yet (a dangling symlink is an error: its target is unclear). A
 * link to a pipe or socket is the path itself: /dev/stdout on a pipe is
 * /proc/self/fd/1 -> "pipe:[N]", which realpath cannot resolve but open can. */
static char *resolve(const char *path, int *e)
{
    char *r = realpath(path, NULL);
    if (r || errno != ENOENT) { *e = errno; return r; }
    struct stat st, to;
    if (stat(path, &to) == 0 && (S_ISFIFO(to.st_mode) || S_ISSOCK(to.st_mode))) {
        *e = ENOMEM;
        return strdup(path);
    }
    if (lstat(path, &st) == 0) { *e = ENOENT; return NULL; }      /* dangling link */
    r = strdup(path);
    *e = ENOMEM;
    return r;
}

static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* Writes data to a new temporary beside f->target, fsynced and closed; 0 or an errno. */
static int write_temp(io_file *f, const void *data, size_t size, mode_t mode)
{
    char *dup = strdup(f->target);
    if (!dup) return ENOMEM;
    const char *dir = dirname(dup);
    size_t n = strlen(dir) + 16;
    f->tmp = malloc(n);
    if (!f->tmp) { free(dup); return ENOMEM; }
    snprintf(f->tmp, n, "%s/.gr-XXXXXX", dir);         /* short: any target name fits */
    free(dup);
    int fd = mkstemp(f->tmp);
    if (fd < 0) { int e = errno; free(f->tmp); f->tmp = NULL; return e; }
    f->slot = io_interrupt_track(f->tmp);
    int e = 0;
    if (fchmod(fd, mode) != 0 || write_all(fd, data, size) != 0 || fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    return e;
}

int io_stage(io_file *f, const char *path, const void *data, size_t size, char *err, size_t errlen)
{
    *f = (io_file){.fd = -1, .slot = -1};
    int e;
    f->target = resolve(path, &e);
    if (!f->target) return fail(err, errlen, path, "cannot resolve the path", e);
    struct stat st;
    bool exists = stat(f->target, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {         /* /dev/null, FIFO, tty: written as is */
        f->fd = open(f->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (f->fd < 0) { e = errno; io_discard(f); return fail(err, errlen, path, "cannot open", e); }
        f->data = data;
        f->size = size;
        return 0;
    }
    e = write_temp(f, data, size, exists ? st.st_mode & 07777 : new_file_mode());
    if (e) { io_discard(f); return fail(err, errlen, path, "cannot write", e); }
    return 0;
}

int io_commit(io_file *f, char *err, size_t errlen)
{
    int rc = 0;
    if (f->fd >= 0) {
        int e = write_all(f->fd, f->data, f->size) != 0 ? errno : 0;
        if (close(f->fd) != 0 && !e) e = errno;
        f->fd = -1;
        if (e) rc = fail(err, errlen, f->target, "cannot write", e);
    } else if (f->tmp && rename(f->tmp, f->target) != 0) {
        rc = fail(err, errlen, f->target, "cannot replace the file", errno);
    } else if (f->tmp) {
        io_interrupt_untrack(f->slot);
        free(f->tmp);                             /* renamed: nothing to remove */
        f->tmp = NULL;
    }
    io_discard(f);
    return rc;
}

void io_discard(io_file *f)
{
    if (f->tmp) unlink(f->tmp);
    if (f->tmp) io_interrupt_untrack(f->slot);
    if (f->fd >= 0) close(f->fd);
    free(f->tmp);
    free(f->target);
    *f = (io_file){.fd = -1, .slot = -1};
}

int io_check_writable(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return 0;
    io_file f;
    if (io_stage(&f, path, "", 0, err, errlen)) return -1;
    io_discard(&f);
    return 0;
}

/* Two staged files with the same target: the second would replace the first. */
static int same_target(const io_file *files, int n, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (files[i].target && files[j].target && !strcmp(files[i].target, files[j].target)) {
                snprintf(err, errlen, "%s: named for two outputs", files[i].target);
                return -1;
            }
    return 0;
}

int io_commit_all(io_file *files, int n, char *err, size_t errlen)
{
    /* Interruptions wait until every file is committed (interrupt.h). */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = same_target(files, n, err, errlen);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (files[i].target && (files[i].fd >= 0) == (pass == 0) && !rc)
                rc = io_commit(&files[i], err, errlen);
    for (int i = 0; i < n; i++) io_discard(&files[i]);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* safe_file.h — writing result files without losing what was there, in two phases so
 * several files succeed or fail together (gramps-render's -o and --stats):
 *
 *   io_stage   every file: a regular file (or a new one) is written in full to a
 *              temporary file beside it (short name, so any target name works), flushed
 *              to disk and closed, every result checked; a special file (/dev/null, a
 *              FIFO, a terminal) is only opened;
 *   io_commit  every file, once all staged: temporaries renamed over their targets,
 *              special files written directly;
 *   io_discard on any failure: temporaries removed, targets untouched.
 *
 * A symlink is followed: its target is replaced and the link kept. A replaced file keeps
 * its permission bits; a new one gets 0666 less the umask, as fopen would give it. */
#ifndef OUTPUT_SAFE_FILE_H
#define OUTPUT_SAFE_FILE_H

#include <stddef.h>

typedef struct io_file {
    char *target;                 /* the path written (symlinks resolved) */
    char *tmp;                    /* staged temporary, or NULL for a special file */
    int fd;                       /* special file: open for writing, else -1 */
    const void *data;             /* special file: what io_commit writes */
    size_t size;
    int slot;                     /* the temporary's interrupt.h registry slot, or -1 */
} io_file;

/* 0, or -1 with a message naming path in err (nothing left behind). data must stay valid
 * until io_commit for special files. */
int io_stage(io_file *f, const char *path, const void *data, size_t size, char *err, size_t errlen);
/* 0, or -1 with a message. Frees f's resources either way. */
int io_commit(io_file *f, char *err, size_t errlen);
/* Commits n staged files (unstaged ones, target NULL, are skipped): direct writes
 * (special files, which can fail late: /dev/full) first, renames (which cannot, in
 * practice, once staged) after; stops at the first failure. Two files with the same
 * target are refused before anything is committed. SIGINT, SIGTERM and SIGHUP are
 * blocked while it runs (interrupt.h). 0, or -1 with a message. Every file is discarded
 * afterwards. */
int io_commit_all(io_file *files, int n, char *err, size_t errlen);
/* Removes the temporary and frees f's resources. Safe on a zeroed or committed io_file. */
void io_discard(io_file *f);
/* Whether a result could be written to path: an empty file is staged and discarded, so a
 * missing or read-only directory (or a directory named as the file) is found before a
 * long render, not after it. An existing special file (a FIFO, a terminal) passes
 * unopened: opening it would block without a reader, or end a reader's input early. 0,
 * or -1 with io_stage's message. */
int io_check_writable(const char *path, char *err, size_t errlen);

#endif

/* input_file.h — opening and reading the files a scene names, bounded: only regular files
 * are read (a FIFO or a device such as /dev/zero would block the open or never end), a
 * file larger than the memory limit is refused before it is read, and a line is read up
 * to SC_MAX_LINE bytes, never into an unbounded buffer. */
#ifndef SCENES_INPUT_FILE_H
#define SCENES_INPUT_FILE_H

#include "scenes/scene.h"

#include <stdio.h>
#include <sys/types.h>

#define SC_MAX_LINE 1048576       /* bytes in one line of an OBJ or MTL file */

/* path opened for reading if it is a regular file of at most max_bytes (0: no limit):
 * the FILE, or NULL with err naming path and why (errno's message, "not a regular file",
 * or the size against the limit). `mode` as fopen's. */
FILE *sc_open_input(const char *path, const char *mode, size_t max_bytes, char err[SC_ERR_MAX]);

/* The next line of f into *buf (grown as needed, at most SC_MAX_LINE + 1 bytes, NUL
 * terminated, newline kept): its length, 0 at the end of the file, or -1 when the line
 * is longer than SC_MAX_LINE or no memory was left for it (the rest is not read). */
ssize_t sc_read_line(FILE *f, char **buf, size_t *cap);

#endif

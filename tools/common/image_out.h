/* image_out.h — result images encoded as PNG in memory, so that writing them to disk
 * (safe_file.h) can check every byte written: stb's file writer reports success when
 * fwrite fails. */
#ifndef TOOLS_IMAGE_OUT_H
#define TOOLS_IMAGE_OUT_H

#include <stddef.h>
#include <stdint.h>

/* The PNG of a width x height RGBA image (row 0 at the top), malloc'ed, its size in
 * *size; NULL when out of memory. */
uint8_t *io_encode_png(int width, int height, const uint8_t *rgba, size_t *size);

/* A renderer program's -o and --stats: the PNG of rgba to png_path and `stats`
 * (stats_size bytes) to stats_path, each when its path is not NULL, staged and committed
 * together (safe_file.h), so both are written or neither. stats NULL with stats_path
 * set means making them ran out of memory. 0, or -1 with the message in err. */
int io_write_outputs(const char *png_path, int width, int height, const uint8_t *rgba,
                     const char *stats_path, const char *stats, size_t stats_size, char *err,
                     size_t errlen);

#endif

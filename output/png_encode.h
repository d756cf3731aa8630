/* png_encode.h — RGBA images encoded as PNG in memory, their bands of rows compressed
 * at once (png_encode.c). */
#ifndef OUTPUT_PNG_ENCODE_H
#define OUTPUT_PNG_ENCODE_H

#include "gramps/api.h"

#include <stddef.h>
#include <stdint.h>

/* The PNG of a width x height RGBA image (row 0 at the top), malloc'ed, its size in
 * *size; NULL when out of memory, a side is not positive or the width is over 2^28.
 * gr_parallel_parts(threads) bands of rows are compressed at once (threads 0: one per
 * online CPU). The bytes depend on the image alone, not on `threads`. */
GR_API uint8_t *io_encode_png_on(int width, int height, const uint8_t *rgba, unsigned threads,
                          size_t *size);

/* io_encode_png_on with threads 0. */
GR_API uint8_t *io_encode_png(int width, int height, const uint8_t *rgba, size_t *size);

#endif

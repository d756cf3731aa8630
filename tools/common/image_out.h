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

#endif

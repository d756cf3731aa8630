/* jpeg_encode.h — RGBA images encoded as baseline JPEG in memory through libjpeg-turbo
 * (Debian's libjpeg62-turbo-dev): quality 95, no chroma subsampling. JPEG has no alpha:
 * the alpha channel is dropped (the renderers' colour images are opaque). */
#ifndef OUTPUT_JPEG_ENCODE_H
#define OUTPUT_JPEG_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/* The JPEG of a width x height RGBA image (row 0 at the top), malloc'ed, its size in
 * *size; NULL when out of memory or a side is not within 1..65500 (JPEG's limit). The
 * bytes depend on the image alone. */
uint8_t *io_encode_jpeg(int width, int height, const uint8_t *rgba, size_t *size);

#endif

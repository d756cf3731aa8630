/* image_format.h — which image file format an output path asks for, by its extension,
 * and the RGBA encoders behind each (png_encode.h, jpeg_encode.h). */
#ifndef OUTPUT_IMAGE_FORMAT_H
#define OUTPUT_IMAGE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum io_image_format { IO_IMAGE_PNG, IO_IMAGE_JPEG, IO_IMAGE_EXR } io_image_format;

/* The extensions known, for messages. */
#define IO_IMAGE_EXTENSIONS ".png, .jpg, .jpeg or .exr"

/* The format of path by its extension, in any case: .png, .jpg/.jpeg, .exr (float
 * channels: gramps-render makes them, tools/common/float_aovs.h). A name with
 * no extension (/dev/null, a FIFO, a script's temporary) is PNG, as it always was.
 * false for any other extension. */
bool io_image_format_of(const char *path, io_image_format *format);

/* An RGBA image encoded as PNG or JPEG (malloc'ed, its size in *size), or NULL when out
 * of memory or the format is EXR (not made from 8-bit RGBA). */
uint8_t *io_encode_image(io_image_format format, int width, int height,
                         const uint8_t *rgba, unsigned threads, size_t *size);

#endif

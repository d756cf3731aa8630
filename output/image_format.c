/* image_format.c — output formats by extension (see image_format.h). */
#include "output/image_format.h"

#include "output/jpeg_encode.h"
#include "output/png_encode.h"

#include <string.h>
#include <strings.h>

/* The extension of path's last component without its dot, or NULL when it has none (a
 * leading dot, as in ".hidden", starts a name, not an extension). */
static const char *extension_of(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot + 1 : NULL;
}

bool io_image_format_of(const char *path, io_image_format *format)
{
    const char *ext = extension_of(path);
    if (!ext || !strcasecmp(ext, "png")) *format = IO_IMAGE_PNG;
    else if (!strcasecmp(ext, "jpg") || !strcasecmp(ext, "jpeg")) *format = IO_IMAGE_JPEG;
    else if (!strcasecmp(ext, "exr")) *format = IO_IMAGE_EXR;
    else return false;
    return true;
}

uint8_t *io_encode_image(io_image_format format, int width, int height, const uint8_t *rgba,
                         unsigned threads, size_t *size)
{
    switch (format) {
    case IO_IMAGE_PNG: return io_encode_png_on(width, height, rgba, threads, size);
    case IO_IMAGE_JPEG: return io_encode_jpeg(width, height, rgba, size);
    case IO_IMAGE_EXR: break;
    }
    return NULL;
}

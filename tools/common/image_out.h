/* image_out.h — writing result images without losing what was there: the PNG goes to a
 * temporary file beside the target and is renamed over it only once complete. */
#ifndef TOOLS_IMAGE_OUT_H
#define TOOLS_IMAGE_OUT_H

#include <stddef.h>
#include <stdint.h>

/* Returns 0, or -1 with a message naming the file in err. */
int io_write_png(const char *path, int width, int height, const uint8_t *rgba,
                 char *err, size_t errlen);

#endif

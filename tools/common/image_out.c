/* image_out.c — PNG encoding through stb_image_write, to memory (see image_out.h). */
#include "tools/common/image_out.h"

#include <stdlib.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

uint8_t *io_encode_png(int width, int height, const uint8_t *rgba, size_t *size)
{
    int len = 0;
    uint8_t *png = stbi_write_png_to_mem(rgba, width * 4, width, height, 4, &len);
    *size = png ? (size_t)len : 0;
    return png;
}

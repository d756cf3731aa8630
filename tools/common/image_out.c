/* image_out.c — PNG output through stb_image_write, via a temporary file and rename. */
#include "tools/common/image_out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

int io_write_png(const char *path, int width, int height, const uint8_t *rgba,
                 char *err, size_t errlen)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp) { snprintf(err, errlen, "%s: out of memory", path); return -1; }
    snprintf(tmp, n, "%s.tmp-%ld", path, (long)getpid());
    if (!stbi_write_png(tmp, width, height, 4, rgba, width * 4)) {
        snprintf(err, errlen, "%s: cannot write the image (directory missing or not writable?)", path);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: cannot replace the file: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

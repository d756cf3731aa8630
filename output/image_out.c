/* image_out.c — the renderer programs' outputs written together (see image_out.h). */
#include "output/image_out.h"

#include "output/safe_file.h"

#include <stdio.h>
#include <stdlib.h>

int io_write_outputs(const char *png_path, int width, int height, const uint8_t *rgba,
                     unsigned threads, const char *stats_path, const char *stats,
                     size_t stats_size, char *err, size_t errlen)
{
    size_t png_size = 0;
    uint8_t *png = png_path ? io_encode_png_on(width, height, rgba, threads, &png_size) : NULL;
    io_file files[2] = {{.fd = -1}, {.fd = -1}};
    int rc = (png_path && !png) || (stats_path && !stats);
    if (rc) snprintf(err, errlen, "out of memory encoding the outputs");
    if (!rc && png_path) rc = io_stage(&files[0], png_path, png, png_size, err, errlen) != 0;
    if (!rc && stats_path) rc = io_stage(&files[1], stats_path, stats, stats_size, err, errlen) != 0;
    if (!rc) rc = io_commit_all(files, 2, err, errlen) != 0;
    for (int i = 0; i < 2; i++) io_discard(&files[i]);
    free(png);
    return rc ? -1 : 0;
}

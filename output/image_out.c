/* image_out.c — the renderer programs' outputs written together (see image_out.h). */
#include "output/image_out.h"

#include "output/image_format.h"
#include "output/safe_file.h"

#include <stdio.h>
#include <stdlib.h>

int io_write_outputs(const char *png_path, int width, int height, const uint8_t *rgba,
                     unsigned threads, const char *stats_path, const char *stats,
                     size_t stats_size, char *err, size_t errlen)
{
    return io_write_outputs_with(png_path, width, height, rgba, threads, stats_path, stats,
                                 stats_size, NULL, 0, err, errlen);
}

int io_write_outputs_with(const char *png_path, int width, int height, const uint8_t *rgba,
                          unsigned threads, const char *stats_path, const char *stats,
                          size_t stats_size, const io_extra_output *extra, int nextra,
                          char *err, size_t errlen)
{
    enum { N = 2 + IO_MAX_EXTRA_OUTPUTS };
    if (nextra < 0 || nextra > IO_MAX_EXTRA_OUTPUTS) {
        snprintf(err, errlen, "more than %d further outputs", IO_MAX_EXTRA_OUTPUTS);
        return -1;
    }
    io_image_format format = IO_IMAGE_PNG;
    if (png_path && (!io_image_format_of(png_path, &format) || format == IO_IMAGE_EXR)) {
        snprintf(err, errlen, "%s: an RGBA image is written as .png or .jpg", png_path);
        return -1;
    }
    size_t png_size = 0;
    uint8_t *png = png_path ? io_encode_image(format, width, height, rgba, threads, &png_size) : NULL;
    io_file files[N];
    for (int i = 0; i < N; i++) files[i] = (io_file){.fd = -1, .slot = -1};
    int rc = (png_path && !png) || (stats_path && !stats);
    if (rc) snprintf(err, errlen, "out of memory encoding the outputs");
    if (!rc && png_path) rc = io_stage(&files[0], png_path, png, png_size, err, errlen) != 0;
    if (!rc && stats_path) rc = io_stage(&files[1], stats_path, stats, stats_size, err, errlen) != 0;
    for (int i = 0; !rc && i < nextra; i++) {
        if (!extra[i].path) continue;
        if (!extra[i].data) {
            snprintf(err, errlen, "%s %s: could not make it", extra[i].flag, extra[i].path);
            rc = 1;
        } else {
            rc = io_stage(&files[2 + i], extra[i].path, extra[i].data, extra[i].size, err, errlen) != 0;
        }
    }
    if (!rc) rc = io_commit_all(files, N, err, errlen) != 0;
    for (int i = 0; i < N; i++) io_discard(&files[i]);
    free(png);
    return rc ? -1 : 0;
}

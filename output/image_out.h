/* image_out.h — result images encoded as PNG in memory (png_encode.h), so that writing
 * them to disk (safe_file.h) can check every byte written, and written together with
 * the statistics. */
#ifndef OUTPUT_IMAGE_OUT_H
#define OUTPUT_IMAGE_OUT_H

#include "gramps/api.h"
#include "output/png_encode.h"

#include <stddef.h>
#include <stdint.h>

/* A renderer program's -o and --stats: the image of rgba (PNG encoded as
 * io_encode_png_on with `threads`, or JPEG when png_path ends in .jpg or .jpeg; another
 * extension is refused: image_format.h) to png_path and `stats` (stats_size bytes) to stats_path, each when
 * its path is not NULL, staged and committed together (safe_file.h), so both are
 * written or neither. stats NULL with stats_path set means making them ran out of
 * memory. 0, or -1 with the message in err. */
GR_API int io_write_outputs(const char *png_path, int width, int height, const uint8_t *rgba,
                     unsigned threads, const char *stats_path, const char *stats,
                     size_t stats_size, char *err, size_t errlen);

/* A further output written with them (gramps-render's --trace and --dot): `data` NULL
 * means making it failed, and nothing is written. */
typedef struct io_extra_output {
    const char *flag;             /* the option that named it, for messages */
    const char *path;
    const void *data;
    size_t size;
} io_extra_output;
#define IO_MAX_EXTRA_OUTPUTS 4

/* io_write_outputs with up to IO_MAX_EXTRA_OUTPUTS more files, all staged and committed
 * together; the same file named twice is refused. */
GR_API int io_write_outputs_with(const char *png_path, int width, int height,
                                 const uint8_t *rgba, unsigned threads, const char *stats_path,
                                 const char *stats, size_t stats_size,
                                 const io_extra_output *extra, int nextra, char *err,
                                 size_t errlen);

#endif

/* exr_encode.h — float images as OpenEXR in memory, through OpenEXR 3's core C API
 * (Debian's libopenexr-dev, openexr.h): one scanline part, every channel 32-bit float,
 * uncompressed (float data barely compresses, and a reader needs no codec). */
#ifndef OUTPUT_EXR_ENCODE_H
#define OUTPUT_EXR_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/* One channel: its name ("R", "Z", "N.X"...) and width x height floats, row 0 on top. */
typedef struct io_exr_channel {
    const char *name;
    const float *data;
} io_exr_channel;

#define IO_EXR_MAX_CHANNELS 16

/* The EXR file of n channels (malloc'ed, its size in *size); NULL when out of memory or
 * the library refuses (its message in err). The bytes depend on the data alone. */
uint8_t *io_encode_exr(int width, int height, const io_exr_channel *ch, int n, size_t *size,
                       char *err, size_t errlen);

#endif

/* hdr.c — the raster sinks' linear colour (frame resource "hdr-color", pl_frame.hdr):
 * the pixel shader's linear RGB of the visible fragment, before the sRGB encode. Where
 * the colour is defined on the 8-bit image (blending; the multisample resolve), the
 * pixel holds the image's byte decoded, so that encoding hdr-color gives the PNG. */
#include "pipelines/raster/internal.h"

#include "pipelines/image/image.h"

void plr_hdr_put(const plr_state *s, int x, int y, const float *rgb)
{
    float *px = s->hdr + 4 * ((size_t)y * (size_t)s->width + (size_t)x);
    px[0] = rgb[0];
    px[1] = rgb[1];
    px[2] = rgb[2];
    px[3] = 1.0f;
}

void plr_hdr_decode(const plr_state *s, int x, int y)
{
    const size_t at = (size_t)y * (size_t)s->width + (size_t)x;
    const uint32_t c = s->color[at];
    float *px = s->hdr + 4 * at;
    for (int ch = 0; ch < 3; ch++) px[ch] = pli_decode_srgb8((uint8_t)(c >> (8 * ch)));
    px[3] = (float)(c >> 24) / 255.0f;
}

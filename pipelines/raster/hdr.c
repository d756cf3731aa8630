/* hdr.c — the raster sinks' linear colour (frame resource "hdr-color", pl_frame.hdr):
 * the pixel shader's linear RGB of the visible fragment, before the sRGB encode. A
 * blended pixel (or sample) holds the 8-bit blend's result decoded: blending is defined
 * on the 8-bit target. With multisampling each sample holds its linear colour
 * ("sample-hdr") and the pixel their mean: the resolve in linear colour, where the 8-bit
 * image averages the samples' sRGB bytes (Direct3D's UNORM resolve). */
#include "pipelines/raster/internal.h"

#include "pipelines/image/image.h"

#include <string.h>

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

void plr_sample_hdr_put(const plr_state *s, size_t at, const float *rgb)
{
    memcpy(s->sample_hdr + 3 * at, rgb, 3 * sizeof *rgb);
}

void plr_sample_hdr_decode(const plr_state *s, size_t at)
{
    const uint32_t c = s->sample_rgba[at];
    for (int ch = 0; ch < 3; ch++) s->sample_hdr[3 * at + ch] = pli_decode_srgb8((uint8_t)(c >> (8 * ch)));
}

void plr_sample_hdr_clear(const plr_state *s, int x, int y, size_t at)
{
    plr_sample_hdr_put(s, at, s->hdr + 4 * ((size_t)y * (size_t)s->width + (size_t)x));
}

void plr_sample_hdr_resolve(const plr_state *s, int x, int y)
{
    const float *in = s->sample_hdr + 3 * plr_sample_at(s, x, y);
    float sum[3] = {0, 0, 0};
    for (int k = 0; k < s->msaa; k++)
        for (int ch = 0; ch < 3; ch++) sum[ch] += in[3 * k + ch];
    for (int ch = 0; ch < 3; ch++) sum[ch] /= (float)s->msaa;
    plr_hdr_put(s, x, y, sum);
}

/* sum_encode.h — the image's bytes from the frame's contribution sums (sums.h): what
 * rt.blend and the hybrid's Output Merger (hybrid.om) write once their pixels' sums are
 * final. Internal to the renderer library.
 *
 * A channel's byte is its fixed-point sum encoded for the AOV (sRGB for the colour). With
 * the hybrid's multisampling (msaa > 1) a pixel has msaa slots of sums, one per sample
 * (hybrid/fragments.h), and is resolved as the raster graphs resolve theirs
 * (raster/msaa.c): each sample's byte is its fragment's slot encoded, the pixel's the box
 * filter's round(sum / msaa) of them; the depth pass's visibility per sample says which
 * slot (the first sample that sees the same) each sample belongs to. */
#ifndef PIPELINES_RAYTRACE_SUM_ENCODE_H
#define PIPELINES_RAYTRACE_SUM_ENCODE_H

#include "pipelines/frame.h"
#include "pipelines/stages.h"

#include <stddef.h>
#include <stdint.h>

typedef struct plrt_encoder {
    const pl_frame *f;
    int64_t *sums;                        /* "sums", or "sample-sums" with msaa > 1 */
    uint32_t *color;
    const uint32_t *vis;                  /* msaa > 1: the visible primitive per sample */
    uint32_t msaa;
    float *hdr;                           /* the linear colour (pl_frame.hdr), else NULL */
} plrt_encoder;

/* For a sink stage i whose frame has msaa sum slots per pixel (1, 4 or 8): its sums,
 * colour, linear colour (where asked) and, with msaa > 1, the samples' visibility; the
 * sRGB table made. false with a message in err. */
bool plrt_encoder_init(plrt_encoder *e, const cp_stage_init *i, int msaa, char err[CP_ERR_MAX]);

/* One channel's byte from its fixed-point sum (sh_srgb_init must have run). */
uint8_t plrt_encode(sh_aov aov, int64_t sum);

/* Pixels [lo, hi) from their sums, resolved from their slots with msaa > 1; the linear
 * colour too where e->hdr is set. */
void plrt_encode_pixels(const plrt_encoder *e, size_t lo, size_t hi);

/* The slot (pixel * msaa + its first sample seeing the same) of sample k of pixel p. */
static inline size_t plrt_sample_slot(const plrt_encoder *e, size_t p, size_t k)
{
    const uint32_t *seen = e->vis + p * e->msaa;
    size_t slot = 0;
    while (seen[slot] != seen[k]) slot++;
    return p * e->msaa + slot;
}

#endif

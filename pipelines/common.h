/* common.h — what every renderer graph shares: output kinds (AOVs), the camera model and
 * image conventions (right-handed world, row 0 at the top, samples at pixel centres).
 *
 * Data flow: tools/gramps-render -> a pipeline's render function (pipelines/) ->
 * RGBA8 image + runtime statistics. */
#ifndef PIPELINES_COMMON_H
#define PIPELINES_COMMON_H

#include <stdint.h>
#include <string.h>

#include "scenes/scene.h"

typedef enum pl_aov {
    PL_AOV_COLOR,     /* shaded image */
    PL_AOV_PRIMID,    /* primitive id + 1 in RGB (R low byte), 0 = background: exact */
    PL_AOV_DEPTH,     /* distance along the view axis, normalised to the scene bounds */
    PL_AOV_NORMAL,    /* world normal mapped from [-1,1] to [0,255] */
} pl_aov;

/* Orthonormal camera frame: forward, right and up, plus the half extents of the image
 * plane at distance 1 (tan(fovy/2) scaled by the aspect ratio). */
typedef struct pl_camera_frame {
    float eye[3], forward[3], right[3], up[3];
    float half_w, half_h;
} pl_camera_frame;

void pl_camera_frame_init(pl_camera_frame *f, const sc_camera *c, int width, int height);

/* Direction (not normalised) through image point (px, py) in pixels, row 0 on top. */
void pl_camera_ray(const pl_camera_frame *f, int width, int height, float px, float py,
                   float dir[3]);

/* primid AOV encoding: id + 1 in the low 24 bits of RGB, 0 = background. */
static inline void pl_encode_primid(uint32_t prim_plus_one, uint8_t rgba[4])
{
    rgba[0] = (uint8_t)(prim_plus_one & 0xff);
    rgba[1] = (uint8_t)((prim_plus_one >> 8) & 0xff);
    rgba[2] = (uint8_t)((prim_plus_one >> 16) & 0xff);
    rgba[3] = 255;
}

static inline uint32_t pl_decode_primid(const uint8_t rgba[4])
{
    return (uint32_t)rgba[0] | (uint32_t)rgba[1] << 8 | (uint32_t)rgba[2] << 16;
}

/* Linear [0,1] -> sRGB-encoded byte (exact function of its input: deterministic).
 * pl_to_srgb8 is a search in a table of the 255 thresholds of pl_to_srgb8_exact (the
 * formula with powf) and returns the same byte for every float, several times faster. */
uint8_t pl_to_srgb8(float linear);
uint8_t pl_to_srgb8_exact(float linear);

/* Builds the table (once per process; pl_to_srgb8 also calls it). */
void pl_srgb_init(void);

/* pl_to_srgb8 for hot loops, once pl_srgb_init() has run: the bits' top part (exponent
 * and 7 mantissa bits) indexes the result at the start of that bucket, and a bucket
 * spans less than one step of the output, so a step or two of the thresholds remain. */
#define PL_SRGB_BUCKET_SHIFT 16
#define PL_SRGB_LOW_BITS 0x35800000u              /* 2^-20: encodes to 0 */
#define PL_SRGB_ONE_BITS 0x3f800000u
#define PL_SRGB_BUCKETS ((PL_SRGB_ONE_BITS - PL_SRGB_LOW_BITS) >> PL_SRGB_BUCKET_SHIFT)
extern float pl_srgb_threshold[257];
extern uint8_t pl_srgb_bucket[PL_SRGB_BUCKETS];

static inline uint8_t pl_srgb8_lookup(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if (!(x > 0.0f) || bits < PL_SRGB_LOW_BITS) return 0;   /* also NaN */
    if (bits >= PL_SRGB_ONE_BITS) return 255;
    unsigned k = pl_srgb_bucket[(bits - PL_SRGB_LOW_BITS) >> PL_SRGB_BUCKET_SHIFT];
    while (pl_srgb_threshold[k + 1] <= x) k++;
    return (uint8_t)k;
}

#endif

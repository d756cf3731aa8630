/* color.h — what a pixel holds: the output kinds (AOVs) and their encodings, the primitive
 * id code and the linear-to-sRGB colour codec, shared by every shading kernel and stage.
 * Exact functions of their inputs, so images are the same bits on every worker. */
#ifndef SHADERS_COLOR_H
#define SHADERS_COLOR_H

#include "gramps/api.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef enum sh_aov {
    SH_AOV_COLOR,     /* shaded image */
    SH_AOV_PRIMID,    /* primitive id + 1 in RGB (R low byte), 0 = background: exact */
    SH_AOV_DEPTH,     /* distance along the view axis, normalised to the scene bounds */
    SH_AOV_NORMAL,    /* world normal mapped from [-1,1] to [0,255] */
    SH_AOV_ALBEDO,    /* base colour after texturing, alpha test and blending, unlit:
                       * 8-bit linear round(255 * clamp(c)), background black */
} sh_aov;

#define SH_AOV_COUNT 5

/* The --aov names, in enum order. */
#define SH_AOV_NAMES {"color", "primid", "depth", "normal", "albedo"}

/* Linear [0,1] -> byte, round(255 * clamp(c)) (the albedo AOV's encoding; NaN -> 0). */
static inline uint8_t sh_to_linear8(float c)
{
    if (!(c > 0.0f)) return 0;
    if (c >= 1.0f) return 255;
    return (uint8_t)(c * 255.0f + 0.5f);
}

/* primid AOV encoding: id + 1 in the low 24 bits of RGB, 0 = background. */
static inline void sh_encode_primid(uint32_t prim_plus_one, uint8_t rgba[4])
{
    rgba[0] = (uint8_t)(prim_plus_one & 0xff);
    rgba[1] = (uint8_t)((prim_plus_one >> 8) & 0xff);
    rgba[2] = (uint8_t)((prim_plus_one >> 16) & 0xff);
    rgba[3] = 255;
}

static inline uint32_t sh_decode_primid(const uint8_t rgba[4])
{
    return (uint32_t)rgba[0] | (uint32_t)rgba[1] << 8 | (uint32_t)rgba[2] << 16;
}

/* Linear [0,1] -> sRGB-encoded byte (exact function of its input: deterministic).
 * sh_to_srgb8 is a search in a table of the 255 thresholds of sh_to_srgb8_exact (the
 * formula with powf) and returns the same byte for every float, several times faster. */
GR_API uint8_t sh_to_srgb8(float linear);
GR_API uint8_t sh_to_srgb8_exact(float linear);

/* Builds the table (once per process; sh_to_srgb8 also calls it). */
GR_API void sh_srgb_init(void);

/* sh_to_srgb8 for hot loops, once sh_srgb_init() has run: the bits' top part (exponent
 * and 7 mantissa bits) indexes the result at the start of that bucket, and a bucket
 * spans less than one step of the output, so at most one threshold step remains
 * (sh_srgb_max_steps is 1; the test checks it). */
#define SH_SRGB_BUCKET_SHIFT 16
#define SH_SRGB_LOW_BITS 0x35800000u              /* 2^-20: encodes to 0 */
#define SH_SRGB_ONE_BITS 0x3f800000u
#define SH_SRGB_BUCKETS ((SH_SRGB_ONE_BITS - SH_SRGB_LOW_BITS) >> SH_SRGB_BUCKET_SHIFT)
extern GR_API float sh_srgb_threshold[257];
extern GR_API uint8_t sh_srgb_bucket[SH_SRGB_BUCKETS];
extern GR_API int sh_srgb_max_steps;            /* the most thresholds one bucket spans */

static inline uint8_t sh_srgb8_lookup(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if (!(x > 0.0f) || bits < SH_SRGB_LOW_BITS) return 0;   /* also NaN */
    if (bits >= SH_SRGB_ONE_BITS) return 255;
    unsigned k = sh_srgb_bucket[(bits - SH_SRGB_LOW_BITS) >> SH_SRGB_BUCKET_SHIFT];
    while (sh_srgb_threshold[k + 1] <= x) k++;
    return (uint8_t)k;
}

/* sh_srgb8_lookup of x[0..n) into out, once sh_srgb_init() has run; with avx2 (only
 * where the CPU has it) eight values at a time, by one gather of each lane's bucket (its
 * byte and where in the bucket the next byte starts: no bucket spans two steps, which
 * sh_srgb_max_steps records; were it more, the scalar loop would run). The same bytes
 * either way. */
GR_API void sh_srgb8_encode_n(const float *x, uint8_t *out, int n, bool avx2);

#endif

/* color.c — the sRGB codec and its lookup tables. */
#include "shaders/color.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

uint8_t sh_to_srgb8_exact(float x)
{
    if (!(x > 0.0f)) return 0;
    if (x >= 1.0f) return 255;
    float s = x <= 0.0031308f ? 12.92f * x : 1.055f * powf(x, 1.0f / 2.4f) - 0.055f;
    return (uint8_t)(s * 255.0f + 0.5f);
}

/* threshold[k]: the smallest float whose exact encoding is >= k (threshold[0] unused).
 * The encoding is non-decreasing in x (tests check it), so the largest k with
 * threshold[k] <= x is the exact result. Positive floats order like their bit patterns,
 * so each threshold is a bisection over bits; the buckets are explained in common.h. */
float sh_srgb_threshold[257];
uint8_t sh_srgb_bucket[SH_SRGB_BUCKETS];
static pthread_once_t srgb_once = PTHREAD_ONCE_INIT;

static float float_of_bits(uint32_t b) { float f; memcpy(&f, &b, sizeof f); return f; }

static void build_srgb_tables(void)
{
    sh_srgb_threshold[0] = -INFINITY;
    sh_srgb_threshold[256] = INFINITY;
    for (int k = 1; k < 256; k++) {
        uint32_t lo = 0, hi = SH_SRGB_ONE_BITS;     /* encode(lo) < k <= encode(hi) */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (sh_to_srgb8_exact(float_of_bits(mid)) >= k) hi = mid;
            else lo = mid;
        }
        sh_srgb_threshold[k] = float_of_bits(hi);
    }
    for (uint32_t b = 0; b < SH_SRGB_BUCKETS; b++)
        sh_srgb_bucket[b] = sh_to_srgb8_exact(float_of_bits(SH_SRGB_LOW_BITS + (b << SH_SRGB_BUCKET_SHIFT)));
}

void sh_srgb_init(void) { pthread_once(&srgb_once, build_srgb_tables); }

uint8_t sh_to_srgb8(float x)
{
    sh_srgb_init();
    return sh_srgb8_lookup(x);
}

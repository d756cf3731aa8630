/* spec_pow.h — x^e for Blinn-Phong's specular term, as one branch-free formula that
 * the pixel shader's packet loops vectorize (eight lanes under AVX2) and every other
 * caller (sh_blinn_phong: the ray tracer, the hybrid, the scalar reference) runs one
 * lane at a time. Only IEEE adds, multiplies, one divide, integer bit operations and
 * selects, never a library call or a contraction into FMA (-std=c11 turns contraction
 * off), so a lane computes the same bits whatever the ISA, packet or worker.
 *
 * x = 2^k m with m in [sqrt(1/2), sqrt(2)); log2 m = 2/ln 2 atanh(t), t = (m-1)/(m+1),
 * |t| <= 0.1716, as an odd series to t^9 (truncation below 1e-9); y = e (k + log2 m);
 * 2^y = 2^r 2^f with r = y rounded to an integer, |f| <= 1/2, 2^f as e^(f ln 2) to
 * degree 7 (truncation below 2e-8). Measured against powf on the exponents scenes use:
 * within a few float ulps where the result matters (tests/render/test_spec_pow.c). */
#ifndef SHADERS_SPEC_POW_H
#define SHADERS_SPEC_POW_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t sh_pow_bits(float f) { uint32_t b; memcpy(&b, &f, sizeof b); return b; }
static inline float sh_pow_float(uint32_t b) { float f; memcpy(&f, &b, sizeof f); return f; }

/* log2 x for a positive normal x (others: see sh_spec_pow). */
static inline float sh_pow_log2(float x)
{
    const uint32_t bits = sh_pow_bits(x);
    const int32_t big = (bits & 0x7fffffu) > 0x3504f3u;          /* mantissa above sqrt 2 */
    const int32_t k = (int32_t)(bits >> 23) - 127 + big;
    const float m = sh_pow_float((bits & 0x7fffffu) | (big ? 0x3f000000u : 0x3f800000u));
    const float t = (m - 1.0f) / (m + 1.0f), s = t * t;
    const float series = 2.8853900818f + s * (0.9617966939f + s * (0.5770780164f +
                         s * (0.4121985831f + s * 0.3205988979f)));
    return (float)k + t * series;
}

/* 2^y for y in [-125, 127]. */
static inline float sh_pow_exp2(float y)
{
    const float r = (y + 0x1.8p23f) - 0x1.8p23f;                    /* nearest integer */
    const float f = y - r;
    const float p = 1.0f + f * (0.6931471806f + f * (0.2402265070f + f * (0.0555041087f +
                    f * (0.0096181291f + f * (0.0013333558f + f * (0.0001540353f +
                    f * 0.0000152527f))))));
    return p * sh_pow_float((uint32_t)((int32_t)r + 127) << 23);
}

/* x^e for e >= 0 (finite): 1 when e is 0; else 0 for x below the smallest normal float
 * (0, subnormals, negatives), infinite or NaN, and where the result is below 2^-125;
 * results above 2^127 are cut to about that. */
static inline float sh_spec_pow(float x, float e)
{
    const bool positive = x >= 0x1p-126f && x <= 0x1.fffffep127f;
    float y = e * sh_pow_log2(positive ? x : 1.0f);
    const bool vanishes = !positive || y < -125.0f;
    y = y < -125.0f ? -125.0f : y > 127.0f ? 127.0f : y;
    const float p = sh_pow_exp2(y);
    return e == 0.0f ? 1.0f : vanishes ? 0.0f : p;
}

#endif

/* texture_sample_body.h — the sampler's arithmetic as static inline functions, for
 * texture_sample.c (sh_texture_sample, the baseline compile every caller may use) and for
 * the raster pixel shader, whose AVX2 compile inlines it into its per-fragment loop.
 * Each function does the same IEEE operations whatever the target (no contraction into
 * FMA: AVX2 targets do not enable it), so both compiles give the same bits. */
#ifndef SHADERS_TEXTURE_SAMPLE_BODY_H
#define SHADERS_TEXTURE_SAMPLE_BODY_H

#include "scenes/scene.h"
#include "shaders/spec_pow.h"

#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Forced, so that a caller compiled for AVX2 gets the whole sampler in its own compile. */
#define TS_INLINE static inline __attribute__((always_inline))

/* sh_texture_lod (texture_sample.h) on a level 0 of w x h texels: log2 of the longer
 * texel-space step, by spec_pow.h's polynomial (no library call; within 1e-7 of log2f
 * near 1). Branch-free (the cases are selects, the logarithm of a case that does not
 * take it is of 1), so that a loop of it across quads vectorizes; a lane's bits are
 * the scalar formula's either way. */
TS_INLINE float ts_lod_of_size(float w, float h, float dudx, float dvdx, float dudy, float dvdy)
{
    const float x2 = dudx * w * (dudx * w) + dvdx * h * (dvdx * h);
    const float y2 = dudy * w * (dudy * w) + dvdy * h * (dvdy * h);
    const bool nan = x2 != x2 || y2 != y2;                 /* level 0 */
    const float rho2 = x2 > y2 ? x2 : y2;
    const bool huge = rho2 > 0x1p126f;                     /* also inf: the coarsest level */
    const bool normal = rho2 >= 0x1p-126f;                 /* else subnormal or 0: level 0 */
    const float lod = 0.5f * sh_pow_log2(normal && !huge ? rho2 : 1.0f);
    return nan ? 0.0f : huge ? 64.0f : normal ? lod : -64.0f;
}

TS_INLINE float ts_lod(const sc_texture *t, float dudx, float dvdx, float dudy, float dvdy)
{
    return ts_lod_of_size((float)t->levels[0].width, (float)t->levels[0].height, dudx, dvdx, dudy, dvdy);
}

/* A coordinate reduced to a range where scaling by a level's size and converting to int
 * is defined: [0, 1) for repeat, [0, 2) for mirror (one period), [-1, 2] for clamp. */
TS_INLINE float ts_reduce(float c, sc_wrap w)
{
    if (!isfinite(c)) return 0.0f;
    if (w == SC_WRAP_REPEAT) {
        c -= floorf(c);
        return c < 1.0f ? c : 0.0f;               /* c - floor(c) rounds up to 1 for tiny -c */
    }
    if (w == SC_WRAP_MIRROR) {
        c -= 2.0f * floorf(c * 0.5f);
        return c < 2.0f && c >= 0.0f ? c : 0.0f;
    }
    return c < -1.0f ? -1.0f : c > 2.0f ? 2.0f : c;
}

/* Texel index i (any int) on a side of n texels. */
TS_INLINE int ts_address_any(int i, int n, sc_wrap w)
{
    if (w == SC_WRAP_CLAMP) return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (w == SC_WRAP_MIRROR) {
        int m = i % (2 * n);
        if (m < 0) m += 2 * n;
        return m < n ? m : 2 * n - 1 - m;
    }
    int m = i % n;
    return m < 0 ? m + n : m;
}

/* address_any, where the reduced coordinates put i (one period of repeat or mirror, and
 * a texel either side) taking a compare instead of a division: the same result. */
TS_INLINE int ts_address(int i, int n, sc_wrap w)
{
    if (w == SC_WRAP_REPEAT) {
        if (i < 0) i += n;
        else if (i >= n) i -= n;
        if (i >= 0 && i < n) return i;
    } else if (w == SC_WRAP_MIRROR && i >= -1 && i <= 2 * n) {
        int m = i < 0 ? i + 2 * n : i >= 2 * n ? i - 2 * n : i;
        return m < n ? m : 2 * n - 1 - m;
    }
    return ts_address_any(i, n, w);
}

/* Texel (x, y) of level l, y counted up from the bottom row (as uv's v; the rows are
 * stored top first), both addressed as s says. */
TS_INLINE const unsigned char *ts_texel(const sc_mip_level *l, const sc_sampler *s, int x, int y)
{
    x = ts_address(x, l->width, s->wrap_u);
    y = l->height - 1 - ts_address(y, l->height, s->wrap_v);
    return l->rgba + 4 * ((size_t)y * l->width + x);
}

/* Continuous texel coordinates on level l: u across, v up from the bottom row (OpenGL's
 * s * width, t * height on the reduced coordinates). */
TS_INLINE void ts_texel_coords(const sc_mip_level *l, const sc_sampler *s, float u, float v,
                         float *x, float *y)
{
    *x = ts_reduce(u, s->wrap_u) * (float)l->width;
    *y = ts_reduce(v, s->wrap_v) * (float)l->height;
}

TS_INLINE void ts_nearest(const sc_mip_level *l, const sc_sampler *s, float u, float v, float rgba[4])
{
    float x, y;
    ts_texel_coords(l, s, u, v, &x, &y);
    const unsigned char *t = ts_texel(l, s, (int)floorf(x), (int)floorf(y));
    for (int k = 0; k < 4; k++) rgba[k] = t[k] / 255.0f;
}

/* Four channels at once (GCC vector extension): each lane does the scalar formula's
 * IEEE operations, so the bits do not depend on how it is compiled. */
typedef float ts_v4f __attribute__((vector_size(16)));

TS_INLINE ts_v4f ts_texel4(const unsigned char *t)
{
#if defined(__SSE2__)
    int bits;
    memcpy(&bits, t, sizeof bits);              /* the four bytes, widened and converted */
    const __m128i z = _mm_setzero_si128();
    __m128i w = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(bits), z), z);
    return (ts_v4f)_mm_cvtepi32_ps(w);
#else
    return (ts_v4f){(float)t[0], (float)t[1], (float)t[2], (float)t[3]};
#endif
}

/* Bilinear on level l at coordinates ru, rv already reduced (ts_reduce): a trilinear
 * sample reduces once for both levels. */
TS_INLINE ts_v4f ts_bilinear4(const sc_mip_level *l, const sc_sampler *s, float ru, float rv)
{
    float x = ru * (float)l->width - 0.5f, y = rv * (float)l->height - 0.5f;
    float fx0 = floorf(x), fy0 = floorf(y);
    int x0 = (int)fx0, y0 = (int)fy0;
    float ax = x - fx0, ay = y - fy0;
    const size_t xa = (size_t)ts_address(x0, l->width, s->wrap_u), xb = (size_t)ts_address(x0 + 1, l->width, s->wrap_u);
    const size_t ya = (size_t)(l->height - 1 - ts_address(y0, l->height, s->wrap_v)) * (size_t)l->width;
    const size_t yb = (size_t)(l->height - 1 - ts_address(y0 + 1, l->height, s->wrap_v)) * (size_t)l->width;
    const ts_v4f a = ts_texel4(l->rgba + 4 * (ya + xa)), b = ts_texel4(l->rgba + 4 * (ya + xb));
    const ts_v4f c = ts_texel4(l->rgba + 4 * (yb + xa)), d = ts_texel4(l->rgba + 4 * (yb + xb));
    const ts_v4f lower = a + ax * (b - a), upper = c + ax * (d - c);
    return (lower + ay * (upper - lower)) / 255.0f;
}

TS_INLINE void ts_bilinear(const sc_mip_level *l, const sc_sampler *s, float u, float v, float rgba[4])
{
    const ts_v4f r = ts_bilinear4(l, s, ts_reduce(u, s->wrap_u), ts_reduce(v, s->wrap_v));
    for (int k = 0; k < 4; k++) rgba[k] = r[k];
}

TS_INLINE void sh_texture_sample_inline(const sc_texture *t, const sc_sampler *s, float u, float v,
                                         float lod, float rgba[4])
{
    const int top = t->nlevels - 1;
    if (!isfinite(lod)) lod = 0.0f;
    float l = lod < 0.0f ? 0.0f : lod > (float)top ? (float)top : lod;
    switch (s->filter) {
    case SC_FILTER_NEAREST_NO_MIPS: ts_nearest(&t->levels[0], s, u, v, rgba); return;
    case SC_FILTER_LINEAR_NO_MIPS: ts_bilinear(&t->levels[0], s, u, v, rgba); return;
    case SC_FILTER_NEAREST: ts_nearest(&t->levels[(int)floorf(l + 0.5f)], s, u, v, rgba); return;
    case SC_FILTER_BILINEAR: ts_bilinear(&t->levels[(int)floorf(l + 0.5f)], s, u, v, rgba); return;
    case SC_FILTER_TRILINEAR: break;
    }
    int l0 = (int)floorf(l);
    float f = l - (float)l0;
    const float ru = ts_reduce(u, s->wrap_u), rv = ts_reduce(v, s->wrap_v);
    ts_v4f r = ts_bilinear4(&t->levels[l0], s, ru, rv);
    if (f != 0.0f && l0 != top) r += f * (ts_bilinear4(&t->levels[l0 + 1], s, ru, rv) - r);
    for (int k = 0; k < 4; k++) rgba[k] = r[k];
}

#endif

/* texture_sample.c — mip level selection, filtering and addressing (see the header). */
#include "shaders/texture_sample.h"

#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A coordinate reduced to a range where scaling by a level's size and converting to int
 * is defined: [0, 1) for repeat, [0, 2) for mirror (one period), [-1, 2] for clamp. */
static float reduce(float c, sc_wrap w)
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
static int address_any(int i, int n, sc_wrap w)
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
static inline int address(int i, int n, sc_wrap w)
{
    if (w == SC_WRAP_REPEAT) {
        if (i < 0) i += n;
        else if (i >= n) i -= n;
        if (i >= 0 && i < n) return i;
    } else if (w == SC_WRAP_MIRROR && i >= -1 && i <= 2 * n) {
        int m = i < 0 ? i + 2 * n : i >= 2 * n ? i - 2 * n : i;
        return m < n ? m : 2 * n - 1 - m;
    }
    return address_any(i, n, w);
}

/* Texel (x, y) of level l, y counted up from the bottom row (as uv's v; the rows are
 * stored top first), both addressed as s says. */
static const unsigned char *texel(const sc_mip_level *l, const sc_sampler *s, int x, int y)
{
    x = address(x, l->width, s->wrap_u);
    y = l->height - 1 - address(y, l->height, s->wrap_v);
    return l->rgba + 4 * ((size_t)y * l->width + x);
}

/* Continuous texel coordinates on level l: u across, v up from the bottom row (OpenGL's
 * s * width, t * height on the reduced coordinates). */
static void texel_coords(const sc_mip_level *l, const sc_sampler *s, float u, float v,
                         float *x, float *y)
{
    *x = reduce(u, s->wrap_u) * (float)l->width;
    *y = reduce(v, s->wrap_v) * (float)l->height;
}

static void nearest(const sc_mip_level *l, const sc_sampler *s, float u, float v, float rgba[4])
{
    float x, y;
    texel_coords(l, s, u, v, &x, &y);
    const unsigned char *t = texel(l, s, (int)floorf(x), (int)floorf(y));
    for (int k = 0; k < 4; k++) rgba[k] = t[k] / 255.0f;
}

/* Four channels at once (GCC vector extension): each lane does the scalar formula's
 * IEEE operations, so the bits do not depend on how it is compiled. */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f texel4(const unsigned char *t)
{
#if defined(__SSE2__)
    int bits;
    memcpy(&bits, t, sizeof bits);              /* the four bytes, widened and converted */
    const __m128i z = _mm_setzero_si128();
    __m128i w = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(bits), z), z);
    return (v4f)_mm_cvtepi32_ps(w);
#else
    return (v4f){(float)t[0], (float)t[1], (float)t[2], (float)t[3]};
#endif
}

/* Bilinear on level l at coordinates ru, rv already reduced (reduce): a trilinear
 * sample reduces once for both levels. */
static v4f bilinear4(const sc_mip_level *l, const sc_sampler *s, float ru, float rv)
{
    float x = ru * (float)l->width - 0.5f, y = rv * (float)l->height - 0.5f;
    float fx0 = floorf(x), fy0 = floorf(y);
    int x0 = (int)fx0, y0 = (int)fy0;
    float ax = x - fx0, ay = y - fy0;
    const size_t xa = (size_t)address(x0, l->width, s->wrap_u), xb = (size_t)address(x0 + 1, l->width, s->wrap_u);
    const size_t ya = (size_t)(l->height - 1 - address(y0, l->height, s->wrap_v)) * (size_t)l->width;
    const size_t yb = (size_t)(l->height - 1 - address(y0 + 1, l->height, s->wrap_v)) * (size_t)l->width;
    const v4f a = texel4(l->rgba + 4 * (ya + xa)), b = texel4(l->rgba + 4 * (ya + xb));
    const v4f c = texel4(l->rgba + 4 * (yb + xa)), d = texel4(l->rgba + 4 * (yb + xb));
    const v4f lower = a + ax * (b - a), upper = c + ax * (d - c);
    return (lower + ay * (upper - lower)) / 255.0f;
}

static void bilinear(const sc_mip_level *l, const sc_sampler *s, float u, float v, float rgba[4])
{
    const v4f r = bilinear4(l, s, reduce(u, s->wrap_u), reduce(v, s->wrap_v));
    for (int k = 0; k < 4; k++) rgba[k] = r[k];
}

float sh_texture_lod(const sc_texture *t, float dudx, float dvdx, float dudy, float dvdy)
{
    const float w = (float)t->levels[0].width, h = (float)t->levels[0].height;
    float x2 = dudx * w * (dudx * w) + dvdx * h * (dvdx * h);
    float y2 = dudy * w * (dudy * w) + dvdy * h * (dvdy * h);
    if (x2 != x2 || y2 != y2) return 0.0f;             /* NaN: level 0 */
    float rho2 = x2 > y2 ? x2 : y2;
    if (rho2 > 0x1p126f) return 64.0f;                 /* also inf: the coarsest level */
    return rho2 > 0.0f ? 0.5f * log2f(rho2) : -64.0f;
}

float sh_texture_cone_lod(const sc_texture *t, float uv_area, float world_area, float width,
                          float cos_theta)
{
    float texels = fabsf(uv_area) * (float)t->levels[0].width * (float)t->levels[0].height;
    float c = fabsf(cos_theta);
    if (!(texels > 0.0f) || !(world_area > 0.0f) || !(width > 0.0f) || !(c > 0.0f)) return 0.0f;
    float lod = 0.5f * log2f(texels / world_area) + log2f(width / c);
    return isfinite(lod) ? lod : 0.0f;
}

void sh_texture_sample(const sc_texture *t, const sc_sampler *s, float u, float v, float lod,
                       float rgba[4])
{
    const int top = t->nlevels - 1;
    if (!isfinite(lod)) lod = 0.0f;
    float l = lod < 0.0f ? 0.0f : lod > (float)top ? (float)top : lod;
    switch (s->filter) {
    case SC_FILTER_NEAREST_NO_MIPS: nearest(&t->levels[0], s, u, v, rgba); return;
    case SC_FILTER_LINEAR_NO_MIPS: bilinear(&t->levels[0], s, u, v, rgba); return;
    case SC_FILTER_NEAREST: nearest(&t->levels[(int)floorf(l + 0.5f)], s, u, v, rgba); return;
    case SC_FILTER_BILINEAR: bilinear(&t->levels[(int)floorf(l + 0.5f)], s, u, v, rgba); return;
    case SC_FILTER_TRILINEAR: break;
    }
    int l0 = (int)floorf(l);
    float f = l - (float)l0;
    const float ru = reduce(u, s->wrap_u), rv = reduce(v, s->wrap_v);
    v4f r = bilinear4(&t->levels[l0], s, ru, rv);
    if (f != 0.0f && l0 != top) r += f * (bilinear4(&t->levels[l0 + 1], s, ru, rv) - r);
    for (int k = 0; k < 4; k++) rgba[k] = r[k];
}

void sh_texture_transform(const sc_texture_ref *ref, float *u, float *v)
{
    if (ref->rotation == 0.0f && ref->scale[0] == 1.0f && ref->scale[1] == 1.0f &&
        ref->offset[0] == 0.0f && ref->offset[1] == 0.0f)
        return;
    float c = cosf(ref->rotation), s = sinf(ref->rotation);
    float su = ref->scale[0] * *u, sv = ref->scale[1] * *v;
    *u = ref->offset[0] + c * su + s * sv;
    *v = ref->offset[1] - s * su + c * sv;
}

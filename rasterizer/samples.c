/* samples.c — the standard sample patterns and coverage of a rectangle per sample (see
 * samples.h). */
#include "rasterizer/samples.h"

#include "rasterizer/edges.h"

#include <stddef.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* reach: the patterns' extremes on each axis, in subpixels from the pixel's corner
 * (half a pixel + 16 per sixteenth). */
#define REACH(lx, hx, ly, hy) {128 + 16 * (lx), 128 + 16 * (hx), 128 + 16 * (ly), 128 + 16 * (hy)}

static const rs_samples patterns[] = {
    {1, {0}, {0}, REACH(0, 0, 0, 0)},
    {4, {-2, 6, -6, 2}, {-6, -2, 2, 6}, REACH(-6, 6, -6, 6)},
    {8, {1, -1, 5, -3, -5, -7, 3, 7}, {-3, 3, 1, -5, 5, -1, 7, -7}, REACH(-7, 7, -7, 7)},
};

const rs_samples *rs_sample_pattern(int count)
{
    for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++)
        if (patterns[i].count == count) return &patterns[i];
    return NULL;
}

#if defined(__x86_64__)
/* The least (greatest) lane by lane of a and b. */
__attribute__((target("avx2")))
static inline __m256i lanes_min(__m256i a, __m256i b)
{
    return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b));
}

__attribute__((target("avx2")))
static inline __m256i lanes_max(__m256i a, __m256i b)
{
    return _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(a, b));
}

/* v[0..2] (one edge each, a sample per lane) turned to one vector per sample, the edges
 * in lanes 0-2 (lane 3 repeats edge 2), so the edges' least or greatest over the samples
 * is three lane-by-lane steps for all three edges together. */
__attribute__((target("avx2")))
static inline void by_sample(const __m256i v[3], __m256i out[4])
{
    const __m256i t0 = _mm256_unpacklo_epi64(v[0], v[1]);   /* v0[0] v1[0] v0[2] v1[2] */
    const __m256i t1 = _mm256_unpackhi_epi64(v[0], v[1]);   /* v0[1] v1[1] v0[3] v1[3] */
    const __m256i t2 = _mm256_unpacklo_epi64(v[2], v[2]);   /* v2[0] v2[0] v2[2] v2[2] */
    const __m256i t3 = _mm256_unpackhi_epi64(v[2], v[2]);
    out[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
    out[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    out[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    out[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

/* lo[i] (hi[i]) = the least (greatest) lane of least[i] (most[i]) plus bias[i], i < 3. */
__attribute__((target("avx2")))
static inline void edge_extremes(const __m256i least[3], const __m256i most[3], const int8_t bias[3],
                                 int64_t lo[3], int64_t hi[3])
{
    __m256i l[4], h[4];
    by_sample(least, l);
    by_sample(most, h);
    const __m256i b = _mm256_setr_epi64x(bias[0], bias[1], bias[2], 0);
    const __m256i three = _mm256_setr_epi64x(-1, -1, -1, 0);
    const __m256i lo_v = lanes_min(lanes_min(l[0], l[1]), lanes_min(l[2], l[3]));
    const __m256i hi_v = lanes_max(lanes_max(h[0], h[1]), lanes_max(h[2], h[3]));
    _mm256_maskstore_epi64((long long *)lo, three, _mm256_add_epi64(lo_v, b));
    _mm256_maskstore_epi64((long long *)hi, three, _mm256_add_epi64(hi_v, b));
}

/* Four samples' offsets on one axis (1/16 pixel: 16 subpixels) as int64 subpixels. */
__attribute__((target("avx2")))
static inline __m256i sixteenths_to_subpixels(const int8_t d[4])
{
    int32_t four;
    memcpy(&four, d, sizeof four);
    _Static_assert((1 << RS_SUBPIXEL_BITS) / 16 == 16, "a sixteenth of a pixel is 16 subpixels");
    return _mm256_slli_epi64(_mm256_cvtepi8_epi64(_mm_cvtsi32_si128(four)), 4);
}

/* rs_sample_walk_of for 4 or 8 samples, four a vector: the same integers, and dz by
 * rs_plane_step's double operations in its order (the offsets are below 2^40, so
 * exact as doubles), so the same walk. */
__attribute__((target("avx2")))
static void sample_walk_avx2(const rs_setup *s, const rs_samples *p, const rs_depth_plane *z, rs_sample_walk *w)
{
    const int halves = p->count / 4;
    w->count = p->count;
    __m256i off[3][2];
    for (int h = 0; h < halves; h++) {
        const __m256i X = sixteenths_to_subpixels(&p->dx[4 * h]), Y = sixteenths_to_subpixels(&p->dy[4 * h]);
        for (int i = 0; i < 3; i++) {
            off[i][h] = _mm256_add_epi64(_mm256_mul_epi32(_mm256_set1_epi64x(s->a[i]), X),
                                         _mm256_mul_epi32(_mm256_set1_epi64x(s->b[i]), Y));
            _mm256_storeu_si256((__m256i *)&w->cover[i][4 * h], _mm256_add_epi64(off[i][h], _mm256_set1_epi64x(s->bias[i])));
        }
        if (z) {
            const __m256d o0 = exact_to_double(off[0][h]), o1 = exact_to_double(off[1][h]);
            const __m256d d = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(o0, _mm256_set1_pd(z->d0)),
                                                          _mm256_mul_pd(o1, _mm256_set1_pd(z->d1))),
                                            _mm256_set1_pd(z->inv_area));
            _mm256_storeu_pd(&w->dz[4 * h], d);
        } else {
            _mm256_storeu_pd(&w->dz[4 * h], _mm256_setzero_pd());
        }
    }
    __m256i least[3], most[3];                    /* per edge, over the halves */
    for (int i = 0; i < 3; i++) {
        least[i] = halves == 2 ? lanes_min(off[i][0], off[i][1]) : off[i][0];
        most[i] = halves == 2 ? lanes_max(off[i][0], off[i][1]) : off[i][0];
    }
    edge_extremes(least, most, s->bias, w->lo, w->hi);
    w->int32_rows = false;
}
#endif

void rs_sample_walk_make(const rs_setup *s, const rs_samples *p, const rs_depth_plane *z, rs_sample_walk *w,
                         bool avx2)
{
#if defined(__x86_64__)
    if (avx2 && p->count % 4 == 0) {
        sample_walk_avx2(s, p, z, w);
        return;
    }
#endif
    (void)avx2;
    rs_sample_walk_of(s, p, z, w);
}

static void sample_row_baseline(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                                const int64_t e_in[3], int n, const float *held, uint8_t *nearer,
                                uint8_t *tie, float *depth)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    int64_t e[3] = {e_in[0], e_in[1], e_in[2]};
    for (int j = 0; j < n; j++, held += w->count, depth += w->count) {
        const unsigned cover = rs_walk_cover(w, e);
        unsigned nr = 0, eq = 0;
        if (cover) {
            const double centre = rs_plane_centre(z, e[0], e[1]);
            for (int k = 0; k < w->count; k++) {
                const float zk = depth[k] = (float)(centre + w->dz[k]);
                nr |= (unsigned)(zk < held[k]) << k;
                eq |= (unsigned)(zk == held[k]) << k;
            }
        }
        nearer[j] = (uint8_t)(nr & cover);
        tie[j] = (uint8_t)(eq & cover);
        for (int i = 0; i < 3; i++) e[i] += s->a[i] * one;
    }
}

static bool sample_row_take_baseline(const rs_setup *s, const rs_sample_walk *w,
                                     const rs_depth_plane *z, const int64_t e_in[3], int n,
                                     float *held, uint32_t *owner, uint32_t id, uint8_t *tie)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    int64_t e[3] = {e_in[0], e_in[1], e_in[2]};
    bool ties = false;
    for (int j = 0; j < n; j++, held += w->count, owner += w->count) {
        const unsigned cover = rs_walk_cover(w, e);
        unsigned eq = 0;
        if (cover) {
            const double centre = rs_plane_centre(z, e[0], e[1]);
            for (int k = 0; k < w->count; k++) {
                const float zk = (float)(centre + w->dz[k]);
                if (!(cover >> k & 1)) continue;
                if (zk < held[k]) held[k] = zk, owner[k] = id;
                else eq |= (unsigned)(zk == held[k]) << k;
            }
        }
        tie[j] = (uint8_t)eq;
        ties |= eq != 0;
        for (int i = 0; i < 3; i++) e[i] += s->a[i] * one;
    }
    return ties;
}

#if defined(__x86_64__)
/* Four samples (first..first+3) of one pixel: covered (biased edges all >= 0), nearer
 * and equal masks, as sample_row_baseline computes them. */
__attribute__((target("avx2"), always_inline))
static inline void four_samples(const __m256i ev[3], const __m256i cover[3][2], const __m256d dz[2],
                                int half, __m256d centre, const float *held, float *depth,
                                unsigned *cv, unsigned *nr, unsigned *eq)
{
    __m256i all = _mm256_or_si256(_mm256_or_si256(_mm256_add_epi64(ev[0], cover[0][half]),
                                                  _mm256_add_epi64(ev[1], cover[1][half])),
                                  _mm256_add_epi64(ev[2], cover[2][half]));
    *cv = ~(unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(all)) & 0xfu;
    __m128 zk = _mm256_cvtpd_ps(_mm256_add_pd(centre, dz[half]));
    __m128 h = _mm_loadu_ps(held);
    _mm_storeu_ps(depth, zk);
    *nr = (unsigned)_mm_movemask_ps(_mm_cmplt_ps(zk, h));
    *eq = (unsigned)_mm_movemask_ps(_mm_cmpeq_ps(zk, h));
}

__attribute__((target("avx2")))
static void sample_row_avx2(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                            const int64_t e_in[3], int n, const float *held, uint8_t *nearer,
                            uint8_t *tie, float *depth)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    const int halves = w->count / 4;
    /* Both halves loaded whatever the count (the walk's arrays hold RS_MAX_SAMPLES = 8;
     * a second half past the count is never read): a loop to `halves` became memcpy
     * calls, three a row. */
    __m256i cover[3][2];
    for (int i = 0; i < 3; i++) {
        cover[i][0] = _mm256_loadu_si256((const __m256i *)&w->cover[i][0]);
        cover[i][1] = _mm256_loadu_si256((const __m256i *)&w->cover[i][4]);
    }
    const __m256d dz[2] = {_mm256_loadu_pd(&w->dz[0]), _mm256_loadu_pd(&w->dz[4])};
    int64_t e[3] = {e_in[0], e_in[1], e_in[2]};
    for (int j = 0; j < n; j++, held += w->count, depth += w->count) {
        const __m256i ev[3] = {_mm256_set1_epi64x(e[0]), _mm256_set1_epi64x(e[1]), _mm256_set1_epi64x(e[2])};
        const __m256d centre = _mm256_set1_pd(rs_plane_centre(z, e[0], e[1]));
        unsigned cv = 0, nr = 0, eq = 0;
        for (int h = 0; h < halves; h++) {
            unsigned c, a, b;
            four_samples(ev, cover, dz, h, centre, held + 4 * h, depth + 4 * h, &c, &a, &b);
            cv |= c << (4 * h);
            nr |= a << (4 * h);
            eq |= b << (4 * h);
        }
        nearer[j] = (uint8_t)(nr & cv);
        tie[j] = (uint8_t)(eq & cv);
        for (int i = 0; i < 3; i++) e[i] += s->a[i] * one;
    }
}
#endif

#if defined(__x86_64__)
/* Lane k all ones where bit k of the index is set. */
static const int32_t lane_masks[16][4] = {
    {0, 0, 0, 0}, {-1, 0, 0, 0}, {0, -1, 0, 0}, {-1, -1, 0, 0}, {0, 0, -1, 0}, {-1, 0, -1, 0},
    {0, -1, -1, 0}, {-1, -1, -1, 0}, {0, 0, 0, -1}, {-1, 0, 0, -1}, {0, -1, 0, -1},
    {-1, -1, 0, -1}, {0, 0, -1, -1}, {-1, 0, -1, -1}, {0, -1, -1, -1}, {-1, -1, -1, -1}};

__attribute__((target("avx2")))
static bool sample_row_take_avx2(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                                 const int64_t e_in[3], int n, float *held, uint32_t *owner,
                                 uint32_t id, uint8_t *tie)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    const int halves = w->count / 4;
    /* Both halves loaded whatever the count (the walk's arrays hold RS_MAX_SAMPLES = 8;
     * a second half past the count is never read): a loop to `halves` became memcpy
     * calls, three a row. */
    __m256i cover[3][2];
    for (int i = 0; i < 3; i++) {
        cover[i][0] = _mm256_loadu_si256((const __m256i *)&w->cover[i][0]);
        cover[i][1] = _mm256_loadu_si256((const __m256i *)&w->cover[i][4]);
    }
    const __m256d dz[2] = {_mm256_loadu_pd(&w->dz[0]), _mm256_loadu_pd(&w->dz[4])};
    const __m128i ids = _mm_set1_epi32((int)id);
    int64_t e[3] = {e_in[0], e_in[1], e_in[2]};
    bool ties = false;
    for (int j = 0; j < n; j++, held += w->count, owner += w->count) {
        const __m256i ev[3] = {_mm256_set1_epi64x(e[0]), _mm256_set1_epi64x(e[1]), _mm256_set1_epi64x(e[2])};
        const __m256d centre = _mm256_set1_pd(rs_plane_centre(z, e[0], e[1]));
        unsigned eq_all = 0;
        for (int h = 0; h < halves; h++) {
            __m256i all = _mm256_or_si256(_mm256_or_si256(_mm256_add_epi64(ev[0], cover[0][h]),
                                                          _mm256_add_epi64(ev[1], cover[1][h])),
                                          _mm256_add_epi64(ev[2], cover[2][h]));
            const unsigned cv = ~(unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(all)) & 0xfu;
            if (!cv) continue;
            const __m128 zk = _mm256_cvtpd_ps(_mm256_add_pd(centre, dz[h]));
            const __m128 hv = _mm_loadu_ps(held + 4 * h);
            const unsigned win = (unsigned)_mm_movemask_ps(_mm_cmplt_ps(zk, hv)) & cv;
            eq_all |= ((unsigned)_mm_movemask_ps(_mm_cmpeq_ps(zk, hv)) & cv) << (4 * h);
            if (!win) continue;
            const __m128i m = _mm_loadu_si128((const __m128i *)lane_masks[win]);
            _mm_storeu_ps(held + 4 * h, _mm_blendv_ps(hv, zk, _mm_castsi128_ps(m)));
            const __m128i o = _mm_loadu_si128((const __m128i *)(owner + 4 * h));
            _mm_storeu_si128((__m128i *)(owner + 4 * h), _mm_blendv_epi8(o, ids, m));
        }
        tie[j] = (uint8_t)eq_all;
        ties |= eq_all != 0;
        for (int i = 0; i < 3; i++) e[i] += s->a[i] * one;
    }
    return ties;
}
#endif

#if defined(__x86_64__)
/* The int32 kernels take eight samples a step (two pixels at 4x, one at 8x) on int32
 * edge values, where every covered-or-not sample's biased edge value over the pixels
 * walked fits int32: the same sign tests as the baseline, the same depths (the centre by
 * rs_plane_centre from the exact int64 values, plus dz, rounded to float), the same
 * compares, so the same held, owner, tie and result. At 4x a last pixel that fills no
 * step takes lanes 0-3 alone (masked loads and stores: nothing past the row is touched).
 * Lanes are (pixel, sample) pixel-major, as held is. */
typedef struct int32_lanes {
    int count, pixels;                    /* samples per pixel; pixels per step */
    __m256i first[3];                     /* the biased values at the walk's first step */
    __m256i step[3];                      /* their change to the next step, modulo 2^32 */
    __m256d dz[2];                        /* lanes 0-3's and 4-7's depth steps from the centre */
    int64_t s0, s1;                       /* edges 0 and 1's exact change per pixel */
} int32_lanes;

/* Coefficient c times f (an edge's change over f subpixels) modulo 2^32, in all eight
 * int32 lanes: how the int32 walks step their lanes. */
__attribute__((target("avx2"), always_inline))
static inline __m256i lanes_of_change(int32_t c, int64_t f)
{
    return _mm256_set1_epi32((int32_t)(uint32_t)((uint64_t)(int64_t)c * (uint64_t)f));
}

/* The lanes' change per step and edges 0 and 1's per pixel (both ways of making lanes). */
__attribute__((target("avx2"), always_inline))
static inline void int32_lanes_steps(const rs_setup *s, int count, int32_lanes *l)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    l->count = count;
    l->pixels = 8 / count;
    for (int i = 0; i < 3; i++)
        l->step[i] = lanes_of_change(s->a[i], one * l->pixels);
    l->s0 = (int64_t)s->a[0] * one;
    l->s1 = (int64_t)s->a[1] * one;
}

/* The lanes of the step at the pixel whose exact centre edge values are e: lane l holds
 * pixel l / count's centre plus sample l % count's biased offset, exact in int64, kept
 * as int32 (exact: every value reached fits). */
__attribute__((target("avx2"), always_inline))
static inline void int32_lanes_of(const rs_setup *s, const rs_sample_walk *w, const int64_t e[3], int32_lanes *l)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    int32_lanes_steps(s, w->count, l);
    const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    for (int i = 0; i < 3; i++) {
        const int64_t next = l->count == 4 ? e[i] + (int64_t)s->a[i] * one : e[i];
        const __m256i lo = _mm256_permutevar8x32_epi32(
            _mm256_add_epi64(_mm256_set1_epi64x(e[i]), _mm256_loadu_si256((const __m256i *)&w->cover[i][0])),
            low_halves);
        const __m256i hi = _mm256_permutevar8x32_epi32(
            _mm256_add_epi64(_mm256_set1_epi64x(next), _mm256_loadu_si256((const __m256i *)&w->cover[i][4 % l->count])),
            low_halves);
        l->first[i] = _mm256_permute2x128_si256(lo, hi, 0x20);
    }
    for (int h = 0; h < 2; h++) l->dz[h] = _mm256_loadu_pd(&w->dz[(4 * h) % l->count]);
}

/* The same lanes straight from the setup and the pattern (4 or 8 samples), without a
 * walk: each lane's sample offset a * X + b * Y computed modulo 2^32, then the centre
 * and bias added, which is the exact value wherever that fits int32 (the caller's
 * block_fits_int32). The offsets of lanes 0-3 (at 8x also 4-7) are a sample's alone,
 * each at most direct_block_fits_int32's hi = (|a| + |b|) * 7/16 pixel in size, which
 * its two limits keep below 2^31, so exact as int32; dz is made from them as doubles in
 * rs_plane_step's order: the walk's dz. */
__attribute__((target("avx2"), always_inline))
static inline void int32_lanes_direct(const rs_setup *s, const rs_samples *p, const rs_depth_plane *z,
                                      const int64_t e[3], const int count, int32_lanes *l)
{
    int32_lanes_steps(s, count, l);
    int64_t dx8, dy8;                     /* lane l's sample: l % count */
    if (count == 4) {
        int32_t x4, y4;
        memcpy(&x4, p->dx, sizeof x4);
        memcpy(&y4, p->dy, sizeof y4);
        dx8 = (int64_t)(uint32_t)x4 | (int64_t)((uint64_t)(uint32_t)x4 << 32);
        dy8 = (int64_t)(uint32_t)y4 | (int64_t)((uint64_t)(uint32_t)y4 << 32);
    } else {
        memcpy(&dx8, p->dx, sizeof dx8);
        memcpy(&dy8, p->dy, sizeof dy8);
    }
    _Static_assert((1 << RS_SUBPIXEL_BITS) / 16 == 16, "a sixteenth of a pixel is 16 subpixels");
    const __m256i sx = _mm256_slli_epi32(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(dx8)), 4);
    const __m256i sy = _mm256_slli_epi32(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(dy8)), 4);
    /* at 4x, lanes 4-7 are the next pixel's: one pixel (1 << RS_SUBPIXEL_BITS) further across */
    const __m256i lx = count == 4 ? _mm256_add_epi32(sx, _mm256_setr_epi32(0, 0, 0, 0, 256, 256, 256, 256)) : sx;
    __m256i off[3];
    for (int i = 0; i < 3; i++) {
        off[i] = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_set1_epi32(s->a[i]), lx),
                                  _mm256_mullo_epi32(_mm256_set1_epi32(s->b[i]), sy));
        l->first[i] = _mm256_add_epi32(off[i], _mm256_set1_epi32((int32_t)(uint32_t)(uint64_t)(e[i] + s->bias[i])));
    }
    if (!z) {                            /* coverage alone (raster_rect_samples_avx2): no depths */
        l->dz[0] = l->dz[1] = _mm256_setzero_pd();
        return;
    }
    const __m256d d0 = _mm256_set1_pd(z->d0), d1 = _mm256_set1_pd(z->d1), inv_area = _mm256_set1_pd(z->inv_area);
    for (int h = 0; h < count / 4; h++) {
        const __m256d o0 = _mm256_cvtepi32_pd(h ? _mm256_extracti128_si256(off[0], 1) : _mm256_castsi256_si128(off[0]));
        const __m256d o1 = _mm256_cvtepi32_pd(h ? _mm256_extracti128_si256(off[1], 1) : _mm256_castsi256_si128(off[1]));
        l->dz[h] = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(o0, d0), _mm256_mul_pd(o1, d1)), inv_area);
    }
    if (count == 4) l->dz[1] = l->dz[0];
}

/* Whether every sample's biased edge value over the pixels [x0, x0 + n) x [y0, y0 + rows)
 * fits int32 (as rs_sample_walk_bound), first[i] being edge i's exact value at the first
 * pixel's centre and lo[i], hi[i] bounds on its samples' biased offsets (the walk's
 * least and greatest, or wider): its least and greatest are first + the negative
 * (positive) parts of its steps across and down plus lo (hi). The three edges in the
 * lanes of one vector, without branches (edges_fit_int32 in depth_rect.c). */
__attribute__((target("avx2"), always_inline))
static inline bool block_fits_int32(const rs_setup *s, __m256i lo, __m256i hi, const int64_t first[3], int n,
                                    int rows)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    const __m256i a = _mm256_setr_epi64x(s->a[0], s->a[1], s->a[2], 0);
    const __m256i b = _mm256_setr_epi64x(s->b[0], s->b[1], s->b[2], 0);
    const __m256i f = _mm256_setr_epi64x(first[0], first[1], first[2], 0);
    const __m256i across = _mm256_mul_epi32(a, _mm256_set1_epi64x(one * (n - 1)));
    const __m256i below = _mm256_mul_epi32(b, _mm256_set1_epi64x(one * (rows - 1)));
    const __m256i zero = _mm256_setzero_si256();
    const __m256i across_neg = _mm256_cmpgt_epi64(zero, across), below_neg = _mm256_cmpgt_epi64(zero, below);
    const __m256i least = _mm256_add_epi64(_mm256_add_epi64(f, lo),
                                           _mm256_add_epi64(_mm256_and_si256(across, across_neg),
                                                            _mm256_and_si256(below, below_neg)));
    const __m256i most = _mm256_add_epi64(_mm256_add_epi64(f, hi),
                                          _mm256_add_epi64(_mm256_andnot_si256(across_neg, across),
                                                           _mm256_andnot_si256(below_neg, below)));
    const __m256i out = _mm256_or_si256(_mm256_cmpgt_epi64(_mm256_set1_epi64x(INT32_MIN), least),
                                        _mm256_cmpgt_epi64(most, _mm256_set1_epi64x(INT32_MAX)));
    return _mm256_testz_si256(out, out);
}

/* block_fits_int32 with the walk's bounds. */
__attribute__((target("avx2")))
static bool walk_block_fits_int32(const rs_setup *s, const rs_sample_walk *w, const int64_t first[3], int n, int rows)
{
    return block_fits_int32(s, _mm256_setr_epi64x(w->lo[0], w->lo[1], w->lo[2], 0),
                            _mm256_setr_epi64x(w->hi[0], w->hi[1], w->hi[2], 0), first, n, rows);
}

/* block_fits_int32 without a walk: each edge's sample offsets bounded by (|a| + |b|)
 * times the pattern's greatest offset on either axis (bias: -1 at the least). Wider than
 * the walk's exact bounds, so a rectangle near the int32 limit may be refused here and
 * taken by the walk instead: the same results either way. */
__attribute__((target("avx2"), always_inline))
static inline bool direct_block_fits_int32(const rs_setup *s, const rs_samples *p, const int64_t first[3], int n,
                                           int rows)
{
    (void)p;                             /* the 4x and 8x patterns' greatest |dx|, |dy|: 7/16 pixel */
    const __m256i three = _mm256_setr_epi64x(-1, -1, -1, 0);
    const __m256i a = _mm256_cvtepi32_epi64(_mm_abs_epi32(_mm_loadu_si128((const __m128i *)s->a)));
    const __m256i b = _mm256_cvtepi32_epi64(_mm_abs_epi32(_mm_loadu_si128((const __m128i *)s->b)));
    const __m256i hi = _mm256_and_si256(_mm256_mul_epi32(_mm256_add_epi64(a, b), _mm256_set1_epi64x(16 * 7)), three);
    return block_fits_int32(s, _mm256_sub_epi64(_mm256_setr_epi64x(-1, -1, -1, 0), hi), hi, first, n, rows);
}

/* The depth plane as block_take steps it: edges 0 and 1 at the centres of a step's two
 * pixels (at 8x only the first is used) in one vector, e = (e0 at its first pixel, e0 at
 * the next, e1 at its first, e1 at the next), kept in double: integers below 2^53 (the
 * block's values fit int32), so every sum is exact and each lane is (double) of the
 * exact int64 value. d = (d0, d0, d1, d1); z2 and inv_area in both lanes. */
typedef struct block_plane { __m256d e, d, dz[2]; __m128d z2, inv_area; } block_plane;

/* One step of block_take: the eight lanes t0-t2 (edges 0-2), the plane pl, held,
 * owner and tie at its first pixel. whole: all eight lanes are in the rectangle, else
 * (4x, a row's odd last pixel) lanes 0-3 alone, with masked loads and stores. Returns
 * the samples at equal depth (bits 0-7) and those it took (bits 8-15). */
__attribute__((target("avx2"), always_inline))
static inline unsigned block_step(__m256i t0, __m256i t1, __m256i t2, const block_plane *pl, float *held, uint32_t *owner,
                                  uint8_t *tie, __m256i ids, const int count, const bool whole)
{
    const __m256i all = _mm256_or_si256(_mm256_or_si256(t0, t1), t2);
    const unsigned cv = ~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(all)) & (whole ? 0xffu : 0x0fu);
    /* a half step with no sample in returns here; a whole one does not branch on its
     * coverage (a step with none, about as common as one with some, made the branch
     * unpredictable) and stores its lanes back unchanged */
    if (!whole && !cv) return 0;
    /* lanes 0-3: the first pixel's samples 0-3; 4-7: the second pixel's 0-3 (4x)
     * or the first pixel's 4-7 (8x) */
    /* rs_plane_centre of both pixels: z2 + (e0 d0 + e1 d1) inv_area, lane by lane */
    const __m256d ed = _mm256_mul_pd(pl->e, pl->d);
    const __m128d sum = _mm_add_pd(_mm256_castpd256_pd128(ed), _mm256_extractf128_pd(ed, 1));
    const __m128d c = _mm_add_pd(pl->z2, _mm_mul_pd(sum, pl->inv_area));
    const __m256d c0 = _mm256_broadcastsd_pd(c);
    const __m256d c1 = count == 4 ? _mm256_permute4x64_pd(_mm256_castpd128_pd256(c), 0x55) : c0;
    const __m128 z0 = _mm256_cvtpd_ps(_mm256_add_pd(c0, pl->dz[0]));
    const __m128 z1 = _mm256_cvtpd_ps(_mm256_add_pd(c1, pl->dz[1]));
    const __m256i valid = whole ? _mm256_set1_epi32(-1) : _mm256_setr_epi32(-1, -1, -1, -1, 0, 0, 0, 0);
    const __m256 zk = _mm256_set_m128(z1, z0);
    const __m256 hv = whole ? _mm256_loadu_ps(held) : _mm256_maskload_ps(held, valid);
    const unsigned eq = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(zk, hv, _CMP_EQ_OQ)) & cv;
    if (eq) {                            /* rare (equal depths): tie is zero beforehand */
        tie[0] = (uint8_t)(eq & ((1u << count) - 1));
        if (count == 4 && whole) tie[1] = (uint8_t)(eq >> 4);
    }
    if (whole) {                         /* nearer and covered: the sign bit of lt & ~all */
        const __m256 m = _mm256_andnot_ps(_mm256_castsi256_ps(all), _mm256_cmp_ps(zk, hv, _CMP_LT_OQ));
        _mm256_storeu_ps(held, _mm256_blendv_ps(hv, zk, m));
        const __m256 o = _mm256_loadu_ps((const float *)owner);
        _mm256_storeu_ps((float *)owner, _mm256_blendv_ps(o, _mm256_castsi256_ps(ids), m));
        return eq | (unsigned)_mm256_movemask_ps(m) << 8;
    }
    const unsigned win = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(zk, hv, _CMP_LT_OQ)) & cv;
    if (!win) return eq;
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i m = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)win), bit), bit);
    _mm256_maskstore_ps(held, m, zk);
    _mm256_maskstore_epi32((int *)owner, m, ids);
    return eq | win << 8;
}

/* The samples of the rectangle of `rows` rows of n pixels whose first pixel's exact
 * centre edge values are e, its lanes l: one flat walk of steps, each step's lanes the
 * last one's plus l->step[i] (a row's end: plus wrap[i], to the next row's first pixel),
 * all modulo 2^32 (exact inside the rectangle); held, owner from the first pixel,
 * stride apart per row; tie n per row. A row is its whole steps, then at 4x for an odd
 * n a half step of its last pixel. A step whose eight samples are all outside costs
 * its sign test. Returns BLOCK_TIES when any pixel has a tie, BLOCK_TOOK when it took
 * any sample; tie must be zero beforehand. */
#define BLOCK_TIES 0xffu
#define BLOCK_TOOK 0xff00u
__attribute__((target("avx2"), always_inline))
static inline unsigned block_take(const rs_setup *s, const int32_lanes *l, const rs_depth_plane *z,
                              const int64_t e[3], int n, int rows, float *held, uint32_t *owner,
                              size_t stride, uint32_t id, uint8_t *tie, const int count)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    if (n <= 0) return 0;                /* an empty span (rs_sample_row_take): no step either */
    const int pixels = 8 / count, whole = n / pixels, half = n % pixels, steps = whole + half;
    /* the lanes of edges 0-2 (apart, not an array: GCC kept an array's lanes in memory),
     * their steps, and from past a row's last step to the next row's first */
    __m256i t0 = l->first[0], t1 = l->first[1], t2 = l->first[2], wrap[3];
    const __m256i step0 = l->step[0], step1 = l->step[1], step2 = l->step[2];
    for (int i = 0; i < 3; i++)
        wrap[i] = _mm256_sub_epi32(lanes_of_change(s->b[i], one),
                                   _mm256_mullo_epi32(l->step[i], _mm256_set1_epi32(steps)));
    const int64_t row0 = (int64_t)s->b[0] * one - l->s0 * pixels * steps, row1 = (int64_t)s->b[1] * one - l->s1 * pixels * steps;
    const ptrdiff_t next_row = (ptrdiff_t)stride - 8 * steps, next_tie = n - pixels * steps;
    const __m256i ids = _mm256_set1_epi32((int)id);
    block_plane pl = {_mm256_setr_pd((double)e[0], (double)(e[0] + l->s0), (double)e[1], (double)(e[1] + l->s1)),
                      _mm256_setr_pd(z->d0, z->d0, z->d1, z->d1), {l->dz[0], l->dz[1]}, _mm_set1_pd(z->z2),
                      _mm_set1_pd(z->inv_area)};   /* made before the loop: the tie stores may alias the plane */
    const __m256d e_step = _mm256_setr_pd((double)(l->s0 * pixels), (double)(l->s0 * pixels),
                                          (double)(l->s1 * pixels), (double)(l->s1 * pixels));
    const __m256d e_row = _mm256_setr_pd((double)row0, (double)row0, (double)row1, (double)row1);
    /* the lanes, pointers and centres moved one step on */
#define BLOCK_NEXT_STEP()                                                           \
    do {                                                                             \
        t0 = _mm256_add_epi32(t0, step0);                                           \
        t1 = _mm256_add_epi32(t1, step1);                                           \
        t2 = _mm256_add_epi32(t2, step2);                                           \
        held += 8, owner += 8, tie += pixels;                                        \
        pl.e = _mm256_add_pd(pl.e, e_step);                                          \
    } while (0)
    /* to the next row's first step */
#define BLOCK_NEXT_ROW()                                                            \
    do {                                                                             \
        t0 = _mm256_add_epi32(t0, wrap[0]);                                         \
        t1 = _mm256_add_epi32(t1, wrap[1]);                                         \
        t2 = _mm256_add_epi32(t2, wrap[2]);                                         \
        held += next_row, owner += next_row, tie += next_tie;                        \
        pl.e = _mm256_add_pd(pl.e, e_row);                                           \
    } while (0)
    unsigned found = 0;                  /* block_step's, over the steps */
    if (whole == 0) {                    /* one pixel a row at 4x: its half steps */
        for (int r = 0; r < rows; r++) {
            found |= block_step(t0, t1, t2, &pl, held, owner, tie, ids, count, false);
            BLOCK_NEXT_STEP();
            BLOCK_NEXT_ROW();
        }
        return found;
    }
    /* Rows of W whole steps and H half steps, W and H constants: each row's steps
     * straight-line code, with no branch on where a row ends (most rectangles are two to
     * seven pixels wide: such branches, taken a step or two apart, were mispredicted) */
#define BLOCK_ROWS(W, H)                                                            \
    do {                                                                             \
        for (int r = 0; r < rows; r++) {                                             \
            for (int j = 0; j < (W); j++) {                                          \
                found |= block_step(t0, t1, t2, &pl, held, owner, tie, ids, count, true); \
                BLOCK_NEXT_STEP();                                                   \
            }                                                                        \
            if (H) {                                                                 \
                found |= block_step(t0, t1, t2, &pl, held, owner, tie, ids, count, false); \
                BLOCK_NEXT_STEP();                                                   \
            }                                                                        \
            BLOCK_NEXT_ROW();                                                        \
        }                                                                            \
        return found;                                                                \
    } while (0)
    switch (whole * 2 + half) {
    case 2: BLOCK_ROWS(1, 0);
    case 3: BLOCK_ROWS(1, 1);
    case 4: BLOCK_ROWS(2, 0);
    case 5: BLOCK_ROWS(2, 1);
    case 6: BLOCK_ROWS(3, 0);
    case 7: BLOCK_ROWS(3, 1);
    default: break;
    }
#undef BLOCK_ROWS
    /* wider: the whole steps of all rows as one loop, a row's end a counter's */
    for (int k = rows * whole, left = whole; k > 0; k--) {
        found |= block_step(t0, t1, t2, &pl, held, owner, tie, ids, count, true);
        BLOCK_NEXT_STEP();
        if (--left) continue;
        left = whole;
        if (half) {
            found |= block_step(t0, t1, t2, &pl, held, owner, tie, ids, count, false);
            BLOCK_NEXT_STEP();
        }
        BLOCK_NEXT_ROW();
    }
#undef BLOCK_NEXT_ROW
#undef BLOCK_NEXT_STEP
    return found;
}

/* block_take for 4 and 8 samples from the walk, each compiled for its count. */
__attribute__((target("avx2")))
static bool sample_block_take_int32(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                                    const int64_t e[3], int n, int rows, float *held, uint32_t *owner,
                                    size_t stride, uint32_t id, uint8_t *tie)
{
    int32_lanes l;
    int32_lanes_of(s, w, e, &l);
    if (w->count == 4) return (block_take(s, &l, z, e, n, rows, held, owner, stride, id, tie, 4) & BLOCK_TIES) != 0;
    return (block_take(s, &l, z, e, n, rows, held, owner, stride, id, tie, 8) & BLOCK_TIES) != 0;
}

/* rs_sample_block_take's kernel for one sample count: false, nothing written, when the
 * rectangle's values may pass int32. */
__attribute__((target("avx2"), always_inline))
static inline bool direct_block_take(const rs_setup *s, const rs_samples *p, const rs_depth_plane *z,
                                     const int64_t e[3], int n, int rows, float *held, uint32_t *owner,
                                     size_t stride, uint32_t id, uint8_t *tie, rs_block_taken *taken, const int count)
{
    if (!direct_block_fits_int32(s, p, e, n, rows)) return false;
    int32_lanes l;
    int32_lanes_direct(s, p, z, e, count, &l);
    const unsigned found = block_take(s, &l, z, e, n, rows, held, owner, stride, id, tie, count);
    *taken = (rs_block_taken){(found & BLOCK_TIES) != 0, (found & BLOCK_TOOK) != 0};
    return true;
}

__attribute__((target("avx2")))
static bool sample_block_take_direct(const rs_setup *s, const rs_samples *p, const rs_depth_plane *z,
                                     const int64_t e[3], int n, int rows, float *held, uint32_t *owner,
                                     size_t stride, uint32_t id, uint8_t *tie, rs_block_taken *taken)
{
    if (p->count == 4) return direct_block_take(s, p, z, e, n, rows, held, owner, stride, id, tie, taken, 4);
    return direct_block_take(s, p, z, e, n, rows, held, owner, stride, id, tie, taken, 8);
}

/* rs_raster_rect_samples' kernel for one sample count on int32 lanes (the block walk's,
 * made without a walk: int32_lanes_direct), for a rectangle at most
 * RS_SAMPLE_BLOCK_WIDTH wide whose values fit int32: eight samples a step, each pixel
 * written to out[n] and kept (n counted on) when a sample is covered, without a branch
 * on its coverage. out has room for the rectangle's pixels. */
__attribute__((target("avx2"), always_inline))
static inline int cover_block(const rs_setup *s, const rs_samples *p, const int64_t e[3], int x0, int y0, int n,
                              int rows, rs_cover *out, uint8_t *mask, const int count)
{
    int32_lanes l;
    int32_lanes_direct(s, p, NULL, e, count, &l);
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    const int pixels = 8 / count, steps = (n + pixels - 1) / pixels;
    const unsigned valid_last = n % pixels ? (1u << (count * (n % pixels))) - 1 : 0xffu;
    int found = 0;
    __m256i r0 = l.first[0], r1 = l.first[1], r2 = l.first[2];
    const __m256i down[3] = {lanes_of_change(s->b[0], one), lanes_of_change(s->b[1], one),
                             lanes_of_change(s->b[2], one)};
    int64_t row0 = e[0], row1 = e[1];    /* edges 0 and 1 exact at the row's first centre */
    for (int y = y0; y < y0 + rows; y++) {
        __m256i t0 = r0, t1 = r1, t2 = r2;
        for (int k = 0; k < steps; k++) {
            const __m256i all = _mm256_or_si256(_mm256_or_si256(t0, t1), t2);
            unsigned cv = ~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(all)) & (k + 1 < steps ? 0xffu : valid_last);
            for (int q = 0; q < pixels; q++, cv >>= count) {
                const int j = k * pixels + q;
                const unsigned m = cv & ((1u << count) - 1);
                out[found] = (rs_cover){(uint16_t)(x0 + j), (uint16_t)y, row0 + j * l.s0, row1 + j * l.s1};
                mask[found] = (uint8_t)m;
                found += m != 0;
            }
            t0 = _mm256_add_epi32(t0, l.step[0]);
            t1 = _mm256_add_epi32(t1, l.step[1]);
            t2 = _mm256_add_epi32(t2, l.step[2]);
        }
        r0 = _mm256_add_epi32(r0, down[0]);
        r1 = _mm256_add_epi32(r1, down[1]);
        r2 = _mm256_add_epi32(r2, down[2]);
        row0 += (int64_t)s->b[0] * one;
        row1 += (int64_t)s->b[1] * one;
    }
    return found;
}

/* cover_block for 4 and 8 samples, or -1 (nothing written) where it does not apply. */
__attribute__((target("avx2")))
static int raster_rect_samples_avx2(const rs_setup *s, const rs_samples *p, int x0, int y0, int x1, int y1,
                                    rs_cover *out, uint8_t *mask)
{
    const int n = x1 - x0, rows = y1 - y0;
    if (p->count % 4 != 0 || n > RS_SAMPLE_BLOCK_WIDTH) return -1;
    int64_t e[3];
    rs_centre_edges(s, x0, y0, e);
    if (!direct_block_fits_int32(s, p, e, n, rows)) return -1;
    if (p->count == 4) return cover_block(s, p, e, x0, y0, n, rows, out, mask, 4);
    return cover_block(s, p, e, x0, y0, n, rows, out, mask, 8);
}

/* sample_row_take_avx2 on int32 lanes, for rows where w is bounded
 * (rs_sample_walk_bound): a block of one row. tie must be zero beforehand. */
__attribute__((target("avx2")))
static bool sample_row_take_int32(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                                  const int64_t e_in[3], int n, float *held, uint32_t *owner,
                                  uint32_t id, uint8_t *tie)
{
    return sample_block_take_int32(s, w, z, e_in, n, 1, held, owner, 0, id, tie);
}
#endif

/* The pixels j of [0, n) where a sample may be covered, [*j0, *j1): those where every
 * edge's value plus its greatest sample offset (w->hi) is not negative. Each edge is
 * linear along the row, so this is one interval; the rest of the row is skipped
 * (triangle bounds widened to the samples' reach leave many pixels with none). */
static void row_span(const rs_setup *s, const rs_sample_walk *w, const int64_t e[3], int n,
                     int *j0, int *j1)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    int64_t lo = 0, hi = n;
    for (int i = 0; i < 3; i++) {
        const int64_t v = e[i] + w->hi[i], step = (int64_t)s->a[i] * one;
        if (step > 0 && v < 0) {
            const int64_t k = (-v + step - 1) / step;     /* first j with v + j step >= 0 */
            lo = k > lo ? k : lo;
        } else if (step < 0) {
            const int64_t k = v < 0 ? 0 : v / -step + 1;  /* first j with v + j step < 0 */
            hi = k < hi ? k : hi;
        } else if (step == 0 && v < 0) {
            hi = 0;
        }
    }
    lo = lo < n ? lo : n;
    *j0 = (int)lo;
    *j1 = (int)(hi > lo ? hi : lo);
}

/* e at pixel j of the row. */
static void edges_from(const rs_setup *s, const int64_t e[3], int j, int64_t out[3])
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    for (int i = 0; i < 3; i++) out[i] = e[i] + (int64_t)s->a[i] * one * j;
}

bool rs_sample_row_take(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                        const int64_t e_row[3], int n, float *held, uint32_t *owner, uint32_t id,
                        uint8_t *tie, bool avx2)
{
    int j0, j1;
    row_span(s, w, e_row, n, &j0, &j1);
    memset(tie, 0, (size_t)n);
    int64_t e[3];
    edges_from(s, e_row, j0, e);
    const size_t at = (size_t)j0 * (size_t)w->count;
#if defined(__x86_64__)
    if (avx2 && w->count % 4 == 0 && w->int32_rows)
        return sample_row_take_int32(s, w, z, e, j1 - j0, held + at, owner + at, id, tie + j0);
    if (avx2 && w->count % 4 == 0)
        return sample_row_take_avx2(s, w, z, e, j1 - j0, held + at, owner + at, id, tie + j0);
#endif
    (void)avx2;
    return sample_row_take_baseline(s, w, z, e, j1 - j0, held + at, owner + at, id, tie + j0);
}

bool rs_sample_rect_take(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                         int x0, int y0, int x1, int y1, float *held, uint32_t *owner, size_t stride,
                         uint32_t id, uint8_t *tie, bool avx2)
{
    const int n = x1 - x0, rows = y1 - y0;
    memset(tie, 0, (size_t)n * (size_t)rows);
    int64_t e[3];
    rs_centre_edges(s, x0, y0, e);
#if defined(__x86_64__)
    if (avx2 && w->count % 4 == 0 && n <= RS_SAMPLE_BLOCK_WIDTH && walk_block_fits_int32(s, w, e, n, rows))
        return sample_block_take_int32(s, w, z, e, n, rows, held, owner, stride, id, tie);
#endif
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    bool ties = false;
    for (int r = 0; r < rows; r++, held += stride, owner += stride, tie += n) {
        ties |= rs_sample_row_take(s, w, z, e, n, held, owner, id, tie, avx2);
        for (int i = 0; i < 3; i++) e[i] += (int64_t)s->b[i] * one;
    }
    return ties;
}

void rs_sample_row(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                   const int64_t e_row[3], int n, const float *held, uint8_t *nearer, uint8_t *tie,
                   float *depth, bool avx2)
{
    int j0, j1;
    row_span(s, w, e_row, n, &j0, &j1);
    memset(nearer, 0, (size_t)n);
    memset(tie, 0, (size_t)n);
    int64_t e[3];
    edges_from(s, e_row, j0, e);
    const size_t at = (size_t)j0 * (size_t)w->count;
#if defined(__x86_64__)
    if (avx2 && w->count % 4 == 0) {
        sample_row_avx2(s, w, z, e, j1 - j0, held + at, nearer + j0, tie + j0, depth + at);
        return;
    }
#endif
    (void)avx2;
    sample_row_baseline(s, w, z, e, j1 - j0, held + at, nearer + j0, tie + j0, depth + at);
}

bool rs_sample_block_take(const rs_setup *s, const rs_samples *p, const rs_depth_plane *z, int x0, int y0, int x1,
                          int y1, float *held, uint32_t *owner, size_t stride, uint32_t id, uint8_t *tie, bool avx2,
                          rs_block_taken *taken)
{
#if defined(__x86_64__)
    if (!avx2 || p->count % 4 != 0 || x1 - x0 > RS_SAMPLE_BLOCK_WIDTH) return false;
    int64_t e[3];
    rs_centre_edges(s, x0, y0, e);
    return sample_block_take_direct(s, p, z, e, x1 - x0, y1 - y0, held, owner, stride, id, tie, taken);
#else
    (void)s, (void)p, (void)z, (void)x0, (void)y0, (void)x1, (void)y1, (void)held, (void)owner;
    (void)stride, (void)id, (void)tie, (void)avx2, (void)taken;
    return false;
#endif
}

int rs_raster_rect_samples(const rs_setup *s, const rs_samples *p, int x0, int y0, int x1,
                           int y1, rs_cover *out, uint8_t *mask, bool avx2)
{
    clamp_to_bounds(s, &x0, &y0, &x1, &y1);
    if (x0 >= x1 || y0 >= y1) return 0;
#if defined(__x86_64__)
    if (avx2) {
        const int n = raster_rect_samples_avx2(s, p, x0, y0, x1, y1, out, mask);
        if (n >= 0) return n;
    }
#endif
    (void)avx2;
    rs_sample_walk w;
    rs_sample_walk_of(s, p, NULL, &w);
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    int n = 0;
    for (int y = y0; y < y1; y++) {
        int64_t e[3];
        rs_centre_edges(s, x0, y, e);
        for (int x = x0; x < x1; x++, e[0] += s->a[0] * one, e[1] += s->a[1] * one, e[2] += s->a[2] * one) {
            unsigned m = rs_walk_cover(&w, e);
            if (!m) continue;
            mask[n] = (uint8_t)m;
            out[n++] = (rs_cover){(uint16_t)x, (uint16_t)y, e[0], e[1]};
        }
    }
    return n;
}

/* depth_rect.c — rs_depth_rect (see raster.h): coverage, depth and the depth test of a
 * triangle over a rectangle of a depth and visibility buffer, in one pass, for the
 * stages that resolve visibility in any order (Tile-Shade, Z-Raster). A baseline kernel,
 * and on x86-64 AVX2 ones (eight pixels per step with int32 edge values, four with
 * int64 for the largest triangles) with the same results; the caller chooses, as for
 * rs_weights_packet. */
#include "rasterizer/raster.h"

#include "rasterizer/edges.h"

#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <stddef.h>
#include <string.h>

/* The test of one covered pixel: nearer, or as near with a smaller id. */
static inline bool depth_test(float *z, uint32_t *vis, float depth, uint32_t id)
{
    if (depth < *z || (depth == *z && (*vis == 0 || id + 1 < *vis))) {
        *z = depth;
        *vis = id + 1;
        return true;
    }
    return false;
}

/* Covered pixels whose depth cannot win are rejected without rs_depth's two divisions:
 * the triangle's depth plane, z2 + (z0 - z2) e0 / area + (z1 - z2) e1 / area (the same
 * quantity rs_depth rounds), is stepped along the row in double. It differs from
 * rs_depth's float by that float's rounding (below 2^-24 for depths in [0, 1]) and a few
 * double roundings per step (below 1e-12 over a row), both far below the margin; so a
 * pixel whose plane depth exceeds the stored one by more than the margin would fail the
 * exact test too (a tie needs equal depths). Only the work changes, never the result. */
#define DEPTH_REJECT_MARGIN 1e-5

/* The plane in double, and in float for the AVX2 kernels' rough test (rough_behind):
 * rough_z2 is z2 less the margin. */
typedef struct depth_plane { double dz0, dz1, z2; float rough_dz0, rough_dz1, rough_z2; } depth_plane;

static inline double plane_at(const depth_plane *p, int64_t e0, int64_t e1)
{
    return p->z2 + p->dz0 * (double)e0 + p->dz1 * (double)e1;
}

static inline depth_plane depth_plane_of(const rs_setup *s)
{
    const double area = (double)s->area;
    const double dz0 = ((double)s->z[0] - s->z[2]) / area, dz1 = ((double)s->z[1] - s->z[2]) / area;
    return (depth_plane){dz0, dz1, s->z[2], (float)dz0, (float)dz1, (float)(s->z[2] - DEPTH_REJECT_MARGIN)};
}

/* The exact depth and test of a covered pixel (biased edge values e0, e1) at index i. */
static inline void depth_test_pixel(const rs_setup *s, const rs_interp *ip, int64_t e0,
                                    int64_t e1, ptrdiff_t i, rs_depth_target *t, uint32_t id)
{
    float z = rs_depth(ip, e0 - s->bias[0], e1 - s->bias[1]);
    if (depth_test(&t->z[i], &t->vis[i], z, id) && t->won) t->won[t->nwon++] = (int32_t)i;
}

#if defined(__x86_64__)
/* rs_depth and depth_test for the lanes in `lanes` of the pixels from index i, whose
 * unbiased edge values are u0[k], u1[k]; returns the lanes won. The rare exact path: its
 * rs_interp is made here, not by every call of the kernels. */
__attribute__((noinline))
static int depth_test_listed(const rs_setup *s, const int64_t *u0, const int64_t *u1,
                             ptrdiff_t i, rs_depth_target *t, uint32_t id, int lanes)
{
    rs_interp ip;
    rs_interp_of(s, &ip);
    int won = 0;
    for (; lanes; lanes &= lanes - 1) {
        int k = __builtin_ctz((unsigned)lanes);
        if (depth_test(&t->z[i + k], &t->vis[i + k], rs_depth(&ip, u0[k], u1[k]), id)) won |= 1 << k;
    }
    return won;
}

/* depth_test_listed for four pixels (int64 edge values U0, U1). */
__attribute__((target("avx2")))
static int depth_test_exact(const rs_setup *s, __m256i U0, __m256i U1, ptrdiff_t i,
                            rs_depth_target *t, uint32_t id, int lanes)
{
    int64_t u0[4], u1[4];
    _mm256_storeu_si256((__m256i *)u0, U0);
    _mm256_storeu_si256((__m256i *)u1, U1);
    return depth_test_listed(s, u0, u1, i, t, id, lanes);
}
#endif

/* The same row walk as rs_raster_rect, with the depth test in place of the output. */
static int depth_rect_baseline(const rs_setup *s, int x0, int y0, int x1, int y1,
                               rs_depth_target *t, uint32_t id)
{
    clamp_to_bounds(s, &x0, &y0, &x1, &y1);
    rs_interp ip;
    rs_interp_of(s, &ip);
    const depth_plane pl = depth_plane_of(s);
    const edge_walk w = edge_walk_from(s, x0);
    const double plane_step = pl.dz0 * (double)w.step[0] + pl.dz1 * (double)w.step[1];
    int n = 0;
    for (int y = y0; y < y1; y++) {
        int64_t e[3];
        edge_row(s, &w, y, e);
        int64_t e0 = e[0], e1 = e[1], e2 = e[2];
        double plane = plane_at(&pl, e0 - s->bias[0], e1 - s->bias[1]);
        ptrdiff_t row = (ptrdiff_t)(y - t->oy) * t->stride - t->ox;
        bool in_span = false;
        for (int x = x0; x < x1; x++, e0 += w.step[0], e1 += w.step[1], e2 += w.step[2], plane += plane_step) {
            if ((e0 | e1 | e2) >= 0) {
                n++;
                in_span = true;
                if (plane > (double)t->z[row + x] + DEPTH_REJECT_MARGIN) continue;
                depth_test_pixel(s, &ip, e0, e1, row + x, t, id);
            } else if (in_span) {
                break;
            }
        }
    }
    return n;
}

#if defined(__x86_64__)
/* The AVX2 kernel computes depths without rs_depth's divisions: the depth plane (as in
 * the pre-test, but evaluated from the exact edge values of each pixel, never stepped)
 * differs from rs_depth's double sum by less than 2^-45 at a covered pixel when the
 * vertex depths are within [-2, 2] (barycentrics in [0, 1], each of the dozen roundings
 * below 2^-52 of a term at most 2); so where rounding the plane depth down and up by
 * EXACT_DEPTH_SLACK gives one float, rs_depth gives that float too. Pixels where the two
 * differ (a depth within 2^-40 of a float rounding boundary, about one in 10^4 near depth
 * 1) get rs_depth itself. Edge values are converted exactly while below 2^51. */
#define EXACT_DEPTH_SLACK 0x1p-40
#define EXACT_EDGE_LIMIT ((int64_t)1 << 50)

/* The float depths of four pixels (unbiased edges U0, U1); *inexact gets the lanes
 * whose depth the plane cannot settle. */
__attribute__((target("avx2")))
static inline __m128 plane_depths(const depth_plane *pl, __m256i U0, __m256i U1, int *inexact)
{
    __m256d d = _mm256_add_pd(_mm256_add_pd(_mm256_set1_pd(pl->z2),
                                            _mm256_mul_pd(_mm256_set1_pd(pl->dz0), exact_to_double(U0))),
                              _mm256_mul_pd(_mm256_set1_pd(pl->dz1), exact_to_double(U1)));
    __m128 lo = _mm256_cvtpd_ps(_mm256_sub_pd(d, _mm256_set1_pd(EXACT_DEPTH_SLACK)));
    __m128 hi = _mm256_cvtpd_ps(_mm256_add_pd(d, _mm256_set1_pd(EXACT_DEPTH_SLACK)));
    *inexact = 0xf & ~_mm_movemask_ps(_mm_cmpeq_ps(lo, hi));
    return lo;
}

/* depth_test over the lanes in `lanes` (all four: plain loads and stores; otherwise
 * masked ones, so no pixel outside the lanes is read or written): nearer, or as near with
 * a smaller id (vis 0: none). Returns the lanes won; stores their depth and id + 1. */
__attribute__((target("avx2")))
static inline int depth_test_lanes(float *z, uint32_t *vis, __m128 depth, uint32_t id, int lanes)
{
    static const int32_t lane_masks[16][4] = {
        {0, 0, 0, 0}, {-1, 0, 0, 0}, {0, -1, 0, 0}, {-1, -1, 0, 0}, {0, 0, -1, 0}, {-1, 0, -1, 0},
        {0, -1, -1, 0}, {-1, -1, -1, 0}, {0, 0, 0, -1}, {-1, 0, 0, -1}, {0, -1, 0, -1},
        {-1, -1, 0, -1}, {0, 0, -1, -1}, {-1, 0, -1, -1}, {0, -1, -1, -1}, {-1, -1, -1, -1}};
    const bool all = lanes == 0xf;
    __m128i m = _mm_loadu_si128((const __m128i *)lane_masks[lanes]);
    __m128 cur = all ? _mm_loadu_ps(z) : _mm_maskload_ps(z, m);
    __m128i cur_vis = all ? _mm_loadu_si128((const __m128i *)vis)
                          : _mm_maskload_epi32((const int *)vis, m);
    const __m128i flip = _mm_set1_epi32(INT32_MIN);   /* unsigned order by a signed compare */
    const __m128i ids = _mm_set1_epi32((int32_t)(id + 1));
    __m128i smaller_id = _mm_cmpgt_epi32(_mm_xor_si128(cur_vis, flip), _mm_xor_si128(ids, flip));
    __m128i tie_wins = _mm_or_si128(_mm_cmpeq_epi32(cur_vis, _mm_setzero_si128()), smaller_id);
    __m128 wins = _mm_or_ps(_mm_cmplt_ps(depth, cur),
                            _mm_and_ps(_mm_cmpeq_ps(depth, cur), _mm_castsi128_ps(tie_wins)));
    int won = _mm_movemask_ps(wins) & lanes;
    if (!won) return 0;
    __m128i w = _mm_loadu_si128((const __m128i *)lane_masks[won]);
    if (all) {
        _mm_storeu_ps(z, _mm_blendv_ps(cur, depth, _mm_castsi128_ps(w)));
        _mm_storeu_si128((__m128i *)vis, _mm_blendv_epi8(cur_vis, ids, w));
    } else {
        _mm_maskstore_ps(z, w, depth);
        _mm_maskstore_epi32((int *)vis, w, ids);
    }
    return won;
}

/* Eight pixels at a time, for triangles whose edge values over the rectangle fit in
 * int32 (all but the largest; edges_fit_int32): the same sign tests, plane depths (each
 * lane's edge values converted exactly, the same double operations in the same order),
 * exact fallback and depth test as the four-lane kernel below, so the same results, won
 * order and count. */
__attribute__((target("avx2")))
static inline __m256i lane_mask8(int lanes)
{
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(lanes), bit), bit);
}

/* plane_depths for eight pixels (unbiased int32 edge values U0, U1). */
__attribute__((target("avx2")))
static inline __m256 plane_depths8(const depth_plane *pl, __m256i U0, __m256i U1, int *inexact)
{
    __m128 lo[2], hi[2];
    for (int half = 0; half < 2; half++) {
        __m256d u0 = _mm256_cvtepi32_pd(half ? _mm256_extracti128_si256(U0, 1) : _mm256_castsi256_si128(U0));
        __m256d u1 = _mm256_cvtepi32_pd(half ? _mm256_extracti128_si256(U1, 1) : _mm256_castsi256_si128(U1));
        __m256d d = _mm256_add_pd(_mm256_add_pd(_mm256_set1_pd(pl->z2), _mm256_mul_pd(_mm256_set1_pd(pl->dz0), u0)),
                                  _mm256_mul_pd(_mm256_set1_pd(pl->dz1), u1));
        lo[half] = _mm256_cvtpd_ps(_mm256_sub_pd(d, _mm256_set1_pd(EXACT_DEPTH_SLACK)));
        hi[half] = _mm256_cvtpd_ps(_mm256_add_pd(d, _mm256_set1_pd(EXACT_DEPTH_SLACK)));
    }
    __m256 l = _mm256_set_m128(lo[1], lo[0]), h = _mm256_set_m128(hi[1], hi[0]);
    *inexact = 0xff & ~_mm256_movemask_ps(_mm256_cmp_ps(l, h, _CMP_EQ_OQ));
    return l;
}

/* Which of the eight pixels in `lanes` the test wins against the held cur, cur_vis
 * (depth_test_lanes' rule), as lane masks. */
__attribute__((target("avx2")))
static inline __m256i depth_wins8(__m256 cur, __m256i cur_vis, __m256 depth, __m256i ids, int lanes)
{
    const __m256i flip = _mm256_set1_epi32(INT32_MIN);
    __m256i smaller_id = _mm256_cmpgt_epi32(_mm256_xor_si256(cur_vis, flip), _mm256_xor_si256(ids, flip));
    __m256i tie_wins = _mm256_or_si256(_mm256_cmpeq_epi32(cur_vis, _mm256_setzero_si256()), smaller_id);
    __m256 wins = _mm256_or_ps(_mm256_cmp_ps(depth, cur, _CMP_LT_OQ),
                               _mm256_and_ps(_mm256_cmp_ps(depth, cur, _CMP_EQ_OQ), _mm256_castsi256_ps(tie_wins)));
    return _mm256_and_si256(_mm256_castps_si256(wins), lane_mask8(lanes));
}

/* depth_test_lanes for eight pixels, without branches on the data: the eight pixels are
 * loaded whole and written back whole, the lanes outside `lanes` (and those that lose)
 * with the values they had (rs_depth_target's slack: the buffer is the caller's alone
 * and extends past the row). Masked loads after masked stores to the same pixels wait
 * for the stores to retire, which cost 12% of the kernel on fairy's small triangles. */
__attribute__((target("avx2")))
static inline int depth_test_lanes8(float *z, uint32_t *vis, __m256 depth, uint32_t id, int lanes)
{
    __m256 cur = _mm256_loadu_ps(z);
    __m256i cur_vis = _mm256_loadu_si256((const __m256i *)vis);
    const __m256i ids = _mm256_set1_epi32((int32_t)(id + 1));
    __m256i w = depth_wins8(cur, cur_vis, depth, ids, lanes);
    _mm256_storeu_ps(z, _mm256_blendv_ps(cur, depth, _mm256_castsi256_ps(w)));
    _mm256_storeu_si256((__m256i *)vis, _mm256_blendv_epi8(cur_vis, ids, w));
    return _mm256_movemask_ps(_mm256_castsi256_ps(w));
}

/* depth_test_lanes8 for a block of two rows of four pixels: lanes 0-3 at index at,
 * lanes 4-7 at index below. When below == at (a last odd row: lanes 4-7 are not in
 * `lanes`), the upper half is stored first, so the lower half's results stand. */
__attribute__((target("avx2")))
static inline int depth_test_block(float *z, uint32_t *vis, ptrdiff_t at, ptrdiff_t below, __m256 depth,
                                   uint32_t id, int lanes)
{
    __m256 cur = _mm256_set_m128(_mm_loadu_ps(&z[below]), _mm_loadu_ps(&z[at]));
    __m256i cur_vis = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)&vis[below]),
                                       _mm_loadu_si128((const __m128i *)&vis[at]));
    const __m256i ids = _mm256_set1_epi32((int32_t)(id + 1));
    __m256i w = depth_wins8(cur, cur_vis, depth, ids, lanes);
    __m256 nz = _mm256_blendv_ps(cur, depth, _mm256_castsi256_ps(w));
    __m256i nv = _mm256_blendv_epi8(cur_vis, ids, w);
    _mm_storeu_ps(&z[below], _mm256_extractf128_ps(nz, 1));
    _mm_storeu_si128((__m128i *)&vis[below], _mm256_extracti128_si256(nv, 1));
    _mm_storeu_ps(&z[at], _mm256_castps256_ps128(nz));
    _mm_storeu_si128((__m128i *)&vis[at], _mm256_castsi256_si128(nv));
    return _mm256_movemask_ps(_mm256_castsi256_ps(w));
}

/* Eight pixels' int32 edge values U0, U1 widened into u0, u1 (depth_test_listed's). */
__attribute__((target("avx2"), always_inline))
static inline void edges_to_int64(__m256i U0, __m256i U1, int64_t u0[8], int64_t u1[8])
{
    for (int half = 0; half < 2; half++) {
        __m128i a = half ? _mm256_extracti128_si256(U0, 1) : _mm256_castsi256_si128(U0);
        __m128i b = half ? _mm256_extracti128_si256(U1, 1) : _mm256_castsi256_si128(U1);
        _mm256_storeu_si256((__m256i *)&u0[4 * half], _mm256_cvtepi32_epi64(a));
        _mm256_storeu_si256((__m256i *)&u1[4 * half], _mm256_cvtepi32_epi64(b));
    }
}

/* depth_test_listed for eight pixels (int32 edge values U0, U1): lanes 0-3 from index
 * at, lanes 4-7 from index at4 (at + 4 for eight pixels of a row, the next row's first
 * for a block of two rows of four). */
__attribute__((target("avx2"), noinline))
static int depth_test_exact8(const rs_setup *s, __m256i U0, __m256i U1, ptrdiff_t at, ptrdiff_t at4,
                             rs_depth_target *t, uint32_t id, int lanes)
{
    int64_t u0[8], u1[8];
    edges_to_int64(U0, U1, u0, u1);
    return depth_test_listed(s, u0, u1, at, t, id, lanes & 0xf) |
           depth_test_listed(s, u0 + 4, u1 + 4, at4, t, id, lanes >> 4) << 4;
}

/* The three edges over a rectangle, in int64 lanes 0-2 (edge k in lane k; lane 3 is not
 * looked at): their biased values at its first pixel centre (raster.h: exact in int64)
 * and their coordinate differences a[k], b[k] (a pixel across changes edge k by
 * a[k] 2^8, a row down by b[k] 2^8). Set up in vectors, without edge_row's scalar work
 * per edge: it runs once per triangle and tile, which for most of a dense mesh's
 * triangles is more work than their few pixels. */
typedef struct edge_lanes { __m256i first, a, b; } edge_lanes;

__attribute__((target("avx2"), always_inline))
static inline edge_lanes edge_lanes_at(const rs_setup *s, int x0, int y0)
{
    _Static_assert(offsetof(rs_setup, b) == offsetof(rs_setup, a) + 3 * sizeof(int32_t), "a, b adjacent");
    _Static_assert(offsetof(rs_setup, x0) == offsetof(rs_setup, b) + 3 * sizeof(int32_t), "b, x0 adjacent");
    _Static_assert(offsetof(rs_setup, area) == offsetof(rs_setup, c) + 3 * sizeof(int64_t), "c, area adjacent");
    _Static_assert(offsetof(rs_setup, order) == offsetof(rs_setup, bias) + 3, "bias, order adjacent");
    const __m256i a = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)s->a));   /* a0-a2, b0 */
    const __m256i b = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)s->b));   /* b0-b2, x0 */
    int32_t bias4;
    memcpy(&bias4, s->bias, sizeof bias4);                                              /* bias0-2, order0 */
    const __m256i bias = _mm256_cvtepi8_epi64(_mm_cvtsi32_si128(bias4));
    const __m256i c = _mm256_loadu_si256((const __m256i *)s->c);                        /* c0-c2, area */
    /* pixel centres are below 2^31, so the signed 32 x 32 -> 64 bit products are exact */
    const __m256i ax = _mm256_mul_epi32(a, _mm256_set1_epi64x(pixel_centre(x0)));
    const __m256i by = _mm256_mul_epi32(b, _mm256_set1_epi64x(pixel_centre(y0)));
    return (edge_lanes){_mm256_add_epi64(_mm256_add_epi64(ax, by), _mm256_add_epi64(c, bias)), a, b};
}

/* Whether every edge value (biased and unbiased) at the pixel centres of a rectangle
 * width x height from the one of e.first lies within int32: edges are linear, so their
 * least and greatest values over the rectangle are first + the negative (or positive)
 * parts of its steps across and down, a[k] 2^8 (width - 1) and b[k] 2^8 (height - 1)
 * (exact products of int32s). The three edges in the lanes of one vector, without
 * branches. Lanes past the rectangle may wrap; they are never covered, and the wrapped
 * sums of the lanes inside are still exact (two's complement addition is exact modulo
 * 2^32). */
__attribute__((target("avx2"), always_inline))
static inline bool edges_fit_int32(const edge_lanes *e, int width, int height)
{
    const int64_t limit = INT32_MAX - 1;
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    const __m256i across = _mm256_mul_epi32(e->a, _mm256_set1_epi64x(one * (width - 1)));
    const __m256i below = _mm256_mul_epi32(e->b, _mm256_set1_epi64x(one * (height - 1)));
    const __m256i zero = _mm256_setzero_si256();
    const __m256i across_neg = _mm256_cmpgt_epi64(zero, across), below_neg = _mm256_cmpgt_epi64(zero, below);
    const __m256i least = _mm256_add_epi64(e->first, _mm256_add_epi64(_mm256_and_si256(across, across_neg),
                                                                      _mm256_and_si256(below, below_neg)));
    const __m256i most = _mm256_add_epi64(e->first, _mm256_add_epi64(_mm256_andnot_si256(across_neg, across),
                                                                     _mm256_andnot_si256(below_neg, below)));
    const __m256i out = _mm256_or_si256(_mm256_cmpgt_epi64(_mm256_set1_epi64x(-limit), least),
                                        _mm256_cmpgt_epi64(most, _mm256_set1_epi64x(limit)));
    return (_mm256_movemask_pd(_mm256_castsi256_pd(out)) & 0x7) == 0;
}

/* Lane k's low 32 bits in all eight int32 lanes (k < 4): edge k's int32 value from an
 * edge_lanes vector, exact where the values fit (edges_fit_int32) and wrapped modulo
 * 2^32 otherwise, which the int32 walks allow for. */
__attribute__((target("avx2"), always_inline))
static inline __m256i edge_int32(__m256i v, int k)
{
    return _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(2 * k));
}

/* Appends index at + k for each lane k (0-3) in won, in increasing k, to t->won (when
 * kept), without a branch per lane: the four indices packed to the front are stored
 * whole and nwon counts only the won ones (rs_depth_target's slack on won). */
__attribute__((target("avx2"), always_inline))
static inline void append_won4(rs_depth_target *t, ptrdiff_t at, unsigned won)
{
    static const int32_t packed[16][4] = {
        {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0},
        {1, 2, 0, 0}, {0, 1, 2, 0}, {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
        {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};
    if (!t->won) return;
    const __m128i lanes = _mm_loadu_si128((const __m128i *)packed[won]);
    _mm_storeu_si128((__m128i *)(t->won + t->nwon), _mm_add_epi32(_mm_set1_epi32((int32_t)at), lanes));
    t->nwon += __builtin_popcount(won);
}

/* The lanes whose pixel cannot win against the held depths, from the plane in float
 * (unbiased int32 edge values U0, U1): a covered lane (barycentrics in [0, 1], vertex
 * depths in [-2, 2], so each term below 4 in magnitude) gets the plane depth within
 * 3e-6 (a dozen float roundings of terms below 8), and the exact float depth is within
 * 2^-24 of the plane's; so a lane whose rough depth, margin (1e-5) subtracted, exceeds
 * the held depth has an exact depth above it, which neither wins nor ties. A step whose
 * covered lanes all lie behind (back faces behind the front ones, triangles behind
 * others already drawn) skips the exact plane depths and the test. Lanes not covered
 * may hold anything; they are never looked at. */
__attribute__((target("avx2"), always_inline))
static inline int rough_behind(const depth_plane *pl, __m256i U0, __m256i U1, __m256 held)
{
    const __m256 t0 = _mm256_mul_ps(_mm256_set1_ps(pl->rough_dz0), _mm256_cvtepi32_ps(U0));
    const __m256 t1 = _mm256_mul_ps(_mm256_set1_ps(pl->rough_dz1), _mm256_cvtepi32_ps(U1));
    const __m256 rough = _mm256_add_ps(_mm256_set1_ps(pl->rough_z2), _mm256_add_ps(t0, t1));
    return _mm256_movemask_ps(_mm256_cmp_ps(rough, held, _CMP_GT_OQ));
}

/* One step of eight pixels whose edge values are E0, E1 (biased by bias0, bias1): depths
 * and the test of the lanes in `cover`, lanes 0-3 at index at and 4-7 at index at4 (at + 4
 * along a row, the next row's for a block of two rows of four; depth_test_lanes8 or
 * depth_test_block), the ones won appended to t->won in lane order. */
__attribute__((target("avx2"), always_inline))
static inline void depth_step8(const rs_setup *s, const depth_plane *pl, __m256i E0, __m256i E1,
                               __m256i bias0, __m256i bias1, int cover, ptrdiff_t at, ptrdiff_t at4,
                               bool block, rs_depth_target *t, uint32_t id)
{
    __m256i U0 = _mm256_sub_epi32(E0, bias0), U1 = _mm256_sub_epi32(E1, bias1);
    const __m256 held = block ? _mm256_set_m128(_mm_loadu_ps(&t->z[at4]), _mm_loadu_ps(&t->z[at]))
                              : _mm256_loadu_ps(&t->z[at]);
    if (!(cover & ~rough_behind(pl, U0, U1, held))) return;
    int inexact;
    __m256 depth = plane_depths8(pl, U0, U1, &inexact);
    int won = block ? depth_test_block(t->z, t->vis, at, at4, depth, id, cover & ~inexact)
                    : depth_test_lanes8(&t->z[at], &t->vis[at], depth, id, cover & ~inexact);
    if (cover & inexact) won |= depth_test_exact8(s, U0, U1, at, at4, t, id, cover & inexact);
    append_won4(t, at, (unsigned)won & 0xf);
    append_won4(t, at4, (unsigned)won >> 4);
}

/* The row walk of depth_rect_narrow for a rectangle five to eight pixels wide: one step
 * per row that the triangle covers, the test without branches on the data. A row it
 * does not cover costs its sign test alone. */
__attribute__((target("avx2")))
static int depth_rows8(const rs_setup *s, const depth_plane *pl, const edge_lanes *el, int x0, int y0,
                       int x1, int y1, rs_depth_target *t, uint32_t id)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i e[3], below[3];
#pragma GCC unroll 3
    for (int k = 0; k < 3; k++) {
        const __m256i a = edge_int32(el->a, k), b = edge_int32(el->b, k);
        const __m256i offset = _mm256_slli_epi32(_mm256_mullo_epi32(lane, a), RS_SUBPIXEL_BITS);
        e[k] = _mm256_add_epi32(edge_int32(el->first, k), offset);
        below[k] = _mm256_slli_epi32(b, RS_SUBPIXEL_BITS);
    }
    const __m256i bias0 = _mm256_set1_epi32(s->bias[0]), bias1 = _mm256_set1_epi32(s->bias[1]);
    const int valid = (1 << (x1 - x0)) - 1;
    ptrdiff_t at = (ptrdiff_t)(y0 - t->oy) * t->stride - t->ox + x0;
    int n = 0;
    for (int y = y0; y < y1; y++, at += t->stride) {
        __m256i signs = _mm256_or_si256(_mm256_or_si256(e[0], e[1]), e[2]);
        int cover = ~_mm256_movemask_ps(_mm256_castsi256_ps(signs)) & valid;
        if (cover) {
            n += __builtin_popcount((unsigned)cover);
            depth_step8(s, pl, e[0], e[1], bias0, bias1, cover, at, at + 4, false, t, id);
        }
#pragma GCC unroll 3
        for (int k = 0; k < 3; k++) e[k] = _mm256_add_epi32(e[k], below[k]);
    }
    return n;
}

/* The walk of depth_rect_narrow for a rectangle at most four pixels wide (most of
 * bunny's and fairy's triangles: a few pixels on rows of one to three): blocks of two
 * rows of four pixels, one step each, so a block the triangle does not touch costs its
 * sign test alone, and a covered one a single depth step for both rows. Lanes past the
 * rectangle (columns past x1, a row past y1) are never in cover; their int32 values may
 * wrap, which changes nothing inside. Pixels are tested, counted and won in row-major
 * order, as row by row. When the last block has one row, its lanes 4-7 (not in cover)
 * point at the same pixels as lanes 0-3, which depth_test_block stores last. */
__attribute__((target("avx2")))
static int depth_blocks4(const rs_setup *s, const depth_plane *pl, const edge_lanes *el, int x0, int y0,
                         int x1, int y1, rs_depth_target *t, uint32_t id)
{
    const __m256i col = _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3);
    const __m256i row = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    __m256i e[3], two_rows[3];
#pragma GCC unroll 3
    for (int k = 0; k < 3; k++) {
        const __m256i a = edge_int32(el->a, k), b = edge_int32(el->b, k);
        const __m256i offset = _mm256_add_epi32(_mm256_mullo_epi32(col, a), _mm256_mullo_epi32(row, b));
        e[k] = _mm256_add_epi32(edge_int32(el->first, k), _mm256_slli_epi32(offset, RS_SUBPIXEL_BITS));
        two_rows[k] = _mm256_slli_epi32(b, RS_SUBPIXEL_BITS + 1);
    }
    const __m256i bias0 = _mm256_set1_epi32(s->bias[0]), bias1 = _mm256_set1_epi32(s->bias[1]);
    const int one_row = (1 << (x1 - x0)) - 1, two = one_row | one_row << 4;
    const ptrdiff_t stride = t->stride;
    ptrdiff_t at = (ptrdiff_t)(y0 - t->oy) * stride - t->ox + x0;
    int n = 0;
    for (int y = y0; y < y1; y += 2, at += 2 * stride) {
        __m256i signs = _mm256_or_si256(_mm256_or_si256(e[0], e[1]), e[2]);
        const bool pair = y + 1 < y1;
        int cover = ~_mm256_movemask_ps(_mm256_castsi256_ps(signs)) & (pair ? two : one_row);
        if (cover) {
            n += __builtin_popcount((unsigned)cover);
            depth_step8(s, pl, e[0], e[1], bias0, bias1, cover, at, pair ? at + stride : at, true, t, id);
        }
#pragma GCC unroll 3
        for (int k = 0; k < 3; k++) e[k] = _mm256_add_epi32(e[k], two_rows[k]);
    }
    return n;
}

/* The row walk of depth_rect_avx2 over int32 edge values, eight pixels per step. */
__attribute__((target("avx2")))
static int depth_rect_narrow(const rs_setup *s, const depth_plane *pl, const edge_lanes *el, int x0,
                             int y0, int x1, int y1, rs_depth_target *t, uint32_t id)
{
    if (x1 - x0 <= 4) return depth_blocks4(s, pl, el, x0, y0, x1, y1, t, id);
    if (x1 - x0 <= 8) return depth_rows8(s, pl, el, x0, y0, x1, y1, t, id);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i row[3], along[3], below[3];
#pragma GCC unroll 3
    for (int k = 0; k < 3; k++) {
        const __m256i a = edge_int32(el->a, k), b = edge_int32(el->b, k);
        const __m256i offset = _mm256_slli_epi32(_mm256_mullo_epi32(lane, a), RS_SUBPIXEL_BITS);
        row[k] = _mm256_add_epi32(edge_int32(el->first, k), offset);
        along[k] = _mm256_slli_epi32(a, RS_SUBPIXEL_BITS + 3);
        below[k] = _mm256_slli_epi32(b, RS_SUBPIXEL_BITS);
    }
    const __m256i bias0 = _mm256_set1_epi32(s->bias[0]), bias1 = _mm256_set1_epi32(s->bias[1]);
    int n = 0;
    for (int y = y0; y < y1; y++) {
        __m256i E0 = row[0], E1 = row[1], E2 = row[2];
        ptrdiff_t at = (ptrdiff_t)(y - t->oy) * t->stride - t->ox;
        bool in_span = false;
        for (int x = x0; x < x1; x += 8) {
            int left = x1 - x, valid = left >= 8 ? 0xff : (1 << left) - 1;
            __m256i signs = _mm256_or_si256(_mm256_or_si256(E0, E1), E2);
            int cover = ~_mm256_movemask_ps(_mm256_castsi256_ps(signs)) & valid;
            if (cover) {
                in_span = true;
                n += __builtin_popcount((unsigned)cover);
                depth_step8(s, pl, E0, E1, bias0, bias1, cover, at + x, at + x + 4, false, t, id);
                if (!(cover & 0x80)) break;  /* the span ended in these lanes */
            } else if (in_span) {
                break;
            }
            E0 = _mm256_add_epi32(E0, along[0]);
            E1 = _mm256_add_epi32(E1, along[1]);
            E2 = _mm256_add_epi32(E2, along[2]);
        }
        for (int k = 0; k < 3; k++) row[k] = _mm256_add_epi32(row[k], below[k]);
    }
    return n;
}

/* depth_rect_baseline four pixels at a time over int64 edge values, for triangles whose
 * values over the rectangle do not fit int32 (few: the largest). Its own function, so
 * that its vector constants do not weigh on the small triangles' path. */
__attribute__((target("avx2"), noinline))
static int depth_rect_wide(const rs_setup *s, const depth_plane *pl,
                           const int64_t first[3], const int64_t step[3], const int64_t down[3],
                           int x0, int y0, int x1, int y1, rs_depth_target *t, uint32_t id)
{
    const int64_t step0 = step[0], step1 = step[1], step2 = step[2];
    const __m256i lanes0 = _mm256_setr_epi64x(0, step0, 2 * step0, 3 * step0),
                  lanes1 = _mm256_setr_epi64x(0, step1, 2 * step1, 3 * step1),
                  lanes2 = _mm256_setr_epi64x(0, step2, 2 * step2, 3 * step2),
                  quad0 = _mm256_set1_epi64x(4 * step0), quad1 = _mm256_set1_epi64x(4 * step1),
                  quad2 = _mm256_set1_epi64x(4 * step2),
                  bias0 = _mm256_set1_epi64x(s->bias[0]), bias1 = _mm256_set1_epi64x(s->bias[1]);
    int n = 0;
    __m256i row0 = _mm256_add_epi64(_mm256_set1_epi64x(first[0]), lanes0),
            row1 = _mm256_add_epi64(_mm256_set1_epi64x(first[1]), lanes1),
            row2 = _mm256_add_epi64(_mm256_set1_epi64x(first[2]), lanes2);
    const __m256i down0 = _mm256_set1_epi64x(down[0]), down1 = _mm256_set1_epi64x(down[1]),
                  down2 = _mm256_set1_epi64x(down[2]);
    for (int y = y0; y < y1; y++, row0 = _mm256_add_epi64(row0, down0),
             row1 = _mm256_add_epi64(row1, down1), row2 = _mm256_add_epi64(row2, down2)) {
        __m256i E0 = row0, E1 = row1, E2 = row2;
        ptrdiff_t row = (ptrdiff_t)(y - t->oy) * t->stride - t->ox;
        bool in_span = false;
        for (int x = x0; x < x1; x += 4) {
            int left = x1 - x, valid = left >= 4 ? 0xf : (1 << left) - 1;
            __m256i signs = _mm256_or_si256(_mm256_or_si256(E0, E1), E2);
            int cover = ~_mm256_movemask_pd(_mm256_castsi256_pd(signs)) & valid;
            if (cover) {
                in_span = true;
                n += __builtin_popcount((unsigned)cover);
                __m256i U0 = _mm256_sub_epi64(E0, bias0), U1 = _mm256_sub_epi64(E1, bias1);
                int inexact;
                __m128 depth = plane_depths(pl, U0, U1, &inexact);
                int won = depth_test_lanes(&t->z[row + x], &t->vis[row + x], depth, id,
                                           cover & ~inexact);
                if (cover & inexact) won |= depth_test_exact(s, U0, U1, row + x, t, id, cover & inexact);
                append_won4(t, row + x, (unsigned)won);
                if (!(cover & 8)) break;  /* the span ended in these lanes */
            } else if (in_span) {
                break;
            }
            E0 = _mm256_add_epi64(E0, quad0);
            E1 = _mm256_add_epi64(E1, quad1);
            E2 = _mm256_add_epi64(E2, quad2);
        }
    }
    return n;
}
/* depth_rect_baseline with the AVX2 kernels: coverage signs, depths and the test run
 * across the lanes; won is appended in increasing x, so results, won order and the
 * count are the baseline's. Triangles outside the plane depths' bounds (huge edge
 * values, vertex depths beyond [-2, 2] or not numbers) take the baseline. */
__attribute__((target("avx2")))
static int depth_rect_avx2(const rs_setup *s, int x0, int y0, int x1, int y1,
                           rs_depth_target *t, uint32_t id)
{
    _Static_assert(offsetof(rs_setup, inv_w) == offsetof(rs_setup, z) + 3 * sizeof(float), "z, inv_w adjacent");
    const __m128 z = _mm_loadu_ps(s->z);                                   /* z0-z2, inv_w0 */
    const __m128 in_range = _mm_cmp_ps(_mm_andnot_ps(_mm_set1_ps(-0.0f), z), _mm_set1_ps(2.0f), _CMP_LE_OQ);
    if ((_mm_movemask_ps(in_range) & 0x7) != 0x7 || s->area >= EXACT_EDGE_LIMIT)
        return depth_rect_baseline(s, x0, y0, x1, y1, t, id);
    clamp_to_bounds(s, &x0, &y0, &x1, &y1);
    if (x1 <= x0 || y1 <= y0) return 0;
    const depth_plane pl = depth_plane_of(s);
    const edge_lanes el = edge_lanes_at(s, x0, y0);
    if (edges_fit_int32(&el, x1 - x0, y1 - y0)) return depth_rect_narrow(s, &pl, &el, x0, y0, x1, y1, t, id);
    int64_t first[4], step[4], down[4];
    _mm256_storeu_si256((__m256i *)first, el.first);
    _mm256_storeu_si256((__m256i *)step, _mm256_slli_epi64(el.a, RS_SUBPIXEL_BITS));
    _mm256_storeu_si256((__m256i *)down, _mm256_slli_epi64(el.b, RS_SUBPIXEL_BITS));
    return depth_rect_wide(s, &pl, first, step, down, x0, y0, x1, y1, t, id);
}
#endif

int rs_depth_rect(const rs_setup *s, int x0, int y0, int x1, int y1, rs_depth_target *t,
                  uint32_t id, bool avx2)
{
#if defined(__x86_64__)
    if (avx2) return depth_rect_avx2(s, x0, y0, x1, y1, t, id);
#endif
    (void)avx2;
    return depth_rect_baseline(s, x0, y0, x1, y1, t, id);
}

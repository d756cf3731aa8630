/* The watertight block test of tri_intersect.h on two rt_tri4 blocks at once (AVX2).
 *
 * Data flow: a leaf of the BVH (a run of rt_tri4 blocks, bvh.h) + the ray's rt_wtray ->
 * rt_tri8_intersect, which loads block b into the low half and block b+1 into the high
 * half of each __m256 -> an 8-bit hit mask with t (and u, v) per lane -> the AVX2 leaf
 * loops of bvh8_traverse.c.
 *
 * Why: most leaves hold 5 to 8 triangles (two blocks), and one 8-lane test costs about
 * what one 4-lane test does. Every lane performs exactly the operations of
 * rt_tri4_intersect in the same order (no FMA: the callers' target is "avx2" alone and
 * -std=c11 keeps contraction off), and lanes whose edge functions are exactly zero go
 * through the same scalar double-precision patch, so t, u and v are bit-identical to the
 * 4-wide and scalar tests. Keep the three in step. */
#ifndef RAYTRACER_TRI_INTERSECT8_H
#define RAYTRACER_TRI_INTERSECT8_H

#include <immintrin.h>

#include "raytracer/tri_intersect.h"

/* The ray's constants broadcast to 8 lanes. */
typedef struct rt_wtray8 {
    __m256 okx, oky, okz, sx, sy, sz;
    int kx, ky, kz;
} rt_wtray8;

RT_AVX2_INLINE void rt_wtray8_init(rt_wtray8 *w8, const rt_wtray *w)
{
    w8->okx = _mm256_set1_ps(w->org[w->kx]);
    w8->oky = _mm256_set1_ps(w->org[w->ky]);
    w8->okz = _mm256_set1_ps(w->org[w->kz]);
    w8->sx = _mm256_set1_ps(w->sx);
    w8->sy = _mm256_set1_ps(w->sy);
    w8->sz = _mm256_set1_ps(w->sz);
    w8->kx = w->kx;
    w8->ky = w->ky;
    w8->kz = w->kz;
}

/* The 4-lane constants from the 8-lane ones: their low halves (no instructions). */
RT_AVX2_INLINE void rt_wtray4_from8(rt_wtray4 *w4, const rt_wtray8 *w8)
{
    w4->okx = _mm256_castps256_ps128(w8->okx);
    w4->oky = _mm256_castps256_ps128(w8->oky);
    w4->okz = _mm256_castps256_ps128(w8->okz);
    w4->sx = _mm256_castps256_ps128(w8->sx);
    w4->sy = _mm256_castps256_ps128(w8->sy);
    w4->sz = _mm256_castps256_ps128(w8->sz);
    w4->kx = w8->kx;
    w4->ky = w8->ky;
    w4->kz = w8->kz;
}

/* Blocks lo and hi's vertex coordinate v[vertex][axis] as one 8-lane vector. */
RT_AVX2_INLINE __m256 rt_tri8_load(const rt_tri4 *lo, int vertex, int axis)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(lo->v[vertex][axis])),
                                _mm_load_ps(lo[1].v[vertex][axis]), 1);
}

/* Tests the ray against blocks tri[0] (lanes 0-3) and tri[1] (lanes 4-7). Returns an 8-bit
 * mask of the lanes hit in [tmin, tmax] and stores their distances in t[lane] and, unless
 * bu is NULL, their barycentrics in bu[lane], bv[lane]. */
RT_AVX2_INLINE int rt_tri8_intersect(const rt_wtray *w, const rt_wtray8 *w8, const rt_tri4 *tri,
                                     float tmin, float tmax, float t[8], float *bu, float *bv)
{
    const int kx = w8->kx, ky = w8->ky, kz = w8->kz;
    /* Vertices relative to the origin, then sheared so the ray is the +z axis. */
    const __m256 akz = _mm256_sub_ps(rt_tri8_load(tri, 0, kz), w8->okz);
    const __m256 bkz = _mm256_sub_ps(rt_tri8_load(tri, 1, kz), w8->okz);
    const __m256 ckz = _mm256_sub_ps(rt_tri8_load(tri, 2, kz), w8->okz);
    const __m256 ax = _mm256_sub_ps(_mm256_sub_ps(rt_tri8_load(tri, 0, kx), w8->okx),
                                    _mm256_mul_ps(w8->sx, akz));
    const __m256 ay = _mm256_sub_ps(_mm256_sub_ps(rt_tri8_load(tri, 0, ky), w8->oky),
                                    _mm256_mul_ps(w8->sy, akz));
    const __m256 bx = _mm256_sub_ps(_mm256_sub_ps(rt_tri8_load(tri, 1, kx), w8->okx),
                                    _mm256_mul_ps(w8->sx, bkz));
    const __m256 by = _mm256_sub_ps(_mm256_sub_ps(rt_tri8_load(tri, 1, ky), w8->oky),
                                    _mm256_mul_ps(w8->sy, bkz));
    const __m256 cx = _mm256_sub_ps(_mm256_sub_ps(rt_tri8_load(tri, 2, kx), w8->okx),
                                    _mm256_mul_ps(w8->sx, ckz));
    const __m256 cy = _mm256_sub_ps(_mm256_sub_ps(rt_tri8_load(tri, 2, ky), w8->oky),
                                    _mm256_mul_ps(w8->sy, ckz));
    /* Scaled barycentrics: 2D edge functions of the sheared triangle. */
    const __m256 u = _mm256_sub_ps(_mm256_mul_ps(cx, by), _mm256_mul_ps(cy, bx));
    const __m256 v = _mm256_sub_ps(_mm256_mul_ps(ax, cy), _mm256_mul_ps(ay, cx));
    const __m256 w_ = _mm256_sub_ps(_mm256_mul_ps(bx, ay), _mm256_mul_ps(by, ax));
    const __m256 zero = _mm256_setzero_ps();
    const __m256 neg = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_LT_OQ),
                                                 _mm256_cmp_ps(v, zero, _CMP_LT_OQ)),
                                    _mm256_cmp_ps(w_, zero, _CMP_LT_OQ));
    const __m256 pos = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_GT_OQ),
                                                 _mm256_cmp_ps(v, zero, _CMP_GT_OQ)),
                                    _mm256_cmp_ps(w_, zero, _CMP_GT_OQ));
    const __m256 det = _mm256_add_ps(_mm256_add_ps(u, v), w_);
    /* cmpneq of the 4-wide test is unordered-or-not-equal: NaN lanes count as nonzero
     * there too (they fail the other compares anyway). */
    const __m256 inside =
        _mm256_andnot_ps(_mm256_and_ps(neg, pos), _mm256_cmp_ps(det, zero, _CMP_NEQ_UQ));
    const int zmask = _mm256_movemask_ps(
        _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_EQ_OQ),
                                  _mm256_cmp_ps(v, zero, _CMP_EQ_OQ)),
                     _mm256_cmp_ps(w_, zero, _CMP_EQ_OQ)));
    int mask = _mm256_movemask_ps(inside);
    if (!(mask | zmask)) return 0;
    if (mask) {
        const __m256 tt =
            _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(u, _mm256_mul_ps(w8->sz, akz)),
                                        _mm256_mul_ps(v, _mm256_mul_ps(w8->sz, bkz))),
                          _mm256_mul_ps(w_, _mm256_mul_ps(w8->sz, ckz)));
        const __m256 td = _mm256_div_ps(tt, det);
        const __m256 inrange =
            _mm256_and_ps(_mm256_cmp_ps(td, _mm256_set1_ps(tmin), _CMP_GE_OQ),
                          _mm256_cmp_ps(td, _mm256_set1_ps(tmax), _CMP_LE_OQ));
        mask = _mm256_movemask_ps(_mm256_and_ps(inside, inrange));
        _mm256_storeu_ps(t, td);
        if (bu && mask) {
            _mm256_storeu_ps(bu, _mm256_div_ps(v, det));
            _mm256_storeu_ps(bv, _mm256_div_ps(w_, det));
        }
    }
    if (__builtin_expect(zmask != 0, 0)) {   /* the scalar patch, block by block */
        const int lo = rt_tri4_patch_lanes(w, tri, zmask & 15, mask & 15, tmin, tmax, t, bu, bv);
        const int hi = rt_tri4_patch_lanes(w, tri + 1, zmask >> 4, mask >> 4, tmin, tmax, t + 4,
                                           bu ? bu + 4 : NULL, bv ? bv + 4 : NULL);
        mask = lo | hi << 4;
    }
    return mask;
}

#endif

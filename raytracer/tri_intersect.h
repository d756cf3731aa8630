/* Watertight ray/triangle intersection (Woop, Benthin, Wald, "Watertight Ray/Triangle
 * Intersection", JCGT 2013), scalar and 4 triangles at a time (SSE).
 *
 * Data flow: a ray (ray.h) is turned once into an rt_wtray (its shear constants); leaves
 * of the BVH (bvh.h) hold triangles as rt_tri4 blocks in leaf order; bvh_traverse.c and
 * packet.c call rt_tri4_intersect on them, brute-force tests call rt_tri_intersect.
 *
 * Why watertight: the test shears and scales space so the ray runs along +z through the
 * origin, then evaluates 2D edge functions whose sign is exact for shared edges (with a
 * double-precision retry when one is exactly zero), so a ray through an edge or vertex of
 * a closed mesh always hits at least one of the triangles sharing it.
 *
 * Both functions perform the same float operations in the same order, so the SIMD test
 * returns bit-identical t to the scalar one; that is what lets the BVH's answers equal a
 * brute-force loop exactly. (The build uses -std=c11, which keeps GCC from contracting
 * a*b+c into FMAs, so the scalar code rounds exactly as the intrinsics do.) */
#ifndef RAYTRACER_TRI_INTERSECT_H
#define RAYTRACER_TRI_INTERSECT_H

#include <stdint.h>

#include "raytracer/simd.h"

/* Per-ray constants of the watertight test: the dominant axis kz, the two others kx, ky
 * (swapped when dir[kz] < 0 to keep the winding), and the shear/scale sz = 1/dir[kz],
 * sx = dir[kx]*sz, sy = dir[ky]*sz (one division instead of the paper's three; every
 * user, brute force included, shares this function, so results stay identical). */
typedef struct rt_wtray {
    int kx, ky, kz;
    float sx, sy, sz;
    float org[3];
} rt_wtray;

/* Four triangles in structure-of-arrays form: v[vertex][axis][lane]. Unused lanes hold
 * NaN vertices, which fail every comparison and so never hit. */
typedef struct rt_tri4 {
    float v[3][3][4];
    uint32_t prim[4];       /* primitive id per lane, RT_NO_HIT for unused lanes */
} __attribute__((aligned(32))) rt_tri4;

void rt_wtray_init(rt_wtray *w, const float org[3], const float dir[3]);

/* Scalar reference test. Returns 1 when the ray hits triangle (a, b, c) at a distance t in
 * [tmin, tmax]; then *t, *u, *v are set (hit point (1-u-v)*a + u*b + v*c). Rays parallel
 * to the triangle's plane and degenerate triangles never hit. Both faces count. */
int rt_tri_intersect(const rt_wtray *w, const float a[3], const float b[3], const float c[3],
                     float tmin, float tmax, float *t, float *u, float *v);

/* Scalar test of lane k of a block. */
int rt_tri4_lane_intersect(const rt_wtray *w, const rt_tri4 *tri, int k, float tmin,
                           float tmax, float *t, float *u, float *v);

/* The ray's constants broadcast for the 4-wide test. */
typedef struct rt_wtray4 {
    __m128 okx, oky, okz, sx, sy, sz;
    int kx, ky, kz;
} rt_wtray4;

RT_INLINE void rt_wtray4_init(rt_wtray4 *w4, const rt_wtray *w)
{
    w4->okx = _mm_set1_ps(w->org[w->kx]);
    w4->oky = _mm_set1_ps(w->org[w->ky]);
    w4->okz = _mm_set1_ps(w->org[w->kz]);
    w4->sx = _mm_set1_ps(w->sx);
    w4->sy = _mm_set1_ps(w->sy);
    w4->sz = _mm_set1_ps(w->sz);
    w4->kx = w->kx;
    w4->ky = w->ky;
    w4->kz = w->kz;
}

/* Patches the lanes in zmask (an edge function came out exactly 0.0f) with the scalar
 * test, which retries those edges in double precision. Rare: shared edges and vertices.
 * bu, bv may be NULL. */
int rt_tri4_patch_lanes(const rt_wtray *w, const rt_tri4 *tri, int zmask, int mask,
                        float tmin, float tmax, float t[4], float *bu, float *bv);

/* Tests the ray against the 4 triangles of a block. Returns a 4-bit mask of the lanes hit
 * in [tmin, tmax] and stores their distances in t[lane] and, unless bu is NULL (any-hit
 * callers), their barycentrics in bu[lane], bv[lane]. */
RT_INLINE int rt_tri4_intersect(const rt_wtray *w, const rt_wtray4 *w4, const rt_tri4 *tri,
                                float tmin, float tmax, float t[4], float *bu, float *bv)
{
    const int kx = w4->kx, ky = w4->ky, kz = w4->kz;
    /* Vertices relative to the origin, then sheared so the ray is the +z axis. */
    const __m128 akz = _mm_sub_ps(_mm_load_ps(tri->v[0][kz]), w4->okz);
    const __m128 bkz = _mm_sub_ps(_mm_load_ps(tri->v[1][kz]), w4->okz);
    const __m128 ckz = _mm_sub_ps(_mm_load_ps(tri->v[2][kz]), w4->okz);
    const __m128 ax = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(tri->v[0][kx]), w4->okx),
                                 _mm_mul_ps(w4->sx, akz));
    const __m128 ay = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(tri->v[0][ky]), w4->oky),
                                 _mm_mul_ps(w4->sy, akz));
    const __m128 bx = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(tri->v[1][kx]), w4->okx),
                                 _mm_mul_ps(w4->sx, bkz));
    const __m128 by = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(tri->v[1][ky]), w4->oky),
                                 _mm_mul_ps(w4->sy, bkz));
    const __m128 cx = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(tri->v[2][kx]), w4->okx),
                                 _mm_mul_ps(w4->sx, ckz));
    const __m128 cy = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(tri->v[2][ky]), w4->oky),
                                 _mm_mul_ps(w4->sy, ckz));
    /* Scaled barycentrics: 2D edge functions of the sheared triangle. */
    const __m128 u = _mm_sub_ps(_mm_mul_ps(cx, by), _mm_mul_ps(cy, bx));
    const __m128 v = _mm_sub_ps(_mm_mul_ps(ax, cy), _mm_mul_ps(ay, cx));
    const __m128 w_ = _mm_sub_ps(_mm_mul_ps(bx, ay), _mm_mul_ps(by, ax));
    const __m128 zero = _mm_setzero_ps();
    const __m128 neg = _mm_or_ps(_mm_or_ps(_mm_cmplt_ps(u, zero), _mm_cmplt_ps(v, zero)),
                                 _mm_cmplt_ps(w_, zero));
    const __m128 pos = _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(u, zero), _mm_cmpgt_ps(v, zero)),
                                 _mm_cmpgt_ps(w_, zero));
    const __m128 det = _mm_add_ps(_mm_add_ps(u, v), w_);
    const __m128 inside = _mm_andnot_ps(_mm_and_ps(neg, pos), _mm_cmpneq_ps(det, zero));
    const int zmask = _mm_movemask_ps(_mm_or_ps(
        _mm_or_ps(_mm_cmpeq_ps(u, zero), _mm_cmpeq_ps(v, zero)), _mm_cmpeq_ps(w_, zero)));
    int mask = _mm_movemask_ps(inside);
    /* Most blocks end here: no lane inside its triangle, so skip the distance and its
     * division (skipped lanes would fail anyway, so results are unchanged). */
    if (!(mask | zmask)) return 0;
    if (mask) {
        const __m128 tt = _mm_add_ps(_mm_add_ps(_mm_mul_ps(u, _mm_mul_ps(w4->sz, akz)),
                                                _mm_mul_ps(v, _mm_mul_ps(w4->sz, bkz))),
                                     _mm_mul_ps(w_, _mm_mul_ps(w4->sz, ckz)));
        const __m128 td = _mm_div_ps(tt, det);
        const __m128 inrange = _mm_and_ps(_mm_cmpge_ps(td, _mm_set1_ps(tmin)),
                                          _mm_cmple_ps(td, _mm_set1_ps(tmax)));
        mask = _mm_movemask_ps(_mm_and_ps(inside, inrange));
        _mm_storeu_ps(t, td);
        if (bu && mask) {   /* only for hits, so the two divisions are rare */
            _mm_storeu_ps(bu, _mm_div_ps(v, det));
            _mm_storeu_ps(bv, _mm_div_ps(w_, det));
        }
    }
    if (__builtin_expect(zmask != 0, 0))
        mask = rt_tri4_patch_lanes(w, tri, zmask, mask, tmin, tmax, t, bu, bv);
    return mask;
}

#endif

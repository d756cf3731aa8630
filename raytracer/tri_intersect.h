/* Watertight ray/triangle intersection (Woop, Benthin, Wald, "Watertight Ray/Triangle
 * Intersection", JCGT 2013), scalar, and 4 or 8 triangles at a time (SSE2 / AVX2).
 *
 * Data flow: a ray (ray.h) is turned once into an rt_wtray (its shear constants); leaves
 * of the BVH (bvh.h) hold triangles as rt_tri4 blocks in leaf order; the leaf tests
 * (leaf_tmp.h) call rt_tri_intersect4 / rt_tri_intersect8 on them, brute-force tests call
 * rt_tri_intersect.
 *
 * Why watertight: the test shears and scales space so the ray runs along +z through the
 * origin, then evaluates 2D edge functions whose sign is exact for shared edges (with a
 * double-precision retry when one is exactly zero), so a ray through an edge or vertex of
 * a closed mesh always hits at least one of the triangles sharing it.
 *
 * The scalar and SIMD tests perform the same float operations in the same order, so the
 * SIMD tests return bit-identical t to the scalar one; that is what lets the BVH's answers equal a
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

/* Patches the lanes in zmask (an edge function came out exactly 0.0f) with the scalar
 * test, which retries those edges in double precision. Rare: shared edges and vertices.
 * bu, bv may be NULL. */
int rt_tri4_patch_lanes(const rt_wtray *w, const rt_tri4 *tri, int zmask, int mask,
                        float tmin, float tmax, float t[4], float *bu, float *bv);

/* The block tests at both widths (tri_intersect_tmp.h): rt_wtray4 and
 * rt_tri_intersect4 (one block, SSE2), rt_wtray8 and rt_tri_intersect8 (two consecutive
 * blocks, AVX2: callers must run on AVX2, rt_bvh.isa). */
#define RT_W 4
#include "raytracer/tri_intersect_tmp.h"
#undef RT_W
#define RT_W 8
#include "raytracer/tri_intersect_tmp.h"
#undef RT_W

/* The 4-lane constants from the 8-lane ones: their low halves (no instructions), for a
 * leaf's last odd block in the AVX2 kernels. */
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

#endif

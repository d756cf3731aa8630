/* Leaf tests of the AVX2 kernels: a leaf's rt_tri4 blocks two at a time.
 *
 * Data flow: a leaf reference (bvh.h) + one ray's watertight constants (rt_wtray, and its
 * 4- and 8-lane broadcasts) -> rt_tri8_intersect on pairs of blocks, rt_tri4_intersect on
 * a last odd one (tri_intersect8.h, tri_intersect.h) -> the ray's best hit or an
 * occlusion flag. Shared by the single-ray AVX2 kernels (bvh8_traverse.c) and the AVX2
 * packet traversal (packet8.c), the AVX2 counterparts of rt_leaf_closest / rt_leaf_any
 * (bvh_traverse.h). Same results bit for bit: every lane does the 4-wide test's
 * operations in the same order. Callers must run on AVX2 (rt_bvh.isa, isa.h). */
#ifndef RAYTRACER_BVH8_LEAF_H
#define RAYTRACER_BVH8_LEAF_H

#include "raytracer/bvh_traverse.h"
#include "raytracer/tri_intersect8.h"

/* rt_leaf_closest with blocks tested two at a time. Testing a pair against the same tmax
 * instead of the first block's improved one changes nothing: the tie rule keeps the
 * smallest (t, primitive) either way. Returns 1 when best improved. */
RT_AVX2_INLINE int rt_leaf_closest8(const rt_bvh *bvh, uint32_t ref, const rt_wtray *w,
                                    const rt_wtray4 *w4, const rt_wtray8 *w8, float tmin,
                                    rt_hit *best)
{
    const rt_tri4 *blk = bvh->tris + rt_leaf_first(ref);
    uint32_t nb = rt_leaf_blocks(ref);
    int improved = 0;
    for (; nb >= 2; nb -= 2, blk += 2) {
        float t[8], u[8], v[8];
        int m = rt_tri8_intersect(w, w8, blk, tmin, best->t, t, u, v);
        for (; m; m &= m - 1) {
            const int k = __builtin_ctz(m);
            improved |= rt_hit_keep_closer(best, t[k], u[k], v[k], blk[k >> 2].prim[k & 3]);
        }
    }
    if (nb) improved |= rt_block_closest(blk, w, w4, tmin, best);
    return improved;
}

/* rt_leaf_any with blocks tested two at a time. */
RT_AVX2_INLINE int rt_leaf_any8(const rt_bvh *bvh, uint32_t ref, const rt_wtray *w,
                                const rt_wtray4 *w4, const rt_wtray8 *w8, float tmin,
                                float tmax)
{
    const rt_tri4 *blk = bvh->tris + rt_leaf_first(ref);
    uint32_t nb = rt_leaf_blocks(ref);
    float t[8];
    for (; nb >= 2; nb -= 2, blk += 2)
        if (rt_tri8_intersect(w, w8, blk, tmin, tmax, t, NULL, NULL)) return 1;
    for (; nb; nb--, blk++)
        if (rt_tri4_intersect(w, w4, blk, tmin, tmax, t, NULL, NULL)) return 1;
    return 0;
}

#endif

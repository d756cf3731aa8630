/* Leaf tests of the traversal kernels: one ray against a leaf's run of rt_tri4 blocks,
 * closest hit or any hit, at width 4 (SSE2: rt_leaf_closest4, rt_leaf_any4) and 8 (AVX2:
 * rt_leaf_closest8, rt_leaf_any8, blocks two at a time).
 *
 * Data flow: a leaf reference (bvh.h) + one ray's watertight constants (rt_wtray and its
 * broadcast, tri_intersect.h) -> the block tests of tri_intersect_tmp.h -> the ray's best
 * hit or an occlusion flag. Used by the single-ray kernels (bvh_traverse_tmp.h) and the
 * packet kernels (packet_tmp.h) for each ray that enters a leaf's box. Both widths give
 * the same results bit for bit: same lane arithmetic, same tie rule. */
#ifndef RAYTRACER_LEAF_H
#define RAYTRACER_LEAF_H

#include "raytracer/bvh.h"
#include "raytracer/ray.h"

/* Replaces *best by the hit (t, u, v, prim) when it is closer; ties in t go to the
 * smaller primitive id, so the answer does not depend on the order hits are found in.
 * Returns 1 when best changed. */
RT_INLINE int rt_hit_keep_closer(rt_hit *best, float t, float u, float v, uint32_t prim)
{
    if (!(t < best->t || (t == best->t && prim < best->prim))) return 0;
    *best = (rt_hit){t, u, v, prim};
    return 1;
}

#define RT_W 4
#include "raytracer/leaf_tmp.h"
#undef RT_W
#define RT_W 8
#include "raytracer/leaf_tmp.h"
#undef RT_W

#endif

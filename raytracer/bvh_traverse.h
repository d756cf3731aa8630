/* Single-ray BVH4 traversal: closest hit and any hit (shadow rays).
 *
 * Data flow: rt_ray (ray.h) + rt_bvh (bvh.h) -> ordered depth-first traversal with SSE
 * 4-box tests -> watertight tests on the leaves' rt_tri4 blocks -> rt_hit / occluded flag.
 * This is the path for incoherent rays (reflections, random secondary rays); packet.c
 * uses it too, for packets whose rays diverge, and shares its leaf tests.
 *
 * Kernels only: no threads, no allocation; the BVH is read-only, so any number of threads
 * may trace against one BVH at once. */
#ifndef RAYTRACER_BVH_TRAVERSE_H
#define RAYTRACER_BVH_TRAVERSE_H

#include "raytracer/bvh.h"
#include "raytracer/ray.h"

/* Closest hit in [ray->tmin, ray->tmax]; ties in t go to the smaller primitive id.
 * Returns 1 and fills *hit on a hit; on a miss returns 0 and sets hit->prim = RT_NO_HIT,
 * hit->t = ray->tmax. Runs the kernels of bvh->isa (SSE over the 4-wide nodes, or AVX2
 * over the 8-wide ones, bvh8_traverse.c); both give the same bits. */
int rt_intersect1(const rt_bvh *bvh, const rt_ray *ray, rt_hit *hit);

/* 1 when any triangle is hit in [ray->tmin, ray->tmax]. */
int rt_occluded1(const rt_bvh *bvh, const rt_ray *ray);

/* The AVX2 kernels over rt_bvh.nodes8 (bvh8_traverse.c), for the dispatch in
 * rt_intersect1 / rt_occluded1: callers must have checked bvh->isa == RT_ISA_AVX2. */
int rt_intersect1_avx2(const rt_bvh *bvh, const rt_ray *ray, rt_hit *hit);
int rt_occluded1_avx2(const rt_bvh *bvh, const rt_ray *ray);

/* Below: building blocks shared with packet.c and bvh8_traverse.c. */

/* A zero direction component would give 0 * inf = NaN on a slab through the origin;
 * 1e-18 keeps the products finite, and the box margin (bvh.h) keeps the test exact. */
RT_INLINE float rt_safe_inverse(float d)
{
    return 1.0f / (__builtin_fabsf(d) < 1e-18f ? __builtin_copysignf(1e-18f, d) : d);
}

/* Single-ray stack entry: a box's reference and its entry distance when pushed, so popped
 * boxes beyond the current hit are skipped without touching memory. */
typedef struct rt_stack_entry {
    uint32_t ref;
    float dist;
} rt_stack_entry;

/* Replaces *best by the hit (t, u, v, prim) when it is closer; ties in t go to the
 * smaller primitive id, so the answer does not depend on the order hits are found in.
 * Returns 1 when best changed. */
RT_INLINE int rt_hit_keep_closer(rt_hit *best, float t, float u, float v, uint32_t prim)
{
    if (!(t < best->t || (t == best->t && prim < best->prim))) return 0;
    *best = (rt_hit){t, u, v, prim};
    return 1;
}

/* Tests one rt_tri4 block against the best hit so far; returns 1 when best improved. */
RT_INLINE int rt_block_closest(const rt_tri4 *blk, const rt_wtray *w, const rt_wtray4 *w4,
                               float tmin, rt_hit *best)
{
    float t[4], u[4], v[4];
    int improved = 0;
    for (int m = rt_tri4_intersect(w, w4, blk, tmin, best->t, t, u, v); m; m &= m - 1) {
        const int k = __builtin_ctz(m);
        improved |= rt_hit_keep_closer(best, t[k], u[k], v[k], blk->prim[k]);
    }
    return improved;
}

/* Tests one leaf against the best hit so far (best->t is the current tmax); returns 1
 * when best improved. */
RT_INLINE int rt_leaf_closest(const rt_bvh *bvh, uint32_t ref, const rt_wtray *w,
                              const rt_wtray4 *w4, float tmin, rt_hit *best)
{
    const rt_tri4 *blk = bvh->tris + rt_leaf_first(ref);
    const uint32_t nb = rt_leaf_blocks(ref);
    int improved = 0;
    for (uint32_t b = 0; b < nb; b++, blk++) improved |= rt_block_closest(blk, w, w4, tmin, best);
    return improved;
}

RT_INLINE int rt_leaf_any(const rt_bvh *bvh, uint32_t ref, const rt_wtray *w,
                          const rt_wtray4 *w4, float tmin, float tmax)
{
    const rt_tri4 *blk = bvh->tris + rt_leaf_first(ref);
    const uint32_t nb = rt_leaf_blocks(ref);
    for (uint32_t b = 0; b < nb; b++, blk++) {
        float t[4];
        if (rt_tri4_intersect(w, w4, blk, tmin, tmax, t, NULL, NULL)) return 1;
    }
    return 0;
}

/* Traversal stack depth: the build bounds the binary depth by 48 + log2(n), and an
 * ordered 4-wide traversal pushes at most 3 entries per level. An 8-wide level spans at
 * least one binary level and pushes at most 7 entries: 7 x 81 < 576. */
#define RT_STACK_SIZE 256
#define RT_STACK8_SIZE 576

#endif

/* Single-ray BVH4 traversal: closest hit and any hit (shadow rays).
 *
 * Data flow: rt_ray (ray.h) + rt_bvh (bvh.h) -> ordered depth-first traversal with SSE
 * 4-box tests -> watertight tests on the leaves' rt_tri4 blocks -> rt_hit / occluded flag.
 * This is the path for incoherent rays (reflections, random secondary rays); packet.c
 * uses it too, for packets whose rays diverge.
 *
 * Kernels only: no threads, no allocation; the BVH is read-only, so any number of threads
 * may trace against one BVH at once. */
#ifndef RAYTRACER_BVH_TRAVERSE_H
#define RAYTRACER_BVH_TRAVERSE_H

#include "raytracer/bvh.h"
#include "raytracer/ray.h"

/* Closest hit in [ray->tmin, ray->tmax]; ties in t go to the smaller primitive id.
 * Returns 1 and fills *hit on a hit; on a miss returns 0 and sets hit->prim = RT_NO_HIT,
 * hit->t = ray->tmax. */
int rt_intersect1(const rt_bvh *bvh, const rt_ray *ray, rt_hit *hit);

/* 1 when any triangle is hit in [ray->tmin, ray->tmax]. */
int rt_occluded1(const rt_bvh *bvh, const rt_ray *ray);

/* Below: building blocks shared with packet.c. */

/* A zero direction component would give 0 * inf = NaN on a slab through the origin;
 * 1e-18 keeps the products finite, and the box margin (bvh.h) keeps the test exact. */
static inline float rt_safe_inverse(float d)
{
    return 1.0f / (__builtin_fabsf(d) < 1e-18f ? __builtin_copysignf(1e-18f, d) : d);
}

/* Best hit so far: the block and lane let u, v be computed once, at the end. */
typedef struct rt_closest {
    float t;
    uint32_t prim;
    const rt_tri4 *blk;
    int lane;
} rt_closest;

/* Tests one leaf; returns 1 when best improved. Ties in t go to the smaller id. */
static inline int rt_leaf_closest(const rt_bvh *bvh, uint32_t ref, const rt_wtray *w,
                               const rt_wtray4 *w4, float tmin, rt_closest *best)
{
    const rt_tri4 *blk = bvh->tris + rt_leaf_first(ref);
    const uint32_t nb = rt_leaf_blocks(ref);
    int improved = 0;
    for (uint32_t b = 0; b < nb; b++, blk++) {
        float t[4];
        int m = rt_tri4_intersect(w, w4, blk, tmin, best->t, t);
        for (; m; m &= m - 1) {
            const int k = __builtin_ctz(m);
            if (t[k] < best->t || (t[k] == best->t && blk->prim[k] < best->prim)) {
                *best = (rt_closest){t[k], blk->prim[k], blk, k};
                improved = 1;
            }
        }
    }
    return improved;
}

static inline int rt_leaf_any(const rt_bvh *bvh, uint32_t ref, const rt_wtray *w,
                           const rt_wtray4 *w4, float tmin, float tmax)
{
    const rt_tri4 *blk = bvh->tris + rt_leaf_first(ref);
    const uint32_t nb = rt_leaf_blocks(ref);
    for (uint32_t b = 0; b < nb; b++, blk++) {
        float t[4];
        if (rt_tri4_intersect(w, w4, blk, tmin, tmax, t)) return 1;
    }
    return 0;
}

/* Continues a closest-hit search for one ray in the subtree under ref; best->t acts as
 * the ray's current tmax and is only ever lowered. */
void rt_closest_from(const rt_bvh *bvh, uint32_t ref, const rt_ray *ray, rt_closest *best);

/* Any-hit search in the subtree under ref. */
int rt_occluded_from(const rt_bvh *bvh, uint32_t ref, const rt_ray *ray);

/* Turns a finished search into an rt_hit (computes u, v with the scalar test). */
void rt_closest_finish(const rt_ray *ray, const rt_closest *best, rt_hit *hit);

/* Traversal stack depth: the build bounds the binary depth by 48 + log2(n), and an
 * ordered 4-wide traversal pushes at most 3 entries per level. */
#define RT_STACK_SIZE 256

#endif

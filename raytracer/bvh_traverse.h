/* Single-ray BVH traversal: closest hit and any hit (shadow rays).
 *
 * Data flow: rt_ray (ray.h) + rt_bvh (bvh.h) -> ordered depth-first traversal with one
 * SIMD test of a node's 4 (SSE2) or 8 (AVX2) boxes -> watertight tests on the leaves'
 * rt_tri4 blocks (leaf.h) -> rt_hit / occluded flag. This is the path for incoherent rays
 * (reflections, random secondary rays); packet.c uses it too, for packets whose rays
 * diverge.
 *
 * Kernels only: no threads, no allocation; the BVH is read-only, so any number of threads
 * may trace against one BVH at once. */
#ifndef RAYTRACER_BVH_TRAVERSE_H
#define RAYTRACER_BVH_TRAVERSE_H

#include "raytracer/bvh.h"
#include "raytracer/leaf.h"
#include "raytracer/ray.h"
#include "raytracer/trace.h"

/* rt_intersect1 and rt_occluded1 (trace.h) run bvh_traverse_tmp.h at the BVH's node
 * width: 4 (SSE) or 8 (AVX2). */

/* Rays traced together as one stream at most (a 64-bit mask per stack entry). */
#define RT_STREAM_MAX 64

/* rt_intersect1 and rt_occluded1 for n rays, traced RT_STREAM_MAX at a time as a
 * stream (bvh_traverse_tmp.h): each node is fetched once for all the rays that reach it
 * and tested ray by ray. For incoherent rays, which share too few nodes for a packet's
 * shared tests to pay. Same results bit for bit. */
void rt_intersect_stream(const rt_bvh *bvh, const rt_ray *rays, int n, rt_hit *hits);
void rt_occluded_stream(const rt_bvh *bvh, const rt_ray *rays, int n, uint8_t *occluded);

/* Below: building blocks shared with the packet kernels (packet_tmp.h). */

/* A zero direction component would give 0 * inf = NaN on a slab through the origin;
 * 1e-18 keeps the products finite, and the box margin (bvh.h) keeps the test exact. */
RT_INLINE float rt_safe_inverse(float d)
{
    return 1.0f / (__builtin_fabsf(d) < 1e-18f ? __builtin_copysignf(1e-18f, d) : d);
}

/* A ray's slab-test constants: 1/dir (rt_safe_inverse), org/dir (so a plane distance is
 * one mul and one sub) and the near plane per axis (RT_LO_* or RT_HI_*, from the sign of
 * 1/dir). The single-ray and stream traversals broadcast these (bvh_traverse_tmp.h). */
typedef struct rt_slab_ray {
    float inv[3], oinv[3];
    int near[3];
} rt_slab_ray;

RT_INLINE rt_slab_ray rt_slab_ray_of(const rt_ray *ray)
{
    rt_slab_ray s;
    for (int a = 0; a < 3; a++) {
        s.inv[a] = rt_safe_inverse(ray->dir[a]);
        s.oinv[a] = ray->org[a] * s.inv[a];
        s.near[a] = 2 * a + (s.inv[a] >= 0.0f ? 0 : 1);   /* RT_LO_X + 2a or RT_HI_X + 2a */
    }
    return s;
}

/* Single-ray stack entry: a box's reference and its entry distance when pushed, so popped
 * boxes beyond the current hit are skipped without touching memory. */
typedef struct rt_stack_entry {
    uint32_t ref;
    float dist;
} rt_stack_entry;

/* Traversal stack depth: the build bounds the binary depth by 48 + log2(n), and an
 * ordered 4-wide traversal pushes at most 3 entries per level. An 8-wide level spans at
 * least one binary level and pushes at most 7 entries: 7 x 81 < 576. */
#define RT_STACK4 256
#define RT_STACK8 576

#endif

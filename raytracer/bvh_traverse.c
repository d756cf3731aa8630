/* Single-ray BVH traversal, closest hit and any hit (see bvh_traverse.h): the template
 * bvh_traverse_tmp.h at width 4 (SSE2 over rt_bvh.nodes) and 8 (AVX2 over rt_bvh.nodes8,
 * compiled for AVX2 with function attributes, not -mavx2 for the file: the library must
 * run on any x86-64), and the dispatch on rt_bvh.isa, one predictable branch per ray.
 *
 * Why 8-wide on AVX2: incoherent rays spend their time stepping down the tree, and
 * recompiling the 4-wide kernels for AVX2 changed nothing; an 8-wide node test costs about
 * what a 4-wide one does and the tree has a third fewer levels, so a ray visits 25-35%
 * fewer nodes, as with Embree's BVH8 on AVX2 machines. */
#include "raytracer/bvh_traverse.h"

#include <string.h>

#define RT_W 4
#include "raytracer/bvh_traverse_tmp.h"
#undef RT_W
#define RT_W 8
#include "raytracer/bvh_traverse_tmp.h"
#undef RT_W

int rt_intersect1(const rt_bvh *bvh, const rt_ray *ray, rt_hit *hit)
{
    *hit = (rt_hit){ray->tmax, 0.0f, 0.0f, RT_NO_HIT};
    if (!rt_ray_traceable(ray)) return 0;
    if (bvh->isa == RT_ISA_AVX2) {
        if (bvh->root8 != RT_EMPTY_REF) closest8(bvh, ray, hit);
    } else if (bvh->root != RT_EMPTY_REF) {
        closest4(bvh, ray, hit);
    }
    return hit->prim != RT_NO_HIT;
}

int rt_occluded1(const rt_bvh *bvh, const rt_ray *ray)
{
    if (!rt_ray_traceable(ray)) return 0;
    if (bvh->isa == RT_ISA_AVX2) return bvh->root8 != RT_EMPTY_REF && occluded8(bvh, ray);
    return bvh->root != RT_EMPTY_REF && occluded4(bvh, ray);
}

/* The rays of rays[0..n) that are traceable, one bit each. */
static uint64_t traceable_rays(const rt_ray *rays, int n)
{
    uint64_t m = 0;
    for (int i = 0; i < n; i++) m |= (uint64_t)rt_ray_traceable(&rays[i]) << i;
    return m;
}

/* One stream of n <= RT_STREAM_MAX rays; hits or occluded hold their misses. */
static void trace_stream(const rt_bvh *bvh, const rt_ray *rays, int n, rt_hit *hits,
                         uint8_t *occluded)
{
    const uint64_t live = traceable_rays(rays, n);
    if (!live) return;
    if (bvh->isa == RT_ISA_AVX2) {
        if (bvh->root8 == RT_EMPTY_REF) return;
        if (hits) closest_stream8(bvh, rays, n, live, hits);
        else occluded_stream8(bvh, rays, n, live, occluded);
    } else if (bvh->root != RT_EMPTY_REF) {
        if (hits) closest_stream4(bvh, rays, n, live, hits);
        else occluded_stream4(bvh, rays, n, live, occluded);
    }
}

void rt_intersect_stream(const rt_bvh *bvh, const rt_ray *rays, int n, rt_hit *hits)
{
    for (int i = 0; i < n; i++) hits[i] = (rt_hit){rays[i].tmax, 0.0f, 0.0f, RT_NO_HIT};
    for (int i = 0; i < n; i += RT_STREAM_MAX)
        trace_stream(bvh, rays + i, n - i < RT_STREAM_MAX ? n - i : RT_STREAM_MAX, hits + i, NULL);
}

void rt_occluded_stream(const rt_bvh *bvh, const rt_ray *rays, int n, uint8_t *occluded)
{
    if (n > 0) memset(occluded, 0, (size_t)n);
    for (int i = 0; i < n; i += RT_STREAM_MAX)
        trace_stream(bvh, rays + i, n - i < RT_STREAM_MAX ? n - i : RT_STREAM_MAX, NULL, occluded + i);
}

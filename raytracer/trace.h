/* trace.h — tracing rays against a scene's BVH, for code outside the ray tracer (plugin
 * stages, embedding programs): the BVH is an opaque pointer here (a stage's
 * pl_frame_use(i, "bvh", err), or pl_scene_data_bvh); its layout, the build and the
 * SIMD kernels stay inside the ray tracer (bvh.h, bvh_traverse.h, packet.h).
 *
 * Kernels only: no threads, no allocation; the BVH is read-only, so any number of
 * threads may trace against one BVH at once. */
#ifndef RAYTRACER_TRACE_H
#define RAYTRACER_TRACE_H

#include "gramps/api.h"
#include "raytracer/ray.h"

typedef struct rt_bvh rt_bvh;

/* The most rays one packet (a GRAMPS packet's worth, e.g. an 8x8 pixel tile) holds. */
#define RT_PACKET_MAX 64

/* Closest hit in [ray->tmin, ray->tmax]; ties in t go to the smaller primitive id.
 * Returns 1 and fills *hit on a hit; on a miss returns 0 and sets hit->prim = RT_NO_HIT,
 * hit->t = ray->tmax. Runs the kernels of the BVH's ISA (SSE over 4-wide nodes, or AVX2
 * over 8-wide ones); both give the same bits. */
GR_API int rt_intersect1(const rt_bvh *bvh, const rt_ray *ray, rt_hit *hit);

/* 1 when any triangle is hit in [ray->tmin, ray->tmax]. */
GR_API int rt_occluded1(const rt_bvh *bvh, const rt_ray *ray);

#endif

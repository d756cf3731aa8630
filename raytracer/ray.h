/* Rays and hits: the records that flow between the ray-generation, traversal and shading
 * stages of the ray-tracing graph.
 *
 * Data flow: camera / shading kernels fill rt_ray -> bvh_traverse.c (single rays) or
 * packet.c (packets of up to RT_PACKET_MAX rays) -> rt_hit -> shading kernels.
 *
 * A ray covers the points org + t*dir for t in [tmin, tmax] (both ends included); dir
 * need not be unit length and t is measured in units of dir. A hit names the closest
 * triangle in that range; equal distances go to the smaller primitive id, so every
 * traversal (single, packet, SIMD width) and a brute-force loop give the same answer. */
#ifndef RAYTRACER_RAY_H
#define RAYTRACER_RAY_H

#include <math.h>
#include <stdint.h>

/* Primitive id of "no hit". */
#define RT_NO_HIT UINT32_MAX

typedef struct rt_ray {
    float org[3];
    float tmin;
    float dir[3];
    float tmax;
} rt_ray;

/* Closest hit. The hit point is (1-u-v)*v0 + u*v1 + v*v2 for the triangle's vertices
 * v0, v1, v2 in index order, and equals org + t*dir up to rounding. */
typedef struct rt_hit {
    float t;
    float u, v;
    uint32_t prim;   /* triangle index in the input, RT_NO_HIT on a miss */
} rt_hit;

/* A ray cone (Akenine-Moller et al., "Texture Level of Detail Strategies for Real-Time
 * Ray Tracing", Ray Tracing Gems ch. 20): the footprint a ray stands for, `width` (world
 * units) at its origin, growing by `spread` per unit of the ray's parameter t (the
 * spread angle times |dir|: dir need not be unit length). A camera ray starts at width 0
 * with spread 2 tan(fovy / 2) / height per unit of t; since its dir has unit component
 * along the view axis, t is the depth and the width at a hit is one pixel's side at
 * that depth, the footprint the raster graphs' derivatives measure (the paper's one
 * angle for every pixel is wider off the axis by |dir|). Rays that continue it
 * (reflections, rays through blended surfaces) start with the width at the hit and the
 * same angle. The traversal kernels ignore it: it only picks the texture level of
 * detail when a hit is shaded. */
typedef struct rt_cone {
    float width, spread;
} rt_cone;

/* The cone's width at parameter t of its ray. */
static inline float rt_cone_width_at(rt_cone c, float t)
{
    return c.width + c.spread * t;
}

/* The cone a ray of direction `dir` from r's hit at t carries on: the width there and
 * the same angle, as a spread per unit of the new ray's t (no square root when dir is
 * r's own, as for a ray that goes on through a surface). */
static inline rt_cone rt_cone_at_hit(rt_cone c, const rt_ray *r, float t, const float dir[3])
{
    float w = rt_cone_width_at(c, t);
    if (dir[0] == r->dir[0] && dir[1] == r->dir[1] && dir[2] == r->dir[2]) return (rt_cone){w, c.spread};
    float lr = r->dir[0] * r->dir[0] + r->dir[1] * r->dir[1] + r->dir[2] * r->dir[2];
    float ln = dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2];
    return (rt_cone){w, c.spread * sqrtf(ln / lr)};
}

/* Whether the kernels may trace the ray. A ray with a NaN or infinite origin or
 * direction component, a zero direction, a NaN tmin or tmax, or tmin > tmax covers no
 * point and misses: the kernels test this once on entry, because the traversal's slab
 * and watertight arithmetic assumes finite values (a NaN distance defeats the stack's
 * pruning and ordering and ran past its end). tmax = +inf is the usual unbounded ray. */
static inline int rt_ray_traceable(const rt_ray *r)
{
    return isfinite(r->org[0]) && isfinite(r->org[1]) && isfinite(r->org[2]) &&
           isfinite(r->dir[0]) && isfinite(r->dir[1]) && isfinite(r->dir[2]) &&
           (r->dir[0] != 0.0f || r->dir[1] != 0.0f || r->dir[2] != 0.0f) &&
           r->tmin <= r->tmax;
}

#endif

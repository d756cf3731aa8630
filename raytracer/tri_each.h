/* tri_each.h — the watertight test (tri_intersect.h) for a packet of rays from one
 * origin, each against a triangle of its own: the hybrid's primary hits, where the
 * raster pass already found the triangle a pixel sees.
 *
 * Bit-identical to rt_wtray_init + rt_tri_intersect per ray (so to the BVH's answer for
 * that triangle): the lanes run the same float operations in the same order, written as
 * loops across the packet so they vectorize; a lane whose float edge test meets an exact
 * zero is redone by the scalar test, as the BVH's block tests do. */
#ifndef RAYTRACER_TRI_EACH_H
#define RAYTRACER_TRI_EACH_H

#include "raytracer/isa.h"

#include <stdint.h>

#define RT_EACH_MAX 64                    /* rays per call */

typedef struct rt_each_rays {
    int n;                                /* <= RT_EACH_MAX */
    float org[3];                         /* every ray's origin */
    float dir[3][RT_EACH_MAX];            /* direction per ray, by axis */
    uint32_t prim[RT_EACH_MAX];           /* the triangle ray i is tested against */
    float tmin, tmax;
} rt_each_rays;

/* Triangle p has vertices positions[3 * indices[3p + k]], k = 0..2. hit[i] is 1 when ray i
 * hits its triangle in [tmin, tmax], with t[i], u[i], v[i] as rt_tri_intersect sets them. */
void rt_intersect_each(const float *positions, const uint32_t *indices, const rt_each_rays *r,
                       float *t, float *u, float *v, uint8_t *hit);

/* The same with the given ISA's kernel (it must be available: rt_isa_available), so
 * tests can compare them; rt_intersect_each uses rt_isa_best(). */
void rt_intersect_each_isa(rt_isa isa, const float *positions, const uint32_t *indices,
                           const rt_each_rays *r, float *t, float *u, float *v, uint8_t *hit);

#endif

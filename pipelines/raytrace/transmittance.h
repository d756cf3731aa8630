/* transmittance.h — what of a shadow ray's light gets through the blended surfaces in
 * its way: rt.shadow's test in scenes with blended materials, shared with the hybrid's
 * Trace (internal to the renderer library). */
#ifndef PIPELINES_RAYTRACE_TRANSMITTANCE_H
#define PIPELINES_RAYTRACE_TRANSMITTANCE_H

#include "raytracer/trace.h"
#include "shaders/ray_shading.h"

/* The product of (1 - a) over the surfaces in shadow ray r's range, nearest first
 * (sh_ray_transmittance: 0 at an opaque one, and after PLRT_MAX_LAYERS - 1 blended
 * ones), each next one looked for from just beyond the last (1e-4 of the ray's length,
 * as its origin is offset). */
float plrt_transmittance(const rt_bvh *bvh, const sh_ray_env *env, rt_ray r);

#endif

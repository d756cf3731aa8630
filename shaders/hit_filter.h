/* hit_filter.h — the ray tracer's any-hit filter for a scene's materials (raytracer/bvh.h
 * rt_hit_filter): a hit on a triangle whose material is alpha-tested (SC_ALPHA_MASK) and
 * whose alpha there is below the cutoff, or on the back of a single-sided triangle
 * (double_sided false), does not count: rays, shadow rays included, pass through.
 *
 * Alpha at a hit = material alpha x the albedo texture's alpha at the hit's uv (the
 * texture coordinates interpolated with the kernels' barycentrics: (1-u-v) t0 + u t1 +
 * v t2 in index order, then the material's texture transform), sampled at level of
 * detail 0 with the material's sampler (traversal knows no ray footprint): the raster
 * graphs' rule (pipelines/raster/alpha.h) where their quad's level is 0 or below
 * (magnified textures), so both cut the same shape there. A back face: the ray's origin lies on the side of the
 * triangle's plane its counter-clockwise normal points away from (glTF's front face is
 * counter-clockwise).
 *
 * Scenes without such materials get no filter, and the kernels run unchanged. */
#ifndef SHADERS_HIT_FILTER_H
#define SHADERS_HIT_FILTER_H

#include "raytracer/bvh.h"
#include "scenes/scene.h"

#include <stdbool.h>

typedef struct sh_hit_filter sh_hit_filter;

/* Does the scene need a filter (any MASK or single-sided material)? */
bool sh_hit_filter_needed(const sc_scene *s);

/* The filter for scene s and its flattened geometry g (both must outlive it), or NULL
 * when none is needed or out of memory (*oom says which; may be NULL). */
sh_hit_filter *sh_hit_filter_new(const sc_scene *s, const sc_geometry *g, bool *oom);
const rt_hit_filter *sh_hit_filter_base(const sh_hit_filter *f);
void sh_hit_filter_free(sh_hit_filter *f);

#endif

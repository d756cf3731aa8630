/* ray_shading.h — shading kernels of the ray tracer: what a hit contributes directly,
 * which shadow rays it casts (one per light facing the surface) and its reflection ray.
 *
 * Data flow: Shade stage (pipelines/raytrace/raytrace.c) -> sh_ray_shade() per hit -> pushed
 * shadow rays / reflection rays / contributions. Pure functions of their inputs: the
 * same hit gives the same result on every worker. */
#ifndef SHADERS_RAY_SHADING_H
#define SHADERS_RAY_SHADING_H

#include <stdbool.h>

#include "gramps/api.h"
#include "scenes/camera.h"
#include "shaders/color.h"
#include "raytracer/isa.h"
#include "raytracer/ray.h"
#include "scenes/scene.h"

typedef struct sh_ray_env {
    const sc_scene *scene;
    const sc_geometry *geo;
    sc_light lights[SH_MAX_LIGHTS];
    int nlights;
    float ambient;                /* ambient light level */
    float background[3];
    float eps;                    /* ray-origin offset along the normal (scene scaled) */
    float depth_near, depth_far;  /* depth AOV range along the view axis */
    float forward[3];
    rt_isa isa;                   /* the texture sampler's compile (rt_isa_best() at init) */
} sh_ray_env;

/* What one hit gives. A surface of an SC_ALPHA_BLEND material with alpha a (factor x
 * texture) is composited front to back along the ray: everything it adds (ambient,
 * lights, reflection) is weighted by a, and the ray goes on through it (`pass`) with
 * weight (1 - a), from just beyond the hit, in the same direction. Reflected and passed
 * rays carry the cone on: rt_cone_at_hit (raytracer/ray.h), its width at the hit and
 * the same spread (a reflection off a curved surface would widen it by the curvature
 * term of Ray Tracing Gems ch. 20, eq. 32, which is left out, as for a planar mirror);
 * the caller makes it for the rays it keeps. A shadow ray through blended surfaces is
 * attenuated by (1 - a) for each (sh_ray_transmittance): glass casts a partial shadow,
 * uncoloured. */
typedef struct sh_ray_result {
    float direct[3];              /* ambient term, added at once */
    int nshadow;
    rt_ray shadow[SH_MAX_LIGHTS];
    float shadow_color[SH_MAX_LIGHTS][3];   /* added if the shadow ray is unoccluded */
    bool reflect;
    rt_ray reflected;
    float reflect_weight[3];
    bool pass;                    /* blended: the ray goes on through the surface */
    float alpha;                  /* the blended surface's alpha (1 for any other) */
    rt_ray passed;
    float pass_weight[3];
} sh_ray_result;

/* Lights: sh_lights_of (shaders/lighting.h). */
GR_API void sh_ray_env_init(sh_ray_env *e, const sc_scene *s, const sc_geometry *g,
                     const sc_camera_frame *f);

/* Shades a hit of a ray with footprint `cone` (raytracer/ray.h), which picks the level
 * of detail of the material's albedo texture (sh_ray_surface). sh_ray_shade is the same
 * with a zero cone (the texture's level 0). */
GR_API void sh_ray_shade_cone(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                              const float weight[3], int depth, rt_cone cone, sh_ray_result *out);
GR_API void sh_ray_shade(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                  const float weight[3], int depth, sh_ray_result *out);

/* The same for a surface a rasterizer found at a pixel (the hybrid's pixel shader): its
 * textures are filtered at the footprint of the pixel's 2x2 quad, as the raster pixel
 * shader's are, from quad = {du/dx, dv/dx, du/dy, dv/dy} in the mesh's texture
 * coordinates (sh_ps_quad_derivatives), instead of a ray cone's. Everything else is
 * sh_ray_shade_cone's: without textures the result is the same, bit for bit. */
GR_API void sh_ray_shade_quad(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                              const float weight[3], const float quad[4], sh_ray_result *out);

/* For blending in draw order (the hybrid's Output Merger blends a blended surface's
 * colour over what lies behind it on the 8-bit image, as the raster graphs blend):
 * sh_ray_shade_cone, or with `quad` (not NULL) sh_ray_shade_quad, except that a blended
 * surface is shaded as an opaque one would be, nothing weighted by its alpha (in
 * out->alpha), and the ray on through it keeps the weight. */
GR_API void sh_ray_shade_layer(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                               const float weight[3], rt_cone cone, const float *quad,
                               sh_ray_result *out);

/* The base colour and alpha at a hit: the material's factors times its albedo texture
 * (sh_texture_sample at the interpolated, transformed uv), at the level of detail of
 * the ray cone's footprint there (sh_texture_cone_lod: the triangle's texel area over
 * its world area, the cone's width at the hit distance, the cosine between the ray and
 * the triangle's geometric normal). Without a texture: the factors, bit for bit. */
GR_API void sh_ray_surface(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, rt_cone cone,
                           float rgba[4]);

/* The ray that goes on through a blended hit (from just beyond it, along the normal
 * facing away from the ray, in the same direction) and the cone it carries (the width at
 * the hit, the same spread): sh_ray_shade_cone's `passed` and `cone`. */
GR_API void sh_ray_pass(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, rt_cone cone,
                        rt_ray *passed, rt_cone *next);

/* What of a shadow ray's light gets through its hit: 1 - a for a blended surface of
 * alpha a (factor x texture alpha at level 0, as the alpha test reads it), 0 for any
 * other. The Shadow stage multiplies it over every surface between the hit and the
 * light in scenes with blended materials (sh_ray_scene_blends). */
GR_API float sh_ray_transmittance(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit);

/* Whether any of the scene's materials is SC_ALPHA_BLEND. */
GR_API bool sh_ray_scene_blends(const sc_scene *s);

/* Whether a hit's material is blended (SC_ALPHA_BLEND) and, if so, its alpha in 0..1. */
GR_API bool sh_ray_blended(const sh_ray_env *e, const rt_hit *hit, const float rgba[4], float *alpha);

/* The interpolated shading normal at a hit, facing the incoming ray (two-sided), and
 * the hit's material (a default one for an out-of-range index): for stages that add
 * their own terms (ambient occlusion, ...). */
GR_API void sh_ray_hit_normal(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, float n[3]);
GR_API const sc_material *sh_ray_hit_material(const sh_ray_env *e, const rt_hit *hit);

/* Arbitrary output values for a primary hit (primid, depth, normal; albedo: the base
 * colour at level 0, unblended: the Shade stage composites it with the ray's cone), as
 * RGB floats. */
GR_API void sh_ray_aov(const sh_ray_env *e, sh_aov aov, const rt_ray *ray, const rt_hit *hit,
                float rgb[3]);

#endif

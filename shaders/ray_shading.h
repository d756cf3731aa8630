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
} sh_ray_env;

typedef struct sh_ray_result {
    float direct[3];              /* ambient term, added at once */
    int nshadow;
    rt_ray shadow[SH_MAX_LIGHTS];
    float shadow_color[SH_MAX_LIGHTS][3];   /* added if the shadow ray is unoccluded */
    bool reflect;
    rt_ray reflected;
    float reflect_weight[3];
} sh_ray_result;

/* Lights: sh_lights_of (shaders/lighting.h). */
GR_API void sh_ray_env_init(sh_ray_env *e, const sc_scene *s, const sc_geometry *g,
                     const sc_camera_frame *f);

GR_API void sh_ray_shade(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                  const float weight[3], int depth, sh_ray_result *out);

/* The interpolated shading normal at a hit, facing the incoming ray (two-sided), and
 * the hit's material (a default one for an out-of-range index): for stages that add
 * their own terms (ambient occlusion, ...). */
GR_API void sh_ray_hit_normal(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, float n[3]);
GR_API const sc_material *sh_ray_hit_material(const sh_ray_env *e, const rt_hit *hit);

/* Arbitrary output values for a primary hit (primid, depth, normal), as RGB floats. */
GR_API void sh_ray_aov(const sh_ray_env *e, sh_aov aov, const rt_ray *ray, const rt_hit *hit,
                float rgb[3]);

#endif

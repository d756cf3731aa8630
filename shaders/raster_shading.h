/* raster_shading.h — vertex and pixel shaders of the rasterization pipeline, written as
 * packet kernels (loops over a packet's elements).
 *
 * Data flow: sc_geometry triangles -> sh_vs_triangles() (model-view-projection, world
 * position and normal as attributes) -> rasterizer -> fragments -> sh_ps_fragment()
 * (per-pixel Blinn-Phong with the scene's point lights, two-sided, optional albedo
 * texture) or an AOV value -> RGBA8. Pure functions: same input, same bits. */
#ifndef SHADERS_RASTER_SHADING_H
#define SHADERS_RASTER_SHADING_H

#include "pipelines/common.h"
#include "rasterizer/raster.h"
#include "scenes/scene.h"

#define SH_MAX_LIGHTS 8

typedef struct sh_raster_env {
    const sc_scene *scene;
    const sc_geometry *geo;
    pl_camera_frame frame;
    float near, far;                  /* clip planes along the view axis */
    sc_light lights[SH_MAX_LIGHTS];
    int nlights;
    float ambient, background[3];
    pl_aov aov;
} sh_raster_env;

void sh_raster_env_init(sh_raster_env *e, const sc_scene *s, const sc_geometry *g,
                        int width, int height, pl_aov aov);

/* Vertex shader + primitive assembly for triangles [first, first + n). */
void sh_vs_triangles(const sh_raster_env *e, uint32_t first, uint32_t n, rs_triangle *out);

/* Pixel shader: RGBA8 of one fragment of triangle t (setup s). */
uint32_t sh_ps_fragment(const sh_raster_env *e, const rs_triangle *t, const rs_setup *s,
                        const rs_fragment *f);

/* The clear colour of the image for the env's AOV. */
uint32_t sh_background(const sh_raster_env *e);

#endif

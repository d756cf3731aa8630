/* raster_shading.h — vertex and pixel shaders of the rasterization pipeline, written as
 * packet kernels (loops over a packet's elements).
 *
 * Data flow: sc_geometry vertices -> sh_vs_vertices_of() (model-view-projection, world
 * position and normal as attributes) -> rasterizer -> fragments ->
 * sh_ps_packet() (per-pixel Blinn-Phong with the scene's point lights, two-sided, optional
 * albedo texture) or an AOV value -> RGBA8. Pure functions: same input, same bits. */
#ifndef SHADERS_RASTER_SHADING_H
#define SHADERS_RASTER_SHADING_H

#include "gramps/api.h"
#include "scenes/camera.h"
#include "shaders/color.h"
#include "rasterizer/raster.h"
#include "raytracer/isa.h"
#include "scenes/scene.h"

#include <string.h>

typedef struct sh_raster_env {
    const sc_scene *scene;
    const sc_geometry *geo;
    sc_camera_frame frame;
    float near, far;                  /* clip planes along the view axis */
    sc_light lights[SH_MAX_LIGHTS];
    int nlights;
    float ambient, background[3];
    sh_aov aov;
    rt_isa isa;                       /* the VS and PS kernels' (rt_isa_best() at init) */
} sh_raster_env;

GR_API void sh_raster_env_init(sh_raster_env *e, const sc_scene *s, const sc_geometry *g,
                        int width, int height, sh_aov aov);

/* The vertex shader and the rasterizer's per-vertex setup for n <= SH_VS_MAX vertices
 * (vertex[i]: an index into the geometry), as arrays: clip position, outcode
 * (rs_outcode_of) and, for vertices in front of the eye (w > 0), 1/w, window depth and
 * the snapped screen position (rs_project, rs_subpixels, rounded to nearest). x and y
 * are exact for the vertices of triangles inside the guard band; others are 0 beyond
 * 2^30 (those triangles are clipped and set up again). Camera space: x right, y up,
 * depth along the view direction; OpenGL projection. One loop per step over the
 * vertices, so it vectorizes (the AVX2 body when e->isa says so); the same bits either
 * way, and as rs_outcode and rs_project_vertex on the clip positions. */
#define SH_VS_MAX 96
typedef struct sh_vs_vertices {
    float clip[4][SH_VS_MAX];
    float inv_w[SH_VS_MAX], z[SH_VS_MAX];
    int32_t x[SH_VS_MAX], y[SH_VS_MAX];
    uint8_t code[SH_VS_MAX];
} sh_vs_vertices;
GR_API void sh_vs_vertices_of(const sh_raster_env *e, const uint32_t *vertex, int n, int width,
                       int height, sh_vs_vertices *out);

/* A vertex's attributes: world position, normal and uv (inline: the VS copies them per
 * triangle corner). */
static inline void sh_vs_attrs(const sh_raster_env *e, uint32_t v, float attr[RS_ATTRS])
{
    const sc_geometry *g = e->geo;
    memcpy(attr, g->positions + 3 * (size_t)v, 3 * sizeof(float));
    memcpy(attr + 3, g->normals + 3 * (size_t)v, 3 * sizeof(float));
    memcpy(attr + 6, g->texcoords + 2 * (size_t)v, 2 * sizeof(float));
}

/* What the pixel shader needs of a triangle: its vertices' attributes in the order the
 * rasterizer's weights refer to (rs_setup.order applied), primitive id and material.
 * For a material with an albedo texture also the texture coordinates as functions of
 * the pixel, for the level of detail (sh_ps_tri_screen): uv = (U / W, V / W) with U, V,
 * W affine in the pixel centre, plane[q] = {d/dx, d/dy, value at pixel (ox, oy)} for
 * q = U, V, W (W scaled to the triangle's largest 1/w). Unset for other materials. */
typedef struct sh_ps_tri {
    float attr[3][RS_ATTRS];
    uint32_t prim, material;
    float plane[3][3];
    int32_t ox, oy;
} sh_ps_tri;

/* Whether material m's pixels sample a texture (and so read sh_ps_tri.plane). */
static inline bool sh_material_textured(const sc_scene *s, uint32_t m)
{
    return m < s->nmaterials && s->materials[m].albedo_map.texture >= 0 &&
           (size_t)s->materials[m].albedo_map.texture < s->ntextures;
}

/* Sets t's planes from its setup su (t->attr and t->material set) when its material is
 * textured; nothing otherwise. A pure function of the setup and attributes: the same
 * bits in every graph and on every worker. */
GR_API void sh_ps_tri_planes(sh_ps_tri *t, const rs_setup *su);
static inline void sh_ps_tri_screen(const sh_raster_env *e, sh_ps_tri *t, const rs_setup *su)
{
    if (sh_material_textured(e->scene, t->material)) sh_ps_tri_planes(t, su);
}

#define SH_PS_MAX 64                  /* fragments per sh_ps_packet call */

/* n <= SH_PS_MAX fragments: fragment i lies in triangle tris[tri[i]] and has the
 * perspective-correct weights b1[i], b2[i] (vertex 0 gets 1 - b1 - b2) and is at pixel
 * (x[i], y[i]). Textures are sampled trilinearly at the level of detail of the pixel's
 * 2x2 quad (x & ~1, y & ~1), as Direct3D does: the texture coordinates at the quad's
 * pixel centres, from the triangle's planes extrapolated there (helper lanes: evaluated,
 * never written), coarse derivatives (ddx along the quad's top row, ddy down its left
 * column), the same for the quad's four pixels. x and y NULL: level 0. */
typedef struct sh_ps_frags {
    int n;
    const sh_ps_tri *tris;
    const uint8_t *tri;
    const float *b1, *b2;
    const uint16_t *x, *y;
} sh_ps_frags;

/* The level of detail the PS samples tex at for a fragment of t at pixel (x, y) through
 * ref (its KHR transform applied before the derivatives). */
GR_API float sh_ps_quad_lod(const sh_ps_tri *t, const sc_texture *tex, const sc_texture_ref *ref,
                            int x, int y);

/* Pixel shader as a packet kernel: RGBA8 of every fragment of f. The loops run across
 * the packet so the compiler vectorizes them (compiled for the baseline and for AVX2,
 * e->isa picks); every lane does the same IEEE operations as the scalar formula, so the colour of
 * a fragment does not depend on the packet it is in or the ISA. */
GR_API void sh_ps_packet(const sh_raster_env *e, const sh_ps_frags *f, uint32_t *rgba);

/* The clear colour of the image for the env's AOV. */
GR_API uint32_t sh_background(const sh_raster_env *e);

#endif

/* raster_shading.h — vertex and pixel shaders of the rasterization pipeline, written as
 * packet kernels (loops over a packet's elements).
 *
 * Data flow: sc_geometry vertices, interleaved (shaders/vertex_buffer.h) ->
 * sh_vs_vertices_of() (model-view-projection, world
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
#include "shaders/vertex_buffer.h"

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
    int width, height;                /* the image's, in pixels */
} sh_raster_env;

GR_API void sh_raster_env_init(sh_raster_env *e, const sc_scene *s, const sc_geometry *g,
                        int width, int height, sh_aov aov);

/* The vertex shader and the rasterizer's per-vertex setup for n <= SH_VS_MAX vertices
 * (vertex[i]: an index into the geometry and into `vertices`, its interleaved copy that
 * the positions are read from), as arrays: clip position, outcode
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
GR_API void sh_vs_vertices_of(const sh_raster_env *e, const sh_vertex *vertices, const uint32_t *vertex,
                              int n, int width, int height, sh_vs_vertices *out);
/* The same from packed positions (3 floats a vertex, sc_geometry.positions): a depth-only
 * pass reads no attributes, and the positions alone are 12 bytes a vertex against the
 * interleaved buffer's 32, so the gather brings in 2.7x fewer cache lines. Same bits. */
GR_API void sh_vs_positions_of(const sh_raster_env *e, const float *positions, const uint32_t *vertex,
                               int n, int width, int height, sh_vs_vertices *out);

/* What the pixel shader needs of a triangle: its vertices' attributes in the order the
 * rasterizer's weights refer to (rs_setup.order applied), primitive id and material. */
typedef struct sh_ps_tri {
    float attr[3][RS_ATTRS];
    uint32_t prim, material;
} sh_ps_tri;

#define SH_PS_MAX 64                  /* fragments per sh_ps_packet call */

/* A triangle's quad setup: the per-triangle part of the level of detail (its set-0
 * texture coordinates as functions of the pixel centre, sh_ps_quad_derivatives' first
 * step). A caller that shades one triangle's fragments in several packets can keep one
 * per triangle (ready false at first) and pass it in sh_ps_frags.quads: the shader then
 * fills it in once and reads it back, with the same bits as making it again
 * (sh_ps_packet_kept). */
typedef struct sh_ps_quad_setup {
    double at[4], dx[4], dy[4], x0, y0;
    bool ready;
} sh_ps_quad_setup;

/* n <= SH_PS_MAX fragments: fragment i lies in triangle tris[tri[i]] and has the
 * perspective-correct weights b1[i], b2[i] (vertex 0 gets 1 - b1 - b2) and is at pixel
 * (x[i], y[i]). Textures are sampled trilinearly at the level of detail of the pixel's
 * 2x2 quad (x & ~1, y & ~1), as Direct3D does: the texture coordinates at the quad's
 * pixel centres, the triangle's perspective-correct interpolation extrapolated there
 * (helper lanes: evaluated, never written), coarse derivatives (ddx along the quad's top
 * row, ddy down its left column), the same for the quad's four pixels. x and y NULL:
 * level 0. */
typedef struct sh_ps_frags {
    int n;
    const sh_ps_tri *tris;
    const uint8_t *tri;
    const float *b1, *b2;
    const uint16_t *x, *y;
    float *linear;                    /* colour output: when not NULL, fragment i's linear
                                         RGB before the sRGB encode at linear[3i..3i+2] */
} sh_ps_frags;

/* The texture coordinates' coarse derivatives for a fragment of t at pixel (x, y), in
 * the mesh's coordinates (before any KHR transform): d = {du/dx, dv/dx, du/dy, dv/dy},
 * the differences of uv at the pixel centres of its quad's top row and left column,
 * each uv perspective-correct from the triangle's corners (their world positions
 * projected as the VS does, unsnapped; in double). A pure function of e, t and the quad:
 * no storage per triangle, and untextured triangles pay nothing. The PS's level of
 * detail is sh_surface_lod (shaders/pbr.h) of these through each texture's transform. */
GR_API void sh_ps_quad_derivatives(const sh_raster_env *e, const sh_ps_tri *t, int x, int y,
                                   float d[4]);
/* The same for the triangle's corners' texture coordinates uv (any set). */
GR_API void sh_ps_quad_derivatives_of(const sh_raster_env *e, const sh_ps_tri *t, const float uv[3][2],
                                      int x, int y, float d[4]);
/* t's corners' texture coordinates in the set r reads (shaders/uv_sets.h): set 0 from
 * the VS's attributes, set 1 from the geometry at each corner's position (a corner
 * clipping made is interpolated there). */
GR_API void sh_ps_tri_uvs(const sh_raster_env *e, const sh_ps_tri *t, const sc_texture_ref *r,
                          float uv[3][2]);

/* Pixel shader as a packet kernel: RGBA8 of every fragment of f. The loops run across
 * the packet so the compiler vectorizes them (compiled for the baseline and for AVX2,
 * e->isa picks); every lane does the same IEEE operations as the scalar formula, so the colour of
 * a fragment does not depend on the packet it is in or the ISA. */
GR_API void sh_ps_packet(const sh_raster_env *e, const sh_ps_frags *f, uint32_t *rgba);
/* What a caller that batches fragments keeps and knows of a packet beyond sh_ps_frags:
 * tris[k]'s kept quad setup at quads[k] (sh_ps_quad_setup; NULL: none kept), and
 * ntris > 0 when every tri[i] < ntris (the shader then tests for a one-material packet
 * once per triangle, not per fragment, and makes the kept quad setups of tris[0 ..
 * ntris) before the fragments ask for them; a triangle no fragment refers to only makes
 * the test fail and its setup be made for nothing, with the same colours). 0: unknown. */
typedef struct sh_ps_kept {
    sh_ps_quad_setup *const *quads;
    int ntris;
} sh_ps_kept;

/* sh_ps_packet with the caller's sh_ps_kept (NULL: nothing kept or known). */
GR_API void sh_ps_packet_kept(const sh_raster_env *e, const sh_ps_frags *f, const sh_ps_kept *kept,
                              uint32_t *rgba);

/* The clear colour of the image for the env's AOV. */
GR_API uint32_t sh_background(const sh_raster_env *e);

#endif

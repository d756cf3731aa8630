/* raster_shading.h — vertex and pixel shaders of the rasterization pipeline, written as
 * packet kernels (loops over a packet's elements).
 *
 * Data flow: sc_geometry triangles -> sh_vs_triangles() (model-view-projection, world
 * position and normal as attributes) -> rasterizer -> fragments ->
 * sh_ps_packet() (per-pixel Blinn-Phong with the scene's point lights, two-sided, optional
 * albedo texture) or an AOV value -> RGBA8. Pure functions: same input, same bits. */
#ifndef SHADERS_RASTER_SHADING_H
#define SHADERS_RASTER_SHADING_H

#include "scenes/camera.h"
#include "shaders/color.h"
#include "rasterizer/raster.h"
#include "scenes/scene.h"

#define SH_MAX_LIGHTS 8

/* Instruction sets the packet kernels are compiled for; results are the same bits. */
typedef enum sh_isa { SH_ISA_BASELINE, SH_ISA_AVX2 } sh_isa;
bool sh_isa_available(sh_isa isa);
/* The best the CPU has, unless GRAMPS_ISA=baseline asks for the baseline. */
sh_isa sh_isa_best(void);
const char *sh_isa_name(sh_isa isa);

typedef struct sh_raster_env {
    const sc_scene *scene;
    const sc_geometry *geo;
    sc_camera_frame frame;
    float near, far;                  /* clip planes along the view axis */
    sc_light lights[SH_MAX_LIGHTS];
    int nlights;
    float ambient, background[3];
    sh_aov aov;
    sh_isa isa;                       /* the PS kernel's (sh_isa_best() at init) */
} sh_raster_env;

void sh_raster_env_init(sh_raster_env *e, const sc_scene *s, const sc_geometry *g,
                        int width, int height, sh_aov aov);

/* Vertex shader + primitive assembly for triangles [first, first + n). */
void sh_vs_triangles(const sh_raster_env *e, uint32_t first, uint32_t n, rs_triangle *out);

/* What the pixel shader needs of a triangle: its vertices' attributes in the order the
 * rasterizer's weights refer to (rs_setup.order applied), primitive id and material. */
typedef struct sh_ps_tri {
    float attr[3][RS_ATTRS];
    uint32_t prim, material;
} sh_ps_tri;

#define SH_PS_MAX 64                  /* fragments per sh_ps_packet call */

/* n <= SH_PS_MAX fragments: fragment i lies in triangle tris[tri[i]] and has the
 * perspective-correct weights b1[i], b2[i] (vertex 0 gets 1 - b1 - b2). */
typedef struct sh_ps_frags {
    int n;
    const sh_ps_tri *tris;
    const uint8_t *tri;
    const float *b1, *b2;
} sh_ps_frags;

/* Pixel shader as a packet kernel: RGBA8 of every fragment of f. The loops run across
 * the packet so the compiler vectorizes them (compiled for the baseline and for AVX2,
 * e->isa picks); every lane does the same IEEE operations as the scalar formula, so the colour of
 * a fragment does not depend on the packet it is in or the ISA. */
void sh_ps_packet(const sh_raster_env *e, const sh_ps_frags *f, uint32_t *rgba);

/* The clear colour of the image for the env's AOV. */
uint32_t sh_background(const sh_raster_env *e);

#endif

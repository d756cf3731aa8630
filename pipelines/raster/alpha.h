/* alpha.h — transparency in the raster family (internal to pipelines/raster/): the
 * alpha test (SC_ALPHA_MASK), blending (SC_ALPHA_BLEND) and single-sided culling, in one
 * place so that every raster graph and the hybrid's depth pass give the same bits.
 *
 * Alpha of a fragment = material alpha x the albedo texture's alpha at the fragment's uv,
 * sampled as the PS samples the colour: the material's sampler and texture transform, at
 * the level of detail of the fragment's 2x2 quad (sh_ps_quad_derivatives, a pure function
 * of the triangle and the quad, then sh_surface_lod), so the sort-middle graph (which
 * tests alpha while resolving visibility, before any quad of fragments exists) and the
 * ordered graphs (which test in the PS) agree bit for bit, and minified cut-outs are
 * filtered like their colour (trilinear, as OpenGL's and Direct3D's alpha). The uv is
 * interpolated with the pixel shader's perspective-correct weights (b0 = 1 - b1 - b2).
 *
 * Blending, by the rule real engines use: opaque and alpha-tested triangles first, then
 * blended triangles in primitive-id order, each fragment depth-tested (less) against the
 * final opaque depth, writing no depth: colour = src * a + dst * (1 - a) per 8-bit channel
 * (plr_blend), on the colour and albedo AOVs; the other AOVs (primid, depth, normal) show
 * the opaque surfaces only. The destination's alpha byte is kept. */
#ifndef PIPELINES_RASTER_ALPHA_H
#define PIPELINES_RASTER_ALPHA_H

#include "pipelines/raster/packets.h"
#include "rasterizer/samples.h"
#include "shaders/raster_shading.h"

#include <stdbool.h>
#include <stdint.h>

/* What a scene's materials need of the raster stages (plr_alpha_info_of): any MASK,
 * any BLEND, any single-sided material. All false: the stages take their fast paths. */
typedef struct plr_alpha_info {
    bool mask, blend, cull;
} plr_alpha_info;

plr_alpha_info plr_alpha_info_of(const sc_scene *s);

static inline const sc_material *plr_material(const sh_raster_env *e, uint32_t m)
{
    return m < e->scene->nmaterials ? &e->scene->materials[m] : NULL;
}

/* The alpha mode of material m (OPAQUE for an index out of range). */
static inline sc_alpha_mode plr_alpha_mode(const sh_raster_env *e, uint32_t m)
{
    const sc_material *mat = plr_material(e, m);
    return mat ? mat->alpha_mode : SC_ALPHA_OPAQUE;
}

/* Does blending apply to the env's AOV (colour and albedo)? Elsewhere blended triangles
 * are not drawn. */
static inline bool plr_blends_aov(const sh_raster_env *e)
{
    return e->aov == SH_AOV_COLOR || e->aov == SH_AOV_ALBEDO;
}

/* The alpha (see above) of triangle t's fragment at pixel (x, y), weights b1, b2. */
float plr_alpha_at(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2, int x, int y);

/* Does a fragment of MASK triangle t pass the alpha test (alpha >= cutoff)? */
bool plr_alpha_passes(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2, int x,
                      int y);

/* The alpha byte of a fragment of a BLEND triangle: round(255 * clamp(alpha)). */
uint8_t plr_alpha8(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2, int x, int y);

/* src (RGB; its alpha byte is the coverage a8) over dst: per channel
 * round((s * a + d * (255 - a)) / 255), dst's alpha byte kept. Exact integers. */
static inline uint32_t plr_blend(uint32_t dst, uint32_t src, uint32_t a8)
{
    uint32_t out = dst & 0xff000000u;
    for (int k = 0; k < 3; k++) {
        uint32_t s = (src >> (8 * k)) & 0xff, d = (dst >> (8 * k)) & 0xff;
        uint32_t v = (s * a8 + d * (255 - a8) + 127) / 255;
        out |= v << (8 * k);
    }
    return out;
}

/* Is the triangle with these snapped screen corners (y down) a back face? Front faces
 * wind counter-clockwise as seen (OpenGL's and glTF's default): with y down their
 * signed area below is negative. */
static inline bool plr_back_facing(int64_t x0, int64_t y0, int64_t x1, int64_t y1, int64_t x2,
                                   int64_t y2)
{
    return (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0) > 0;
}

/* Is material m single-sided (double_sided false)? */
static inline bool plr_single_sided(const sh_raster_env *e, uint32_t m)
{
    const sc_material *mat = plr_material(e, m);
    return mat && !mat->double_sided;
}

/* Depth test with the alpha test, for a MASK triangle: as rs_depth_rect (nearest depth,
 * equal depths to the smaller primitive id, coverage as rs_raster_rect, depth as
 * rs_depth) over [x0,x1) x [y0,y1) into t, but a fragment whose alpha fails writes
 * nothing. buf: room for cap covers (rows are walked in strips that fit). Returns the
 * covered pixels. */
int plr_depth_rect_masked(const sh_raster_env *e, const plr_prim *p, int x0, int y0, int x1,
                          int y1, rs_depth_target *t, rs_cover *buf, int cap);

/* The PS's part, over the n live fragments of p (indices live[], weights b1[i], b2[i]
 * by fragment index): a MASK fragment that fails the test, or a BLEND fragment on an AOV
 * that does not blend, is killed (out.z = +inf, dropped from live); a8[k] gets the
 * alpha byte of the k-th survivor (255 unless BLEND). Returns the survivors. */
int plr_alpha_ps(const sh_raster_env *e, frag_pkt *p, const float *b1, const float *b2,
                 uint8_t *live, int n, uint8_t *a8);

/* Fragments of blended triangles an OM holds until its opaque ones are done. */
typedef struct plr_blend_frag {
    uint16_t x, y;
    float z;
    uint32_t rgba;                        /* alpha byte: the coverage */
    uint32_t prim, seq;                   /* primitive id, arrival */
    uint8_t cover;                        /* msaa > 1: its covered samples */
    float zs[RS_MAX_SAMPLES];             /* msaa > 1: its depth at each sample */
} plr_blend_frag;

typedef struct plr_blend_list {
    plr_blend_frag *f;
    size_t n, cap;
} plr_blend_list;

/* Appends; false when out of memory. */
bool plr_blend_push(plr_blend_list *l, const plr_blend_frag *f);
/* In primitive-id order (arrival order within a primitive). */
void plr_blend_sort(plr_blend_list *l);
void plr_blend_list_free(plr_blend_list *l);

#endif

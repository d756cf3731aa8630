/* uv_sets.h — texture coordinate sets: which of the geometry's arrays a texture
 * reference reads (set 1 where it asks for it and the geometry has one, else set 0:
 * sc_geometry.texcoords1 is NULL for scenes without set 1, whose memory it leaves as it
 * was), and a triangle's corners in it. Every sampler of both renderers goes through
 * these, so a material reads the same coordinates in every pipeline. */
#ifndef SHADERS_UV_SETS_H
#define SHADERS_UV_SETS_H

#include "scenes/scene.h"

#include <stdbool.h>

static inline bool sh_reads_set1(const sc_geometry *g, const sc_texture_ref *r)
{
    return r->uv_set == 1 && g->texcoords1 != NULL;
}

/* The array r's texture coordinates come from (NULL: the geometry has none). */
static inline const float *sh_uv_array(const sc_geometry *g, const sc_texture_ref *r)
{
    return sh_reads_set1(g, r) ? g->texcoords1 : g->texcoords;
}

/* Triangle prim's corners in array tc (zeros when tc is NULL). */
void sh_triangle_uvs(const sc_geometry *g, const float *tc, uint32_t prim, float uv[3][2]);

/* Set 1 at world point p of triangle prim (a corner the rasterizer's clipping made):
 * the corners' set 1 weighted by p's barycentric coordinates; a point that is one of
 * the corners gets that corner's coordinates exactly. */
void sh_set1_at(const sc_geometry *g, uint32_t prim, const float p[3], float uv[2]);

#endif

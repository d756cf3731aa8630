/* texture_sample.h — texture sampling as Direct3D's default sampler does it: mip chains
 * built at load (sc_texture), a level of detail from the screen-space derivatives of the
 * texture coordinates (or a ray cone's footprint), trilinear, bilinear or nearest
 * filtering, and repeat / clamp / mirror addressing per material (sc_sampler).
 *
 * Conventions: uv (0, 0) is the bottom-left corner of the image (OBJ; loaders convert
 * other conventions), texel centres at half-integers; colours are the stored bytes / 255
 * (no colour-space conversion). Pure scalar functions, compiled for the baseline ISA
 * (and, for sh_texture_sample_on, AVX2): the same inputs give the same bits in every
 * pipeline, on every worker and in either compile.
 * Non-finite or huge coordinates sample a defined texel, never memory outside the level. */
#ifndef SHADERS_TEXTURE_SAMPLE_H
#define SHADERS_TEXTURE_SAMPLE_H

#include "gramps/api.h"
#include "raytracer/isa.h"
#include "scenes/scene.h"

/* The level of detail for a pixel whose texture coordinates change by (dudx, dvdx) one
 * pixel right and (dudy, dvdy) one pixel down: log2 of the longer of the two texel-space
 * steps on level 0 (D3D's and OpenGL's rho, without approximations). NaN derivatives
 * give 0; infinite or huge ones a large value (the coarsest level, as Direct3D clamps an
 * infinite LOD); a zero step gives a large negative value (magnification). */
GR_API float sh_texture_lod(const sc_texture *t, float dudx, float dvdx, float dudy, float dvdy);

/* The level of detail of a ray cone of `width` (world units) at the hit, on a triangle
 * whose texture-space area is uv_area (in uv units, on level 0's texels: multiply by
 * width x height) over world area world_area, seen at cosine cos_theta: Akenine-Möller et
 * al., "Texture Level of Detail Strategies for Real-Time Ray Tracing", Ray Tracing Gems
 * ch. 20, eq. 34 (0.5 log2(texel area / world area) + log2(width / |cos|)). */
GR_API float sh_texture_cone_lod(const sc_texture *t, float uv_area, float world_area,
                                 float width, float cos_theta);

/* RGBA in 0..1 of texture t at (u, v) and level of detail lod, filtered and addressed
 * as s says. */
GR_API void sh_texture_sample(const sc_texture *t, const sc_sampler *s, float u, float v,
                              float lod, float rgba[4]);

/* sh_texture_sample in a compile for the instruction set isa (the caller's rt_isa_best()
 * choice, recorded once): the same IEEE operations, so the same bits, with AVX2's one
 * rounding instruction for each floor where the baseline compile spells it out. */
GR_API void sh_texture_sample_on(rt_isa isa, const sc_texture *t, const sc_sampler *s, float u, float v,
                                 float lod, float rgba[4]);

/* (u, v) through ref's KHR_texture_transform (offset, rotation, scale; identity leaves
 * the bits as they are). */
GR_API void sh_texture_transform(const sc_texture_ref *ref, float *u, float *v);

/* Whether ref's transform is the identity (sh_texture_transform then changes nothing). */
static inline bool sh_texture_transform_is_identity(const sc_texture_ref *ref)
{
    return ref->rotation == 0.0f && ref->scale[0] == 1.0f && ref->scale[1] == 1.0f &&
           ref->offset[0] == 0.0f && ref->offset[1] == 0.0f;
}

/* The texture ref names, or NULL (no texture, or an index out of range). */
static inline const sc_texture *sh_texture_of(const sc_scene *s, const sc_texture_ref *ref)
{
    return ref->texture >= 0 && (size_t)ref->texture < s->ntextures ? &s->textures[ref->texture] : 0;
}

#endif

/* pbr.h — glTF 2.0 metallic-roughness shading, shared by the rasterizer's pixel shader and
 * the ray tracer's Shade stage for materials whose model is SC_SHADING_METALLIC_ROUGHNESS
 * (Blinn-Phong materials keep shaders/blinn_phong.h).
 *
 * Two parts:
 *  - the surface gather (sh_surface_gather): a material's factors times its textures at a
 *    uv, with a level of detail the caller describes (quad derivatives in the raster graphs,
 *    a ray cone in the ray tracer), and the shading normal with the normal map applied in
 *    the triangle's tangent frame (sh_triangle_tangent);
 *  - the BRDF of the glTF 2.0 specification, appendix B (sh_pbr_brdf): GGX /
 *    Trowbridge-Reitz distribution with alpha = roughness^2, Smith height-correlated
 *    visibility, Schlick Fresnel with F0 = mix(0.04, base, metallic), diffuse colour
 *    c_diff = mix(base, 0, metallic):
 *        f(l, v) = (1 - F) * c_diff / pi + F * D * V
 *    and what one of the project's point lights adds through it (sh_pbr_light), the
 *    ambient term (sh_pbr_ambient: occlusion multiplies it, and only it) and emissive
 *    (added unlit by the caller: sh_surface.emissive).
 *
 * Light convention (as shaders/blinn_phong.h): a point light at l->position with colour
 * l->color, no fall-off; Blinn-Phong gives a white diffuse surface colour x n.l, so the
 * light's irradiance at normal incidence is pi x colour, and a light adds
 *        pi * f(l, v) * max(n.l, 0) * colour
 * (a metallic 0, roughness 1 material of base colour c is then about as bright as a
 * Blinn-Phong material of albedo c). Ambient: the env's level A (SH_AMBIENT) lights the
 * surface like a uniform environment, A * occlusion * (c_diff * (1 - F0) + F0).
 *
 * Data flow: sc_material + hit/fragment (uv, normal, triangle) -> sh_surface_gather ->
 * sh_surface -> sh_pbr_light per light (+ shadow test in the ray tracer) + sh_pbr_ambient
 * + emissive -> linear RGB.
 *
 * Pure scalar functions compiled once for the baseline ISA (not inline, not in the
 * vectorized kernels), so the raster graphs and the ray tracer get the same bits for the
 * same inputs on every worker. Internal to the renderer (not installed). */
#ifndef SHADERS_PBR_H
#define SHADERS_PBR_H

#include "scenes/scene.h"

#include <stdbool.h>

/* Perceptual roughness is clamped to [SH_PBR_MIN_ROUGHNESS, 1] inside the BRDF (the
 * gathered sh_surface.roughness keeps the material's value): alpha = 0 is a delta lobe
 * that a point light can never hit and whose D divides 0 by 0. */
#define SH_PBR_MIN_ROUGHNESS 0.045f

/* ---- level of detail ------------------------------------------------------------------ */

/* How the caller measures a texture's footprint; sh_surface_lod turns it into each
 * texture's level of detail (each texture has its own size and transform). */
typedef enum sh_lod_kind {
    SH_LOD_BASE,          /* level 0 everywhere (no footprint known) */
    SH_LOD_QUAD,          /* raster: uv derivatives from the 2x2 quad (sh_texture_lod) */
    SH_LOD_CONE,          /* ray tracer: ray cone at the hit (sh_texture_cone_lod) */
} sh_lod_kind;

typedef struct sh_lod {
    sh_lod_kind kind;
    /* SH_LOD_QUAD: the uv change one pixel right (dudx, dvdx) and one pixel down (dudy,
     * dvdy), in the mesh's texture coordinates (before any KHR_texture_transform). */
    float dudx, dvdx, dudy, dvdy;
    /* SH_LOD_CONE: the triangle's uv-space area (mesh coordinates, before any transform)
     * over its world-space area, the cone's width at the hit and the cosine between the
     * ray and the normal: sh_texture_cone_lod's arguments. */
    float uv_area, world_area, cone_width, cos_theta;
} sh_lod;

/* The level of detail of ref's texture t under footprint q: sh_texture_lod /
 * sh_texture_cone_lod of the footprint carried through ref's KHR_texture_transform (its
 * scale and rotation: the derivatives are transformed as vectors, the uv area scaled by
 * |scale_u * scale_v|). With an identity transform the bits are those of calling
 * sh_texture_lod / sh_texture_cone_lod directly; SH_LOD_BASE gives 0. */
float sh_surface_lod(const sh_lod *q, const sc_texture_ref *ref, const sc_texture *t);

/* ---- the surface gather --------------------------------------------------------------- */

/* A triangle's tangent and bitangent: dp/du and dp/dv of its positions p[k] over its
 * texture coordinates uv[k] (not normalized; object- or world-space as p is). Returns
 * false, with t and b zero, when the uv mapping is degenerate (zero or non-finite uv
 * area) or the result is not finite: such a triangle has no tangent frame. */
bool sh_triangle_tangent(const float p[3][3], const float uv[3][2], float t[3], float b[3]);

/* Where and how a material is looked at. */
typedef struct sh_surface_in {
    float uv[2];          /* interpolated texture coordinates (set 0), before any transform */
    float n[3];           /* interpolated vertex normal, unit length, as the mesh has it */
    float facing;         /* +1, or -1 where the caller's two-sided rule turns the surface
                           * to the viewer (raster: n.view < 0; ray tracer: n.dir > 0) */
    float tangent[3], bitangent[3];   /* sh_triangle_tangent of the triangle (in the same
                           * space as n); read only when the material has a normal map */
    sh_lod lod;           /* the footprint, for every texture the material samples */
    float uv1[2];         /* texture coordinate set 1, its footprint and its frame: for */
    sh_lod lod1;          /* references with uv_set 1 (copies of uv, lod, tangent and */
    float tangent1[3], bitangent1[3];   /* bitangent without a set 1) */
} sh_surface_in;

/* What the lighting needs of a metallic-roughness surface. */
typedef struct sh_surface {
    float base[3];        /* base colour: albedo x base colour texture RGB */
    float alpha;          /* alpha factor x base colour texture A */
    float metallic;       /* metallic factor x texture B, clamped to [0, 1] */
    float roughness;      /* roughness factor x texture G, clamped to [0, 1] */
    float emissive[3];    /* emissive factor x emissive texture RGB (added unlit) */
    float occlusion;      /* 1 + occlusion_strength * (texture R - 1); 1 without a map */
    float n[3];           /* shading normal, unit length, facing the viewer: see below */
} sh_surface;

/* in's uv, n (the interpolated normal, normalized: v / |v| unless |v| is 0), tangent and
 * bitangent (sh_triangle_tangent; zero without a frame) for a triangle of vertex
 * positions p, normals nrm and texture coordinates uv at perspective-correct weights
 * (1 - b1 - b2, b1, b2): each value w0 x0 + b1 x1 + b2 x2 with w0 = 1 - b1 - b2, the
 * operations of the raster PS's interpolation and of sh_ray_hit_normal, so the same
 * bits; uv1 = uv and the set 1 frame that of set 0. facing, lod and lod1 are left for
 * the caller (sh_surface_in_set1 fills in a set 1). */
void sh_surface_in_of_vertices(const float p[3][3], const float nrm[3][3], const float uv[3][2],
                               float b1, float b2, sh_surface_in *in);

/* Set 1 into in: uv1 at the weights (1 - b1 - b2, b1, b2) of corners uv1 (interpolated
 * as uv is), lod1 = lod1_q, and the frame of positions p over uv1. */
void sh_surface_in_set1(const float p[3][3], const float uv1[3][2], float b1, float b2, const sh_lod *lod1_q,
                        sh_surface_in *in);

/* The same for triangle prim of geometry g (its texcoords, or zeros without them), and
 * the ray-cone footprint there: in->lod = SH_LOD_CONE with the triangle's uv and world
 * areas, cos_theta between dir and its geometric normal, and the cone's width at the hit
 * (the caller's: rt_cone_width_at); uv1 and lod1 the same of set 1 when g has one. */
void sh_surface_in_of_hit(const sc_geometry *g, uint32_t prim, float b1, float b2,
                          const float dir[3], float cone_width, sh_surface_in *in);

/* Gathers material m (its textures from scene s; a texture index out of range counts as
 * no texture) at in. Each texture is sampled through its ref's transform and sampler at
 * its own level of detail (sh_surface_lod). The shading normal: without a normal map (or
 * without a tangent frame: sh_triangle_tangent false, or a tangent parallel to n) it is
 * in->n * facing, bit for bit what the caller's two-sided flip gives. With one: T is the
 * tangent made orthogonal to n (Gram-Schmidt) and normalized, B = cross(n, T) with the
 * bitangent's handedness (negated when dot(cross(n, T), bitangent) < 0), the texel's
 * tangent-space normal is (2 rgb - 1) with x and y times normal_scale, and
 * n' = normalize(x T + y B + z n) * facing (the whole frame flips with the face, as the
 * glTF reference viewer does for back faces). A non-finite result falls back to
 * in->n * facing. */
void sh_surface_gather(const sc_scene *s, const sc_material *m, const sh_surface_in *in,
                       sh_surface *out);

/* ---- the BRDF --------------------------------------------------------------------------- */

/* f(l, v) per RGB channel (1/sr) for unit vectors l (to the light) and v (to the viewer)
 * at surface s (its normal s->n): the formula at the top of this file, with
 *   D = a^2 / (pi ((n.h)^2 (a^2 - 1) + 1)^2),                 a = roughness^2
 *   V = 0.5 / (n.l sqrt((n.v)^2 (1 - a^2) + a^2) + n.v sqrt((n.l)^2 (1 - a^2) + a^2))
 *   F = F0 + (1 - F0) (1 - |v.h|)^5
 * n.l and n.v clamped to [0, 1]; 0 where n.l or n.v is 0. Symmetric in l and v, bit for
 * bit. As the specification's mix weights the diffuse term by 1 - F(v.h), a white
 * dielectric seen at grazing angles reflects more than it receives (the integral of
 * f cos is 1.35 at 80 degrees, roughness 0.05); metals stay at or below 1. */
void sh_pbr_brdf(const sh_surface *s, const float l[3], const float v[3], float f[3]);

/* One point light's term at p seen from unit direction view (towards the eye):
 * pi * f * n.l * colour into out. Returns false (out untouched) when the light is behind
 * the surface (n.l <= 0), as sh_blinn_phong does: the ray tracer casts no shadow ray. */
bool sh_pbr_light(const sh_surface *s, const float p[3], const float view[3],
                  const sc_light *l, float out[3]);

/* The ambient term for ambient level A: A * occlusion * (c_diff (1 - F0) + F0). */
void sh_pbr_ambient(const sh_surface *s, float ambient, float out[3]);

/* What a surface shows without shadows or reflections: its ambient term, its emissive and
 * each of nlights lights' sh_pbr_light, summed in that order into rgb (linear). The raster
 * graphs' colour of a metallic-roughness fragment. */
void sh_pbr_shade_local(const sh_surface *s, const float p[3], const float view[3],
                        const sc_light *lights, int nlights, float ambient, float rgb[3]);

/* The weight of the ray tracer's mirror ray off a metallic-roughness surface (glTF has
 * no reflectivity; the material's `reflectivity` is not used): the Fresnel reflectance
 * Schlick(F0, n.v) of the specular lobe, times (1 - roughness)^2 so that only smooth
 * surfaces mirror their surroundings (a rough lobe would blur them past recognition, and
 * its light reaches the image through the ambient term instead). An approximation of the
 * lobe by its mirror direction, not part of the glTF specification. */
void sh_pbr_reflectance(const sh_surface *s, const float view[3], float w[3]);

#endif

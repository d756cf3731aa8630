/* ray_shading.c — shading of ray hits (Blinn-Phong, or glTF metallic-roughness through
 * shaders/pbr.h) with albedo textures at the ray cone's level of detail, shadow and
 * reflection rays, and rays on through blended surfaces. */
#include "shaders/ray_shading.h"

#include "shaders/blinn_phong.h"
#include "shaders/lighting.h"
#include "shaders/pbr.h"
#include "shaders/texture_sample.h"
#include "shaders/uv_sets.h"

#include <math.h>
#include <string.h>


void sh_ray_env_init(sh_ray_env *e, const sc_scene *s, const sc_geometry *g,
                     const sc_camera_frame *f)
{
    memset(e, 0, sizeof *e);
    e->scene = s;
    e->geo = g;
    e->nlights = sh_lights_of(s, f->eye, e->lights);
    e->ambient = SH_AMBIENT;
    e->background[0] = e->background[1] = e->background[2] = SH_BACKGROUND;
    sh_view_extent x = sh_view_extent_of(g, f);
    e->eps = (x.diagonal > 0 ? x.diagonal : 1.0f) * 1e-4f;
    memcpy(e->forward, f->forward, sizeof e->forward);
    e->isa = rt_isa_best();
    /* Depth AOV range: the bounding box's extent along the view axis. */
    e->depth_near = x.nearest > 0 ? x.nearest : 0;
    e->depth_far = x.farthest > e->depth_near ? x.farthest : e->depth_near + 1;
}

void sh_ray_hit_normal(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, float n[3])
{
    const uint32_t *idx = e->geo->indices + 3 * (size_t)hit->prim;
    float w0 = 1.0f - hit->u - hit->v;
    for (int i = 0; i < 3; i++)
        n[i] = w0 * e->geo->normals[3 * idx[0] + i] + hit->u * e->geo->normals[3 * idx[1] + i] +
               hit->v * e->geo->normals[3 * idx[2] + i];
    sh_normalize3(n);
    if (sh_dot3(n, ray->dir) > 0) { n[0] = -n[0]; n[1] = -n[1]; n[2] = -n[2]; }
}

/* The hit's material (inline here: Shade asks once per hit). */
static inline const sc_material *material_of(const sh_ray_env *e, const rt_hit *hit)
{
    uint32_t m = e->geo->materials ? e->geo->materials[hit->prim] : UINT32_MAX;
    return m < e->scene->nmaterials ? &e->scene->materials[m] : &sh_default_material;
}

const sc_material *sh_ray_hit_material(const sh_ray_env *e, const rt_hit *hit)
{
    return material_of(e, hit);
}

/* A shadow ray from p (unit normal n facing the ray) to light l, carrying `scale` x c:
 * what the light adds if it is unoccluded (t in [0, 1)). */
static void push_shadow(const sh_ray_env *e, const float p[3], const float n[3], const sc_light *l,
                        const float c[3], const float scale[3], sh_ray_result *out)
{
    int k = out->nshadow++;
    for (int i = 0; i < 3; i++) out->shadow_color[k][i] = scale[i] * c[i];
    rt_ray *r = &out->shadow[k];
    for (int i = 0; i < 3; i++) {
        r->org[i] = p[i] + n[i] * e->eps;
        r->dir[i] = l->position[i] - p[i];
    }
    r->tmin = 0.0f;
    r->tmax = 0.9999f;
}

/* One light: its Blinn-Phong term, added if the shadow ray from p to the light is
 * unoccluded. */
static void light_term(const sh_ray_env *e, const sc_material *m, const float albedo[3],
                       const float p[3], const float n[3], const float view[3],
                       const sc_light *l, const float scale[3], sh_ray_result *out)
{
    float c[3];
    if (sh_blinn_phong(p, n, view, l, albedo, m, c)) push_shadow(e, p, n, l, c, scale, out);
}

/* A mirror ray from p (offset along n, the normal facing the ray) about normal r. */
static void mirror(const sh_ray_env *e, const float p[3], const float n[3], const float r[3],
                   const float view[3], sh_ray_result *out)
{
    /* The unit direction is -view, bit for bit (negation commutes with the rounding). */
    float d[3] = {-view[0], -view[1], -view[2]};
    float dn = sh_dot3(d, r);
    for (int i = 0; i < 3; i++) {
        out->reflected.org[i] = p[i] + n[i] * e->eps;
        out->reflected.dir[i] = d[i] - 2.0f * dn * r[i];
    }
    out->reflected.tmin = 0.0f;
    out->reflected.tmax = INFINITY;
}

/* A metallic-roughness hit (shaders/pbr.h), weighted w: the surface gathered at the
 * hit with the cone's footprint (width at the hit), its ambient and emissive terms now,
 * a shadow ray per light it faces carrying sh_pbr_light, and a mirror ray weighted
 * sh_pbr_reflectance about the (normal-mapped) shading normal. Without shadows or
 * reflections (--bounces 0, nothing between surface and lights) this is the raster
 * graphs' sh_pbr_shade_local. */
static void shade_metallic_roughness(const sh_ray_env *e, const sc_material *m, const rt_ray *ray,
                                     const rt_hit *hit, const float p[3], const float n[3],
                                     const float view[3], float width, const sh_lod *quad,
                                     const float w[3], sh_ray_result *out)
{
    sh_surface_in in;
    sh_surface_in_of_hit(e->geo, hit->prim, hit->u, hit->v, ray->dir, width, &in);
    if (quad) in.lod = *quad;             /* set 0's derivatives: set 1 keeps its cone's */
    in.facing = sh_dot3(in.n, ray->dir) > 0 ? -1.0f : 1.0f;
    sh_surface s;
    sh_surface_gather(e->scene, m, &in, &s);
    float amb[3], rw[3];
    sh_pbr_ambient(&s, e->ambient, amb);
    for (int i = 0; i < 3; i++) out->direct[i] = w[i] * (amb[i] + s.emissive[i]);
    for (int l = 0; l < e->nlights; l++) {
        float c[3];
        if (sh_pbr_light(&s, p, view, &e->lights[l], c)) push_shadow(e, p, n, &e->lights[l], c, w, out);
    }
    sh_pbr_reflectance(&s, view, rw);
    out->reflect = rw[0] > 0 || rw[1] > 0 || rw[2] > 0;
    if (!out->reflect) return;
    mirror(e, p, n, s.n, view, out);
    /* A normal map tilted far from the surface can send the mirror ray into it: then
     * the surface's own normal reflects it instead. */
    if (sh_dot3(out->reflected.dir, n) <= 0.0f) mirror(e, p, n, n, view, out);
    for (int i = 0; i < 3; i++) out->reflect_weight[i] = w[i] * rw[i];
}

/* The hit's interpolated texture coordinates of array tc (before any transform) and the ray
 * cone's footprint there (pbr.h: SH_LOD_CONE, Ray Tracing Gems ch. 20, eq. 34: the
 * triangle's uv area over its world area, twice each (their ratio is what counts), the
 * cone's width at the hit distance, the cosine between the ray and the geometric
 * normal), for sh_surface_lod to turn into each texture's level of detail. */
static void hit_footprint(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, rt_cone cone,
                          const float *tc, float uv[2], sh_lod *q)
{
    const uint32_t *idx = e->geo->indices + 3 * (size_t)hit->prim;
    const float *p[3], *t[3];
    for (int k = 0; k < 3; k++) {
        p[k] = e->geo->positions + 3 * (size_t)idx[k];
        t[k] = tc + 2 * (size_t)idx[k];
    }
    float w0 = 1.0f - hit->u - hit->v;
    for (int i = 0; i < 2; i++) uv[i] = w0 * t[0][i] + hit->u * t[1][i] + hit->v * t[2][i];
    float e1[3], e2[3], g[3];
    for (int i = 0; i < 3; i++) { e1[i] = p[1][i] - p[0][i]; e2[i] = p[2][i] - p[0][i]; }
    g[0] = e1[1] * e2[2] - e1[2] * e2[1];
    g[1] = e1[2] * e2[0] - e1[0] * e2[2];
    g[2] = e1[0] * e2[1] - e1[1] * e2[0];
    float world2 = sqrtf(sh_dot3(g, g));
    float dlen = sqrtf(sh_dot3(ray->dir, ray->dir));
    *q = (sh_lod){.kind = SH_LOD_CONE,
                  .uv_area = (t[1][0] - t[0][0]) * (t[2][1] - t[0][1]) - (t[2][0] - t[0][0]) * (t[1][1] - t[0][1]),
                  .world_area = world2,
                  .cone_width = rt_cone_width_at(cone, hit->t),
                  .cos_theta = sh_dot3(g, ray->dir) / (world2 * dlen)};
}

/* The footprint of a pixel's 2x2 quad (sh_ray_shade_quad's derivatives). */
static sh_lod quad_lod(const float d[4])
{
    return (sh_lod){.kind = SH_LOD_QUAD, .dudx = d[0], .dvdx = d[1], .dudy = d[2], .dvdy = d[3]};
}

/* sh_ray_surface for the hit's material m, its textures at the footprint of `quad`
 * (NULL: of the ray cone). */
static inline void surface_of(const sh_ray_env *e, const sc_material *m, const rt_ray *ray,
                              const rt_hit *hit, rt_cone cone, const sh_lod *quad, float rgba[4])
{
    for (int i = 0; i < 3; i++) rgba[i] = m->albedo[i];
    rgba[3] = m->alpha;
    if (m->albedo_map.texture < 0) return;                /* the common case: no call */
    const sc_texture *tex = sh_texture_of(e->scene, &m->albedo_map);
    const float *tc = sh_uv_array(e->geo, &m->albedo_map);
    if (!tex || !tc) return;
    float uv[2], texel[4];
    sh_lod q;
    hit_footprint(e, ray, hit, cone, tc, uv, &q);
    if (quad && !sh_reads_set1(e->geo, &m->albedo_map)) q = *quad;   /* the quad's are set 0's */
    float lod = sh_surface_lod(&q, &m->albedo_map, tex);
    sh_texture_transform(&m->albedo_map, &uv[0], &uv[1]);
    sh_texture_sample_on(e->isa, tex, &m->albedo_map.sampler, uv[0], uv[1], lod, texel);
    for (int i = 0; i < 4; i++) rgba[i] *= texel[i];
}

void sh_ray_surface(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, rt_cone cone,
                    float rgba[4])
{
    surface_of(e, material_of(e, hit), ray, hit, cone, NULL, rgba);
}

/* Alpha a in 0..1 (NaN: fully transparent). */
static inline float alpha_of(float a)
{
    return a > 0.0f ? (a < 1.0f ? a : 1.0f) : 0.0f;
}

/* The ray on through a blended surface at p: the same line, from a point along it that
 * lies eps beyond the surface (the step grows as the ray grazes it, up to 100 eps). An
 * offset along the normal would move the line sideways, and what lies behind the
 * surface would be seen shifted by up to eps. */
static void pass_ray(const sh_ray_env *e, const rt_ray *ray, const float p[3], const float n[3],
                     rt_ray *passed)
{
    float len = sqrtf(sh_dot3(ray->dir, ray->dir));
    float cosine = len > 0.0f ? fabsf(sh_dot3(n, ray->dir)) / len : 1.0f;
    float step = len > 0.0f ? e->eps / fmaxf(cosine, 0.01f) / len : 0.0f;
    for (int i = 0; i < 3; i++) {
        passed->org[i] = p[i] + ray->dir[i] * step;
        passed->dir[i] = ray->dir[i];
    }
    passed->tmin = 0.0f;
    passed->tmax = INFINITY;
}

void sh_ray_pass(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, rt_cone cone,
                 rt_ray *passed, rt_cone *next)
{
    float n[3], p[3];
    sh_ray_hit_normal(e, ray, hit, n);
    for (int i = 0; i < 3; i++) p[i] = ray->org[i] + hit->t * ray->dir[i];
    pass_ray(e, ray, p, n, passed);
    *next = rt_cone_at_hit(cone, ray, hit->t, ray->dir);
}

float sh_ray_transmittance(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit)
{
    const sc_material *m = material_of(e, hit);
    if (m->alpha_mode != SC_ALPHA_BLEND) return 0.0f;
    float base[4];
    surface_of(e, m, ray, hit, (rt_cone){0.0f, 0.0f}, NULL, base);
    return 1.0f - alpha_of(base[3]);
}

bool sh_ray_scene_blends(const sc_scene *s)
{
    for (size_t i = 0; i < s->nmaterials; i++)
        if (s->materials[i].alpha_mode == SC_ALPHA_BLEND) return true;
    return false;
}

bool sh_ray_blended(const sh_ray_env *e, const rt_hit *hit, const float rgba[4], float *alpha)
{
    if (material_of(e, hit)->alpha_mode != SC_ALPHA_BLEND) return false;
    *alpha = alpha_of(rgba[3]);
    return true;
}

/* sh_ray_shade_cone, its textures at the footprint of `quad` (NULL: of the cone); a
 * blended surface weighted by its alpha (`composite`) or left for the caller to blend
 * (sh_ray_shade_layer). */
static void shade(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, const float weight[3],
                  rt_cone cone, const sh_lod *quad, bool composite, sh_ray_result *out)
{
    const sc_material *m = material_of(e, hit);
    float n[3], p[3], view[3], base[4];
    sh_ray_hit_normal(e, ray, hit, n);
    for (int i = 0; i < 3; i++) {
        p[i] = ray->org[i] + hit->t * ray->dir[i];
        view[i] = -ray->dir[i];
    }
    surface_of(e, m, ray, hit, cone, quad, base);
    out->pass = m->alpha_mode == SC_ALPHA_BLEND;
    float w[3] = {weight[0], weight[1], weight[2]};
    out->alpha = 1.0f;
    if (out->pass) {
        float a = out->alpha = alpha_of(base[3]);
        pass_ray(e, ray, p, n, &out->passed);
        for (int i = 0; i < 3; i++) {
            out->pass_weight[i] = composite ? weight[i] * (1.0f - a) : weight[i];
            w[i] = composite ? weight[i] * a : weight[i];
        }
    }
    sh_normalize3(view);
    out->nshadow = 0;
    if (m->model == SC_SHADING_METALLIC_ROUGHNESS) {
        shade_metallic_roughness(e, m, ray, hit, p, n, view, rt_cone_width_at(cone, hit->t),
                                 quad, w, out);
        return;
    }
    float local = 1.0f - m->reflectivity, scale[3];
    for (int i = 0; i < 3; i++) {
        scale[i] = w[i] * local;
        out->direct[i] = scale[i] * e->ambient * base[i];
    }
    for (int l = 0; l < e->nlights; l++) light_term(e, m, base, p, n, view, &e->lights[l], scale, out);
    out->reflect = m->reflectivity > 0;
    if (!out->reflect) return;
    mirror(e, p, n, n, view, out);
    for (int i = 0; i < 3; i++) out->reflect_weight[i] = w[i] * m->reflectivity;
}

void sh_ray_shade_cone(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                       const float weight[3], int depth, rt_cone cone, sh_ray_result *out)
{
    (void)depth;
    shade(e, ray, hit, weight, cone, NULL, true, out);
}

void sh_ray_shade_quad(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                       const float weight[3], const float quad[4], sh_ray_result *out)
{
    const sh_lod q = quad_lod(quad);
    shade(e, ray, hit, weight, (rt_cone){0.0f, 0.0f}, &q, true, out);
}

void sh_ray_shade_layer(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                        const float weight[3], rt_cone cone, const float *quad, sh_ray_result *out)
{
    const sh_lod q = quad ? quad_lod(quad) : (sh_lod){0};
    shade(e, ray, hit, weight, cone, quad ? &q : NULL, false, out);
}

void sh_ray_shade(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                  const float weight[3], int depth, sh_ray_result *out)
{
    sh_ray_shade_cone(e, ray, hit, weight, depth, (rt_cone){0.0f, 0.0f}, out);
}

void sh_ray_aov(const sh_ray_env *e, sh_aov aov, const rt_ray *ray, const rt_hit *hit,
                float rgb[3])
{
    if (aov == SH_AOV_PRIMID) {
        uint8_t b[4];
        sh_encode_primid(hit->prim + 1, b);
        for (int i = 0; i < 3; i++) rgb[i] = b[i];
    } else if (aov == SH_AOV_DEPTH) {
        float z = hit->t * sh_dot3(ray->dir, e->forward);
        float v = (z - e->depth_near) / (e->depth_far - e->depth_near);
        rgb[0] = rgb[1] = rgb[2] = 1.0f - fminf(fmaxf(v, 0.0f), 1.0f);
    } else if (aov == SH_AOV_ALBEDO) {
        float base[4];
        sh_ray_surface(e, ray, hit, (rt_cone){0.0f, 0.0f}, base);
        for (int i = 0; i < 3; i++) rgb[i] = base[i];
    } else {
        float n[3];
        sh_ray_hit_normal(e, ray, hit, n);
        for (int i = 0; i < 3; i++) rgb[i] = n[i] * 0.5f + 0.5f;
    }
}

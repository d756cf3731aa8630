/* ray_shading.c — Blinn-Phong shading of ray hits with shadow and reflection rays. */
#include "shaders/ray_shading.h"

#include "shaders/blinn_phong.h"
#include "shaders/lighting.h"
#include "shaders/pbr.h"
#include "shaders/texture_sample.h"

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

const sc_material *sh_ray_hit_material(const sh_ray_env *e, const rt_hit *hit)
{
    uint32_t m = e->geo->materials ? e->geo->materials[hit->prim] : UINT32_MAX;
    return m < e->scene->nmaterials ? &e->scene->materials[m] : &sh_default_material;
}

/* One light: its Blinn-Phong term, added if the shadow ray from p to the light (t in
 * [0, 1)) is unoccluded. */
static void light_term(const sh_ray_env *e, const sc_material *m, const float albedo[3],
                       const float p[3], const float n[3], const float view[3],
                       const sc_light *l, const float scale[3], sh_ray_result *out)
{
    float c[3];
    if (!sh_blinn_phong(p, n, view, l, albedo, m, c)) return;
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

/* The hit's interpolated texture coordinates (set 0, before any transform) and the ray
 * cone's footprint there (pbr.h: SH_LOD_CONE, Ray Tracing Gems ch. 20, eq. 34: the
 * triangle's uv area over its world area, twice each (their ratio is what counts), the
 * cone's width at the hit distance, the cosine between the ray and the geometric
 * normal), for sh_surface_lod to turn into each texture's level of detail. */
static void hit_footprint(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, rt_cone cone,
                          float uv[2], sh_lod *q)
{
    const uint32_t *idx = e->geo->indices + 3 * (size_t)hit->prim;
    const float *p[3], *t[3];
    for (int k = 0; k < 3; k++) {
        p[k] = e->geo->positions + 3 * (size_t)idx[k];
        t[k] = e->geo->texcoords + 2 * (size_t)idx[k];
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
                  .cone_width = rt_cone_width_at(cone, hit->t * dlen),
                  .cos_theta = sh_dot3(g, ray->dir) / (world2 * dlen)};
}

void sh_ray_surface(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit, rt_cone cone,
                    float rgba[4])
{
    const sc_material *m = sh_ray_hit_material(e, hit);
    for (int i = 0; i < 3; i++) rgba[i] = m->albedo[i];
    rgba[3] = m->alpha;
    const sc_texture *tex = sh_texture_of(e->scene, &m->albedo_map);
    if (!tex || !e->geo->texcoords) return;
    float uv[2], texel[4];
    sh_lod q;
    hit_footprint(e, ray, hit, cone, uv, &q);
    float lod = sh_surface_lod(&q, &m->albedo_map, tex);
    sh_texture_transform(&m->albedo_map, &uv[0], &uv[1]);
    sh_texture_sample(tex, &m->albedo_map.sampler, uv[0], uv[1], lod, texel);
    for (int i = 0; i < 4; i++) rgba[i] *= texel[i];
}

/* The cone's width at the hit, the same spread. */
static rt_cone cone_at_hit(const rt_ray *ray, const rt_hit *hit, rt_cone cone)
{
    return (rt_cone){rt_cone_width_at(cone, hit->t * sqrtf(sh_dot3(ray->dir, ray->dir))),
                     cone.spread};
}

static void pass_ray(const sh_ray_env *e, const rt_ray *ray, const float p[3], const float n[3],
                     rt_ray *passed)
{
    for (int i = 0; i < 3; i++) {
        passed->org[i] = p[i] - n[i] * e->eps;
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
    *next = cone_at_hit(ray, hit, cone);
}

bool sh_ray_blended(const sh_ray_env *e, const rt_hit *hit, const float rgba[4], float *alpha)
{
    if (sh_ray_hit_material(e, hit)->alpha_mode != SC_ALPHA_BLEND) return false;
    float a = rgba[3];
    *alpha = a > 0.0f ? (a < 1.0f ? a : 1.0f) : 0.0f;   /* NaN: fully transparent */
    return true;
}

void sh_ray_shade_cone(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                       const float weight[3], int depth, rt_cone cone, sh_ray_result *out)
{
    (void)depth;
    const sc_material *m = sh_ray_hit_material(e, hit);
    float n[3], p[3], view[3], base[4], a = 1.0f;
    sh_ray_hit_normal(e, ray, hit, n);
    for (int i = 0; i < 3; i++) {
        p[i] = ray->org[i] + hit->t * ray->dir[i];
        view[i] = -ray->dir[i];
    }
    sh_ray_surface(e, ray, hit, cone, base);
    out->pass = sh_ray_blended(e, hit, base, &a);
    float w[3] = {weight[0], weight[1], weight[2]};
    if (out->pass) {
        pass_ray(e, ray, p, n, &out->passed);
        for (int i = 0; i < 3; i++) {
            out->pass_weight[i] = weight[i] * (1.0f - a);
            w[i] = weight[i] * a;
        }
    }
    out->cone = cone_at_hit(ray, hit, cone);
    sh_normalize3(view);
    float local = 1.0f - m->reflectivity, scale[3];
    out->nshadow = 0;
    for (int i = 0; i < 3; i++) {
        scale[i] = w[i] * local;
        out->direct[i] = scale[i] * e->ambient * base[i];
    }
    for (int l = 0; l < e->nlights; l++) light_term(e, m, base, p, n, view, &e->lights[l], scale, out);
    out->reflect = m->reflectivity > 0;
    if (!out->reflect) return;
    /* The unit direction is -view, bit for bit (negation commutes with the rounding). */
    float d[3] = {-view[0], -view[1], -view[2]};
    float dn = sh_dot3(d, n);
    for (int i = 0; i < 3; i++) {
        out->reflected.org[i] = p[i] + n[i] * e->eps;
        out->reflected.dir[i] = d[i] - 2.0f * dn * n[i];
        out->reflect_weight[i] = w[i] * m->reflectivity;
    }
    out->reflected.tmin = 0.0f;
    out->reflected.tmax = INFINITY;
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

/* ray_shading.c — Blinn-Phong shading of ray hits with shadow and reflection rays. */
#include "shaders/ray_shading.h"

#include "shaders/blinn_phong.h"
#include "shaders/lighting.h"

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
static void light_term(const sh_ray_env *e, const sc_material *m, const float p[3],
                       const float n[3], const float view[3], const sc_light *l,
                       const float scale[3], sh_ray_result *out)
{
    float c[3];
    if (!sh_blinn_phong(p, n, view, l, m->albedo, m, c)) return;
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

void sh_ray_shade(const sh_ray_env *e, const rt_ray *ray, const rt_hit *hit,
                  const float weight[3], int depth, sh_ray_result *out)
{
    (void)depth;
    const sc_material *m = sh_ray_hit_material(e, hit);
    float n[3], p[3], view[3];
    sh_ray_hit_normal(e, ray, hit, n);
    for (int i = 0; i < 3; i++) {
        p[i] = ray->org[i] + hit->t * ray->dir[i];
        view[i] = -ray->dir[i];
    }
    sh_normalize3(view);
    float local = 1.0f - m->reflectivity, scale[3];
    out->nshadow = 0;
    for (int i = 0; i < 3; i++) {
        scale[i] = weight[i] * local;
        out->direct[i] = scale[i] * e->ambient * m->albedo[i];
    }
    for (int l = 0; l < e->nlights; l++) light_term(e, m, p, n, view, &e->lights[l], scale, out);
    out->reflect = m->reflectivity > 0;
    if (!out->reflect) return;
    /* The unit direction is -view, bit for bit (negation commutes with the rounding). */
    float d[3] = {-view[0], -view[1], -view[2]};
    float dn = sh_dot3(d, n);
    for (int i = 0; i < 3; i++) {
        out->reflected.org[i] = p[i] + n[i] * e->eps;
        out->reflected.dir[i] = d[i] - 2.0f * dn * n[i];
        out->reflect_weight[i] = weight[i] * m->reflectivity;
    }
    out->reflected.tmin = 0.0f;
    out->reflected.tmax = INFINITY;
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
    } else {
        float n[3];
        sh_ray_hit_normal(e, ray, hit, n);
        for (int i = 0; i < 3; i++) rgb[i] = n[i] * 0.5f + 0.5f;
    }
}

/* raster_shading.c — vertex transform and per-pixel Blinn-Phong (see the header). */
#include "shaders/raster_shading.h"

#include "shaders/blinn_phong.h"

#include <math.h>
#include <string.h>


static void depth_range(sh_raster_env *e, const sc_geometry *g)
{
    float lo = INFINITY, hi = -INFINITY, d[3], diag;
    for (int i = 0; i < 3; i++) d[i] = g->bbox_max[i] - g->bbox_min[i];
    diag = sqrtf(sh_dot3(d, d));
    for (int k = 0; k < 8; k++) {
        float c[3] = {k & 1 ? g->bbox_max[0] : g->bbox_min[0], k & 2 ? g->bbox_max[1] : g->bbox_min[1],
                      k & 4 ? g->bbox_max[2] : g->bbox_min[2]};
        float v[3] = {c[0] - e->frame.eye[0], c[1] - e->frame.eye[1], c[2] - e->frame.eye[2]};
        float z = sh_dot3(v, e->frame.forward);
        lo = fminf(lo, z);
        hi = fmaxf(hi, z);
    }
    if (!(diag > 0)) diag = 1;
    e->near = lo > diag * 1e-3f ? lo * 0.9f : diag * 1e-3f;
    e->far = hi > e->near ? hi * 1.01f + diag * 1e-3f : e->near + diag;
}

void sh_raster_env_init(sh_raster_env *e, const sc_scene *s, const sc_geometry *g,
                        int width, int height, pl_aov aov)
{
    memset(e, 0, sizeof *e);
    e->scene = s;
    e->geo = g;
    e->aov = aov;
    pl_camera_frame_init(&e->frame, &s->camera, width, height);
    depth_range(e, g);
    e->nlights = (int)(s->nlights < SH_MAX_LIGHTS ? s->nlights : SH_MAX_LIGHTS);
    memcpy(e->lights, s->lights, (size_t)e->nlights * sizeof *e->lights);
    if (e->nlights == 0) {
        memcpy(e->lights[0].position, e->frame.eye, sizeof e->frame.eye);
        e->lights[0].color[0] = e->lights[0].color[1] = e->lights[0].color[2] = 1;
        e->nlights = 1;
    }
    e->ambient = 0.1f;
    e->background[0] = e->background[1] = e->background[2] = 0.05f;
}

/* Camera space: x right, y up, depth along the view direction; OpenGL projection. */
static void to_clip(const sh_raster_env *e, const float p[3], float clip[4])
{
    float d[3] = {p[0] - e->frame.eye[0], p[1] - e->frame.eye[1], p[2] - e->frame.eye[2]};
    float depth = sh_dot3(d, e->frame.forward), n = e->near, f = e->far;
    clip[0] = sh_dot3(d, e->frame.right) / e->frame.half_w;
    clip[1] = sh_dot3(d, e->frame.up) / e->frame.half_h;
    clip[2] = (f + n) / (f - n) * depth - 2.0f * f * n / (f - n);
    clip[3] = depth;
}

void sh_vs_triangles(const sh_raster_env *e, uint32_t first, uint32_t n, rs_triangle *out)
{
    const sc_geometry *g = e->geo;
    for (uint32_t t = 0; t < n; t++) {
        uint32_t prim = first + t;
        rs_triangle *o = &out[t];
        o->prim = prim;
        o->material = g->materials[prim];
        for (int k = 0; k < 3; k++) {
            uint32_t v = g->indices[3 * (size_t)prim + k];
            const float *p = g->positions + 3 * (size_t)v, *nn = g->normals + 3 * (size_t)v;
            to_clip(e, p, o->v[k].clip);
            memcpy(o->v[k].attr, p, 3 * sizeof(float));
            memcpy(o->v[k].attr + 3, nn, 3 * sizeof(float));
            memcpy(o->v[k].attr + 6, g->texcoords + 2 * (size_t)v, 2 * sizeof(float));
        }
    }
}

static uint32_t pack_rgb(const float c[3])
{
    return (uint32_t)pl_to_srgb8(c[0]) | (uint32_t)pl_to_srgb8(c[1]) << 8 |
           (uint32_t)pl_to_srgb8(c[2]) << 16 | 0xff000000u;
}

static void albedo_at(const sh_raster_env *e, const sc_material *m, const float uv[2], float out[3])
{
    memcpy(out, m->albedo, 3 * sizeof(float));
    if (m->texture < 0 || (size_t)m->texture >= e->scene->ntextures) return;
    const sc_texture *t = &e->scene->textures[m->texture];
    float u = uv[0] - floorf(uv[0]), v = uv[1] - floorf(uv[1]);
    int x = (int)(u * t->width), y = (int)((1.0f - v) * t->height);
    if (x >= t->width) x = t->width - 1;
    if (y >= t->height) y = t->height - 1;
    const unsigned char *px = t->rgba + 4 * ((size_t)y * t->width + x);
    for (int i = 0; i < 3; i++) out[i] *= px[i] / 255.0f;
}

static uint32_t shade(const sh_raster_env *e, const rs_triangle *t, const float a[RS_ATTRS])
{
    const sc_material *m = t->material < e->scene->nmaterials ? &e->scene->materials[t->material]
                                                               : &sh_default_material;
    float n[3] = {a[3], a[4], a[5]}, view[3], albedo[3], c[3], l[3];
    for (int i = 0; i < 3; i++) view[i] = e->frame.eye[i] - a[i];
    sh_normalize3(n);
    sh_normalize3(view);
    if (sh_dot3(n, view) < 0) { n[0] = -n[0]; n[1] = -n[1]; n[2] = -n[2]; }   /* two-sided */
    albedo_at(e, m, a + 6, albedo);
    for (int i = 0; i < 3; i++) c[i] = e->ambient * albedo[i];
    for (int k = 0; k < e->nlights; k++)
        if (sh_blinn_phong(a, n, view, &e->lights[k], albedo, m, l))
            for (int i = 0; i < 3; i++) c[i] += l[i];
    return pack_rgb(c);
}

uint32_t sh_ps_fragment(const sh_raster_env *e, const rs_triangle *t, const rs_setup *s,
                        const rs_fragment *f)
{
    if (e->aov == PL_AOV_PRIMID) {
        uint8_t b[4];
        pl_encode_primid(t->prim + 1, b);
        return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | 0xff000000u;
    }
    float a[RS_ATTRS];
    rs_interpolate(t, s, f, a);
    if (e->aov == PL_AOV_DEPTH) {
        float d[3] = {a[0] - e->frame.eye[0], a[1] - e->frame.eye[1], a[2] - e->frame.eye[2]};
        float v = 1.0f - (sh_dot3(d, e->frame.forward) - e->near) / (e->far - e->near);
        uint32_t g = (uint32_t)(fminf(fmaxf(v, 0), 1) * 255.0f + 0.5f);
        return g | g << 8 | g << 16 | 0xff000000u;
    }
    if (e->aov == PL_AOV_NORMAL) {
        float n[3] = {a[3], a[4], a[5]};
        sh_normalize3(n);
        uint32_t r = 0;
        for (int i = 0; i < 3; i++) r |= (uint32_t)((n[i] * 0.5f + 0.5f) * 255.0f + 0.5f) << (8 * i);
        return r | 0xff000000u;
    }
    return shade(e, t, a);
}

uint32_t sh_background(const sh_raster_env *e)
{
    if (e->aov == PL_AOV_COLOR) return pack_rgb(e->background);
    return 0xff000000u;
}

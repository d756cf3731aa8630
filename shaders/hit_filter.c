/* hit_filter.c — see hit_filter.h. */
#include "shaders/hit_filter.h"

#include "shaders/texture_sample.h"
#include "shaders/uv_sets.h"

#include <stddef.h>
#include <stdlib.h>

enum { FILTER_MASK = 1, FILTER_ONE_SIDED = 2 };

struct sh_hit_filter {
    rt_hit_filter base;                   /* first: the kernels' pointer is the filter's */
    const sc_scene *scene;
    const sc_geometry *geo;
    uint8_t *flags;                       /* per material: FILTER_* */
};

static uint8_t flags_of(const sc_material *m)
{
    return (uint8_t)((m->alpha_mode == SC_ALPHA_MASK ? FILTER_MASK : 0) |
                     (!m->double_sided ? FILTER_ONE_SIDED : 0));
}

bool sh_hit_filter_needed(const sc_scene *s)
{
    for (size_t m = 0; s && m < s->nmaterials; m++)
        if (flags_of(&s->materials[m])) return true;
    return false;
}

static const float *vertex(const sc_geometry *g, uint32_t tri, int k)
{
    return g->positions + 3 * (size_t)g->indices[3 * (size_t)tri + (size_t)k];
}

static bool back_facing(const sc_geometry *g, uint32_t tri, const float org[3])
{
    const float *a = vertex(g, tri, 0), *b = vertex(g, tri, 1), *c = vertex(g, tri, 2);
    float e1[3], e2[3], to[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = b[k] - a[k];
        e2[k] = c[k] - a[k];
        to[k] = a[k] - org[k];
    }
    float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                  e1[0] * e2[1] - e1[1] * e2[0]};
    /* the ray travels from org towards the plane: along n means it meets the back */
    return n[0] * to[0] + n[1] * to[1] + n[2] * to[2] > 0;
}

static bool alpha_passes(const sh_hit_filter *f, const sc_material *m, uint32_t tri, float u,
                         float v)
{
    float alpha = m->alpha;
    const sc_texture *tex = sh_texture_of(f->scene, &m->albedo_map);
    if (tex) {
        const sc_geometry *g = f->geo;
        const uint32_t *ix = g->indices + 3 * (size_t)tri;
        const float *tc = sh_uv_array(g, &m->albedo_map);
        const float *t0 = tc + 2 * (size_t)ix[0], *t1 = tc + 2 * (size_t)ix[1], *t2 = tc + 2 * (size_t)ix[2];
        const float w = 1.0f - u - v;
        float s = w * t0[0] + u * t1[0] + v * t2[0];
        float t = w * t0[1] + u * t1[1] + v * t2[1];
        sh_texture_transform(&m->albedo_map, &s, &t);
        float texel[4];
        sh_texture_sample(tex, &m->albedo_map.sampler, s, t, 0.0f, texel);
        alpha *= texel[3];
    }
    return alpha >= m->alpha_cutoff;
}

static int accept(const rt_hit_filter *base, uint32_t prim, float u, float v, const float org[3])
{
    const sh_hit_filter *f = (const sh_hit_filter *)base;
    if (prim >= f->geo->ntriangles) return 1;
    const uint32_t m = f->geo->materials[prim];
    if (m >= f->scene->nmaterials) return 1;
    const uint8_t flags = f->flags[m];
    if (!flags) return 1;
    if ((flags & FILTER_ONE_SIDED) && back_facing(f->geo, prim, org)) return 0;
    if ((flags & FILTER_MASK) && !alpha_passes(f, &f->scene->materials[m], prim, u, v)) return 0;
    return 1;
}

sh_hit_filter *sh_hit_filter_new(const sc_scene *s, const sc_geometry *g, bool *oom)
{
    if (oom) *oom = false;
    if (!s || !g || !sh_hit_filter_needed(s)) return NULL;
    sh_hit_filter *f = calloc(1, sizeof *f);
    uint8_t *flags = malloc(s->nmaterials);
    if (!f || !flags) {
        free(f);
        free(flags);
        if (oom) *oom = true;
        return NULL;
    }
    for (size_t m = 0; m < s->nmaterials; m++) flags[m] = flags_of(&s->materials[m]);
    *f = (sh_hit_filter){{accept}, s, g, flags};
    return f;
}

const rt_hit_filter *sh_hit_filter_base(const sh_hit_filter *f)
{
    return f ? &f->base : NULL;
}

void sh_hit_filter_free(sh_hit_filter *f)
{
    if (!f) return;
    free(f->flags);
    free(f);
}

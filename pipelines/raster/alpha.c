/* alpha.c — see alpha.h. */
#include "pipelines/raster/alpha.h"

#include "pipelines/raster/internal.h"

#include "shaders/pbr.h"
#include "shaders/texture_sample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

plr_alpha_info plr_alpha_info_of(const sc_scene *s)
{
    plr_alpha_info a = {false, false, false};
    for (size_t m = 0; s && m < s->nmaterials; m++) {
        a.mask |= s->materials[m].alpha_mode == SC_ALPHA_MASK;
        a.blend |= s->materials[m].alpha_mode == SC_ALPHA_BLEND;
        a.cull |= !s->materials[m].double_sided;
    }
    return a;
}

float plr_alpha_at(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2, int x, int y)
{
    const sc_material *m = plr_material(e, t->material);
    if (!m) return 1.0f;
    float alpha = m->alpha;
    const sc_texture *tex = sh_texture_of(e->scene, &m->albedo_map);
    if (!tex) return alpha;
    const float b0 = 1.0f - b1 - b2;
    float uv[3][2];
    sh_ps_tri_uvs(e, t, &m->albedo_map, uv);
    float u = b0 * uv[0][0] + b1 * uv[1][0] + b2 * uv[2][0];
    float v = b0 * uv[0][1] + b1 * uv[1][1] + b2 * uv[2][1];
    /* the PS's level of detail: its 2x2 quad's coarse derivatives (a pure function of
     * the triangle and the quad, so the same wherever the fragment is tested) */
    float d[4];
    sh_ps_quad_derivatives_of(e, t, uv, x, y, d);
    const sh_lod q = {.kind = SH_LOD_QUAD, .dudx = d[0], .dvdx = d[1], .dudy = d[2], .dvdy = d[3]};
    const float lod = sh_surface_lod(&q, &m->albedo_map, tex);
    sh_texture_transform(&m->albedo_map, &u, &v);
    float texel[4];
    sh_texture_sample(tex, &m->albedo_map.sampler, u, v, lod, texel);
    return alpha * texel[3];
}

bool plr_alpha_passes(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2, int x,
                      int y)
{
    const sc_material *m = plr_material(e, t->material);
    return !m || plr_alpha_at(e, t, b1, b2, x, y) >= m->alpha_cutoff;
}

uint8_t plr_alpha8(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2, int x, int y)
{
    return sh_to_linear8(plr_alpha_at(e, t, b1, b2, x, y));
}

int plr_depth_rect_masked(const sh_raster_env *e, const plr_prim *p, int x0, int y0, int x1,
                          int y1, rs_depth_target *t, rs_cover *buf, int cap)
{
    const rs_setup *su = &p->su;
    /* the triangle's bounds within the rectangle */
    if (x0 < su->x0) x0 = su->x0;
    if (y0 < su->y0) y0 = su->y0;
    if (x1 > su->x1 + 1) x1 = su->x1 + 1;
    if (y1 > su->y1 + 1) y1 = su->y1 + 1;
    if (x0 >= x1 || y0 >= y1) return 0;
    rs_interp ip;
    rs_interp_of(su, &ip);
    const uint32_t id = p->tri.prim + 1;
    int rows = cap / (x1 - x0) > 0 ? cap / (x1 - x0) : 1;
    int covered = 0;
    for (int ys = y0; ys < y1; ys += rows) {
        int ye = ys + rows < y1 ? ys + rows : y1;
        int xs = x0;
        while (xs < x1) {               /* a row wider than cap: pieces of it */
            int xe = ye - ys == 1 && x1 - xs > cap ? xs + cap : x1;
            int n = rs_raster_rect(su, xs, ys, xe, ye, buf);
            covered += n;
            for (int k = 0; k < n; k++) {
                const rs_cover *c = &buf[k];
                size_t at = (size_t)(c->y - t->oy) * (size_t)t->stride + (size_t)(c->x - t->ox);
                const float z = rs_depth(&ip, c->e0, c->e1), held = t->z[at];
                if (!(z < held || (z == held && (t->vis[at] == 0 || id < t->vis[at])))) continue;
                float zw, b1, b2;                 /* zw == z: the same formula */
                rs_weights(&ip, c->e0, c->e1, &zw, &b1, &b2);
                if (!plr_alpha_passes(e, &p->tri, b1, b2, c->x, c->y)) continue;
                t->z[at] = z;
                t->vis[at] = id;
                if (t->won) t->won[t->nwon++] = (int32_t)at;
            }
            xs = xe;
        }
    }
    return covered;
}

int plr_alpha_ps(const sh_raster_env *e, frag_pkt *p, const float *b1, const float *b2,
                 uint8_t *live, int n, uint8_t *a8)
{
    int kept = 0;
    const bool blends = plr_blends_aov(e);
    for (int k = 0; k < n; k++) {
        const uint32_t i = live[k];
        const sh_ps_tri *t = &p->tris[p->tri[i]];
        uint8_t a = 255;
        switch (plr_alpha_mode(e, t->material)) {
        case SC_ALPHA_MASK:
            if (!plr_alpha_passes(e, t, b1[i], b2[i], p->x[i], p->y[i])) {
                p->out.z[i] = INFINITY;
                continue;
            }
            break;
        case SC_ALPHA_BLEND:
            if (!blends) {
                p->out.z[i] = INFINITY;
                continue;
            }
            a = plr_alpha8(e, t, b1[i], b2[i], p->x[i], p->y[i]);
            break;
        default:
            break;
        }
        live[kept] = (uint8_t)i;
        a8[kept++] = a;
    }
    return kept;
}

bool plr_blend_push(plr_blend_list *l, const plr_blend_frag *f)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        plr_blend_frag *g = realloc(l->f, cap * sizeof *g);
        if (!g) return false;
        l->f = g;
        l->cap = cap;
    }
    l->f[l->n++] = *f;
    return true;
}

static int by_prim(const void *a, const void *b)
{
    const plr_blend_frag *x = a, *y = b;
    if (x->prim != y->prim) return x->prim < y->prim ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void plr_blend_sort(plr_blend_list *l)
{
    for (size_t i = 1; i < l->n; i++)
        if (by_prim(&l->f[i - 1], &l->f[i]) > 0) {
            qsort(l->f, l->n, sizeof *l->f, by_prim);
            return;
        }
}

void plr_blend_list_free(plr_blend_list *l)
{
    free(l->f);
    l->f = NULL;
    l->n = l->cap = 0;
}

/* Multisampling: each covered sample in front of the opaque depth there. */
static void om_blend_samples(const plr_state *s, const plr_blend_frag *f)
{
    const size_t at = plr_sample_at(s, f->x, f->y);
    for (unsigned m = f->cover; m; m &= m - 1) {
        const size_t k = (size_t)__builtin_ctz(m);
        if (!(f->zs[k] < s->sample_z[at + k])) continue;
        s->sample_rgba[at + k] = plr_blend(s->sample_rgba[at + k], f->rgba, f->rgba >> 24);
        if (s->sample_hdr) plr_sample_hdr_decode(s, at + k);
    }
}

void plr_om_blend(const plr_state *s, plr_blend_list *l)
{
    plr_blend_sort(l);
    if (s->msaa > 1) {
        for (size_t k = 0; k < l->n; k++) om_blend_samples(s, &l->f[k]);
        plr_blend_list_free(l);
        return;
    }
    const size_t width = (size_t)s->width;
    for (size_t k = 0; k < l->n; k++) {
        const plr_blend_frag *f = &l->f[k];
        const size_t at = f->y * width + f->x;
        uint32_t bits = atomic_load_explicit(&s->depth[at], memory_order_relaxed);
        float held;
        memcpy(&held, &bits, sizeof held);
        if (!(f->z < held)) continue;
        s->color[at] = plr_blend(s->color[at], f->rgba, f->rgba >> 24);
        if (s->hdr) plr_hdr_decode(s, f->x, f->y);
    }
    plr_blend_list_free(l);
}

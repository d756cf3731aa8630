/* raster_geometry.c — the front of the rasterization graph: Input Assembly groups, the
 * Vertex Shader (transform, clip test and triangle setup, in parallel), and Reorder,
 * which restores draw order (see raster_internal.h). */
#include "pipelines/raster_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- IA and VS ----------------------------------------------------------------------- */

void rsp_ia_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    uint32_t n = (uint32_t)s->geo->ntriangles, b = (uint32_t)s->batch;
    for (uint32_t seq = s->replica; seq < s->batches; seq += s->replicas) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        ia_pkt *p = w.mem;
        p->seq = seq;
        p->first = seq * b;
        p->count = p->first + b <= n ? b : n - p->first;
        gr_commit_out(c, 0, 1);
    }
}

/* The PS's view of a set-up triangle: attributes in the order the weights refer to. */
static void ps_tri_of(const rs_triangle *t, const rs_setup *su, sh_ps_tri *out)
{
    for (int k = 0; k < 3; k++) memcpy(out->attr[k], t->v[su->order[k]].attr, sizeof out->attr[k]);
    out->prim = t->prim;
    out->material = t->material;
}

/* Sets up a triangle that needs no clipping; false when it covers no pixel centre. */
bool rsp_setup_prim(const rsp_state *s, const rs_triangle *t, rsp_prim *out)
{
    if (!rs_setup_triangle(t, s->width, s->height, &out->su)) return false;
    ps_tri_of(t, &out->su, &out->tri);
    return true;
}

void rsp_vs_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    const ia_pkt *in = gr_input(c, NULL);
    prim_pkt *out = gr_output(c, 0);
    rs_triangle tris[MAX_BATCH];
    sh_vs_triangles(s->env, in->first, in->count, tris);
    uint32_t n = 0, set_up = 0;
    for (uint32_t i = 0; i < in->count; i++) {
        prim_rec *r = &out->rec[n];
        switch (rs_clip_classify(&tris[i])) {
        case RS_CLIP_CULLED:
            continue;
        case RS_CLIP_CUT:
            r->cut = 1;
            r->raw = tris[i];
            n++;
            break;
        case RS_CLIP_INSIDE:
            if (!rsp_setup_prim(s, &tris[i], &r->set)) continue;
            r->cut = 0;
            n++;
            set_up++;
            break;
        }
    }
    out->seq = in->seq;
    out->count = n;
    atomic_fetch_add_explicit(s->rasterized, set_up, memory_order_relaxed);
}

/* ---- Reorder --------------------------------------------------------------------------- */

static void emit_batch(gr_ctx *c, const prim_pkt *p)
{
    gr_window w;
    gr_reserve_out(c, 0, 1, &w);
    memcpy(w.mem, p, prim_pkt_bytes(p->count));
    gr_commit_out(c, 0, 1);
}

/* Holds batches that arrive early and passes them on in sequence order. */
void rsp_reorder_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    prim_pkt **held = calloc(s->batches ? s->batches : 1, sizeof *held);
    uint32_t next = 0;
    gr_window w;
    gr_assert(c, held != NULL);
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const prim_pkt *p = w.mem;
        if (p->seq == next) {
            emit_batch(c, p);
            next++;
        } else {
            held[p->seq] = malloc(prim_pkt_bytes(p->count));
            gr_assert(c, held[p->seq] != NULL);
            memcpy(held[p->seq], p, prim_pkt_bytes(p->count));
        }
        gr_commit(c, 0, 1);
        for (; next < s->batches && held[next]; next++) {
            emit_batch(c, held[next]);
            free(held[next]);
            held[next] = NULL;
        }
    }
    gr_assert(c, next == s->batches);
    free(held);
}


/* geometry.c — the front of the rasterization graph: Input Assembly groups, the
 * Vertex Shader (transform, clip test and triangle setup, in parallel), and Reorder,
 * which restores draw order (see internal.h). */
#include "pipelines/raster/internal.h"

#include "pipelines/raster/alpha.h"
#include "rasterizer/setup_projected.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- IA and VS ----------------------------------------------------------------------- */

/* The replicas take the next batch from their shared cursor as they go, rather than
 * every R-th batch each: a group held back (its worker busy in a long Z-Tile or OM
 * activation) then leaves no share of its own for one worker to finish while the others
 * idle (2-3 ms at the end of the hybrid's depth pass at 2 workers). Batch numbers still
 * give draw order (Reorder, primitive ids). */
void plr_ia_main(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    uint32_t n = (uint32_t)s->geo->ntriangles, b = (uint32_t)s->batch;
    for (uint32_t seq; (seq = atomic_fetch_add_explicit(s->next_batch, 1, memory_order_relaxed)) < s->batches;) {
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

/* Sets up a triangle that needs no clipping; false when it covers no sample point. */
bool plr_setup_prim(const plr_state *s, const rs_triangle *t, plr_prim *out)
{
    if (!rs_setup_triangle_reach(t, s->width, s->height, s->reach, &out->su)) return false;
    ps_tri_of(t, &out->su, &out->tri);
    return true;
}

/* A piece of a clipped triangle (its corners in the input's winding) seen from behind. */
static bool clipped_back_facing(const plr_state *s, const rs_triangle *t)
{
    rs_screen_vertex v[3] = {{0}};
    for (int k = 0; k < 3; k++) rs_project_vertex(&t->v[k], s->width, s->height, &v[k]);
    return plr_back_facing(v[0].x, v[0].y, v[1].x, v[1].y, v[2].x, v[2].y);
}

void plr_each_prim(plr_state *s, const prim_rec *r, plr_prim_fn fn, void *arg)
{
    if (!r->cut) {
        fn(arg, &r->set);
        return;
    }
    rs_triangle clipped[RS_MAX_CLIPPED];
    int n = rs_clip(&r->raw, clipped);
    const bool cull = s->alpha.cull && plr_single_sided(s->env, r->raw.material);
    for (int k = 0; k < n; k++) {
        plr_prim p;
        if (cull && clipped_back_facing(s, &clipped[k])) continue;
        if (!plr_setup_prim(s, &clipped[k], &p)) continue;
        atomic_fetch_add_explicit(s->rasterized, 1, memory_order_relaxed);
        fn(arg, &p);
    }
}

/* Corner k's attributes of triangle prim, to be clipped: from the interleaved buffer,
 * or, in a depth-only pass that has none (it gathers the position buffer), from the
 * geometry's own arrays, the same values (rare: only triangles that cross a clip plane). */
static void vs_corner_attrs(const plr_state *s, uint32_t prim, int k, float attr[RS_ATTRS])
{
    const uint32_t vertex = s->geo->indices[3 * (size_t)prim + (size_t)k];
    if (s->vertices) sh_vs_attrs(s->vertices, vertex, attr);
    else sh_vertex_of(s->geo, vertex, attr);
}

/* Triangle j's setup (corners 3j..3j+2 of v, inside the guard band) by the scalar
 * setup; false where the setup fails it or a single-sided material faces away. */
static bool vs_set_up(const plr_state *s, const sh_vs_vertices *v, int j, uint32_t prim, rs_setup *su)
{
    const int c = 3 * j;
    rs_screen_vertex sv[3];
    for (int k = 0; k < 3; k++)
        sv[k] = (rs_screen_vertex){v->x[c + k], v->y[c + k], v->z[c + k], v->inv_w[c + k],
                                   v->clip[3][c + k] > 0};
    if (s->alpha.cull && plr_single_sided(s->env, s->geo->materials[prim]) &&
        plr_back_facing(sv[0].x, sv[0].y, sv[1].x, sv[1].y, sv[2].x, sv[2].y))
        return false;                 /* single-sided material seen from behind */
    return rs_setup_projected_body((const rs_screen_vertex *const[3]){&sv[0], &sv[1], &sv[2]},
                                   s->width, s->height, s->reach, su);
}

/* The same from the chunk's vector setups (plr_vs_setups_of): the setup's tests in its
 * terms (no pixel, a corner's w not positive, no area; back-facing is a positive area,
 * plr_back_facing's expression), the fields copied. */
static bool vs_take_setup(const plr_state *s, const sh_vs_vertices *v, int j, uint32_t prim,
                          const plr_vs_setups *setups, rs_setup *su)
{
    const int c = 3 * j;
    const int64_t area = setups->area[j];
    if ((setups->no_pixel >> j & 1) || !(v->clip[3][c] > 0 && v->clip[3][c + 1] > 0 && v->clip[3][c + 2] > 0) ||
        area == 0)
        return false;
    if (area > 0 && s->alpha.cull && plr_single_sided(s->env, s->geo->materials[prim]))
        return false;                 /* single-sided material seen from behind */
    plr_vs_setup_take(setups, v, j, su);
    return true;
}

/* Triangle prim, whose corners are vertices 3j..3j+2 of v, into r; false when it is
 * culled or covers no pixel centre. *set_up: it was set up here (not to be clipped).
 * Outcodes all zero (the common case) are rs_clip_classify_codes' RS_CLIP_INSIDE,
 * tested here without the call; such a triangle is set up from the chunk's vector
 * setups when there are some (NULL: by the scalar setup), and one that reaches no pixel
 * is dropped before its corners are copied. */
static bool vs_triangle(const plr_state *s, const sh_vs_vertices *v, int j, uint32_t prim,
                        const uint32_t *vertex, const plr_vs_setups *setups, prim_rec *r, bool *set_up)
{
    const int c = 3 * j;
    const bool inside = !(v->code[c] | v->code[c + 1] | v->code[c + 2]);
    switch (inside ? RS_CLIP_INSIDE : rs_clip_classify_codes(v->code[c], v->code[c + 1], v->code[c + 2])) {
    case RS_CLIP_CULLED:
        return false;
    case RS_CLIP_CUT:
        r->cut = 1;
        for (int k = 0; k < 3; k++) {
            for (int q = 0; q < 4; q++) r->raw.v[k].clip[q] = v->clip[q][c + k];
            vs_corner_attrs(s, prim, k, r->raw.v[k].attr);
        }
        r->raw.prim = prim;
        r->raw.material = s->geo->materials[prim];
        *set_up = false;
        return true;
    default: {
        plr_prim *p = &r->set;
        if (setups ? !vs_take_setup(s, v, j, prim, setups, &p->su) : !vs_set_up(s, v, j, prim, &p->su))
            return false;
        if (s->attributes)
            for (int k = 0; k < 3; k++) sh_vs_attrs(s->vertices, vertex[c + p->su.order[k]], p->tri.attr[k]);
        p->tri.prim = prim;
        p->tri.material = s->geo->materials[prim];
        r->cut = 0;
        *set_up = true;
        return true;
    }
    }
}

/* Asks for the cache lines of `corners` vertices (idx[k]) ahead of their gather: issued
 * before a chunk's triangles are set up, the next chunk's vertex fetch (in no useful
 * order, mostly beyond L2) overlaps that work instead of stalling the gather. */
static void prefetch_vertices(const sh_vertex *vertices, const uint32_t *idx, uint32_t corners)
{
    for (uint32_t k = 0; k < corners; k++) __builtin_prefetch(&vertices[idx[k]]);
}

/* The triangles' corners as the VS numbers them: the geometry's, or the position
 * buffer's renumbering of them in a depth-only pass that gathers it. */
static const uint32_t *vs_indices(const plr_state *s)
{
    return s->positions ? s->positions->indices : s->geo->indices;
}

/* The vertex kernel on n corners idx[0..n) (vs_indices'): from the interleaved buffer,
 * or the position buffer, read front to back and so not prefetched. */
static void vs_corners(const plr_state *s, const uint32_t *idx, int n, uint32_t next, sh_vs_vertices *v)
{
    if (s->positions) {
        sh_vs_positions_of(s->env, s->positions->positions, idx, n, s->width, s->height, v);
        return;
    }
    sh_vs_vertices_of(s->env, s->vertices, idx, n, s->width, s->height, v);
    prefetch_vertices(s->vertices, idx + n, next);
}

void plr_vs_main(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    const ia_pkt *in = gr_input(c, NULL);
    prim_pkt *out = gr_output(c, 0);
    uint32_t n = 0, set_up = 0;
    *out = (prim_pkt){in->seq, 0};
    if (!plr_check_batch(c, s, in, s->vs_room)) return;
    for (uint32_t first = 0; first < in->count; first += PLR_VS_CHUNK) {
        uint32_t count = in->count - first < PLR_VS_CHUNK ? in->count - first : PLR_VS_CHUNK;
        const uint32_t *idx = vs_indices(s) + 3 * (size_t)(in->first + first);
        const uint32_t after = in->count - first - count;
        sh_vs_vertices v;
        vs_corners(s, idx, 3 * (int)count, 3 * (after < PLR_VS_CHUNK ? after : PLR_VS_CHUNK), &v);
        plr_vs_setups setups;
        const bool vector = plr_vs_setups_of(&v, (int)count, s->width, s->height, s->reach,
                                             s->env->isa == RT_ISA_AVX2, &setups);
        for (uint32_t j = 0; j < count; j++) {
            bool inside;
            if (!vs_triangle(s, &v, (int)j, in->first + first + j, idx, vector ? &setups : NULL, &out->rec[n],
                             &inside))
                continue;
            n++;
            set_up += inside;
        }
    }
    out->seq = in->seq;
    out->count = n;
    atomic_fetch_add_explicit(s->rasterized, set_up, memory_order_relaxed);
}

/* ---- Reorder --------------------------------------------------------------------------- */

/* p on, whole: an output packet with less room (a graph whose queues disagree, which
 * reorder_create refuses) stops the run instead of being written past. */
static void emit_batch(gr_ctx *c, const prim_pkt *p)
{
    gr_window w;
    gr_reserve_out(c, 0, 1, &w);
    gr_assert_at(c, prim_pkt_bytes(p->count) <= w.bytes, "a batch of more triangles than its output packet holds",
                 __FILE__, __LINE__);
    memcpy(w.mem, p, prim_pkt_bytes(p->count));
    gr_commit_out(c, 0, 1);
}

/* Holds batches that arrive early and passes them on in sequence order. */
void plr_reorder_main(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    prim_pkt **held = calloc(s->batches ? s->batches : 1, sizeof *held);
    uint32_t next = 0;
    gr_window w;
    gr_assert(c, held != NULL);
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const prim_pkt *p = w.mem;
        gr_assert(c, plr_check_prims(c, s, p, w.bytes));
        if (p->seq < next || p->seq >= s->batches || held[p->seq]) {
            char why[96];
            snprintf(why, sizeof why, "primitive batch %u arrives twice or is not one of the frame's %u",
                     p->seq, s->batches);
            gr_assert_at(c, false, why, __FILE__, __LINE__);
        }
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


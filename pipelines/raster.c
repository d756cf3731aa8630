/* raster.c — builds and runs the rasterization graph described in raster.h.
 *
 * Packets: an IA packet names a batch of triangles; a primitive packet carries a batch
 * of post-VS triangles with its sequence number; a fragment packet carries one clipped
 * triangle and up to FRAGS_PER_PACKET of its fragments inside one tile. The Pixel Shader
 * overwrites each fragment's weights with its colour in place, so the same packet flows
 * on to the Output Merger. */
#include "pipelines/raster.h"

#include "pipelines/hiz.h"
#include "pipelines/tile_stager.h"
#include "rasterizer/raster.h"
#include "shaders/raster_shading.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BATCH 128
#define FRAGS_PER_PACKET SH_PS_MAX
#define TRIS_PER_PACKET 16                /* triangles one fragment packet can refer to */
#define BINNED_PER_PACKET 16              /* triangles per tile per Setup/Bin packet */
#define OPEN_TILES 64                     /* tiles a stager fills at once */

typedef struct ia_pkt { uint32_t seq, first, count; } ia_pkt;

/* A triangle ready to rasterize: its setup and what the PS needs of it. */
typedef struct rsp_prim { sh_ps_tri tri; rs_setup su; } rsp_prim;

/* What the VS sends on for one input triangle. Clipping and setup are per-triangle
 * work, so the VS (a Shader stage, run in parallel) does them and the Rast singleton
 * only walks tiles. A triangle the near/far/guard planes cut (rare) goes on as it is,
 * and Rast clips it: its pieces would not fit a fixed-size packet. */
typedef struct prim_rec {
    uint32_t cut;
    union { rsp_prim set; rs_triangle raw; };
} prim_rec;

/* A batch of primitives after the VS, in draw order within the batch; its queues'
 * packets have room for `batch` records (culled triangles leave none). */
typedef struct prim_pkt { uint32_t seq, count; prim_rec rec[]; } prim_pkt;

static size_t prim_pkt_bytes(uint32_t records)
{
    return offsetof(prim_pkt, rec) + records * sizeof(prim_rec);
}

/* Covered pixels of up to TRIS_PER_PACKET triangles inside one tile, in draw order, as
 * arrays. Rast only finds coverage (x, y and two exact edge values); the PS (parallel)
 * turns those into depth and weights, drops what fails early-Z (z = +inf), shades the
 * rest and writes depth and colour over the edge values, in place, for the OM. */
typedef struct frag_pkt {
    uint32_t count, ntris;
    uint32_t last_uid;                    /* Rast's id of tris[ntris - 1] */
    uint16_t x[FRAGS_PER_PACKET], y[FRAGS_PER_PACKET];
    union {
        struct { int64_t e0[FRAGS_PER_PACKET], e1[FRAGS_PER_PACKET]; } in;   /* from Rast */
        struct { float z[FRAGS_PER_PACKET]; uint32_t rgba[FRAGS_PER_PACKET]; } out; /* from PS */
    };
    uint8_t tri[FRAGS_PER_PACKET];        /* index into tris and interp */
    sh_ps_tri tris[TRIS_PER_PACKET];
    rs_interp interp[TRIS_PER_PACKET];
} frag_pkt;

/* Up to BINNED_PER_PACKET set-up triangles for one tile, in draw order. */
typedef struct binned_pkt {
    uint32_t count, pad;
    struct { rsp_prim prim; uint32_t uid; } t[BINNED_PER_PACKET];
} binned_pkt;

typedef struct rsp_state {
    rsp_config cfg;
    sh_raster_env env;
    const sc_geometry *geo;
    int tiles_x, tiles_y;
    uint32_t batches;
    uint32_t *color;                      /* width*height, written by OM instances */
    _Atomic(uint32_t) *depth;             /* float bits; OM writes, PS reads (early-Z) */
    rsp_hiz hiz;                          /* OM writes, Rast reads (coarse depth test) */
    _Atomic(uint64_t) rasterized, fragments, hidden;
} rsp_state;

typedef struct group_info { rsp_state *s; uint32_t first_batch, last_batch; } group_info;

void rsp_config_default(rsp_config *c)
{
    memset(c, 0, sizeof *c);
    c->width = c->height = 1024;
    c->tile = 64;
    c->batch = 64;
    c->frag_capacity = 64;
    c->tile_capacity = 8;
    c->coarse_z = true;
}

/* The coarse test needs blocks that do not straddle tiles (see hiz.h). */
static bool coarse_z_on(const rsp_config *c)
{
    return c->coarse_z && c->tile % RSP_HIZ_BLOCK == 0;
}

/* ---- IA and VS ----------------------------------------------------------------------- */

static void ia_main(gr_ctx *c)
{
    group_info *gi = gr_user(c);
    rsp_state *s = gi->s;
    uint32_t n = (uint32_t)s->geo->ntriangles, b = (uint32_t)s->cfg.batch;
    for (uint32_t seq = gi->first_batch; seq < gi->last_batch; seq++) {
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
static bool setup_prim(const rsp_state *s, const rs_triangle *t, rsp_prim *out)
{
    if (!rs_setup_triangle(t, s->cfg.width, s->cfg.height, &out->su)) return false;
    ps_tri_of(t, &out->su, &out->tri);
    return true;
}

static void vs_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    const ia_pkt *in = gr_input(c, NULL);
    prim_pkt *out = gr_output(c, 0);
    rs_triangle tris[MAX_BATCH];
    sh_vs_triangles(&s->env, in->first, in->count, tris);
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
            if (!setup_prim(s, &tris[i], &r->set)) continue;
            r->cut = 0;
            n++;
            set_up++;
            break;
        }
    }
    out->seq = in->seq;
    out->count = n;
    atomic_fetch_add_explicit(&s->rasterized, set_up, memory_order_relaxed);
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
static void reorder_main(gr_ctx *c)
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

/* ---- Rast (Fixed-function) ---------------------------------------------------------------- */

typedef struct rast_cfg { int width, height, tile, tiles_x; } rast_cfg;

/* Appends one triangle's covered pixels in a tile to the tile's staged packet (uid: the
 * triangle's number in this Rast, so its data is stored once per packet). */
static void stage_fragments(rsp_stager *st, gr_ctx *c, uint32_t tile, const rsp_prim *t,
                            uint32_t uid, const rs_cover *f, int n)
{
    for (int at = 0; at < n;) {
        frag_pkt *p = rsp_stager_packet(st, c, tile);
        if (p->count == 0) p->ntris = 0;          /* fresh packet */
        bool new_tri = p->ntris == 0 || p->last_uid != uid;
        if (p->count == FRAGS_PER_PACKET || (new_tri && p->ntris == TRIS_PER_PACKET)) {
            rsp_stager_send(st, c, tile);
            continue;
        }
        if (new_tri) {
            p->tris[p->ntris] = t->tri;
            rs_interp_of(&t->su, &p->interp[p->ntris]);
            p->ntris++;
            p->last_uid = uid;
        }
        for (; at < n && p->count < FRAGS_PER_PACKET; at++) {
            uint32_t i = p->count++;
            p->x[i] = f[at].x;
            p->y[i] = f[at].y;
            p->in.e0[i] = f[at].e0;
            p->in.e1[i] = f[at].e1;
            p->tri[i] = (uint8_t)(p->ntris - 1);
        }
    }
}

typedef struct rast_local {
    rsp_stager stager;
    rs_cover *buf;                        /* one tile's covered pixels of one triangle */
    uint32_t next_uid;
    const rsp_hiz *hiz;                   /* NULL: no coarse depth test */
    uint64_t hidden;                      /* triangle-tile pairs the coarse test skipped */
} rast_local;

#define HIZ_TEST_MAX_PIXELS (32 * 32)

static float nearest_depth(const rs_setup *su)
{
    float z = su->z[0] < su->z[1] ? su->z[0] : su->z[1];
    return z < su->z[2] ? z : su->z[2];
}

/* Rasterizes a set-up triangle inside one tile into the tile's staged packets, unless
 * the coarse depth test shows the OM already holds nearer depths under all of it. */
static void rast_in_tile(rast_local *l, gr_ctx *c, const rast_cfg *rc, uint32_t tile,
                         const rsp_prim *t, uint32_t uid)
{
    int tx = (int)(tile % (uint32_t)rc->tiles_x), ty = (int)(tile / (uint32_t)rc->tiles_x);
    int x0 = tx * rc->tile, y0 = ty * rc->tile, x1 = x0 + rc->tile, y1 = y0 + rc->tile;
    if (l->hiz) {
        int bx0 = x0 > t->su.x0 ? x0 : t->su.x0, by0 = y0 > t->su.y0 ? y0 : t->su.y0;
        int bx1 = x1 < t->su.x1 + 1 ? x1 : t->su.x1 + 1, by1 = y1 < t->su.y1 + 1 ? y1 : t->su.y1 + 1;
        if (bx0 >= bx1 || by0 >= by1) return;
        /* small footprints only: a big triangle is rarely hidden whole, and per-fragment
         * early-Z still spares its hidden part the shading */
        bool small = (bx1 - bx0) * (by1 - by0) <= HIZ_TEST_MAX_PIXELS;
        if (small && rsp_hiz_hidden(l->hiz, bx0, by0, bx1, by1, nearest_depth(&t->su))) {
            l->hidden++;
            return;
        }
    }
    int m = rs_raster_rect(&t->su, x0, y0, x1, y1, l->buf);
    if (m) stage_fragments(&l->stager, c, tile, t, uid, l->buf, m);
}

/* Copies the fragments and triangles in use only: most packets are far from full. */
static void copy_frag_pkt(void *dst, const void *src, size_t bytes)
{
    (void)bytes;
    frag_pkt *d = dst;
    const frag_pkt *p = src;
    size_t n = p->count;
    memcpy(d, p, offsetof(frag_pkt, x));
    memcpy(d->x, p->x, n * sizeof *p->x);
    memcpy(d->y, p->y, n * sizeof *p->y);
    memcpy(d->in.e0, p->in.e0, n * sizeof *p->in.e0);
    memcpy(d->in.e1, p->in.e1, n * sizeof *p->in.e1);
    memcpy(d->tri, p->tri, n * sizeof *p->tri);
    memcpy(d->tris, p->tris, p->ntris * sizeof *p->tris);
    memcpy(d->interp, p->interp, p->ntris * sizeof *p->interp);
}

static void copy_binned_pkt(void *dst, const void *src, size_t bytes)
{
    (void)bytes;
    const binned_pkt *p = src;
    memcpy(dst, p, offsetof(binned_pkt, t) + p->count * sizeof p->t[0]);
}

static bool rast_local_init(rast_local *l, const rsp_state *s, const rast_cfg *rc,
                            int open_tiles, size_t packet_bytes, rsp_packet_copy copy)
{
    uint32_t ntiles = (uint32_t)(s->tiles_x * s->tiles_y);
    l->next_uid = 0;
    l->hiz = coarse_z_on(&s->cfg) ? &s->hiz : NULL;
    l->hidden = 0;
    l->buf = malloc((size_t)rc->tile * rc->tile * sizeof *l->buf);
    if (l->buf && rsp_stager_init(&l->stager, ntiles, open_tiles, packet_bytes, copy, 0)) return true;
    free(l->buf);
    return false;
}

static void rast_local_free(rast_local *l, rsp_state *s)
{
    atomic_fetch_add_explicit(&s->hidden, l->hidden, memory_order_relaxed);
    rsp_stager_free(&l->stager);
    free(l->buf);
}

/* Calls per_tile for every tile the primitive's bounds touch. */
typedef void (*tile_fn)(rast_local *l, gr_ctx *c, const rast_cfg *rc, uint32_t tile,
                        const rsp_prim *p, uint32_t uid);

static void for_each_tile(rast_local *l, gr_ctx *c, const rast_cfg *rc, const rsp_prim *p,
                          tile_fn per_tile)
{
    uint32_t uid = l->next_uid++;
    for (int ty = p->su.y0 / rc->tile; ty <= p->su.y1 / rc->tile; ty++)
        for (int tx = p->su.x0 / rc->tile; tx <= p->su.x1 / rc->tile; tx++)
            per_tile(l, c, rc, (uint32_t)(ty * rc->tiles_x + tx), p, uid);
}

/* One record of a primitive packet: set up by the VS, or clipped and set up here. */
static void for_each_record_tile(rast_local *l, gr_ctx *c, rsp_state *s, const rast_cfg *rc,
                                 const prim_rec *r, tile_fn per_tile)
{
    if (!r->cut) {
        for_each_tile(l, c, rc, &r->set, per_tile);
        return;
    }
    rs_triangle clipped[RS_MAX_CLIPPED];
    int n = rs_clip(&r->raw, clipped);
    for (int k = 0; k < n; k++) {
        rsp_prim p;
        if (!setup_prim(s, &clipped[k], &p)) continue;
        atomic_fetch_add_explicit(&s->rasterized, 1, memory_order_relaxed);
        for_each_tile(l, c, rc, &p, per_tile);
    }
}

static void rast_tile(rast_local *l, gr_ctx *c, const rast_cfg *rc, uint32_t tile,
                      const rsp_prim *p, uint32_t uid)
{
    rast_in_tile(l, c, rc, tile, p, uid);
}

/* Each batch's fragments are staged per tile and sent when the batch is done. */
static void rast_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    const rast_cfg *rc = gr_config(c, NULL);
    rast_local l;
    gr_assert(c, rast_local_init(&l, s, rc, OPEN_TILES,
                                 sizeof(frag_pkt), copy_frag_pkt));
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const prim_pkt *p = w.mem;
        for (uint32_t i = 0; i < p->count; i++) for_each_record_tile(&l, c, s, rc, &p->rec[i], rast_tile);
        gr_commit(c, 0, 1);
        rsp_stager_flush(&l.stager, c);
    }
    rast_local_free(&l, s);
}

/* ---- parallel variant: Setup/Bin singleton, Rast per tile ------------------------------- */

static void bin_tile(rast_local *l, gr_ctx *c, const rast_cfg *rc, uint32_t tile,
                     const rsp_prim *prim, uint32_t uid)
{
    (void)rc;
    binned_pkt *p = rsp_stager_packet(&l->stager, c, tile);
    if (p->count == BINNED_PER_PACKET) {
        rsp_stager_send(&l->stager, c, tile);
        p = rsp_stager_packet(&l->stager, c, tile);
    }
    uint32_t i = p->count++;
    p->t[i].prim = *prim;
    p->t[i].uid = uid;
}

static void setup_bin_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    const rast_cfg *rc = gr_config(c, NULL);
    rast_local l;
    gr_assert(c, rast_local_init(&l, s, rc, OPEN_TILES,
                                 sizeof(binned_pkt), copy_binned_pkt));
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const prim_pkt *p = w.mem;
        for (uint32_t i = 0; i < p->count; i++) for_each_record_tile(&l, c, s, rc, &p->rec[i], bin_tile);
        gr_commit(c, 0, 1);
        rsp_stager_flush(&l.stager, c);
    }
    rast_local_free(&l, s);
}

/* One instance per tile: its triangles arrive in draw order through its subqueue. */
static void tile_rast_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    const rast_cfg *rc = gr_config(c, NULL);
    uint32_t tile = (uint32_t)gr_key(c);
    rast_local l;
    gr_assert(c, rast_local_init(&l, s, rc, 1, sizeof(frag_pkt),
                                 copy_frag_pkt));
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const binned_pkt *b = w.mem;
        for (uint32_t i = 0; i < b->count; i++)
            rast_in_tile(&l, c, rc, tile, &b->t[i].prim, b->t[i].uid);
        gr_commit(c, 0, 1);
        rsp_stager_flush(&l.stager, c);
    }
    rast_local_free(&l, s);
}

/* ---- PS and OM ------------------------------------------------------------------------------ */

static inline float load_depth(rsp_state *s, size_t at)
{
    uint32_t bits = atomic_load_explicit(&s->depth[at], memory_order_relaxed);
    float z;
    memcpy(&z, &bits, sizeof z);
    return z;
}

/* Depth and weights of every covered pixel (rs_weights; a loop over the packet), then
 * early-Z, then one kernel call shades the survivors. Within a tile the OM applies
 * primitives in order, so the depth it holds comes only from primitives before this
 * fragment's; a fragment at or behind it would fail the OM's test anyway. Skipping it
 * cannot change the image, only the work. */
static void ps_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    frag_pkt *p = gr_input(c, NULL);
    const uint32_t count = p->count;
    size_t width = (size_t)s->cfg.width;
    float z[FRAGS_PER_PACKET], b1[FRAGS_PER_PACKET], b2[FRAGS_PER_PACKET];
    float lb1[FRAGS_PER_PACKET], lb2[FRAGS_PER_PACKET];
    uint8_t ltri[FRAGS_PER_PACKET], live[FRAGS_PER_PACKET];
    uint32_t rgba[FRAGS_PER_PACKET];
    for (uint32_t i = 0; i < count; i++)
        rs_weights(&p->interp[p->tri[i]], p->in.e0[i], p->in.e1[i], &z[i], &b1[i], &b2[i]);
    int n = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (z[i] >= load_depth(s, p->y[i] * width + p->x[i])) {
            z[i] = INFINITY;                      /* dead: the OM skips it */
            continue;
        }
        lb1[n] = b1[i];
        lb2[n] = b2[i];
        ltri[n] = p->tri[i];
        live[n++] = (uint8_t)i;
    }
    if (n) sh_ps_packet(&s->env, &(sh_ps_frags){n, p->tris, ltri, lb1, lb2}, rgba);
    memcpy(p->out.z, z, count * sizeof *z);       /* the edge values are no longer needed */
    for (int k = 0; k < n; k++) p->out.rgba[live[k]] = rgba[k];
    atomic_fetch_add_explicit(&s->fragments, (uint64_t)n, memory_order_relaxed);
}

/* The blocks of one tile whose depths changed since their bounds were last recomputed.
 * Bounds are recomputed every HIZ_UPDATE_PACKETS packets rather than every packet:
 * consecutive packets mostly touch the same blocks (a big triangle's rows), and a late
 * bound is only a looser one. */
#define HIZ_UPDATE_PACKETS 8
#define HIZ_MAX_BLOCKS ((256 / RSP_HIZ_BLOCK + 1) * (256 / RSP_HIZ_BLOCK + 1))

typedef struct touched_blocks {
    int bx0, by0, nbx;                    /* the tile's first block and blocks per row */
    int packets, last;
    uint64_t bits[(HIZ_MAX_BLOCKS + 63) / 64];
} touched_blocks;

static void touched_init(touched_blocks *t, const rsp_state *s, uint64_t tile)
{
    int tx = (int)(tile % (uint64_t)s->tiles_x), ty = (int)(tile / (uint64_t)s->tiles_x);
    int x0 = tx * s->cfg.tile, y0 = ty * s->cfg.tile;
    memset(t, 0, sizeof *t);
    t->last = -1;
    t->bx0 = x0 / RSP_HIZ_BLOCK;
    t->by0 = y0 / RSP_HIZ_BLOCK;
    t->nbx = (x0 + s->cfg.tile - 1) / RSP_HIZ_BLOCK - t->bx0 + 1;
}

static inline void touch_block(touched_blocks *t, uint16_t x, uint16_t y)
{
    int i = (y / RSP_HIZ_BLOCK - t->by0) * t->nbx + (x / RSP_HIZ_BLOCK - t->bx0);
    if (i == t->last) return;
    t->last = i;
    t->bits[i / 64] |= 1ull << (i % 64);
}

static void update_touched(rsp_state *s, touched_blocks *t)
{
    for (size_t w = 0; w < sizeof t->bits / sizeof t->bits[0]; w++)
        for (uint64_t m = t->bits[w]; m; m &= m - 1) {
            int i = (int)(w * 64) + __builtin_ctzll(m);
            int bx = t->bx0 + i % t->nbx, by = t->by0 + i / t->nbx;
            rsp_hiz_update(&s->hiz, s->depth, bx * RSP_HIZ_BLOCK, by * RSP_HIZ_BLOCK);
        }
    memset(t->bits, 0, sizeof t->bits);
    t->last = -1;
    t->packets = 0;
}

/* One instance per tile: depth test (less) and write, in primitive order; then the
 * coarse bounds of the blocks it changed. */
static void om_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    const bool coarse_z = coarse_z_on(&s->cfg);
    touched_blocks touched;
    touched_init(&touched, s, gr_key(c));
    gr_window w;
    size_t width = (size_t)s->cfg.width;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const frag_pkt *p = w.mem;
        for (uint32_t i = 0; i < p->count; i++) {
            size_t at = p->y[i] * width + p->x[i];
            float z = p->out.z[i];
            float old = load_depth(s, at);
            if (z < old) {
                uint32_t bits;
                memcpy(&bits, &z, sizeof bits);
                atomic_store_explicit(&s->depth[at], bits, memory_order_relaxed);
                s->color[at] = p->out.rgba[i];
                if (coarse_z) {
                    if (old == FLT_MAX) rsp_hiz_first_write(&s->hiz, p->x[i], p->y[i]);
                    touch_block(&touched, p->x[i], p->y[i]);
                }
            }
        }
        if (coarse_z && ++touched.packets == HIZ_UPDATE_PACKETS) update_touched(s, &touched);
        gr_commit(c, 0, 1);
    }
}

/* ---- graph ------------------------------------------------------------------------------------ */

static int opaque(gr_graph *g, const char *name, size_t bytes, uint32_t cap, uint32_t subqueues, bool ordered)
{
    return gr_queue(g, &(gr_queue_desc){.name = name, .packet_bytes = bytes, .capacity = cap,
                                        .subqueues = subqueues, .ordered = ordered});
}

static gr_graph *build_graph(rsp_state *s, group_info *groups, int ngroups, const rast_cfg *rc)
{
    gr_graph *g = gr_graph_create();
    size_t prim_bytes = prim_pkt_bytes((uint32_t)s->cfg.batch);
    int prims = opaque(g, "primitives", prim_bytes, 8, 0, false);
    int ordered = opaque(g, "ordered-primitives", prim_bytes, 8, 0, false);
    int frags = opaque(g, "fragments", sizeof(frag_pkt), s->cfg.frag_capacity, 0, true);
    int tiles = opaque(g, "tiles", sizeof(frag_pkt), s->cfg.tile_capacity,
                       (uint32_t)(s->tiles_x * s->tiles_y), true);
    int reorder = gr_stage(g, &(gr_stage_desc){.name = "reorder", .kind = GR_THREAD, .main = reorder_main, .user = s});
    int rast = gr_stage(g, &(gr_stage_desc){.name = s->cfg.parallel_rast ? "setup-bin" : "rast",
                                            .kind = GR_FIXED, .main = s->cfg.parallel_rast ? setup_bin_main : rast_main,
                                            .user = s, .config = rc, .config_bytes = sizeof *rc});
    int ps = gr_stage(g, &(gr_stage_desc){.name = "ps", .kind = GR_SHADER, .main = ps_main, .user = s});
    int om = gr_stage(g, &(gr_stage_desc){.name = "om", .kind = GR_THREAD, .main = om_main, .user = s, .instanced = true});
    for (int k = 0; k < ngroups; k++) {
        char qn[32], ian[32], vsn[32];
        snprintf(qn, sizeof qn, "ia-%d", k);
        snprintf(ian, sizeof ian, "ia-%d", k);
        snprintf(vsn, sizeof vsn, "vs-%d", k);
        int q = opaque(g, qn, sizeof(ia_pkt), 8, 0, false);
        int ia = gr_stage(g, &(gr_stage_desc){.name = ian, .kind = GR_THREAD, .main = ia_main, .user = &groups[k]});
        int vs = gr_stage(g, &(gr_stage_desc){.name = vsn, .kind = GR_SHADER, .main = vs_main, .user = s});
        gr_bind(g, ia, GR_BIND_OUTPUT, q);
        gr_bind(g, vs, GR_BIND_INPUT, q);
        gr_bind(g, vs, GR_BIND_OUTPUT, prims);
    }
    gr_bind(g, reorder, GR_BIND_INPUT, prims);
    gr_bind(g, reorder, GR_BIND_OUTPUT, ordered);
    gr_bind(g, rast, GR_BIND_INPUT, ordered);
    if (s->cfg.parallel_rast) {
        int binned = opaque(g, "binned", sizeof(binned_pkt), 16, (uint32_t)(s->tiles_x * s->tiles_y), false);
        int trast = gr_stage(g, &(gr_stage_desc){.name = "rast", .kind = GR_THREAD, .main = tile_rast_main,
                                                 .user = s, .config = rc, .config_bytes = sizeof *rc,
                                                 .instanced = true});
        gr_bind(g, rast, GR_BIND_OUTPUT, binned);
        gr_bind(g, trast, GR_BIND_INPUT, binned);
        gr_bind(g, trast, GR_BIND_OUTPUT, frags);
    } else {
        gr_bind(g, rast, GR_BIND_OUTPUT, frags);
    }
    gr_bind(g, ps, GR_BIND_INPUT, frags);
    gr_bind(g, ps, GR_BIND_INPLACE, tiles);
    gr_bind(g, om, GR_BIND_INPUT, tiles);
    return g;
}

static bool check_config(const rsp_config *c, char err[SC_ERR_MAX])
{
    const char *bad = NULL;
    if (c->width <= 0 || c->height <= 0 || c->width > 16384 || c->height > 16384) bad = "image size (1..16384)";
    else if (c->tile < 8 || c->tile > 256) bad = "tile size (8..256)";
    else if (c->batch < 1 || c->batch > MAX_BATCH) bad = "batch (1..128 triangles)";
    else if (c->groups < 0 || c->groups > 256) bad = "groups (0..256)";
    if (bad) snprintf(err, SC_ERR_MAX, "raster: invalid %s", bad);
    return bad == NULL;
}

/* Contiguous runs of batches per group: disjoint index ranges. */
static void split_groups(rsp_state *s, group_info *gi, int n)
{
    for (int k = 0; k < n; k++) {
        gi[k].s = s;
        gi[k].first_batch = (uint32_t)((uint64_t)s->batches * k / n);
        gi[k].last_batch = (uint32_t)((uint64_t)s->batches * (k + 1) / n);
    }
}

gr_graph *rsp_render(const sc_scene *scene, const sc_geometry *geo, const rsp_config *cfg,
                     uint8_t *rgba, rsp_counts *counts, char err[SC_ERR_MAX])
{
    if (!check_config(cfg, err)) return NULL;
    rsp_state *s = calloc(1, sizeof *s);
    size_t npix = (size_t)cfg->width * cfg->height;
    if (s) {
        s->color = malloc(npix * sizeof *s->color);
        s->depth = malloc(npix * sizeof *s->depth);
    }
    if (!s || !s->color || !s->depth) {
        if (s) { free(s->color); free(s->depth); free(s); }
        snprintf(err, SC_ERR_MAX, "raster: out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->geo = geo;
    sh_raster_env_init(&s->env, scene, geo, cfg->width, cfg->height, cfg->aov);
    s->tiles_x = (cfg->width + cfg->tile - 1) / cfg->tile;
    s->tiles_y = (cfg->height + cfg->tile - 1) / cfg->tile;
    s->batches = (uint32_t)((geo->ntriangles + (size_t)cfg->batch - 1) / (size_t)cfg->batch);
    uint32_t bg = sh_background(&s->env);
    uint32_t far_bits;
    float far = FLT_MAX;
    memcpy(&far_bits, &far, sizeof far_bits);
    for (size_t i = 0; i < npix; i++) { s->color[i] = bg; atomic_init(&s->depth[i], far_bits); }
    int ngroups = cfg->groups ? cfg->groups
                              : (int)(cfg->workers ? cfg->workers : (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
    if ((uint32_t)ngroups > s->batches) ngroups = s->batches ? (int)s->batches : 1;
    group_info *gi = calloc((size_t)ngroups, sizeof *gi);
    rast_cfg rc = {cfg->width, cfg->height, cfg->tile, s->tiles_x};
    gr_graph *g = NULL;
    if (gi && rsp_hiz_init(&s->hiz, cfg->width, cfg->height, far_bits)) {
        split_groups(s, gi, ngroups);
        g = build_graph(s, gi, ngroups, &rc);
    }
    gr_launch_opts o = {.workers = cfg->workers};
    if (!g || gr_launch(g, &o, NULL, 0) != GR_OK || gr_wait(g) != GR_OK) {
        snprintf(err, SC_ERR_MAX, "raster: %s", g ? gr_error(g) : "out of memory");
        gr_graph_destroy(g);
        g = NULL;
    } else {
        memcpy(rgba, s->color, npix * 4);
        if (counts) *counts = (rsp_counts){geo->ntriangles, s->rasterized, s->fragments, s->hidden};
    }
    rsp_hiz_free(&s->hiz);
    free(gi);
    free(s->color);
    free(s->depth);
    free(s);
    return g;
}

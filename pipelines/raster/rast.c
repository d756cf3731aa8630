/* rast.c — Rast, the fixed-function stage: walks the tiles each set-up triangle
 * touches, skips what the coarse depth test hides, and stages the covered pixels per
 * tile; plus the stages that walk the same tiles to bin triangles: the parallel
 * variant's Setup/Bin and per-tile Rast, and the sort-middle graph's Bin (see
 * internal.h). */
#include "pipelines/raster/internal.h"

#include "pipelines/raster/tile_stager.h"

#include <stdlib.h>
#include <string.h>

/* ---- Rast (Fixed-function) ---------------------------------------------------------------- */

/* Appends one triangle's covered pixels in a tile to the tile's staged packet (uid: the
 * triangle's number in this Rast, so its data is stored once per packet). */
static void stage_fragments(plr_stager *st, gr_ctx *c, uint32_t tile, const plr_prim *t,
                            uint32_t uid, const rs_cover *f, const uint8_t *cover, int n)
{
    for (int at = 0; at < n;) {
        frag_pkt *p = plr_stager_packet(st, c, tile);
        if (p->count == 0) p->ntris = 0;          /* fresh packet */
        bool new_tri = p->ntris == 0 || p->last_uid != uid;
        if (p->count == FRAGS_PER_PACKET || (new_tri && p->ntris == TRIS_PER_PACKET)) {
            plr_stager_send(st, c, tile);
            continue;
        }
        if (new_tri) {
            p->tris[p->ntris] = t->tri;
            rs_interp_of(&t->su, &p->interp[p->ntris]);
            rs_edge01_of(&t->su, &p->edges[p->ntris]);
            p->ntris++;
            p->last_uid = uid;
            st->touched += sizeof p->tris[0] + sizeof p->interp[0] + sizeof p->edges[0];
        }
        const uint32_t before = p->count;
        for (; at < n && p->count < FRAGS_PER_PACKET; at++) {
            uint32_t i = p->count++;
            p->x[i] = f[at].x;
            p->y[i] = f[at].y;
            p->in.e0[i] = f[at].e0;
            p->in.e1[i] = f[at].e1;
            p->tri[i] = (uint8_t)(p->ntris - 1);
            if (cover) p->cover[i] = cover[at];
        }
        st->touched += (p->count - before) * (sizeof p->x[0] + sizeof p->y[0] + sizeof p->in.e0[0] +
                                              sizeof p->in.e1[0] + sizeof p->tri[0] +
                                              (cover ? sizeof p->cover[0] : 0));
    }
}

typedef struct rast_local {
    plr_stager stager;
    rs_cover *buf;                        /* one tile's covered pixels of one triangle */
    uint8_t *cover;                       /* msaa > 1: their covered samples, else NULL */
    const rs_samples *pattern;
    bool avx2;                            /* rs_raster_rect_samples' kernel (the frame's env.isa) */
    uint32_t next_uid;
    const plr_hiz *hiz;                   /* NULL: no coarse depth test */
    uint64_t hidden;                      /* triangle-tile pairs the coarse test skipped */
} rast_local;

#define HIZ_TEST_MAX_PIXELS (32 * 32)

static float nearest_depth(const rs_setup *su)
{
    float z = su->z[0] < su->z[1] ? su->z[0] : su->z[1];
    return z < su->z[2] ? z : su->z[2];
}

/* Rasterizes a set-up triangle inside one tile (its pixels the frame renders: r) into
 * the tile's staged packets, unless the coarse depth test shows the OM already holds
 * nearer depths under all of it. */
static void rast_in_tile(rast_local *l, gr_ctx *c, uint32_t tile, const tile_rect *r,
                         const plr_prim *t, uint32_t uid)
{
    int x0 = r->x0, y0 = r->y0, x1 = r->x1, y1 = r->y1;
    if (l->hiz) {
        int bx0 = x0 > t->su.x0 ? x0 : t->su.x0, by0 = y0 > t->su.y0 ? y0 : t->su.y0;
        int bx1 = x1 < t->su.x1 + 1 ? x1 : t->su.x1 + 1, by1 = y1 < t->su.y1 + 1 ? y1 : t->su.y1 + 1;
        if (bx0 >= bx1 || by0 >= by1) return;
        /* small footprints only: a big triangle is rarely hidden whole, and per-fragment
         * early-Z still spares its hidden part the shading */
        bool small = (bx1 - bx0) * (by1 - by0) <= HIZ_TEST_MAX_PIXELS;
        if (small && plr_hiz_hidden(l->hiz, bx0, by0, bx1, by1, nearest_depth(&t->su))) {
            l->hidden++;
            return;
        }
    }
    int m = l->cover ? rs_raster_rect_samples(&t->su, l->pattern, x0, y0, x1, y1, l->buf, l->cover, l->avx2)
                     : rs_raster_rect(&t->su, x0, y0, x1, y1, l->buf);
    if (m) stage_fragments(&l->stager, c, tile, t, uid, l->buf, l->cover, m);
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
    memcpy(d->cover, p->cover, n * sizeof *p->cover);
    memcpy(d->tris, p->tris, p->ntris * sizeof *p->tris);
    memcpy(d->interp, p->interp, p->ntris * sizeof *p->interp);
    memcpy(d->edges, p->edges, p->ntris * sizeof *p->edges);
}

static void copy_binned_pkt(void *dst, const void *src, size_t bytes)
{
    (void)bytes;
    const binned_pkt *p = src;
    memcpy(dst, p, offsetof(binned_pkt, t) + p->count * sizeof p->t[0]);
}

static bool rast_local_init(rast_local *l, const plr_state *s, const rast_cfg *rc,
                            int open_tiles, size_t packet_bytes, plr_packet_copy copy, bool runs)
{
    uint32_t ntiles = (uint32_t)(s->tiles_x * s->tiles_y);
    l->next_uid = 0;
    l->hiz = s->coarse_z ? s->hiz : NULL;
    l->hidden = 0;
    l->buf = malloc((size_t)rc->tile * rc->tile * sizeof *l->buf);
    l->pattern = s->pattern;
    l->avx2 = s->env->isa == RT_ISA_AVX2;
    l->cover = s->msaa > 1 ? malloc((size_t)rc->tile * rc->tile) : NULL;
    if (l->buf && (l->cover || s->msaa == 1) &&
        plr_stager_init(&l->stager, ntiles, open_tiles, packet_bytes, copy, 0, runs))
        return true;
    free(l->buf);
    free(l->cover);
    return false;
}

static void rast_local_free(rast_local *l, plr_state *s)
{
    if (s->hidden) atomic_fetch_add_explicit(s->hidden, l->hidden, memory_order_relaxed);
    plr_stager_free(&l->stager);
    free(l->buf);
    free(l->cover);
}

/* Calls per_tile for every tile the primitive's bounds touch that the frame renders
 * pixels of, with those pixels (tiles outside the frame's region are skipped). */
typedef void (*tile_fn)(rast_local *l, gr_ctx *c, uint32_t tile, const tile_rect *r,
                        const plr_prim *p, uint32_t uid);

static void for_each_tile(rast_local *l, gr_ctx *c, const rast_cfg *rc, const plr_prim *p,
                          tile_fn per_tile)
{
    uint32_t uid = l->next_uid++;
    const int tx0 = plr_tile_of(rc, p->su.x0), tx1 = plr_tile_of(rc, p->su.x1);
    const int ty0 = plr_tile_of(rc, p->su.y0), ty1 = plr_tile_of(rc, p->su.y1);
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++) {
            tile_rect r;
            if (plr_tile_rect_at(rc, tx, ty, &r))
                per_tile(l, c, (uint32_t)(ty * rc->tiles_x + tx), &r, p, uid);
        }
}

/* The tiles the frame renders pixels of (plr_tile_rect_at non-empty): columns
 * x0..x1 and rows y0..y1, inclusive; x0 > x1 when the region is empty. */
typedef struct tile_span { int x0, y0, x1, y1; } tile_span;

static tile_span rendered_tiles(const rast_cfg *rc)
{
    const pl_region *r = &rc->region;
    if (r->x0 >= r->x1 || r->y0 >= r->y1) return (tile_span){1, 1, 0, 0};
    return (tile_span){plr_tile_of(rc, r->x0), plr_tile_of(rc, r->y0), plr_tile_of(rc, r->x1 - 1),
                       plr_tile_of(rc, r->y1 - 1)};
}

typedef struct tile_walk {
    rast_local *l;
    gr_ctx *c;
    const rast_cfg *rc;
    tile_fn per_tile;
    tile_span rendered;                   /* binning: the tiles it may bin into */
} tile_walk;

static void walk_prim_tiles(void *arg, const plr_prim *p)
{
    tile_walk *w = arg;
    for_each_tile(w->l, w->c, w->rc, p, w->per_tile);
}

/* Rast, Setup/Bin and Bin: every record of each primitive batch goes to per_tile for
 * the tiles it touches. In draw order the staged packets leave when each batch is done
 * (a tile's packets must not overtake a later batch's); in any order a tile's full
 * ones leave in runs when the stager needs room, the rest at the end. */
static void walk_batches(gr_ctx *c, size_t packet_bytes, plr_packet_copy copy, plr_prim_fn each,
                         tile_fn per_tile, bool draw_order)
{
    plr_state *s = gr_user(c);
    const rast_cfg *rc = &s->rc;
    const int tiles = s->tiles_x * s->tiles_y;
    const int open = draw_order ? OPEN_TILES : 2 * tiles < BIN_STAGED_PACKETS ? 2 * tiles : BIN_STAGED_PACKETS;
    rast_local l;
    gr_assert(c, rast_local_init(&l, s, rc, open, packet_bytes, copy, !draw_order));
    tile_walk walk = {&l, c, rc, per_tile, rendered_tiles(rc)};
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const prim_pkt *p = w.mem;
        gr_work_units(c, p->count);   /* its cost follows triangles: not the partly filled
                                       * packets each of many copies sends at its end */
        plr_check_prims(c, s, p, w.bytes);
        for (uint32_t i = 0; i < p->count; i++) plr_each_prim(s, &p->rec[i], each, &walk);
        plr_stager_touched(&l.stager, c);
        gr_commit(c, 0, 1);
        if (draw_order) plr_stager_flush(&l.stager, c);
    }
    plr_stager_flush(&l.stager, c);
    if (!draw_order) plr_bin_clear_unsent(s, l.stager.sent);   /* Bin: before it ends (tile_background.c) */
    rast_local_free(&l, s);
}

void plr_rast_main(gr_ctx *c)
{
    walk_batches(c, sizeof(frag_pkt), copy_frag_pkt, walk_prim_tiles, rast_in_tile, true);
}

/* ---- binning: the parallel variant's Setup/Bin singleton (Rast per tile after it) and
 * the sort-middle graph's Bin per group (Tile-Shade after it) ------------------------------ */

static void bin_tile(rast_local *l, gr_ctx *c, uint32_t tile, const plr_prim *prim, uint32_t uid)
{
    binned_pkt *p = plr_stager_packet(&l->stager, c, tile);
    if (p->count == BINNED_PER_PACKET) {
        plr_stager_send(&l->stager, c, tile);
        p = plr_stager_packet(&l->stager, c, tile);
    }
    uint32_t i = p->count++;
    p->t[i].prim = *prim;
    p->t[i].uid = uid;
    l->stager.touched += sizeof p->t[i];
}

/* for_each_tile for binning: a tile needs no pixel rectangle to be binned into, only
 * to be one the frame renders, so the triangle's tile range is clipped to those once
 * and bin_tile called directly (same tiles, same order). */
static void bin_prim_tiles(void *arg, const plr_prim *p)
{
    tile_walk *w = arg;
    rast_local *l = w->l;
    const rast_cfg *rc = w->rc;
    const tile_span *t = &w->rendered;
    uint32_t uid = l->next_uid++;
    int tx0 = plr_tile_of(rc, p->su.x0), tx1 = plr_tile_of(rc, p->su.x1);
    int ty0 = plr_tile_of(rc, p->su.y0), ty1 = plr_tile_of(rc, p->su.y1);
    tx0 = tx0 > t->x0 ? tx0 : t->x0;
    ty0 = ty0 > t->y0 ? ty0 : t->y0;
    tx1 = tx1 < t->x1 ? tx1 : t->x1;
    ty1 = ty1 < t->y1 ? ty1 : t->y1;
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++) bin_tile(l, w->c, (uint32_t)(ty * rc->tiles_x + tx), p, uid);
}

void plr_setup_bin_main(gr_ctx *c)
{
    walk_batches(c, sizeof(binned_pkt), copy_binned_pkt, bin_prim_tiles, NULL, true);
}

/* The sort-middle graph's binning, one per IA/VS group: any order (Tile-Shade resolves
 * it by primitive id), so packets leave only when full or at the end. */
void plr_bin_main(gr_ctx *c)
{
    walk_batches(c, sizeof(binned_pkt), copy_binned_pkt, bin_prim_tiles, NULL, false);
}

/* One instance per tile: its triangles arrive in draw order through its subqueue. */
void plr_tile_rast_main(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    const rast_cfg *rc = &s->rc;
    uint32_t tile = (uint32_t)gr_key(c);
    tile_rect r;
    bool renders = plr_tile_rect(rc, tile, &r);   /* Setup/Bin sends only such tiles */
    rast_local l;
    gr_assert(c, rast_local_init(&l, s, rc, 1, sizeof(frag_pkt), copy_frag_pkt, false));
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const binned_pkt *b = w.mem;
        plr_check_binned(c, s, b);
        for (uint32_t i = 0; renders && i < b->count; i++)
            rast_in_tile(&l, c, tile, &r, &b->t[i].prim, b->t[i].uid);
        plr_stager_touched(&l.stager, c);
        gr_commit(c, 0, 1);
        plr_stager_flush(&l.stager, c);
    }
    rast_local_free(&l, s);
}

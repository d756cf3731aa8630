/* tile_shade.c — Tile-Shade, the per-tile stage of the sort-middle raster graph
 * (pipelines/graphs/raster.graph): one instance per framebuffer tile takes the
 * set-up triangles the Bin stages sent its tile, in any order, resolves visibility with
 * rs_depth_rect (nearest depth, equal depths to the smaller primitive id: the draw-order
 * `less` result), and once its subqueue closes (every triangle seen) shades each visible
 * pixel once with the pixel shader's packet kernel, triangle by triangle.
 *
 * Why the image is the ordered graph's, bit for bit: the visible triangle of a pixel is
 * the one the draw-order test keeps; its depth and weights come from the same edge values
 * and rs_weights; a fragment's colour does not depend on the packet it is shaded in
 * (sh_ps_packet). Hidden fragments, which the ordered graph shades when early-Z cannot
 * reject them, are never shaded here.
 *
 * The tile's pixels no triangle owns get the background (tile_background.c: the frame
 * does not clear the image for this graph).
 *
 * Memory: the tile keeps only the triangles that own at least one of its pixels (a slot
 * is freed when its last pixel is taken), so it holds at most one triangle per pixel
 * plus the one being rasterized, whatever the scene; blended triangles (alpha.h) are
 * the exception: each one that touches the tile is kept until the end, when they are
 * blended in primitive-id order over the shaded opaque pixels (tile_blend). */
#include "pipelines/raster/internal.h"
#include "pipelines/raster/tile_slots.h"
#include "rasterizer/prefetch.h"

#include <stdlib.h>
#include <string.h>

/* A pixel's owner: its slot + 1, 0 for the background. 16 bits halve the owner array
 * that tile_add and tile_shade read at scattered pixels (8 KB for a 64x64 tile beside its
 * 16 KB of depth and of visibility), and name up to TILE_MAX_SLOTS slots at once: every
 * tile of up to 65,534 pixels (tile edge 255) whatever its triangles, since it holds at
 * most one slot per pixel plus the one being added; a 256x256 tile with more visible
 * triangles at once than that fails the run with a message (tile_add_failed). */
typedef uint16_t tile_owner;
#define TILE_MAX_SLOTS ((uint32_t)UINT16_MAX)

typedef struct shade_tile {
    plr_depth_tile d;
    tile_owner *owner;                    /* per pixel */
    tile_slots slots;
    rs_cover *cover;                      /* MASK and BLEND triangles' covered pixels */
    blended_prims blended;                /* BLEND triangles, blended after shading */
    /* tile_shade's per-slot arrays (shade_batch), room for batch_cap slots */
    uint32_t *stamp;
    uint8_t *index;
    sh_ps_quad_setup *quad;
    uint32_t *first;                      /* per slot: its first entry in `order` */
    uint32_t batch_cap;
    uint16_t *order;                      /* the owned pixels (dy << 8 | dx in the tile), slot by slot */
} shade_tile;

void plr_shade_tile_free(void *item)
{
    shade_tile *st = item;
    free(st->d.t.won);
    plr_depth_tile_free(&st->d);
    free(st->owner);
    tile_slots_free(&st->slots);
    free(st->cover);
    free(st->blended.p);
    free(st->stamp);
    free(st->index);
    free(st->quad);
    free(st->first);
    free(st->order);
    free(st);
}

/* Makes st, new (zeroed) or as the same tile left it in the last frame, ready for tile:
 * buffers it has are reused (the stage's tile size does not change), cleared. */
static bool tile_init(shade_tile *st, const plr_state *s, uint64_t tile)
{
    size_t pixels = (size_t)s->tile * (size_t)s->tile;
    bool ok = plr_depth_tile_init(&st->d, s, tile);
    if (!st->d.t.won) st->d.t.won = malloc((pixels + RS_DEPTH_SLACK) * sizeof *st->d.t.won);
    if (st->owner) memset(st->owner, 0, pixels * sizeof *st->owner);
    else st->owner = calloc(pixels, sizeof *st->owner);
    if (!st->order) st->order = malloc(pixels * sizeof *st->order);
    st->slots.n = st->slots.nfree = 0;
    st->blended.n = 0;
    /* a tile of small triangles holds hundreds of slots at once (some of bunny's 64x64
     * tiles over 512): room for a quarter of its pixels saves most of the copies that
     * growing from 64 by doubling makes */
    ok = ok && tile_slots_reserve(&st->slots, pixels / 4 > 64 ? (uint32_t)(pixels / 4) : 64);
    return ok && st->d.t.won && st->owner && st->order;
}

/* Tile `tile`'s buffers: the ones it had in the last frame, else new; NULL when out of
 * memory. */
static shade_tile *tile_open(plr_state *s, uint64_t tile)
{
    shade_tile *st = plr_tile_pool_take(s->tile_pool, tile);
    if (!st && !(st = calloc(1, sizeof *st))) return NULL;
    if (tile_init(st, s, tile)) return st;
    plr_shade_tile_free(st);
    return NULL;
}

/* One triangle: its covered pixels that pass the test change owner; a slot left with no
 * pixel is freed at once, and a triangle that takes none gets none (it is tested from
 * the packet). A MASK triangle's pixels pass only where alpha does; a BLEND triangle is
 * kept for tile_blend. */
static bool tile_add(shade_tile *st, const plr_state *s, const plr_prim *p)
{
    bool masked = false;
    if (s->alpha.mask || s->alpha.blend) {
        /* room for one triangle's covered pixels in the tile: the MASK test and
         * tile_blend use it (a tile may see only blended triangles) */
        if (!st->cover &&
            !(st->cover = malloc((size_t)s->tile * (size_t)s->tile * sizeof *st->cover)))
            return false;
        sc_alpha_mode mode = plr_alpha_mode(s->env, p->tri.material);
        if (mode == SC_ALPHA_BLEND) return !plr_blends_aov(s->env) || blended_add(&st->blended, p);
        masked = mode == SC_ALPHA_MASK;
    }
    st->d.t.nwon = 0;
    if (masked)
        plr_depth_rect_masked(s->env, p, st->d.x0, st->d.y0, st->d.x1, st->d.y1, &st->d.t,
                              st->cover, s->tile * s->tile);
    else
        rs_depth_rect(&p->su, st->d.x0, st->d.y0, st->d.x1, st->d.y1, &st->d.t, p->tri.prim,
                      st->d.avx2);
    if (!st->d.t.nwon) return true;
    uint32_t slot;
    if (!slot_take(&st->slots, &slot) || slot >= TILE_MAX_SLOTS) return false;
    slot_store(&st->slots, slot, p);
    st->slots.pixels[slot] = 1;           /* held while its pixels change owner */
    /* in locals, which the stores to owner would otherwise make GCC reload; the won
     * pixels are distinct and none is slot's yet, so no release below frees slot */
    const int32_t *won = st->d.t.won;
    const int nwon = st->d.t.nwon;
    tile_owner *owner = st->owner;
    for (int k = 0; k < nwon; k++) {
        tile_owner *own = &owner[won[k]];
        if (*own) slot_release(&st->slots, *own - 1u);
        *own = (tile_owner)(slot + 1);
    }
    st->slots.pixels[slot] += (uint32_t)nwon;
    slot_release(&st->slots, slot);
    return true;
}

/* Why tile_add failed: too many slots for tile_owner, else out of memory. */
static void tile_add_failed(gr_ctx *c, const shade_tile *st, const plr_state *s)
{
    if (st->slots.n >= TILE_MAX_SLOTS)
        gr_fail(c, GR_ERR_INVALID, "raster.tile-shade: tile %llu has more than %u visible "
                "triangles at once, more than its 16-bit pixel owners can name: use a tile "
                "edge below %d", (unsigned long long)gr_key(c), TILE_MAX_SLOTS - 1, s->tile);
    else
        gr_fail(c, GR_ERR_NOMEM, "raster.tile-shade: out of memory (tile %llu)",
                (unsigned long long)gr_key(c));
}

/* A packet of visible pixels being gathered for the pixel shader, as arrays: their
 * edge values and their triangles' area and 1/w, for rs_weights_packet. A slot is in the
 * batch while its stamp equals `batch`; index[slot] is then its place in tris. */
typedef struct shade_batch {
    int n, ntris;
    uint32_t batch;
    uint32_t *stamp;
    uint8_t *index;
    sh_ps_quad_setup *quad;               /* per slot: its triangle's, kept across packets */
    sh_ps_quad_setup *quads[SH_PS_MAX];   /* tris[k]'s: quad + its slot */
    uint16_t x[SH_PS_MAX], y[SH_PS_MAX];
    float b1[SH_PS_MAX], b2[SH_PS_MAX];
    double e0[SH_PS_MAX], e1[SH_PS_MAX], area[SH_PS_MAX];
    float iw[3][SH_PS_MAX];
    uint8_t tri[SH_PS_MAX];
    sh_ps_tri tris[SH_PS_MAX];
} shade_batch;

static void batch_shade(shade_batch *b, plr_state *s)
{
    if (!b->n) return;
    uint32_t rgba[SH_PS_MAX];
    float linear[3 * SH_PS_MAX];
    const float *const iw[3] = {b->iw[0], b->iw[1], b->iw[2]};
    rs_weights_packet(b->n, b->e0, b->e1, b->area, iw, b->b1, b->b2, s->env->isa == RT_ISA_AVX2);
    sh_ps_packet_kept(s->env, &(sh_ps_frags){b->n, b->tris, b->tri, b->b1, b->b2, b->x, b->y,
                                             s->hdr ? linear : NULL},
                      &(sh_ps_kept){b->quads, b->ntris}, rgba);
    uint32_t *const color = s->color;
    const size_t width = (size_t)s->width;
    for (int i = 0; i < b->n; i++) color[(size_t)b->y[i] * width + b->x[i]] = rgba[i];
    if (s->hdr)
        for (int i = 0; i < b->n; i++) plr_hdr_put(s, b->x[i], b->y[i], &linear[3 * i]);
    if (s->surface)
        for (int i = 0; i < b->n; i++)
            plr_surface_put(s, b->x[i], b->y[i], &b->tris[b->tri[i]], b->b1[i], b->b2[i]);
    atomic_fetch_add_explicit(s->fragments, (uint64_t)b->n, memory_order_relaxed);
    b->n = b->ntris = 0;
    b->batch++;
}

/* The index of slot's triangle in the batch's tris, added if new. */
static int batch_tri(shade_batch *b, const tile_slots *sl, uint32_t slot)
{
    if (b->stamp[slot] == b->batch) return b->index[slot];
    if (!b->stamp[slot]) b->quad[slot].ready = false;   /* the slot's first packet in this tile */
    int k = b->ntris++;
    b->tris[k] = sl->rec[slot].tri;
    b->quads[k] = &b->quad[slot];
    b->stamp[slot] = b->batch;
    b->index[slot] = (uint8_t)k;
    return k;
}

/* Pixels order[0 .. n) of the tile (offsets dy << 8 | dx from ox, oy), all owned by
 * slot: the packet's arrays filled a run at a time, the slot's values read once a run. */
static void batch_add_run(shade_batch *b, plr_state *s, const tile_slots *sl, uint32_t slot,
                          const uint16_t *order, uint32_t n, int ox, int oy)
{
    const slot_rec *r = &sl->rec[slot];
    while (n) {
        if (b->n == SH_PS_MAX) batch_shade(b, s);
        const uint8_t k = (uint8_t)batch_tri(b, sl, slot);
        const int i0 = b->n;
        const uint32_t room = (uint32_t)(SH_PS_MAX - i0), m = n < room ? n : room;
        for (uint32_t j = 0; j < m; j++) {
            const int x = ox + (order[j] & 0xff), y = oy + (order[j] >> 8), i = i0 + (int)j;
            int64_t e0, e1;
            slot_edges_at(r, x, y, &e0, &e1);
            b->e0[i] = (double)e0;
            b->e1[i] = (double)e1;
            b->area[i] = r->area;
            for (int c = 0; c < 3; c++) b->iw[c][i] = r->inv_w[c];
            b->x[i] = (uint16_t)x;
            b->y[i] = (uint16_t)y;
            b->tri[i] = k;
        }
        b->n = i0 + (int)m;
        order += m;
        n -= m;
    }
}

/* Room in st's per-slot batch arrays for its slots. */
static bool batch_reserve(shade_tile *st)
{
    uint32_t n = st->slots.n ? st->slots.n : 1;
    if (n <= st->batch_cap) return true;
    uint32_t *stamp = realloc(st->stamp, n * sizeof *stamp);
    if (stamp) st->stamp = stamp;
    uint8_t *index = realloc(st->index, n);
    if (index) st->index = index;
    sh_ps_quad_setup *quad = realloc(st->quad, n * sizeof *quad);
    if (quad) st->quad = quad;
    uint32_t *first = realloc(st->first, (n + 1) * sizeof *first);
    if (first) st->first = first;
    if (!stamp || !index || !quad || !first) return false;
    st->batch_cap = n;
    return true;
}

_Static_assert(PLR_MAX_TILE <= 256, "a listed pixel's dx and dy fit a byte each");

/* Pixel (x, y), when it has an owner, onto its owner's list: next[slot] is where the
 * slot's next entry goes, below end[slot]. False when a slot has more pixels than its
 * count said (never: tile_add keeps the counts), so nothing is written past a list. */
static inline bool list_pixel(shade_tile *st, uint32_t *next, const uint32_t *end, int x, int y)
{
    const plr_depth_tile *d = &st->d;
    const int dx = x - d->t.ox, dy = y - d->t.oy;
    const tile_owner o = st->owner[(size_t)dy * (size_t)d->t.stride + (size_t)dx];
    if (!o) return true;
    if (next[o - 1] == end[o - 1]) return false;
    st->order[next[o - 1]++] = (uint16_t)(dy << 8 | dx);
    return true;
}

/* The owned pixels of the tile listed by owner (st->order[first[slot] .. first[slot + 1]]),
 * each slot's in 2x2 quads (even x and y, as the pixel shader's level of detail pairs
 * pixels), quad rows top to bottom: a counting sort on the slots' pixel counts. next: a
 * word per slot. Rows ya and yb (equal at an odd edge of the rectangle) and columns xa and
 * xb (likewise) hold a quad's pixels inside the rectangle. */
static bool list_by_owner(shade_tile *st, uint32_t *next)
{
    const tile_slots *sl = &st->slots;
    uint32_t at = 0;
    for (uint32_t k = 0; k < sl->n; k++) {
        st->first[k] = next[k] = at;
        at += sl->pixels[k];
    }
    st->first[sl->n] = at;
    const uint32_t *end = st->first + 1;
    const plr_depth_tile *d = &st->d;
    bool ok = true;
    for (int qy = d->y0 & ~1; qy < d->y1; qy += 2) {
        const int ya = qy < d->y0 ? qy + 1 : qy, yb = qy + 1 < d->y1 ? qy + 1 : ya;
        for (int qx = d->x0 & ~1; qx < d->x1; qx += 2) {
            const int xa = qx < d->x0 ? qx + 1 : qx, xb = qx + 1 < d->x1 ? qx + 1 : xa;
            ok &= list_pixel(st, next, end, xa, ya);
            if (xb != xa) ok &= list_pixel(st, next, end, xb, ya);
            if (yb == ya) continue;
            ok &= list_pixel(st, next, end, xa, yb);
            if (xb != xa) ok &= list_pixel(st, next, end, xb, yb);
        }
    }
    return ok;
}

/* Asks for slot's record (its three lines) while earlier slots are shaded: the records
 * were written while triangles arrived, mostly long out of the core's caches, and
 * their first read is the copy of the triangle into the packet. Past the last slot it
 * asks for nothing. */
#define SLOT_PREFETCH_AHEAD 4
static inline void prefetch_record(const tile_slots *sl, uint32_t slot)
{
    if (slot >= sl->n) return;
    const char *r = (const char *)&sl->rec[slot];
    for (int k = 0; k < 3; k++) rs_prefetch_line(r + 64 * k);
}

/* Shades the tile's owned pixels slot by slot, in slot (memory) order: each record is
 * read once, while its pixels are batched, instead of at every pixel of a scan that meets
 * the records in no order a prefetcher follows. The colours do not depend on the order.
 * The tile's image is the background first (tile_background.c): a fill of its rows that
 * also brings them into the cache the shaded pixels are stored to. */
static bool tile_shade(shade_tile *st, plr_state *s)
{
    plr_fill_background(s, &(tile_rect){st->d.t.ox, st->d.t.oy, st->d.x0, st->d.y0, st->d.x1, st->d.y1});
    shade_batch b;
    b.n = b.ntris = 0;
    b.batch = 1;
    bool ok = batch_reserve(st);
    b.stamp = st->stamp;
    b.index = st->index;
    b.quad = st->quad;
    ok = ok && list_by_owner(st, b.stamp);   /* stamp is the lists' cursor until cleared */
    if (ok) memset(b.stamp, 0, st->slots.n * sizeof *b.stamp);
    const int ox = st->d.t.ox, oy = st->d.t.oy;
    for (uint32_t slot = 0; ok && slot < st->slots.n; slot++) {
        prefetch_record(&st->slots, slot + SLOT_PREFETCH_AHEAD);
        batch_add_run(&b, s, &st->slots, slot, &st->order[st->first[slot]],
                      st->first[slot + 1] - st->first[slot], ox, oy);
    }
    if (ok) batch_shade(&b, s);
    return ok;
}

/* Blends up to SH_PS_MAX fragments of one triangle into the image, as the ordered
 * graph's OM does (alpha.h). */
static void blend_flush(plr_state *s, const plr_prim *p, int n, const uint16_t *x,
                        const uint16_t *y, const float *b1, const float *b2)
{
    if (!n) return;
    uint8_t tri[SH_PS_MAX] = {0};
    uint32_t rgba[SH_PS_MAX];
    sh_ps_packet(s->env, &(sh_ps_frags){n, &p->tri, tri, b1, b2, x, y, NULL}, rgba);
    for (int i = 0; i < n; i++) {
        uint32_t *dst = &s->color[(size_t)y[i] * (size_t)s->width + x[i]];
        *dst = plr_blend(*dst, rgba[i], plr_alpha8(s->env, &p->tri, b1[i], b2[i], x[i], y[i]));
        if (s->hdr) plr_hdr_decode(s, x[i], y[i]);
    }
    atomic_fetch_add_explicit(s->fragments, (uint64_t)n, memory_order_relaxed);
}

/* After the opaque pixels are shaded: each blended triangle, in primitive-id order, over
 * the final opaque depth (less; no depth write). */
static void tile_blend(shade_tile *st, plr_state *s)
{
    if (!st->blended.n) return;
    blended_sort(&st->blended);
    uint16_t x[SH_PS_MAX], y[SH_PS_MAX];
    float b1[SH_PS_MAX], b2[SH_PS_MAX];
    for (size_t t = 0; t < st->blended.n; t++) {
        const plr_prim *p = &st->blended.p[t];
        rs_interp ip;
        rs_interp_of(&p->su, &ip);
        int m = rs_raster_rect(&p->su, st->d.x0, st->d.y0, st->d.x1, st->d.y1, st->cover);
        int n = 0;
        for (int k = 0; k < m; k++) {
            const rs_cover *c = &st->cover[k];
            size_t at = (size_t)(c->y - st->d.t.oy) * (size_t)st->d.t.stride + (size_t)(c->x - st->d.t.ox);
            float z;
            rs_weights(&ip, c->e0, c->e1, &z, &b1[n], &b2[n]);
            if (!(z < st->d.t.z[at])) continue;
            x[n] = c->x;
            y[n] = c->y;
            if (++n == SH_PS_MAX) {
                blend_flush(s, p, n, x, y, b1, b2);
                n = 0;
            }
        }
        blend_flush(s, p, n, x, y, b1, b2);
    }
}

/* Asks for the depth, visibility and owner lines of triangle p's first rows in the
 * tile, for the triangle after the one being tested: with every tile that has triangles
 * open at once (one worker: Bin feeds them all in turn) a tile's lines are mostly out of
 * the first-level cache when a triangle reaches them, and rs_depth_rect and tile_add
 * wait on their loads. A row's first line of each array only (most triangles span one
 * line of each), the first PREFETCH_ROWS rows; a hint: it loads nothing. */
#define PREFETCH_ROWS 4
static inline void prefetch_rows(const shade_tile *st, const plr_prim *p)
{
    const plr_depth_tile *d = &st->d;
    int x0 = d->x0 > p->su.x0 ? d->x0 : p->su.x0, y0 = d->y0 > p->su.y0 ? d->y0 : p->su.y0;
    x0 = x0 < d->x1 - 1 ? x0 : d->x1 - 1;                  /* inside the tile, as every row below */
    const int last = d->y1 - 1 < p->su.y1 ? d->y1 - 1 : p->su.y1;
    /* always PREFETCH_ROWS hints, rows past the triangle's last repeating it: a loop's
     * exit on the triangle's height would be a branch no predictor follows */
#pragma GCC unroll 4
    for (int r = 0; r < PREFETCH_ROWS; r++) {
        int y = y0 + r < last ? y0 + r : last;
        y = y > d->y0 ? y : d->y0;
        const size_t at = (size_t)(y - d->t.oy) * (size_t)d->t.stride + (size_t)(x0 - d->t.ox);
        rs_prefetch_line(&d->t.z[at]);
        rs_prefetch_line(&d->t.vis[at]);
        rs_prefetch_line(&st->owner[at]);
    }
}

void plr_tile_shade_main(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    if (s->msaa > 1) {
        plr_tile_shade_msaa(c);
        return;
    }
    gr_assert(c, gr_key(c) < s->tile_pool->ntiles);
    s->visited[gr_key(c)] = 1;
    shade_tile *st = tile_open(s, gr_key(c));
    gr_assert(c, st != NULL);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const binned_pkt *p = w.mem;
        gr_work_units(c, p->count);              /* its cost follows triangles, not packets */
        plr_check_binned(c, s, p);
        for (uint32_t i = 0; i < p->count; i++) {
            if (i + 1 < p->count) prefetch_rows(st, &p->t[i + 1].prim);
            if (!tile_add(st, s, &p->t[i].prim)) tile_add_failed(c, st, s);
        }
        gr_commit(c, 0, 1);
    }
    gr_assert(c, tile_shade(st, s));
    tile_blend(st, s);
    plr_tile_pool_give(s->tile_pool, gr_key(c), st);
}

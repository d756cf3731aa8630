/* zraster.c — Z-Raster, the rasterizer of the hybrid's depth-only pass: one per
 * IA/VS group, it takes its group's set-up triangles in any order and rasterizes each
 * once, straight into its own depth layer (frame resource "depth-layer": depth and visible
 * primitive + 1 per pixel over the whole image; rs_depth_rect: the nearest depth, equal
 * depths to the smaller primitive id). When its input ends it tells every Z-Tile copy
 * that its layer is done and where it drew; each copy folds the layers of its tiles once
 * every group is done (ztile.c).
 *
 * Why layers (sort-last) rather than bins per tile (sort-middle): the pass keeps only
 * depth and a primitive per pixel, so binning cost more than it saved. Copying each
 * set-up triangle (112 bytes) to every tile it touches, handing the copies from the
 * workers that binned them to those that rasterize them, and waking a Thread per tile
 * for every 16 of them took a third of the pass (docs/performance.md). A layer is
 * memory instead: width x height x 8 bytes per group. Each layer is cleared a tile at a
 * time, when its group first draws there, so the clearing is spread over the groups and
 * a tile no triangle of the group reached is never touched.
 *
 * With msaa > 1 (the hybrid's multisampling) the layer holds a depth and primitive per
 * sample (pixel p's samples at p * msaa ..), each sample tested as a pixel is without:
 * coverage by the top-left rule at the sample point, depth from the triangle's plane
 * there (rasterizer/samples.h, as the raster graphs' multisampling computes it), nearest
 * wins, equal depths to the smaller id. An alpha-tested triangle's alpha is taken once
 * per pixel at its centre, as the raster graphs take it, and passes or fails all the
 * pixel's samples. */
#include "pipelines/raster/internal.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

typedef struct zraster_walk {
    plr_state *s;
    rs_depth_target layer;                /* the whole image */
    bool avx2;                            /* rs_depth_rect's kernel (the frame's env.isa) */
    uint64_t covered;
    rs_cover *cover;                      /* MASK triangles' covered pixels (alpha.h); with
                                             msaa > 1 every triangle's */
    uint8_t *masks;                       /* msaa > 1: their covered samples */
} zraster_walk;

#define ZRASTER_COVER 4096                /* covers per plr_depth_rect_masked strip */

/* Clears the layer (depth FLT_MAX, no primitive) in the tiles under the triangle's
 * bounds it has not drawn in yet. */
static void clear_tiles_under(plr_state *s, const rs_setup *su)
{
    const rast_cfg *rc = &s->rc;
    const int tx0 = plr_tile_of(rc, su->x0), tx1 = plr_tile_of(rc, su->x1);
    const int ty0 = plr_tile_of(rc, su->y0), ty1 = plr_tile_of(rc, su->y1);
    if (tx0 == tx1 && ty0 == ty1 && s->layer_drawn[ty0 * rc->tiles_x + tx0]) return;   /* most triangles */
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++) {
            uint8_t *drawn = &s->layer_drawn[ty * rc->tiles_x + tx];
            tile_rect r;
            if (*drawn || !plr_tile_rect_at(rc, tx, ty, &r)) continue;
            *drawn = 1;
            const size_t m = (size_t)s->msaa;   /* elements per pixel */
            const size_t first = ((size_t)r.y0 * (size_t)s->width + (size_t)r.x0) * m;
            const size_t row = (size_t)(r.x1 - r.x0) * m, row_bytes = row * sizeof(float);
            for (size_t x = 0; x < row; x++) s->layer->z[first + x] = FLT_MAX;
            for (int y = r.y0; y < r.y1; y++) {
                size_t at = ((size_t)y * (size_t)s->width + (size_t)r.x0) * m;
                if (y > r.y0) memcpy(&s->layer->z[at], &s->layer->z[first], row_bytes);
                memset(&s->layer->vis[at], 0, row_bytes);
            }
        }
}

/* Covered pixels [0, n) of a triangle (their samples in masks[]) into the per-sample
 * layer; an alpha-tested one only where its alpha at the pixel centre passes. */
static void take_samples(const zraster_walk *w, const plr_prim *p, const rs_interp *ip,
                         const rs_edge01 *e, const rs_depth_plane *plane, int n)
{
    const plr_state *s = w->s;
    const bool masked = plr_alpha_mode(s->env, p->tri.material) == SC_ALPHA_MASK;
    const uint32_t id = p->tri.prim + 1;
    for (int i = 0; i < n; i++) {
        const rs_cover *c = &w->cover[i];
        if (masked) {
            float zw, b1, b2;
            rs_weights(ip, c->e0, c->e1, &zw, &b1, &b2);
            if (!plr_alpha_passes(s->env, &p->tri, b1, b2, c->x, c->y)) continue;
        }
        const size_t first = ((size_t)c->y * (size_t)s->width + (size_t)c->x) * (size_t)s->msaa;
        for (unsigned bits = w->masks[i]; bits; bits &= bits - 1) {
            const int k = __builtin_ctz(bits);
            float *held = &s->layer->z[first + (size_t)k];
            uint32_t *owner = &s->layer->vis[first + (size_t)k];
            const float z = rs_sample_depth(e, plane, s->pattern, k, c->x, c->y);
            if (z < *held || (z == *held && (*owner == 0 || id < *owner))) {
                *held = z;
                *owner = id;
            }
        }
    }
}

/* One set-up triangle's samples into the layer, in strips of at most ZRASTER_COVER
 * pixels; returns the pixels where it covers a sample. */
static uint64_t zraster_prim_samples(zraster_walk *w, const plr_prim *p, const pl_region *r)
{
    const rs_setup *su = &p->su;
    const int x0 = r->x0 > su->x0 ? r->x0 : su->x0, x1 = r->x1 < su->x1 + 1 ? r->x1 : su->x1 + 1;
    const int y0 = r->y0 > su->y0 ? r->y0 : su->y0, y1 = r->y1 < su->y1 + 1 ? r->y1 : su->y1 + 1;
    if (x0 >= x1 || y0 >= y1) return 0;
    rs_interp ip;
    rs_edge01 e;
    rs_depth_plane plane;
    rs_interp_of(su, &ip);
    rs_edge01_of(su, &e);
    rs_depth_plane_of(&ip, &plane);
    const int rows = ZRASTER_COVER / (x1 - x0) > 0 ? ZRASTER_COVER / (x1 - x0) : 1;
    uint64_t covered = 0;
    for (int ys = y0; ys < y1; ys += rows) {
        const int ye = ys + rows < y1 ? ys + rows : y1;
        for (int xs = x0; xs < x1;) {     /* a row wider than the strip: pieces of it */
            const int xe = x1 - xs > ZRASTER_COVER ? xs + ZRASTER_COVER : x1;
            const int n = rs_raster_rect_samples(su, w->s->pattern, xs, ys, xe, ye, w->cover, w->masks, w->avx2);
            take_samples(w, p, &ip, &e, &plane, n);
            covered += (uint64_t)n;
            xs = xe;
        }
    }
    return covered;
}

/* One set-up triangle into the layer, inside the frame's region. */
static void zraster_prim(void *arg, const plr_prim *p)
{
    zraster_walk *w = arg;
    const pl_region *r = &w->s->rc.region;
    clear_tiles_under(w->s, &p->su);
    if (w->masks) {
        w->covered += zraster_prim_samples(w, p, r);
        return;
    }
    if (w->cover && plr_alpha_mode(w->s->env, p->tri.material) == SC_ALPHA_MASK) {
        /* alpha-tested: only the pixels alpha covers become visible (the VS-depth kept
         * the uv it needs: attributes are on for scenes with MASK materials) */
        w->covered += (uint64_t)plr_depth_rect_masked(w->s->env, p, r->x0, r->y0, r->x1, r->y1,
                                                      &w->layer, w->cover, ZRASTER_COVER);
        return;
    }
    w->covered += (uint64_t)rs_depth_rect(&p->su, r->x0, r->y0, r->x1, r->y1, &w->layer,
                                          p->tri.prim, w->avx2);
}

/* Every Z-Tile copy (a subqueue each) learns that the layer is done and where it drew. */
static void tell_copies(gr_ctx *c, const plr_state *s)
{
    const uint32_t layer = s->layer_index;
    for (uint32_t k = 0; k < s->ztile_copies; k++) {
        gr_window w;
        gr_reserve_out_key(c, 0, 1, k, &w);
        *(ztile_done_pkt *)w.mem = (ztile_done_pkt){layer, 0};
        gr_commit_out(c, 0, 1);
    }
}

void plr_zraster_main(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    memset(s->layer_drawn, 0, (size_t)(s->tiles_x * s->tiles_y));
    zraster_walk w = {s, {s->layer->z, s->layer->vis, 0, 0, s->width, NULL, 0},
                      s->env->isa == RT_ISA_AVX2, 0, NULL, NULL};
    if (s->alpha.mask || s->msaa > 1)
        gr_assert(c, (w.cover = malloc(ZRASTER_COVER * sizeof *w.cover)) != NULL);
    if (s->msaa > 1) gr_assert(c, (w.masks = malloc(ZRASTER_COVER)) != NULL);
    gr_window in;
    while (gr_reserve(c, 0, 1, &in) == GR_OK) {
        const prim_pkt *p = in.mem;
        plr_check_prims(c, s, p, in.bytes);
        for (uint32_t i = 0; i < p->count; i++) plr_each_prim(s, &p->rec[i], zraster_prim, &w);
        gr_commit(c, 0, 1);
    }
    free(w.cover);
    free(w.masks);
    atomic_fetch_add_explicit(s->depth_tested, w.covered, memory_order_relaxed);
    tell_copies(c, s);
}

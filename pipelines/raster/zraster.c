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
 * a tile no triangle of the group reached is never touched. */
#include "pipelines/raster/internal.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

typedef struct zraster_walk {
    plr_state *s;
    rs_depth_target layer;                /* the whole image */
    bool avx2;                            /* rs_depth_rect's kernel (the frame's env.isa) */
    uint64_t covered;
    rs_cover *cover;                      /* MASK triangles' covered pixels (alpha.h) */
} zraster_walk;

#define ZRASTER_COVER 4096                /* covers per plr_depth_rect_masked strip */

/* Clears the layer (depth FLT_MAX, no primitive) in the tiles under the triangle's
 * bounds it has not drawn in yet. */
static void clear_tiles_under(plr_state *s, const rs_setup *su)
{
    const rast_cfg *rc = &s->rc;
    const int tx0 = plr_tile_of(rc, su->x0), tx1 = plr_tile_of(rc, su->x1);
    const int ty0 = plr_tile_of(rc, su->y0), ty1 = plr_tile_of(rc, su->y1);
    for (int ty = ty0; ty <= ty1; ty++)
        for (int tx = tx0; tx <= tx1; tx++) {
            uint8_t *drawn = &s->layer_drawn[ty * rc->tiles_x + tx];
            tile_rect r;
            if (*drawn || !plr_tile_rect_at(rc, tx, ty, &r)) continue;
            *drawn = 1;
            const size_t first = (size_t)r.y0 * (size_t)s->width + (size_t)r.x0;
            const size_t row_bytes = (size_t)(r.x1 - r.x0) * sizeof(float);
            for (int x = 0; x < r.x1 - r.x0; x++) s->layer->z[first + (size_t)x] = FLT_MAX;
            for (int y = r.y0; y < r.y1; y++) {
                size_t at = (size_t)y * (size_t)s->width + (size_t)r.x0;
                if (y > r.y0) memcpy(&s->layer->z[at], &s->layer->z[first], row_bytes);
                memset(&s->layer->vis[at], 0, row_bytes);
            }
        }
}

/* One set-up triangle into the layer, inside the frame's region. */
static void zraster_prim(void *arg, const plr_prim *p)
{
    zraster_walk *w = arg;
    const pl_region *r = &w->s->rc.region;
    clear_tiles_under(w->s, &p->su);
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
                      s->env->isa == RT_ISA_AVX2, 0, NULL};
    if (s->alpha.mask) gr_assert(c, (w.cover = malloc(ZRASTER_COVER * sizeof *w.cover)) != NULL);
    gr_window in;
    while (gr_reserve(c, 0, 1, &in) == GR_OK) {
        const prim_pkt *p = in.mem;
        plr_check_prims(c, s, p, in.bytes);
        for (uint32_t i = 0; i < p->count; i++) plr_each_prim(s, &p->rec[i], zraster_prim, &w);
        gr_commit(c, 0, 1);
    }
    free(w.cover);
    atomic_fetch_add_explicit(s->depth_tested, w.covered, memory_order_relaxed);
    tell_copies(c, s);
}

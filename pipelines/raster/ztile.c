/* ztile.c — Z-Tile, the end of the hybrid's depth-only pass, instanced per
 * subqueue of its input set: one copy per group, each taking its share of the
 * framebuffer tiles (plrt_tile_deal, by Blend band, as rt.tiler's copies do). Every
 * Z-Raster tells every copy when its depth layer is done and where it drew
 * (zraster.c). When the copy's subqueue closes every Z-Raster is done, so the
 * layers are final: tile by tile, it folds them into the frame's visibility buffer and
 * hands the tile's samples on to the pixel stages as runs (pipelines/raytrace/sample_runs.h).
 * The copies become ready together when the last Z-Raster finishes, and the workers take
 * one each, so each worker's pixel stages shade its own tiles and sum into its own
 * Blend bands, as in the ray tracer.
 *
 * Why the image is the draw-order pass's, whatever the groups and the order triangles
 * came in: each layer holds, per pixel, the least (depth, primitive id) of its triangles
 * (rs_depth_rect), and the fold takes the least over the layers, so the result is the
 * least over all triangles. With msaa > 1 the layers and the visibility buffer hold a
 * primitive per sample (zraster.c), folded the same way, sample by sample; the runs are
 * of pixels, whose samples the pixel shader reads.
 *
 * With `background` (one sample per pixel) an 8x8 block where no primitive is visible
 * goes to no pixel stage: the camera ray of each of its pixels would miss and add the
 * background to its sums, so Z-Tile adds it when it clears them. */
#include "pipelines/raster/internal.h"

#include "pipelines/raytrace/sample_runs.h"

#include <string.h>

/* One row of the fold: into (z, v), the nearer of it and layer (zk, vk) per pixel
 * (vk 0: none there). Bitwise logic and selects, no branches: the loop vectorizes. */
static void fold_row(float *restrict z, uint32_t *restrict v, const float *restrict zk,
                     const uint32_t *restrict vk, size_t n)
{
    for (size_t x = 0; x < n; x++) {
        const uint32_t nearer = (vk[x] != 0) & ((v[x] == 0) | (zk[x] < z[x]) | ((zk[x] == z[x]) & (vk[x] < v[x])));
        z[x] = nearer ? zk[x] : z[x];
        v[x] = nearer ? vk[x] : v[x];
    }
}

/* The visible primitive of each pixel of r: the least (depth, id) over the layers (no
 * layer: none). Only this instance writes these pixels of the visibility buffer. */
static void fold_layers(const plr_state *s, const tile_rect *r, const plr_depth_layer *const *l, int n)
{
    const size_t m = (size_t)s->msaa, width = (size_t)(r->x1 - r->x0) * m;
    float z[PLR_MAX_TILE * RS_MAX_SAMPLES];
    for (int y = r->y0; y < r->y1; y++) {
        const size_t row = ((size_t)y * (size_t)s->width + (size_t)r->x0) * m;
        uint32_t *out = &s->vis[row];
        if (n == 0) {
            memset(out, 0, width * sizeof *out);
            continue;
        }
        memcpy(out, &l[0]->vis[row], width * sizeof *out);
        if (n == 1) continue;
        memcpy(z, &l[0]->z[row], width * sizeof *z);
        for (int k = 1; k < n; k++) fold_row(z, out, &l[k]->z[row], &l[k]->vis[row], width);
    }
}

/* Whether a primitive is visible in the pixels [x0, x1) x [y0, y1) (one sample each). */
static bool any_visible(const plr_state *s, int x0, int y0, int x1, int y1)
{
    uint32_t seen = 0;
    for (int y = y0; y < y1; y++) {
        const uint32_t *v = &s->vis[(size_t)y * (size_t)s->width];
        for (int x = x0; x < x1; x++) seen |= v[x];
    }
    return seen != 0;
}

/* Tile t's blocks where a primitive is visible, cut into runs; the others' pixels get
 * the background in their sums here (background_blocks): the pixel stages would find
 * only misses there, each adding the same. The sums are this tile's, just cleared, so
 * setting them is adding: a row of a block is one copy of `row`. */
static void cut_visible_blocks(const plr_state *s, plrt_run_cutter *runs, gr_ctx *c, const plrt_tile *t)
{
    int64_t row[PLRT_BLOCK * 3];
    for (int i = 0; i < PLRT_BLOCK * 3; i++) row[i] = s->background[i % 3];
    for (int by = t->y0; by < t->y1; by += PLRT_BLOCK)
        for (int bx = t->x0; bx < t->x1; bx += PLRT_BLOCK) {
            const int x1 = bx + PLRT_BLOCK < t->x1 ? bx + PLRT_BLOCK : t->x1;
            const int y1 = by + PLRT_BLOCK < t->y1 ? by + PLRT_BLOCK : t->y1;
            if (any_visible(s, bx, by, x1, y1)) {
                plrt_runs_cut_block(runs, c, t, bx, by);
                continue;
            }
            plrt_runs_end(runs, c);
            for (int y = by; y < y1; y++)
                memcpy(s->deal.sums + ((size_t)y * (size_t)s->width + (size_t)bx) * 3, row,
                       (size_t)(x1 - bx) * sizeof row / PLRT_BLOCK);
        }
    plrt_runs_end(runs, c);
}

void plr_ztile_main(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    const uint32_t copy = (uint32_t)gr_key(c);
    const plr_depth_layer *layer[PL_MAX_COPIES_PER_RESOURCE];
    const uint8_t *drawn[PL_MAX_COPIES_PER_RESOURCE];
    int n = 0;
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const ztile_done_pkt *p = w.mem;
        const plr_depth_layer *l = pl_frame_resource_at(s->frame, (int)p->layer, plr_layer_name(s->msaa));
        const size_t tiles = (size_t)(s->tiles_x * s->tiles_y);
        gr_assert(c, l && l->drawn && l->ntiles == tiles && n < PL_MAX_COPIES_PER_RESOURCE);
        if (l && l->drawn && l->ntiles == tiles && n < PL_MAX_COPIES_PER_RESOURCE) {
            layer[n] = l;
            drawn[n++] = l->drawn;
        }
        gr_commit(c, 0, 1);
    }
    plrt_run_cutter runs;    /* to its own copy of the pixel stages, when the graph has them */
    plrt_runs_init(&runs, s->spp, s->run_samples, (int)(copy % s->run_outputs));
    for (uint32_t t = 0; t < (uint32_t)(s->tiles_x * s->tiles_y); t++) {
        tile_rect r;
        if (!plr_tile_rect(&s->rc, t, &r) || plrt_tile_copy(&s->deal, r.x0, r.y0) != copy) continue;
        const plr_depth_layer *here[PL_MAX_COPIES_PER_RESOURCE];
        int m = 0;
        for (int k = 0; k < n; k++)
            if (drawn[k][t]) here[m++] = layer[k];
        fold_layers(s, &r, here, m);
        plrt_clear_tile_sums(&s->deal, r.x0, r.y0, r.x1, r.y1);
        const plrt_tile tile = {r.x0, r.y0, r.x1, r.y1};
        if (s->background_blocks) cut_visible_blocks(s, &runs, c, &tile);
        else plrt_runs_cut(&runs, c, &tile);
    }
    plrt_runs_flush(&runs, c);
}

/* raster_ztile.c — Z-Tile, the per-tile stage of the sort-middle depth pass (hybrid
 * graph): one instance per framebuffer tile takes the set-up triangles the Z-Bin stages
 * sent its tile, in any order, and rasterizes them straight into a private depth and
 * visibility tile (rs_depth_rect: no fragment packets, no shading). When its subqueue
 * closes, every triangle of the frame has been seen, so the tile is final: it goes to
 * the frame's visibility buffer, and its samples go on to the pixel stages
 * (the ray tracer's Sampler) as runs (pipelines/sample_runs.h).
 *
 * Why this gives the image of the draw-order pass: rs_depth_rect keeps the nearest depth
 * and, at equal depths, the smaller primitive id, whatever order triangles come in. */
#include "pipelines/raster_internal.h"

#include "pipelines/sample_runs.h"

#include <string.h>

/* The finished tile's visible primitives into the frame's visibility buffer (only this
 * instance writes these pixels); its depths stay in the tile. */
static void ztile_store(const rsp_depth_tile *z, rsp_state *s)
{
    for (int y = z->y0; y < z->y1; y++) {
        size_t at = (size_t)y * (size_t)s->width;
        size_t from = (size_t)(y - z->t.oy) * (size_t)z->t.stride + (size_t)(z->x0 - z->t.ox);
        memcpy(&s->vis[at + (size_t)z->x0], &z->t.vis[from], (size_t)(z->x1 - z->x0) * sizeof *s->vis);
    }
}

void rsp_ztile_main(gr_ctx *c)
{
    rsp_state *s = gr_user(c);
    rsp_depth_tile z;
    gr_assert(c, rsp_depth_tile_init(&z, s, rsp_zbin_subqueue(s, gr_key(c))));
    uint64_t covered = 0;
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const zbin_pkt *p = w.mem;
        for (uint32_t i = 0; i < p->count; i++)
            covered += (uint64_t)rs_depth_rect(&p->t[i].su, z.x0, z.y0, z.x1, z.y1, &z.t,
                                               p->t[i].prim, z.avx2);
        gr_commit(c, 0, 1);
    }
    ztile_store(&z, s);
    atomic_fetch_add_explicit(s->depth_tested, covered, memory_order_relaxed);
    rtp_run_cutter runs;
    rtp_runs_init(&runs, s->spp, s->run_samples, 0);
    rtp_runs_cut(&runs, c, &(rtp_tile){z.x0, z.y0, z.x1, z.y1});
    rtp_runs_flush(&runs, c);
    rsp_depth_tile_free(&z);
}

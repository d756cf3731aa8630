/* depth_tile.c — Tile-Shade's depth and visibility tile (see internal.h). */
#include "pipelines/raster/internal.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* The buffers hold the tile in 4x2 blocks (raster.h) from the block corner (ox, oy) at
 * or before the tile's: ox a multiple of 4, oy even, so that a pixel quad of the shading
 * pass (even x and y) lies in one block. With a tile edge that is not a multiple of 4
 * this adds up to 3 columns and a row; the allocation is for the largest such tile. */
size_t plr_depth_tile_cells(const plr_state *s)
{
    return (size_t)((s->tile + 6) & ~3) * (size_t)((s->tile + 2) & ~1);
}

/* The tile is not empty: the binning stages send nothing to a tile outside the region.
 * The buffers are allocated on first use and kept across tiles; the whole tile is cleared
 * (the kernels read and write back whole blocks). */
bool plr_depth_tile_init(plr_depth_tile *d, const plr_state *s, uint64_t tile)
{
    tile_rect r;
    plr_tile_rect(&s->rc, tile, &r);
    d->x0 = r.x0;
    d->y0 = r.y0;
    d->x1 = r.x1;
    d->y1 = r.y1;
    d->avx2 = s->env->isa == RT_ISA_AVX2;
    d->t.ox = r.ox & ~3;
    d->t.oy = r.oy & ~1;
    d->t.stride = (r.ox + s->tile - d->t.ox + 3) & ~3;
    d->t.blocks = true;
    d->t.nwon = 0;
    const size_t cells = plr_depth_tile_cells(s);
    /* 64-byte aligned: two blocks to a cache line */
    const size_t bytes = (cells * sizeof *d->t.z + 63) & ~(size_t)63;
    if (!d->t.z) d->t.z = aligned_alloc(64, bytes);
    if (!d->t.vis) d->t.vis = aligned_alloc(64, bytes);
    if (!d->t.z || !d->t.vis) return false;
    for (size_t i = 0; i < cells; i++) d->t.z[i] = FLT_MAX;
    memset(d->t.vis, 0, cells * sizeof *d->t.vis);
    return true;
}

void plr_depth_tile_free(plr_depth_tile *d)
{
    free(d->t.z);
    free(d->t.vis);
}

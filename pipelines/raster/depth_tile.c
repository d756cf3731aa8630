/* depth_tile.c — Tile-Shade's depth and visibility tile (see internal.h). */
#include "pipelines/raster/internal.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* The tile is not empty: the binning stages send nothing to a tile outside the region.
 * The buffers are allocated on first use and kept across tiles; the whole tile is cleared
 * (the kernels read past the rectangle's rows, RS_DEPTH_SLACK). */
bool plr_depth_tile_init(plr_depth_tile *d, const plr_state *s, uint64_t tile)
{
    tile_rect r;
    plr_tile_rect(&s->rc, tile, &r);
    d->x0 = r.x0;
    d->y0 = r.y0;
    d->x1 = r.x1;
    d->y1 = r.y1;
    d->avx2 = s->env->isa == RT_ISA_AVX2;
    size_t pixels = (size_t)s->tile * (size_t)s->tile;
    d->t.ox = r.ox;
    d->t.oy = r.oy;
    d->t.stride = s->tile;
    d->t.nwon = 0;
    if (!d->t.z) d->t.z = malloc((pixels + RS_DEPTH_SLACK) * sizeof *d->t.z);
    if (!d->t.vis) d->t.vis = calloc(pixels + RS_DEPTH_SLACK, sizeof *d->t.vis);
    if (!d->t.z || !d->t.vis) return false;
    for (size_t i = 0; i < pixels; i++) d->t.z[i] = FLT_MAX;
    memset(d->t.vis, 0, pixels * sizeof *d->t.vis);
    return true;
}

void plr_depth_tile_free(plr_depth_tile *d)
{
    free(d->t.z);
    free(d->t.vis);
}

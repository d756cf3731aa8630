/* depth_tile.c — Tile-Shade's depth and visibility tile (see internal.h). */
#include "pipelines/raster/internal.h"

#include <float.h>
#include <stdlib.h>

/* The tile is not empty: the binning stages send nothing to a tile outside the region. */
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
    d->t = (rs_depth_target){malloc((pixels + RS_DEPTH_SLACK) * sizeof(float)),
                             calloc(pixels + RS_DEPTH_SLACK, sizeof(uint32_t)),
                             r.ox, r.oy, s->tile, NULL, 0};
    if (!d->t.z || !d->t.vis) return false;
    for (size_t i = 0; i < pixels; i++) d->t.z[i] = FLT_MAX;
    return true;
}

void plr_depth_tile_free(plr_depth_tile *d)
{
    free(d->t.z);
    free(d->t.vis);
}

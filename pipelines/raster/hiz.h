/* hiz.h — coarse depth culling for the raster graph: per 8x8 pixel block, an upper
 * bound of the depth the Output Merger holds there.
 *
 * Data flow: OM writes depths -> plr_hiz_update() recomputes the blocks a packet
 * touched -> Rast asks plr_hiz_hidden() before rasterizing a triangle in a tile, and
 * skips it when every block under its bounds already holds nearer depths than the
 * triangle's nearest vertex.
 *
 * Why it is exact: the OM's depths only decrease, so a stored bound, however stale, is
 * >= the depth there now; a fragment's depth is >= its triangle's nearest vertex depth
 * less rounding (< 1e-6, the margin used); so every fragment of a skipped triangle
 * would fail the OM's `z < depth` test. Skipping changes the work, never the image.
 * Bounds are relaxed atomics: Rast may read one while the OM rewrites it. Each block
 * lies in one tile, so only that tile's OM instance writes its bound and its count. */
#ifndef PIPELINES_HIZ_H
#define PIPELINES_HIZ_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLR_HIZ_BLOCK 8

typedef struct plr_hiz {
    int width, height;                   /* image, pixels */
    int bw, bh;                          /* blocks */
    _Atomic(uint32_t) *zmax;             /* float bits per block, row-major */
    uint8_t *covered;                    /* pixels of the block written at least once */
} plr_hiz;

/* far_bits: the depth buffer's clear value. false when out of memory. */
bool plr_hiz_init(plr_hiz *h, int width, int height, uint32_t far_bits);
void plr_hiz_free(plr_hiz *h);

static inline size_t plr_hiz_block_of(const plr_hiz *h, int x, int y)
{
    return (size_t)(y / PLR_HIZ_BLOCK) * h->bw + x / PLR_HIZ_BLOCK;
}

/* The OM wrote pixel (x, y) for the first time (its depth was the clear value). Only
 * the OM instance of the block's tile may call this: blocks must not straddle tiles
 * (the tile size is a multiple of PLR_HIZ_BLOCK). */
static inline void plr_hiz_first_write(plr_hiz *h, int x, int y)
{
    h->covered[plr_hiz_block_of(h, x, y)]++;
}

/* Recomputes the bound of the block holding pixel (x, y) from the depth buffer, once
 * every pixel of the block has been written (before that the bound is the clear value,
 * and scanning would only find it again). */
void plr_hiz_update(plr_hiz *h, const _Atomic(uint32_t) *depth, int x, int y);

/* true when the pixel rectangle [x0,x1) x [y0,y1) holds only depths <= zmin - margin. */
bool plr_hiz_hidden(const plr_hiz *h, int x0, int y0, int x1, int y1, float zmin);

#endif

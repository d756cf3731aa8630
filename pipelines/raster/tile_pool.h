/* tile_pool.h — Tile-Shade's per-tile working memory kept from one frame to the next
 * (internal to pipelines/raster/), in the frame resource "tile-buffers", which outlives
 * the stage's state (made again every frame): the instance of tile t takes tile t's
 * buffers when it starts and gives them back when it ends, so a kept graph's frames
 * allocate them once, not on every tile of every frame (fresh memory is page faults, a
 * kernel clearing pages and cold cache lines), and each tile finds its buffers grown to
 * what it needed last frame.
 *
 * No lock: a Tile-Shade copy has at most one instance per tile at a time, and the
 * resource is per copy. It holds the buffers of every tile that had triangles, as many
 * as a run with all its tiles open at once (one worker) holds anyway. */
#ifndef PIPELINES_RASTER_TILE_POOL_H
#define PIPELINES_RASTER_TILE_POOL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct plr_tile_pool {
    void **items;                         /* per tile: its buffers, or NULL */
    size_t ntiles;
    void (*destroy)(void *item);          /* frees an item and what it holds */
} plr_tile_pool;

/* NULL when out of memory. */
plr_tile_pool *plr_tile_pool_new(void (*destroy)(void *item));
/* Room for tiles [0, ntiles) (before a run: not thread-safe); false when out of memory. */
bool plr_tile_pool_reserve(plr_tile_pool *p, size_t ntiles);
/* Tile `tile`'s item (tile < ntiles), NULL when it has none; the pool then holds none
 * for it until plr_tile_pool_give. */
void *plr_tile_pool_take(plr_tile_pool *p, size_t tile);
void plr_tile_pool_give(plr_tile_pool *p, size_t tile, void *item);
/* Frees the items it holds and the pool; NULL is allowed. */
void plr_tile_pool_free(plr_tile_pool *p);

#endif

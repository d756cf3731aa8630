/* tile_pool.c — see tile_pool.h. */
#include "pipelines/raster/tile_pool.h"

#include <stdlib.h>
#include <string.h>

plr_tile_pool *plr_tile_pool_new(void (*destroy)(void *item))
{
    plr_tile_pool *p = calloc(1, sizeof *p);
    if (p) p->destroy = destroy;
    return p;
}

bool plr_tile_pool_reserve(plr_tile_pool *p, size_t ntiles)
{
    if (ntiles <= p->ntiles) return true;
    void **items = realloc(p->items, ntiles * sizeof *items);
    if (!items) return false;
    memset(items + p->ntiles, 0, (ntiles - p->ntiles) * sizeof *items);
    p->items = items;
    p->ntiles = ntiles;
    return true;
}

void *plr_tile_pool_take(plr_tile_pool *p, size_t tile)
{
    void *item = p->items[tile];
    p->items[tile] = NULL;
    return item;
}

void plr_tile_pool_give(plr_tile_pool *p, size_t tile, void *item)
{
    p->items[tile] = item;
}

void plr_tile_pool_free(plr_tile_pool *p)
{
    if (!p) return;
    for (size_t t = 0; t < p->ntiles; t++)
        if (p->items[t]) p->destroy(p->items[t]);
    free(p->items);
    free(p);
}

/* tile_slots.h — what both Tile-Shade variants (tile_shade.c, tile_shade_msaa.c) keep
 * of a tile's triangles (internal to pipelines/raster/): a slot per triangle that owns at
 * least one pixel (or sample), freed when its last one is taken, and the blended
 * triangles set aside until the end, blended in primitive-id order. */
#ifndef PIPELINES_RASTER_TILE_SLOTS_H
#define PIPELINES_RASTER_TILE_SLOTS_H

#include "pipelines/raster/packets.h"

#include <stdlib.h>
#include <string.h>

typedef struct tile_slots {
    plr_prim *prim;
    uint32_t *pixels;                     /* pixels (or samples) each slot owns */
    uint32_t *free_slots;
    uint32_t n, nfree, cap;
} tile_slots;

static inline void tile_slots_free(tile_slots *sl)
{
    free(sl->prim);
    free(sl->pixels);
    free(sl->free_slots);
}

/* Room for cap slots before the arrays first grow (each growth copies them). */
static inline bool tile_slots_reserve(tile_slots *sl, uint32_t cap)
{
    if (cap <= sl->cap) return true;
    plr_prim *p = realloc(sl->prim, cap * sizeof *p);
    if (p) sl->prim = p;
    uint32_t *px = realloc(sl->pixels, cap * sizeof *px);
    if (px) sl->pixels = px;
    uint32_t *fr = realloc(sl->free_slots, cap * sizeof *fr);
    if (fr) sl->free_slots = fr;
    if (!p || !px || !fr) return false;
    sl->cap = cap;
    return true;
}

/* A slot for a new triangle: a freed one, else a new one (the arrays grow by doubling). */
static inline bool slot_take(tile_slots *sl, uint32_t *slot)
{
    if (sl->nfree) { *slot = sl->free_slots[--sl->nfree]; return true; }
    if (sl->n == sl->cap && !tile_slots_reserve(sl, sl->cap ? 2 * sl->cap : 64)) return false;
    *slot = sl->n++;
    return true;
}

static inline void slot_release(tile_slots *sl, uint32_t slot)
{
    if (--sl->pixels[slot] == 0) sl->free_slots[sl->nfree++] = slot;
}

/* BLEND triangles wait for the end (alpha.h: blended after the opaque ones). */
typedef struct blended_prims {
    plr_prim *p;
    size_t n, cap;
} blended_prims;

static inline bool blended_add(blended_prims *b, const plr_prim *p)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 16;
        plr_prim *q = realloc(b->p, cap * sizeof *q);
        if (!q) return false;
        b->p = q;
        b->cap = cap;
    }
    b->p[b->n++] = *p;
    return true;
}

/* Blended triangles in primitive-id order (ties, pieces of one clipped triangle: by
 * their setup, so any arrival order gives one order). */
static inline int blended_by_prim(const void *a, const void *b)
{
    const plr_prim *x = a, *y = b;
    if (x->tri.prim != y->tri.prim) return x->tri.prim < y->tri.prim ? -1 : 1;
    return memcmp(&x->su, &y->su, sizeof x->su);
}

static inline void blended_sort(blended_prims *b)
{
    if (b->n) qsort(b->p, b->n, sizeof *b->p, blended_by_prim);
}

#endif

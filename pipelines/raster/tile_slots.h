/* tile_slots.h — what the Tile-Shade variants keep of a tile's triangles (internal to
 * pipelines/raster/): a slot per triangle that owns at least one pixel, freed when its
 * last one is taken (tile_shade.c), and the blended triangles set aside until the end,
 * blended in primitive-id order (tile_shade.c, tile_shade_msaa.c). */
#ifndef PIPELINES_RASTER_TILE_SLOTS_H
#define PIPELINES_RASTER_TILE_SLOTS_H

#include "pipelines/raster/packets.h"

#include <stdlib.h>
#include <string.h>

/* What shading reads of a slot's triangle, in three whole cache lines (64-byte aligned):
 * the first holds the few set-up fields each of its fragments needs (edges 0 and 1 as
 * rs_setup has them, twice the area as the double rs_weights_packet takes, the corners'
 * 1/w), the other two the triangle the pixel shader reads. The shading pass reads the
 * records slot by slot (tile_shade.c), three adjacent whole lines each, where a plr_prim
 * (208 bytes, unaligned) spans four or five. */
typedef struct slot_rec {
    _Alignas(64) int64_t c[2];
    int32_t a[2], b[2];
    double area;
    float inv_w[3];
    sh_ps_tri tri;
} slot_rec;
_Static_assert(sizeof(slot_rec) == 192, "a slot record is three cache lines");

typedef struct tile_slots {
    slot_rec *rec;                        /* 64-byte aligned */
    uint32_t *pixels;                     /* pixels each slot owns */
    uint32_t *free_slots;
    uint32_t n, nfree, cap;
} tile_slots;

static inline void tile_slots_free(tile_slots *sl)
{
    free(sl->rec);
    free(sl->pixels);
    free(sl->free_slots);
}

/* The records in a new aligned block of cap (aligned_alloc has no realloc). */
static inline slot_rec *slot_recs_grow(slot_rec *old, uint32_t n, uint32_t cap)
{
    slot_rec *r = aligned_alloc(_Alignof(slot_rec), cap * sizeof *r);
    if (!r) return NULL;
    if (n) memcpy(r, old, n * sizeof *r);
    free(old);
    return r;
}

/* Room for cap slots before the arrays first grow (each growth copies them). */
static inline bool tile_slots_reserve(tile_slots *sl, uint32_t cap)
{
    if (cap <= sl->cap) return true;
    slot_rec *p = slot_recs_grow(sl->rec, sl->n, cap);
    if (p) sl->rec = p;
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

/* Slot's record for the triangle p. */
static inline void slot_store(tile_slots *sl, uint32_t slot, const plr_prim *p)
{
    slot_rec *r = &sl->rec[slot];
    for (int k = 0; k < 2; k++) {
        r->c[k] = p->su.c[k];
        r->a[k] = p->su.a[k];
        r->b[k] = p->su.b[k];
    }
    r->area = (double)p->su.area;
    for (int k = 0; k < 3; k++) r->inv_w[k] = p->su.inv_w[k];
    r->tri = p->tri;
}

/* rs_edges_at from a slot's record: the same exact values. */
static inline void slot_edges_at(const slot_rec *r, int x, int y, int64_t *e0, int64_t *e1)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS, half = one / 2;
    int64_t X = (int64_t)x * one + half, Y = (int64_t)y * one + half;
    *e0 = r->a[0] * X + r->b[0] * Y + r->c[0];
    *e1 = r->a[1] * X + r->b[1] * Y + r->c[1];
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

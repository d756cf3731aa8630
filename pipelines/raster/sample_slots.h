/* sample_slots.h — multisampling Tile-Shade's store of a tile's triangles
 * (tile_shade_msaa.c; internal to pipelines/raster/): slots in chunks of MS_CHUNK that
 * never move once allocated, so a tile that takes more triangles gets another chunk and
 * copies none (one array grown by doubling copied every slot at each growth: a tile of
 * bunny's small triangles holds thousands, and the copies were 6% of its 4x frame). */
#ifndef PIPELINES_RASTER_SAMPLE_SLOTS_H
#define PIPELINES_RASTER_SAMPLE_SLOTS_H

#include "pipelines/raster/packets.h"

#include <stdlib.h>

#define MS_CHUNK_BITS 8
#define MS_CHUNK (1u << MS_CHUNK_BITS)    /* slots per chunk */

typedef struct ms_prims {
    plr_prim **chunk;                     /* chunk[i]: slots i * MS_CHUNK .. (i + 1) * MS_CHUNK - 1 */
    uint32_t n, cap;                      /* slots in use (0 .. n - 1), slots allocated */
    uint32_t nchunks, chunks_cap;
} ms_prims;

static inline plr_prim *ms_prim(const ms_prims *q, uint32_t slot)
{
    return &q->chunk[slot >> MS_CHUNK_BITS][slot & (MS_CHUNK - 1)];
}

/* MS_CHUNK more slots; false when out of memory. */
static inline bool ms_prims_grow(ms_prims *q)
{
    if (q->nchunks == q->chunks_cap) {
        const uint32_t cap = q->chunks_cap ? 2 * q->chunks_cap : 16;
        plr_prim **chunk = realloc(q->chunk, cap * sizeof *chunk);
        if (!chunk) return false;
        q->chunk = chunk;
        q->chunks_cap = cap;
    }
    plr_prim *p = malloc(MS_CHUNK * sizeof *p);
    if (!p) return false;
    q->chunk[q->nchunks++] = p;
    q->cap += MS_CHUNK;
    return true;
}

static inline void ms_prims_free(ms_prims *q)
{
    for (uint32_t i = 0; i < q->nchunks; i++) free(q->chunk[i]);
    free(q->chunk);
}

#endif

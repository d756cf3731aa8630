/* tile_stager.h — per-tile staging of a stage's output packets to a tile queue set.
 *
 * Why: a triangle of a dense mesh covers a few pixels (bunny at 1024x1024: about 3), so
 * one packet per triangle per tile makes the runtime's per-packet cost dominate the
 * frame. A stage that processes a batch of triangles instead fills one packet per tile it
 * touches and sends them when they are full or when the batch ends (plr_stager_flush),
 * so packets hold many triangles' work while fragments still reach each tile in draw
 * order: a tile's packets leave in the order they were filled.
 *
 * Packets are the caller's: the stager only needs their first word to be their element
 * count (0 = empty). Its memory is a pool of max_open packets (chunks), so it is bounded
 * whatever the triangle sizes. By default a tile has one chunk, sent as soon as it is
 * full; when a new tile finds no free chunk, every tile's is sent at once.
 *
 * With `runs` (the sort-middle Bin, whose packets may leave in any order) a tile's full
 * packets stay staged, chained behind the one being filled, and leave together: when the
 * pool runs out, the tile holding the most full packets sends them one after the other.
 * Its consumer (Tile-Shade) then takes several packets in one activation while its tile's
 * buffers are in cache, instead of one packet per activation with every other tile's in
 * between (the textured bunny at 1 worker: a median of 17 other tiles' activations
 * between two of one tile's, 1.05 packets an activation; with runs 4.0).
 *
 * plr_stager_flush sends the staged packets round-robin, one per tile a round, so the
 * queues hold no more at once than without runs: a producer is preempted once its
 * consumers have enough ready tasks (gramps' low watermark), and a task is a tile.
 * Single-threaded: one stager per stage instance. */
#ifndef PIPELINES_TILE_STAGER_H
#define PIPELINES_TILE_STAGER_H

#include "gramps/gramps.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copies a staged packet into the queue; may copy only the parts in use. */
typedef void (*plr_packet_copy)(void *dst, const void *src, size_t packet_bytes);

typedef struct plr_stager {
    size_t packet_bytes;
    plr_packet_copy copy;
    int output;                 /* the stage's output index the packets go to */
    bool runs;                  /* hold a tile's full packets and send them in runs */
    uint32_t ntiles;
    int max_open;               /* chunks in the pool */
    int nfree, nopen;           /* free chunks; tiles with chunks */
    int declared;               /* chunks last declared with gr_state_bytes */
    size_t touched;             /* bytes of its packets written or read since the last
                                   plr_stager_touched (the callers add their appends) */
    int16_t *first, *last;      /* per tile: its oldest chunk and the one being filled, or -1 */
    uint16_t *held;             /* per tile: its full chunks (all but the last) */
    uint8_t *sent;              /* per tile: 1 once a packet went to it */
    int16_t *next;              /* per chunk: the tile's next chunk */
    int16_t *free_chunks;       /* a stack; chunk 0 on top when all are free */
    uint32_t *open;             /* the tiles with chunks, in the order they got their first */
    unsigned char *buf;         /* max_open packets */
} plr_stager;

/* copy: NULL copies whole packets. max_open: at most INT16_MAX. */
bool plr_stager_init(plr_stager *s, uint32_t ntiles, int max_open, size_t packet_bytes,
                     plr_packet_copy copy, int output, bool runs);
void plr_stager_free(plr_stager *s);

/* The tile's packet being filled (zeroed count when new). */
void *plr_stager_packet(plr_stager *s, gr_ctx *c, uint32_t tile);

/* The tile's packet is full: sends it now and starts an empty one in its chunk, or with
 * `runs` keeps it and starts an empty one after it (plr_stager_packet returns that). */
void plr_stager_send(plr_stager *s, gr_ctx *c, uint32_t tile);

/* Tells the runtime the bytes touched since the last call (gr_state_touched): after each
 * input packet; send does it before each commit. */
void plr_stager_touched(plr_stager *s, gr_ctx *c);

/* Sends every non-empty packet, round-robin over the tiles in the order they were
 * opened (each tile's in the order they were filled), and closes all. */
void plr_stager_flush(plr_stager *s, gr_ctx *c);

#endif

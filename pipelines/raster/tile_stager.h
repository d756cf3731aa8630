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
 * count (0 = empty). It keeps at most max_open tiles' packets in private memory (sent
 * all at once when a new tile needs a slot), so its memory is bounded whatever the
 * triangle sizes. Single-threaded: one stager per stage instance. */
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
    uint32_t ntiles;
    int max_open, nopen;
    int16_t *slot_of;           /* per tile: its open slot, or -1 */
    uint32_t *tile_of;          /* per slot */
    unsigned char *buf;         /* max_open packets */
} plr_stager;

/* copy: NULL copies whole packets. */
bool plr_stager_init(plr_stager *s, uint32_t ntiles, int max_open, size_t packet_bytes,
                     plr_packet_copy copy, int output);
void plr_stager_free(plr_stager *s);

/* The tile's packet being filled (zeroed count when new). */
void *plr_stager_packet(plr_stager *s, gr_ctx *c, uint32_t tile);

/* Sends the tile's packet now (it is full) and starts an empty one in its slot. */
void plr_stager_send(plr_stager *s, gr_ctx *c, uint32_t tile);

/* Sends every non-empty packet, in the order their tiles were opened, and closes all. */
void plr_stager_flush(plr_stager *s, gr_ctx *c);

#endif

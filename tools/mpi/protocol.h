/* protocol.h — the messages between rank 0 and the others (MPI_COMM_WORLD):
 *
 *   rank r -> 0  MP_TAG_ASK     nothing: r wants its first chunk
 *   rank r -> 0  MP_TAG_RESULT  a chunk header then its pixels (MPI_BYTE): the chunk is
 *                               done, and r wants the next one
 *   rank r -> 0  MP_TAG_FAIL    r's error message (chars): every rank stops
 *   0 -> rank r  MP_TAG_CHUNK   a chunk header: the next chunk, or frame -1: stop
 *
 * Every ASK, RESULT and FAIL gets exactly one CHUNK back, so a rank waiting for one
 * always gets it, and rank 0 stops serving once every other rank has been told to stop.
 * Afterwards all ranks gather their mp_work at rank 0 and rank 0 broadcasts the exit
 * status (main.c). */
#ifndef TOOLS_MPI_PROTOCOL_H
#define TOOLS_MPI_PROTOCOL_H

#include "tools/mpi/plan.h"

#include <string.h>

enum { MP_TAG_ASK = 1, MP_TAG_RESULT, MP_TAG_FAIL, MP_TAG_CHUNK };

/* A chunk on the wire: frame, x0, y0, x1, y1. */
#define MP_HEADER_INTS 5
#define MP_HEADER_BYTES (MP_HEADER_INTS * sizeof(int))

static inline void mp_header_pack(const mp_chunk *c, int h[MP_HEADER_INTS])
{
    h[0] = c->frame; h[1] = c->region.x0; h[2] = c->region.y0; h[3] = c->region.x1; h[4] = c->region.y1;
}

static inline mp_chunk mp_header_unpack(const int h[MP_HEADER_INTS])
{
    return (mp_chunk){h[0], {h[1], h[2], h[3], h[4]}};
}

#endif

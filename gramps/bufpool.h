/* Packet-stealing buffer manager (internal), after Sanchez et al. 2011 §III-B.
 *
 * One pool per packet size. Packets are divided among per-worker partitions; a worker
 * allocates from and frees to its own partition (LIFO, so a linear pipeline reuses the
 * same couple of cache-hot packets). A worker whose partition is empty steals a batch
 * (half) from other partitions, nearest first; if one round of stealing finds nothing
 * (only possible with cycles, since backpressure bounds the rest) it mallocs a new chunk
 * of packets, counted in the statistics as the cycle safeguard. Each partition has its
 * own spin lock, uncontended except while being stolen from. Packets are 64-byte aligned. */
#ifndef GRAMPS_BUFPOOL_H
#define GRAMPS_BUFPOOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gr_buf_part gr_buf_part;

typedef struct gr_bufpool {
    size_t packet_bytes;          /* rounded up to a multiple of 64 */
    unsigned nworkers;
    gr_buf_part *parts;           /* nworkers partitions */
    void **chunks;                /* every block ever allocated, freed at destroy */
    size_t nchunks, chunks_cap;
    _Atomic(int) chunks_lock;
    _Atomic(uint64_t) steals;     /* batch steals that found packets */
    _Atomic(uint64_t) mallocs;    /* safeguard allocations (chunks) after a failed round */
    _Atomic(uint64_t) packets_total;
} gr_bufpool;

/* Preallocates prealloc packets (at least one per worker), spread evenly. 0 or -1. */
int gr_buf_init(gr_bufpool *p, size_t packet_bytes, unsigned nworkers, size_t prealloc);
void gr_buf_destroy(gr_bufpool *p);
/* worker < nworkers. Never returns NULL unless malloc fails. */
void *gr_buf_alloc(gr_bufpool *p, unsigned worker);
void gr_buf_free(gr_bufpool *p, unsigned worker, void *packet);

#endif

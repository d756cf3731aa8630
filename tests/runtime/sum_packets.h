/* sum_packets.h — the packets and stages of the reduction tests (test_reduction.c,
 * test_reduction_keys.c): Collection packets of up to SUM_ELEMS 64-bit values, a Shader
 * that sums its packet into the packet's first element, and a tally of the packets a
 * collector reads. Include once per test program, after gramps/gramps.h. */
#ifndef TESTS_RUNTIME_SUM_PACKETS_H
#define TESTS_RUNTIME_SUM_PACKETS_H

#include "gramps/gramps.h"

#include <stdint.h>

#define SUM_ELEMS 16
typedef struct sums_pkt { uint32_t count, pad; uint64_t v[SUM_ELEMS]; } sums_pkt;

/* What a collector read: packets, the elements in them and their sum. */
typedef struct sum_tally { uint64_t results, elements, sum; } sum_tally;

/* A queue of sums_pkt; `subqueues` > 0 makes it a queue set. */
static inline gr_queue_desc sums_queue(const char *name, uint32_t subqueues)
{
    return (gr_queue_desc){.name = name, .kind = GR_COLLECTION, .header_bytes = 8,
                           .element_bytes = sizeof(uint64_t), .elements = SUM_ELEMS,
                           .capacity = 64, .subqueues = subqueues};
}

/* Shader: sums the packet's elements into its first one, leaving one element. */
static inline void sum_inplace(gr_ctx *c)
{
    sums_pkt *in = gr_input(c, NULL);
    uint64_t s = 0;
    for (uint32_t k = 0; k < in->count; k++) s += in->v[k];
    in->v[0] = s;
    in->count = 1;
}

/* Thread: reads every packet of input 0 into *t. */
static inline void tally_input(gr_ctx *c, sum_tally *t)
{
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const sums_pkt *pk = w.mem;
        t->results++;
        t->elements += pk->count;
        for (uint32_t k = 0; k < pk->count; k++) t->sum += pk->v[k];
        gr_commit(c, 0, 1);
    }
}

#endif

/* tally.c — per-worker lines of a frame counter (see the header). */
#include "pipelines/hybrid/tally.h"

#include <stdlib.h>

bool plh_tally_init(plh_tally *t, pl_frame *f, const char *name)
{
    t->frame = pl_frame_counter(f, name);
    t->lines = aligned_alloc(_Alignof(plh_tally_line), PLH_TALLY_LINES * sizeof *t->lines);
    for (int i = 0; t->lines && i < PLH_TALLY_LINES; i++) atomic_init(&t->lines[i].n, 0);
    return t->frame && t->lines;
}

void plh_tally_free(plh_tally *t)
{
    free(t->lines);
    t->lines = NULL;
}

void plh_tally_fold(plh_tally *t)
{
    uint64_t sum = 0;
    for (int i = 0; i < PLH_TALLY_LINES; i++)
        sum += atomic_exchange_explicit(&t->lines[i].n, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(t->frame, sum, memory_order_relaxed);
}

/* tally.h — a frame counter that a Shader's tasks add to from every worker, each worker
 * in a cache line of its own (workers w and w + PLH_TALLY_LINES share one).
 *
 * Why: the frame's counters (pl_frame_counter) sit side by side in one array, and the
 * hybrid's pixel stages and Trace add to five to eight of them in every task, some
 * 45,000 atomic additions a frame on fairy at 512x512. At two workers and more both
 * cores add to the same lines, so most additions wait for a line another core holds;
 * a 1-worker run and the simulator (which runs every worker on one thread) never see
 * that cost. Here an addition stays in its worker's line, and the stage's finish hook
 * folds the lines into the frame's counter after the run: the statistics are the
 * same numbers. */
#ifndef PIPELINES_HYBRID_TALLY_H
#define PIPELINES_HYBRID_TALLY_H

#include "gramps/gramps.h"
#include "pipelines/frame.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define PLH_TALLY_LINES 16

typedef struct plh_tally_line {
    _Alignas(64) _Atomic(uint64_t) n;
} plh_tally_line;

typedef struct plh_tally {
    _Atomic(uint64_t) *frame;             /* the frame's counter it folds into */
    plh_tally_line *lines;                /* PLH_TALLY_LINES (NULL: not made) */
} plh_tally;

/* Frame f's counter `name` and the tally's lines; false when either cannot be had
 * (out of memory). A zeroed tally is one plh_tally_free may take. */
bool plh_tally_init(plh_tally *t, pl_frame *f, const char *name);
void plh_tally_free(plh_tally *t);

/* Adds n to the calling worker's line. Atomic: two workers may share a line. */
static inline void plh_tally_add(const plh_tally *t, const gr_ctx *c, uint64_t n)
{
    atomic_fetch_add_explicit(&t->lines[gr_worker_id(c) % PLH_TALLY_LINES].n, n, memory_order_relaxed);
}

/* After a run (a stage's finish hook, no task running): the lines' sum added to the
 * frame's counter, the lines cleared for the next run. */
void plh_tally_fold(plh_tally *t);

#endif

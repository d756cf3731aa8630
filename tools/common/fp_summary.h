/* fp_summary.h — one configuration of the footprint study over its repeats: each
 * figure's median and spread (smallest and largest frame), and where the workers' time
 * went. */
#ifndef TOOLS_FP_SUMMARY_H
#define TOOLS_FP_SUMMARY_H

#include "tools/common/fp_run.h"

typedef struct fp_spread { double median, min, max; } fp_spread;

typedef enum fp_share { FP_APP, FP_QUEUE, FP_SCHED, FP_IDLE, FP_NSHARES } fp_share;

typedef struct fp_summary {
    fp_spread ms, peak_bytes, avg_bytes, occupancy;
    /* Each part's share of all workers' time over all repeats (the parts of every frame
     * added up first, so the shares sum to 1 and a long frame weighs more). */
    double share[FP_NSHARES];
} fp_summary;

/* Over frames[0..n-1], n >= 1. */
fp_summary fp_summarize(const fp_frame *frames, int n);

#endif

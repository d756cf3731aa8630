/* report.h — what rank 0 reports after a run: the statistics JSON (--stats) and the
 * summary on stdout.
 *
 * Besides gramps-render's scene, pipeline, size, work counters (summed over all chunks,
 * counters.h) and frame times, the JSON has a `ranks`
 * array (per rank: chunks rendered as `tiles`, busy and communication time, peak queue
 * footprint, bytes sent) and a `communication` object: bytes gathered at rank 0 per
 * frame and in all, and the communication share: the ranks' time in messages over their
 * time rendering plus in messages. */
#ifndef TOOLS_MPI_REPORT_H
#define TOOLS_MPI_REPORT_H

#include "tools/mpi/frames.h"
#include "tools/mpi/renderer.h"

#include <stdio.h>

typedef struct mp_report {
    const mp_options *o;
    const mp_renderer *r;
    const mp_plan *plan;
    const mp_frames *frames;
    const mp_work *works;            /* one per rank */
    int nranks;
    double wall_ms;                  /* rank 0: first handout to last result */
} mp_report;

void mp_write_stats(const mp_report *rep, FILE *f);
void mp_summary(const mp_report *rep, FILE *f);

#endif

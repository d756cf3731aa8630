/* counters.h — the frames' work counters (pl_frame's, by name: triangles_rasterized,
 * fragments_shaded, rays.primary, ...) summed over the chunks a rank rendered, then over
 * all ranks at rank 0. A sum over chunks is the work done: the ray tracer's rays add up
 * to the single-process frame's, while the raster counters grow with the chunk count
 * (each chunk runs the geometry again). */
#ifndef TOOLS_MPI_COUNTERS_H
#define TOOLS_MPI_COUNTERS_H

#include "pipelines/frame.h"

#include <stdio.h>

typedef struct mp_counters {
    int n;
    char name[PL_MAX_COUNTERS][PL_COUNTER_NAME];
    uint64_t value[PL_MAX_COUNTERS];
} mp_counters;

void mp_counters_add(mp_counters *c, const char *name, uint64_t value);
void mp_counters_add_frame(mp_counters *c, const pl_frame *f);
/* Collective: on return rank 0's c holds every rank's sum. */
void mp_counters_gather(mp_counters *c, int rank, int nranks);
/* As JSON members, each followed by ",\n": rays.* as one "rays" object. */
void mp_counters_write_json(const mp_counters *c, FILE *f);

#endif

/* partition.h — splitting a weighted stage graph over workers with METIS (Karypis and
 * Kumar's graph partitioner, Debian libmetis-dev): balanced load per part, least weight
 * on the edges cut. The Static scheduler's assignment (sched_static.c). */
#ifndef GRAMPS_PARTITION_H
#define GRAMPS_PARTITION_H

#include <stdint.h>

typedef struct gr_part_edge {
    int a, b;                         /* vertices; a == b is ignored */
    int64_t weight;                   /* communication (> 0) */
} gr_part_edge;

/* Assigns each of n vertices (loads >= 1) to a part in [0, nparts). Parallel and
 * duplicate edges add up. Fewer vertices than parts: one vertex per part. Fewer than 4
 * vertices per part, or METIS's heaviest part 10% above it: longest processing time
 * first (partition.c says why). Returns 0, or -1 out of memory. Deterministic (fixed
 * seed). Prints nothing. */
int gr_partition(int n, const int64_t *load, const gr_part_edge *edges, int nedges,
                 int nparts, int *part);

/* The heaviest part's load: without stealing, the time a run takes at best. */
int64_t gr_partition_max_load(int n, const int64_t *load, const int *part, int nparts);

#endif

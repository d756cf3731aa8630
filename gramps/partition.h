/* partition.h — splitting a weighted stage graph over workers with METIS (Karypis and
 * Kumar's graph partitioner, Debian libmetis-dev): balanced load per part, least weight
 * on the edges cut; or, as SGMS does, with an integer linear program (GLPK) minimising
 * the heaviest part. The Static scheduler's assignment (sched_static.c). */
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

/* gr_partition, also naming the method whose assignment it returns in *method
 * (method may be NULL): "metis" or "lpt" (also for one part, or no more vertices than
 * parts). */
int gr_partition_by(int n, const int64_t *load, const gr_part_edge *edges, int nedges,
                    int nparts, int *part, const char **method);

/* gr_partition_ilp's answers. */
enum { GR_ILP_OPTIMAL = 0, GR_ILP_FEASIBLE = 1, GR_ILP_NO_SOLUTION = 2, GR_ILP_FAILED = -1 };
#define GR_PARTITION_ILP_MAX_STAGES 1024

/* Assigns each of n vertices to a part in [0, nparts) minimising the heaviest part's
 * load, by integer linear programming (GLPK; partition_ilp.c), within time_limit_ms of
 * solver time. Returns GR_ILP_OPTIMAL (proved), GR_ILP_FEASIBLE (the best found when
 * the time ran out), GR_ILP_NO_SOLUTION (none found in time, or time_limit_ms <= 0:
 * part untouched) or GR_ILP_FAILED (n or nparts out of range, or out of memory).
 * Deterministic apart from where the time limit cuts the search. Prints nothing. */
int gr_partition_ilp(int n, const int64_t *load, int nparts, int time_limit_ms, int *part);

/* The heaviest part's load: without stealing, the time a run takes at best. */
int64_t gr_partition_max_load(int n, const int64_t *load, const int *part, int nparts);

#endif

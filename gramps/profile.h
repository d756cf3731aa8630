/* profile.h — what a gr_profile holds (profile.c), for the Static scheduler. */
#ifndef GRAMPS_PROFILE_H
#define GRAMPS_PROFILE_H

#include "gramps/gramps.h"

struct gr_profile {
    int nstages, nqueues;             /* by id, as in the profiled graph */
    char (*stage_names)[64];          /* GR_NAME_MAX */
    double *stage_us;                 /* time in each stage's code */
    double *queue_bytes;              /* bytes that went through each queue */
};

/* Whether p was taken from a graph of the same shape as g (stage names by id). */
bool gr_profile_matches(const gr_profile *p, const gr_graph *g);

#endif

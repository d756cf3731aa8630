/* profile.h — what a gr_profile holds (profile.c), for the Static scheduler. */
#ifndef GRAMPS_PROFILE_H
#define GRAMPS_PROFILE_H

#include "gramps/gramps.h"

struct gr_stage_rt;

struct gr_profile {
    int nstages, nqueues;             /* by id, as in the profiled graph */
    char (*stage_names)[64];          /* GR_NAME_MAX */
    double *stage_us;                 /* time in each stage's code */
    double *queue_bytes;              /* bytes that went through each queue */
    double *stage_units;              /* units of work per stage (simulate.c's gr_sim_app);
                                         NULL for a real run's profile */
};

/* Whether p was taken from a graph of the same shape as g (stage names by id). */
bool gr_profile_matches(const gr_profile *p, const gr_graph *g);
/* A simulated run's profile (stage_units): stage s's time per unit of work in us, over
 * the profile's stages of the same name, or its copies' (NAME-0, NAME-1, ... for a
 * replicated s: a graph replicates per worker group, so another worker count has another
 * number of copies). False when none has a unit of work. */
bool gr_profile_unit_us(const gr_profile *p, const struct gr_stage_rt *s, double *us);

#endif

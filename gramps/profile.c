/* profile.c — a run's per-stage time and per-queue traffic (gr_profile), copied out of
 * its statistics so that it outlives the graph: the Static scheduler weighs a later
 * run's partition with it (Sanchez et al. 2011 §IV-C profile under GRAMPS first). */
#include "gramps/internal.h"
#include "gramps/profile.h"

#include <stdlib.h>
#include <string.h>

gr_profile *gr_profile_take(const gr_graph *g)
{
    const gr_stats *st = gr_get_stats(g);
    if (!st) return NULL;
    gr_profile *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nstages = st->nstages;
    p->nqueues = st->nqueues;
    p->stage_names = calloc((size_t)st->nstages + 1, sizeof *p->stage_names);
    p->stage_us = calloc((size_t)st->nstages + 1, sizeof *p->stage_us);
    p->queue_bytes = calloc((size_t)st->nqueues + 1, sizeof *p->queue_bytes);
    if (!p->stage_names || !p->stage_us || !p->queue_bytes) { gr_profile_free(p); return NULL; }
    for (int i = 0; i < st->nstages; i++) {
        snprintf(p->stage_names[i], GR_NAME_MAX, "%s", st->stages[i].name);
        p->stage_us[i] = st->stages[i].busy_ms * 1e3;
    }
    for (int i = 0; i < st->nqueues; i++)
        p->queue_bytes[i] = (double)st->queues[i].packets * (double)st->queues[i].packet_bytes;
    return p;
}

void gr_profile_free(gr_profile *p)
{
    if (!p) return;
    free(p->stage_names);
    free(p->stage_us);
    free(p->queue_bytes);
    free(p);
}

bool gr_profile_matches(const gr_profile *p, const gr_graph *g)
{
    if (!p || p->nstages != g->nstages || p->nqueues != g->nqueues) return false;
    for (int i = 0; i < g->nstages; i++)
        if (strcmp(p->stage_names[i], g->stages[i]->name)) return false;
    return true;
}

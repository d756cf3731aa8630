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
    if (g->opts.simulate) {
        p->stage_units = calloc((size_t)st->nstages + 1, sizeof *p->stage_units);
        if (!p->stage_units) { gr_profile_free(p); return NULL; }
        for (int i = 0; i < st->nstages; i++) p->stage_units[i] = (double)g->stages[i]->sim_units;
    }
    return p;
}

void gr_profile_free(gr_profile *p)
{
    if (!p) return;
    free(p->stage_names);
    free(p->stage_us);
    free(p->queue_bytes);
    free(p->stage_units);
    free(p);
}

/* Whether a profile's stage `name` is s or, for a replicated s, one of s's copies. */
static bool same_stage(const char *name, const gr_stage_rt *s)
{
    if (!strcmp(name, s->name)) return true;
    if (!s->d.replicated) return false;
    const char *dash = strrchr(s->name, '-');
    size_t base = dash ? (size_t)(dash - s->name) : strlen(s->name);
    if (strncmp(name, s->name, base) || name[base] != '-' || !name[base + 1]) return false;
    return strspn(name + base + 1, "0123456789") == strlen(name + base + 1);
}

bool gr_profile_unit_us(const gr_profile *p, const gr_stage_rt *s, double *us)
{
    double t = 0, units = 0;
    for (int i = 0; p->stage_units && i < p->nstages; i++)
        if (same_stage(p->stage_names[i], s)) {
            t += p->stage_us[i];
            units += p->stage_units[i];
        }
    *us = units > 0 ? t / units : 0;
    return units > 0;
}

bool gr_profile_matches(const gr_profile *p, const gr_graph *g)
{
    if (!p || p->nstages != g->nstages || p->nqueues != g->nqueues) return false;
    for (int i = 0; i < g->nstages; i++)
        if (strcmp(p->stage_names[i], g->stages[i]->name)) return false;
    return true;
}

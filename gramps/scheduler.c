/* scheduler.c — choosing the scheduling policy (scheduler.h): by gr_launch_opts.scheduler,
 * else the GRAMPS_SCHEDULER environment variable, else GRAMPS. */
#include "gramps/internal.h"

#include <stdlib.h>
#include <string.h>

static const gr_scheduler *const policies[] = {
    &gr_sched_gramps, &gr_sched_task_stealing, &gr_sched_breadth_first, &gr_sched_static,
    &gr_sched_qes, &gr_sched_pss,
};
#define NPOLICIES (sizeof policies / sizeof *policies)

const gr_scheduler *gr_scheduler_by_name(const char *name)
{
    for (size_t i = 0; name && i < NPOLICIES; i++)
        if (!strcmp(policies[i]->name, name)) return policies[i];
    return NULL;
}

bool gr_scheduler_known(const char *name) { return gr_scheduler_by_name(name) != NULL; }

const char *gr_scheduler_names(void) { return "gramps, task-stealing, breadth-first, static, qes, pss"; }

const char *gr_scheduler_of(const gr_graph *g) { return g && g->sched ? g->sched->name : NULL; }

/* The name gr_launch would resolve from these options' scheduler (NULL: none given). */
static const char *resolve_name(const char *name)
{
    if (!name || !*name) name = getenv("GRAMPS_SCHEDULER");
    return name && *name ? name : "gramps";
}

bool gr_scheduler_bounded(const char *name)
{
    const gr_scheduler *p = gr_scheduler_by_name(resolve_name(name));
    return p && p->backpressure;
}

const char *gr_scheduler_default(void) { return resolve_name(NULL); }

/* Resolves the policy (before anything is allocated, so a bad name fails cleanly). */
gr_status gr_scheduler_choose(gr_graph *g)
{
    const char *given = g->opts.scheduler;
    const char *from = given && *given ? "gr_launch_opts.scheduler" : "GRAMPS_SCHEDULER";
    const char *name = resolve_name(given);
    g->sched = gr_scheduler_by_name(name);
    if (!g->sched) {
        gr_set_error(g, GR_ERR_INVALID, "%s: unknown scheduler '%s' (known: %s)", from, name,
                     gr_scheduler_names());
        return GR_ERR_INVALID;
    }
    g->backpressure = g->sched->backpressure;
    g->preempt = g->sched->preempt;
    return GR_OK;
}

/* relaunch.c — running a finished graph again (gr_relaunch): what a run leaves behind is
 * cleared, and the run starts as gr_launch's did, with the same options and the same
 * initially runnable stages.
 *
 * Kept from the run before: the graph as built and validated (stages, bindings,
 * priorities, components, ordered chains), the buffers and their contents, the chosen
 * scheduling policy, the packet pools (every packet is back in them when a run succeeds),
 * the fiber stacks (a destroyed instance's stack goes back to the graph's pool), the
 * workers' memory (launch.c resets it in place: deques empty, credits and counters at 0)
 * and the subqueues of static sets and single queues (emptied in place: rings, reorder
 * slots and tickets from position 0). The worker threads are the process's parked ones,
 * as for any launch. Made again: a dynamic set's subqueues (its keys are the run's), the
 * Thread-stage instances (their programs start from the beginning; each in the memory
 * of a done one of the run before, stage->spare, reset by the worker that makes it),
 * the components' termination counts, the policy's state (its init runs again) and the
 * statistics. */
#include "gramps/internal.h"


void gr_queue_free_subqueues(gr_queue_rt *q)
{
    if (q->subs) {
        uint32_t n = q->d.dynamic_keys ? q->d.max_keys : q->nsubs;
        for (uint32_t i = 0; i < n; i++) gr_subq_free(q->subs[i]);
        free(q->subs);
        q->subs = NULL;
    }
    if (q->d.dynamic_keys && q->keys.slots) gr_keymap_destroy(&q->keys);
    memset(&q->keys, 0, sizeof q->keys);
    q->nsubs = 0;
}

/* The queue's gates freed, its subqueues emptied (a dynamic set's freed with its key
 * map: the next run maps its own keys) and every counter a run changes back at its
 * value before the first run. */
void gr_queue_run_clear(gr_queue_rt *q)
{
    if (q->d.dynamic_keys || !q->physical) gr_queue_free_subqueues(q);
    for (uint32_t i = 0; q->subs && i < q->nsubs; i++) gr_subq_reset(q->subs[i]);
    gr_gates_destroy(q);
    q->depth_sum = q->last_sampled = 0;
    q->peak = 0;
    atomic_store(&q->moving, 0);
    atomic_store(&q->moves, 0);
    atomic_store(&q->empty_slots, 0);
    atomic_store(&q->nwaiters, 0);
    atomic_store(&q->open_producers, q->producers_at_launch);
    atomic_store(&q->closed, false);
    atomic_store(&q->full_subqueues, 0);
    atomic_store(&q->consumer_done, false);
    q->out_waiters = NULL;
    atomic_store(&q->any_waiter, NULL);
    q->any_need = 0;
}

/* The run's instances (all done: it succeeded) become spares for the next run's
 * gr_inst_create, which resets each on the worker that makes it. */
static void clear_stage(gr_stage_rt *s)
{
    if (s->instances) {
        s->last_inst->next_all = s->spare;
        s->spare = s->instances;
    }
    s->instances = s->last_inst = NULL;
    s->held = NULL;                   /* a finished reduction forwarded its result */
    atomic_store(&s->ninstances, 0);
    atomic_store(&s->preemptions, 0);
    atomic_store(&s->keeps_state, false);
    atomic_store(&s->dev_launches, 0);
    atomic_store(&s->dev_kernel_ns, 0);
    atomic_store(&s->dev_bytes_to, 0);
    atomic_store(&s->dev_bytes_from, 0);
    atomic_store(&s->dev_queue_peak, 0);
    atomic_store(&s->dev_queue_capacity, 0);
    atomic_store(&s->dev_slot_relaunches, 0);
}

static void clear_sampling(gr_graph *g)
{
    atomic_store(&g->next_sample, 0);
    atomic_store(&g->sampling, false);
    g->sample_period = g->last_sample = 0;
    g->sampled_ticks = 0;
    g->footprint_peak = 0;
    g->footprint_sum = 0;
    gr_stats_free(g);
    memset(&g->stats, 0, sizeof g->stats);
    g->stats_ready = false;
    g->journal_events = NULL;
    g->njournal = 0;
    g->depths = NULL;
    g->ndepths = g->cap_depths = 0;
}

void gr_run_state_clear(gr_graph *g)
{
    for (int i = 0; i < g->nstages; i++) clear_stage(g->stages[i]);
    for (int i = 0; i < g->nqueues; i++) gr_queue_run_clear(g->queues[i]);
    for (int i = 0; i < g->ncomps; i++) {
        atomic_store(&g->comps[i].finished, false);
        atomic_store(&g->comps[i].pending, 0);
    }
    for (int i = 0; i < g->npools; i++) atomic_store(&g->pools[i].mallocs, 0);
    clear_sampling(g);
    atomic_store(&g->abort, false);
    atomic_store(&g->sleepers, 0);
    atomic_store(&g->wake_sent, false);
    atomic_store(&g->watchdog_stop, false);
    g->watchdog = NULL;
    g->sim_thread = NULL;
    g->t_start = g->t_end = g->host_ticks = 0;
    g->started = false;
    g->waited = false;
}

/* A run that failed leaves its error in the graph: the message says the relaunch was
 * refused and keeps the run's own. */
static gr_status refuse_failed(gr_graph *g)
{
    static const char refused[] = "gr_relaunch: the graph's last run failed, so it cannot "
                                  "run again (build a new graph): ";
    const size_t keep = sizeof g->error - sizeof refused;   /* of the run's message */
    pthread_mutex_lock(&g->error_lock);
    if (strncmp(g->error, refused, sizeof refused - 1)) {  /* not refused before */
        memmove(g->error + sizeof refused - 1, g->error, keep);
        g->error[sizeof g->error - 1] = 0;
        memcpy(g->error, refused, sizeof refused - 1);
    }
    pthread_mutex_unlock(&g->error_lock);
    return g->status;
}

gr_status gr_relaunch(gr_graph *g)
{
    if (!g) return GR_ERR_INVALID;
    if (!g->launched || !g->waited) {
        if (g->status != GR_OK) return g->status;
        gr_set_error(g, GR_ERR_INVALID, "gr_relaunch: the graph has no finished run to "
                     "repeat (gr_launch it, then gr_wait)");
        return GR_ERR_INVALID;
    }
    if (g->status != GR_OK || !g->started) return refuse_failed(g);
    gr_run_state_clear(g);
    if (!gr_buffers_protect(g, true)) {
        gr_buffers_protect(g, false);
        g->waited = true;             /* nothing started: gr_wait has nothing to join */
        return g->status;
    }
    return gr_launch_run(g);
}

gr_status gr_stage_set_user(gr_graph *g, int stage, void *user)
{
    /* Refusals are not recorded: the graph's status is its runs' (a recorded error would
     * refuse the next relaunch as if a run had failed). */
    if (!g || stage < 0 || stage >= g->nstages || (g->launched && !g->waited)) return GR_ERR_INVALID;
    g->stages[stage]->d.user = user;
    return GR_OK;
}

/* sched.c — the GRAMPS scheduling policy (Sanchez et al. 2011 §III-A), one loop per
 * worker pthread: pop local work from the highest-priority stage first; when there is
 * none, flush partially coalesced push packets, then steal from the lowest-priority
 * stage first, nearest victims first; when nothing anywhere can run, back off and sleep
 * (timed, so a missed wake-up costs at most a millisecond, never a hang).
 *
 * Tasks: a Shader task is its input packet (gr_pkt*); a Thread task is a runnable
 * instance (gr_inst*) with bit 0 set. Each lives in the deque of its stage's rank. */
#include "gramps/internal.h"

#include <time.h>

#define GR_IDLE_SPINS 64

static inline bool is_inst(void *task) { return ((uintptr_t)task & 1) != 0; }
static inline gr_inst *as_inst(void *task) { return (gr_inst *)((uintptr_t)task & ~(uintptr_t)1); }

/* Closes the running time category and opens `cat`; returns the timestamp so callers
 * that also time a stage need not read the clock again (it is slow in some VMs). */
uint64_t gr_account(gr_worker *w, gr_time_cat cat)
{
    uint64_t now = gr_ticks();
    w->t[w->cat] += now - w->t_last;
    w->t_last = now;
    w->cat = cat;
    gr_maybe_sample(w->g, now);
    return now;
}

void gr_wake_sleepers(gr_graph *g)
{
    pthread_mutex_lock(&g->sleep_lock);
    pthread_cond_broadcast(&g->sleep_cond);
    pthread_mutex_unlock(&g->sleep_lock);
}

void gr_push_task(gr_worker *w, gr_stage_rt *s, void *task)
{
    if (gr_dq_push(&w->dq[s->rank], task) != 0) {
        gr_set_error(w->g, GR_ERR_NOMEM, "out of memory growing the task deque of stage '%s'",
                     s->name);
        atomic_store(&w->g->abort, true);
        return;
    }
    /* Relaxed is enough: a sleeper that misses this wakes within a millisecond. */
    if (atomic_load_explicit(&w->g->sleepers, memory_order_relaxed) > 0) gr_wake_sleepers(w->g);
}

/* A Thread instance becomes runnable (created, or woken from a blocked input): it counts
 * as pending work again. */
void gr_make_runnable(gr_worker *w, gr_inst *inst)
{
    gr_pending_add(w, &w->g->comps[inst->stage->comp], 1);
    atomic_store(&inst->state, GR_INST_RUNNABLE);
    gr_push_task(w, inst->stage, (void *)((uintptr_t)inst | 1));
}

/* Backpressure: a Shader stage whose forward output queue is full does not run. */
static bool stage_blocked(gr_worker *w, const gr_stage_rt *s)
{
    if (s->d.kind != GR_SHADER) return false;
    for (int i = 0; i < s->nout; i++)
        if (!s->out[i].backward && gr_queue_full(w, w->g->queues[s->out[i].queue])) return true;
    return false;
}

static void *pop_local(gr_worker *w)
{
    gr_graph *g = w->g;
    for (int r = g->nstages - 1; r >= 0; r--) {
        gr_dq *dq = &w->dq[r];
        if (gr_dq_owner_bound(dq) <= 0) continue;       /* no read of thieves' line */
        gr_stage_rt *s = g->stages[g->by_rank[r]];
        if (stage_blocked(w, s)) continue;
        /* Ordered chains keep FIFO task order so the reorder buffer drains in order. */
        void *t = s->fifo ? gr_dq_steal(dq) : gr_dq_pop(dq);
        if (t) return t;
        gr_dq_owner_size(dq);             /* thieves emptied it: refresh the bound */
    }
    return NULL;
}

static void *steal(gr_worker *w, int *rank_out)
{
    gr_graph *g = w->g;
    for (int r = 0; r < g->nstages; r++) {
        gr_stage_rt *s = g->stages[g->by_rank[r]];
        if (stage_blocked(w, s)) continue;
        for (unsigned v = 0; v + 1 < g->nworkers; v++) {
            gr_worker *victim = &g->workers[w->victims[v]];
            if (gr_dq_size(&victim->dq[r]) <= 0) continue;
            void *t = gr_dq_steal(&victim->dq[r]);
            if (t) { *rank_out = r; return t; }
        }
    }
    return NULL;
}

static void run_task(gr_worker *w, void *task, gr_stage_rt *s)
{
    /* The watchdog's view: idle from the first failed search until work is found. */
    atomic_store_explicit(&w->idle, false, memory_order_relaxed);
    w->tasks++;
    atomic_store_explicit(&w->progress, w->tasks, memory_order_relaxed);
    if (is_inst(task)) {
        gr_flush_partials(w);             /* a Thread activation may run for long */
        gr_pending_flush(w);
        gr_inst_run(w, as_inst(task));
        return;
    }
    gr_pkt *p = task;
    if (!gr_shader_try_run(w, s, p)) {    /* lost a race for output space: retry later */
        gr_push_task(w, s, p);
        w->tasks--;
    }
}

static gr_stage_rt *stage_of(gr_worker *w, void *task)
{
    if (is_inst(task)) return as_inst(task)->stage;
    gr_pkt *p = task;
    return w->g->stages[p->queue->consumer];
}

static void idle_wait(gr_worker *w, unsigned *fails)
{
    gr_graph *g = w->g;
    gr_account(w, GR_T_IDLE);
    atomic_store_explicit(&w->idle, true, memory_order_relaxed);
    if (*fails == 0) gr_credits_return(w);   /* queue space a busy worker may need */
    if (++*fails < GR_IDLE_SPINS) {
        if (*fails & 7) gr_cpu_relax(); else sched_yield();
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
        atomic_fetch_add(&g->sleepers, 1);
        pthread_mutex_lock(&g->sleep_lock);
        if (atomic_load(&g->comps_left) > 0 && !atomic_load(&g->abort))
            pthread_cond_timedwait(&g->sleep_cond, &g->sleep_lock, &ts);
        pthread_mutex_unlock(&g->sleep_lock);
        atomic_fetch_sub(&g->sleepers, 1);
    }
    gr_account(w, GR_T_SCHED);
}

static bool running(gr_graph *g)
{
    return atomic_load_explicit(&g->comps_left, memory_order_acquire) > 0 &&
           !atomic_load_explicit(&g->abort, memory_order_relaxed);
}

/* One step: find a task and run it. Returns false when nothing could run. */
static bool schedule_once(gr_worker *w)
{
    void *t = pop_local(w);
    if (!t) {
        gr_flush_partials(w);
        t = pop_local(w);
    }
    if (!t) {
        int rank;
        gr_pending_flush(w);              /* out of local work: let termination see it */
        t = steal(w, &rank);
        if (t) w->steals++;
    }
    if (!t) return false;
    run_task(w, t, stage_of(w, t));
    return true;
}

void gr_worker_loop(gr_worker *w)
{
    unsigned fails = 0;
    w->t_last = gr_ticks();
    w->cat = GR_T_SCHED;
    while (running(w->g)) {
        if (schedule_once(w)) fails = 0;
        else idle_wait(w, &fails);
    }
    gr_account(w, GR_T_SCHED);
}

void *gr_worker_main(void *arg)
{
    gr_worker *w = arg;
    gr_fiber_init_self(&w->sched_fiber);
    gr_worker_loop(w);
    gr_fiber_destroy_self(&w->sched_fiber);
    return NULL;
}

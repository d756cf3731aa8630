/* tasks.c — the mechanics every scheduling policy shares (scheduler.h): pushing and
 * running tasks, time accounting, the backpressure test, idle waiting, the worker
 * thread's entry. Which task runs next is the policy's (sched*.c).
 *
 * Tasks: a Shader task is its input packet (gr_pkt*); a Thread task is a runnable
 * instance (gr_inst*) with bit 0 set (gr_inst_task). */
#include "gramps/internal.h"

#include <time.h>


/* Closes the running time category and opens `cat`; returns the timestamp so callers
 * that also time a stage need not read the clock again (it is slow in some VMs). */
uint64_t gr_account(gr_worker *w, gr_time_cat cat)
{
    uint64_t now = gr_worker_now(w);
    w->t[w->cat] += now - w->t_last;
    w->t_last = now;
    w->cat = cat;
    gr_maybe_sample(w->g, now);
    return now;
}

void gr_wake_sleepers(gr_graph *g)
{
    if (g->sim) gr_sim_wake_all(g);
    pthread_mutex_lock(&g->sleep_lock);
    pthread_cond_broadcast(&g->sleep_cond);
    pthread_mutex_unlock(&g->sleep_lock);
}

/* A task was pushed: wake the sleepers unless a push already did since the last of them
 * went to sleep (they are awake, or about to be, and will look). Relaxed is enough: a
 * sleeper that misses this wakes within a millisecond. */
void gr_wake_for_task(gr_graph *g)
{
    if (g->sim) {
        gr_sim_push_wake(g);
        return;
    }
    if (atomic_load_explicit(&g->sleepers, memory_order_relaxed) > 0 &&
        !atomic_load_explicit(&g->wake_sent, memory_order_relaxed) &&
        !atomic_exchange_explicit(&g->wake_sent, true, memory_order_relaxed))
        gr_wake_sleepers(g);
}

/* Pushes onto a deque w owns; a full deque grows, and only running out of memory fails. */
void gr_push_own(gr_worker *w, gr_stage_rt *s, int deque, void *task)
{
    if (gr_dq_push(&w->dq[deque], task) != 0) {
        gr_set_error(w->g, GR_ERR_NOMEM, "out of memory growing the task deque of stage '%s'",
                     s->name);
        atomic_store(&w->g->abort, true);
        return;
    }
    gr_ready_set(w, deque);
    gr_wake_for_task(w->g);
}

/* Per packet: one predictable branch on the policy's push hook (GRAMPS has none). */
void gr_push_task(gr_worker *w, gr_stage_rt *s, void *task)
{
    const gr_scheduler *p = w->g->sched;
    if (p->push) p->push(w, s, task);
    else gr_push_own(w, s, s->deque, task);
}

/* A Thread instance becomes runnable (created, or woken from a blocked input): it counts
 * as pending work again. */
void gr_make_runnable(gr_worker *w, gr_inst *inst)
{
    gr_pending_add(w, &w->g->comps[inst->stage->comp], 1);
    atomic_store(&inst->state, GR_INST_RUNNABLE);
    if (!gr_send_home(w, inst)) gr_push_task(w, inst->stage, gr_inst_task(inst));
}

void gr_requeue(gr_worker *w, gr_inst *inst)
{
    const gr_scheduler *p = w->g->sched;
    if (p->requeue) p->requeue(w, inst);
    else gr_push_task(w, inst->stage, gr_inst_task(inst));
}

/* Backpressure: a Shader stage whose forward output queue is full does not run, nor
 * one whose backward output waits (validate.c's link_cycles) on a full queue while the
 * cycle is not jammed; a cycle entry counts the cycle's queues too (only for policies
 * that enforce capacities). */
bool gr_stage_blocked(gr_worker *w, const gr_stage_rt *s)
{
    if (s->d.kind != GR_SHADER) return false;
    for (int i = 0; i < s->nout; i++) {
        if (gr_out_recirculates(s, i)) continue;
        const gr_queue_rt *q = w->g->queues[s->out[i].queue];
        if (s->out[i].backward) {
            if (s->out[i].back_waits && gr_queue_full(w, q) && !gr_cycle_jammed(w, s)) return true;
        } else if (s->out[i].entry ? gr_cycle_full(w->g, q) : gr_queue_full(w, q)) {
            return true;
        }
    }
    return false;
}

gr_stage_rt *gr_task_stage(const gr_graph *g, void *task)
{
    if (gr_task_is_inst(task)) return gr_task_inst(task)->stage;
    gr_pkt *p = task;
    return g->stages[p->queue->consumer];
}

void gr_run_task(gr_worker *w, void *task)
{
    gr_sim_point(w, &w->sched_fiber);
    /* The watchdog's view: idle from the first failed search until work is found. */
    atomic_store_explicit(&w->idle, false, memory_order_relaxed);
    w->tasks++;
    gr_alive(w);
    if (gr_task_is_inst(task)) {
        gr_flush_partials(w);             /* a Thread activation may run for long */
        gr_pending_flush(w);
        atomic_store_explicit(&w->running, gr_task_inst(task)->stage->id, memory_order_relaxed);
        gr_inst_run(w, gr_task_inst(task));
        return;
    }
    gr_pkt *p = task;
    gr_stage_rt *s = w->g->stages[p->queue->consumer];
    atomic_store_explicit(&w->running, s->id, memory_order_relaxed);
    if (!gr_shader_try_run(w, s, p)) {    /* lost a race for output space: retry later */
        gr_push_task(w, s, p);
        w->tasks--;
    }
}

/* Spins, then yields, then sleeps up to a millisecond (timed, so a missed wake-up costs
 * at most that, never a hang). *fails counts the searches that found nothing. */
void gr_idle_wait(gr_worker *w, unsigned *fails)
{
    gr_graph *g = w->g;
    gr_account(w, GR_T_IDLE);
    atomic_store_explicit(&w->idle, true, memory_order_relaxed);
    if (*fails == 0) gr_credits_return(w);   /* queue space a busy worker may need */
    if (g->sim) {
        ++*fails;
        gr_sim_idle(w, *fails >= GR_IDLE_SPINS);
    } else if (++*fails < GR_IDLE_SPINS) {
        if (*fails & 7) gr_cpu_relax(); else sched_yield();
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
        atomic_fetch_add(&g->sleepers, 1);
        pthread_mutex_lock(&g->sleep_lock);
        atomic_store_explicit(&g->wake_sent, false, memory_order_relaxed);
        if (atomic_load(&g->comps_left) > 0 && !atomic_load(&g->abort))
            pthread_cond_timedwait(&g->sleep_cond, &g->sleep_lock, &ts);
        pthread_mutex_unlock(&g->sleep_lock);
        atomic_fetch_sub(&g->sleepers, 1);
    }
    gr_account(w, GR_T_SCHED);
}

bool gr_running(gr_graph *g)
{
    return atomic_load_explicit(&g->comps_left, memory_order_acquire) > 0 &&
           !atomic_load_explicit(&g->abort, memory_order_relaxed);
}

void gr_worker_loop(gr_worker *w)
{
    w->t_last = gr_worker_now(w);
    w->cat = GR_T_SCHED;
    w->g->sched->loop(w);
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

/* sched_breadth_first.c — the Breadth-First policy (Sanchez et al. 2011 §IV-B), as GPGPU
 * runtimes schedule kernels: one stage at a time, in breadth-first order of the graph
 * from its sources; every worker runs the current stage's tasks (load balanced by
 * stealing from the stage's per-worker deques) until none is left, then all advance in
 * lock-step (a barrier) to the next stage that has work, going round the order again for
 * cycles, until the run ends. No backpressure: a stage's whole output waits in its
 * queues for the next turn, which is what makes this policy's footprint large. Thread
 * stages are never preempted: they run until they block or exit.
 *
 * Invariant: while a turn runs, only the current stage's tasks are taken; between turns
 * every worker is in the barrier with its push coalescers flushed and its pending
 * counts returned (term.c), so the leader (the last to arrive) sees a quiescent graph
 * and every worker follows the same decision. */
#include "gramps/internal.h"

#include <stdlib.h>

enum { BF_STOP = -1, BF_IDLE = -2, BF_START = -3 };

typedef struct bf_state {
    int *order;                       /* stage ids, breadth-first from the sources */
    pthread_mutex_t lock;
    gr_sim_lock sim_lock;             /* simulated runs: its holders and waiters (simulate.h) */
    pthread_cond_t turn;
    unsigned arrived;                 /* workers in the barrier */
    uint64_t generation;              /* turns decided so far */
    _Atomic(int) pos;                 /* index in order of the current stage, or BF_* */
} bf_state;

/* Breadth-first over producer -> consumer edges, from the stages without inputs and
 * those runnable at launch; stages not reached (inside a cycle fed from nowhere) last. */
static void bfs_order(gr_graph *g, int *order, bool *seen)
{
    int head = 0, tail = 0;
    for (int i = 0; i < g->nstages; i++)
        if (g->stages[i]->nin == 0 || g->stages[i]->runnable_at_launch) { order[tail++] = i; seen[i] = true; }
    for (;;) {
        for (; head < tail; head++) {
            gr_stage_rt *s = g->stages[order[head]];
            for (int k = 0; k < s->nout; k++) {
                int c = g->queues[s->out[k].queue]->consumer;
                if (!seen[c]) { seen[c] = true; order[tail++] = c; }
            }
        }
        int next = 0;
        while (next < g->nstages && seen[next]) next++;
        if (next == g->nstages) break;
        seen[next] = true;
        order[tail++] = next;
    }
}

static bool has_tasks(gr_graph *g, int deque)
{
    for (unsigned i = 0; i < g->nworkers; i++)
        if (gr_dq_size(&g->workers[i].dq[deque]) > 0) return true;
    return false;
}

/* The leader's decision, everyone else being in the barrier: the current stage again if
 * it still has tasks (it fed itself), else the next in order that has some, else stop
 * when the run is over, else an idle turn (the watchdog reports a stuck graph). */
static int next_turn(gr_graph *g, bf_state *st)
{
    if (!gr_running(g)) return BF_STOP;
    int n = g->nstages, pos = atomic_load(&st->pos);
    int from = pos >= 0 ? pos : 0;
    for (int k = 0; k < n; k++) {
        int p = (from + k) % n;
        if (has_tasks(g, g->stages[st->order[p]]->deque)) return p;
    }
    return BF_IDLE;
}

/* The turn lock, with its simulated holders: every worker takes it to arrive, and again
 * when the broadcast wakes it, all at once (a convoy on a real machine). A simulated
 * take comes at a safe point, so the lock sees its takers in virtual-time order. */
static void turn_lock(gr_worker *w, bf_state *st)
{
    gr_sim_point(w, &w->sched_fiber);
    gr_sim_lock_take(w, &st->sim_lock);
    pthread_mutex_lock(&st->lock);
}

static void turn_unlock(gr_worker *w, bf_state *st)
{
    pthread_mutex_unlock(&st->lock);
    gr_sim_lock_release(w, &st->sim_lock);
}

static void barrier(gr_worker *w, bf_state *st)
{
    gr_graph *g = w->g;
    gr_account(w, GR_T_IDLE);
    atomic_store_explicit(&w->idle, true, memory_order_relaxed);
    turn_lock(w, st);
    uint64_t gen = st->generation;
    if (++st->arrived == g->nworkers) {
        st->arrived = 0;
        atomic_store(&st->pos, next_turn(g, st));
        st->generation++;
        pthread_cond_broadcast(&st->turn);
        if (g->sim) gr_sim_wake_all(g);
    } else if (g->sim) {
        /* One OS thread: the others must run to arrive, so wait idle in virtual time
         * (reading the generation unlocked is safe on the one thread; a timed-out wait
         * looks again without the lock, as the real condition wait has no time-outs to
         * take it in); woken, take the lock again, as pthread_cond_wait does. */
        turn_unlock(w, st);
        while (gen == st->generation) gr_sim_idle(w, true);
        turn_lock(w, st);
    } else {
        while (gen == st->generation) pthread_cond_wait(&st->turn, &st->lock);
    }
    turn_unlock(w, st);
    gr_account(w, GR_T_SCHED);
}

static void *take(gr_worker *w, gr_stage_rt *s)
{
    gr_dq *dq = &w->dq[s->deque];
    return s->fifo ? gr_dq_steal(dq) : gr_dq_pop(dq);   /* ordered chains stay FIFO */
}

static void *steal(gr_worker *w, gr_stage_rt *s)
{
    gr_graph *g = w->g;
    for (unsigned v = 0; v + 1 < g->nworkers; v++) {
        gr_dq *dq = &g->workers[w->victims[v]].dq[s->deque];
        if (gr_dq_size(dq) <= 0) continue;
        void *t = gr_dq_steal(dq);
        if (t) {
            w->steals++;
            gr_sim_steal(w, t);
            return t;
        }
    }
    return NULL;
}

/* Runs stage s's tasks until this worker finds none, here or at any other worker. */
static void run_turn(gr_worker *w, gr_stage_rt *s)
{
    for (;;) {
        void *t = take(w, s);
        if (!t) { gr_flush_partials(w); t = take(w, s); }
        if (!t) t = steal(w, s);
        if (!t) return;
        gr_run_task(w, t);
        if (atomic_load_explicit(&w->g->abort, memory_order_relaxed)) return;
    }
}

static void bf_loop(gr_worker *w)
{
    bf_state *st = w->g->sched_state;
    for (;;) {
        int pos = atomic_load(&st->pos);
        if (pos == BF_STOP) return;
        if (pos >= 0) {
            run_turn(w, w->g->stages[st->order[pos]]);
        } else if (pos == BF_IDLE) {
            unsigned fails = 1u << 20;    /* straight to a timed sleep */
            gr_idle_wait(w, &fails);
        }
        gr_flush_partials(w);
        gr_pending_flush(w);
        barrier(w, st);
    }
}

/* Per-stage deques as GRAMPS; the first turn is decided by a barrier like every other. */
static gr_status bf_init(gr_graph *g)
{
    bf_state *st = calloc(1, sizeof *st);
    int *order = malloc((size_t)g->nstages * sizeof *order);
    bool *seen = calloc((size_t)g->nstages, sizeof *seen);
    if (!st || !order || !seen) {
        free(st); free(order); free(seen);
        gr_set_error(g, GR_ERR_NOMEM, "breadth-first scheduler: out of memory");
        return GR_ERR_NOMEM;
    }
    for (int i = 0; i < g->nstages; i++) g->stages[i]->deque = g->stages[i]->rank;
    bfs_order(g, order, seen);
    free(seen);
    st->order = order;
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->turn, NULL);
    atomic_store(&st->pos, BF_START);
    g->sched_state = st;
    return GR_OK;
}

static void bf_teardown(gr_graph *g)
{
    bf_state *st = g->sched_state;
    if (!st) return;
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->turn);
    free(st->order);
    free(st);
    g->sched_state = NULL;
}

const gr_scheduler gr_sched_breadth_first = {
    .name = "breadth-first",
    .backpressure = false,
    .preempt = GR_PREEMPT_NEVER,
    .init = bf_init,
    .loop = bf_loop,
    .teardown = bf_teardown,
};

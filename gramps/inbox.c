/* inbox.c — a worker's inbox (inbox.h): tasks other workers hand it. */
#include "gramps/internal.h"

void gr_inbox_init(gr_inbox *b)
{
    gr_spin_init(&b->lock);
    b->tasks = NULL;
    b->len = b->cap = 0;
    atomic_init(&b->waiting, 0);
}

void gr_inbox_free(gr_inbox *b)
{
    free(b->tasks);
    b->tasks = NULL;
    b->len = b->cap = 0;
}

static void lock(gr_worker *w, gr_inbox *b)
{
    gr_sim_take(w, &b->sim_line);
    gr_spin_lock(&b->lock);
}

bool gr_inbox_put(gr_worker *w, gr_inbox *b, void *task)
{
    lock(w, b);
    if (b->len == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        void **t = realloc(b->tasks, cap * sizeof *t);
        if (!t) {
            gr_spin_unlock(&b->lock);
            gr_set_error(w->g, GR_ERR_NOMEM, "out of memory queueing a task of stage '%s' "
                         "for another worker", gr_task_stage(w->g, task)->name);
            atomic_store(&w->g->abort, true);
            return false;
        }
        b->tasks = t;
        b->cap = cap;
    }
    b->tasks[b->len++] = task;
    atomic_store_explicit(&b->waiting, b->len, memory_order_relaxed);
    gr_spin_unlock(&b->lock);
    gr_wake_for_task(w->g);
    return true;
}

void gr_inbox_drain(gr_worker *w)
{
    gr_inbox *b = &w->inbox;
    if (atomic_load_explicit(&b->waiting, memory_order_relaxed) == 0) return;
    lock(w, b);
    for (size_t i = 0; i < b->len; i++) {
        gr_stage_rt *s = gr_task_stage(w->g, b->tasks[i]);
        gr_push_own(w, s, s->deque, b->tasks[i]);
    }
    b->len = 0;
    atomic_store_explicit(&b->waiting, 0, memory_order_relaxed);
    gr_spin_unlock(&b->lock);
}

void *gr_inbox_take(gr_worker *w, gr_inbox *b)
{
    if (atomic_load_explicit(&b->waiting, memory_order_relaxed) == 0) return NULL;
    lock(w, b);
    void *t = b->len ? b->tasks[--b->len] : NULL;
    atomic_store_explicit(&b->waiting, b->len, memory_order_relaxed);
    gr_spin_unlock(&b->lock);
    return t;
}

bool gr_send_home(gr_worker *w, gr_inst *inst)
{
    if (!w->g->sched->state_affinity || !inst->state_bytes) return false;
    const int32_t home = (inst->home ? inst->home : inst->ran_on) - 1;
    if (home < 0 || home == (int32_t)w->id) return false;
    gr_inbox_put(w, &w->g->workers[home].inbox, gr_inst_task(inst));
    return true;
}

void gr_choose_home(gr_worker *w, gr_inst *inst)
{
    inst->home_chosen = true;
    if (!w->g->sched->state_affinity || !inst->stage->d.replicated) return;
    gr_graph *g = w->g;
    gr_worker *best = w;
    uint32_t fewest = atomic_load_explicit(&w->homes, memory_order_relaxed);
    for (unsigned i = 0; i < g->nworkers && fewest > 0; i++) {
        uint32_t n = atomic_load_explicit(&g->workers[i].homes, memory_order_relaxed);
        if (n < fewest) {
            best = &g->workers[i];
            fewest = n;
        }
    }
    /* Relaxed: the counts only balance homes; two instances choosing at once may pick
     * the same worker, which costs balance, not correctness. */
    atomic_fetch_add_explicit(&best->homes, 1, memory_order_relaxed);
    inst->home = (int32_t)best->id + 1;
}

bool gr_leave_home(const gr_stage_rt *s, bool patient)
{
    return patient && atomic_load_explicit(&s->keeps_state, memory_order_relaxed);
}

void *gr_inbox_steal(gr_worker *w)
{
    gr_graph *g = w->g;
    for (unsigned v = 0; v + 1 < g->nworkers; v++) {
        gr_worker *victim = &g->workers[w->victims[v]];
        if (atomic_load_explicit(&victim->idle, memory_order_relaxed)) continue;
        void *t = gr_inbox_take(w, &victim->inbox);
        if (t) return t;
    }
    return NULL;
}

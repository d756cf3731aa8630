/* thread_stage.c — Thread (and Fixed-function) stages: instances as user-level
 * threads, and their reserve/commit intrinsics.
 *
 * An instance runs on a fiber. When it must wait (input not there, output queue full)
 * or is preempted, it records what it waits for in `action` and switches back to its
 * worker; the worker, now off the fiber's stack, registers it as a waiter (rechecking
 * under the subqueue lock). Doing the registration after the switch means no other
 * worker can resume the fiber while it is still running here. */
#include "gramps/internal.h"

#include <stdlib.h>
#include <string.h>

static void check_exit(gr_ctx *c);

static void inst_entry(void *arg)
{
    gr_inst *inst = arg;
    inst->stage->d.main(&inst->ctx);
    check_exit(&inst->ctx);               /* fails the run (and never returns) if broken */
    inst->action = GR_YIELD_EXIT;
    gr_fiber_switch(&inst->fiber, &inst->ctx.w->sched_fiber);
    abort();                              /* an exited instance is never resumed */
}

/* A done instance of a run before (s->spare) as calloc would give it, but for its
 * windows' packet arrays and staging, kept with their sizes (window_pkts and
 * window_staging grow them); NULL when there is none. */
static gr_inst *take_spare(gr_graph *g, gr_stage_rt *s, size_t nwin)
{
    gr_spin_lock(&s->inst_lock);
    gr_inst *inst = s->spare;
    if (inst) s->spare = inst->next_all;
    gr_spin_unlock(&s->inst_lock);
    if (!inst) return NULL;
    if (inst->fiber.stack_base) gr_fiber_destroy(&inst->fiber, &g->stacks);   /* none once exited */
    for (size_t i = 0; i < nwin; i++) {
        const gr_twin *t = &inst->win[i];
        inst->win[i] = (gr_twin){.pkts = t->pkts, .pkts_cap = t->pkts_cap, .staging = t->staging,
                                 .staging_bytes = t->staging_bytes};
    }
    memset(inst, 0, sizeof *inst);
    return inst;
}

gr_inst *gr_inst_create(gr_worker *w, gr_stage_rt *s, gr_subq *bound)
{
    size_t nwin = (size_t)s->nin + (size_t)s->nout;
    gr_inst *inst = take_spare(w->g, s, nwin);
    if (!inst) inst = calloc(1, sizeof *inst + nwin * sizeof *inst->win);
    if (inst) inst->stage = s;            /* gr_inst_destroy reads its window count */
    if (!inst || gr_fiber_create(&inst->fiber, &w->g->stacks, inst_entry, inst) != 0) {
        if (inst) gr_inst_destroy(w->g, inst);
        gr_set_error(w->g, GR_ERR_NOMEM, "stage '%s': cannot create an instance (out of "
                     "memory for its stack)", s->name);
        atomic_store(&w->g->abort, true);
        return NULL;
    }
    inst->bound = bound;
    inst->in_win = inst->win;
    inst->out_win = inst->win + s->nin;
    inst->ctx.g = w->g;
    inst->ctx.stage = s;
    inst->ctx.inst = inst;
    inst->ctx.key = bound ? bound->key : 0;
    gr_spin_lock(&s->inst_lock);
    inst->number = atomic_fetch_add(&s->ninstances, 1);
    inst->next_all = s->instances;
    if (!s->instances) s->last_inst = inst;
    s->instances = inst;
    gr_spin_unlock(&s->inst_lock);
    return inst;
}

void gr_inst_destroy(gr_graph *g, gr_inst *inst)
{
    if (inst->fiber.stack_base) gr_fiber_destroy(&inst->fiber, &g->stacks);
    for (int i = 0; i < inst->stage->nin + inst->stage->nout; i++) {
        free(inst->win[i].pkts);
        free(inst->win[i].staging);
    }
    free(inst);
}

/* ---- worker side -------------------------------------------------------------------- */

static void park_in(gr_worker *w, gr_inst *inst)
{
    gr_subq *s = inst->block_sub;
    if (!s) { gr_park_any(w, inst); return; }
    gr_spin_lock(&s->lock);
    bool ready = gr_subq_need_met(s, inst->block_need, inst->grant_short);
    if (!ready) {
        s->in_waiter = inst;
        s->in_need = inst->block_need;
        atomic_store(&inst->state, GR_INST_BLOCKED_IN);
    }
    gr_spin_unlock(&s->lock);
    if (ready) gr_push_task(w, inst->stage, gr_inst_task(inst));
    else gr_pending_sub_later(w, &w->g->comps[inst->stage->comp], 1);
}

static bool fits(int64_t held, uint32_t need, uint32_t capacity)
{
    return held == 0 || held + need <= capacity;
}

/* Blocked producers still count as pending: their output is coming. Once the instance
 * is on a waiter list another worker may wake and run it, so everything the recheck
 * needs is read before it is registered. */
static void park_out(gr_worker *w, gr_inst *inst)
{
    gr_subq *s = inst->block_sub;
    gr_queue_rt *q = inst->block_queue;
    uint32_t need = inst->block_need;
    atomic_store(&inst->state, GR_INST_BLOCKED_OUT);
    if (s) {
        gr_spin_lock(&s->lock);
        bool ok = fits(s->charged, need, s->queue->d.capacity);
        if (!ok) { inst->next_waiter = s->out_waiters; s->out_waiters = inst; }
        gr_spin_unlock(&s->lock);
        if (ok) gr_push_task(w, inst->stage, gr_inst_task(inst));
        return;
    }
    gr_spin_lock(&q->wait_lock);
    inst->next_waiter = q->out_waiters;
    q->out_waiters = inst;
    atomic_fetch_add(&q->nwaiters, 1);    /* seq_cst: pairs with gr_capacity_release's check */
    gr_spin_unlock(&q->wait_lock);
    if (fits(gr_queue_held(w->g, q), need, q->d.capacity)) gr_wake_out_waiters(w, q, NULL);
}

void gr_inst_run(gr_worker *w, gr_inst *inst)
{
    gr_stage_rt *s = inst->stage;
    inst->ctx.w = w;
    inst->produced = 0;
    atomic_store(&inst->state, GR_INST_RUNNING);
    w->act_t0 = gr_account(w, GR_T_APP);
    w->act_stage = s;
    const int32_t was_on = inst->ran_on;
    inst->ran_on = (int32_t)w->id + 1;
    if (inst->home != inst->ran_on) inst->home = 0;   /* its state follows it here */
    if (w->g->sim) gr_sim_resume(w, inst, was_on);
    w->act_begin = w->act_t0;
    const gr_stage_rt *was = gr_running_set(s);
    gr_fiber_switch(&w->sched_fiber, &inst->fiber);
    gr_running_set(was);
    uint64_t t1 = gr_account(w, GR_T_SCHED);
    /* In a simulated run the instance may have switched out between t0 and t1: each
     * step's part went to stage_ticks at the step's end, and act_t0 is where this
     * step's began; never a wrapped difference. */
    w->stage_ticks[s->id] += t1 > w->act_t0 ? t1 - w->act_t0 : 0;
    w->act_stage = NULL;
    w->stage_tasks[s->id]++;
    if (w->journal) gr_journal_add(w, s->id, inst->number, w->act_begin, t1);
    switch (inst->action) {
    case GR_YIELD_PREEMPT:
        atomic_store(&inst->state, GR_INST_RUNNABLE);
        atomic_fetch_add_explicit(&s->preemptions, 1, memory_order_relaxed);
        gr_requeue(w, inst);
        break;
    case GR_YIELD_BLOCK_IN: park_in(w, inst); break;
    case GR_YIELD_BLOCK_OUT: park_out(w, inst); break;
    case GR_YIELD_EXIT:
        atomic_store(&inst->state, GR_INST_DONE);
        gr_fiber_destroy(&inst->fiber, &w->g->stacks);
        inst->fiber.stack_base = NULL;
        gr_pending_sub(w, &w->g->comps[s->comp], 1);
        break;
    case GR_YIELD_ABORT: break;
    }
}

/* ---- instance side ------------------------------------------------------------------ */

static void yield_to_worker(gr_ctx *c, gr_yield_action a)
{
    c->q_t0 = 0;                          /* a call that yields spans other work: untimed */
    c->inst->action = a;
    gr_fiber_switch(&c->inst->fiber, &c->w->sched_fiber);
    /* Resumed, perhaps by another worker: c->w was updated by gr_inst_run. */
    if (atomic_load(&c->g->abort)) yield_to_worker(c, GR_YIELD_ABORT);
}

void gr_inst_abandon(gr_ctx *c)
{
    for (;;) yield_to_worker(c, GR_YIELD_ABORT);
}

static void wait_input(gr_ctx *c, gr_subq *s, uint32_t need)
{
    c->inst->block_sub = s;
    c->inst->block_need = need;
    yield_to_worker(c, GR_YIELD_BLOCK_IN);
}

/* Waits until some subqueue of the set q meets the need (any_subqueue.c). */
static void wait_any_input(gr_ctx *c, gr_queue_rt *q, uint32_t need)
{
    c->inst->block_sub = NULL;
    c->inst->block_queue = q;
    c->inst->block_need = need;
    yield_to_worker(c, GR_YIELD_BLOCK_IN);
}

static void wait_output(gr_ctx *c, gr_subq *s, gr_queue_rt *q, uint32_t need)
{
    c->inst->block_sub = s;
    c->inst->block_queue = q;
    c->inst->block_need = need;
    yield_to_worker(c, GR_YIELD_BLOCK_OUT);
}

/* Preemption point (reserve/commit): past the stage's low watermark of local work, let the
 * worker run higher-priority tasks; under the work-first policy, after every committed
 * output packet (`committed`: packets gr_commit_out just committed); never under the
 * one-stage-at-a-time policy. Torture builds preempt at every point. */
static void maybe_preempt(gr_ctx *c, uint32_t committed)
{
    gr_worker *w = c->w;
    if (!c->g->torture) {
        if (c->g->preempt != GR_PREEMPT_WATERMARK) {
            if (c->g->preempt == GR_PREEMPT_EACH_OUTPUT && committed)
                yield_to_worker(c, GR_YIELD_PREEMPT);
            return;
        }
        /* the bound first: it does not touch the lines thieves write */
        const int64_t mark = (int64_t)c->stage->low_watermark;
        const int rank = c->stage->rank;
        int64_t local = 0;
        for (int r = gr_ready_below(w, c->g->nstages); r > rank; r = gr_ready_below(w, r))
            local += gr_dq_owner_bound(&w->dq[r]);
        if (local < mark) return;
        local = 0;
        for (int r = gr_ready_below(w, c->g->nstages); r > rank; r = gr_ready_below(w, r))
            local += gr_dq_owner_size(&w->dq[r]);
        if (local < mark) return;
    }
    yield_to_worker(c, GR_YIELD_PREEMPT);
}

static gr_status enter(gr_ctx *c, const char *what)
{
    if (atomic_load(&c->g->abort)) yield_to_worker(c, GR_YIELD_ABORT);
    if (!c->inst) {
        gr_fail(c, GR_ERR_INVALID, "stage '%s' (Shader) called %s, which is for Thread "
                "stages", c->stage->name, what);
        return GR_ERR_INVALID;
    }
    gr_worker *w = c->w;
    gr_alive(w);
    gr_sim_point(w, &c->inst->fiber);
    if (gr_sampled_start(&w->intrinsics)) c->q_t0 = gr_ticks();
    return GR_OK;
}

/* A timed call longer than this did not spend it in the runtime: its thread was
 * descheduled by the OS (a call that waits for other work yields and is not timed).
 * Counting it would multiply one stall by GR_QUEUE_SAMPLE: a loaded machine once
 * reported a whole 1-worker frame as queue time. */
#define GR_INTRINSIC_OUTLIER_NS 200000.0

/* The fiber's time counts as application time (gr_inst_run); a timed call adds its
 * duration to the sample the statistics split queue time out with. */
static gr_status leave(gr_ctx *c, gr_status st)
{
    if (c->q_t0) {
        uint64_t d = gr_ticks() - c->q_t0;
        if ((double)d < GR_INTRINSIC_OUTLIER_NS * gr_ticks_per_ns()) gr_sampled_add(&c->w->intrinsics, d);
        c->q_t0 = 0;
    }
    return st;
}

static void *window_staging(gr_twin *t, size_t bytes)
{
    if (t->staging_bytes < bytes) {
        free(t->staging);
        t->staging = malloc(bytes);
        t->staging_bytes = t->staging ? bytes : 0;
    }
    return t->staging;
}

static bool window_pkts(gr_twin *t, uint32_t n)
{
    if (t->pkts_cap >= n) return true;
    gr_pkt **p = realloc(t->pkts, n * sizeof *p);
    if (!p) return false;
    t->pkts = p;
    t->pkts_cap = n;
    return true;
}

/* Fills the window: one packet in place, several copied together. */
static bool fill_window(gr_twin *t, gr_queue_rt *q, uint32_t n, bool copy_in, gr_window *w)
{
    w->packets = n;
    w->bytes = (size_t)n * q->packet_bytes;
    w->subqueue = t->sub ? t->sub->index : 0;
    w->key = t->sub ? t->sub->key : t->key;
    if (n <= 1) {
        w->mem = n ? gr_pkt_data(t->pkts[0]) : NULL;
        return true;
    }
    char *m = window_staging(t, w->bytes);
    if (!m) return false;
    if (copy_in)
        for (uint32_t i = 0; i < n; i++)
            memcpy(m + i * q->packet_bytes, gr_pkt_data(t->pkts[i]), q->packet_bytes);
    w->mem = m;
    return true;
}

/* The runtime could not allocate what a reserve needs: the run fails with the stage and
 * queue named, and the stage never sees a window without memory (gr_fail does not
 * return to it). */
static void out_of_memory(gr_ctx *c, const char *doing, const gr_queue_rt *q)
{
    gr_fail(c, GR_ERR_NOMEM, "stage '%s': out of memory %s queue '%s'", c->stage->name, doing,
            q->name);
}

static gr_status reserve_in(gr_ctx *c, int slot, gr_subq *s, uint32_t n, gr_window *w)
{
    gr_twin *t = &c->inst->in_win[slot];
    gr_queue_rt *q = s->queue;
    if (t->packets)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': reserve on input %d ('%s') while a reservation "
                "is open; commit first", c->stage->name, slot, q->name);
    for (;;) {
        gr_subq_lock(c->w, s);
        if (gr_subq_need_met(s, n, c->inst->grant_short)) break;
        gr_spin_unlock(&s->lock);
        wait_input(c, s, n);
    }
    c->inst->grant_short = false;
    uint32_t take = (uint32_t)(n == GR_ALL || gr_subq_avail(s) < n ? gr_subq_avail(s) : n);
    if (!window_pkts(t, take ? take : 1)) {
        gr_spin_unlock(&s->lock);
        out_of_memory(c, "reserving input on", q);
    }
    s->taken = take;
    gr_subq_peek(s, take, t->pkts);
    gr_spin_unlock(&s->lock);
    if (c->g->sim)
        for (uint32_t i = 0; i < take; i++) gr_sim_read(c->w, t->pkts[i]);
    t->sub = s;
    t->packets = take;
    if (!fill_window(t, q, take, true, w)) out_of_memory(c, "reserving input on", q);
    if (take == 0) return GR_NOMORE;
    return take < n ? GR_SHORT : GR_OK;
}

static gr_queue_rt *input_queue(gr_ctx *c, int slot)
{
    if (slot < 0 || slot >= c->stage->nin)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': no input %d (it has %d)", c->stage->name,
                slot, c->stage->nin);
    return c->g->queues[c->stage->in[slot].queue];
}

gr_status gr_reserve(gr_ctx *c, int input, uint32_t n, gr_window *w)
{
    if (enter(c, "gr_reserve") != GR_OK) return GR_ERR_INVALID;
    gr_queue_rt *q = input_queue(c, input);
    gr_subq *s = c->inst->bound;
    if (!s && q->is_set)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': input '%s' is a queue set; a stage that is not "
                "instanced reads it with gr_reserve_key or gr_reserve_any", c->stage->name, q->name);
    if (!s) s = q->subs[0];
    if (n == 0) gr_fail(c, GR_ERR_INVALID, "stage '%s': reserve of 0 packets", c->stage->name);
    gr_status st = reserve_in(c, input, s, n, w);
    maybe_preempt(c, 0);
    return leave(c, st);
}

gr_status gr_reserve_key(gr_ctx *c, int input, uint32_t n, uint64_t key, gr_window *w)
{
    if (enter(c, "gr_reserve_key") != GR_OK) return GR_ERR_INVALID;
    gr_queue_rt *q = input_queue(c, input);
    gr_subq *s = gr_subq_get(c->w, q, key, true);
    if (!s) gr_fail(c, GR_ERR_INVALID, "stage '%s': %s", c->stage->name, c->g->error);
    return leave(c, reserve_in(c, input, s, n, w));
}

gr_status gr_reserve_any(gr_ctx *c, int input, uint32_t n, gr_window *w)
{
    if (enter(c, "gr_reserve_any") != GR_OK) return GR_ERR_INVALID;
    gr_queue_rt *q = input_queue(c, input);
    if (!q->is_set || c->inst->bound)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': gr_reserve_any on input '%s', which is %s",
                c->stage->name, q->name, q->is_set ? "its instance's own subqueue (use "
                "gr_reserve)" : "no queue set (use gr_reserve)");
    if (n == 0) gr_fail(c, GR_ERR_INVALID, "stage '%s': reserve of 0 packets", c->stage->name);
    for (;;) {
        bool done;
        gr_subq *s = gr_any_ready(q, n, c->inst->grant_short, &done);
        if (s) return leave(c, reserve_in(c, input, s, n, w));
        if (done) {
            c->inst->grant_short = false;
            *w = (gr_window){0};
            return leave(c, GR_NOMORE);
        }
        wait_any_input(c, q, n);
    }
}

gr_status gr_commit(gr_ctx *c, int input, uint32_t n)
{
    if (enter(c, "gr_commit") != GR_OK) return GR_ERR_INVALID;
    gr_queue_rt *q = input_queue(c, input);
    gr_twin *t = &c->inst->in_win[input];
    if (n > t->packets)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': commit of %u packets on input '%s' but %u are "
                "reserved", c->stage->name, n, q->name, t->packets);
    gr_subq *s = t->sub;
    gr_subq_lock(c->w, s);
    s->taken = 0;
    uint32_t slots = gr_subq_pop(s, n, t->pkts);
    /* the pool gives the space back in the same critical section (see gr_subq_charge) */
    bool pool_waiters = slots && gr_capacity_release(c->w, q, slots);
    bool waiters = gr_subq_has_waiters(s);
    gr_spin_unlock(&s->lock);
    t->packets = 0;
    if (c->g->sim) gr_sim_work(c->stage, n);
    for (uint32_t i = 0; i < n; i++) gr_pkt_free(c->w, t->pkts[i]);
    if (waiters) gr_wake_out_waiters(c->w, q, s);
    if (pool_waiters) gr_wake_out_waiters(c->w, q, NULL);
    maybe_preempt(c, 0);
    return leave(c, GR_OK);
}

/* ---- outputs ------------------------------------------------------------------------ */

static gr_queue_rt *output_queue(gr_ctx *c, int slot)
{
    if (slot < 0 || slot >= c->stage->nout)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': no output %d (it has %d)", c->stage->name,
                slot, c->stage->nout);
    return c->g->queues[c->stage->out[slot].queue];
}

static bool try_charge_sub(gr_worker *w, gr_subq *s, uint32_t n, bool backward)
{
    gr_spin_lock(&s->lock);
    bool ok = backward || s->charged == 0 || s->charged + n <= s->queue->d.capacity;
    if (ok) {
        gr_subq_charge(s, n);
        gr_charge(w, s->queue, n);
    }
    gr_spin_unlock(&s->lock);
    return ok;
}

/* Charges n packets to q (subqueue s for physical sets; a Shader's set bounds all its
 * subqueues together, gate.c), blocking while it is full unless the binding is backward. */
static void charge_output(gr_ctx *c, gr_queue_rt *q, gr_subq *s, uint32_t n, bool backward)
{
    if (s && q->is_set) {
        while (!try_charge_sub(c->w, s, n, backward)) wait_output(c, s, NULL, n);
    } else {
        while (!gr_try_charge(c->w, q, n, backward)) wait_output(c, NULL, q, n);
        if (q->physical) {
            gr_spin_lock(&q->subs[0]->lock);
            gr_subq_charge(q->subs[0], n);
            gr_spin_unlock(&q->subs[0]->lock);
        }
    }
}

/* Ordered chain: reserve n slots, in order, in the chain's final subqueue. */
static uint64_t reserve_chain_slots(gr_ctx *c, gr_queue_rt *end, gr_subq *s, uint32_t n)
{
    for (;;) {
        gr_spin_lock(&s->lock);
        bool fits = end->backward || !c->g->backpressure || s->charged == 0 || s->charged + n <= end->d.capacity;
        if (fits) {
            uint64_t first = 0;
            for (uint32_t i = 0; i < n; i++) {
                uint64_t pos = gr_subq_reserve_slot(s);
                if (pos == GR_NO_SLOT) {
                    gr_spin_unlock(&s->lock);
                    out_of_memory(c, "reserving ordered slots on", end);
                }
                if (i == 0) first = pos;
            }
            gr_charge(c->w, end, n);  /* with the slots, so the pool matches them */
            gr_spin_unlock(&s->lock);
            return first;
        }
        gr_spin_unlock(&s->lock);
        wait_output(c, s, NULL, n);
    }
}

static gr_status reserve_out(gr_ctx *c, int slot, uint32_t n, uint64_t key, bool keyed,
                             gr_window *w)
{
    gr_queue_rt *q = output_queue(c, slot);
    gr_twin *t = &c->inst->out_win[slot];
    if (n == 0 || n == GR_ALL)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': output reserve of %s packets on '%s'",
                c->stage->name, n ? "GR_ALL" : "0", q->name);
    if (t->packets)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': reserve on output '%s' while a reservation is "
                "open; commit first", c->stage->name, q->name);
    if (q->is_set && !keyed)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': output '%s' is a queue set; use "
                "gr_reserve_out_key", c->stage->name, q->name);
    gr_subq *s = q->physical ? gr_subq_get(c->w, q, keyed ? key : 0, true) : NULL;
    if (q->physical && !s) gr_fail(c, GR_ERR_INVALID, "stage '%s': %s", c->stage->name, c->g->error);
    gr_subq *end_sub = NULL;
    uint64_t first_slot = 0;
    if (q->chain_end >= 0) {
        gr_queue_rt *end = c->g->queues[q->chain_end];
        if (end->is_set && !keyed)
            gr_fail(c, GR_ERR_INVALID, "stage '%s': output '%s' is an ordered chain ending in "
                    "queue set '%s'; use gr_reserve_out_key", c->stage->name, q->name,
                    end->name);
        end_sub = gr_subq_get(c->w, end, key, true);
        if (!end_sub) gr_fail(c, GR_ERR_INVALID, "stage '%s': %s", c->stage->name, c->g->error);
        first_slot = reserve_chain_slots(c, end, end_sub, n);
    }
    charge_output(c, q, s, n, gr_exempt(c->g, &c->stage->out[slot]));
    if (!window_pkts(t, n)) out_of_memory(c, "reserving output on", q);
    for (uint32_t i = 0; i < n; i++) {
        gr_pkt *p = gr_pkt_alloc(c->w, q);
        if (!p) out_of_memory(c, "reserving output on", q);
        p->key = key;
        p->keyed = keyed;
        p->sub = s;
        if (end_sub) p->order = (gr_order_ref){end_sub, first_slot + i};
        t->pkts[i] = p;
    }
    t->sub = s;
    t->key = key;
    t->packets = n;
    if (!fill_window(t, q, n, false, w)) out_of_memory(c, "reserving output on", q);
    return GR_OK;
}

gr_status gr_reserve_out(gr_ctx *c, int output, uint32_t n, gr_window *w)
{
    if (enter(c, "gr_reserve_out") != GR_OK) return GR_ERR_INVALID;
    gr_status st = reserve_out(c, output, n, 0, false, w);
    maybe_preempt(c, 0);
    return leave(c, st);
}

gr_status gr_reserve_out_key(gr_ctx *c, int output, uint32_t n, uint64_t key, gr_window *w)
{
    if (enter(c, "gr_reserve_out_key") != GR_OK) return GR_ERR_INVALID;
    gr_status st = reserve_out(c, output, n, key, true, w);
    maybe_preempt(c, 0);
    return leave(c, st);
}

/* An uncommitted reserved packet gives back its space (and its chain slot). */
static void cancel_packet(gr_worker *w, gr_queue_rt *q, gr_pkt *p)
{
    if (p->order.sub) gr_deliver_ordered(w, NULL, p->order);
    if (!p->sub) {
        gr_release(w, p);
        return;
    }
    gr_spin_lock(&p->sub->lock);
    gr_subq_charge(p->sub, -1);
    bool pool_waiters = gr_capacity_release(w, q, 1);   /* with the subqueue's count */
    bool waiters = p->sub->out_waiters != NULL;
    gr_spin_unlock(&p->sub->lock);
    gr_pkt_free(w, p);
    if (waiters) gr_wake_out_waiters(w, q, p->sub);
    if (pool_waiters) gr_wake_out_waiters(w, q, NULL);
}

/* The first n packets of output window t, about to be committed, must have counts
 * that fit (Collection queues); a window of several is still in its staging copy. */
static void check_counts(gr_ctx *c, gr_queue_rt *q, const gr_twin *t, uint32_t n)
{
    if (q->d.kind != GR_COLLECTION) return;
    for (uint32_t i = 0; i < n; i++)
        gr_check_count(c, q, t->packets > 1 ? (char *)t->staging + i * q->packet_bytes
                                            : gr_pkt_data(t->pkts[i]));
}

gr_status gr_commit_out(gr_ctx *c, int output, uint32_t n)
{
    if (enter(c, "gr_commit_out") != GR_OK) return GR_ERR_INVALID;
    gr_queue_rt *q = output_queue(c, output);
    gr_twin *t = &c->inst->out_win[output];
    if (n > t->packets)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': commit of %u packets on output '%s' but %u are "
                "reserved", c->stage->name, n, q->name, t->packets);
    check_counts(c, q, t, n);
    uint32_t reserved = t->packets;
    t->packets = 0;
    for (uint32_t i = 0; i < reserved; i++) {
        gr_pkt *p = t->pkts[i];
        if (reserved > 1)
            memcpy(gr_pkt_data(p), (char *)t->staging + i * q->packet_bytes, q->packet_bytes);
        if (i < n) gr_enqueue(c->w, p);
        else cancel_packet(c->w, q, p);
    }
    c->inst->produced += n;
    if (c->g->sim) gr_sim_work(c->stage, n);
    maybe_preempt(c, n);
    return leave(c, GR_OK);
}

uint64_t gr_key(const gr_ctx *c) { return c->key; }

/* ---- returning ---------------------------------------------------------------------- */

/* An open window at return would hold its packets (input) or queue space (output)
 * forever; the run would end in a deadlock that names neither. */
static void check_windows(gr_ctx *c, const gr_twin *win, const gr_binding *b, int n,
                          const char *dir)
{
    for (int i = 0; i < n; i++)
        if (win[i].packets)
            gr_fail(c, GR_ERR_INVALID, "stage '%s' returned holding a reservation of %u "
                    "packets on its %s queue '%s' (commit before returning)", c->stage->name,
                    win[i].packets, dir, c->g->queues[b[i].queue]->name);
}

static void check_drained(gr_ctx *c, gr_subq *s)
{
    uint64_t left = gr_subq_consumer_done(s);
    if (!left) return;
    gr_report_left(c->g, s, left, false);
    gr_inst_abandon(c);
}

/* A returning instance gives up what it consumes: its subqueue (instanced), else every
 * subqueue of every input (one instance per such stage). Packets there now, or arriving
 * later (queue.c), are lost: the run fails instead of finishing without them. The
 * queue flag comes first so that subqueues a producer creates meanwhile are covered. */
static void check_inputs(gr_ctx *c)
{
    if (c->inst->bound) { check_drained(c, c->inst->bound); return; }
    for (int i = 0; i < c->stage->nin; i++) {
        gr_queue_rt *q = c->g->queues[c->stage->in[i].queue];
        atomic_store(&q->consumer_done, true);
        uint32_t n = q->d.dynamic_keys ? atomic_load(&q->keys.count) : q->nsubs;
        for (uint32_t k = 0; k < n; k++)
            if (q->subs[k]) check_drained(c, q->subs[k]);
    }
}

static void check_exit(gr_ctx *c)
{
    check_windows(c, c->inst->in_win, c->stage->in, c->stage->nin, "input");
    check_windows(c, c->inst->out_win, c->stage->out, c->stage->nout, "output");
    check_inputs(c);
}

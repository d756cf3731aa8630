/* simulate.c — the virtual-time mode (simulate.h): P virtual workers on one OS thread.
 *
 * Each virtual worker's loop (the policy's own, sched*.c) runs on a fiber of its own;
 * Thread-stage instances run on theirs, as in a real run. The OS thread (the "driver")
 * keeps the workers in a min-heap keyed by virtual clock and always resumes the
 * smallest. A worker runs until a safe point finds another worker's clock smaller
 * (gr_sim_point: before each task, at each Thread-stage runtime call, before a Shader
 * commits its outputs) or it goes idle (gr_sim_idle), then switches back.
 *
 * Virtual time: while worker w runs, its clock is gr_ticks() + w->sim_offset, so the
 * cycles the real stage code and runtime take count as they are, and the cost model's
 * charges are added to the offset. Since a worker only starts a step when its clock is
 * the smallest, a task another worker pushes is never seen before its virtual push time
 * by a worker that starts a step; within a step, a worker reads shared state as it was
 * when the step began (a lag of at most one step, a Shader task or a Thread stage's
 * stretch between two runtime calls).
 *
 * Cost model (charged to the worker's clock; constants in gr_sim_costs, measured or
 * derived once, docs/many-cores.md): a steal moves steal_lines lines (the victim's ready
 * word, deque indices, slot), and inst_lines more for a Thread instance, each line_ns.
 * A packet read by stage code on a worker other than the one that committed it
 * (gr_sim_read; the writer is recorded at gr_enqueue) costs line_ns for its first line
 * and stream_ns for each further one: a core overlaps its misses, so a packet's lines
 * after the first come at the rate of its line-fill buffers (Intel cores have 10 since
 * Nehalem: line_ns / 10). A shared line several workers write in turn (a subqueue's
 * lock, a queue's pool count: gr_sim_take) is a resource one worker holds at a time:
 * a worker taking it over from another pays line_ns for its transfer, and first waits
 * for the previous hand-off to end when that overlaps its own virtual time (contention;
 * a take that comes earlier in virtual time than the last one, which the steps' lag
 * allows, waits for nothing). A lock held for a critical section (Breadth-First's turn
 * barrier, gr_sim_lock_take) is the same resource held from its take to its release, as
 * measured: a worker that asks while another holds it waits for the release and then
 * pays handoff_ns (a contended mutex's waiter sleeps in the kernel; the release wakes
 * it), so the workers a broadcast wakes together pass it on one by one. A Thread
 * instance that declared private data (gr_state_bytes) and resumes on another worker
 * than its last reads it as it would a packet of that size (gr_sim_resume), or, when
 * its stage says what it touches (gr_state_touched), the lines it touches there, up to
 * that size (a thief that runs a Bin continuation for 1 us touches a few staged tiles,
 * not all 866 KiB of them). These
 * charges fall outside any stage's busy time, so the calibration below never scales
 * them. Idle workers behave as tasks.c's: one looks for work again every spin_ns /
 * GR_IDLE_SPINS for its first GR_IDLE_SPINS searches, then sleeps; a push wakes every
 * sleeper unless a push already did since the last one went to sleep (wake_sent), each
 * after wake_ns; a sleeper nobody wakes looks again after poll_ns, the timed wait.
 *
 * Calibrated application time (gr_launch_opts.sim_calibration): P virtual workers share
 * one core's caches, so a task measured here costs more than on a core of its own. With a
 * 1-worker run's profile, each stage's application ticks in a step are charged times (the
 * profile's ticks per unit of work) / (its ticks per unit as measured at P): the stage
 * costs about what it did at P = 1, each task keeping its share. On a relaunch the
 * divisor is the previous run's (the same graph at the same P), a constant over the run.
 * A first launch can only take its own run so far (units from gr_sim_work), which is
 * right for a stage whose units come evenly with its work and wrong for one that is
 * given them first and works after: tile-shade declares its triangles as its bins
 * arrive and shades at the close, and was charged 0.7-1.4x its calibrated cost in a
 * frame that way (docs/many-cores.md). A Thread
 * activation's ticks go to its stage step by step (act_t0), so that the charge lands in
 * the step that ran them. Wake-ups a step causes happen at its time before calibration
 * (now_of_running): where the calibration shortens a step, a sleeper it wakes starts up
 * to that much late. */
#include "gramps/internal.h"
#include "gramps/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { VW_RUNNABLE, VW_RUNNING, VW_IDLE, VW_EXITED } vw_state;

/* A virtual worker's scheduling state (the driver's; the worker's clock offset, which
 * gr_account reads on every step, lives in gr_worker). */
typedef struct vworker {
    uint64_t clock;        /* virtual ticks when last switched out (or woken to) */
    uint64_t key;          /* heap key: clock, or an idle worker's timeout */
    uint64_t idle_since;
    bool asleep;           /* idle past its spins: a wake-up costs the latency */
    int heap_pos;          /* -1: not in the heap (running or exited) */
    int prev_idle, next_idle;   /* the idle list, most recent first */
    gr_fiber *resume;      /* the fiber that switched out (its loop's or an instance's) */
    /* When the running step began: the OS thread's CPU time (ns), the ticks and the
     * clock offset (the cost model's charges since are the offset's growth). */
    uint64_t step_cpu, step_ticks, step_offset;
    uint64_t step_t[GR_T_NCAT];   /* the worker's time per category then */
    uint64_t *step_stage;         /* and its busy ticks per stage (nstages) */
    size_t step_journal;          /* and its journal's length */
    vw_state state;
} vworker;

struct gr_sim {
    gr_graph *g;
    gr_fiber driver;
    unsigned n, exited;
    vworker *v;
    int *heap;
    uint64_t *step_stages;         /* the workers' step_stage arrays, one block */
    unsigned nheap;
    int idle_head;         /* most recently idle worker, -1: none */
    /* A push woke the sleepers since the last one went to sleep (tasks.c's wake_sent). */
    bool wake_sent;
    _Atomic(int) running;  /* the worker being run, -1 between (watchdog) */
    uint64_t end;
    /* costs in ticks (stream: fractional, a packet's lines are many) */
    uint64_t line, steal, inst, spin_step, wake, poll, handoff;
    double stream;
};

/* The simulation the calling OS thread drives: wake-ups from other threads (the
 * watchdog, gr_wait) must not touch its heap. */
static _Thread_local gr_sim *driving;

/* ---- the cost model's constants ------------------------------------------------------- */

/* bench_runtime simcost measures them (docs/many-cores.md has the figures): line is
 * half the 16-core Xeon's 149 ns line round trip (docs/data/16-core-2026-11-27), stream
 * line / 10 (a core's 10 line-fill buffers keep that many misses in flight), wake and
 * spin the development VM's. handoff is 0 (a contended lock costs the wait for its
 * holder only) until the 16-core machine measures it: the VM's 13-19 us made every
 * Breadth-First prediction at 16 workers too slow (docs/many-cores.md). */
static const gr_sim_costs default_costs = {
    .line_ns = 75, .steal_lines = 3, .inst_lines = 8, .handoff_ns = 0,
    .stream_ns = 7.5, .spin_ns = 5000, .wake_ns = 12000, .poll_ns = 1000000,
};

/* GRAMPS_SIM_COST="line=75,wake=12000,...": any subset of line, steal_lines, inst_lines,
 * handoff, stream, spin, wake, poll (ns or lines); unknown names and bad numbers are
 * ignored with a warning. */
gr_sim_costs gr_sim_costs_in_effect(void)
{
    gr_sim_costs c = default_costs;
    const char *env = getenv("GRAMPS_SIM_COST");
    for (const char *p = env; p && *p;) {
        char name[32];
        double v;
        int used = 0;
        if (sscanf(p, "%31[a-z_]=%lf%n", name, &v, &used) != 2 || !(v >= 0)) {
            fprintf(stderr, "gramps: GRAMPS_SIM_COST: cannot read '%s' (NAME=NUMBER,...)\n", p);
            break;
        }
        if (!strcmp(name, "line")) c.line_ns = v;
        else if (!strcmp(name, "steal_lines")) c.steal_lines = v;
        else if (!strcmp(name, "inst_lines")) c.inst_lines = v;
        else if (!strcmp(name, "handoff")) c.handoff_ns = v;
        else if (!strcmp(name, "stream")) c.stream_ns = v;
        else if (!strcmp(name, "spin")) c.spin_ns = v;
        else if (!strcmp(name, "wake")) c.wake_ns = v;
        else if (!strcmp(name, "poll")) c.poll_ns = v;
        else fprintf(stderr, "gramps: GRAMPS_SIM_COST: unknown cost '%s'\n", name);
        p += used;
        if (*p == ',') p++;
    }
    return c;
}

static uint64_t ticks_of(double ns) { return (uint64_t)(ns * gr_ticks_per_ns()); }

/* ---- the heap of virtual workers by key (ties: lower id first) ------------------------ */

static bool before(const gr_sim *s, int a, int b)
{
    return s->v[a].key < s->v[b].key || (s->v[a].key == s->v[b].key && a < b);
}

static void heap_place(gr_sim *s, unsigned i, int w)
{
    s->heap[i] = w;
    s->v[w].heap_pos = (int)i;
}

static void sift_up(gr_sim *s, unsigned i)
{
    int w = s->heap[i];
    while (i > 0 && before(s, w, s->heap[(i - 1) / 2])) {
        heap_place(s, i, s->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_place(s, i, w);
}

static void sift_down(gr_sim *s, unsigned i)
{
    int w = s->heap[i];
    for (;;) {
        unsigned c = 2 * i + 1;
        if (c >= s->nheap) break;
        if (c + 1 < s->nheap && before(s, s->heap[c + 1], s->heap[c])) c++;
        if (!before(s, s->heap[c], w)) break;
        heap_place(s, i, s->heap[c]);
        i = c;
    }
    heap_place(s, i, w);
}

static void heap_insert(gr_sim *s, int w, uint64_t key)
{
    s->v[w].key = key;
    heap_place(s, s->nheap++, w);
    sift_up(s, s->nheap - 1);
}

/* A worker already in the heap gets another key. */
static void heap_rekey(gr_sim *s, int w, uint64_t key)
{
    s->v[w].key = key;
    sift_up(s, (unsigned)s->v[w].heap_pos);
    sift_down(s, (unsigned)s->v[w].heap_pos);
}

static int heap_pop(gr_sim *s)
{
    int w = s->heap[0];
    s->v[w].heap_pos = -1;
    if (--s->nheap > 0) {
        heap_place(s, 0, s->heap[s->nheap]);
        sift_down(s, 0);
    }
    return w;
}

/* ---- the idle list -------------------------------------------------------------------- */

static void idle_push(gr_sim *s, int w)
{
    s->v[w].prev_idle = -1;
    s->v[w].next_idle = s->idle_head;
    if (s->idle_head >= 0) s->v[s->idle_head].prev_idle = w;
    s->idle_head = w;
}

static void idle_remove(gr_sim *s, int w)
{
    vworker *v = &s->v[w];
    if (v->prev_idle >= 0) s->v[v->prev_idle].next_idle = v->next_idle;
    else s->idle_head = v->next_idle;
    if (v->next_idle >= 0) s->v[v->next_idle].prev_idle = v->prev_idle;
    v->prev_idle = v->next_idle = -1;
}

/* An idle worker wakes at virtual time t: at once while it still spins, after the
 * wake-up latency once it sleeps; never before it went idle. */
static void wake(gr_sim *s, int w, uint64_t t)
{
    vworker *v = &s->v[w];
    idle_remove(s, w);
    uint64_t at = t > v->idle_since ? t : v->idle_since;
    if (v->asleep) at += s->wake;
    v->state = VW_RUNNABLE;
    v->clock = at;
    heap_rekey(s, w, at);
}

/* ---- launch and the driver ------------------------------------------------------------ */

bool gr_sim_create(gr_graph *g)
{
    gr_sim *s = calloc(1, sizeof *s);
    if (!s) return false;
    g->sim = s;
    s->g = g;
    s->n = g->nworkers;
    s->v = calloc(s->n, sizeof *s->v);
    s->heap = calloc(s->n, sizeof *s->heap);
    s->step_stages = calloc((size_t)s->n * (size_t)(g->nstages > 0 ? g->nstages : 1), sizeof *s->step_stages);
    if (!s->v || !s->heap || !s->step_stages) return false;
    gr_sim_costs c = gr_sim_costs_in_effect();
    s->line = ticks_of(c.line_ns);
    s->steal = ticks_of(c.line_ns * c.steal_lines);
    s->inst = ticks_of(c.line_ns * c.inst_lines);
    s->stream = c.stream_ns * gr_ticks_per_ns();
    s->spin_step = ticks_of(c.spin_ns / GR_IDLE_SPINS);
    s->wake = ticks_of(c.wake_ns);
    s->poll = ticks_of(c.poll_ns);
    s->handoff = ticks_of(c.handoff_ns);
    s->idle_head = -1;
    atomic_init(&s->running, -1);
    const gr_profile *cal = g->opts.sim_calibration;
    for (int i = 0; i < g->nstages; i++) {
        gr_stage_rt *st = g->stages[i];
        /* zero on a first launch: the stages were made with sim_units 0 */
        st->sim_prev_unit_ticks = st->sim_units ? (double)st->sim_ticks / (double)st->sim_units : 0;
        st->sim_ticks = st->sim_units = 0;
        st->sim_declares_units = st->sim_declares_touches = false;
        double us = 0;
        st->sim_unit_ticks = cal && gr_profile_unit_us(cal, st, &us) ? us * 1e3 * gr_ticks_per_ns() : 0;
    }
    return true;
}

void gr_sim_free(gr_graph *g)
{
    gr_sim *s = g->sim;
    if (!s) return;
    for (unsigned i = 0; g->workers && i < s->n; i++)
        gr_fiber_destroy(&g->workers[i].sched_fiber, &g->stacks);
    free(s->v);
    free(s->heap);
    free(s->step_stages);
    free(s);
    g->sim = NULL;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Back from the driver: the clock resumes where the driver set it. */
static void arrive(gr_worker *w)
{
    vworker *v = &w->g->sim->v[w->id];
    v->step_cpu = thread_cpu_ns();
    v->step_ticks = gr_ticks();
    w->sim_offset = v->step_offset = v->clock - v->step_ticks;
    memcpy(v->step_t, w->t, sizeof v->step_t);
    memcpy(v->step_stage, w->stage_ticks, (size_t)w->g->nstages * sizeof *v->step_stage);
    v->step_journal = w->journal_len;
    if (w->act_stage) w->act_t0 = v->clock;
}

/* Scales what the step added to each of `n` counters (from `at_start`) by `scale`. */
static void scale_step(uint64_t *counters, const uint64_t *at_start, int n, double scale)
{
    for (int i = 0; i < n; i++)
        if (counters[i] > at_start[i])
            counters[i] = at_start[i] + (uint64_t)((double)(counters[i] - at_start[i]) * scale);
}

/* The most a calibration scales a stage's time by, either way: early in a run a stage's
 * cost per unit rests on few units (a Thread stage's packets come at its commits). */
#define SIM_MAX_CALIBRATION 64.0

/* The calibrated cost model (gr_launch_opts.sim_calibration): each stage's share of
 * the step, x (its CPU-time corrected application ticks), becomes x times the
 * calibration's ticks per unit of work over the stage's as measured (the previous run's
 * on a relaunch, else this run's so far). Returns the change to the
 * step's length (<= 0 when the run's tasks cost more than the calibration's), having
 * applied it to the stages' busy ticks. */
static int64_t calibrate_step(gr_worker *w, const vworker *v)
{
    int64_t delta = 0;
    for (int i = 0; i < w->g->nstages; i++) {
        gr_stage_rt *st = w->g->stages[i];
        if (w->stage_ticks[i] <= v->step_stage[i]) continue;
        uint64_t x = w->stage_ticks[i] - v->step_stage[i];
        st->sim_ticks += x;
        if (!(st->sim_unit_ticks > 0)) continue;
        double per_unit = st->sim_prev_unit_ticks;
        if (!(per_unit > 0) && st->sim_units) per_unit = (double)st->sim_ticks / (double)st->sim_units;
        if (!(per_unit > 0)) continue;
        double f = st->sim_unit_ticks / per_unit;
        if (f > SIM_MAX_CALIBRATION) f = SIM_MAX_CALIBRATION;
        if (f < 1 / SIM_MAX_CALIBRATION) f = 1 / SIM_MAX_CALIBRATION;
        int64_t d = (int64_t)((double)x * f) - (int64_t)x;
        w->stage_ticks[i] += (uint64_t)d;
        delta += d;
    }
    return delta;
}

/* t, a tick of the step as it ran (from start), moved to the step as charged. */
static uint64_t step_time(uint64_t t, uint64_t start, double scale)
{
    return t > start ? start + (uint64_t)((double)(t - start) * scale) : t;
}

/* The journal slices w recorded in its step, whose times are ticks of the step as it
 * ran (start .. raw_end), moved to the step as charged (start .. end) in proportion, as
 * its time categories are, and so is the start of a Thread activation the step began
 * and did not end (its slice is recorded at its end): a trace's slices then lie where
 * the virtual clock says. */
static void journal_step(gr_worker *w, const vworker *v, uint64_t start, uint64_t raw_end,
                         uint64_t end)
{
    if (raw_end <= start) return;
    const double scale = (double)(end - start) / (double)(raw_end - start);
    for (size_t k = v->step_journal; k < w->journal_len; k++) {
        gr_journal_ev *e = &w->journal[k];
        e->t0 = step_time(e->t0, start, scale);
        e->t1 = step_time(e->t1, start, scale);
    }
    if (w->act_stage) w->act_begin = step_time(w->act_begin, start, scale);
}

/* The clock at the end of w's step: the ticks it took, or the OS thread's CPU time when
 * that is less (the OS ran something else meanwhile: a loaded machine's time is not the
 * simulated machine's), plus the cost model's charges and calibration. The worker's time
 * categories, the busy times of the stages the step ran and its journal slices are
 * scaled to match (in proportion: where in the step the OS intervened is unknown), so
 * that a stage is never busier than the workers' application time. */
static uint64_t step_end(gr_worker *w, vworker *v)
{
    uint64_t t = gr_ticks(), now = t + w->sim_offset;
    w->t[w->cat] += now - w->t_last;      /* the books closed at the step's end */
    w->t_last = now;
    if (w->act_stage && now > w->act_t0) w->stage_ticks[w->act_stage->id] += now - w->act_t0;
    double cpu = (double)(thread_cpu_ns() - v->step_cpu) * gr_ticks_per_ns();
    double ticks = (double)(t - v->step_ticks), charged = (double)(w->sim_offset - v->step_offset);
    if (cpu < ticks) {
        double scale = (cpu + charged) / (ticks + charged);
        scale_step(w->t, v->step_t, GR_T_NCAT, scale);
        scale_step(w->stage_ticks, v->step_stage, w->g->nstages, scale);
        w->t_last = v->step_ticks + v->step_offset + (uint64_t)(cpu + charged);
    }
    int64_t delta = calibrate_step(w, v);
    uint64_t start = v->step_ticks + v->step_offset, app = w->t[GR_T_APP] - v->step_t[GR_T_APP];
    if (delta < -(int64_t)app) delta = -(int64_t)app;               /* stays in the step */
    if (delta < -(int64_t)(w->t_last - start)) delta = -(int64_t)(w->t_last - start);
    w->t[GR_T_APP] += (uint64_t)delta;
    w->t_last += (uint64_t)delta;
    journal_step(w, v, start, now, w->t_last);
    return w->t_last;
}

/* Switches out of `here` to the driver, in state st (the clock is w's now). */
static void depart(gr_worker *w, gr_fiber *here, vw_state st)
{
    gr_sim *s = w->g->sim;
    vworker *v = &s->v[w->id];
    v->clock = step_end(w, v);
    v->state = st;
    v->resume = here;
    gr_fiber_switch(here, &s->driver);
}

static void worker_entry(void *arg)
{
    gr_worker *w = arg;
    arrive(w);
    gr_worker_loop(w);
    depart(w, &w->sched_fiber, VW_EXITED);
    abort();                              /* an exited worker is never resumed */
}

static void run_one(gr_sim *s, int id)
{
    vworker *v = &s->v[id];
    if (v->state == VW_IDLE) {            /* timed out: polls again */
        idle_remove(s, id);
        v->clock = v->key;
    }
    v->state = VW_RUNNING;
    atomic_store_explicit(&s->running, id, memory_order_relaxed);
    gr_fiber_switch(&s->driver, v->resume);
    atomic_store_explicit(&s->running, -1, memory_order_relaxed);
    if (v->clock > s->end) s->end = v->clock;
    if (v->state == VW_RUNNABLE) heap_insert(s, id, v->clock);
    else if (v->state == VW_IDLE) {
        v->idle_since = v->clock;
        if (v->asleep) s->wake_sent = false;
        idle_push(s, id);
        heap_insert(s, id, v->clock + (v->asleep ? s->poll : s->spin_step));
    }
    else s->exited++;
}

void *gr_sim_main(void *graph)
{
    gr_graph *g = graph;
    gr_sim *s = g->sim;
    gr_fiber_init_self(&s->driver);
    driving = s;
    for (unsigned i = 0; i < s->n; i++) {
        gr_worker *w = &g->workers[i];
        if (gr_fiber_create(&w->sched_fiber, &g->stacks, worker_entry, w) != 0) {
            gr_set_error(g, GR_ERR_NOMEM, "simulation: out of memory for virtual worker %u's stack", i);
            atomic_store(&g->abort, true);
        }
    }
    s->end = g->t_start;
    for (unsigned i = 0; i < s->n; i++) {
        s->v[i] = (vworker){.clock = g->t_start, .heap_pos = -1, .prev_idle = -1,
                            .next_idle = -1, .resume = &g->workers[i].sched_fiber,
                            .step_stage = s->step_stages + (size_t)i * (size_t)g->nstages};
        if (g->workers[i].sched_fiber.stack_base) heap_insert(s, (int)i, g->t_start);
        else s->exited++;
    }
    while (s->nheap > 0) run_one(s, heap_pop(s));
    driving = NULL;
    gr_fiber_destroy_self(&s->driver);
    return NULL;
}

uint64_t gr_sim_end(const gr_graph *g) { return g->sim->end; }

int gr_sim_running(const gr_graph *g)
{
    return atomic_load_explicit(&g->sim->running, memory_order_relaxed);
}

/* ---- worker side ---------------------------------------------------------------------- */

/* Adds the cost model's ticks to w's clock. Inside a Thread activation they stay out of
 * its stage's busy ticks (act_t0 moves with them), so that the calibration, which
 * scales stage time, leaves them as they are. */
static void charge(gr_worker *w, uint64_t ticks)
{
    w->sim_offset += ticks;
    if (w->act_stage) w->act_t0 += ticks;
}

void gr_sim_point(gr_worker *w, gr_fiber *here)
{
    gr_sim *s = w->g->sim;
    if (!s || s->nheap == 0) return;
    uint64_t now = gr_ticks() + w->sim_offset;
    int top = s->heap[0];
    if (s->v[top].key > now || (s->v[top].key == now && (unsigned)top > w->id)) return;
    depart(w, here, VW_RUNNABLE);
    arrive(w);
}

void gr_sim_idle(gr_worker *w, bool asleep)
{
    gr_sim *s = w->g->sim;
    s->v[w->id].asleep = asleep;
    depart(w, &w->sched_fiber, VW_IDLE);
    arrive(w);
}

void gr_sim_work(gr_stage_rt *st, uint64_t units)
{
    if (!st->sim_declares_units) st->sim_units += units;
}

/* From the stage's first declaration on, only declared units count; a stage declares
 * before it commits what the units came in (tile-shade: after each reserve), so its
 * packets never count. */
void gr_sim_declared_work(gr_stage_rt *st, uint64_t units)
{
    st->sim_declares_units = true;
    st->sim_units += units;
}

void gr_sim_steal(gr_worker *w, void *task)
{
    gr_sim *s = w->g->sim;
    if (!s) return;
    charge(w, s->steal + (gr_task_is_inst(task) ? s->inst : 0));
}

/* The bytes of p its reader touches: a Collection's header and elements, else all. */
static size_t bytes_read(const gr_pkt *p)
{
    const gr_queue_rt *q = p->queue;
    if (q->d.kind != GR_COLLECTION) return q->packet_bytes;
    size_t n = gr_count(gr_pkt_data((gr_pkt *)p));
    size_t used = q->d.header_bytes + n * q->d.element_bytes;
    return used < q->packet_bytes ? used : q->packet_bytes;
}

/* w reads `lines` lines another core holds: the first's latency, the rest streamed. */
static void charge_lines(gr_sim *s, gr_worker *w, uint64_t lines)
{
    w->sim_remote_lines += lines;
    charge(w, s->line + (uint64_t)((double)(lines - 1) * s->stream));
}

void gr_sim_read(gr_worker *w, const gr_pkt *p)
{
    gr_sim *s = w->g->sim;
    if (!s || p->writer == (int32_t)w->id) return;
    w->sim_remote_packets++;
    charge_lines(s, w, (GR_PKT_HDR + bytes_read(p) + 63) / 64);
}

void gr_sim_resume(gr_worker *w, gr_inst *inst, int32_t was)
{
    gr_sim *s = w->g->sim;
    if (!s || !was || was == inst->ran_on || !inst->state_bytes) return;
    w->sim_state_moves++;
    if (inst->stage->sim_declares_touches) inst->sim_remote_bytes = inst->state_bytes;
    else charge_lines(s, w, (inst->state_bytes + 63) / 64);
}

/* The touched bytes are taken as ones not touched since the move (appends are); a
 * stage that touches its state again pays at most for all of it, as before. */
void gr_sim_touched(gr_worker *w, gr_inst *inst, size_t bytes)
{
    gr_sim *s = w->g->sim;
    inst->stage->sim_declares_touches = true;
    const size_t n = bytes < inst->sim_remote_bytes ? bytes : inst->sim_remote_bytes;
    if (!s || !n) return;
    inst->sim_remote_bytes -= n;
    charge_lines(s, w, (n + 63) / 64);
}

void gr_sim_take(gr_worker *w, gr_sim_line *l)
{
    gr_sim *s = w->g->sim;
    if (!s || l->last == (int32_t)w->id + 1) return;
    if (l->last == 0) {                   /* its first taker: a cold miss on any machine */
        l->last = (int32_t)w->id + 1;
        return;
    }
    uint64_t now = gr_worker_now(w);
    uint64_t wait = now >= l->taken_at && now < l->free_at ? l->free_at - now : 0;
    l->taken_at = now + wait;
    l->free_at = l->taken_at + s->line;
    l->last = (int32_t)w->id + 1;
    w->sim_line_takes++;
    w->sim_line_wait_ticks += wait;
    charge(w, wait + s->line);
}

void gr_sim_lock_take(gr_worker *w, gr_sim_lock *l)
{
    gr_sim *s = w->g->sim;
    if (!s) return;
    bool other = l->last != 0 && l->last != (int32_t)w->id + 1;
    uint64_t now = gr_worker_now(w);
    l->last = (int32_t)w->id + 1;
    if (now < l->free_at) {               /* held: queue behind the holder, then be woken */
        uint64_t wait = l->free_at - now + s->handoff;
        w->sim_lock_handoffs++;
        w->sim_lock_wait_ticks += wait;
        charge(w, wait);
    } else if (other) {
        charge(w, s->line);
    }
    l->free_at = gr_worker_now(w);        /* held from here until gr_sim_lock_release */
}

void gr_sim_lock_release(gr_worker *w, gr_sim_lock *l)
{
    if (!w->g->sim) return;
    uint64_t now = gr_worker_now(w);
    if (now > l->free_at) l->free_at = now;
}

/* The running worker's virtual now: when wake-ups it causes happen. Its step so far is
 * charged as step_end will charge it, the thread's CPU time when that is less than the
 * ticks: a worker woken at the tick-based time of a step the OS interrupted would start
 * that interruption later than it should (on a loaded machine Task-Stealing's woken
 * workers came after all the work was done, and test_simulate saw workers with no
 * task). */
static uint64_t now_of_running(gr_sim *s)
{
    int r = atomic_load_explicit(&s->running, memory_order_relaxed);
    if (r < 0) return s->end;
    const gr_worker *w = &s->g->workers[r];
    const vworker *v = &s->v[r];
    uint64_t t = gr_ticks(), now = t + w->sim_offset;
    double cpu = (double)(thread_cpu_ns() - v->step_cpu) * gr_ticks_per_ns();
    if (cpu >= (double)(t - v->step_ticks)) return now;
    return v->step_ticks + w->sim_offset + (uint64_t)cpu;
}

/* Wakes the idle workers that sleep (sleepers_only), or every idle one. */
static void wake_idle(gr_sim *s, bool sleepers_only)
{
    uint64_t t = now_of_running(s);
    for (int w = s->idle_head, next; w >= 0; w = next) {
        next = s->v[w].next_idle;
        if (!sleepers_only || s->v[w].asleep) wake(s, w, t);
    }
}

void gr_sim_push_wake(gr_graph *g)
{
    gr_sim *s = g->sim;
    if (driving != s || s->wake_sent) return;
    s->wake_sent = true;
    wake_idle(s, true);
}

void gr_sim_wake_all(gr_graph *g)
{
    gr_sim *s = g->sim;
    if (driving == s) wake_idle(s, false);
}

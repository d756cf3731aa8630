/* simulate.h — the virtual-time mode of the runtime (gr_launch_opts.simulate, simulate.c):
 * P virtual workers multiplexed on one OS thread, each a fiber running the policy's own
 * loop with its own deques, pools and credits, the thread always advancing the one whose
 * virtual clock is smallest. A worker's clock advances by the cycles the real code took
 * while it ran, plus the cost model's charges for what one thread does not pay (a steal's
 * cache lines, a wake-up); docs/many-cores.md says how well that predicts real runs. */
#ifndef GRAMPS_SIMULATE_H
#define GRAMPS_SIMULATE_H

#include "gramps/fiber.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct gr_graph gr_graph;
typedef struct gr_worker gr_worker;
typedef struct gr_stage_rt gr_stage_rt;
typedef struct gr_sim gr_sim;
typedef struct gr_pkt gr_pkt;
typedef struct gr_inst gr_inst;

/* A line several workers write in turn (a subqueue's lock, a queue's shared pool count):
 * in a simulated run a worker that takes it from another waits until the last taker's
 * hand-off ends, then pays its transfer (gr_sim_take). Zero: nobody took it yet. */
typedef struct gr_sim_line {
    uint64_t taken_at, free_at;   /* virtual ticks: the last hand-off's start and end */
    int32_t last;                 /* the last taker's worker id + 1; 0: none */
} gr_sim_line;

/* A lock a worker holds for a critical section (Breadth-First's turn barrier): in a
 * simulated run a worker that asks for it while another holds it waits until that
 * holder lets go (its critical section as measured) and then pays a contended hand-off
 * (handoff_ns: the waiter sleeps in the kernel and the release wakes it); one that finds
 * it free pays line_ns when another worker held it last. Its takes come at safe points
 * (gr_sim_lock_take's caller makes one), so in virtual-time order: the lock serves them
 * first come, first served, and workers asking at once (a barrier's broadcast wakes them
 * together) form a convoy, the k-th waiting for the k - 1 before it. Zero: unused. */
typedef struct gr_sim_lock {
    uint64_t free_at;             /* virtual ticks: when the last holder released it */
    int32_t last;                 /* the last holder's worker id + 1; 0: none */
} gr_sim_lock;

/* The cost model's constants in ns (GRAMPS_SIM_COST overrides them, see simulate.c). */
typedef struct gr_sim_costs {
    double line_ns;        /* one cache line moved from another core */
    double steal_lines;    /* lines a steal moves besides its packet: ready word, deque, slot */
    double inst_lines;     /* lines a stolen Thread instance moves (its context, top of stack) */
    double handoff_ns;     /* a contended mutex passed to a thread sleeping in its lock */
    double stream_ns;      /* each further line of a packet read from another core's cache
                              (the first costs line_ns: the misses overlap) */
    double spin_ns;        /* how long an idle worker's GR_IDLE_SPINS searches take */
    double wake_ns;        /* a sleeping worker's wake-up: broadcast to running */
    double poll_ns;        /* a sleeping worker's timed wait (tasks.c's 1 ms) */
} gr_sim_costs;

/* Launch: the simulation's state, after the workers exist. False: out of memory. */
bool gr_sim_create(gr_graph *g);
void gr_sim_free(gr_graph *g);
/* The one OS thread of a simulated run (a job on a parked thread, like a worker). */
void *gr_sim_main(void *graph);
/* The virtual time the run ended at (the latest worker's clock), after gr_sim_main. */
uint64_t gr_sim_end(const gr_graph *g);
/* The index of the worker the simulation runs now, or -1 (the watchdog's view). */
int gr_sim_running(const gr_graph *g);
/* The costs in effect (defaults, or GRAMPS_SIM_COST's). */
gr_sim_costs gr_sim_costs_in_effect(void);

/* Worker side. A safe point (no lock held, `here` the fiber running): gives the thread
 * to the virtual worker with the smallest clock when it is not w. */
void gr_sim_point(gr_worker *w, gr_fiber *here);
/* An idle worker waits (on its loop's fiber) until a push or wake-up reaches it, or
 * until its next search (spinning) or the end of its timed wait (asleep). */
void gr_sim_idle(gr_worker *w, bool asleep);
/* Stage st's code did `units` of work (a Shader task: 1; a Thread activation: its
 * packets in and out), the measure its calibrated cost is per (simulate.c), unless the
 * stage declares its own units (gr_sim_declared_work, from gr_work_units). */
void gr_sim_work(gr_stage_rt *st, uint64_t units);
void gr_sim_declared_work(gr_stage_rt *st, uint64_t units);
/* A steal moved the task from another core (its packet's lines: gr_sim_read). */
void gr_sim_steal(gr_worker *w, void *task);
/* w's stage code reads packet p: when another worker committed it, its lines come from
 * that worker's cache. Nothing when w wrote it itself. */
void gr_sim_read(gr_worker *w, const gr_pkt *p);
/* Thread instance `inst` starts an activation on w (inst->ran_on already says so; `was`
 * is its previous value): when its last ran on another worker, its gr_state_bytes come
 * over as a packet's lines would, all at once, or, for a stage that says what it touches
 * (gr_state_touched), as it touches them. */
void gr_sim_resume(gr_worker *w, gr_inst *inst, int32_t was);
/* inst, running on w, touched `bytes` of its state (gr_state_touched): what of it is
 * still on the worker it moved from comes over now. */
void gr_sim_touched(gr_worker *w, gr_inst *inst, size_t bytes);
/* w takes shared line l (before the lock or atomic it stands for). */
void gr_sim_take(gr_worker *w, gr_sim_line *l);
/* w takes lock l (at a safe point, before the real lock call) and releases it (after
 * the real unlock): waits for the holder and pays the hand-off, as gr_sim_lock says.
 * Nothing in a real run. */
void gr_sim_lock_take(gr_worker *w, gr_sim_lock *l);
void gr_sim_lock_release(gr_worker *w, gr_sim_lock *l);
/* A task was pushed: the sleeping workers wake unless a push woke them since the last
 * one went to sleep (tasks.c's gr_wake_for_task); spinning ones find it themselves. */
void gr_sim_push_wake(gr_graph *g);
/* Every waiting worker wakes (the end of the run, an abort, a barrier). Does nothing
 * off the simulation's thread (the watchdog's wake-ups: waiting workers time out). */
void gr_sim_wake_all(gr_graph *g);

#endif

/* scheduler.h — the scheduling policy as a small interface, so that the four policies
 * of Sanchez et al. 2011 (§III GRAMPS, §IV Task-Stealing, Breadth-First, Static) and
 * DANBI's two (QES, PSS) run in
 * the same runtime, on the same graphs, queues, packets and Thread-stage fibers, and a
 * new one is one new file (plus its line in scheduler.c's table).
 *
 * What a policy decides: where a new task goes (which deque, which worker), which task a
 * worker runs next, when a Thread stage is preempted, and whether queue capacities are
 * enforced. What it does not: packets, queues, termination detection, statistics (the
 * mechanics in tasks.c, queue.c, term.c and stats.c serve every policy alike). */
#ifndef GRAMPS_SCHEDULER_H
#define GRAMPS_SCHEDULER_H

#include "gramps/gramps.h"

#include <stdbool.h>

typedef struct gr_worker gr_worker;
typedef struct gr_stage_rt gr_stage_rt;
typedef struct gr_inst gr_inst;

/* When a running Thread stage gives its worker back (besides blocking and exiting). */
typedef enum gr_preempt_policy {
    GR_PREEMPT_WATERMARK,      /* at reserve/commit once higher-priority local work passes
                                  the low watermark (GRAMPS' help-first policy) */
    GR_PREEMPT_EACH_OUTPUT,    /* as soon as it commits an output packet (Cilk's work-first) */
    GR_PREEMPT_NEVER,          /* runs until it blocks or exits (one stage at a time) */
} gr_preempt_policy;

typedef struct gr_scheduler {
    const char *name;
    /* false: capacities are not enforced; charges never fail and never wait, and queues
     * (rings included) grow as needed. Footprint statistics are kept all the same. */
    bool backpressure;
    gr_preempt_policy preempt;
    /* true: a Thread instance that declared private state (gr_state_bytes) and is woken
     * on another worker than the one it last ran on goes back to that worker's inbox
     * (inbox.h), so its state stays in one core's cache; the loop drains its inbox and
     * may take from a busy worker's. */
    bool state_affinity;
    /* After the workers exist, before the first task is pushed: sets every stage's
     * `deque` (the index into each worker's deques its tasks use) and the policy's own
     * state (g->sched_state). Fails with an error recorded in the graph. */
    gr_status (*init)(gr_graph *g);
    /* Where a new task goes. NULL: the pushing worker's deque w->dq[s->deque]. */
    void (*push)(gr_worker *w, gr_stage_rt *s, void *task);
    /* A Thread instance its worker preempted goes back. NULL: gr_push_task. */
    void (*requeue)(gr_worker *w, gr_inst *inst);
    /* One worker's loop: runs tasks until the run ends (gr_running false) or aborts. */
    void (*loop)(gr_worker *w);
    /* After gr_wait joined the workers; NULL when there is nothing to free. */
    void (*teardown)(gr_graph *g);
} gr_scheduler;

/* The policies, one file each. */
extern const gr_scheduler gr_sched_gramps;           /* sched.c */
extern const gr_scheduler gr_sched_task_stealing;    /* sched_task_stealing.c */
extern const gr_scheduler gr_sched_breadth_first;    /* sched_breadth_first.c */
extern const gr_scheduler gr_sched_static;           /* sched_static.c */
extern const gr_scheduler gr_sched_qes;              /* sched_danbi.c */
extern const gr_scheduler gr_sched_pss;              /* sched_danbi.c */

/* The policy of that name, or NULL. */
const gr_scheduler *gr_scheduler_by_name(const char *name);

#endif

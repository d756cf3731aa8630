/* inbox.h — a worker's inbox: the tasks other workers hand it (internal).
 *
 * A Chase-Lev deque takes pushes from its owner only, so a task meant for another
 * worker goes into that worker's inbox, a spin-locked array, and the owner moves it into
 * its own deques at its next scheduling step (gr_inbox_drain). The Static policy sends
 * every task to its stage's worker (sched_static.c); the policies that set
 * gr_scheduler.state_affinity (GRAMPS, sched.c; QES and PSS, sched_danbi.c) send a woken
 * Thread instance that keeps private state back to the worker that holds the state
 * (gr_send_home), where an idle worker may take it instead while its home is busy
 * (gr_inbox_steal).
 *
 * Invariant: a task in an inbox is pending work (it was counted when made runnable), so
 * termination waits for it; whoever takes it runs it once. */
#ifndef GRAMPS_INBOX_H
#define GRAMPS_INBOX_H

#include "gramps/simulate.h"
#include "gramps/spin.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct gr_worker gr_worker;
typedef struct gr_inst gr_inst;
typedef struct gr_stage_rt gr_stage_rt;

typedef struct gr_inbox {
    _Alignas(64) gr_spin lock;
    void **tasks;
    size_t len, cap;
    _Atomic(size_t) waiting;          /* len, read without the lock to skip empty inboxes */
    gr_sim_line sim_line;             /* simulated runs: the lock's line (simulate.h) */
} gr_inbox;

void gr_inbox_init(gr_inbox *b);
void gr_inbox_free(gr_inbox *b);
/* w puts a task into b; false when out of memory (the error is recorded, the run aborted). */
bool gr_inbox_put(gr_worker *w, gr_inbox *b, void *task);
/* Moves what other workers put into w's own inbox into w's deques, in the order it came. */
void gr_inbox_drain(gr_worker *w);
/* Takes the newest task out of b for w (a thief), or NULL when b is empty. */
void *gr_inbox_take(gr_worker *w, gr_inbox *b);
/* When the policy keeps state-holding instances home (gr_scheduler.state_affinity) and
 * inst declared state (gr_state_bytes) that another worker holds: inst goes into that
 * worker's inbox and true; otherwise false, and the caller pushes it as any task. */
bool gr_send_home(gr_worker *w, gr_inst *inst);
/* The first time inst, a copy of a replicated stage (graph files' `replicate`), declares
 * state in a run (gr_state_bytes), w running it: its home becomes the worker with the
 * fewest such homes so far, w on a tie. Woken wherever, it goes there (gr_send_home)
 * until an activation runs elsewhere (a thief took it), when its home is again the
 * worker its state is on. Without it the first worker to run a stateful instance keeps
 * it, and two of the raster graph's 16 Bin copies often started on one worker, which
 * then ran both groups' binning while another ran none. Only copies: the copies of one
 * stage divide one kind of work, which spreads well; spreading unrelated light stages
 * made chains of them hand every packet to another worker (test_property's random
 * graphs, every Thread stage stateful, ran 1.6x longer on real threads). */
void gr_choose_home(gr_worker *w, gr_inst *inst);
/* The thief's side, for the policies that set state_affinity (sched.c, sched_danbi.c).
 * gr_leave_home: whether a thief leaves stage s's tasks to their worker for now, that is
 * while it is patient (has searched in vain for less than a whole spin phase,
 * GR_IDLE_SPINS) and an instance of s declared state: a busy owner is likely to come to
 * it sooner than its state would take to move. gr_inbox_steal: a woken instance an inbox
 * holds for a busy worker, nearest victim first, or NULL; an idle victim is left its
 * own (it was woken for it). */
bool gr_leave_home(const gr_stage_rt *s, bool patient);
void *gr_inbox_steal(gr_worker *w);

#endif

/* internal.h — the runtime's private data structures, shared by the gramps/ sources.
 *
 * Data flow: gr_graph (built by graph.c, checked by validate.c) is started by launch.c,
 * which creates one gr_worker per pthread running sched.c's loop. Work is tasks in
 * per-stage Chase-Lev deques: a Shader task is the input packet itself (gr_pkt*), a
 * Thread task is a runnable instance (gr_inst*, tagged with bit 0). Queues that feed
 * Thread stages are physical rings (queue.c); queues that feed Shaders exist only as
 * tasks plus a depth counter. term.c detects the end of every strongly connected
 * component of the stage graph with counters, without locks.
 *
 * Accounting invariant (term.c relies on it): a component's `pending` counts
 *   - each unfinished producer component outside it that feeds it,
 *   - each packet charged to one of its Shader-fed input queues (a task: queued or
 *     running, or a pre-reserved output not yet committed),
 *   - each of its Thread instances that is not blocked on input. Packets in queues that
 *     feed Thread stages are not counted: while the consumer is blocked they are inert
 *     (it waits for more than is there), and whoever wakes it counts it again,
 *   - each partially coalesced push packet its Shaders started and no worker flushed
 *     yet (so a producer is not finished while its elements sit in coalescers).
 * Every increment happens before the decrement it might otherwise race with, so pending
 * reaches zero only when the component can receive no more work. */
#ifndef GRAMPS_INTERNAL_H
#define GRAMPS_INTERNAL_H

#include "gramps/bufpool.h"
#include "gramps/clock.h"
#include "gramps/dq.h"
#include "gramps/fiber.h"
#include "gramps/inbox.h"
#include "gramps/gramps.h"
#include "gramps/keymap.h"
#include "gramps/scheduler.h"
#include "gramps/simulate.h"
#include "gramps/spin.h"
#include "gramps/thread_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define GR_NAME_MAX 64
/* One Thread-stage intrinsic call in this many reads the clock: a read costs 10-30 ns in
 * VMs, more than a non-blocking reserve or commit itself. */
#define GR_QUEUE_SAMPLE 16
#define GR_ERROR_MAX 8192
#define GR_PKT_HDR 64                 /* runtime header in front of every packet's data */
#define GR_IDLE_SPINS 64              /* an idle worker's searches before it sleeps (tasks.c) */

typedef struct gr_worker gr_worker;
typedef struct gr_stage_rt gr_stage_rt;
typedef struct gr_queue_rt gr_queue_rt;
typedef struct gr_subq gr_subq;
typedef struct gr_inst gr_inst;
typedef struct gr_comp gr_comp;

/* Where the last Shader of an ordered chain delivers its packet: a slot reserved in
 * the chain's final (physical) subqueue when the leading Thread stage committed. */
typedef struct gr_order_ref {
    gr_subq *sub;
    uint64_t slot;                    /* absolute ring position */
} gr_order_ref;

typedef struct gr_pkt {
    struct gr_pkt *next;              /* free lists, partial-push lists */
    gr_queue_rt *queue;               /* the queue it is charged to */
    gr_subq *sub;                     /* physical destination, when known */
    uint64_t key;
    gr_order_ref order;               /* ordered chains: final slot (order.sub != NULL) */
    gr_bufpool *pool;
    /* `key` was given (gr_reserve_out_key, gr_output_key, a push into a queue set) or
     * inherited from a packet that had one: a Shader task may then output into a queue
     * set without naming a key (see gr_output in gramps.h). */
    bool keyed;
    /* Input of a ticket-ordered Shader: `order` is the ticket (its slot in the output
     * subqueue), not reserved yet; the task reserves it when it is taken to run. */
    bool ticketed;
    /* The worker that committed it (gr_enqueue): its lines are in that worker's cache.
     * Simulated runs charge a consumer on another worker for them (gr_sim_read). */
    int32_t writer;
} gr_pkt;
_Static_assert(sizeof(gr_pkt) <= GR_PKT_HDR, "packet header too large");

/* Zeroed memory for structures with cache-line-aligned members (calloc only promises
 * 16 bytes); free() releases it. */
static inline void *gr_calloc_lines(size_t n, size_t size)
{
    size_t bytes = (n * size + 63) / 64 * 64;
    void *p = aligned_alloc(64, bytes ? bytes : 64);
    if (p) memset(p, 0, bytes);
    return p;
}

static inline void *gr_pkt_data(gr_pkt *p) { return (char *)p + GR_PKT_HDR; }
static inline gr_pkt *gr_pkt_of(void *data) { return (gr_pkt *)((char *)data - GR_PKT_HDR); }

/* Slot states of a physical subqueue ring. */
enum { GR_SLOT_READY = 0, GR_SLOT_PENDING = 1, GR_SLOT_SKIP = 2 };

/* A physical subqueue: a ring of packet pointers, FIFO, protected by its spin lock.
 * Positions are absolute (head..tail); slots between are READY, or PENDING/SKIP for
 * ordered chains whose Shaders have not delivered yet / produced nothing. */
struct gr_subq {
    gr_spin lock;
    gr_sim_line sim_lock;             /* simulated runs: the lock's line (simulate.h) */
    gr_queue_rt *queue;
    uint32_t index;
    uint64_t key;
    gr_pkt **ring;
    uint8_t *state;
    uint64_t ring_size;               /* power of two, grows for backward edges */
    uint64_t head, tail;              /* consumer takes at head; producers append at tail */
    uint64_t ready_end;               /* every slot in [head, ready_end) is READY or SKIP */
    uint64_t nskip;                   /* SKIP slots in [head, ready_end) */
    uint32_t taken;                   /* READY packets from the head reserved by the consumer */
    uint32_t charged;                 /* held in this subqueue (incl. pending slots) */
    uint32_t peak;
    /* Ring position of the next ticket a ticket-ordered Shader's input takes (queue.c);
     * its slots are the only ones appended here, so ticket k's slot is position k. */
    uint64_t next_ticket;
    bool closed;                      /* no producer will ever add more */
    bool consumer_done;               /* its consumer returned: nothing reads it (queue.c) */
    gr_inst *in_waiter;               /* consumer blocked on input */
    uint32_t in_need;
    gr_inst *out_waiters;             /* producers blocked on a full subqueue (list) */
    gr_pkt *ticket_waiters;           /* ticket-ordered tasks whose slots did not fit (list) */
    _Atomic(gr_inst *) consumer;      /* the instanced consumer bound to it */
};

struct gr_queue_rt {
    int id;
    char name[GR_NAME_MAX];
    gr_queue_desc d;                  /* name pointer replaced by `name` */
    size_t packet_bytes;
    gr_bufpool *pool;
    int consumer;                     /* stage id, -1 until bound */
    gr_comp *cons_comp;               /* the consumer's component (set at launch) */
    gr_bind_mode consumer_mode;
    /* Producer stage ids, one per output binding (a stage binding it twice is here
     * twice): grown at bind time, no fixed limit (the raster graph has one per group). */
    int *producers;
    int nproducers, cap_producers;
    bool physical;                    /* consumer is a Thread/Fixed stage */
    bool is_set;
    bool backward;                    /* some producer's binding is backward (may exceed capacity) */
    bool push_fed;                    /* some producer pushes into it */
    int chain_end;                    /* ordered Shader chain: the final physical queue id */
    int ticket_end;                   /* input of a ticket-ordered Shader: its ordered output's id */
    uint32_t nsubs;                   /* static count, or keys created so far (dynamic) */
    gr_subq **subs;                   /* static: nsubs; dynamic: max_keys slots */
    gr_keymap keys;
    struct gr_gate *gates;            /* a set a Shader consumes: one per subqueue (gate.c) */
    bool internal_producer;           /* a producer sits in the consumer's component */
    /* A queue with a backward producer: the other queues of its consumer's cycle, whose
     * packets may come back into it (validate.c; entries count them, capacity.c). */
    int *cycle_queues; int ncycle_queues;
    double depth_sum;                 /* sum of held x ticks over samples (stats.c) */
    double last_sampled;              /* previous sample (journal on changes) */
    int64_t space;                    /* capacity of all its subqueues (capacity.c) */
    _Atomic(int64_t) credit_keep;     /* credits a worker keeps for this queue (capacity.c) */
    int64_t peak;                     /* most packets held in a footprint sample */
    /* Space not held nor in any worker's credits (capacity.c): written when a worker's
     * credits run out or overflow, so on a line of its own, away from the fields every
     * packet reads. */
    _Alignas(64) _Atomic(int64_t) free;
    gr_sim_line sim_free;             /* simulated runs: `free`'s line (simulate.h) */
    _Atomic(int64_t) reserved_peak;   /* most space taken from `free` at once */
    /* Moves of space between `free` and a worker's credits: begun and not ended, and
     * ended (capacity.c's move_begin/move_end; gr_queue_held retries around them). */
    _Atomic(uint32_t) moving, moves;
    /* Ordered chain end: reserved slots holding no packet yet (PENDING) or ever (SKIP,
     * until removed). Charged, so they bound the chain, but the packet they stand for
     * is counted in the chain's earlier queue (or does not exist): the footprint leaves
     * them out (stats.c). Changed under the subqueue's lock; its own line, as every
     * chain packet changes it twice. */
    _Alignas(64) _Atomic(int64_t) empty_slots;
    /* Read on every packet, written rarely. */
    _Alignas(64) _Atomic(int) nwaiters;
    _Atomic(int) open_producers;      /* external producer components still live (+1 internal) */
    int producers_at_launch;          /* open_producers when a run starts (validate.c) */
    _Atomic(bool) closed;
    _Atomic(int) full_subqueues;      /* subqueues holding capacity or more (gr_subq_charge) */
    /* Its (not instanced) consumer returned: a packet arriving now is lost (queue.c). */
    _Atomic(bool) consumer_done;
    gr_spin wait_lock;                /* Shader-fed queues: out_waiters below; sets: any_waiter */
    gr_inst *out_waiters;
    /* A set's consumer blocked in gr_reserve_any, and the packets it needs (any_subqueue.c):
     * written under wait_lock, read without it by producers to skip the lock. */
    _Atomic(gr_inst *) any_waiter;
    uint32_t any_need;
    char pad_end[64];                 /* keeps the next allocation off these lines */
};

/* A component: a strongly connected set of stages (one stage unless there is a cycle). */
struct gr_comp {
    int id;
    _Atomic(bool) finished;
    int *stages; int nstages;
    int *consumers; int nconsumers;   /* downstream components (distinct) */
    int *out_queues; int nout_queues; /* queues produced here, consumed elsewhere */
    int *in_queues; int nin_queues;   /* queues consumed here */
    /* changed by every packet into the component: its own line (see gr_queue_rt.held) */
    _Alignas(64) _Atomic(int64_t) pending;
    char pad_end[56];
};

typedef enum gr_inst_state {
    GR_INST_RUNNABLE,                 /* in a deque or about to be */
    GR_INST_RUNNING,
    GR_INST_BLOCKED_IN,
    GR_INST_BLOCKED_OUT,
    GR_INST_DONE,
} gr_inst_state;

/* What a Thread instance asks its worker to do once it has switched out. */
typedef enum gr_yield_action {
    GR_YIELD_PREEMPT,
    GR_YIELD_BLOCK_IN,
    GR_YIELD_BLOCK_OUT,
    GR_YIELD_EXIT,
    GR_YIELD_ABORT,
} gr_yield_action;

/* The view a running stage has of the runtime: per instance for Thread stages, per
 * worker (reused for every task) for Shaders. */
struct gr_ctx {
    gr_graph *g;
    gr_worker *w;                     /* reloaded after every switch: fibers migrate */
    gr_stage_rt *stage;
    gr_inst *inst;                    /* Thread stages */
    uint64_t key;
    /* Shader task state, one entry per output binding: a worker's arrays hold as many
     * as the Shader stage with the most outputs has (one block, allocated at launch,
     * freed through `out`); a Thread instance has none (it uses its windows). */
    gr_pkt *in;
    gr_pkt **out;
    uint64_t *out_key;
    bool *out_keyed;
    bool *discarded;
    bool *push_unit;                  /* space for the first packet a push starts is reserved */
    uint32_t task;                    /* numbers the worker's Shader tasks */
    uint32_t set_packets;             /* the most packets the task started in one subqueue
                                       * of a physical queue set */
    /* Thread stages: start of the intrinsic call being timed, 0 when this one is not */
    uint64_t q_t0;
};

/* A Thread-stage window bookkeeping per binding (multi-packet windows are staged). */
typedef struct gr_twin {
    gr_subq *sub;
    uint32_t packets;                 /* reserved */
    gr_pkt **pkts;                    /* reserved packets (outputs) */
    uint32_t pkts_cap;
    void *staging;                    /* contiguous copy for multi-packet windows */
    size_t staging_bytes;
    uint64_t key;
} gr_twin;

struct gr_inst {
    gr_stage_rt *stage;
    uint32_t number;
    gr_subq *bound;                   /* instanced: its subqueue */
    gr_fiber fiber;
    gr_ctx ctx;
    _Atomic(int) state;
    gr_yield_action action;           /* set before switching out */
    gr_subq *block_sub;               /* BLOCK_IN / BLOCK_OUT target */
    gr_queue_rt *block_queue;         /* BLOCK_OUT on a Shader-fed queue */
    uint32_t block_need;
    bool grant_short;                 /* quiescent cycle: take what is there (GR_SHORT) */
    gr_inst *next_waiter;
    gr_inst *next_all;                /* stage's instance list */
    uint32_t produced;                /* output packets since last dispatch */
    size_t state_bytes;               /* gr_state_bytes: private data it keeps */
    size_t sim_remote_bytes;          /* simulated: of it, still on the worker it moved from */
    int32_t ran_on;                   /* the worker of its last activation + 1; 0: none */
    int32_t home;                     /* where gr_choose_home put its state + 1; 0: ran_on */
    bool home_chosen;                 /* gr_choose_home ran (once per run) */
    gr_twin *in_win;                  /* stage->nin windows, in `win` */
    gr_twin *out_win;                 /* stage->nout windows, in `win` after in_win */
    gr_twin win[];                    /* allocated with the instance */
};

typedef struct gr_binding {
    gr_bind_mode mode;
    int queue;
    /* Output into a stage of lower or equal priority (a cycle's way back): exempt from
     * backpressure, so a cycle cannot deadlock on its own full queues. Per binding: the
     * queue's other producers (e.g. the cycle's entry) stay bounded by its capacity. */
    bool backward;
    /* A Shader's forward output into a queue with a backward producer, from outside the
     * cycle (its entry): it also counts what the cycle's other queues hold (capacity.c). */
    bool entry;
    /* A Shader's backward output or in-place forward into a plain queue: it waits for room
     * like a forward one unless the cycle is jammed (gr_cycle_jammed). */
    bool back_waits;
} gr_binding;

struct gr_stage_rt {
    int id;
    char name[GR_NAME_MAX];
    char origin[GR_ORIGIN_MAX];       /* gr_stage_desc.origin, for crash reports */
    char placement[GR_ORIGIN_MAX];    /* gr_stage_desc.placement ("" when none) */
    char device[GR_DEVICE_MAX];       /* gr_stage_desc.device, "cpu" when none */
    gr_stage_desc d;
    void *config;
    /* Bindings in gr_bind order (the slot numbers stage code uses): grown at bind
     * time, no fixed limit. */
    gr_binding *in;   int nin, cap_in;
    gr_binding *out;  int nout, cap_out;
    int *buffers;     int nbuffers, cap_buffers;
    /* The most packets one batched task started in one subqueue of the physical queue
     * sets it feeds: how far a batch expects each task to fill them (shader_stage.c,
     * set_room). */
    _Atomic(uint32_t) set_packets_most;
    int priority;                     /* higher runs first */
    int rank;                         /* priority order: 0 = lowest priority */
    int deque;                        /* index of its tasks' deque in each worker (policy's) */
    uint32_t low_watermark;           /* d.low_watermark, else the run's (resolved at launch) */
    /* Simulated runs (simulate.c's gr_sim_app): application ticks and units of work (a
     * Shader task; a Thread activation's packets in and out; or what the stage declares,
     * gr_work_units) so far, the calibrated cost of a unit
     * (gr_launch_opts.sim_calibration; 0: charged as measured), and a unit's ticks as
     * measured in the graph's previous run (0 on a first launch; simulate.c). */
    uint64_t sim_ticks, sim_units;
    double sim_unit_ticks, sim_prev_unit_ticks;
    bool sim_declares_units;          /* its code called gr_work_units: packets do not count */
    bool sim_declares_touches;        /* its code called gr_state_touched (simulate.c) */
    int comp;
    bool fifo;                        /* oldest task first: an ordered chain's or asked for */
    bool runnable_at_launch;
    _Atomic(bool) keeps_state;        /* an instance declared gr_state_bytes (inbox.h) */
    gr_spin inst_lock;
    gr_inst *instances;
    gr_inst *last_inst;               /* the first made, the end of `instances` */
    gr_inst *spare;                   /* the runs before's, done, for gr_inst_create to reuse
                                         (under inst_lock): a relaunch hands them over whole
                                         instead of freeing each on its thread */
    /* gr_stage_desc.recirculate: the result waiting for another to join it (reduction.c),
     * under held_lock; with reduce_per_key, one per key, listed through `next`. Charged to
     * the input queue's space, not to its component's pending work, so that the
     * component can finish; finishing forwards it. */
    gr_spin held_lock;
    gr_pkt *held;
    _Atomic(uint32_t) ninstances;
    _Atomic(uint64_t) preemptions;
    /* gr_device_work_add's sums (accelerator stages only) */
    _Atomic(uint64_t) dev_launches, dev_kernel_ns, dev_bytes_to, dev_bytes_from;
    _Atomic(uint32_t) dev_queue_peak, dev_queue_capacity;   /* maxima */
    _Atomic(uint64_t) dev_slot_relaunches;
};

typedef struct gr_buffer_rt {
    char name[GR_NAME_MAX];
    void *data;
    size_t bytes;
    bool writable;
    size_t map_bytes;                 /* read-only buffers: whole pages, mmap'd (graph.c) */
} gr_buffer_rt;

/* A sampled queue depth for the timeline (journal on). */
typedef struct gr_depth_ev {
    uint64_t t;
    int32_t queue;
    int32_t packets;
} gr_depth_ev;

/* Per-worker push coalescer entry: one partially filled packet per (queue, subqueue). */
typedef struct gr_partial {
    gr_pkt *pkt;
    gr_comp *producer;                /* held pending until flushed (see shader_stage.c) */
    struct gr_partial *next_active;
    bool active;
    uint32_t task, started;           /* packets started here by task number `task` */
} gr_partial;

/* A batched task's output reservation (gr_ctx's out and push_unit for one binding), held
 * from its batch's take until the task runs (shader_stage.c, take_batch). */
typedef struct gr_held_output {
    gr_pkt *out;
    bool push_unit;
} gr_held_output;

typedef enum gr_time_cat { GR_T_APP, GR_T_QUEUE, GR_T_SCHED, GR_T_IDLE, GR_T_NCAT } gr_time_cat;

typedef struct gr_journal_ev {
    uint64_t t0, t1;
    int32_t stage;
    uint32_t instance;
    uint32_t worker;
} gr_journal_ev;

/* Calls of some operation, the 1 in GR_QUEUE_SAMPLE that was timed, and their ticks. */
typedef struct gr_sampled { uint64_t calls, timed, ticks; } gr_sampled;

/* Counts a call; true when this one is to be timed. */
static inline bool gr_sampled_start(gr_sampled *s) { return s->calls++ % GR_QUEUE_SAMPLE == 0; }

static inline void gr_sampled_add(gr_sampled *s, uint64_t ticks)
{
    s->ticks += ticks;
    s->timed++;
}

/* Estimated ticks of all calls, at most `cap` (the time they were part of). */
static inline double gr_sampled_total(const gr_sampled *s, uint64_t cap)
{
    double t = s->timed ? (double)s->ticks * (double)s->calls / (double)s->timed : 0;
    return t < (double)cap ? t : (double)cap;
}

/* Each worker's struct (aligned, so its size is whole lines too) and the arrays it writes
 * per task start on cache lines of their own (launch.c's carve_arrays): workers sharing
 * a line would invalidate each other's copy on every packet. */
struct gr_worker {
    _Alignas(64) unsigned id;
    gr_graph *g;
    gr_thread *thread;                /* NULL until started (thread_pool.h) */
    gr_fiber sched_fiber;             /* the pthread's own context */
    void *arrays;                     /* the block the arrays below live in (launch.c) */
    gr_dq *dq;                        /* one per stage (policies use a subset: scheduler.h) */
    /* A bit per deque that may hold tasks: every push sets it (only the owner pushes),
     * the owner clears it on finding the deque empty, and thieves only take, so a clear
     * bit means an empty deque. The pop scans these words, not every stage's deque, and
     * thieves read them (atomic, on lines of their own) to probe only flagged deques.
     * Only the owner writes them, so it stores without read-modify-write. */
    _Atomic(uint64_t) *ready_ranks;
    int *victims;                     /* other workers, nearest first */
    uint64_t *victim_ready;           /* steal's snapshot of one word of each victim's bits */
    gr_ctx shader_ctx;
    uint32_t batch_pos;               /* 1 + the running task's position in its batch; 0: none */
    gr_held_output *batch_held;       /* [position in the batch][output]: its reservations */
    void *scratch;                    /* sink for outputs of a failed Shader call */
    gr_partial **partials;            /* [queue] -> array indexed by subqueue */
    uint32_t *partials_len;
    gr_partial *active_partials;
    /* Units this worker added to each component's pending count beyond the true
     * count, a bit per component whose surplus may be nonzero, and updates since they
     * were last returned (term.c) */
    int64_t *pending_surplus;
    uint64_t *pending_dirty;
    unsigned pending_ops;
    _Atomic(int64_t) *credit;         /* queue space this worker holds, per queue (capacity.c) */
    /* accounting (owned by this worker; summed after the run) */
    gr_time_cat cat;
    uint64_t t_last;
    uint64_t t[GR_T_NCAT];
    uint64_t *stage_ticks;
    uint64_t *stage_tasks;
    uint64_t *queue_packets;          /* packets this worker enqueued, per queue */
    uint64_t tasks, steals, flushes;
    /* Simulated runs (simulate.c's cost model): packets this worker read that another
     * committed and their lines; shared lines it took over from another worker, and the
     * virtual ticks it waited for their hand-off. */
    uint64_t sim_remote_packets, sim_remote_lines, sim_line_takes, sim_line_wait_ticks;
    uint64_t sim_state_moves;         /* instances resumed here whose state was elsewhere */
    uint64_t sim_lock_handoffs, sim_lock_wait_ticks;   /* contended gr_sim_lock takes, waits */
    /* Queue work timed 1 call in GR_QUEUE_SAMPLE (see gr_sampled): Thread-stage
     * intrinsics (inside application time) and Shader output commits (inside
     * scheduling time); stats.c moves the estimates to queue time. */
    gr_sampled intrinsics, commits;
    _Atomic(uint64_t) progress;       /* tasks begun and Thread-stage runtime calls: the
                                         watchdog's sign of life (written by its worker) */
    _Atomic(int) running;             /* id of the stage whose task runs (watchdog) */
    _Atomic(bool) device_wait;        /* that task waits on an accelerator (gr_device_wait) */
    _Atomic(bool) idle;
    _Atomic(uint32_t) homes;          /* stateful instances gr_choose_home put here */
    int64_t ts_mark;                  /* Task-Stealing: gr_dq_owner_pushed when the running
                                         task began; tasks above it are its children */
    int streak_rank;                  /* GRAMPS: rank of the Shader stage whose tasks this
                                         worker ran last, -1 after anything else */
    uint32_t streak;                  /* how many of them it ran in a row */
    /* The running Thread activation's stage (NULL: none) and when the part of it not yet
     * in stage_ticks began: its start, or in a simulated run the step's (step_end
     * closes each step's part, so that a stage's ticks fall in the steps that ran them). */
    gr_stage_rt *act_stage;
    uint64_t act_t0;
    /* Its start as its journal slice records it: in a simulated run moved with the step
     * that began it (simulate.c journal_step), like the slices themselves. */
    uint64_t act_begin;
    gr_journal_ev *journal;
    size_t journal_len, journal_cap;
    uint64_t rng;
    /* Simulated runs: the worker's virtual clock is gr_ticks() + sim_offset while it runs
     * (simulate.c); 0 in a real run. */
    uint64_t sim_offset;
    gr_inbox inbox;                   /* tasks other workers hand this one (inbox.h) */
};

/* The worker's clock: real ticks, or its virtual clock in a simulated run. */
static inline uint64_t gr_worker_now(const gr_worker *w) { return gr_ticks() + w->sim_offset; }

/* A sign of life for the watchdog (only w's own thread writes w->progress). */
static inline void gr_alive(gr_worker *w)
{
    uint64_t p = atomic_load_explicit(&w->progress, memory_order_relaxed);
    atomic_store_explicit(&w->progress, p + 1, memory_order_relaxed);
}

struct gr_graph {
    char error[GR_ERROR_MAX];
    gr_status status;
    int blame_stage, blame_queue;     /* what the error is about (gr_error_blame); -1: none */
    gr_queue_rt **queues; int nqueues, cap_queues;
    gr_stage_rt **stages; int nstages, cap_stages;
    gr_buffer_rt *buffers; int nbuffers, cap_buffers;
    gr_comp *comps; int ncomps;
    int *by_rank;                     /* stage id by rank */
    gr_launch_opts opts;
    const gr_scheduler *sched;        /* the policy (scheduler.h), chosen at launch */
    void *sched_state;                /* the policy's own, freed by its teardown */
    const char *partition;            /* Static: the assignment's method (gr_stats.partition) */
    bool partition_fell_back;         /* Static: the ILP found none in time */
    int64_t partition_max_load;       /* Static: the heaviest worker's estimated load */
    bool backpressure;                /* sched->backpressure, read per charge */
    gr_preempt_policy preempt;        /* sched->preempt, read per Thread intrinsic */
    bool torture;
    unsigned nworkers;
    gr_worker *workers;
    gr_bufpool *pools; int npools;
    gr_stack_pool stacks;
    bool launched, waited;
    bool started;                     /* gr_launch built every worker, pool and credit
                                         (threads may still have failed to start): what
                                         gr_wait's sampling and statistics read */
    bool synchronous;                 /* GRAMPS_NUM_THREADS=0: worker 0 runs in gr_wait */
    gr_sim *sim;                      /* simulated run (simulate.h), else NULL */
    gr_thread *sim_thread;            /* its one OS thread */
    _Atomic(bool) abort;
    _Atomic(int) comps_left;
    _Atomic(int) sleepers;
    /* Set by the push that woke the sleepers, cleared by each worker that goes to sleep:
     * one broadcast per sleep, not one per push while someone sleeps. */
    _Atomic(bool) wake_sent;
    pthread_mutex_t sleep_lock;
    pthread_cond_t sleep_cond;
    pthread_mutex_t error_lock;
    /* Footprint samples (stats.c), taken by whichever thread finds one due: off the
     * line of abort/comps_left, which workers read on every intrinsic and step. */
    _Alignas(64) _Atomic(uint64_t) next_sample;   /* tick when the next one is due */
    _Atomic(bool) sampling;           /* a thread is taking one */
    uint64_t sample_period, last_sample;
    double sampled_ticks;             /* time the samples cover (the averages' divisor) */
    uint64_t footprint_peak;
    double footprint_sum;             /* sum of footprint bytes x ticks over samples */
    gr_thread *watchdog;              /* NULL until started */
    _Atomic(bool) watchdog_stop;
    uint64_t t_start, t_end;          /* virtual in a simulated run */
    uint64_t host_ticks;              /* what the run took on this machine */
    gr_stats stats;
    bool stats_ready;
    gr_journal_ev *journal_events;    /* all workers' journals, after gr_wait */
    size_t njournal;
    struct gr_depth_ev *depths;       /* queue-depth journal (samples) */
    size_t ndepths, cap_depths;
};

/* A binding that never waits for space: backward (a cycle's way back), or any binding
 * under a policy without backpressure (scheduler.h). */
static inline bool gr_exempt(const gr_graph *g, const gr_binding *b)
{
    return b->backward || !g->backpressure;
}

/* Output i of s is the in-place binding of a recirculating reduction: the task's result
 * goes back to its input (reduction.c), not to that queue, so no space is taken there. */
static inline bool gr_out_recirculates(const gr_stage_rt *s, int i)
{
    return s->d.recirculate && s->out[i].mode == GR_BIND_INPLACE;
}

/* graph.c */
void gr_set_error(gr_graph *g, gr_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* mprotects the read-only buffers PROT_READ (ro) or back to read-write; false, with
 * the graph's error set, when the system refuses. */
bool gr_buffers_protect(gr_graph *g, bool ro);

/* validate.c: checks the graph, derives priorities, components and chains. */
gr_status gr_validate(gr_graph *g, const int *runnable, int nrunnable);

/* launch.c: builds a validated graph's workers, subqueues and first instances and starts
 * the threads (the packet pools, stacks, workers and static subqueues are made on the
 * first run and kept, reset in place by the later ones). gr_workers_free: the workers'
 * memory, at gr_graph_destroy. */
gr_status gr_launch_run(gr_graph *g);
void gr_workers_free(gr_graph *g);
/* relaunch.c: a finished run's state gone (subqueues emptied, instances, counters,
 * statistics), as gr_launch_run expects to find it. gr_queue_free_subqueues: what
 * gr_graph_destroy frees of a queue. */
void gr_run_state_clear(gr_graph *g);
void gr_queue_run_clear(gr_queue_rt *q);
void gr_queue_free_subqueues(gr_queue_rt *q);

/* capacity.c: packets held per queue, backpressure's bound (credits per worker) */
void gr_capacity_init(gr_graph *g);
void gr_charge(gr_worker *w, gr_queue_rt *q, int64_t n);
bool gr_try_charge(gr_worker *w, gr_queue_rt *q, int64_t n, bool backward);
bool gr_try_charge_entry(gr_worker *w, gr_queue_rt *q, int64_t n);
bool gr_capacity_release(gr_worker *w, gr_queue_rt *q, int64_t n);  /* true: producers wait */
void gr_credits_return(gr_worker *w);
int64_t gr_queue_held(const gr_graph *g, const gr_queue_rt *q);
bool gr_queue_full(gr_worker *w, const gr_queue_rt *q);
bool gr_cycle_full(const gr_graph *g, const gr_queue_rt *q);
bool gr_cycle_jammed(gr_worker *w, const gr_stage_rt *s);

/* gate.c: a queue set consumed by a Shader stage, one packet per subqueue in flight */
bool gr_gates_create(gr_queue_rt *q);
void gr_gates_destroy(gr_queue_rt *q);
/* The dense index of a key's subqueue; UINT32_MAX (the run fails, naming the set) for a
 * key past a static set, past max_keys or reserved. */
uint32_t gr_gate_index(gr_worker *w, gr_queue_rt *q, uint64_t key);
void gr_gate_enqueue(gr_worker *w, gr_queue_rt *q, gr_pkt *p);
void gr_gate_task_done(gr_worker *w, gr_queue_rt *q, uint64_t key);

/* queue.c */
gr_subq *gr_subq_get(gr_worker *w, gr_queue_rt *q, uint64_t key, bool by_key);
gr_subq *gr_subq_new(gr_queue_rt *q, uint32_t index, uint64_t key);
void gr_subq_reset(gr_subq *s);
void gr_subq_free(gr_subq *s);
uint64_t gr_subq_consumer_done(gr_subq *s);   /* marks it; returns the packets left */
void gr_report_left(gr_graph *g, const gr_subq *s, uint64_t n, bool late);
void gr_uncharge(gr_worker *w, gr_queue_rt *q, int64_t n);
gr_pkt *gr_pkt_alloc(gr_worker *w, gr_queue_rt *q);
void gr_pkt_free(gr_worker *w, gr_pkt *p);
void gr_release(gr_worker *w, gr_pkt *p);
void gr_uncharge_later(gr_worker *w, gr_queue_rt *q, int64_t n);
void gr_release_later(gr_worker *w, gr_pkt *p);
void gr_enqueue(gr_worker *w, gr_pkt *p);
void gr_deliver_ordered(gr_worker *w, gr_pkt *p, gr_order_ref ref); /* p NULL: skip */
uint64_t gr_subq_avail(const gr_subq *s);
bool gr_subq_need_met(const gr_subq *s, uint32_t need, bool grant_short);
uint64_t gr_subq_reserve_slot(gr_subq *s);
/* tickets.c: ticket-ordered Shader outputs (gr_stage_desc.ticket_order) */
bool gr_ticket_issue(gr_worker *w, gr_queue_rt *q, gr_pkt *p);
bool gr_ticket_reserve(gr_worker *w, gr_pkt *p, gr_queue_rt *q);
/* Producers wait on s: blocked Thread instances or parked ticket-ordered tasks (lock held). */
static inline bool gr_subq_has_waiters(const gr_subq *s) { return s->out_waiters || s->ticket_waiters; }
#define GR_NO_SLOT UINT64_MAX
/* A queue's ring could not grow: the run fails with the queue named (and stops). */
void gr_queue_out_of_memory(gr_graph *g, const gr_queue_rt *q);
void gr_subq_charge(gr_subq *s, int64_t n);
/* w takes s's lock (and, in a simulated run, pays for its line: gr_sim_take). */
void gr_subq_lock(gr_worker *w, gr_subq *s);
void gr_subq_peek(const gr_subq *s, uint32_t n, gr_pkt **out);
uint32_t gr_subq_pop(gr_subq *s, uint32_t n, gr_pkt **out);
void gr_wake_out_waiters(gr_worker *w, gr_queue_rt *q, gr_subq *s);
void gr_close_queue(gr_worker *w, gr_queue_rt *q);

/* close_wake.c: the consumers a close wakes, made runnable heaviest subqueue first */
typedef struct gr_close_wake {
    void *list;
    uint32_t n, cap;
} gr_close_wake;
void gr_close_wake_init(gr_close_wake *cw, uint32_t nsubs);
void gr_close_wake_add(gr_close_wake *cw, gr_worker *w, gr_inst *inst, uint64_t received);
void gr_close_wake_run(gr_close_wake *cw, gr_worker *w);
int gr_grant_waiting(gr_worker *w, gr_queue_rt *q);

/* tasks.c: what every scheduling policy shares (scheduler.h) */
/* The worker's xorshift generator (random victims, DANBI's probabilistic moves). */
static inline uint64_t gr_next_random(gr_worker *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

static inline bool gr_task_is_inst(void *task) { return ((uintptr_t)task & 1) != 0; }
static inline gr_inst *gr_task_inst(void *task) { return (gr_inst *)((uintptr_t)task & ~(uintptr_t)1); }
static inline void *gr_inst_task(gr_inst *inst) { return (void *)((uintptr_t)inst | 1); }
void *gr_worker_main(void *arg);
void gr_worker_loop(gr_worker *w);   /* the policy's loop and its accounting, on any fiber */
void gr_push_task(gr_worker *w, gr_stage_rt *s, void *task);
void gr_push_own(gr_worker *w, gr_stage_rt *s, int deque, void *task);
void gr_make_runnable(gr_worker *w, gr_inst *inst);
void gr_requeue(gr_worker *w, gr_inst *inst);       /* a preempted instance goes back */
void gr_wake_sleepers(gr_graph *g);
void gr_wake_for_task(gr_graph *g);
uint64_t gr_account(gr_worker *w, gr_time_cat cat);
bool gr_stage_blocked(gr_worker *w, const gr_stage_rt *s);
gr_stage_rt *gr_task_stage(const gr_graph *g, void *task);
void gr_run_task(gr_worker *w, void *task);
void gr_idle_wait(gr_worker *w, unsigned *fails);
bool gr_running(gr_graph *g);

/* sched.c: the GRAMPS policy's local pop, shared with the Static policy */
void *gr_pop_by_priority(gr_worker *w);

static inline uint64_t gr_ready_word(const gr_worker *w, int word)
{
    /* relaxed: a hint; a stale bit costs a probe of an empty deque or a later steal */
    return atomic_load_explicit(&w->ready_ranks[word], memory_order_relaxed);
}

/* The highest rank below r whose deque may hold tasks (gr_worker.ready_ranks), or -1. */
static inline int gr_ready_below(const gr_worker *w, int r)
{
    for (int word = (r - 1) >> 6; r > 0 && word >= 0; word--) {
        uint64_t m = gr_ready_word(w, word);
        const int top = word == (r - 1) >> 6 ? (r - 1) & 63 : 63;
        if (top < 63) m &= ((uint64_t)1 << (top + 1)) - 1;
        if (m) return word * 64 + 63 - __builtin_clzll(m);
    }
    return -1;
}

static inline void gr_ready_clear(gr_worker *w, int r)
{
    uint64_t m = gr_ready_word(w, r >> 6), bit = (uint64_t)1 << (r & 63);
    if (m & bit) atomic_store_explicit(&w->ready_ranks[r >> 6], m & ~bit, memory_order_relaxed);
}

/* Stores only on a change: thieves share the line, and an unchanged word stays shared. */
static inline void gr_ready_set(gr_worker *w, int r)
{
    uint64_t m = gr_ready_word(w, r >> 6), bit = (uint64_t)1 << (r & 63);
    if (!(m & bit)) atomic_store_explicit(&w->ready_ranks[r >> 6], m | bit, memory_order_relaxed);
}

/* scheduler.c: the policy named by the options or GRAMPS_SCHEDULER */
gr_status gr_scheduler_choose(gr_graph *g);

/* shader_stage.c (push coalescers) */
void gr_flush_partials(gr_worker *w);

/* thread_stage.c */
gr_inst *gr_inst_create(gr_worker *w, gr_stage_rt *s, gr_subq *bound);
void gr_inst_run(gr_worker *w, gr_inst *inst);
void gr_inst_destroy(gr_graph *g, gr_inst *inst);
void gr_inst_abandon(gr_ctx *c) __attribute__((noreturn));

/* shader_stage.c: runs task `in`; false when an output had no room (the caller pushes
 * it back). A ticket-ordered task without room for its slot is parked instead (true). */
bool gr_shader_try_run(gr_worker *w, gr_stage_rt *s, gr_pkt *in);
/* Appends src's elements to dst's (same queue layout; the caller checked they fit). */
void gr_append_elements(const gr_queue_rt *q, gr_pkt *dst, gr_pkt *src);

/* any_subqueue.c: gr_reserve_any's wait on a whole queue set */
/* A subqueue of q with packets that meets the need, or NULL; *all_done: q is closed and
 * every subqueue empty (nothing will come). */
gr_subq *gr_any_ready(gr_queue_rt *q, uint32_t need, bool grant_short, bool *all_done);
uint32_t gr_set_fullest(gr_queue_rt *q);

/* batch_room.c: a Shader batch's room in the physical queue sets its stage feeds. */
#define GR_ROOM_SUBS 64
typedef struct gr_room_sub {          /* a subqueue the batch's tasks push into */
    const gr_queue_rt *q;
    uint64_t key;
    uint32_t charged;                 /* packets it holds, with those the batch's tasks
                                         taken so far fill there */
    uint32_t fill;                    /* elements in the worker's partly filled packet */
} gr_room_sub;
typedef struct gr_batch_room {
    uint32_t max;                     /* tasks at most */
    bool forecast;                    /* per subqueue (gr_stage_desc.set_pushes) */
    bool last;                        /* a task's pushes are not known: it is the last */
    uint32_t nsubs;
    gr_room_sub subs[GR_ROOM_SUBS];
} gr_batch_room;
/* Whether a queue set s feeds has a full subqueue: the CPU's rule before each task. */
bool gr_batch_set_full(gr_worker *w, const gr_stage_rt *s);
/* A batch of at most max tasks starts (before its first task's pushes are added). */
void gr_batch_room_start(gr_worker *w, gr_stage_rt *s, uint32_t max, gr_batch_room *r);
/* The pushes of the task c is set up for (just taken) added to the forecast. */
void gr_batch_room_add(gr_worker *w, gr_stage_rt *s, gr_ctx *c, gr_batch_room *r);
/* Whether the batch, n tasks taken, may take another. */
bool gr_batch_room_takes(gr_worker *w, const gr_stage_rt *s, const gr_batch_room *r, uint32_t n);
void gr_park_any(gr_worker *w, gr_inst *inst);
/* A packet arrived in s (NULL: q closed): wakes the waiter if s meets its need. */
void gr_wake_any(gr_worker *w, gr_queue_rt *q, gr_subq *s);
/* A quiescent cycle: hands the waiter a short reservation if any subqueue has packets. */
bool gr_grant_any(gr_worker *w, gr_queue_rt *q);

/* reduction.c: recirculating in-place reductions (gr_stage_desc.recirculate) */
void gr_reduction_join_held(gr_worker *w, gr_stage_rt *s, gr_pkt *in);
void gr_reduction_keep(gr_worker *w, gr_ctx *c);
void gr_reduction_finish(gr_worker *w, gr_comp *c);

/* term.c */
/* w must be the calling pthread's worker (or, before the workers start, any worker):
 * increments and later-decrements go through w's surplus (see term.c), which only w
 * touches. */
void gr_pending_add(gr_worker *w, gr_comp *c, int64_t n);
void gr_pending_sub(gr_worker *w, gr_comp *c, int64_t n);
/* A decrement applied later: in w's next flush, after at most GR_PENDING_BATCH updates
 * and always before w looks for work elsewhere, runs a Thread stage or sleeps. */
void gr_pending_sub_later(gr_worker *w, gr_comp *c, int64_t n);
void gr_pending_flush(gr_worker *w);
void gr_term_start(gr_graph *g);   /* before instances start: outside producers */
void gr_term_kick(gr_graph *g);    /* after: finishes components with nothing to do */

/* stats.c */
void *gr_watchdog_main(void *arg);
void gr_sample_start(gr_graph *g, uint64_t now);
void gr_sample_final(gr_graph *g);      /* after the workers stopped */
void gr_sample_due(gr_graph *g, uint64_t now);
/* Called with a fresh timestamp at every scheduling step: one relaxed load, and a
 * footprint sample when one is due (see stats.c). */
static inline void gr_maybe_sample(gr_graph *g, uint64_t now)
{
    if (now >= atomic_load_explicit(&g->next_sample, memory_order_relaxed)) gr_sample_due(g, now);
}
void gr_stats_collect(gr_graph *g);
void gr_stats_free(gr_graph *g);
void gr_journal_add(gr_worker *w, int stage, uint32_t instance, uint64_t t0, uint64_t t1);
void gr_describe_state(gr_graph *g, char *buf, size_t len);

/* A committed Collection packet's count must fit it: fails the run (see gr_fail) and
 * returns false when it does not. */
bool gr_check_count(gr_ctx *c, const gr_queue_rt *q, const void *packet);

static inline gr_comp *gr_comp_of_queue(gr_graph *g, gr_queue_rt *q)
{
    (void)g;
    return q->cons_comp;
}

/* running.c: the stage whose program this thread runs now (gr_running_stage), set by
 * the worker around each Shader task and Thread instance switch; returns the previous. */
const gr_stage_rt *gr_running_set(const gr_stage_rt *s);

#endif

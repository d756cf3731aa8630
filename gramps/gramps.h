/* gramps.h — the one public header of the GRAMPS runtime.
 *
 * An application is a graph of stages that communicate through queues of packets
 * (Sugerman 2010, ch. 3). Build a graph with gr_graph_create / gr_queue / gr_stage /
 * gr_bind*, start it with gr_launch, wait for it with gr_wait, read gr_stats, destroy.
 * Stage code (Thread, Shader, Fixed-function) talks to the runtime only through the
 * stage-side intrinsics below, which take the stage's gr_ctx.
 *
 * Errors: every graph-building call records the first error in the graph (naming the
 * stage or queue at fault) and returns GR_INVALID; gr_launch and gr_wait return a
 * status; gr_error() returns the message. Stage-side misuse (push from a Thread stage,
 * reserve on an unbound slot, a failed gr_assert...) aborts the run with a message.
 * Nothing is dropped silently: packets a consumer leaves behind, an output into a queue
 * set with no key, a Collection count beyond its packet and a Thread stage returning
 * with a window open each fail the run with GR_ERR_INVALID naming the stage and queue
 * (see gr_reserve, gr_output, gr_count). */
#ifndef GRAMPS_H
#define GRAMPS_H

#include "gramps/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GR_VERSION "0.1.0"
#define GR_INVALID (-1)
#define GR_ALL UINT32_MAX          /* reserve size: everything, once producers finish */

/* ---- Limits and defaults of the runtime, in one place -------------------------------- */

#define GR_DEFAULT_CAPACITY 64     /* packets per queue (per subqueue of a set), capacity 0 */
#define GR_DEFAULT_MAX_KEYS 65536  /* distinct keys of a dynamic queue set, max_keys 0 */
#define GR_MAX_WORKERS 1024        /* workers of one run: gr_worker_count caps there */
#define GR_DEADLOCK_SECONDS_MAX 1e7   /* gr_launch_opts.deadlock_seconds */
/* Parts of the work gr_parallel runs (clearing buffers, building a BVH, compressing an
 * image): bound by memory bandwidth long before that many cores. */
#define GR_PARALLEL_MAX_PARTS 16

typedef struct gr_graph gr_graph;
typedef struct gr_ctx gr_ctx;      /* a running stage instance's view of the runtime */

typedef enum gr_status {
    GR_OK = 0,
    GR_SHORT,                      /* reserve got fewer packets than asked: producers done */
    GR_NOMORE,                     /* reserve got nothing: input finished */
    GR_ERR_INVALID,                /* bad graph or bad call; see gr_error() */
    GR_ERR_DEADLOCK,               /* no stage could make progress; queue states in gr_error() */
    GR_ERR_ASSERT,                 /* a stage's gr_assert failed */
    GR_ERR_NOMEM,
} gr_status;

/* ---- Graph setup ------------------------------------------------------------------ */

typedef enum gr_packet_kind {
    GR_OPAQUE,                     /* bytes the runtime never looks into */
    GR_COLLECTION,                 /* header (first uint32 = element count) + elements;
                                      a committed count above `elements` fails the run */
} gr_packet_kind;

typedef struct gr_queue_desc {
    const char *name;
    gr_packet_kind kind;
    size_t packet_bytes;           /* Opaque: packet size. Collection: derived if 0 */
    size_t header_bytes;           /* Collection: >= 4; the first uint32 is the count */
    size_t element_bytes;          /* Collection */
    uint32_t elements;             /* Collection: elements per packet */
    uint32_t capacity;             /* packets (per subqueue for sets); 0: GR_DEFAULT_CAPACITY */
    bool ordered;                  /* FIFO in producer order, through Shader chains too */
    uint32_t subqueues;            /* >0: queue set with this many static subqueues */
    bool dynamic_keys;             /* queue set whose subqueues are created per key */
    uint32_t max_keys;             /* dynamic sets: most distinct keys (0: GR_DEFAULT_MAX_KEYS) */
} gr_queue_desc;

typedef enum gr_stage_kind {
    GR_THREAD,                     /* stateful user-level thread, explicit reserve/commit */
    GR_SHADER,                     /* stateless, one task per input packet, run to completion */
    GR_FIXED,                      /* a Thread stage with a configuration blob */
} gr_stage_kind;

typedef void (*gr_stage_fn)(gr_ctx *ctx);
struct gr_set_push;
typedef uint32_t (*gr_set_pushes_fn)(gr_ctx *c, int output, struct gr_set_push *pushes);

typedef struct gr_stage_desc {
    const char *name;
    gr_stage_kind kind;
    gr_stage_fn main;
    void *user;                    /* handed to the stage by gr_user() */
    const void *config;            /* Fixed-function configuration (copied) */
    size_t config_bytes;
    bool instanced;                /* Thread: one instance per subqueue of its input set */
    int priority;                  /* 0 = derived from the graph; else overrides (higher runs first) */
    bool fifo;                     /* Shader: run its tasks oldest first, as in an ordered chain
                                      (e.g. a PS whose early-Z wants the OM close behind) */
    bool replicated;               /* one of the copies a graph makes of a stage per worker
                                      group (graph files' `replicate`): their work divides
                                      among the copies, so none is counted as serial */
    bool coalesce_input;           /* Shader reduction (thesis §3.5.3): before a task runs, the
                                      elements of further packets of the stage waiting on its
                                      worker join its input packet while they fit (those
                                      packets are consumed), so the program combines several
                                      packets into one and forwards it in place. Needs an
                                      unordered Collection input and an in-place output */
    bool recirculate;              /* with coalesce_input, a full parallel reduction (thesis
                                      §3.5.3): a task's in-place result goes back to the
                                      stage's input, joined with another result, until one
                                      packet remains; when the input has ended, that packet
                                      goes to the in-place output queue. A task must leave
                                      at most half a packet of elements (the run fails
                                      otherwise), so two results always fit in one. All
                                      input packets join, whatever their keys, unless
                                      reduce_per_key (below) */
    bool every_subqueue;           /* instanced, on a set of fixed subqueues: a subqueue that
                                      got no packet also gets an instance, once the input
                                      has ended (it reads the end at once), for a stage
                                      that must finish each subqueue's share of the output
                                      (rt.blend writes its band of pixels) */
    const char *origin;            /* what a crash report names besides the stage (copied,
                                      truncated to GR_ORIGIN_MAX - 1): compose gives
                                      "type T, plugin FILE"; NULL: nothing */
    /* Shader batches: with batch set and batch_max > 1 (at most GR_BATCH_MAX), a worker
     * about to run a task of the stage also takes the further tasks of the same input
     * queue on top of its own deque, up to batch_max in all, and calls batch once with
     * all their input packets (an accelerator stage launches one kernel over them);
     * then each task runs main as usual, in that order, gr_batch_index telling its
     * position. A packet is taken only with its task's outputs reserved, and no more
     * than a queue set the stage feeds can take under the rule that holds a Shader back
     * while a subqueue is full; a task that still finds such a set full when its turn
     * comes goes back to be run later, in another batch: batch must compute only what
     * main could compute again (a pure function of the packets). Not with
     * coalesce_input, fifo or a queue set input. */
    uint32_t batch_max;
    void (*batch)(gr_ctx *c, void *const packets[], uint32_t n);
    const char *device;            /* where the stage's program computes, for the
                                      statistics (copied, truncated to GR_DEVICE_MAX - 1):
                                      "opencl" when its tasks launch kernels on an
                                      accelerator (gr_device_work counts them); NULL: "cpu" */
    const char *placement;         /* why it computes there, for the statistics (copied,
                                      truncated to GR_ORIGIN_MAX - 1); NULL: nothing said */
    uint32_t low_watermark;        /* the stage's low watermark (thesis §5.4.1), tasks.
                                      Thread: not preempted at reserve/commit while its
                                      worker's higher-priority local tasks are fewer; 0: the
                                      run's gr_launch_opts.low_watermark. Shader, under the
                                      GRAMPS policy: a worker that ran one of its tasks runs
                                      its next local task of the stage before any other
                                      while fewer than this many ran in a row; 0 or 1: every
                                      task goes by priority */
    /* Appended, so that programs built against the layout before them still match. */
    bool reduce_per_key;           /* with recirculate: one reduction per key (MapReduce's
                                      combiner, histogram bins): only packets of equal keys
                                      join, and each key's one result goes to the in-place
                                      output with its key, which may then be a queue set.
                                      The producer tags the input packets with keys
                                      (gr_reserve_out_key, gr_push_key on a plain queue) */
    bool ticket_order;             /* Shader (DANBI §II's ticket-ordered output): its one
                                      ordered output, consumed by a Thread stage, gets the
                                      task results in the order the input packets were
                                      committed (per key). Each input packet takes a ticket
                                      when its producer (one Thread stage, not instanced)
                                      commits it; a task reserves its ticket's slot in the
                                      output subqueue when a worker takes it to run, not
                                      when the packet is made as an ordered chain does, so
                                      the input is an unordered queue bounded by its own
                                      capacity. At most one packet per task into that output
                                      (none: the slot is skipped); the key of the packet is
                                      the input's */
    /* Shader batches into a physical queue set (a push binding, `output`): for the task
     * c is set up for (gr_input is its packet), the subqueues of that set it may push
     * into, each key with at most how many elements it may push there (a bound, from the
     * packet: e.g. one contribution per ray, keyed by the ray's pixel); returns how many
     * it wrote, at most GR_SET_PUSHES_MAX, or GR_SET_PUSHES_UNKNOWN. A batch then takes
     * a task only while the subqueues its earlier tasks push into keep room for it to
     * start under the CPU's rule, following the worker's push coalescing (batch_room.c).
     * NULL: a batch assumes each earlier task starts, in the set's fullest subqueue, as
     * many packets as a batched task of the stage has started in one. Either way a task
     * that finds a subqueue full when its turn comes is held back (batch above), so a
     * wrong answer costs launches, never the capacity bound. */
    gr_set_pushes_fn set_pushes;
} gr_stage_desc;

/* One subqueue a batched task may push into (gr_stage_desc.set_pushes). */
typedef struct gr_set_push {
    uint64_t key;
    uint32_t elements;             /* at most this many */
} gr_set_push;
#define GR_SET_PUSHES_MAX 16
#define GR_SET_PUSHES_UNKNOWN UINT32_MAX

/* For a set_pushes answer built one element at a time: counts one more element for key
 * in pushes[0..*n) (a packet's neighbours share keys, so the last entries are looked at
 * first); false when that would take a key past GR_SET_PUSHES_MAX (answer UNKNOWN). */
static inline bool gr_set_push_add(gr_set_push *pushes, uint32_t *n, uint64_t key)
{
    uint32_t k = *n;
    while (k > 0 && pushes[k - 1].key != key) k--;
    if (k > 0) pushes[k - 1].elements++;
    else if (*n == GR_SET_PUSHES_MAX) return false;
    else {
        pushes[*n].key = key;           /* no compound literal: the header is C++'s too */
        pushes[(*n)++].elements = 1;
    }
    return true;
}

#define GR_ORIGIN_MAX 512
#define GR_DEVICE_MAX 32
#define GR_BATCH_MAX 256

typedef enum gr_bind_mode {
    GR_BIND_INPUT,                 /* Thread: reserve/commit; Shader: the task's input packet */
    GR_BIND_OUTPUT,                /* Thread: reserve/commit; Shader: one pre-reserved packet */
    GR_BIND_PUSH,                  /* Shader: push elements, coalesced into Collection packets */
    GR_BIND_INPLACE,               /* Shader: the input packet, modified, forwarded to this queue */
} gr_bind_mode;

GR_API gr_graph *gr_graph_create(void);
GR_API void gr_graph_destroy(gr_graph *g);
GR_API const char *gr_error(const gr_graph *g);       /* "" when no error */
/* The stage and queue ids a validation error (gr_launch's checks of the graph) is about,
 * each GR_INVALID when it names none: the stage whose binding of the queue is at fault
 * when both are set. A caller that knows where its graph came from names the place. */
GR_API void gr_error_blame(const gr_graph *g, int *stage, int *queue);

GR_API int gr_queue(gr_graph *g, const gr_queue_desc *d);        /* queue id or GR_INVALID */
GR_API int gr_stage(gr_graph *g, const gr_stage_desc *d);        /* stage id or GR_INVALID */
/* A buffer visible to the stages it is bound to; data (may be NULL) is copied in. A
 * read-only one (writable = false) gets pages of its own, mprotected PROT_READ from
 * gr_launch until gr_wait returns: a write to it during the run faults (SIGSEGV). */
GR_API int gr_buffer(gr_graph *g, const char *name, size_t bytes, const void *data, bool writable);
/* Binds queue to stage; returns the slot index among the stage's bindings of that
 * direction (inputs: GR_BIND_INPUT; outputs: OUTPUT, PUSH and INPLACE share numbering). */
GR_API int gr_bind(gr_graph *g, int stage, gr_bind_mode mode, int queue);
GR_API int gr_bind_buffer(gr_graph *g, int stage, int buffer);   /* buffer slot or GR_INVALID */
GR_API void *gr_buffer_data(gr_graph *g, int buffer);            /* host access after gr_wait */

typedef struct gr_launch_opts {
    unsigned workers;              /* 0: as gr_worker_count(0) answers */
    bool pin;                      /* pin worker i to CPU i */
    uint32_t low_watermark;        /* every Thread stage's low watermark, tasks, where its
                                      gr_stage_desc sets none (0: 2 x workers, min 32) */
    size_t stack_bytes;            /* Thread-stage stacks (0: 256 KiB) */
    double deadlock_seconds;       /* no progress for this long = deadlock (0 or less: 10 s;
                                      NaN or above GR_DEADLOCK_SECONDS_MAX: GR_ERR_INVALID) */
    bool journal;                  /* record a timeline (gr_journal_write) */
    /* Scheduling policy (Sanchez et al. 2011): "gramps", "task-stealing" (Cilk-5 style, no
     * backpressure), "breadth-first" (one stage at a time, no backpressure) or "static"
     * (METIS partitions of the stage graph, one per worker, no stealing), or DANBI's
     * "qes" (queue-event: a worker follows full and empty queues along the graph) and
     * "pss" (qes plus probabilistic moves that keep queues half full). NULL: the
     * GRAMPS_SCHEDULER environment variable, else "gramps". Unknown: gr_launch fails. */
    const char *scheduler;
    /* Static: a profiled run of the same graph (gr_profile_take) whose stage times and
     * queue traffic weigh the partition; NULL: every stage and queue weighs the same. */
    const struct gr_profile *profile;
    bool verbose;                  /* Static: print the partitions on stderr */
    /* Static: how stages are assigned to workers: "metis" (METIS, or longest processing
     * time first where METIS does badly) or "ilp" (SGMS style: an integer linear program,
     * solved by GLPK, minimising the heaviest worker's load; when it finds no solution
     * within ilp_ms, or only one heavier than METIS/LPT's, it falls back to "metis",
     * says so on stderr and in
     * gr_stats.partition_fell_back). NULL: the GRAMPS_STATIC_PARTITION environment
     * variable, else "metis". Unknown: gr_launch fails (GR_ERR_INVALID). */
    const char *partition;
    /* Static with "ilp": the solver's time limit in milliseconds. 0: the
     * GRAMPS_STATIC_ILP_MS environment variable, else 2000. Negative: GR_ERR_INVALID. */
    int ilp_ms;
    /* Virtual-time simulation (docs/many-cores.md): this many virtual workers (1 to
     * GR_MAX_WORKERS; above: GR_ERR_INVALID) on one OS thread, `workers` ignored. The
     * results are the same; every time and footprint in the statistics is virtual. 0: a
     * real run. */
    unsigned simulate;
    /* Simulated runs: a profile (gr_profile_take) of a 1-virtual-worker run of the same
     * graph and frame. Each stage's application time is then charged at that run's cost
     * per unit of work (a Shader task; a Thread stage's packets in and out), the tasks
     * keeping their measured proportions, instead of as measured here, where P virtual
     * workers share one core's caches. A profile of another graph, or of a real run,
     * fails gr_launch (GR_ERR_INVALID). NULL: charged as measured. Ignored in real runs. */
    const struct gr_profile *sim_calibration;
} gr_launch_opts;

/* How many workers a run launched with gr_launch_opts.workers = requested has: requested;
 * when that is 0, GRAMPS_NUM_THREADS (0 there: one, which runs on the caller inside
 * gr_wait); when that is unset, one per online CPU; at most GR_MAX_WORKERS. Graph files'
 * $workers and whatever a program sizes per worker ask this, so they agree with the run. */
GR_API unsigned gr_worker_count(unsigned requested);

/* Whether a scheduler of that name exists, and the list of names (for messages). */
GR_API bool gr_scheduler_known(const char *name);
GR_API const char *gr_scheduler_names(void);
/* Whether the named scheduler (NULL: GRAMPS_SCHEDULER, else "gramps", as gr_launch
 * resolves it) enforces queue capacities (backpressure): gramps, static, qes and pss do;
 * task-stealing and breadth-first do not, by design. */
GR_API bool gr_scheduler_bounded(const char *name);
GR_API const char *gr_scheduler_default(void);        /* GRAMPS_SCHEDULER, else "gramps" */
/* The policy a launched graph runs under (NULL before gr_launch chose one). */
GR_API const char *gr_scheduler_of(const gr_graph *g);

/* A run's per-stage time and per-queue traffic, kept past gr_graph_destroy to weigh the
 * Static scheduler's partition of a later run of the same graph. */
typedef struct gr_profile gr_profile;
GR_API gr_profile *gr_profile_take(const gr_graph *g);  /* after gr_wait; NULL when out of memory */
GR_API void gr_profile_free(gr_profile *p);

/* Thread-stage stacks outlive their graph: a destroyed graph's go to a process-wide
 * cache that later graphs take from (at most 4096 stacks of one size; only the pages
 * their fibers touched are resident). This unmaps the cached ones; graphs still alive
 * keep theirs. */
GR_API void gr_release_cached_stacks(void);

/* Worker and watchdog threads outlive their graph too: when a run ends they park, and
 * later launches wake them instead of making threads (the process keeps as many as the
 * most workers it ran at once). This ends the parked ones; running graphs keep theirs. */
GR_API void gr_release_parked_threads(void);

/* Runs part(arg, i, n) for i = 0..n-1 at the same time, part 0 on the caller and the
 * others on parked threads (made when none is parked; where none can be made, the
 * caller runs that part too), and returns when every part has returned. For work a
 * program does between runs, such as clearing a frame's buffers. */
GR_API void gr_parallel(unsigned n, void (*part)(void *arg, unsigned i, unsigned n), void *arg);

/* How many parts to cut such work into: gr_worker_count(threads), at most
 * GR_PARALLEL_MAX_PARTS. */
GR_API unsigned gr_parallel_parts(unsigned threads);

/* Validates the graph and starts it with the given initially runnable Thread stages.
 * Returns GR_OK or GR_ERR_INVALID (message names the stage/queue). */
GR_API gr_status gr_launch(gr_graph *g, const gr_launch_opts *o, const int *runnable, int nrunnable);
/* Waits for every stage to finish. GR_OK, or the run's error (see gr_error). */
GR_API gr_status gr_wait(gr_graph *g);
/* Runs a finished graph again (a renderer's next frame): after gr_wait returned GR_OK,
 * with the options and initially runnable stages of its gr_launch; gr_wait as after a
 * launch. The run starts as the first did: queues empty, every Thread stage's program
 * from its beginning in new instances, counters, credits, reductions, tickets, ordered
 * slots, statistics and footprints from zero (gr_get_stats then tells this run only).
 * Kept: the graph, its buffers' contents (write them between runs with gr_buffer_data),
 * the stages' user pointers (gr_stage_set_user), the packet pools and fiber stacks; the
 * worker threads park between runs as after any run. Simulated runs too. GR_ERR_INVALID
 * for a graph whose run has not finished; a graph whose last run failed keeps its
 * status and gr_error says the relaunch was refused, with the run's message. */
GR_API gr_status gr_relaunch(gr_graph *g);
/* The pointer gr_user gives stage `stage` from the next run on (set it between runs: a
 * program's per-frame state). GR_ERR_INVALID, recording nothing (the graph's status
 * stays its runs'), for no such stage or while the graph runs. */
GR_API gr_status gr_stage_set_user(gr_graph *g, int stage, void *user);
/* Graphviz DOT of the graph: stages with priorities, one edge per output binding with the
 * queue's capacity and packet size (dashed: backward), and after a run the peak and
 * average held, in packets and bytes. `dot -Tsvg graph.dot > graph.svg` draws it. */
GR_API void gr_graph_dot(const gr_graph *g, FILE *out);

/* ---- Stage-side intrinsics ---------------------------------------------------------- */

/* A reserved window: `packets` packets at `mem`, contiguous, `bytes` long. */
typedef struct gr_window {
    void *mem;
    uint32_t packets;
    size_t bytes;
    uint32_t subqueue;             /* dense subqueue index (queue sets), else 0 */
    uint64_t key;                  /* subqueue key (dynamic sets) or index (static sets) */
} gr_window;

/* Thread stages. n may be GR_ALL. Input reserves block until n packets are there or the
 * producers are done (GR_SHORT with fewer, GR_NOMORE with none). Output reserves block
 * while the queue is full (backpressure). Instanced stages read their own subqueue.
 * When a Thread stage's program returns, every window must be committed, and its
 * inputs (an instance: its subqueue) must be empty, and stay so: packets there, or
 * committed there later, fail the run ("stage 'S' finished with N packets left in its
 * input queue 'Q'"). Read each input until GR_NOMORE. */
GR_API gr_status gr_reserve(gr_ctx *c, int input, uint32_t n, gr_window *w);
GR_API gr_status gr_commit(gr_ctx *c, int input, uint32_t n);
GR_API gr_status gr_reserve_out(gr_ctx *c, int output, uint32_t n, gr_window *w);
/* Output to a queue set: subqueue by key (dynamic sets) or index (static sets). On a
 * plain queue the key tags the packets for Shaders downstream to inherit; an ordered
 * chain that ends in a queue set needs it (gr_reserve_out fails there). */
GR_API gr_status gr_reserve_out_key(gr_ctx *c, int output, uint32_t n, uint64_t key, gr_window *w);
/* Input from a queue set by key/index, for non-instanced consumers. */
GR_API gr_status gr_reserve_key(gr_ctx *c, int input, uint32_t n, uint64_t key, gr_window *w);
/* Input from whichever subqueue of a queue set is ready (thesis appendix A.2's
 * GR_RESERVE_FLAG_ANYSUBQUEUE), for non-instanced consumers: n packets of one subqueue
 * that has them, is full, or has ended (then GR_SHORT with what is left); w->key and
 * w->subqueue say which. Blocks while none is; GR_NOMORE once the set has ended and
 * every subqueue is empty. Commit as for gr_reserve. */
GR_API gr_status gr_reserve_any(gr_ctx *c, int input, uint32_t n, gr_window *w);
GR_API gr_status gr_commit_out(gr_ctx *c, int output, uint32_t n);
/* The key of the subqueue an instanced Thread stage (or a Shader task) is bound to. */
GR_API uint64_t gr_key(const gr_ctx *c);

/* Shader stages. An output, in-place forward or push into a queue set goes to the
 * subqueue of the key given (gr_output_key, gr_push_key); without one it inherits the
 * key of the task's input packet if that packet carries one: it was committed with a
 * key (gr_reserve_out_key, gr_output_key) or inherited one this way (as in the raster
 * graph, Rast -> in-place PS -> per-tile set). Otherwise the run fails naming the stage
 * and the queue set. A push into a plain queue gives its packet no key (elements of
 * many tasks share it). */
GR_API void *gr_input(gr_ctx *c, size_t *bytes);       /* this task's input packet */
GR_API void *gr_output(gr_ctx *c, int output);         /* pre-reserved output packet */
GR_API void gr_output_key(gr_ctx *c, int output, uint64_t key); /* its subqueue (queue-set outputs) */
GR_API void gr_discard(gr_ctx *c, int output);         /* this task produces no packet there */
GR_API void gr_push(gr_ctx *c, int output, const void *element);
GR_API void gr_push_key(gr_ctx *c, int output, uint64_t key, const void *element);
/* n elements (contiguous): the same as n gr_push calls, in that order, for one copy per
 * packet they fill instead of a call and a copy each. */
GR_API void gr_push_n(gr_ctx *c, int output, const void *elements, uint32_t n);
/* n elements (contiguous) with one key: the same as n gr_push_key calls, in that order,
 * for one key lookup and one copy per packet they fill. */
GR_API void gr_push_key_n(gr_ctx *c, int output, uint64_t key, const void *elements, uint32_t n);
/* Ends the packets this worker is filling on push output `output` (every subqueue's, for
 * a queue set): each is queued as it is, partly filled, and the next push there starts
 * a new packet. So no packet holds elements pushed on this worker both before and after
 * the call: a Shader that calls it as its task's last push gives its consumer packets
 * of its own elements only (the last of them partly filled). It takes no queue space
 * (the packets were charged when they were started); packets a task starts after it
 * count among those it starts (M in docs/runtime-api.md's capacity bounds). */
GR_API void gr_push_flush(gr_ctx *c, int output);

/* A task's work on an accelerator, added to its stage's statistics: kernel launches,
 * the time the device spent in them and the bytes copied each way. The runtime knows
 * nothing of devices; a stage that launches kernels reports them here. */
typedef struct gr_device_work {
    uint64_t launches;
    uint64_t kernel_ns;
    uint64_t bytes_to_device, bytes_from_device;
    /* The stage's output packets held in device memory: the most at once and the room
     * for them (a queue between two device stages); kept as maxima, not summed. */
    uint32_t queue_peak, queue_capacity;
    /* Packets launched again from where an earlier launch of the stage left them on the
     * device (a task sent back after its batch's launch): summed. */
    uint64_t relaunches_from_slot;
} gr_device_work;
GR_API void gr_device_work_add(gr_ctx *c, const gr_device_work *w);
/* The calling task starts (true) or stops (false) waiting on an accelerator: a kernel
 * launch, a kernel compiled for it, a copy. Meanwhile the watchdog names the stage as
 * stuck only after GR_DEVICE_WAIT_FACTOR times deadlock_seconds: a kernel cannot be
 * interrupted, and an OpenCL implementation on the CPU (PoCL) compiles a kernel again
 * for each new launch size, seconds each on a loaded machine. */
#define GR_DEVICE_WAIT_FACTOR 10
GR_API void gr_device_wait(gr_ctx *c, bool waiting);
/* The running Shader task's position in the batch its stage's batch hook saw (0 for
 * the packet at packets[0]), or -1 when it was not part of one. */
GR_API int gr_batch_index(const gr_ctx *c);

/* All stages. */
GR_API void *gr_user(const gr_ctx *c);
GR_API const void *gr_config(const gr_ctx *c, size_t *bytes);
GR_API void *gr_buf(const gr_ctx *c, int slot, size_t *bytes);
GR_API unsigned gr_worker_id(const gr_ctx *c);
GR_API unsigned gr_num_workers(const gr_ctx *c);
GR_API uint32_t gr_instance(const gr_ctx *c);          /* instance number within the stage */
/* A Thread or Fixed stage's private data that it keeps between runtime calls and touches
 * after them (staged packets, a tile's buffers), in bytes; 0 (the default): none worth
 * counting. Only a simulated run reads it: an instance that resumes on another worker
 * than its last pays for moving that many bytes' cache lines (docs/many-cores.md).
 * Ignored in a Shader. */
GR_API void gr_state_bytes(gr_ctx *c, size_t bytes);
/* How much of that data the instance touched since its last call, in bytes (appends,
 * reads of what it sends). Only a simulated run reads it: once a stage's instances call
 * it, one that resumes on another worker pays for the lines it then touches there, up to
 * its gr_state_bytes (lines move on demand), instead of for all of them at the resume.
 * Call it before each commit that may hand the worker to another task (Task-Stealing
 * preempts at each one) and after each input packet. Ignored in a Shader. */
GR_API void gr_state_touched(gr_ctx *c, size_t bytes);
/* The stage's units of work, when its cost follows something other than its packets
 * (tile-shade: the triangles binned to its tile, however many packets carry them). Only
 * a simulated run reads it: a stage that calls it is calibrated per declared unit instead
 * of per packet (a Thread stage) or per task (a Shader), since partly filled packets at
 * many workers would make a per-packet cost too high (docs/many-cores.md). Call it before
 * committing the input the units came in; once called, the stage's packets no longer
 * count. */
GR_API void gr_work_units(gr_ctx *c, uint64_t units);
/* Fails the run from stage code with status st (GR_ERR_INVALID, GR_ERR_NOMEM...) and the
 * message, which should name the stage: records it and stops every worker. A Shader
 * task returns normally after it; for a Thread stage it does not return (the instance
 * is abandoned). */
GR_API void gr_fail(gr_ctx *c, gr_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define gr_assert(c, cond) gr_assert_at((c), (cond), #cond, __FILE__, __LINE__)
GR_API void gr_assert_at(gr_ctx *c, bool ok, const char *what, const char *file, int line);

/* For a crash handler: the name and origin (gr_stage_desc.origin, "" if none) of the
 * stage whose program the calling thread runs now; false outside every stage's program.
 * Async-signal-safe: it reads the calling thread's own record, which the worker sets
 * around each Shader task and each switch into a Thread instance. */
GR_API bool gr_running_stage(const char **name, const char **origin);

/* Collection helpers. */
static inline uint32_t gr_count(const void *packet) { return *(const uint32_t *)packet; }
static inline void gr_set_count(void *packet, uint32_t n) { *(uint32_t *)packet = n; }

/* ---- Statistics ------------------------------------------------------------------- */

typedef struct gr_queue_stats {
    const char *name;
    uint32_t capacity;             /* per subqueue */
    uint32_t subqueues;            /* subqueues that existed */
    size_t packet_bytes;
    uint64_t packets;              /* packets that went through */
    uint64_t peak_packets;         /* most packets held at once in a footprint sample (all
                                      subqueues, incl. partial pushes, not reorder slots
                                      holding no packet; sampled every 100 us, sooner
                                      in the first 64 us of a run) */
    uint64_t reserved_peak_packets;/* most queue space reserved at once: exact, never below the
                                      true peak, above it by at most the space workers cached */
    double avg_packets;            /* time-averaged (sampled) */
    uint64_t peak_bytes;
    double avg_bytes;
    uint32_t peak_subqueue_packets;/* most held by one subqueue */
    bool backward;                 /* a producer's binding closes a cycle: exempt from
                                      backpressure, so the queue may exceed its capacity */
} gr_queue_stats;

typedef struct gr_stage_stats {
    const char *name;
    gr_stage_kind kind;
    int priority;
    uint64_t tasks;                /* Shader tasks run / Thread instance activations */
    uint64_t instances;            /* Thread instances created */
    double busy_ms;                /* time in the stage's code */
    uint64_t preemptions;
    bool replicated;               /* gr_stage_desc.replicated */
    bool singleton;                /* cannot run on two workers at once: a Thread or Fixed
                                      stage that ran as one instance and is not one of a
                                      replicated stage's copies (a Shader never is) */
    const char *device;            /* gr_stage_desc.device: "cpu" or the accelerator's kind */
    uint64_t kernel_launches;      /* what its tasks reported with gr_device_work_add */
    double kernel_ms;
    uint64_t bytes_to_device, bytes_from_device;
    uint32_t device_queue_peak, device_queue_capacity;   /* gr_device_work's maxima */
    uint64_t relaunches_from_slot;                       /* gr_device_work's sum */
    const char *placement;         /* gr_stage_desc.placement, or NULL */
} gr_stage_stats;

typedef struct gr_worker_stats {
    double app_ms, queue_ms, sched_ms, idle_ms;
    uint64_t tasks, steals, flushes;
    /* Simulated runs (docs/many-cores.md's cost model), else 0: packets the worker read
     * that another worker committed, their cache lines, shared lines (a subqueue's lock,
     * a queue's pool) it took over from another worker, and its virtual wait for them. */
    uint64_t remote_packets, remote_lines, line_takes;
    double line_wait_ms;
    uint64_t state_moves;          /* Thread instances with gr_state_bytes it resumed that
                                      last ran on another worker (their lines are in
                                      remote_lines) */
    uint64_t lock_handoffs;        /* locks (Breadth-First's turn barrier) it got from a
                                      holder it had to wait for */
    double lock_wait_ms;           /* its virtual wait for them, hand-offs included */
} gr_worker_stats;

typedef struct gr_stats {
    const char *scheduler;         /* the policy the run used */
    unsigned workers;
    unsigned simulated_workers;    /* gr_launch_opts.simulate: the times are virtual; 0: real */
    double wall_ms;                /* launch to the end of the last worker (virtual if simulated) */
    double host_ms;                /* what the run took on this machine (= wall_ms unless simulated) */
    double occupancy;              /* application time / (workers x wall) */
    uint64_t peak_footprint_bytes; /* peak of the sum of all queues' held bytes (sampled) */
    double avg_footprint_bytes;    /* the same sum, time-averaged over the samples */
    uint64_t buffer_mallocs;       /* buffer manager's cycle safeguard */
    /* Static: "ilp", "metis" or "lpt", the method whose assignment ran (NULL under other
     * policies); partition_fell_back: "ilp" was asked for and found no solution in time. */
    const char *partition;
    bool partition_fell_back;
    int64_t partition_max_load;    /* Static: the heaviest worker's estimated load (profile us,
                                      else stages); 0 under other policies */
    double serial_share;           /* singletons' busy time / all stages' busy time, in [0, 1]
                                      (0 when no stage was busy) */
    int nqueues, nstages;
    gr_queue_stats *queues;
    gr_stage_stats *stages;
    gr_worker_stats *per_worker;
} gr_stats;

/* Valid after gr_wait until gr_graph_destroy. */
GR_API const gr_stats *gr_get_stats(const gr_graph *g);
/* Amdahl's law: the most a run whose work has this serial share can speed up on
 * `workers` workers, 1 / (s + (1 - s) / workers). Measured at 1 worker, the share is
 * the work no worker count spreads; the bound ignores queueing and scheduling costs. */
GR_API double gr_amdahl_bound(double serial_share, unsigned workers);
GR_API void gr_stats_write_json(const gr_graph *g, FILE *out);
/* Chrome/Perfetto trace JSON of the journal (launch with journal = true; -1 without):
 * a track per worker named "worker N" with a slice per task (stage name, instance), a
 * counter track per queue in bytes held and a "total footprint" track, whose peaks are
 * the statistics' peak_bytes and peak_footprint_bytes. Open it at ui.perfetto.dev or
 * chrome://tracing. */
GR_API int gr_journal_write(const gr_graph *g, FILE *out);
/* The journal's queue-depth samples, for programs that draw the timeline themselves
 * (gramps-footprint): a footprint sample records a queue when its held packets changed,
 * so a queue's depth at time t is its latest sample at or before t (0 before its first).
 * They are the samples gr_journal_write's counter tracks come from, in the order taken.
 * Copies up to max into out (out may be NULL when max is 0) and returns how many there
 * are: 0 without the journal; at most 2^20 per run, like the trace. */
typedef struct gr_depth_sample {
    double ms;                     /* since the launch */
    int queue;                     /* index into gr_stats.queues */
    uint64_t packets;              /* held from then on */
} gr_depth_sample;
GR_API size_t gr_journal_depths(const gr_graph *g, gr_depth_sample *out, size_t max);
/* The journal's task slices, for a program that draws the timeline itself (launch with
 * journal = true): copies up to max of them into out (stage: index into the stats'
 * stages; times in ms since the launch; in no particular order) and returns how many
 * the journal holds, 0 without one. Valid after gr_wait until gr_graph_destroy. */
typedef struct gr_slice {
    int stage;
    unsigned worker;
    double t0_ms, t1_ms;
} gr_slice;
GR_API size_t gr_journal_slices(const gr_graph *g, gr_slice *out, size_t max);

#ifdef __cplusplus
}
#endif
#endif

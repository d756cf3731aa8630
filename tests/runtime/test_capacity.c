/* Tests of queue capacity accounting (gramps/capacity.c): the shared pool plus
 * per-worker credits must count exactly what is held, never let a forward charge
 * overfill a queue, and never strand space in one worker's credits where another
 * worker's producer needs it. Unit tests drive the accounting on a hand-made graph of
 * N workers and one queue (pthreads stand in for workers in the hammer test); the
 * graph tests check the bound from the application's side, which is independent of the
 * runtime's own counting: packets a producer holds and no consumer has started on. */
#include "gramps/internal.h"
#include "tests/check.h"

#include <pthread.h>

/* ---- a hand-made graph: N workers, one queue ------------------------------------ */

typedef struct rig {
    gr_graph g;
    gr_queue_rt *q;
    gr_queue_rt *queues[1];
} rig;

static rig *rig_with(unsigned workers, uint32_t capacity, bool backpressure)
{
    rig *r = gr_calloc_lines(1, sizeof *r);
    r->g.backpressure = backpressure;
    r->q = gr_calloc_lines(1, sizeof *r->q);
    r->q->d.capacity = capacity;
    r->q->physical = true;               /* no termination counts to keep */
    r->queues[0] = r->q;
    r->g.queues = r->queues;
    r->g.nqueues = 1;
    r->g.nworkers = workers;
    r->g.workers = gr_calloc_lines(workers, sizeof *r->g.workers);
    for (unsigned i = 0; i < workers; i++) {
        r->g.workers[i].id = i;
        r->g.workers[i].g = &r->g;
        r->g.workers[i].credit = gr_calloc_lines(1, sizeof *r->g.workers[i].credit);
    }
    gr_capacity_init(&r->g);
    return r;
}

/* Capacities enforced, as under the GRAMPS policy. */
static rig *rig_new(unsigned workers, uint32_t capacity) { return rig_with(workers, capacity, true); }

static void rig_free(rig *r)
{
    for (unsigned i = 0; i < r->g.nworkers; i++) free(r->g.workers[i].credit);
    free(r->g.workers);
    free(r->q);
    free(r);
}

static gr_worker *worker(rig *r, unsigned i) { return &r->g.workers[i]; }

/* Pool plus credits: the space not held. */
static int64_t unheld(rig *r)
{
    int64_t sum = atomic_load(&r->q->free);
    for (unsigned i = 0; i < r->g.nworkers; i++) sum += atomic_load(&worker(r, i)->credit[0]);
    return sum;
}

/* ---- unit tests ------------------------------------------------------------------- */

/* Exactly `capacity` single charges succeed, whichever worker's credits hold the
 * space; releases on another worker make room again for the first. */
static void test_bound_and_reuse(void)
{
    rig *r = rig_new(2, 64);
    CHECK(r->q->credit_keep == 4);
    int ok = 0;
    while (gr_try_charge(worker(r, 0), r->q, 1, false) && ok < 1000) ok++;
    CHECK_MSG(ok == 64, "%d charges fit in capacity 64", ok);
    CHECK(gr_queue_held(&r->g, r->q) == 64);
    CHECK(gr_queue_full(worker(r, 0), r->q) && gr_queue_full(worker(r, 1), r->q));
    for (int i = 0; i < 10; i++) gr_capacity_release(worker(r, 1), r->q, 1);
    CHECK(gr_queue_held(&r->g, r->q) == 54);
    /* worker 1 keeps some of the space as credits; worker 0 still gets all ten */
    CHECK(atomic_load(&worker(r, 1)->credit[0]) > 0);
    CHECK(!gr_queue_full(worker(r, 0), r->q));
    for (int i = 0; i < 10; i++) CHECK(gr_try_charge(worker(r, 0), r->q, 1, false));
    CHECK(!gr_try_charge(worker(r, 0), r->q, 1, false));
    CHECK(gr_queue_held(&r->g, r->q) == 64);
    CHECK(atomic_load(&r->q->reserved_peak) == 64);
    gr_capacity_release(worker(r, 0), r->q, 64);
    CHECK(gr_queue_held(&r->g, r->q) == 0 && unheld(r) == 64);
    rig_free(r);
}

/* An empty queue takes a reservation larger than its capacity (else it would wait
 * forever); a non-empty one does not. Backward charges always go in and are counted. */
static void test_exemptions(void)
{
    rig *r = rig_new(1, 4);
    CHECK(gr_try_charge(worker(r, 0), r->q, 9, false));
    CHECK(gr_queue_held(&r->g, r->q) == 9);
    CHECK(!gr_try_charge(worker(r, 0), r->q, 1, false));
    CHECK(gr_try_charge(worker(r, 0), r->q, 3, true));
    CHECK(gr_queue_held(&r->g, r->q) == 12 && atomic_load(&r->q->reserved_peak) == 12);
    gr_capacity_release(worker(r, 0), r->q, 12);
    CHECK(gr_queue_held(&r->g, r->q) == 0 && unheld(r) == 4);
    CHECK(gr_try_charge(worker(r, 0), r->q, 4, false));
    CHECK(!gr_try_charge(worker(r, 0), r->q, 1, false));
    rig_free(r);
}

/* Without backpressure (Task-Stealing, Breadth-First) every binding is exempt: charges
 * go past the capacity and never fail, yet held and the reserved peak count them
 * exactly, and no worker caches credits (they would stand for space that is not there). */
static void test_unbounded_mode(void)
{
    rig *r = rig_with(2, 8, false);
    CHECK(r->q->credit_keep == 0);
    gr_binding b = {.mode = GR_BIND_OUTPUT, .queue = 0, .backward = false};
    CHECK(gr_exempt(&r->g, &b));
    for (int i = 0; i < 100; i++) CHECK(gr_try_charge(worker(r, i % 2), r->q, 1, gr_exempt(&r->g, &b)));
    CHECK(gr_queue_held(&r->g, r->q) == 100);
    CHECK(atomic_load(&r->q->reserved_peak) == 100);
    for (int i = 0; i < 60; i++) gr_capacity_release(worker(r, 1), r->q, 1);
    CHECK(gr_queue_held(&r->g, r->q) == 40);
    CHECK(atomic_load(&worker(r, 1)->credit[0]) == 0);
    gr_capacity_release(worker(r, 0), r->q, 40);
    CHECK(gr_queue_held(&r->g, r->q) == 0 && unheld(r) == 8);
    rig_free(r);
    rig *bounded = rig_new(1, 8);
    CHECK(!gr_exempt(&bounded->g, &b));
    rig_free(bounded);
}

/* Credits a worker caches are bounded, returned when it idles, and all of them when a
 * producer waits on the queue. */
static void test_credit_return(void)
{
    rig *r = rig_new(2, 256);
    int64_t keep = r->q->credit_keep;
    CHECK(keep == 16);
    for (int i = 0; i < 100; i++) CHECK(gr_try_charge(worker(r, 0), r->q, 1, false));
    for (int i = 0; i < 100; i++) gr_capacity_release(worker(r, 1), r->q, 1);
    int64_t c1 = atomic_load(&worker(r, 1)->credit[0]);
    CHECK_MSG(c1 <= 2 * keep, "worker 1 caches %lld credits (keep %lld)", (long long)c1,
              (long long)keep);
    gr_credits_return(worker(r, 1));
    gr_credits_return(worker(r, 0));
    CHECK(atomic_load(&r->q->free) == 256);
    CHECK(gr_try_charge(worker(r, 0), r->q, 1, false));
    atomic_store(&r->q->nwaiters, 1);
    CHECK(gr_capacity_release(worker(r, 0), r->q, 1));   /* tells the caller to wake them */
    CHECK(atomic_load(&worker(r, 0)->credit[0]) == 0 && atomic_load(&r->q->free) == 256);
    rig_free(r);
}

/* Workers charging and releasing at once: what the application sees in flight never
 * exceeds the capacity, and every unit of space is accounted for at the end. */
typedef struct hammer { rig *r; unsigned id; _Atomic(int) *inflight, *worst; } hammer;

static void *hammer_main(void *arg)
{
    hammer *h = arg;
    gr_worker *w = worker(h->r, h->id);
    uint64_t rng = 0x9e3779b97f4a7c15ull * (h->id + 1);
    int mine = 0;
    for (int step = 0; step < 200000; step++) {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        int n = 1 + (int)(rng % 3);
        if ((rng >> 8) % 2 && gr_try_charge(w, h->r->q, n, false)) {
            int now = atomic_fetch_add(h->inflight, n) + n;
            int worst = atomic_load(h->worst);
            while (now > worst && !atomic_compare_exchange_weak(h->worst, &worst, now)) {}
            mine += n;
        } else if (mine) {
            int k = 1 + (int)((rng >> 16) % (unsigned)mine);
            atomic_fetch_sub(h->inflight, k);
            gr_capacity_release(w, h->r->q, k);
            mine -= k;
        }
        if ((rng >> 24) % 1024 == 0) gr_credits_return(w);
    }
    atomic_fetch_sub(h->inflight, mine);
    gr_capacity_release(w, h->r->q, mine);
    return NULL;
}

static void test_concurrent_bound(void)
{
    static const uint32_t caps[] = {3, 40, 256};
    for (unsigned c = 0; c < sizeof caps / sizeof *caps; c++) {
        enum { N = 4 };
        rig *r = rig_new(N, caps[c]);
        _Atomic(int) inflight = 0, worst = 0;
        hammer h[N];
        pthread_t t[N];
        for (unsigned i = 0; i < N; i++) {
            h[i] = (hammer){r, i, &inflight, &worst};
            pthread_create(&t[i], NULL, hammer_main, &h[i]);
        }
        for (unsigned i = 0; i < N; i++) pthread_join(t[i], NULL);
        CHECK_MSG(atomic_load(&worst) <= (int)caps[c], "capacity %u: %d in flight", caps[c],
                  atomic_load(&worst));
        CHECK(atomic_load(&r->q->reserved_peak) <= (int64_t)caps[c]);
        CHECK_MSG(gr_queue_held(&r->g, r->q) == 0 && unheld(r) == (int64_t)caps[c],
                  "capacity %u: %lld unaccounted", caps[c], (long long)(caps[c] - unheld(r)));
        rig_free(r);
    }
}

/* ---- graph tests ----------------------------------------------------------------- */

/* A producer per worker -> "to-a" -> Shader a -> "to-b" -> Shader b. Packets between a
 * producer's reserve and a's start, or between a's start and b's start, are held by
 * the queue whatever the runtime's counters say, so they never exceed its capacity. */
typedef struct flow {
    uint32_t packets;
    _Atomic(int) in_a, in_b, worst_a, worst_b;
    _Atomic(uint64_t) sum;
} flow;

static void raise_to(_Atomic(int) *worst, int now)
{
    int cur = atomic_load(worst);
    while (now > cur && !atomic_compare_exchange_weak(worst, &cur, now)) {}
}

static void seed_each(gr_ctx *c)
{
    const unsigned *n = gr_config(c, NULL);
    for (unsigned i = 0; i < *n; i++) {
        gr_window w;
        gr_reserve_out_key(c, 0, 1, i, &w);
        gr_commit_out(c, 0, 1);
    }
}

static void produce(gr_ctx *c)
{
    flow *f = gr_user(c);
    const unsigned *n = gr_config(c, NULL);
    gr_window w;
    if (gr_reserve(c, 0, 1, &w) != GR_OK) return;
    gr_commit(c, 0, 1);
    for (uint32_t i = gr_instance(c); i < f->packets; i += *n) {
        gr_reserve_out(c, 0, 1, &w);
        raise_to(&f->worst_a, atomic_fetch_add(&f->in_a, 1) + 1);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void spin(uint32_t v)
{
    for (volatile uint32_t k = 0; k < (v * 2654435761u) % 64; k++) {}
}

static void stage_a(gr_ctx *c)
{
    flow *f = gr_user(c);
    atomic_fetch_sub(&f->in_a, 1);
    uint32_t v = *(const uint32_t *)gr_input(c, NULL);
    raise_to(&f->worst_b, atomic_fetch_add(&f->in_b, 1) + 1);
    spin(v);
    *(uint32_t *)gr_output(c, 0) = v;
}

static void stage_b(gr_ctx *c)
{
    flow *f = gr_user(c);
    atomic_fetch_sub(&f->in_b, 1);
    uint32_t v = *(const uint32_t *)gr_input(c, NULL);
    spin(v ^ 0x5555u);
    atomic_fetch_add(&f->sum, v);
}

/* gen (Thread, one instance per worker) -> a (Shader, its output bound as `a_out`) ->
 * b (Shader): what the application holds in each queue never exceeds its capacity. */
static void run_flow(unsigned workers, uint32_t cap_a, uint32_t cap_b, gr_bind_mode a_out)
{
    flow f = {.packets = 60000};
    gr_graph *g = gr_graph_create();
    int seeds = gr_queue(g, &(gr_queue_desc){.name = "seeds", .packet_bytes = 8, .capacity = 1,
                                             .subqueues = workers});
    int qa = gr_queue(g, &(gr_queue_desc){.name = "to-a", .packet_bytes = 8, .capacity = cap_a});
    int qb = gr_queue(g, &(gr_queue_desc){.name = "to-b", .packet_bytes = 8, .capacity = cap_b});
    int seed = gr_stage(g, &(gr_stage_desc){.name = "seed", .kind = GR_THREAD, .main = seed_each,
                                            .config = &workers, .config_bytes = sizeof workers});
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = produce,
                                           .user = &f, .config = &workers,
                                           .config_bytes = sizeof workers, .instanced = true});
    int a = gr_stage(g, &(gr_stage_desc){.name = "a", .kind = GR_SHADER, .main = stage_a, .user = &f});
    int b = gr_stage(g, &(gr_stage_desc){.name = "b", .kind = GR_SHADER, .main = stage_b, .user = &f});
    gr_bind(g, seed, GR_BIND_OUTPUT, seeds);
    gr_bind(g, gen, GR_BIND_INPUT, seeds);
    gr_bind(g, gen, GR_BIND_OUTPUT, qa);
    gr_bind(g, a, GR_BIND_INPUT, qa);
    gr_bind(g, a, a_out, qb);
    gr_bind(g, b, GR_BIND_INPUT, qb);
    gr_launch_opts o = {.workers = workers, .deadlock_seconds = 20};
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%u workers, capacities %u/%u, mode %d: %s", workers, cap_a, cap_b,
              a_out, gr_error(g));
    uint64_t n = f.packets;
    CHECK(atomic_load(&f.sum) == n * (n - 1) / 2);
    CHECK_MSG(atomic_load(&f.worst_a) <= (int)cap_a && atomic_load(&f.worst_b) <= (int)cap_b,
              "%u workers, mode %d: %d/%d in flight, capacities %u/%u", workers, a_out,
              atomic_load(&f.worst_a), atomic_load(&f.worst_b), cap_a, cap_b);
    const gr_stats *s = gr_get_stats(g);
    CHECK(s != NULL);
    for (int i = 0; s && i < s->nqueues; i++) {
        const gr_queue_stats *q = &s->queues[i];
        uint64_t space = (uint64_t)q->capacity * q->subqueues;
        CHECK_MSG(q->reserved_peak_packets <= space && q->peak_packets <= q->reserved_peak_packets,
                  "queue %s: peak %llu, reserved peak %llu, capacity %u", q->name,
                  (unsigned long long)q->peak_packets, (unsigned long long)q->reserved_peak_packets,
                  q->capacity);
    }
    gr_graph_destroy(g);
}

static void test_graph_bound(void)
{
    if (!gr_scheduler_bounded(NULL))
        SKIP("the %s scheduler has no backpressure: capacities are not bounds by design",
             gr_scheduler_default());
    for (unsigned w = 1; w <= 4; w++) {
        run_flow(w, 4, 3, GR_BIND_OUTPUT);      /* no credits kept: the pool alone */
        run_flow(w, 256, 64, GR_BIND_OUTPUT);   /* credits kept by every worker */
    }
}

/* An in-place forward holds its space in the output queue from before its task runs
 * (it was charged only at commit: a capacity-32 queue reached 18,817 packets). */
static void test_inplace_bound(void)
{
    if (!gr_scheduler_bounded(NULL))
        SKIP("the %s scheduler has no backpressure: capacities are not bounds by design",
             gr_scheduler_default());
    for (unsigned w = 1; w <= 4; w++) {
        run_flow(w, 32, 32, GR_BIND_INPLACE);
        run_flow(w, 256, 3, GR_BIND_INPLACE);
    }
}

/* ---- keyed pushes into a dynamic queue set ----------------------------------------- */

#define KEYS 64
#define KEY_CAP 8
#define ELEMS 4                        /* elements per pushed packet */
#define PUSHES 3                       /* elements a task pushes, all to one key */

typedef struct keyed {
    uint32_t packets;
    _Atomic(int) held[KEYS];           /* elements pushed and not yet consumed, per key */
    _Atomic(int) worst;
    _Atomic(uint64_t) consumed, sum;   /* elements consumed, and their values' sum */
} keyed;

static void keyed_source(gr_ctx *c)
{
    keyed *k = gr_user(c);
    gr_window w;
    for (uint32_t i = 0; i < k->packets; i++) {
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void keyed_pusher(gr_ctx *c)
{
    keyed *k = gr_user(c);
    uint32_t v = *(const uint32_t *)gr_input(c, NULL);
    uint32_t key = (v * 2654435761u) >> 26;          /* 0..63 */
    if (v % 2) {                                      /* all at once: gr_push_key_n */
        uint32_t same[PUSHES];
        for (int e = 0; e < PUSHES; e++) same[e] = v;
        gr_push_key_n(c, 0, key, same, PUSHES);
        raise_to(&k->worst, atomic_fetch_add(&k->held[key], PUSHES) + PUSHES);
        return;
    }
    for (int e = 0; e < PUSHES; e++) {
        gr_push_key(c, 0, key, &v);
        raise_to(&k->worst, atomic_fetch_add(&k->held[key], 1) + 1);
    }
}

static void keyed_sink(gr_ctx *c)
{
    keyed *k = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        uint32_t n = gr_count(w.mem);
        const uint32_t *v = (const uint32_t *)w.mem + 1;
        for (uint32_t i = 0; i < n; i++) {
            gr_assert(c, (v[i] * 2654435761u) >> 26 == gr_key(c));   /* its key's subqueue */
            atomic_fetch_add(&k->sum, v[i]);
        }
        atomic_fetch_sub(&k->held[gr_key(c)], (int)n);
        atomic_fetch_add(&k->consumed, n);
        spin(n * 977u);
        gr_commit(c, 0, 1);
    }
}

/* Shaders push to keys they pick while running (half the tasks one element at a time,
 * half all at once with gr_push_key_n, across packet boundaries: every element arrives
 * once, in its key's subqueue), so a subqueue may exceed its capacity
 * by what the tasks already running when it filled add: with W workers at most
 * capacity - 1 + W x (M + 1) packets, M = packets one task adds (README "Capacity").
 * Before the fix one subqueue of capacity 8 held 173-193 packets at 2 workers. */
static void run_keyed(unsigned workers)
{
    keyed k = {.packets = 40000};
    gr_graph *g = gr_graph_create();
    int src_q = gr_queue(g, &(gr_queue_desc){.name = "values", .packet_bytes = 4, .capacity = 32});
    int set = gr_queue(g, &(gr_queue_desc){.name = "keyed", .kind = GR_COLLECTION,
                                           .header_bytes = 4, .element_bytes = 4,
                                           .elements = ELEMS, .capacity = KEY_CAP,
                                           .dynamic_keys = true, .max_keys = KEYS});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD,
                                           .main = keyed_source, .user = &k});
    int push = gr_stage(g, &(gr_stage_desc){.name = "pusher", .kind = GR_SHADER,
                                            .main = keyed_pusher, .user = &k});
    int sink = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD,
                                            .main = keyed_sink, .user = &k, .instanced = true});
    gr_bind(g, src, GR_BIND_OUTPUT, src_q);
    gr_bind(g, push, GR_BIND_INPUT, src_q);
    gr_bind(g, push, GR_BIND_PUSH, set);
    gr_bind(g, sink, GR_BIND_INPUT, set);
    gr_launch_opts o = {.workers = workers, .deadlock_seconds = 20};
    gr_status st = gr_launch(g, &o, &src, 1);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%u workers: %s", workers, gr_error(g));
    CHECK(atomic_load(&k.consumed) == (uint64_t)k.packets * PUSHES);
    CHECK(atomic_load(&k.sum) == (uint64_t)k.packets * (k.packets - 1) / 2 * PUSHES);
    int per_task = (PUSHES + ELEMS - 1) / ELEMS + 1;
    int bound = KEY_CAP - 1 + (int)workers * (per_task + 1);
    CHECK_MSG(atomic_load(&k.worst) <= bound * ELEMS, "%u workers: %d elements held in one "
              "subqueue, bound %d packets of %d", workers, atomic_load(&k.worst), bound, ELEMS);
    const gr_stats *s = gr_get_stats(g);
    CHECK_MSG(s && s->queues[set].peak_subqueue_packets <= (uint32_t)bound,
              "%u workers: subqueue peak %u, bound %d", workers,
              s ? s->queues[set].peak_subqueue_packets : 0, bound);
    gr_graph_destroy(g);
}

static void test_keyed_push_bound(void)
{
    if (!gr_scheduler_bounded(NULL))
        SKIP("the %s scheduler has no backpressure: capacities are not bounds by design",
             gr_scheduler_default());
    for (unsigned w = 1; w <= 4; w++) run_keyed(w);
}

int main(void)
{
    RUN(test_bound_and_reuse);
    RUN(test_exemptions);
    RUN(test_credit_return);
    RUN(test_unbounded_mode);
    RUN(test_concurrent_bound);
    RUN(test_graph_bound);
    RUN(test_inplace_bound);
    RUN(test_keyed_push_bound);
    return check_finish();
}

/* Runtime benchmarks. Prints one line per figure: "name value unit".
 *
 *  - shader_packet_overhead_ns_Nw: a Thread stage commits packets to a Shader that does
 *    no work; wall time x workers / packets (runtime cost per packet per worker).
 *  - shader_packet_overhead_parallel_ns_Nw: the same with the producer instanced once per
 *    worker (a queue set seeds one instance per subqueue), so producing is parallel
 *    too and the figure is the runtime's cost per packet on each worker, not the single
 *    producer's rate.
 *  - shader_packet_overhead_independent_ns_Nw: the machine's floor for the figure above:
 *    N separate 1-worker graphs (producer -> empty Shader) run at once, sharing nothing
 *    but the machine. What _parallel_ adds over it is the cost of workers sharing one
 *    graph; what it adds over _ns_1w is the machine's (memory bandwidth, turbo, a VM's
 *    other tenants), which no runtime can remove.
 *  - thread_pingpong_round_trip_ns: two Thread stages bounce one packet through two
 *    capacity-1 queues; a round trip is two commits, two wake-ups and two switches.
 *  - machine_line_round_trip_ns: the control for every 2-worker figure, the machine's
 *    time to move a cache line to another thread and back (bench/line_round_trip.h).
 *  - launch_join_ms_Nw: gr_launch + gr_wait of a graph whose one Thread stage does
 *    nothing, N = 1, 2, 4, 8, 16 workers whatever the machine (minimum of 200): what a
 *    renderer's frame pays per run before and after its work (threads, set-up, join).
 *  - synthetic_*: Thread -> Shader -> Shader -> Thread with ~10 us of work per packet
 *    synthetic_machine_efficiency_Nw is the control: the same work split over N plain
 *    pthreads with no runtime at all, so efficiency lost there is the machine's.
 *    per Shader: time, parallel efficiency against 1 worker, and peak footprint.
 *  - sim_*: the simulator's cost model measured here (bench/sim_costs.h; --simulate,
 *    docs/many-cores.md): sim_line_ns (half the line round trip), sim_wake_ns (a
 *    broadcast to the sleeper running), sim_spin_ns (an idle worker's spins),
 *    sim_stream_ns (each line of a 16 KiB packet another thread just wrote),
 *    sim_handoff_ns (a contended mutex's release to its sleeping waiter running), and
 *    the GRAMPS_SIM_COST value that sets them.
 * GRAMPS_BENCH_MAX_WORKERS caps the worker sweep (default: hardware threads).
 * Arguments, if any, pick groups by name: overhead, parallel, pingpong, launch, simcost,
 * synthetic
 * (e.g. `bench_runtime parallel` to re-measure one figure under perf). */
#include "bench/line_round_trip.h"
#include "bench/sim_costs.h"
#include "gramps/gramps.h"
#include "tools/common/measure.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

typedef struct params { uint32_t packets; double work_us; double spin_per_us; } params;

static void produce(gr_ctx *c)
{
    params *p = gr_user(c);
    for (uint32_t i = 0; i < p->packets; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void empty_shader(gr_ctx *c) { (void)c; }

static double spin_work(double iters)
{
    volatile double x = 1.0;
    for (long i = 0; i < (long)iters; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

static void work_shader(gr_ctx *c)
{
    params *p = gr_user(c);
    spin_work(p->work_us * p->spin_per_us);
    *(uint32_t *)gr_output(c, 0) = *(uint32_t *)gr_input(c, NULL);
}

static void consume(gr_ctx *c)
{
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) gr_commit(c, 0, 1);
}

static double run_graph(gr_graph *g, unsigned workers)
{
    gr_launch_opts o = {.workers = workers};
    double t0 = io_now_s();
    if (gr_launch(g, &o, NULL, 0) != GR_OK || gr_wait(g) != GR_OK) {
        fprintf(stderr, "bench graph failed: %s\n", gr_error(g));
        exit(1);
    }
    return io_now_s() - t0;
}

static gr_graph *producer_to_empty_shader(params *p)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "q", .packet_bytes = 16, .capacity = 256});
    int s = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = produce, .user = p});
    int h = gr_stage(g, &(gr_stage_desc){.name = "nop", .kind = GR_SHADER, .main = empty_shader});
    gr_bind(g, s, GR_BIND_OUTPUT, q);
    gr_bind(g, h, GR_BIND_INPUT, q);
    return g;
}

static void bench_shader_overhead_independent(unsigned graphs)
{
    params p = {.packets = 2000000};
    gr_graph *g[64];
    if (graphs > 64) graphs = 64;
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        for (unsigned i = 0; i < graphs; i++) g[i] = producer_to_empty_shader(&p);
        double t0 = io_now_s();
        for (unsigned i = 0; i < graphs; i++)
            if (gr_launch(g[i], &(gr_launch_opts){.workers = 1}, NULL, 0) != GR_OK) {
                fprintf(stderr, "bench graph failed: %s\n", gr_error(g[i]));
                exit(1);
            }
        for (unsigned i = 0; i < graphs; i++) gr_wait(g[i]);
        double t = io_now_s() - t0;
        if (t < best) best = t;
        for (unsigned i = 0; i < graphs; i++) gr_graph_destroy(g[i]);
    }
    printf("shader_packet_overhead_independent_ns_%uw %.1f ns\n", graphs, best * 1e9 / p.packets);
}

static void bench_shader_overhead(unsigned workers)
{
    params p = {.packets = 2000000};
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        gr_graph *g = producer_to_empty_shader(&p);
        double t = run_graph(g, workers);
        if (t < best) best = t;
        gr_graph_destroy(g);
    }
    printf("shader_packet_overhead_ns_%uw %.1f ns\n", workers, best * 1e9 * workers / p.packets);
}

/* Seeds one packet per subqueue: each starts one instance of the producer. */
static void seed_instances(gr_ctx *c)
{
    const unsigned *n = gr_user(c);
    for (unsigned i = 0; i < *n; i++) {
        gr_window w;
        gr_reserve_out_key(c, 0, 1, i, &w);
        gr_commit_out(c, 0, 1);
    }
}

static void produce_share(gr_ctx *c)
{
    params *p = gr_user(c);
    const unsigned *n = gr_config(c, NULL);
    gr_window w;
    if (gr_reserve(c, 0, 1, &w) != GR_OK) return;
    gr_commit(c, 0, 1);
    for (uint32_t i = 0; i < p->packets / *n; i++) {
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void bench_shader_overhead_parallel(unsigned workers)
{
    params p = {.packets = 2000000};
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        gr_graph *g = gr_graph_create();
        int seeds = gr_queue(g, &(gr_queue_desc){.name = "seeds", .packet_bytes = 8, .capacity = 1,
                                                 .subqueues = workers});
        int q = gr_queue(g, &(gr_queue_desc){.name = "q", .packet_bytes = 16, .capacity = 256});
        int seed = gr_stage(g, &(gr_stage_desc){.name = "seed", .kind = GR_THREAD, .main = seed_instances,
                                                .user = &workers});
        int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = produce_share,
                                               .user = &p, .config = &workers,
                                               .config_bytes = sizeof workers, .instanced = true});
        int h = gr_stage(g, &(gr_stage_desc){.name = "nop", .kind = GR_SHADER, .main = empty_shader});
        gr_bind(g, seed, GR_BIND_OUTPUT, seeds);
        gr_bind(g, gen, GR_BIND_INPUT, seeds);
        gr_bind(g, gen, GR_BIND_OUTPUT, q);
        gr_bind(g, h, GR_BIND_INPUT, q);
        double t = run_graph(g, workers);
        if (t < best) best = t;
        gr_graph_destroy(g);
    }
    printf("shader_packet_overhead_parallel_ns_%uw %.1f ns\n", workers,
           best * 1e9 * workers / (p.packets / workers * workers));
}

static void pingpong(gr_ctx *c)
{
    params *p = gr_user(c);
    bool starter = gr_instance(c) == 0 && *(int *)gr_config(c, NULL) == 0;
    gr_window w;
    if (starter) { gr_reserve_out(c, 0, 1, &w); gr_commit_out(c, 0, 1); }
    for (uint32_t i = 0; i < p->packets; i++) {
        if (gr_reserve(c, 0, 1, &w) != GR_OK) return;
        gr_commit(c, 0, 1);
        if (starter && i + 1 == p->packets) return;
        gr_reserve_out(c, 0, 1, &w);
        gr_commit_out(c, 0, 1);
    }
}

static void bench_pingpong(void)
{
    params p = {.packets = 200000};
    gr_graph *g = gr_graph_create();
    int a = gr_queue(g, &(gr_queue_desc){.name = "ping", .packet_bytes = 8, .capacity = 1});
    int b = gr_queue(g, &(gr_queue_desc){.name = "pong", .packet_bytes = 8, .capacity = 1});
    int zero = 0, one = 1;
    int s0 = gr_stage(g, &(gr_stage_desc){.name = "A", .kind = GR_THREAD, .main = pingpong, .user = &p,
                                          .config = &zero, .config_bytes = sizeof zero});
    int s1 = gr_stage(g, &(gr_stage_desc){.name = "B", .kind = GR_THREAD, .main = pingpong, .user = &p,
                                          .config = &one, .config_bytes = sizeof one});
    gr_bind(g, s0, GR_BIND_OUTPUT, a);
    gr_bind(g, s1, GR_BIND_INPUT, a);
    gr_bind(g, s1, GR_BIND_OUTPUT, b);
    gr_bind(g, s0, GR_BIND_INPUT, b);
    int runnable[] = {s0, s1};
    gr_launch_opts o = {.workers = 1};
    double t0 = io_now_s();
    if (gr_launch(g, &o, runnable, 2) != GR_OK || gr_wait(g) != GR_OK) {
        fprintf(stderr, "pingpong failed: %s\n", gr_error(g));
        exit(1);
    }
    printf("thread_pingpong_round_trip_ns %.1f ns\n", (io_now_s() - t0) * 1e9 / p.packets);
    gr_graph_destroy(g);
}

static double calibrate_spin(void)
{
    double t0 = io_now_s();
    spin_work(2e7);
    return 2e7 / ((io_now_s() - t0) * 1e6);
}

typedef struct plain_share { const params *p; uint32_t packets; } plain_share;

static void *plain_work(void *arg)
{
    const plain_share *sh = arg;
    for (uint32_t i = 0; i < 2 * sh->packets; i++) spin_work(sh->p->work_us * sh->p->spin_per_us);
    return NULL;
}

/* The synthetic graph's work (two Shader calls per packet) on plain pthreads, no runtime. */
static double plain_threads(unsigned n, const params *p)
{
    pthread_t t[64];
    plain_share sh[64];
    if (n > 64) n = 64;
    double t0 = io_now_s();
    for (unsigned i = 0; i < n; i++) {
        sh[i] = (plain_share){p, p->packets / n + (i < p->packets % n)};
        if (pthread_create(&t[i], NULL, plain_work, &sh[i]) != 0) exit(1);
    }
    for (unsigned i = 0; i < n; i++) pthread_join(t[i], NULL);
    return io_now_s() - t0;
}

static double synthetic(unsigned workers, params *p, unsigned long long *footprint)
{
    gr_graph *g = gr_graph_create();
    int q[3];
    const char *names[] = {"to-s1", "to-s2", "to-sink"};
    for (int i = 0; i < 3; i++)
        q[i] = gr_queue(g, &(gr_queue_desc){.name = names[i], .packet_bytes = 64, .capacity = 64});
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = produce, .user = p});
    int s1 = gr_stage(g, &(gr_stage_desc){.name = "s1", .kind = GR_SHADER, .main = work_shader, .user = p});
    int s2 = gr_stage(g, &(gr_stage_desc){.name = "s2", .kind = GR_SHADER, .main = work_shader, .user = p});
    int sink = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = consume});
    gr_bind(g, gen, GR_BIND_OUTPUT, q[0]);
    gr_bind(g, s1, GR_BIND_INPUT, q[0]);
    gr_bind(g, s1, GR_BIND_OUTPUT, q[1]);
    gr_bind(g, s2, GR_BIND_INPUT, q[1]);
    gr_bind(g, s2, GR_BIND_OUTPUT, q[2]);
    gr_bind(g, sink, GR_BIND_INPUT, q[2]);
    double t = run_graph(g, workers);
    const gr_stats *st = gr_get_stats(g);
    *footprint = st->peak_footprint_bytes;
    double app = 0, idle = 0, queue = 0, sched = 0;
    for (unsigned i = 0; i < st->workers; i++) {
        app += st->per_worker[i].app_ms;
        idle += st->per_worker[i].idle_ms;
        queue += st->per_worker[i].queue_ms;
        sched += st->per_worker[i].sched_ms;
    }
    /* where the time goes, summed over workers: application time above the 1-worker
     * figure means the work itself ran slower (shared caches, SMT, a busy host), not
     * the runtime */
    printf("synthetic_app_ms_%uw %.1f ms\n", workers, app);
    printf("synthetic_no_work_ms_%uw %.1f ms\n", workers, idle);
    printf("synthetic_queue_ms_%uw %.1f ms\n", workers, queue);
    printf("synthetic_sched_ms_%uw %.1f ms\n", workers, sched);
    gr_graph_destroy(g);
    return t;
}

static void bench_launch_join(unsigned workers)
{
    double best = 1e9;
    for (int i = 0; i < 200; i++) {
        gr_graph *g = gr_graph_create();
        int s = gr_stage(g, &(gr_stage_desc){.name = "nothing", .kind = GR_THREAD,
                                             .main = empty_shader});
        int start[] = {s};
        double t0 = io_now_s();
        if (gr_launch(g, &(gr_launch_opts){.workers = workers}, start, 1) != GR_OK ||
            gr_wait(g) != GR_OK) {
            fprintf(stderr, "launch bench failed: %s\n", gr_error(g));
            exit(1);
        }
        double t = io_now_s() - t0;
        if (t < best) best = t;
        gr_graph_destroy(g);
    }
    printf("launch_join_ms_%uw %.3f ms\n", workers, best * 1e3);
}

static int nselected;
static char **selected;

static bool wanted(const char *group)
{
    if (!nselected) return true;
    for (int i = 0; i < nselected; i++)
        if (!strcmp(selected[i], group)) return true;
    return false;
}

static void bench_sim_costs(void)
{
    double line = bench_line_round_trip_ns() / 2, wake = sim_wake_ns(), spin = sim_spin_ns();
    double stream = sim_stream_ns(), handoff = sim_handoff_ns();
    printf("sim_line_ns %.1f ns\nsim_wake_ns %.1f ns\nsim_spin_ns %.1f ns\n", line, wake, spin);
    printf("sim_stream_ns %.1f ns\nsim_handoff_ns %.1f ns\n", stream, handoff);
    printf("sim_cost_setting GRAMPS_SIM_COST=line=%.0f,stream=%.1f,wake=%.0f,spin=%.0f,"
           "handoff=%.0f\n", line, stream, wake, spin, handoff);
}

int main(int argc, char **argv)
{
    static const char *groups[] = {"overhead", "parallel", "pingpong", "launch", "simcost",
                                   "synthetic"};
    for (int i = 1; i < argc; i++) {
        bool known = false;
        for (size_t k = 0; k < sizeof groups / sizeof *groups; k++) known |= !strcmp(argv[i], groups[k]);
        if (!known) {
            fprintf(stderr, "bench_runtime: unknown group '%s' (overhead, parallel, pingpong, launch, "
                            "simcost, synthetic)\n", argv[i]);
            return 2;
        }
    }
    nselected = argc - 1;
    selected = argv + 1;
    long hw = sysconf(_SC_NPROCESSORS_ONLN);
    const char *cap = getenv("GRAMPS_BENCH_MAX_WORKERS");
    unsigned maxw = (unsigned)(cap ? atol(cap) : hw);
    if (wanted("overhead")) {
        bench_shader_overhead(1);
        if (maxw >= 2) bench_shader_overhead(2);
    }
    if (wanted("parallel")) {
        for (unsigned w = 1; w <= maxw; w *= 2) bench_shader_overhead_parallel(w);
        for (unsigned w = 2; w <= maxw; w *= 2) bench_shader_overhead_independent(w);
    }
    if (wanted("pingpong")) {
        bench_pingpong();
        if (maxw >= 2) printf("machine_line_round_trip_ns %.1f ns\n", bench_line_round_trip_ns());
    }
    if (wanted("launch"))
        for (unsigned w = 1; w <= 16; w *= 2) bench_launch_join(w);
    if (wanted("simcost")) bench_sim_costs();
    if (!wanted("synthetic")) return 0;
    params p = {.packets = 40000, .work_us = 10.0, .spin_per_us = calibrate_spin()};
    unsigned long long fp;
    double t1 = synthetic(1, &p, &fp);
    printf("synthetic_time_ms_1w %.2f ms\n", t1 * 1e3);
    printf("synthetic_peak_footprint_bytes_1w %llu bytes\n", fp);
    for (unsigned w = 2; w <= maxw; w *= 2) {
        double t = synthetic(w, &p, &fp);
        printf("synthetic_time_ms_%uw %.2f ms\n", w, t * 1e3);
        printf("synthetic_speedup_%uw %.2f x\n", w, t1 / t);
        printf("synthetic_efficiency_%uw %.1f %%\n", w, 100.0 * t1 / (t * w));
        printf("synthetic_peak_footprint_bytes_%uw %llu bytes\n", w, fp);
    }
    double plain1 = plain_threads(1, &p);
    for (unsigned w = 2; w <= maxw; w *= 2)
        printf("synthetic_machine_efficiency_%uw %.1f %%\n", w,
               100.0 * plain1 / (plain_threads(w, &p) * w));
    return 0;
}

/* Tests of the scheduling policies (gramps/scheduler.h): selection by name and its
 * errors, the same results under every policy, and what makes each one itself:
 * Task-Stealing preempts a Thread stage at every committed packet, Breadth-First runs a
 * whole stage before the next (so a queue holds everything its producer made), Static
 * runs each stage on one worker only and its METIS partition beats round-robin on an
 * unbalanced graph (compared on the heaviest worker's load, never on wall time). */
#include "gramps/gramps.h"
#include "gramps/partition.h"
#include "tests/check.h"
#include "tests/runtime/run_graph.h"
#include "tests/runtime/squares_app.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N 2000

static gr_graph *run(const char *sched, unsigned workers, squares_app *a, bool journal,
                     const gr_profile *prof)
{
    *a = (squares_app){.n = N};
    gr_graph *g = squares_graph(a);
    int start[] = {0, 2};
    gr_launch_opts o = {.workers = workers, .scheduler = sched, .journal = journal,
                        .profile = prof};
    gr_status st = gr_launch(g, &o, start, 2);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s, %u workers: %s", sched, workers, gr_error(g));
    return g;
}

static const uint64_t expected = SQUARES_SUM(N);

static void test_unknown_name(void)
{
    CHECK(gr_scheduler_known("static") && !gr_scheduler_known("fifo") && !gr_scheduler_known(""));
    squares_app a;
    gr_graph *g = squares_graph(&a);
    int start[] = {0, 2};
    gr_launch_opts o = {.workers = 1, .scheduler = "round-robin"};
    CHECK(gr_launch(g, &o, start, 2) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "round-robin") && strstr(gr_error(g), "task-stealing"),
              "message: %s", gr_error(g));
    gr_graph_destroy(g);
}

/* Every policy computes the same sum at 1, 2 and 3 workers, and says it ran. */
static void test_same_results(void)
{
    for (int k = 0; k < POLICIES; k++)
        for (unsigned w = 1; w <= 3; w++) {
            squares_app a;
            gr_graph *g = run(every_policy[k], w, &a, false, NULL);
            CHECK_MSG(a.sum == expected, "%s, %u workers: sum %llu", every_policy[k], w,
                      (unsigned long long)a.sum);
            const gr_stats *st = gr_get_stats(g);
            CHECK(st && !strcmp(st->scheduler, every_policy[k]) &&
                  !strcmp(gr_scheduler_of(g), every_policy[k]));
            gr_graph_destroy(g);
        }
}

/* Work-first: the producer gives its worker back after every packet it commits. Under
 * GRAMPS it runs on past the low watermark instead. */
static void test_task_stealing_work_first(void)
{
    squares_app a;
    gr_graph *g = run("task-stealing", 1, &a, false, NULL);
    const gr_stats *st = gr_get_stats(g);
    CHECK_MSG(st && st->stages[0].preemptions >= N, "src preempted %llu times for %d packets",
              st ? (unsigned long long)st->stages[0].preemptions : 0ull, N);
    gr_graph_destroy(g);
    g = run("gramps", 1, &a, false, NULL);
    st = gr_get_stats(g);
    /* torture builds preempt every policy at every reserve and commit */
    const char *torture = getenv("GRAMPS_TORTURE");
    CHECK(st && (st->stages[0].preemptions < N / 4 || (torture && strcmp(torture, "0"))));
    gr_graph_destroy(g);
}

/* Shader for test_idle_workers_steal: marks its worker, then waits (up to 5 s, once)
 * until a second worker has run one of these tasks too. */
typedef struct meeting { _Atomic(uint64_t) workers; atomic_bool timed_out; } meeting;

static void meet(gr_ctx *c)
{
    meeting *m = gr_user(c);
    atomic_fetch_or(&m->workers, (uint64_t)1 << gr_worker_id(c));
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (__builtin_popcountll(atomic_load(&m->workers)) < 2 && !atomic_load(&m->timed_out)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= 5) atomic_store(&m->timed_out, true);
    }
}

/* Stages that never get a packet: a source that makes none and a chain of Shaders. */
static void make_nothing(gr_ctx *c) { (void)c; }

static int add_idle_chain(gr_graph *g, int length)
{
    int src_id = gr_stage(g, &(gr_stage_desc){.name = "nothing", .kind = GR_THREAD,
                                              .main = make_nothing});
    int from = src_id;
    for (int i = 0; i < length; i++) {
        char name[16];
        snprintf(name, sizeof name, "idle%d", i);
        int q = gr_queue(g, &(gr_queue_desc){.name = name, .packet_bytes = 4});
        int s = gr_stage(g, &(gr_stage_desc){.name = name, .kind = GR_SHADER,
                                             .main = make_nothing});
        gr_bind(g, from, GR_BIND_OUTPUT, q);
        gr_bind(g, s, GR_BIND_INPUT, q);
        from = s;
    }
    return src_id;
}

/* The policies that steal hand an idle worker the tasks a busy one made: one worker runs
 * the producer, whose first task blocks until another worker has run a task, which it
 * can only have taken from the producer's worker (the producer is a single instance).
 * With 70 idle stages ranked below it, the tasks' deque lies past the first word of the
 * workers' ready bits. */
static void idle_workers_steal(const char *sched)
{
    for (unsigned workers = 2; workers <= 4; workers += 2)
        for (int idle = 0; idle <= 70; idle += 70) {
            squares_app a = {.n = 64};
            meeting m = {0};
            gr_graph *g = gr_graph_create();
            int q = gr_queue(g, &(gr_queue_desc){.name = "numbers", .packet_bytes = 4,
                                                 .capacity = 64});
            int s0 = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD,
                                                  .main = squares_source, .user = &a});
            int s1 = gr_stage(g, &(gr_stage_desc){.name = "meet", .kind = GR_SHADER,
                                                  .main = meet, .user = &m,
                                                  .priority = 1000});
            gr_bind(g, s0, GR_BIND_OUTPUT, q);
            gr_bind(g, s1, GR_BIND_INPUT, q);
            int start[] = {s0, add_idle_chain(g, idle)};
            gr_launch_opts o = {.workers = workers, .scheduler = sched};
            gr_status st = gr_launch(g, &o, start, 2);
            if (st == GR_OK) st = gr_wait(g);
            CHECK_MSG(st == GR_OK, "%s: %s", sched, gr_error(g));
            CHECK_MSG(!atomic_load(&m.timed_out),
                      "%s, %u workers, %d idle stages: no other worker took a task in 5 s",
                      sched, workers, idle);
            gr_graph_destroy(g);
        }
}

static void test_idle_workers_steal(void)
{
    for (int k = 0; k < POLICIES; k++)
        if (strcmp(every_policy[k], "static")) idle_workers_steal(every_policy[k]);
}

/* One stage at a time: the producer finishes before its consumer starts, so its queue
 * once held every packet (capacity 4 notwithstanding), at any worker count. */
static void test_breadth_first_whole_stages(void)
{
    for (unsigned w = 1; w <= 2; w++) {
        squares_app a;
        gr_graph *g = run("breadth-first", w, &a, false, NULL);
        const gr_stats *st = gr_get_stats(g);
        CHECK_MSG(st && st->queues[0].reserved_peak_packets == N && st->queues[1].reserved_peak_packets == N,
                  "%u workers: reserved peaks %llu, %llu of %d", w,
                  st ? (unsigned long long)st->queues[0].reserved_peak_packets : 0ull,
                  st ? (unsigned long long)st->queues[1].reserved_peak_packets : 0ull, N);
        gr_graph_destroy(g);
    }
}

/* Parses the journal's stage slices: the worker each stage ran on, -2 for several. */
static void workers_per_stage(gr_graph *g, int owner[3])
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gr_journal_write(g, f);
    fclose(f);
    static const char *names[3] = {"\"src\"", "\"square\"", "\"sink\""};
    for (int s = 0; s < 3; s++) {
        owner[s] = -1;
        for (char *p = strstr(buf, names[s]); p; p = strstr(p + 1, names[s])) {
            char *tid = strstr(p, "\"tid\": ");
            char *end = strchr(p, '}');
            if (!tid || !end || tid > end || !strstr(p, "\"ph\": \"X\"")) continue;
            int w = atoi(tid + 7);
            owner[s] = owner[s] == -1 || owner[s] == w ? w : -2;
        }
    }
    free(buf);
}

/* No stealing: each stage's tasks all ran on one worker, with or without a profile. */
static void test_static_stays_put(void)
{
    squares_app a;
    gr_graph *prof_run = run("gramps", 2, &a, false, NULL);
    gr_profile *p = gr_profile_take(prof_run);
    CHECK(p != NULL);
    gr_graph_destroy(prof_run);
    for (int with = 0; with < 2; with++) {
        gr_graph *g = run("static", 2, &a, true, with ? p : NULL);
        CHECK(a.sum == expected);
        int owner[3];
        workers_per_stage(g, owner);
        for (int s = 0; s < 3; s++)
            CHECK_MSG(owner[s] >= 0, "stage %d ran on %s", s, owner[s] == -2 ? "several workers" : "none");
        gr_graph_destroy(g);
    }
    gr_profile_free(p);
}

/* An unbalanced chain: two heavy stages that round-robin puts on the same worker. METIS
 * balances the load; the heaviest worker's load bounds a run without stealing. */
static void test_partition_beats_round_robin(void)
{
    enum { n = 8, parts = 2 };
    int64_t load[n] = {100, 1, 1, 1, 100, 1, 1, 1};
    gr_part_edge e[n - 1];
    for (int i = 0; i + 1 < n; i++) e[i] = (gr_part_edge){i, i + 1, 10};
    int part[n], rr[n];
    CHECK(gr_partition(n, load, e, n - 1, parts, part) == 0);
    for (int i = 0; i < n; i++) rr[i] = i % parts;
    int64_t metis = gr_partition_max_load(n, load, part, parts);
    int64_t robin = gr_partition_max_load(n, load, rr, parts);
    CHECK_MSG(robin == 202 && metis <= 110, "heaviest worker: METIS %lld, round-robin %lld",
              (long long)metis, (long long)robin);
    /* fewer stages than workers: one each */
    CHECK(gr_partition(2, load, e, 1, 4, part) == 0 && part[0] != part[1]);
}

/* Few stages per worker, one of them dominant (the raster graph at 16 workers: 16 IA/VS/bin
 * groups and one tile stage): every part gets a vertex when it can, the dominant vertex
 * alone bounds the heaviest part, and nothing is printed on stdout (METIS's recursive
 * bisection printed "Cannot bisect a graph with 0 vertices" into the program's output). */
static void test_partition_few_stages_per_worker(void)
{
    enum { n = 49, parts = 16 };
    int64_t load[n];
    gr_part_edge e[n - 1];
    for (int i = 0; i < n; i++) load[i] = i == n - 1 ? 100000 : 10 + i % 3;
    for (int i = 0; i + 1 < n; i++) e[i] = (gr_part_edge){i, i % 3 == 2 ? n - 1 : i + 1, 10};
    int part[n];
    fflush(stdout);
    int saved = dup(1);
    FILE *capture = tmpfile();
    CHECK(saved >= 0 && capture && dup2(fileno(capture), 1) >= 0);
    int rc = gr_partition(n, load, e, n - 1, parts, part);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    long printed = ftell(capture) < 0 ? 0 : (fseek(capture, 0, SEEK_END), ftell(capture));
    fclose(capture);
    CHECK(rc == 0);
    CHECK_MSG(printed == 0, "the partitioner printed %ld bytes on stdout", printed);
    bool used[parts] = {false};
    for (int i = 0; i < n; i++) {
        CHECK(part[i] >= 0 && part[i] < parts);
        if (part[i] >= 0 && part[i] < parts) used[part[i]] = true;
    }
    for (int p = 0; p < parts; p++) CHECK_MSG(used[p], "part %d is empty", p);
    CHECK(gr_partition_max_load(n, load, part, parts) == 100000);
}

int main(void)
{
    RUN(test_unknown_name);
    RUN(test_partition_few_stages_per_worker);
    RUN(test_same_results);
    RUN(test_task_stealing_work_first);
    RUN(test_idle_workers_steal);
    RUN(test_breadth_first_whole_stages);
    RUN(test_static_stays_put);
    RUN(test_partition_beats_round_robin);
    return check_finish();
}

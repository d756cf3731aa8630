/* The worker threads outlive their graph (gramps/thread_pool.c), seen from the stages:
 * later launches run on the same kernel threads, a pinned run leaves no thread pinned
 * for the next one, a forked child (which has none of its parent's parked threads) can
 * still launch, gr_release_parked_threads ends them without breaking later runs, and
 * gr_parallel runs its parts at once. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TASKS 64
#define MAX_SEEN 256

/* What each task saw: its kernel thread and how many CPUs it may run on. */
typedef struct seen {
    uint32_t n;
    _Atomic(uint32_t) next;
    pid_t tid[MAX_SEEN];
    int cpus[MAX_SEEN];
} seen;

static void src(gr_ctx *c)
{
    for (uint32_t i = 0; i < TASKS; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void note(gr_ctx *c)
{
    seen *s = gr_user(c);
    uint32_t k = atomic_fetch_add(&s->next, 1);
    if (k >= MAX_SEEN) return;
    cpu_set_t set;
    s->tid[k] = gettid();
    s->cpus[k] = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

static bool run(unsigned workers, bool pin, seen *s)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "numbers", .packet_bytes = 4});
    int s0 = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = src});
    int s1 = gr_stage(g, &(gr_stage_desc){.name = "note", .kind = GR_SHADER, .main = note,
                                          .user = s});
    gr_bind(g, s0, GR_BIND_OUTPUT, q);
    gr_bind(g, s1, GR_BIND_INPUT, q);
    int start[] = {s0};
    gr_status st = gr_launch(g, &(gr_launch_opts){.workers = workers, .pin = pin}, start, 1);
    if (st == GR_OK) st = gr_wait(g);
    if (st != GR_OK) fprintf(stderr, "  run failed: %s\n", gr_error(g));
    gr_graph_destroy(g);
    s->n = atomic_load(&s->next) < MAX_SEEN ? atomic_load(&s->next) : MAX_SEEN;
    return st == GR_OK;
}

static int distinct_tids(const pid_t *tids, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        bool dup = false;
        for (int j = 0; j < i && !dup; j++) dup = tids[j] == tids[i];
        d += !dup;
    }
    return d;
}

/* 20 runs of 4 workers: their tasks ran on at most 4 kernel threads, not one set per run. */
static void test_workers_reused(void)
{
    pid_t tids[20 * MAX_SEEN];
    int n = 0;
    for (int r = 0; r < 20; r++) {
        seen s = {0};
        CHECK(run(4, false, &s));
        for (uint32_t i = 0; i < s.n; i++) tids[n++] = s.tid[i];
    }
    int d = distinct_tids(tids, n);
    CHECK_MSG(d <= 4, "20 runs of 4 workers ran tasks on %d kernel threads", d);
}

static int process_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

/* After a pinned run, the next run's workers may run anywhere the process may. */
static void test_pin_undone(void)
{
    int all = process_cpus();
    if (all < 2) SKIP("the process may run on %d CPU", all);
    seen pinned = {0}, after = {0};
    CHECK(run(2, true, &pinned));
    uint32_t on_one = 0, on_all = 0;
    for (uint32_t i = 0; i < pinned.n; i++) on_one += pinned.cpus[i] == 1;
    CHECK_MSG(on_one == pinned.n, "%u of %u tasks of a pinned run on one CPU", on_one, pinned.n);
    CHECK(run(2, false, &after));
    for (uint32_t i = 0; i < after.n; i++) on_all += after.cpus[i] == all;
    CHECK_MSG(on_all == after.n, "%u of %u tasks of the next, unpinned run may use all %d CPUs",
              on_all, after.n, all);
}

/* The child of a fork after runs that parked threads launches on threads of its own
 * (given 10 s, then SIGALRM ends it: a hang fails instead of blocking the suite). */
static void test_forked_child_launches(void)
{
    seen s = {0};
    CHECK(run(2, false, &s));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        seen c = {0};
        _exit(run(2, false, &c) && c.n == TASKS ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

static void test_release_then_run(void)
{
    seen s = {0};
    CHECK(run(3, false, &s));
    gr_release_parked_threads();
    gr_release_parked_threads();          /* nothing parked: does nothing */
    seen t = {0};
    CHECK(run(3, false, &t) && t.n == TASKS);
}

/* gr_parallel: every part runs once, with its index and the count, at once (each part
 * waits, up to 5 s, until all have started: parts run one after another would time out). */
typedef struct parts_seen {
    _Atomic(uint32_t) runs[40], started;
    unsigned n;
    atomic_bool wrong_n, timed_out;
} parts_seen;

static void note_part(void *arg, unsigned i, unsigned n)
{
    parts_seen *p = arg;
    if (n != p->n || i >= 40) { atomic_store(&p->wrong_n, true); return; }
    atomic_fetch_add(&p->runs[i], 1);
    atomic_fetch_add(&p->started, 1);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(&p->started) < n && !atomic_load(&p->timed_out)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= 5) atomic_store(&p->timed_out, true);
        sched_yield();
    }
}

static void test_parallel_parts(void)
{
    const unsigned counts[] = {1, 2, 5, 40};
    for (int k = 0; k < 4; k++) {
        parts_seen p = {.n = counts[k]};
        gr_parallel(counts[k], note_part, &p);
        CHECK(!atomic_load(&p.wrong_n) && !atomic_load(&p.timed_out));
        for (unsigned i = 0; i < counts[k]; i++)
            CHECK_MSG(atomic_load(&p.runs[i]) == 1, "%u parts: part %u ran %u times",
                      counts[k], i, atomic_load(&p.runs[i]));
    }
    gr_parallel(0, note_part, NULL);            /* no parts: nothing runs */
}

int main(void)
{
    RUN(test_workers_reused);
    RUN(test_pin_undone);
    RUN(test_forked_child_launches);
    RUN(test_release_then_run);
    RUN(test_parallel_parts);
    gr_release_parked_threads();
    return check_finish();
}

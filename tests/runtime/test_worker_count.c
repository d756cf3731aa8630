/* gr_worker_count, the one answer to "how many workers": a requested count wins, then
 * GRAMPS_NUM_THREADS (0 there: one worker, synchronous), then one per online CPU, never
 * more than GR_MAX_WORKERS; a run launched with workers = 0 has exactly that many, and
 * gr_parallel_parts asks the same. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdlib.h>
#include <unistd.h>

static void noop(gr_ctx *c) { (void)c; }

/* The workers a run of a one-stage graph launched with workers = 0 had. */
static unsigned launched_workers(void)
{
    gr_graph *g = gr_graph_create();
    gr_stage(g, &(gr_stage_desc){.name = "only", .kind = GR_THREAD, .main = noop});
    int first = 0;
    unsigned n = 0;
    if (gr_launch(g, &(gr_launch_opts){0}, &first, 1) == GR_OK && gr_wait(g) == GR_OK)
        n = gr_get_stats(g)->workers;
    gr_graph_destroy(g);
    return n;
}

static void test_requested_count_wins(void)
{
    setenv("GRAMPS_NUM_THREADS", "3", 1);
    CHECK(gr_worker_count(5) == 5);
    CHECK(gr_worker_count(1) == 1);
    CHECK(gr_worker_count(GR_MAX_WORKERS + 1) == GR_MAX_WORKERS);
    unsetenv("GRAMPS_NUM_THREADS");
}

static void test_environment_then_cpus(void)
{
    setenv("GRAMPS_NUM_THREADS", "3", 1);
    CHECK(gr_worker_count(0) == 3);
    setenv("GRAMPS_NUM_THREADS", "0", 1);          /* synchronous: one worker */
    CHECK(gr_worker_count(0) == 1);
    setenv("GRAMPS_NUM_THREADS", "100000", 1);
    CHECK(gr_worker_count(0) == GR_MAX_WORKERS);
    unsetenv("GRAMPS_NUM_THREADS");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK(gr_worker_count(0) == (unsigned)(cpus > 1 ? (cpus < GR_MAX_WORKERS ? cpus : GR_MAX_WORKERS) : 1));
}

/* What programs size per worker (graph files' $workers, clearing parts) and the run's
 * real worker count agree when GRAMPS_NUM_THREADS is set. */
static void test_launch_agrees(void)
{
    static const char *counts[] = {"3", "0"};
    for (int i = 0; i < 2; i++) {
        setenv("GRAMPS_NUM_THREADS", counts[i], 1);
        unsigned n = launched_workers();
        CHECK_MSG(n == gr_worker_count(0), "GRAMPS_NUM_THREADS=%s: ran %u workers, "
                  "gr_worker_count says %u", counts[i], n, gr_worker_count(0));
        CHECK(gr_parallel_parts(0) == (n < GR_PARALLEL_MAX_PARTS ? n : GR_PARALLEL_MAX_PARTS));
    }
    unsetenv("GRAMPS_NUM_THREADS");
}

int main(void)
{
    RUN(test_requested_count_wins);
    RUN(test_environment_then_cpus);
    RUN(test_launch_agrees);
    return check_finish();
}

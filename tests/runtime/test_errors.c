/* Bad graphs and bad calls give an error that names the stage or queue, never a crash;
 * a graph that deadlocks is reported with its queue states instead of hanging. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <math.h>
#include <string.h>
#include <time.h>

static void noop(gr_ctx *c) { (void)c; }

static bool error_mentions(gr_graph *g, const char *what)
{
    bool ok = strstr(gr_error(g), what) != NULL;
    if (!ok) fprintf(stderr, "  error was: %s\n", gr_error(g));
    return ok;
}

static gr_status launch_and_wait(gr_graph *g, double deadlock_s)
{
    gr_launch_opts o = {.workers = 2, .deadlock_seconds = deadlock_s};
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st != GR_OK) return st;
    return gr_wait(g);
}

static void test_unbound_queue(void)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "orphan", .packet_bytes = 8});
    int s = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = noop});
    gr_bind(g, s, GR_BIND_OUTPUT, q);
    CHECK(launch_and_wait(g, 5) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "orphan") && error_mentions(g, "no consumer"));
    gr_graph_destroy(g);

    g = gr_graph_create();
    q = gr_queue(g, &(gr_queue_desc){.name = "nobody-writes", .packet_bytes = 8});
    s = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = noop});
    int src = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = noop});
    (void)src;
    gr_bind(g, s, GR_BIND_INPUT, q);
    CHECK(launch_and_wait(g, 5) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "nobody-writes") && error_mentions(g, "no producer"));
    gr_graph_destroy(g);
}

static void expect_blame(gr_graph *g, int stage, int queue)
{
    int s, q;
    gr_error_blame(g, &s, &q);
    CHECK_MSG(s == stage && q == queue, "blamed stage %d queue %d, not %d and %d (%s)", s, q,
              stage, queue, gr_error(g));
}

/* A launch check records the stage and queue it is about (gr_error_blame): the queue
 * without a consumer; in an ordered chain, the Shader's unordered output (the queue
 * inserted into the chain), not the chain's head. */
static void test_errors_blame_their_subject(void)
{
    gr_graph *g = gr_graph_create();
    expect_blame(g, GR_INVALID, GR_INVALID);
    int q = gr_queue(g, &(gr_queue_desc){.name = "orphan", .packet_bytes = 8});
    int s = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = noop});
    gr_bind(g, s, GR_BIND_OUTPUT, q);
    CHECK(launch_and_wait(g, 5) == GR_ERR_INVALID);
    expect_blame(g, GR_INVALID, q);
    gr_graph_destroy(g);

    g = gr_graph_create();
    int head = gr_queue(g, &(gr_queue_desc){.name = "head", .packet_bytes = 8, .ordered = true});
    int mid = gr_queue(g, &(gr_queue_desc){.name = "inserted", .packet_bytes = 8});
    int end = gr_queue(g, &(gr_queue_desc){.name = "end", .packet_bytes = 8, .ordered = true});
    int src = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = noop});
    int a = gr_stage(g, &(gr_stage_desc){.name = "a", .kind = GR_SHADER, .main = noop});
    int b = gr_stage(g, &(gr_stage_desc){.name = "b", .kind = GR_SHADER, .main = noop});
    int sink = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = noop});
    gr_bind(g, src, GR_BIND_OUTPUT, head);
    gr_bind(g, a, GR_BIND_INPUT, head);
    gr_bind(g, a, GR_BIND_OUTPUT, mid);
    gr_bind(g, b, GR_BIND_INPUT, mid);
    gr_bind(g, b, GR_BIND_OUTPUT, end);
    gr_bind(g, sink, GR_BIND_INPUT, end);
    CHECK(launch_and_wait(g, 5) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "output queue 'inserted' is not ordered"));
    expect_blame(g, a, mid);
    gr_graph_destroy(g);
}

static void test_stage_without_program(void)
{
    gr_graph *g = gr_graph_create();
    CHECK(gr_stage(g, &(gr_stage_desc){.name = "empty", .kind = GR_SHADER}) == GR_INVALID);
    CHECK(error_mentions(g, "empty") && error_mentions(g, "no program"));
    gr_graph_destroy(g);
}

static void test_zero_size_packet(void)
{
    gr_graph *g = gr_graph_create();
    CHECK(gr_queue(g, &(gr_queue_desc){.name = "zero"}) == GR_INVALID);
    CHECK(error_mentions(g, "zero") && error_mentions(g, "packet_bytes"));
    gr_graph_destroy(g);
    g = gr_graph_create();
    CHECK(gr_queue(g, &(gr_queue_desc){.name = "coll", .kind = GR_COLLECTION, .header_bytes = 2,
                                       .element_bytes = 4, .elements = 4}) == GR_INVALID);
    CHECK(error_mentions(g, "coll"));
    gr_graph_destroy(g);
}

static void test_bad_bindings(void)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "q", .kind = GR_COLLECTION, .header_bytes = 4,
                                         .element_bytes = 4, .elements = 4});
    int t = gr_stage(g, &(gr_stage_desc){.name = "thread", .kind = GR_THREAD, .main = noop});
    CHECK(gr_bind(g, t, GR_BIND_PUSH, q) == GR_INVALID);
    CHECK(error_mentions(g, "thread") && error_mentions(g, "Shader"));
    gr_graph_destroy(g);

    g = gr_graph_create();
    q = gr_queue(g, &(gr_queue_desc){.name = "set", .packet_bytes = 4, .subqueues = 4});
    t = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = noop});
    int sh = gr_stage(g, &(gr_stage_desc){.name = "shade", .kind = GR_SHADER, .main = noop});
    gr_bind(g, t, GR_BIND_OUTPUT, q);
    gr_bind(g, sh, GR_BIND_INPUT, q);
    /* no longer an error: a Shader consumes a set one packet per subqueue (test_shader_sets) */
    CHECK(launch_and_wait(g, 5) == GR_OK);
    gr_graph_destroy(g);

    g = gr_graph_create();
    q = gr_queue(g, &(gr_queue_desc){.name = "a", .packet_bytes = 4});
    int q2 = gr_queue(g, &(gr_queue_desc){.name = "b", .packet_bytes = 4});
    t = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = noop});
    sh = gr_stage(g, &(gr_stage_desc){.name = "two-inputs", .kind = GR_SHADER, .main = noop});
    gr_bind(g, t, GR_BIND_OUTPUT, q);
    gr_bind(g, t, GR_BIND_OUTPUT, q2);
    gr_bind(g, sh, GR_BIND_INPUT, q);
    gr_bind(g, sh, GR_BIND_INPUT, q2);
    CHECK(launch_and_wait(g, 5) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "two-inputs"));
    gr_graph_destroy(g);
}

/* ---- bad calls from running stages -------------------------------------------------- */

static void reserve_wrong_queue(gr_ctx *c)
{
    gr_window w;
    gr_reserve(c, 3, 1, &w);              /* the stage has no input 3 */
}

static void push_from_thread(gr_ctx *c)
{
    uint32_t v = 1;
    gr_push(c, 0, &v);
}

static void failing_assert(gr_ctx *c) { gr_assert(c, 1 + 1 == 3); }

static void consume_all(gr_ctx *c)
{
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) gr_commit(c, 0, 1);
}

static gr_status run_bad_stage(gr_stage_fn fn, const char *name, gr_graph **out)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "out", .kind = GR_COLLECTION, .header_bytes = 4,
                                         .element_bytes = 4, .elements = 4});
    int s = gr_stage(g, &(gr_stage_desc){.name = name, .kind = GR_THREAD, .main = fn});
    int k = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = consume_all});
    gr_bind(g, s, GR_BIND_OUTPUT, q);
    gr_bind(g, k, GR_BIND_INPUT, q);
    *out = g;
    return launch_and_wait(g, 5);
}

static void test_bad_calls(void)
{
    gr_graph *g;
    CHECK(run_bad_stage(reserve_wrong_queue, "wrong-queue", &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "wrong-queue") && error_mentions(g, "no input 3"));
    gr_graph_destroy(g);
    CHECK(run_bad_stage(push_from_thread, "pusher", &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "pusher") && error_mentions(g, "Shader"));
    gr_graph_destroy(g);
    CHECK(run_bad_stage(failing_assert, "asserter", &g) == GR_ERR_ASSERT);
    CHECK(error_mentions(g, "asserter") && error_mentions(g, "1 + 1 == 3"));
    gr_graph_destroy(g);
}

static void test_launch_twice(void)
{
    gr_graph *g;
    run_bad_stage(failing_assert, "x", &g);
    CHECK(gr_launch(g, NULL, NULL, 0) == GR_ERR_INVALID);
    gr_graph_destroy(g);
}

/* A NaN, infinite or huge watchdog period is refused at launch (NaN used to disable it). */
static void test_bad_deadlock_seconds(void)
{
    const double bad[] = {NAN, INFINITY, 1e300};
    for (int i = 0; i < 3; i++) {
        gr_graph *g = gr_graph_create();
        int q = gr_queue(g, &(gr_queue_desc){.name = "q", .packet_bytes = 8});
        int a = gr_stage(g, &(gr_stage_desc){.name = "a", .kind = GR_THREAD, .main = noop});
        int b = gr_stage(g, &(gr_stage_desc){.name = "b", .kind = GR_THREAD, .main = noop});
        gr_bind(g, a, GR_BIND_OUTPUT, q);
        gr_bind(g, b, GR_BIND_INPUT, q);
        CHECK(launch_and_wait(g, bad[i]) == GR_ERR_INVALID && error_mentions(g, "deadlock_seconds"));
        gr_graph_destroy(g);
    }
}

/* ---- deadlock ----------------------------------------------------------------------- */

static void produce_ten(gr_ctx *c)
{
    for (int i = 0; i < 10; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        gr_commit_out(c, 0, 1);
    }
}

static void wait_for_all(gr_ctx *c)
{
    gr_window w;
    gr_reserve(c, 0, GR_ALL, &w);          /* the producer blocks on the full queue first */
    gr_commit(c, 0, w.packets);
}

static void test_deadlock_detected(void)
{
    if (!gr_scheduler_bounded(NULL))
        SKIP("the %s scheduler has no backpressure: a full output queue cannot block",
             gr_scheduler_default());
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "tiny", .packet_bytes = 4, .capacity = 4});
    int p = gr_stage(g, &(gr_stage_desc){.name = "producer", .kind = GR_THREAD, .main = produce_ten});
    int c = gr_stage(g, &(gr_stage_desc){.name = "barrier", .kind = GR_THREAD, .main = wait_for_all});
    gr_bind(g, p, GR_BIND_OUTPUT, q);
    gr_bind(g, c, GR_BIND_INPUT, q);
    CHECK(launch_and_wait(g, 0.3) == GR_ERR_DEADLOCK);
    CHECK(error_mentions(g, "deadlock") && error_mentions(g, "tiny") &&
          error_mentions(g, "4/4") && error_mentions(g, "blocked on full output"));
    gr_graph_destroy(g);
}

/* Thread stage that spins in its own code for 1.5 s, calling nothing of the runtime. */
static void spin(gr_ctx *c)
{
    (void)c;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) < 1500000000L);
}

/* The same 1.5 s inside gr_device_wait, as a stage waiting on its kernel. */
static void device_wait(gr_ctx *c)
{
    gr_device_wait(c, true);
    spin(c);
    gr_device_wait(c, false);
}

/* A stage stuck in its own code is named by the watchdog after deadlock_seconds (it
 * stayed silent: only an all-idle graph was a deadlock), and the run ends with that
 * error once the stage returns. */
static void test_stuck_stage_named(void)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "q", .packet_bytes = 8});
    int s = gr_stage(g, &(gr_stage_desc){.name = "spinner", .kind = GR_THREAD, .main = spin});
    int t = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = noop});
    gr_bind(g, s, GR_BIND_OUTPUT, q);
    gr_bind(g, t, GR_BIND_INPUT, q);
    CHECK(launch_and_wait(g, 0.3) == GR_ERR_DEADLOCK);
    CHECK(error_mentions(g, "stage 'spinner'") && error_mentions(g, "own code"));
    gr_graph_destroy(g);
}

/* A task waiting on an accelerator has GR_DEVICE_WAIT_FACTOR times deadlock_seconds
 * before it is named: 1.5 s of waiting passes with 0.3 s (3 s), fails with 0.1 s (1 s),
 * and the message says it was waiting on the device. */
static void test_device_wait_allowed_longer(void)
{
    const double deadlock_s[] = {0.3, 0.1};
    for (int k = 0; k < 2; k++) {
        gr_graph *g = gr_graph_create();
        int q = gr_queue(g, &(gr_queue_desc){.name = "q", .packet_bytes = 8});
        int s = gr_stage(g, &(gr_stage_desc){.name = "kernel", .kind = GR_THREAD, .main = device_wait});
        int t = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = noop});
        gr_bind(g, s, GR_BIND_OUTPUT, q);
        gr_bind(g, t, GR_BIND_INPUT, q);
        gr_status st = launch_and_wait(g, deadlock_s[k]);
        if (k == 0) CHECK_MSG(st == GR_OK, "status %d: %s", st, gr_error(g));
        else CHECK(st == GR_ERR_DEADLOCK && error_mentions(g, "stage 'kernel'") &&
                   error_mentions(g, "waited on its accelerator"));
        gr_graph_destroy(g);
    }
}

int main(void)
{
    RUN(test_stuck_stage_named);
    RUN(test_device_wait_allowed_longer);
    RUN(test_unbound_queue);
    RUN(test_errors_blame_their_subject);
    RUN(test_stage_without_program);
    RUN(test_zero_size_packet);
    RUN(test_bad_bindings);
    RUN(test_bad_calls);
    RUN(test_launch_twice);
    RUN(test_bad_deadlock_seconds);
    RUN(test_deadlock_detected);
    return check_finish();
}

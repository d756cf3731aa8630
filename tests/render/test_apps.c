/* The built-in apps (apps/apps.h) under the six schedulers at 1, 2 and 3 workers, each
 * result equal to its serial implementation's; a result that differs is caught; and
 * gramps-run's app interface: the result line and statistics, exit 2 naming the flag
 * for a bad app name, parameter or scheduler, exit 1 before the run for an unwritable
 * --stats. Small sizes keep it fast. */
#include "apps/apps.h"
#include "tests/check.h"
#include "tests/cli.h"

static const char *const schedulers[] = {"gramps", "task-stealing", "breadth-first", "static", "qes", "pss"};
#define NSCHEDULERS ((int)(sizeof schedulers / sizeof *schedulers))

/* Small versions of each app; the other histograms are the forwarding combiner's and the
 * reduce-only form; mergesort with whole merges and with merges split in parts of 700
 * keys (a 5-part root, parts that start mid-run in both halves). */
static const char *const configs[][6] = {
    {"histogram", "graph.values=20000", "graph.chunk=500", "graph.bins=64", NULL},
    {"histogram", "graph.values=9000", "graph.chunk=250", "graph.combine=1", NULL},
    {"histogram", "graph.values=7777", "graph.chunk=333", "graph.combine=0", NULL},
    {"srad", "graph.rows=40", "graph.cols=24", "graph.band=5", "graph.iterations=3", NULL},
    {"fm-radio", "graph.samples=1000", "graph.bands=3", "graph.taps=16", "graph.block=64", NULL},
    {"mergesort", "graph.values=10000", "graph.chunk=300", "graph.part=0", NULL},
    {"mergesort", "graph.values=10000", "graph.chunk=300", "graph.part=700", NULL},
    {"gaussian", "graph.n=40", "graph.band=3", NULL},
    {"spheres", "graph.spheres=200", "graph.steps=10", "graph.radius=40", NULL},
    {"mergesort", "graph.values=1", "graph.chunk=300", NULL},
};
#define NCONFIGS ((int)(sizeof configs / sizeof *configs))

static void configure(ap_config *c, const char *const *cfg)
{
    char err[AP_MSG_MAX];
    CHECK_MSG(ap_config_init(c, cfg[0], err) == 0, "%s", err);
    for (int i = 1; cfg[i]; i++) CHECK_MSG(ap_config_set(c, cfg[i], err) == 0, "%s", err);
}

static void test_every_scheduler_and_worker_count(void)
{
    for (int k = 0; k < NCONFIGS; k++)
        for (int s = 0; s < NSCHEDULERS; s++)
            for (unsigned w = 1; w <= 3; w++) {
                ap_config c;
                configure(&c, configs[k]);
                gr_launch_opts o = {.workers = w, .scheduler = schedulers[s], .deadlock_seconds = 20};
                ap_outcome res;
                CHECK_MSG(ap_run(&c, &o, &res) == 0, "%s under %s at %u workers: %s",
                          configs[k][0], schedulers[s], w, res.line);
                gr_graph_destroy(res.graph);
            }
}

/* The check compares for real: a graph built but never run has no result (or the
 * input), which differs from the serial one, and the message says where. */
static void test_a_wrong_result_is_caught(void)
{
    for (int k = 0; k < NCONFIGS - 1; k++) {
        ap_config c;
        configure(&c, configs[k]);
        gr_graph *g = gr_graph_create();
        char line[AP_MSG_MAX];
        void *state = c.app->build(g, c.values, line);
        CHECK_MSG(state != NULL, "%s", line);
        if (!state) { gr_graph_destroy(g); continue; }
        CHECK_MSG(c.app->check(state, g, line) == -1, "%s: %s", configs[k][0], line);
        CHECK_MSG(strstr(line, "serial") != NULL, "%s", line);
        c.app->destroy(state);
        gr_graph_destroy(g);
    }
}

/* The pairs reduce added, from histogram's result line. */
static long pairs_reduced(bool combine)
{
    ap_config c;
    configure(&c, (const char *const[]){"histogram", "graph.values=200000", "graph.chunk=1000",
                                        "graph.bins=64", combine ? "graph.combine=1" : "graph.combine=0", NULL});
    gr_launch_opts o = {.workers = 1, .scheduler = "breadth-first", .deadlock_seconds = 20};
    ap_outcome res;
    CHECK_MSG(ap_run(&c, &o, &res) == 0, "%s", res.line);
    gr_graph_destroy(res.graph);
    const char *at = strstr(res.line, " pairs reduced");
    while (at && at > res.line && at[-1] >= '0' && at[-1] <= '9') at--;
    return at ? strtol(at, NULL, 10) : -1;
}

/* The combiner coalesces map packets (gr_stage_desc.coalesce_input) and merges their
 * pairs: with every map done before any combine (breadth-first, 1 worker), reduce adds
 * about a quarter of the pairs (3,112 of 11,924). */
static void test_combiner_reduces(void)
{
    long without = pairs_reduced(false), with = pairs_reduced(true);
    CHECK_MSG(without > 0 && with > 0 && with * 3 < without, "%ld pairs with the combiner, %ld "
              "without", with, without);
}

/* The recirculating combiner (gr_stage_desc.recirculate, the default combine=2) reduces
 * every map packet to one, so reduce reads exactly one packet, one pair per bin the
 * input fills (49 of 50: the skewed input leaves the top bin empty), under every
 * policy and worker count. */
static void test_recirculating_combiner_sends_one_packet(void)
{
    static const unsigned workers[] = {1, 2, 3, 8};
    for (int s = 0; s < NSCHEDULERS; s++)
        for (int i = 0; i < 4; i++) {
            ap_config c;
            configure(&c, (const char *const[]){"histogram", "graph.values=30000", "graph.chunk=300",
                                                "graph.bins=50", NULL});
            gr_launch_opts o = {.workers = workers[i], .scheduler = schedulers[s], .deadlock_seconds = 20};
            ap_outcome res;
            CHECK_MSG(ap_run(&c, &o, &res) == 0 && strstr(res.line, " 49 pairs reduced from 1 packet;"),
                      "%s at %u workers: %s", schedulers[s], workers[i], res.line);
            gr_graph_destroy(res.graph);
        }
}

/* spheres: more spheres than fit apart at that radius fail the build, saying so. */
static void test_spheres_that_do_not_fit_refused(void)
{
    ap_config c;
    configure(&c, (const char *const[]){"spheres", "graph.spheres=20000", "graph.radius=100", NULL});
    gr_launch_opts o = {.workers = 1};
    ap_outcome res;
    CHECK(ap_run(&c, &o, &res) == 1);
    CHECK_MSG(strstr(res.line, "do not fit apart") && strstr(res.line, "graph.radius"), "%s", res.line);
    gr_graph_destroy(res.graph);
}

static void test_bad_parameters_refused(void)
{
    ap_config c;
    char err[AP_MSG_MAX];
    CHECK(ap_config_init(&c, "nosuch", err) == -1 && strstr(err, "histogram, srad"));
    CHECK(ap_config_init(&c, "srad", err) == 0);
    CHECK(ap_config_set(&c, "graph.rows=1", err) == -1 && strstr(err, "srad.rows") && strstr(err, "[2, 16384]"));
    CHECK(ap_config_set(&c, "graph.rows=12x", err) == -1 && strstr(err, "integer"));
    CHECK(ap_config_set(&c, "graph.colour=3", err) == -1 && strstr(err, "rows, cols"));
    CHECK(ap_config_set(&c, "rows", err) == -1 && strstr(err, "KEY=VALUE"));
    CHECK(ap_config_set(&c, "rows=64", err) == 0 && ap_value(&c, "rows") == 64);
}

static void test_gramps_run_apps(void)
{
    CHECK_MSG(run("histogram -t 2 --set graph.values=5000 --set graph.chunk=100") == 0 &&
              strstr(out, "equal to the serial histogram") && strstr(out, "peak footprint"), "%s", out);
    CHECK_MSG(run("mergesort -t 3 --scheduler breadth-first --set graph.values=3000 --set graph.chunk=100") == 0 &&
              strstr(out, "breadth-first scheduler") && strstr(out, "equal to the serial sort"), "%s", out);
    CHECK_MSG(run("--list-apps") == 0 && strstr(out, "fm-radio:") && strstr(out, "graph.bands"), "%s", out);
    CHECK_MSG(run("quicksort") == 2 && strstr(out, "'quicksort'") && strstr(out, "mergesort"), "%s", out);
    CHECK_MSG(run("srad --set graph.band=0") == 2 && strstr(out, "--set") && strstr(out, "srad.band"), "%s", out);
    CHECK_MSG(run("srad --scheduler fifo") == 2 && strstr(out, "--scheduler"), "%s", out);
    CHECK_MSG(run("fm-radio --plugin x.so") == 2 && strstr(out, "--plugin"), "%s", out);
    CHECK_MSG(run("gaussian -t 2 --set graph.n=30 --set graph.band=4") == 0 &&
              strstr(out, "equal bit for bit to the serial solution"), "%s", out);
    CHECK_MSG(run("gaussian --set graph.n=1") == 2 && strstr(out, "gaussian.n") && strstr(out, "[2, 4096]"),
              "%s", out);
    /* an unwritable --stats is named before the run: no result line */
    CHECK_MSG(run("histogram --stats /nonexistent-dir/h.json") == 1 &&
              strstr(out, "/nonexistent-dir/h.json: cannot write") && !strstr(out, "serial histogram"),
              "%s", out);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-run");
    RUN(test_every_scheduler_and_worker_count);
    RUN(test_a_wrong_result_is_caught);
    RUN(test_combiner_reduces);
    RUN(test_recirculating_combiner_sends_one_packet);
    RUN(test_spheres_that_do_not_fit_refused);
    RUN(test_bad_parameters_refused);
    RUN(test_gramps_run_apps);
    return check_finish();
}

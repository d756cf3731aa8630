/* Tests of the Static scheduler's SGMS-style partition (gr_launch_opts.partition =
 * "ilp", gramps/partition_ilp.c): the ILP's heaviest worker is at most LPT's and
 * strictly lighter where LPT is known not to be optimal; a run under it computes what
 * METIS's does and says which method ran; an ILP with no time falls back to METIS/LPT
 * and says so on stderr and in the statistics; an unknown method or time limit is
 * refused at launch. Compared on loads, never on wall time. */
#include "gramps/gramps.h"
#include "gramps/partition.h"
#include "tests/check.h"
#include "tests/runtime/run_graph.h"
#include "tests/runtime/squares_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 500

/* src -> square -> sink, launched under Static with the given partition options; the
 * launch status in *status, the graph (to destroy) returned. */
static gr_graph *run(const char *method, int ilp_ms, unsigned workers, squares_app *a,
                     gr_status *status)
{
    *a = (squares_app){.n = N};
    gr_graph *g = squares_graph(a);
    int start[] = {0, 2};
    gr_launch_opts o = {.workers = workers, .scheduler = "static", .partition = method,
                        .ilp_ms = ilp_ms};
    *status = gr_launch(g, &o, start, 2);
    if (*status == GR_OK) *status = gr_wait(g);
    return g;
}

static const uint64_t expected = SQUARES_SUM(N);

/* Loads 3, 3, 2, 2, 2 on 2 parts: LPT makes 3+2+2 = 7, the optimum is 6 (3+3, 2+2+2). */
static void test_ilp_beats_lpt(void)
{
    enum { n = 5, parts = 2 };
    int64_t load[n] = {3, 3, 2, 2, 2};
    int ilp[n], lpt[n];
    CHECK(gr_partition_ilp(n, load, parts, 2000, ilp) == GR_ILP_OPTIMAL);
    const char *how = NULL;
    CHECK(gr_partition_by(n, load, NULL, 0, parts, lpt, &how) == 0 && !strcmp(how, "lpt"));
    int64_t by_ilp = gr_partition_max_load(n, load, ilp, parts);
    int64_t by_lpt = gr_partition_max_load(n, load, lpt, parts);
    CHECK_MSG(by_ilp == 6 && by_lpt == 7, "heaviest part: ILP %lld, LPT %lld",
              (long long)by_ilp, (long long)by_lpt);
    /* a graph METIS partitions (8 stages per part and more): never above it */
    enum { m = 24, mparts = 3 };
    int64_t w[m];
    gr_part_edge e[m - 1];
    for (int i = 0; i < m; i++) w[i] = 1 + (i * 37) % 11;
    for (int i = 0; i + 1 < m; i++) e[i] = (gr_part_edge){i, i + 1, 5};
    int a[m], b[m];
    CHECK(gr_partition_ilp(m, w, mparts, 2000, a) >= GR_ILP_OPTIMAL);
    CHECK(gr_partition(m, w, e, m - 1, mparts, b) == 0);
    CHECK(gr_partition_max_load(m, w, a, mparts) <= gr_partition_max_load(m, w, b, mparts));
}

/* The same sum as under METIS at 1-3 workers; the statistics name the method. */
static void test_same_result_as_metis(void)
{
    for (unsigned workers = 1; workers <= 3; workers++) {
        squares_app a, b;
        gr_status sa, sb;
        gr_graph *ga = run("ilp", 0, workers, &a, &sa), *gb = run("metis", 0, workers, &b, &sb);
        CHECK_MSG(sa == GR_OK && sb == GR_OK, "%u workers: %s / %s", workers, gr_error(ga), gr_error(gb));
        CHECK(a.sum == expected && b.sum == expected);
        const gr_stats *st = gr_get_stats(ga);
        CHECK_MSG(st && st->partition && !strcmp(st->partition, "ilp") && !st->partition_fell_back,
                  "%u workers: partition %s", workers, st && st->partition ? st->partition : "(none)");
        int64_t ilp_load = st ? st->partition_max_load : 0;
        st = gr_get_stats(gb);
        CHECK(st && st->partition && strcmp(st->partition, "ilp") && !st->partition_fell_back);
        CHECK_MSG(st && ilp_load >= 1 && ilp_load <= st->partition_max_load,
                  "%u workers: heaviest worker ILP %lld, METIS %lld", workers, (long long)ilp_load,
                  st ? (long long)st->partition_max_load : -1LL);
        gr_graph_destroy(ga);
        gr_graph_destroy(gb);
    }
}

/* GRAMPS_STATIC_ILP_MS=0 leaves the solver no time: METIS/LPT's partition runs, a line
 * on stderr says so and the statistics record it. */
static void test_no_time_falls_back(void)
{
    setenv("GRAMPS_STATIC_ILP_MS", "0", 1);
    fflush(stderr);
    int saved = dup(2);
    FILE *capture = tmpfile();
    CHECK(saved >= 0 && capture && dup2(fileno(capture), 2) >= 0);
    squares_app a;
    gr_status s;
    gr_graph *g = run("ilp", 0, 2, &a, &s);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    unsetenv("GRAMPS_STATIC_ILP_MS");
    char said[512] = "";
    rewind(capture);
    size_t len = fread(said, 1, sizeof said - 1, capture);
    said[len] = '\0';
    fclose(capture);
    CHECK_MSG(s == GR_OK && a.sum == expected, "%s", gr_error(g));
    CHECK_MSG(strstr(said, "ILP partition found no solution in 0 ms") &&
              strstr(said, "falling back to METIS/LPT"), "stderr: %s", said);
    const gr_stats *st = gr_get_stats(g);
    CHECK(st && st->partition_fell_back && st->partition && strcmp(st->partition, "ilp"));
    gr_graph_destroy(g);
}

static void test_bad_options(void)
{
    squares_app a;
    gr_status s;
    gr_graph *g = run("simplex", 0, 2, &a, &s);
    CHECK_MSG(s == GR_ERR_INVALID && strstr(gr_error(g), "'simplex'") &&
              strstr(gr_error(g), "metis, ilp"), "%s", gr_error(g));
    gr_graph_destroy(g);
    g = run("ilp", -5, 2, &a, &s);
    CHECK_MSG(s == GR_ERR_INVALID && strstr(gr_error(g), "gr_launch_opts.ilp_ms"), "%s", gr_error(g));
    gr_graph_destroy(g);
    setenv("GRAMPS_STATIC_ILP_MS", "fast", 1);
    g = run("ilp", 0, 2, &a, &s);
    unsetenv("GRAMPS_STATIC_ILP_MS");
    CHECK_MSG(s == GR_ERR_INVALID && strstr(gr_error(g), "GRAMPS_STATIC_ILP_MS"), "%s", gr_error(g));
    gr_graph_destroy(g);
}

int main(void)
{
    RUN(test_ilp_beats_lpt);
    RUN(test_same_result_as_metis);
    RUN(test_no_time_falls_back);
    RUN(test_bad_options);
    return check_finish();
}

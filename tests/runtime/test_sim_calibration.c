/* The simulator's calibrated cost model (gr_launch_opts.sim_calibration, simulate.c):
 * a 1-virtual-worker run's profile counts each stage's units of work (a Shader task; a
 * Thread stage's packets in and out), a calibrated run charges each stage that profile's
 * cost per unit, and profiles of a real run or of another graph are refused with a
 * message. The checks compare virtual times with a profile made ten times dearer, never
 * with a time the machine took. */
#include "gramps/gramps.h"
#include "gramps/profile.h"
#include "tests/check.h"

#include <string.h>

#define N 2000

static void source(gr_ctx *c)
{
    for (uint32_t i = 0; i < N; i++) {
        gr_window w;
        if (gr_reserve_out(c, 0, 1, &w) != GR_OK) return;
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void square(gr_ctx *c)
{
    uint32_t v = *(const uint32_t *)gr_input(c, NULL);
    for (volatile int k = 0; k < 2000; k++) {}
    *(uint64_t *)gr_output(c, 0) = (uint64_t)v * v;
}

static void drain(gr_ctx *c) { (void)gr_input(c, NULL); }

/* A Thread sink told all its units of work before it does any (as tile-shade is given
 * its triangles before it shades), then working through its input. */
static void heavy(gr_ctx *c)
{
    gr_work_units(c, N);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        for (volatile int k = 0; k < 4000; k++) {}
        gr_commit(c, 0, 1);
    }
}

/* source -> square -> NAME (the last stage's name, so that graphs can differ; "heavy" is
 * the Thread sink above, any other a Shader that drains). */
static gr_graph *graph(const char *last)
{
    gr_graph *g = gr_graph_create();
    int q0 = gr_queue(g, &(gr_queue_desc){.name = "numbers", .packet_bytes = 4, .capacity = 64});
    int q1 = gr_queue(g, &(gr_queue_desc){.name = "squares", .packet_bytes = 8, .capacity = 64});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = source});
    int sq = gr_stage(g, &(gr_stage_desc){.name = "square", .kind = GR_SHADER, .main = square});
    const bool thread = !strcmp(last, "heavy");
    int d = gr_stage(g, &(gr_stage_desc){.name = last, .kind = thread ? GR_THREAD : GR_SHADER,
                                         .main = thread ? heavy : drain});
    gr_bind(g, src, GR_BIND_OUTPUT, q0);
    gr_bind(g, sq, GR_BIND_INPUT, q0);
    gr_bind(g, sq, GR_BIND_OUTPUT, q1);
    gr_bind(g, d, GR_BIND_INPUT, q1);
    return g;
}

/* A run of graph(last) (simulate 0: real, 2 workers); its status, the graph in *out. */
static gr_status run(const char *last, unsigned simulate, const gr_profile *cal, gr_graph **out)
{
    gr_graph *g = *out = graph(last);
    gr_launch_opts o = {.workers = 2, .simulate = simulate, .sim_calibration = cal,
                        .stack_bytes = 64 * 1024};
    gr_status st = gr_launch(g, &o, NULL, 0);
    return st == GR_OK ? gr_wait(g) : st;
}

static double busy_ms(gr_graph *g, const char *stage)
{
    const gr_stats *s = gr_get_stats(g);
    for (int i = 0; s && i < s->nstages; i++)
        if (!strcmp(s->stages[i].name, stage)) return s->stages[i].busy_ms;
    return -1;
}

static void test_units_and_calibrated_charge(void)
{
    gr_graph *g;
    CHECK_MSG(run("drain", 1, NULL, &g) == GR_OK, "%s", gr_error(g));
    gr_profile *p = gr_profile_take(g);
    gr_graph_destroy(g);
    CHECK(p && p->stage_units);
    if (!p || !p->stage_units) { gr_profile_free(p); return; }
    /* source: N packets out; square: N tasks; drain: N tasks */
    CHECK_MSG(p->stage_units[0] == N && p->stage_units[1] == N && p->stage_units[2] == N,
              "units %.0f %.0f %.0f", p->stage_units[0], p->stage_units[1], p->stage_units[2]);
    const double one = p->stage_us[1] / 1e3;      /* square's ms at 1 virtual worker */
    p->stage_us[1] *= 10;
    CHECK_MSG(run("drain", 4, p, &g) == GR_OK, "%s", gr_error(g));
    double dear = busy_ms(g, "square");
    gr_graph_destroy(g);
    CHECK_MSG(dear > 4 * one && dear < 25 * one, "square at 4 virtual workers, calibrated ten "
              "times dearer: %.3f ms busy, %.3f ms at 1", dear, one);
    gr_profile_free(p);
}

/* A relaunch charges each stage at the calibration's cost per unit over the previous
 * run's, a constant: a stage given its units before its work costs about what it did at
 * P = 1. (Estimated from the run so far instead, its early steps would be charged as if
 * its few ticks were all its units' work, several times its cost: the factor starts at
 * the profile's cost of N units over one step's ticks.) */
static void test_relaunch_charges_a_constant_factor(void)
{
    gr_graph *g;
    CHECK_MSG(run("heavy", 1, NULL, &g) == GR_OK, "%s", gr_error(g));
    gr_profile *p = gr_profile_take(g);
    const double one = busy_ms(g, "heavy");
    gr_graph_destroy(g);
    CHECK(p && p->stage_units && p->stage_units[2] == N);
    if (!p || !p->stage_units) { gr_profile_free(p); return; }
    CHECK_MSG(run("heavy", 4, p, &g) == GR_OK, "%s", gr_error(g));
    CHECK_MSG(gr_relaunch(g) == GR_OK && gr_wait(g) == GR_OK, "%s", gr_error(g));
    const double again = busy_ms(g, "heavy");
    gr_graph_destroy(g);
    CHECK_MSG(again > 0.5 * one && again < 2 * one, "heavy at 4 virtual workers, relaunched: "
              "%.3f ms busy, %.3f ms at 1", again, one);
    gr_profile_free(p);
}

static void test_bad_profiles_refused(void)
{
    gr_graph *g;
    CHECK_MSG(run("drain", 0, NULL, &g) == GR_OK, "%s", gr_error(g));
    gr_profile *real = gr_profile_take(g);
    gr_graph_destroy(g);
    CHECK(run("drain", 2, real, &g) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "sim_calibration is a real run's profile"), "%s", gr_error(g));
    gr_graph_destroy(g);
    CHECK(run("drain", 1, NULL, &g) == GR_OK);
    gr_profile *other = gr_profile_take(g);
    gr_graph_destroy(g);
    CHECK(run("sink", 2, other, &g) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "another graph") && strstr(gr_error(g), "'sink'"), "%s",
              gr_error(g));
    gr_graph_destroy(g);
    gr_profile_free(real);
    gr_profile_free(other);
}

int main(void)
{
    RUN(test_units_and_calibrated_charge);
    RUN(test_relaunch_charges_a_constant_factor);
    RUN(test_bad_profiles_refused);
    return check_finish();
}

/* test_placement_order.c — `device = auto` places the ray tracer's cycle (Intersect ->
 * Shade -> Intersect) the same whatever the order of the graph's stages
 * (docs/opencl.md, placement; compose/instance.c, decide_placements). Measurements are
 * given to placement.c before each frame (cp_auto_measured, as a run's statistics would
 * give them), so the choice does not depend on this machine's timing: one stage of the
 * cycle measured clearly faster on the device, the other within a tenth on both sides,
 * which must follow its feeder to the device whether that feeder's section comes before
 * or after its own. Cornell at 8x8, one worker, in this process on PoCL. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"
#include "compose/internal.h"
#include "pipelines/frame.h"
#include "pipelines/stages.h"
#include "scenes/scene.h"

#include <string.h>

#define SIDE 8

static pl_scene_data data;

/* The built-in raytrace graph, or (shade_first) the same with its [stage shade] section
 * moved before [stage intersect]; NULL when the sections are not found. Caller frees. */
static char *raytrace_text(bool shade_first)
{
    const char *text = pl_builtin_graph("raytrace");
    const char *inter = strstr(text, "[stage intersect]"), *shade = strstr(text, "[stage shade]");
    const char *after = strstr(text, "[stage shadow-intersect]");
    CHECK_MSG(inter && shade && after && inter < shade && shade < after,
              "raytrace.graph: [stage intersect], [stage shade], [stage shadow-intersect] "
              "not found in that order");
    if (!(inter && shade && after && inter < shade && shade < after)) return NULL;
    char *s = strdup(text);
    if (shade_first && s) {
        const size_t ni = (size_t)(shade - inter), ns = (size_t)(after - shade);
        char *p = s + (inter - text);
        memcpy(p, shade, ns);
        memcpy(p + ns, inter, ni);
    }
    return s;
}

/* Renders cornell with intersect and shade at `device = auto`, after giving placement.c
 * these times per task (device, CPU) for their types; each stage's device into dev_*
 * and the image into rgba. False, saying why, when the frame did not render. */
static bool render(bool shade_first, const double intersect_ms[2], const double shade_ms[2],
                   char dev_intersect[16], char dev_shade[16], uint8_t *rgba)
{
    char err[CP_ERR_MAX] = "no registry, graph or stage type";
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = r ? cp_graph_new(r) : NULL;
    char *text = raytrace_text(shade_first);
    bool ok = g && text && !cp_graph_load_text(g, text, "raytrace", err) &&
              !cp_put(g, "stage intersect", "device", "auto", "test", err) &&
              !cp_put(g, "stage shade", "device", "auto", "test", err);
    const cp_stage_type *ti = r ? cp_find_stage(r, "rt.intersect") : NULL;
    const cp_stage_type *ts = r ? cp_find_stage(r, "rt.shade") : NULL;
    ok = ok && ti && ts;
    if (ok) {
        cp_auto_measured(ti, true, intersect_ms[0] * 100, 100);
        cp_auto_measured(ti, false, intersect_ms[1] * 100, 100);
        cp_auto_measured(ts, true, shade_ms[0] * 100, 100);
        cp_auto_measured(ts, false, shade_ms[1] * 100, 100);
    }
    pl_frame f;
    bool framed = ok && pl_frame_init(&f, &data, SIDE, SIDE, SH_AOV_COLOR, err);
    gr_launch_opts lo = {.workers = 1};
    gr_graph *run = framed ? pl_render_frame(g, &f, &lo, err) : NULL;
    CHECK_MSG(run, "%s: %s", shade_first ? "shade first" : "intersect first", err);
    const gr_stats *st = run ? gr_get_stats(run) : NULL;
    for (int i = 0; st && i < st->nstages; i++) {
        const gr_stage_stats *s = &st->stages[i];
        if (!strcmp(s->name, "intersect-0")) snprintf(dev_intersect, 16, "%s", s->device);
        if (!strcmp(s->name, "shade-0")) snprintf(dev_shade, 16, "%s", s->device);
    }
    if (run) memcpy(rgba, pl_frame_image(&f), (size_t)SIDE * SIDE * 4);
    gr_graph_destroy(run);
    if (framed) pl_frame_free(&f);
    free(text);
    if (g) cp_graph_free(g);
    if (r) cp_registry_free(r);
    return run != NULL;
}

/* The placements (and image) for the given times in both stage orders: each stage on
 * `want_*` in both. */
static void check_both_orders(const char *what, const double intersect_ms[2],
                              const double shade_ms[2], const char *want_intersect,
                              const char *want_shade)
{
    static uint8_t first[SIDE * SIDE * 4];
    static bool have_first;
    uint8_t img[SIDE * SIDE * 4];
    for (int order = 0; order < 2; order++) {
        char di[16] = "?", ds[16] = "?";
        if (!render(order == 1, intersect_ms, shade_ms, di, ds, img)) continue;
        CHECK_MSG(!strcmp(di, want_intersect) && !strcmp(ds, want_shade),
                  "%s, %s first: intersect on %s, shade on %s (want %s, %s)", what,
                  order ? "shade" : "intersect", di, ds, want_intersect, want_shade);
        if (!have_first) memcpy(first, img, sizeof img), have_first = true;
        CHECK_MSG(!memcmp(first, img, sizeof img), "%s, %s first: another image", what,
                  order ? "shade" : "intersect");
    }
}

static void test_shade_follows_intersect(void)
{
    const double intersect_ms[2] = {0.1, 1.0}, shade_ms[2] = {1.0, 1.0};
    check_both_orders("intersect faster on the device, shade within a tenth", intersect_ms,
                      shade_ms, "opencl", "opencl");
}

static void test_intersect_follows_shade(void)
{
    const double intersect_ms[2] = {1.0, 1.05}, shade_ms[2] = {0.1, 1.0};
    check_both_orders("shade faster on the device, intersect within a tenth", intersect_ms,
                      shade_ms, "opencl", "opencl");
}

/* A cycle of ties with nothing on the device stays on the CPU (a tie only follows a
 * feeder to the device). */
static void test_cycle_of_ties_stays_on_the_cpu(void)
{
    const double intersect_ms[2] = {1.0, 1.0}, shade_ms[2] = {1.0, 1.05};
    check_both_orders("both within a tenth", intersect_ms, shade_ms, "cpu", "cpu");
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "placement-order")) return check_finish();
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    sc_geometry geo;
    if (sc_load("cornell", &s, err) || sc_flatten(s, &geo, err)) {
        CHECK_MSG(false, "cornell: %s", err);
        return check_finish();
    }
    pl_scene_data_init(&data, s, &geo);
    RUN(test_shade_follows_intersect);
    RUN(test_intersect_follows_shade);
    RUN(test_cycle_of_ties_stays_on_the_cpu);
    pl_scene_data_free(&data);
    sc_geometry_free(&geo);
    sc_free(s);
    return check_finish();
}

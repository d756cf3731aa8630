/* Frame resources from the application's side: a stage type gets only what it declares
 * (a named error otherwise), a plugin-style type registers a resource of its own that the
 * frame makes once, hands to every run and frees with the frame, registration refuses
 * malformed declarations, and the built-in graphs declare what their stages ask for
 * (cp_graph_resources: the BVH only where rays are traced, a depth layer per depth-pass
 * rasterizer copy). */
#include "pipelines/frame.h"
#include "pipelines/stages.h"
#include "tests/check.h"
#include "tests/loaded_scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int made, destroyed;

static void *counter_create(void *frame, const char *owner)
{
    (void)frame, (void)owner;
    made++;
    return calloc(1, sizeof(int));
}

static void counter_destroy(void *data)
{
    destroyed++;
    free(data);
}

/* A resource no built-in knows: an int that each run's stage adds one to. */
static const cp_resource_type runs_counted = {
    "test.runs", "how many runs the stage saw", "int", sizeof(int), CP_PER_SCENE, false,
    CP_CLEAR_NONE, NULL, counter_create, counter_destroy, NULL};

static void *counting_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    int *runs = pl_frame_use(i, "test.runs", err);
    if (runs) ++*runs;
    return runs;
}

/* Asks for the depth buffer without declaring it. */
static void *sneaky_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    return pl_frame_use(i, "depth", err);
}

static void idle_main(gr_ctx *c) { (void)c; }
static void keep(void *state) { (void)state; }

static const cp_resource_use counting_uses[] = {{"test.runs", CP_READS | CP_WRITES, NULL}};
static const cp_stage_type counting = {"test.counting", NULL, GR_THREAD, false, NULL, 0, NULL,
                                       0, idle_main, counting_create, NULL, keep,
                                       counting_uses, 1};
static const cp_stage_type sneaky = {"test.sneaky", NULL, GR_THREAD, false, NULL, 0, NULL, 0,
                                     idle_main, sneaky_create, NULL, keep, NULL, 0};

static cp_registry *registry(void)
{
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    CHECK_MSG(r && !cp_register_resource(r, &runs_counted, err) &&
              !cp_register_stage(r, &counting, err) && !cp_register_stage(r, &sneaky, err),
              "%s", err);
    return r;
}

/* One run of a one-stage graph of `type` on f; the error text in err. */
static bool run_stage(cp_registry *r, pl_frame *f, const char *type, char err[CP_ERR_MAX])
{
    char text[128];
    snprintf(text, sizeof text, "[stage only]\ntype = %s\n", type);
    cp_graph *g = cp_graph_new(r);
    gr_launch_opts o = {.workers = 2};
    gr_graph *run = g && !cp_graph_load_text(g, text, "test", err)
                        ? pl_render_frame(g, f, &o, err) : NULL;
    if (run) gr_graph_destroy(run);
    cp_graph_free(g);
    return run != NULL;
}

static void test_declared_only(void)
{
    loaded l;
    if (!load("cornell", &l)) { CHECK(0); return; }
    cp_registry *r = registry();
    pl_scene_data d;
    pl_frame f;
    char err[CP_ERR_MAX];
    pl_scene_data_init(&d, l.s, &l.g);
    CHECK(r && pl_frame_init(&f, &d, 16, 16, SH_AOV_COLOR, err));
    CHECK(!run_stage(r, &f, "test.sneaky", err));
    CHECK_MSG(strstr(err, "stage 'only'") && strstr(err, "test.sneaky") && strstr(err, "'depth'") &&
              strstr(err, "without declaring it"), "%s", err);
    /* a resource of the program's own: made once, the same for every run, freed once */
    made = destroyed = 0;
    for (int k = 0; k < 3; k++) CHECK_MSG(run_stage(r, &f, "test.counting", err), "%s", err);
    const cp_resource_type *t = cp_find_resource(r, "test.runs");
    int *runs = t ? pl_frame_resource(&f, t, CP_READS, "") : NULL;
    CHECK(made == 1 && runs && *runs == 3);
    pl_frame_free(&f);
    CHECK(destroyed == 1);
    cp_registry_free(r);
    unload(&l);
}

static void test_bad_declarations(void)
{
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    if (!r) { CHECK(0); return; }
    static const cp_resource_use unknown_uses[] = {{"no-such", CP_READS, NULL}};
    static const cp_stage_type unknown = {"test.unknown", NULL, GR_THREAD, false, NULL, 0, NULL,
                                          0, idle_main, NULL, NULL, NULL, unknown_uses, 1};
    CHECK(cp_register_stage(r, &unknown, err) && strstr(err, "test.unknown") &&
          strstr(err, "'no-such' is not registered"));
    static const cp_resource_type wide = {"test.wide", NULL, "i64", 8, CP_PER_PIXEL, false,
                                          CP_CLEAR_EACH_RUN, NULL, NULL, NULL, NULL};
    CHECK(cp_register_resource(r, &wide, err) && strstr(err, "test.wide"));
    static const cp_resource_type half = {"test.half", NULL, "x", 4, CP_PER_SCENE, false,
                                          CP_CLEAR_NONE, NULL, counter_create, NULL, NULL};
    CHECK(cp_register_resource(r, &half, err) && strstr(err, "pair"));
    CHECK(cp_register_resource(r, cp_find_resource(r, "color"), err) && strstr(err, "twice"));
    cp_registry_free(r);
}

/* The built-in graph `name`'s needs with `workers` workers at 64x64. */
static int needs_of(const char *name, unsigned workers, cp_resource_need needs[CP_MAX_RESOURCES])
{
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = r ? cp_graph_new(r) : NULL;
    int n = -1;
    if (g && !cp_graph_load_text(g, pl_builtin_graph(name), name, err)) {
        pl_vars_ctx vc = {g, 64, 64, workers};
        cp_vars vars = pl_vars(&vc);
        n = cp_graph_resources(g, &vars, needs, err);
    }
    CHECK_MSG(n >= 0, "%s: %s", name, err);
    cp_graph_free(g);
    cp_registry_free(r);              /* the types are static: needs stay valid */
    return n;
}

static bool needs(const char *graph, const char *resource)
{
    cp_resource_need n[CP_MAX_RESOURCES];
    int k = needs_of(graph, 2, n);
    return k > 0 && cp_resource_needed(n, k, resource);
}

static void test_builtin_graph_needs(void)
{
    CHECK(needs("raster", "color") && needs("raster", "triangles") && needs("raster", "textures"));
    CHECK(!needs("raster", "depth") && !needs("raster", "bvh") && !needs("raster", "sums"));
    CHECK(needs("raster-ordered", "depth") && needs("raster-ordered", "hiz"));
    CHECK(needs("raytrace", "bvh") && needs("raytrace", "sums") && needs("raytrace", "color"));
    CHECK(!needs("raytrace", "triangles") && needs("raytrace", "textures"));   /* rt.shade samples them */
    CHECK(needs("hybrid", "bvh") && needs("hybrid", "triangles") && needs("hybrid", "visibility"));
    CHECK(needs("hybrid", "textures"));
    for (unsigned w = 1; w <= 5; w += 2) {
        cp_resource_need n[CP_MAX_RESOURCES];
        int k = needs_of("hybrid", w, n);
        const cp_resource_need *layers = k > 0 ? cp_resource_needed(n, k, "depth-layer") : NULL;
        CHECK_MSG(layers && layers->copies == w, "%u workers: %u layers", w,
                  layers ? layers->copies : 0);
    }
}

int main(void)
{
    RUN(test_declared_only);
    RUN(test_bad_declarations);
    RUN(test_builtin_graph_needs);
    return check_finish();
}

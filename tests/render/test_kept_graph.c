/* Tests of the kept graph (pipelines/kept_graph.h): three frames with the camera moved
 * between them through one kept graph give, frame for frame, the bytes and counters of
 * a graph built for that frame alone (raster, the ordered raster graph, whose coarse
 * depth bounds must not carry over, nor its samples at msaa 4 and 8, raytrace and
 * hybrid; 1 and 2 workers); the graph is
 * built once for them, and again when its description, the frame's size or the launch
 * options change; plr_render_kept and plrt_render_kept likewise against plr_render and
 * plrt_render; gramps-render --frames 3 draws and counts what --frames 1 does; the
 * sort-middle graph's Tile-Shade keeps its tiles' buffers from frame to frame (the
 * "tile-buffers" resource, made once), each tile the same ones. */
#include "pipelines/kept_graph.h"
#include "pipelines/raster/raster.h"
#include "pipelines/raster/tile_pool.h"
#include "pipelines/raytrace/raytrace.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/loaded_scene.h"
#include "tools/common/render_graph.h"

#include <stdlib.h>
#include <string.h>

#define W 96
#define H 80
#define FRAMES 3

static char build_dir[200];

/* Frame k's camera: near, far (bounds of a nearer view would hide what is now visible),
 * then from the side. */
static void move_camera(sc_scene *s, const sc_camera *base, int k)
{
    static const float scale[FRAMES] = {0.7f, 1.6f, 1.0f};
    s->camera = *base;
    for (int c = 0; c < 3; c++)
        s->camera.eye[c] = base->target[c] + (base->eye[c] - base->target[c]) * scale[k];
    if (k == 2) s->camera.eye[0] += 3.0f;
}

/* One frame built for it alone into rgba; its triangles_rasterized or rays.primary. */
static bool fresh_frame(cp_graph *g, pl_scene_data *d, unsigned workers, uint8_t *rgba, uint64_t *count)
{
    char err[CP_ERR_MAX];
    pl_frame f;
    if (!pl_frame_init(&f, d, W, H, SH_AOV_COLOR, err)) return false;
    pl_frame_use_color(&f, (uint32_t *)rgba);
    gr_graph *ran = pl_render_frame(g, &f, &(gr_launch_opts){.workers = workers}, err);
    if (!ran) fprintf(stderr, "  fresh: %s\n", err);
    *count = pl_frame_count(&f, "triangles_rasterized") + pl_frame_count(&f, "rays.primary");
    gr_graph_destroy(ran);
    pl_frame_free(&f);
    return ran != NULL;
}

/* set: a graph setting (S.K=V) or NULL. */
static void frames_match_fresh_set(const char *pipeline, unsigned workers, const char *set)
{
    loaded l;
    char err[CP_ERR_MAX];
    rg_setup g;
    if (!load("teapot", &l)) { CHECK(0); return; }
    if (rg_setup_init(&g, &(rg_options){.pipeline = pipeline}, err)) {
        CHECK_MSG(0, "%s", err);
        unload(&l);
        return;
    }
    CHECK_MSG(!set || cp_set(g.graph, set, err) == 0, "%s", err);
    pl_scene_data d;
    pl_scene_data_init(&d, l.s, &l.g);
    pl_scene_data_set_bvh(&d, l.bvh);
    const sc_camera base = l.s->camera;
    uint8_t *kept_rgba = malloc(W * H * 4), *fresh_rgba = malloc(W * H * 4);
    pl_kept_graph *k = pl_kept_graph_new();
    const pl_frame_spec spec = {&d, W, H, SH_AOV_COLOR, (uint32_t *)kept_rgba, NULL, NULL};
    const gr_launch_opts launch = {.workers = workers};
    for (int f = 0; k && kept_rgba && fresh_rgba && f < FRAMES; f++) {
        move_camera(l.s, &base, f);
        const gr_graph *ran = pl_kept_graph_render(k, g.graph, &spec, &launch, err);
        CHECK_MSG(ran && gr_get_stats(ran), "%s, frame %d: %s", pipeline, f, err);
        if (!ran) break;
        pl_frame *kf = pl_kept_graph_frame(k);
        uint64_t kept_count = pl_frame_count(kf, "triangles_rasterized") + pl_frame_count(kf, "rays.primary");
        uint64_t fresh_count = 0;
        CHECK(fresh_frame(g.graph, &d, workers, fresh_rgba, &fresh_count));
        CHECK_MSG(!memcmp(kept_rgba, fresh_rgba, W * H * 4), "%s, %u workers, frame %d: the kept "
                  "graph's image differs from a new graph's", pipeline, workers, f);
        CHECK_MSG(kept_count == fresh_count && kept_count > 0, "%s, frame %d: count %llu, fresh %llu",
                  pipeline, f, (unsigned long long)kept_count, (unsigned long long)fresh_count);
    }
    CHECK_MSG(k && pl_kept_graph_builds(k) == 1, "%s: %u builds for %d frames", pipeline,
              k ? pl_kept_graph_builds(k) : 0, FRAMES);
    pl_kept_graph_free(k);
    free(kept_rgba);
    free(fresh_rgba);
    pl_scene_data_free(&d);
    rg_setup_free(&g);
    unload(&l);
}

static void frames_match_fresh(const char *pipeline, unsigned workers)
{
    frames_match_fresh_set(pipeline, workers, NULL);
}

static void raster(void) { frames_match_fresh("raster", 1); frames_match_fresh("raster", 2); }
static void raster_ordered(void) { frames_match_fresh("raster-ordered", 2); }
/* The OM sets a pixel's samples at its first fragment of the frame and resolves only
 * those (plr_sample_marks): the pixels the last frame drew and this one does not must
 * come out as the background, not as last frame's samples. */
static void raster_ordered_msaa(void)
{
    frames_match_fresh_set("raster-ordered", 2, "graph.msaa=4");
    frames_match_fresh_set("raster-ordered", 1, "graph.msaa=8");
}
static void raytrace(void) { frames_match_fresh("raytrace", 1); frames_match_fresh("raytrace", 2); }
static void hybrid(void) { frames_match_fresh("hybrid", 1); frames_match_fresh("hybrid", 2); }

/* The kept frame's Tile-Shade buffers (its only Tile-Shade copy's), NULL if none. */
static plr_tile_pool *tile_buffers(const pl_frame *f)
{
    for (int i = 0; i < f->nresources; i++) {
        plr_tile_pool *p = pl_frame_resource_at(f, i, "tile-buffers");
        if (p) return p;
    }
    return NULL;
}

/* Frame after frame (the camera moved: other tiles' triangles), the same pool, and a
 * tile that had triangles in every frame has the same buffers; the images match a new
 * graph's (frames_match_fresh). */
static void tile_buffers_kept(void)
{
    loaded l;
    char err[CP_ERR_MAX];
    rg_setup g;
    if (!load("teapot", &l)) { CHECK(0); return; }
    CHECK(rg_setup_init(&g, &(rg_options){.pipeline = "raster"}, err) == 0);
    CHECK(cp_set(g.graph, "graph.tile=16", err) == 0);     /* some tiles empty, some not */
    pl_scene_data d;
    pl_scene_data_init(&d, l.s, &l.g);
    const sc_camera base = l.s->camera;
    pl_kept_graph *k = pl_kept_graph_new();
    const pl_frame_spec spec = {&d, W, H, SH_AOV_COLOR, NULL, NULL, NULL};
    const gr_launch_opts launch = {.workers = 2};
    plr_tile_pool *pool = NULL;
    void **items = NULL;
    size_t ntiles = 0, same = 0, held = 0;
    for (int f = 0; k && f < FRAMES; f++) {
        move_camera(l.s, &base, f);
        if (!pl_kept_graph_render(k, g.graph, &spec, &launch, err)) { CHECK_MSG(0, "%s", err); break; }
        plr_tile_pool *p = tile_buffers(pl_kept_graph_frame(k));
        CHECK_MSG(p && (!pool || p == pool), "frame %d: tile-buffers %p, last frame %p", f,
                  (void *)p, (void *)pool);
        if (!p) break;
        if (items && p->ntiles == ntiles)
            for (size_t t = 0; t < ntiles; t++) same += items[t] && items[t] == p->items[t];
        for (size_t t = 0; t < p->ntiles; t++) held += p->items[t] != NULL;
        free(items);
        pool = p;
        ntiles = p->ntiles;
        items = malloc(ntiles * sizeof *items);
        if (items) memcpy(items, p->items, ntiles * sizeof *items);
    }
    CHECK_MSG(ntiles == ((W + 15) / 16) * ((H + 15) / 16), "%zu tiles", ntiles);
    CHECK_MSG(held > 0 && same > 0, "tiles holding buffers %zu, kept from the last frame %zu",
              held, same);
    free(items);
    pl_kept_graph_free(k);
    pl_scene_data_free(&d);
    rg_setup_free(&g);
    unload(&l);
}

/* What shapes the graph: its description, the frame's size and the launch options. */
static void rebuilt_when_shape_changes(void)
{
    loaded l;
    char err[CP_ERR_MAX];
    rg_setup g;
    if (!load("teapot", &l)) { CHECK(0); return; }
    CHECK(rg_setup_init(&g, &(rg_options){.pipeline = "raster"}, err) == 0);
    pl_scene_data d;
    pl_scene_data_init(&d, l.s, &l.g);
    pl_kept_graph *k = pl_kept_graph_new();
    pl_frame_spec spec = {&d, W, H, SH_AOV_COLOR, NULL, NULL, NULL};
    gr_launch_opts launch = {.workers = 1};
    CHECK(pl_kept_graph_render(k, g.graph, &spec, &launch, err) && pl_kept_graph_builds(k) == 1);
    CHECK(pl_kept_graph_render(k, g.graph, &spec, &launch, err) && pl_kept_graph_builds(k) == 1);
    spec.width = W / 2;
    CHECK(pl_kept_graph_render(k, g.graph, &spec, &launch, err) && pl_kept_graph_builds(k) == 2);
    CHECK(pl_kept_graph_frame(k)->width == W / 2);
    launch.workers = 2;
    CHECK(pl_kept_graph_render(k, g.graph, &spec, &launch, err) && pl_kept_graph_builds(k) == 3);
    launch.scheduler = "task-stealing";
    CHECK(pl_kept_graph_render(k, g.graph, &spec, &launch, err) && pl_kept_graph_builds(k) == 4);
    CHECK(cp_set(g.graph, "graph.batch=96", err) == 0);
    CHECK(pl_kept_graph_render(k, g.graph, &spec, &launch, err) && pl_kept_graph_builds(k) == 5);
    CHECK(pl_kept_graph_render(k, g.graph, &spec, &launch, err) && pl_kept_graph_builds(k) == 5);
    /* a graph that cannot be built: the message, and nothing kept */
    CHECK(cp_set(g.graph, "graph.tile=7", err) == 0);
    CHECK(!pl_kept_graph_render(k, g.graph, &spec, &launch, err) && *err && !pl_kept_graph_frame(k));
    pl_kept_graph_free(k);
    pl_scene_data_free(&d);
    rg_setup_free(&g);
    unload(&l);
}

/* plr_render_kept and plrt_render_kept: each frame the bytes and counts of
 * plr_render's and plrt_render's, the graph built once. */
static void one_call_renderers(void)
{
    loaded l;
    char err[SC_ERR_MAX];
    if (!load("teapot", &l)) { CHECK(0); return; }
    const sc_camera base = l.s->camera;
    static uint8_t kept[W * H * 4], fresh[W * H * 4];
    plr_config rc;
    plr_config_default(&rc);
    rc.width = W, rc.height = H, rc.workers = 2;
    plrt_config tc;
    plrt_config_default(&tc);
    tc.width = W, tc.height = H, tc.workers = 2;
    pl_kept_builtin *kr = pl_kept_builtin_new(), *kt = pl_kept_builtin_new();
    for (int f = 0; kr && kt && f < FRAMES; f++) {
        move_camera(l.s, &base, f);
        plr_counts a, b;
        const gr_graph *ran = plr_render_kept(kr, l.s, &l.g, &rc, kept, &a, err);
        gr_graph *one = plr_render(l.s, &l.g, &rc, fresh, &b, err);
        CHECK_MSG(ran && one && !memcmp(kept, fresh, sizeof kept) && a.fragments == b.fragments &&
                  a.triangles_rasterized == b.triangles_rasterized, "raster frame %d: %s", f, err);
        gr_graph_destroy(one);
        plrt_counts c, d;
        ran = plrt_render_kept(kt, l.s, &l.g, l.bvh, &tc, kept, &c, err);
        one = plrt_render(l.s, &l.g, l.bvh, &tc, fresh, &d, err);
        CHECK_MSG(ran && one && !memcmp(kept, fresh, sizeof kept) && c.primary == d.primary &&
                  c.shadow == d.shadow, "raytrace frame %d: %s", f, err);
        gr_graph_destroy(one);
    }
    pl_kept_builtin_forget(kr);       /* as before freeing the scene: nothing kept */
    CHECK(kr && !pl_kept_builtin_frame(kr));
    CHECK(kr && plr_render_kept(kr, l.s, &l.g, &rc, kept, NULL, err) && pl_kept_builtin_frame(kr));
    rc.width = 0;
    CHECK(kr && !plr_render_kept(kr, l.s, &l.g, &rc, kept, NULL, err) && strstr(err, "image size"));
    pl_kept_builtin_free(kr);
    pl_kept_builtin_free(kt);
    unload(&l);
}

/* gramps-render --frames 3 (a warm-up and three frames through one graph) against
 * --frames 1: the same image and the same counts of work in the last frame (counters
 * carried over would add up; stale coarse depth bounds would cull more). One worker:
 * with two, how many fragments coarse depth culls depends on which tile's bounds
 * arrived first (667 or 679 shaded on the same frame). */
static void gramps_render_frames(void)
{
    static const char *const pipes[] = {"raster-ordered", "raytrace", "hybrid"};
    static const char *const keys[] = {"triangles_rasterized", "coarse_z_culled", "fragments_shaded",
                                       "shadow", "secondary", "hybrid.trace_rays"};
    for (size_t p = 0; p < sizeof pipes / sizeof *pipes; p++) {
        char png[2][300], stats[2][300], args[1500];
        char *json[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++) {
            snprintf(png[k], sizeof png[k], "%s/tests/kept-%s-%d.png", build_dir, pipes[p], k);
            snprintf(stats[k], sizeof stats[k], "%s/tests/kept-%s-%d.json", build_dir, pipes[p], k);
            snprintf(args, sizeof args, "-q -t 1 -p %s --size 64x64 --frames %d --stats %s -o %s teapot",
                     pipes[p], k ? 3 : 1, stats[k], png[k]);
            CHECK_MSG(run(args) == 0, "%s: %s", args, out);
            json[k] = slurp(stats[k], NULL);
        }
        CHECK_MSG(same_files(png[0], png[1]), "%s: --frames 3 drew another image", pipes[p]);
        int found = 0;
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
            long long one = stat_of(json[0], keys[i]), three = stat_of(json[1], keys[i]);
            found += one > 0;
            CHECK_MSG(one == three, "%s: %s %lld after one frame, %lld after three", pipes[p],
                      keys[i], one, three);
        }
        CHECK_MSG(found > 0, "%s: no counts in the statistics", pipes[p]);
        free(json[0]);
        free(json[1]);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    char self[300];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(build_dir, sizeof build_dir, "%s/../..", dirname(self));
    RUN(raster);
    RUN(raster_ordered);
    RUN(raster_ordered_msaa);
    RUN(raytrace);
    RUN(hybrid);
    RUN(tile_buffers_kept);
    RUN(rebuilt_when_shape_changes);
    RUN(one_call_renderers);
    RUN(gramps_render_frames);
    return check_finish();
}

/* Images are bit-identical under every scheduler (DESIGN.md: "the same scene gives a
 * bit-identical image for every thread count and every scheduler"): raster, raster with
 * the parallel rasterizer, and the ray tracer (its cycle, reflection bounces, push-
 * coalesced shadow rays), at 1 and 2 workers, compared byte for byte against the GRAMPS
 * scheduler's at 1 worker. Small images keep it fast; the graphs are the full ones. The
 * Static scheduler runs with a profile taken from a GRAMPS frame, as gramps-render does. */
#include "pipelines/raster/raster.h"
#include "pipelines/raytrace/raytrace.h"
#include "tests/check.h"
#include "tests/loaded_scene.h"

#include <stdlib.h>
#include <string.h>

#define W 96
#define H 72

static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first", "static", "qes", "pss"};
#define NSCHEDS ((int)(sizeof scheds / sizeof *scheds))

/* One frame of either pipeline into img; the finished graph, or NULL. */
static gr_graph *frame(loaded *l, bool raster, plr_graph kind, unsigned workers,
                       const gr_launch_opts *lo, uint8_t *img)
{
    char err[SC_ERR_MAX];
    gr_graph *g;
    if (raster) {
        plr_config c;
        plr_config_default(&c);
        c.width = W; c.height = H; c.workers = workers; c.graph = kind; c.launch = *lo;
        plr_counts n;
        g = plr_render(l->s, &l->g, &c, img, &n, err);
    } else {
        plrt_config c;
        plrt_config_default(&c);
        c.width = W; c.height = H; c.workers = workers; c.bounces = 2; c.launch = *lo;
        plrt_counts n;
        g = plrt_render(l->s, &l->g, l->bvh, &c, img, &n, err);
    }
    if (!g) fprintf(stderr, "  %s\n", err);
    return g;
}

static void compare_all(const char *scene, bool raster, plr_graph kind)
{
    loaded l;
    if (!load(scene, &l)) { CHECK(0); return; }
    uint8_t *ref = calloc(W * H, 4), *img = calloc(W * H, 4);
    gr_launch_opts base = {.scheduler = "gramps"};
    gr_graph *g = frame(&l, raster, kind, 1, &base, ref);
    gr_profile *prof = g ? gr_profile_take(g) : NULL;
    CHECK(g && prof);
    gr_graph_destroy(g);
    size_t lit = 0;                       /* the comparison means something: a picture */
    for (size_t i = 0; i < (size_t)W * H * 4; i += 4) lit += ref[i] | ref[i + 1] | ref[i + 2] ? 1 : 0;
    CHECK_MSG(lit > W * H / 20, "%s: only %zu pixels lit", scene, lit);
    for (int k = 0; k < NSCHEDS; k++)
        for (unsigned w = 1; w <= 2; w++) {
            memset(img, 0xcd, W * H * 4);
            gr_launch_opts lo = {.scheduler = scheds[k], .profile = prof};
            g = frame(&l, raster, kind, w, &lo, img);
            CHECK(g && !strcmp(gr_scheduler_of(g), scheds[k]));
            CHECK_MSG(memcmp(ref, img, W * H * 4) == 0, "%s %s (graph %d): %s at %u workers "
                      "differs from gramps", scene, raster ? "raster" : "raytrace", (int)kind,
                      scheds[k], w);
            gr_graph_destroy(g);
        }
    gr_profile_free(prof);
    free(ref);
    free(img);
    unload(&l);
}

static void test_raster(void) { compare_all("teapot", true, PLR_TILED); }
static void test_raster_ordered(void) { compare_all("teapot", true, PLR_ORDERED); }
static void test_parallel_rast(void) { compare_all("teapot", true, PLR_PARALLEL); }
static void test_raytrace(void) { compare_all("cornell", false, PLR_TILED); }
static void test_raytrace_teapot(void) { compare_all("teapot", false, PLR_TILED); }

int main(void)
{
    RUN(test_raster);
    RUN(test_raster_ordered);
    RUN(test_parallel_rast);
    RUN(test_raytrace);
    RUN(test_raytrace_teapot);
    return check_finish();
}

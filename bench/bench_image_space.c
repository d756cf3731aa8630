/* Image-space stages benchmark (docs/image-space.md): what they add to a frame of
 * ../shared/scenes/bunny.obj (teapot without it) at 1024x1024 with the raster graph.
 * Prints "name value unit":
 *
 *   frame_<graph>_t<N>       the whole frame (pl_render_frame), raster and raster with a
 *                            tone map, FXAA or an outline, median and minimum of 15
 *                            frames taken in alternation (graph after graph, 15 rounds),
 *                            so a busy machine slows them alike
 *   post_<graph>_t<N>        the image-space passes alone on the finished image
 *                            (pli_run: decode, stages, encode), median and minimum of 15
 *
 * at 1 and 2 workers (and 4, 8 ... up to the hardware threads). */
#include "pipelines/frame_memory.h"
#include "pipelines/image/image.h"
#include "pipelines/stages.h"
#include "raytracer/bvh.h"
#include "tools/common/measure.h"
#include "tools/common/render_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIDE 1024
#define ROUNDS 15
#define NGRAPHS 4

static const char *const graphs[NGRAPHS] = {"raster", "raster-tonemap", "raster-fxaa", "raster+outline"};

typedef struct scene { sc_scene *s; sc_geometry g; pl_scene_data d; } scene;

static bool setup(rg_setup *g, const char *name, char err[CP_ERR_MAX])
{
    bool outline = !strcmp(name, "raster+outline");
    rg_options o = {.pipeline = outline ? "raster" : name};
    if (rg_setup_init(g, &o, err)) return false;
    return !outline || !cp_graph_load_text(g->graph, "[stage outline]\ntype = image.outline\n",
                                           "bench", err);
}

static double frame_ms(rg_setup *g, scene *sc, unsigned workers, char err[CP_ERR_MAX])
{
    pl_frame f;
    if (!pl_frame_init(&f, &sc->d, SIDE, SIDE, SH_AOV_COLOR, err)) return -1;
    gr_launch_opts lo = {.workers = workers};
    double t0 = io_now_ms();
    gr_graph *run = pl_render_frame(g->graph, &f, &lo, err);
    double ms = io_now_ms() - t0;
    gr_graph_destroy(run);
    pl_frame_free(&f);
    return run ? ms : -1;
}

static void print_stats(const char *what, const char *graph, unsigned workers, double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, io_cmp_double);
    printf("%s_%s_t%u_median %.2f ms\n", what, graph, workers, io_median_sorted(ms, (size_t)n));
    printf("%s_%s_t%u_min %.2f ms\n", what, graph, workers, ms[0]);
}

static void frames(rg_setup *g, scene *sc, unsigned workers)
{
    double ms[NGRAPHS][ROUNDS];
    char err[CP_ERR_MAX];
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < NGRAPHS; k++)
            if ((ms[k][r] = frame_ms(&g[k], sc, workers, err)) < 0) { printf("# %s\n", err); return; }
    for (int k = 0; k < NGRAPHS; k++) print_stats("frame", graphs[k], workers, ms[k], ROUNDS);
}

/* The passes alone: the graph once, then pli_run on a copy of its image each time. */
static void passes(rg_setup *g, const char *name, scene *sc, unsigned workers)
{
    char err[CP_ERR_MAX];
    pl_frame f;
    if (!pl_frame_init(&f, &sc->d, SIDE, SIDE, SH_AOV_COLOR, err)) return;
    pl_vars_ctx vc = {g->graph, SIDE, SIDE, workers};
    cp_vars vars = pl_vars(&vc);
    cp_instance *in = cp_instance_new(g->graph, &f, &vars, err);
    gr_launch_opts lo = {.workers = workers};
    pl_frame_prepare(&f, 1);
    uint32_t *img = pl_frame_image_pixels(&f), *copy = malloc((size_t)SIDE * SIDE * 4);
    const cp_image_pass *p;
    int n = in ? cp_instance_image_passes(in, &p) : 0;
    if (in && img && copy && cp_instance_run(in, &lo, err) == GR_OK) {
        memcpy(copy, img, (size_t)SIDE * SIDE * 4);
        double ms[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            memcpy(img, copy, (size_t)SIDE * SIDE * 4);
            double t0 = io_now_ms();
            if (!pli_run(&f, p, n, pli_graph_tile(g->graph, &vars), workers, err)) { printf("# %s\n", err); break; }
            ms[r] = io_now_ms() - t0;
        }
        print_stats("post", name, workers, ms, ROUNDS);
    } else printf("# %s\n", err);
    free(copy);
    cp_instance_free(in);
    pl_frame_free(&f);
}

int main(void)
{
    pl_keep_freed_memory();
    scene sc;
    char err[CP_ERR_MAX];
    const char *path = access("../shared/scenes/bunny.obj", R_OK) == 0 ? "../shared/scenes/bunny.obj" : "teapot";
    if (sc_load(path, &sc.s, err) || sc_flatten(sc.s, &sc.g, err)) { printf("# %s: %s\n", path, err); return 1; }
    pl_scene_data_init(&sc.d, sc.s, &sc.g);
    printf("# %s at %dx%d, raster graph\n", path, SIDE, SIDE);
    rg_setup g[NGRAPHS];
    for (int k = 0; k < NGRAPHS; k++)
        if (!setup(&g[k], graphs[k], err)) { printf("# %s\n", err); return 1; }
    long hw = sysconf(_SC_NPROCESSORS_ONLN);
    for (unsigned w = 1; w <= 2 || (long)w <= hw; w *= 2) {
        frames(g, &sc, w);
        for (int k = 1; k < NGRAPHS; k++) passes(&g[k], graphs[k], &sc, w);
    }
    for (int k = 0; k < NGRAPHS; k++) rg_setup_free(&g[k]);
    pl_scene_data_free(&sc.d);
    sc_geometry_free(&sc.g);
    sc_free(sc.s);
    return 0;
}

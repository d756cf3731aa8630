/* Rasterization graph benchmark (the sort-middle default, then the thesis' ordered graph,
 * "ordered_", and its parallel Setup/Bin + per-tile Rast variant, "prast_"): frame time (median of 3 after a warm-up) and peak queue
 * footprint at 1024x1024 for teapot, courtyard, fairy and ../shared/scenes/bunny.obj,
 * per worker count (1, 2, 4, ... up to GRAMPS_BENCH_MAX_WORKERS or the hardware threads).
 * Prints "name value unit". */
#include "pipelines/frame_memory.h"
#include "pipelines/kept_graph.h"
#include "pipelines/raster/raster.h"
#include "tools/common/measure.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void bench_scene(const char *label, const char *path, unsigned maxw, plr_graph kind)
{
    sc_scene *s;
    sc_geometry g;
    char err[SC_ERR_MAX];
    if (sc_load(path, &s, err) || sc_flatten(s, &g, err)) { printf("# %s: %s\n", label, err); return; }
    plr_config c;
    plr_config_default(&c);
    c.graph = kind;
    const char *const prefixes[] = {"", "ordered_", "prast_"};
    const char *v = prefixes[kind];
    uint8_t *img = malloc((size_t)c.width * c.height * 4);
    for (unsigned w = 1; w <= maxw; w *= 2) {
        c.workers = w;
        double t[4];
        unsigned long long fp = 0;
        plr_counts n;
        pl_kept_builtin *keep = pl_kept_builtin_new();   /* frames 1-3 run the warm-up's graph */
        for (int i = 0; i < 4; i++) {
            double t0 = io_now_ms();
            const gr_graph *gg = keep ? plr_render_kept(keep, s, &g, &c, img, &n, err) : NULL;
            t[i] = io_now_ms() - t0;
            if (!gg) { printf("# %s\n", keep ? err : "out of memory"); exit(1); }
            fp = gr_get_stats(gg)->peak_footprint_bytes;
        }
        pl_kept_builtin_free(keep);
        qsort(t + 1, 3, sizeof *t, io_cmp_double);
        printf("raster_%sframe_ms_%s_%uw %.1f ms\n", v, label, w, t[2]);
        printf("raster_%speak_footprint_%s_%uw %llu bytes\n", v, label, w, fp);
        if (w == 1) printf("raster_%sfragments_%s %llu fragments\n", v, label, (unsigned long long)n.fragments);
    }
    free(img);
    sc_geometry_free(&g);
    sc_free(s);
}

int main(void)
{
    pl_keep_freed_memory();           /* frames reuse memory, as a renderer would */
    const char *cap = getenv("GRAMPS_BENCH_MAX_WORKERS");
    unsigned maxw = (unsigned)(cap ? atol(cap) : sysconf(_SC_NPROCESSORS_ONLN));
    for (int kind = PLR_TILED; kind <= PLR_PARALLEL; kind++) {
        bench_scene("teapot", "teapot", maxw, (plr_graph)kind);
        bench_scene("courtyard", "courtyard", maxw, (plr_graph)kind);
        bench_scene("fairy", "fairy", maxw, (plr_graph)kind);
        bench_scene("bunny", "../shared/scenes/bunny.obj", maxw, (plr_graph)kind);
    }
    return 0;
}

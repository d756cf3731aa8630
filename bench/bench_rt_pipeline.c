/* Ray-tracing graph benchmark: the thesis workload (1024x1024, one primary ray per pixel,
 * a shadow ray per hit, one bounce of reflections, and their shadow rays) on teapot,
 * courtyard, fairy and ../shared/scenes/bunny.obj. Prints "name value unit": frame time
 * (median of 3 after a warm-up), rays per second and peak queue footprint per worker
 * count, the BVH build's time per thread count, and the footprint with and without the
 * Tiler -> Primary capacity limit.
 * Footprints are medians over the frames: at 2 workers a frame's peak is bimodal (tens
 * of KB while Blend keeps up, hundreds once every bounded queue behind it has filled),
 * so a single frame's figure, or a ratio of two, is a coin flip.
 * GRAMPS_BENCH_MAX_WORKERS caps the sweep (default: hardware threads). */
#include "pipelines/frame.h"
#include "pipelines/frame_memory.h"
#include "pipelines/kept_graph.h"
#include "pipelines/raytrace/raytrace.h"
#include "raytracer/bvh.h"
#include "tools/common/measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_u64(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return (x > y) - (x < y);
}

#define FOOTPRINT_FRAMES 5

typedef struct scene_data { sc_scene *s; sc_geometry g; rt_bvh *bvh; } scene_data;

static pl_kept_builtin *keep;         /* the graph, run again while c and the scene stay */

static double frame(scene_data *d, plrt_config *c, uint8_t *img, plrt_counts *n,
                    unsigned long long *footprint)
{
    char err[SC_ERR_MAX] = "out of memory";
    if (!keep) keep = pl_kept_builtin_new();
    double t0 = io_now_ms();
    const gr_graph *g = keep ? plrt_render_kept(keep, d->s, &d->g, d->bvh, c, img, n, err) : NULL;
    double t = io_now_ms() - t0;
    if (!g) { fprintf(stderr, "%s\n", err); exit(1); }
    *footprint = gr_get_stats(g)->peak_footprint_bytes;
    return t;
}

/* The BVH build on 1, 2, 4 ... threads (pl_scene_data_bvh, the renderers' way):
 * minimum of 5, and the speed-up over one thread. */
static void bench_bvh_build(const char *label, const sc_geometry *g, unsigned maxw)
{
    double one = 0;
    for (unsigned t = 1; t <= maxw; t *= 2) {
        double best = 1e30;
        for (int i = 0; i < 5; i++) {
            pl_scene_data d;
            pl_scene_data_init(&d, NULL, g);
            d.build_threads = t;
            double t0 = io_now_ms();
            if (!pl_scene_data_bvh(&d)) { fprintf(stderr, "out of memory\n"); exit(1); }
            double ms = io_now_ms() - t0;
            best = ms < best ? ms : best;
            pl_scene_data_free(&d);
        }
        if (t == 1) one = best;
        printf("rt_bvh_build_ms_%s_%ut %.1f ms\n", label, t, best);
        printf("rt_bvh_build_speedup_%s_%ut %.2f x\n", label, t, one / best);
    }
}

static void bench_scene(const char *label, const char *path, unsigned maxw)
{
    scene_data d;
    char err[SC_ERR_MAX];
    if (sc_load(path, &d.s, err) || sc_flatten(d.s, &d.g, err)) { printf("# %s: %s\n", label, err); return; }
    bench_bvh_build(label, &d.g, maxw);
    d.bvh = rt_bvh_build(d.g.positions, d.g.indices, d.g.ntriangles, NULL);
    plrt_config c;
    plrt_config_default(&c);
    uint8_t *img = malloc((size_t)c.width * c.height * 4);
    for (unsigned w = 1; w <= maxw; w *= 2) {
        c.workers = w;
        plrt_counts n;
        unsigned long long fp[3];
        double t[3];
        frame(&d, &c, img, &n, &fp[0]);
        for (int i = 0; i < 3; i++) t[i] = frame(&d, &c, img, &n, &fp[i]);
        qsort(t, 3, sizeof *t, io_cmp_double);
        qsort(fp, 3, sizeof *fp, cmp_u64);
        double rays = (double)(n.primary + n.shadow + n.secondary);
        printf("rt_frame_ms_%s_%uw %.1f ms\n", label, w, t[1]);
        printf("rt_mrays_per_s_%s_%uw %.2f Mrays/s\n", label, w, rays / t[1] / 1e3);
        printf("rt_peak_footprint_%s_%uw %llu bytes\n", label, w, fp[1]);
    }
    free(img);
    pl_kept_builtin_forget(keep);     /* before the BVH its scene data points to */
    rt_bvh_free(d.bvh);
    sc_geometry_free(&d.g);
    sc_free(d.s);
}

/* The thesis: a capacity on Sampler->Camera cut the footprint more than tenfold; here
 * the Sampler is part of Primary, and the capacity is the Tiler -> Primary one. */
static void bench_capacity(unsigned workers)
{
    scene_data d;
    char err[SC_ERR_MAX];
    if (sc_load("../shared/scenes/bunny.obj", &d.s, err) || sc_flatten(d.s, &d.g, err)) return;
    d.bvh = rt_bvh_build(d.g.positions, d.g.indices, d.g.ntriangles, NULL);
    plrt_config c;
    plrt_config_default(&c);
    c.workers = workers;
    uint8_t *img = malloc((size_t)c.width * c.height * 4);
    plrt_counts n;
    const uint32_t capacity = c.runs_capacity;
    unsigned long long limited[FOOTPRINT_FRAMES], unlimited[FOOTPRINT_FRAMES];
    for (int i = 0; i < FOOTPRINT_FRAMES; i++) {     /* alternating, so drift hits both */
        c.runs_capacity = capacity;
        frame(&d, &c, img, &n, &limited[i]);
        c.runs_capacity = 1u << 20;
        frame(&d, &c, img, &n, &unlimited[i]);
    }
    qsort(limited, FOOTPRINT_FRAMES, sizeof *limited, cmp_u64);
    qsort(unlimited, FOOTPRINT_FRAMES, sizeof *unlimited, cmp_u64);
    const int mid = FOOTPRINT_FRAMES / 2;
    printf("rt_footprint_runs_cap64_bunny_%uw %llu bytes\n", workers, limited[mid]);
    printf("rt_footprint_runs_unbounded_bunny_%uw %llu bytes\n", workers, unlimited[mid]);
    printf("rt_footprint_reduction_bunny_%uw %.1f x\n", workers,
           (double)unlimited[mid] / (double)limited[mid]);
    free(img);
    pl_kept_builtin_forget(keep);     /* before the BVH its scene data points to */
    rt_bvh_free(d.bvh);
    sc_geometry_free(&d.g);
    sc_free(d.s);
}

int main(void)
{
    pl_keep_freed_memory();           /* frames reuse memory, as a renderer would */
    const char *cap = getenv("GRAMPS_BENCH_MAX_WORKERS");
    unsigned maxw = (unsigned)(cap ? atol(cap) : sysconf(_SC_NPROCESSORS_ONLN));
    bench_scene("teapot", "teapot", maxw);
    bench_scene("courtyard", "courtyard", maxw);
    bench_scene("fairy", "fairy", maxw);
    bench_scene("bunny", "../shared/scenes/bunny.obj", maxw);
    bench_capacity(1);
    if (maxw > 1) bench_capacity(maxw);
    return 0;
}

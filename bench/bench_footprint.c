/* Queue footprint per scene, pipeline and worker count, beside the papers' figures.
 *
 * For teapot, courtyard, fairy and ../shared/scenes/bunny.obj at 1024x1024: the raster
 * graphs (sort-middle default, ordered, parallel-Rast) and the ray tracer (0 and 1 bounces), at 1, 2,
 * 4, ... workers (up to GRAMPS_BENCH_MAX_WORKERS or the hardware threads). Each
 * configuration renders FRAMES frames after a warm-up and prints the median and the
 * largest per-frame peak footprint and the median time-averaged footprint, in KB, and the largest reserved peak of any queue without a
 * backward binding as a share of its capacity (at most 1 while capacity holds).
 *
 * Then the references, printed as `ref_...` lines: thesis Table 4.2 (peak queue size,
 * CPU-like simulated configuration, 8 cores x 4 threads) and Sanchez 2011 Table III
 * (ray-0/ray-1 with the GRAMPS scheduler at 24 threads, average and maximum). They are
 * not measured here; docs/footprint.md says what is comparable. */
#include "pipelines/frame_memory.h"
#include "pipelines/raster/raster.h"
#include "pipelines/raytrace/raytrace.h"
#include "raytracer/bvh.h"
#include "tools/common/measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FRAMES 5

typedef enum variant { RASTER, RASTER_ORDERED, RASTER_PARALLEL, RAY_B0, RAY_B1, NVARIANTS } variant;

static const char *const variant_names[NVARIANTS] = {"raster", "raster_ordered", "raster_prast",
                                                     "raytrace_b0", "raytrace_b1"};

typedef struct scene_data {
    sc_scene *s;
    sc_geometry g;
    rt_bvh *bvh;
} scene_data;

typedef struct frame_fp {
    double peak_kb, avg_kb;
    double worst_share;            /* reserved peak / capacity, worst forward queue */
} frame_fp;

/* Median of n values (the mean of the two middle ones for even n); sorts v. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, io_cmp_double);
    return io_median_sorted(v, (size_t)n);
}

static frame_fp footprint_of(const gr_graph *g)
{
    const gr_stats *st = gr_get_stats(g);
    frame_fp f = {.peak_kb = st->peak_footprint_bytes / 1024.0,
                  .avg_kb = st->avg_footprint_bytes / 1024.0};
    for (int i = 0; i < st->nqueues; i++) {
        const gr_queue_stats *q = &st->queues[i];
        double space = (double)q->capacity * (q->subqueues ? q->subqueues : 1);
        double share = q->reserved_peak_packets / space;
        if (!q->backward && share > f.worst_share) f.worst_share = share;
    }
    return f;
}

static gr_graph *render(scene_data *d, variant v, unsigned workers, uint8_t *img,
                        char err[SC_ERR_MAX])
{
    if (v <= RASTER_PARALLEL) {
        plr_config c;
        plr_config_default(&c);
        c.workers = workers;
        c.graph = v == RASTER ? PLR_TILED : v == RASTER_ORDERED ? PLR_ORDERED : PLR_PARALLEL;
        plr_counts n;
        return plr_render(d->s, &d->g, &c, img, &n, err);
    }
    plrt_config c;
    plrt_config_default(&c);
    c.workers = workers;
    c.bounces = v == RAY_B1 ? 1 : 0;
    plrt_counts n;
    return plrt_render(d->s, &d->g, d->bvh, &c, img, &n, err);
}

static void measure(scene_data *d, const char *label, variant v, unsigned workers, uint8_t *img)
{
    double peak[FRAMES], avg[FRAMES], worst = 0, max_peak = 0;
    char err[SC_ERR_MAX];
    for (int i = -1; i < FRAMES; i++) {              /* frame -1: warm-up */
        gr_graph *g = render(d, v, workers, img, err);
        if (!g) { fprintf(stderr, "bench_footprint: %s: %s\n", label, err); exit(1); }
        frame_fp f = footprint_of(g);
        gr_graph_destroy(g);
        if (i < 0) continue;
        peak[i] = f.peak_kb;
        avg[i] = f.avg_kb;
        if (f.peak_kb > max_peak) max_peak = f.peak_kb;
        if (f.worst_share > worst) worst = f.worst_share;
    }
    const char *p = variant_names[v];
    printf("footprint_peak_median_%s_%s_%uw %.1f KB\n", p, label, workers, median(peak, FRAMES));
    printf("footprint_peak_max_%s_%s_%uw %.1f KB\n", p, label, workers, max_peak);
    printf("footprint_avg_median_%s_%s_%uw %.1f KB\n", p, label, workers, median(avg, FRAMES));
    printf("footprint_worst_reserved_share_%s_%s_%uw %.2f x capacity\n", p, label, workers, worst);
}

static void bench_scene(const char *label, const char *path, unsigned maxw)
{
    scene_data d;
    char err[SC_ERR_MAX];
    if (sc_load(path, &d.s, err) || sc_flatten(d.s, &d.g, err)) {
        fprintf(stderr, "bench_footprint: %s\n", err);
        exit(1);
    }
    d.bvh = rt_bvh_build(d.g.positions, d.g.indices, d.g.ntriangles, NULL);
    plr_config c;
    plr_config_default(&c);
    uint8_t *img = malloc((size_t)c.width * c.height * 4);
    for (int v = 0; v < NVARIANTS; v++)
        for (unsigned w = 1; w <= maxw; w *= 2) measure(&d, label, (variant)v, w, img);
    free(img);
    rt_bvh_free(d.bvh);
    sc_geometry_free(&d.g);
    sc_free(d.s);
}

/* The papers' figures, for the side-by-side table in docs/footprint.md. */
static void print_references(void)
{
    static const struct { const char *scene; double d3d, ray; } thesis[] = {
        {"teapot", 510, 156}, {"courtyard", 544, 176}, {"fairy", 561, 205}};
    for (size_t i = 0; i < sizeof thesis / sizeof *thesis; i++) {
        printf("ref_thesis_table4_2_peak_raster_%s %.0f KB\n", thesis[i].scene, thesis[i].d3d);
        printf("ref_thesis_table4_2_peak_raytrace_%s %.0f KB\n", thesis[i].scene, thesis[i].ray);
    }
    printf("ref_sanchez_table3_ray0_gramps_avg 215.9 KB\n");
    printf("ref_sanchez_table3_ray0_gramps_max 287.8 KB\n");
    printf("ref_sanchez_table3_ray1_gramps_avg 361.1 KB\n");
    printf("ref_sanchez_table3_ray1_gramps_max 447.4 KB\n");
}

int main(void)
{
    pl_keep_freed_memory();           /* frames reuse memory, as a renderer would */
    const char *cap = getenv("GRAMPS_BENCH_MAX_WORKERS");
    unsigned maxw = (unsigned)(cap ? atol(cap) : sysconf(_SC_NPROCESSORS_ONLN));
    if (maxw < 1) maxw = 1;
    bench_scene("teapot", "teapot", maxw);
    bench_scene("courtyard", "courtyard", maxw);
    bench_scene("fairy", "fairy", maxw);
    bench_scene("bunny", "../shared/scenes/bunny.obj", maxw);
    print_references();
    return 0;
}

/* Two graphs on one scene, their frames timed in turn in one process: -p's graph
 * (default hybrid) against --against's (default raytrace), with gramps-render's options (scene, --size, -t,
 * --scheduler, --spp, --set, ...) applying to both. bench/hybrid.sh runs it for issue
 * 31's target (-p hybrid at most 1.0x -p raytrace).
 *
 * Why in one process, in turn: the shared development VM runs a process at two speeds
 * about 1.4x apart for seconds at a time, so two runs timed one after the other compare
 * two phases of the machine as often as two graphs. Here each pair is one frame of each
 * graph, timed back to back (each after an untimed frame of its own, so that it starts
 * with its own buffers in the caches, as in a run of frames), the order alternating from
 * pair to pair; the comparison is the median of the per-pair ratios. Both graphs share
 * the scene data (one BVH, built before the frames) and each keeps its graph and frame
 * (pl_kept_graph), as gramps-render does for its frames.
 *
 * Prints "name value unit" lines, NAME = <p>_vs_<against>_<scene>_<w>t (the scene's file
 * name without directory and extension, w the workers): NAME (the median of the pair
 * ratios), NAME_q1, NAME_q3, NAME_ci_lo and NAME_ci_hi (the range of order statistics
 * that holds the true median with at least 95% probability: binomial, distribution-free),
 * NAME_min (the fastest frames' ratio), <p>_frame_ms_<scene>_<w>t and
 * <against>_frame_ms_<scene>_<w>t (median frames; <against> is <p>_against when the
 * two are one graph, told apart by --against-set), and a verdict against --target (1.0):
 * met where the range ends at or below it, missed where it starts above, else
 * undecided. Exit
 * status 0, 1 when a graph or frame fails, 2 for a bad flag. */
#include "pipelines/frame_memory.h"
#include "pipelines/kept_graph.h"
#include "tools/common/measure.h"
#include "tools/common/render_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAIRS 1000

enum { OPT_AGAINST = RO_OPT_END, OPT_AGAINST_SET, OPT_PAIRS, OPT_TARGET };

#define MAX_AGAINST_SETS 16

typedef struct options {
    ro_options c;
    const char *against;
    const char *against_sets[MAX_AGAINST_SETS];   /* --against-set: the --against side's only */
    int nagainst_sets;
    int pairs;
    double target;                        /* the verdict's bound on the ratio */
} options;

static void usage(FILE *out)
{
    fprintf(out, "usage: bench_pipeline_pairs [-p P] [--against P] [--against-set S.K=V] [--pairs N]\n"
                 "                            [--target R] [gramps-render options] [SCENE]\n"
                 "  -p P          the graph timed (default hybrid)\n"
                 "  --against P   the graph it is compared with (default raytrace)\n"
                 "  --against-set SECTION.KEY=VALUE\n"
                 "                a --set for the --against side only, after the shared ones\n"
                 "                (--msaa 4 --against raster --against-set graph.msaa=1: 4x against 1x)\n"
                 "  --pairs N     timed frames of each, in turn (default 24, at most %d)\n"
                 "  --target R    the verdict's bound on the ratio (default 1.0)\n", MAX_PAIRS);
    ro_usage(out);
}

static int parse_one(void *ctx, int c, const char *arg, const char *flag)
{
    options *o = ctx;
    if (c == OPT_AGAINST) {
        o->against = arg;
        return 0;
    }
    if (c == OPT_AGAINST_SET) {
        if (o->nagainst_sets == MAX_AGAINST_SETS) return ro_bad_flag(&o->c, flag, arg, "too many");
        o->against_sets[o->nagainst_sets++] = arg;
        return 0;
    }
    if (c == OPT_TARGET) {
        char *end;
        double r = strtod(arg, &end);
        if (end == arg || *end || !(r > 0 && r < 1e6))
            return ro_bad_flag(&o->c, flag, arg, "not a positive ratio");
        o->target = r;
        return 0;
    }
    if (c == OPT_PAIRS) {
        char *end;
        long n = strtol(arg, &end, 10);
        if (end == arg || *end || n < 1 || n > MAX_PAIRS)
            return ro_bad_flag(&o->c, flag, arg, "not a number of pairs from 1 to 1000");
        o->pairs = (int)n;
        return 0;
    }
    return ro_parse_one(&o->c, c, arg, flag);
}

/* One side: its graph, kept from frame to frame, and its timed frames. */
typedef struct side {
    rg_setup setup;
    pl_kept_graph *kept;
    double ms[MAX_PAIRS];
} side;

/* flag: the option that named the pipeline (-p, --against), for messages; extra and
 * nextra: --set values for this side alone, applied after the shared ones. */
static int side_init(side *s, const options *o, const char *pipeline, const char *flag,
                     const char *const *extra, int nextra)
{
    char err[CP_ERR_MAX];
    ro_options c = o->c;
    const char *sets[256 + MAX_AGAINST_SETS];
    if (c.graph.nsets > 256) {
        fprintf(stderr, "bench_pipeline_pairs: too many --set\n");
        return 2;
    }
    for (int i = 0; i < c.graph.nsets; i++) sets[i] = c.graph.sets[i];
    for (int i = 0; i < nextra; i++) sets[c.graph.nsets + i] = extra[i];
    c.graph.sets = sets;
    c.graph.nsets += nextra;
    c.graph.pipeline = pipeline;
    *s = (side){0};
    int rc = rg_setup_init(&s->setup, &c.graph, err);
    if (rc) fprintf(stderr, "bench_pipeline_pairs: %s %s: %s\n", flag, pipeline, err);
    if (!rc) rc = ro_check_flags_apply(&c, &s->setup);
    if (!rc && !(s->kept = pl_kept_graph_new())) {
        fprintf(stderr, "bench_pipeline_pairs: out of memory\n");
        rc = 1;
    }
    return rc;
}

static void side_free(side *s)
{
    pl_kept_graph_free(s->kept);
    rg_setup_free(&s->setup);
}

/* One frame of the side's graph into rgba: its wall ms, or -1 with the message printed. */
static double side_frame(side *s, const options *o, pl_scene_data *data, uint8_t *rgba)
{
    char err[CP_ERR_MAX];
    const pl_frame_spec spec = {data, o->c.width, o->c.height, o->c.aov, (uint32_t *)rgba, NULL, NULL};
    gr_launch_opts launch = {.scheduler = o->c.scheduler, .workers = o->c.threads};
    const double t0 = io_now_ms();
    if (pl_kept_graph_render(s->kept, s->setup.graph, &spec, &launch, err)) return io_now_ms() - t0;
    fprintf(stderr, "bench_pipeline_pairs: %s: %s\n", s->setup.name, err);
    return -1;
}

/* An untimed frame of the side, then a timed one (pair i's); false when one failed. */
static bool side_pair_frame(side *s, const options *o, pl_scene_data *data, uint8_t *rgba, int i)
{
    return side_frame(s, o, data, rgba) >= 0 && (s->ms[i] = side_frame(s, o, data, rgba)) >= 0;
}

/* Quantile q of sorted a[0..n), linear between neighbours. */
static double quantile(const double *a, int n, double q)
{
    const double h = (n - 1) * q;
    const int lo = (int)h;
    return lo + 1 >= n ? a[n - 1] : a[lo] + (h - lo) * (a[lo + 1] - a[lo]);
}

/* The largest k with P(X < k) <= 2.5%, X ~ Binomial(n, 1/2): the order statistics k and
 * n + 1 - k (from 1) bound the median with at least 95% probability; 0 for n < 6. */
static int ci_rank(int n)
{
    double p = 1.0, c = 0;
    for (int i = 0; i < n; i++) p *= 0.5;
    int k = 0;
    while (c + p <= 0.025) {
        c += p;
        k++;
        p = p * (n - k + 1) / k;
    }
    return k;
}

static double least(const double *a, int n)
{
    double m = a[0];
    for (int i = 1; i < n; i++) m = a[i] < m ? a[i] : m;
    return m;
}

static void report(const options *o, side *ours, side *base, const char *label)
{
    const int n = o->pairs;
    static double ratio[MAX_PAIRS];
    for (int i = 0; i < n; i++) ratio[i] = ours->ms[i] / base->ms[i];
    const double fastest = least(ours->ms, n) / least(base->ms, n);
    qsort(ratio, (size_t)n, sizeof *ratio, io_cmp_double);
    qsort(ours->ms, (size_t)n, sizeof *ours->ms, io_cmp_double);
    qsort(base->ms, (size_t)n, sizeof *base->ms, io_cmp_double);
    const int k = ci_rank(n);
    const double lo = k ? ratio[k - 1] : ratio[0], hi = k ? ratio[n - k] : ratio[n - 1];
    const unsigned w = gr_worker_count(o->c.threads);
    char name[800], against[300];         /* the --against side's name: _against when both are one graph */
    snprintf(against, sizeof against, "%s%s", o->against, strcmp(o->against, o->c.graph.pipeline) ? "" : "_against");
    snprintf(name, sizeof name, "%s_vs_%s_%s_%ut", o->c.graph.pipeline, against, label, w);
    printf("%s_frame_ms_%s_%ut %.2f ms\n", o->c.graph.pipeline, label, w, io_median_sorted(ours->ms, (size_t)n));
    printf("%s_frame_ms_%s_%ut %.2f ms\n", against, label, w, io_median_sorted(base->ms, (size_t)n));
    printf("%s %.3f ratio\n", name, quantile(ratio, n, 0.5));
    printf("%s_q1 %.3f ratio\n%s_q3 %.3f ratio\n", name, quantile(ratio, n, 0.25), name, quantile(ratio, n, 0.75));
    printf("%s_ci_lo %.3f ratio\n%s_ci_hi %.3f ratio\n", name, lo, name, hi);
    printf("%s_min %.3f ratio\n", name, fastest);
    printf("%s_pairs %d count\n", name, n);
    const double t = o->target;
    const char *verdict = !k ? "undecided(pairs<6)" : hi <= t ? "met" : lo > t ? "missed" : "undecided";
    printf("%s_target %s (at most %.2f: median %.3f, 95%% %.3f-%.3f over %d pairs)\n", name, verdict, t,
           quantile(ratio, n, 0.5), lo, hi, n);
}

/* The scene's name in the output: its file name without directory and extension. */
static void label_of(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    snprintf(out, size, "%s", base ? base + 1 : path);
    char *dot = strrchr(out, '.');
    if (dot) *dot = 0;
}

/* Both sides on the loaded scene, pair after pair, the order alternating. */
static int run_pairs(const options *o, side *ours, side *base, pl_scene_data *data)
{
    uint8_t *rgba = malloc((size_t)o->c.width * (size_t)o->c.height * 4);
    int rc = rgba ? 0 : 1;
    if (!rc && (rg_needs_resource(&ours->setup, "bvh") || rg_needs_resource(&base->setup, "bvh")) &&
        !pl_scene_data_bvh(data))
        rc = 1;
    if (rc) fprintf(stderr, "bench_pipeline_pairs: out of memory\n");
    for (int i = 0; !rc && i < o->pairs; i++) {
        side *first = i % 2 ? base : ours, *second = i % 2 ? ours : base;
        if (!side_pair_frame(first, o, data, rgba, i) || !side_pair_frame(second, o, data, rgba, i)) rc = 1;
    }
    free(rgba);
    if (!rc) {
        char label[256];
        label_of(o->c.scene, label, sizeof label);
        report(o, ours, base, label);
    }
    return rc;
}

int main(int argc, char **argv)
{
    pl_keep_freed_memory();               /* frames reuse memory, as a renderer would */
    static const struct option longs[] = {RO_LONG_OPTIONS, {"against", required_argument, 0, OPT_AGAINST},
                                          {"against-set", required_argument, 0, OPT_AGAINST_SET},
                                          {"pairs", required_argument, 0, OPT_PAIRS},
                                          {"target", required_argument, 0, OPT_TARGET},
                                          {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    options o = {.against = "raytrace", .pairs = 24, .target = 1.0};
    int rc = ro_init(&o.c, "bench_pipeline_pairs", argc);
    if (!rc) rc = ro_parse_args(&o.c, argc, argv, &(ro_program){"h", longs, 0, usage, parse_one, &o});
    if (rc) {
        ro_free(&o.c);
        return rc < 0 ? 0 : rc;           /* -1: --help */
    }
    if (!o.c.graph.pipeline) o.c.graph.pipeline = "hybrid";   /* issue 31's comparison, as make bench runs it */
    static side ours, base;
    rc = side_init(&ours, &o, o.c.graph.pipeline, "-p", NULL, 0);
    if (!rc) rc = side_init(&base, &o, o.against, "--against", o.against_sets, o.nagainst_sets);
    sc_scene *s = NULL;
    sc_geometry g;
    if (!rc) rc = ro_load_scene(&o.c, true, &s, &g);
    if (!rc) {
        pl_scene_data data;
        pl_scene_data_init(&data, s, &g);
        data.build_threads = o.c.threads;
        rc = run_pairs(&o, &ours, &base, &data);
        side_free(&ours);                 /* their frames hold the scene data's buffers */
        side_free(&base);
        pl_scene_data_free(&data);
        sc_geometry_free(&g);
        sc_free(s);
    } else {
        side_free(&ours);
        side_free(&base);
    }
    ro_free(&o.c);
    return rc;
}

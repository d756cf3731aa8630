/* gramps-render — renders a scene with one of the GRAMPS renderer graphs to an image and
 * reports frame times, work counts, queue footprint and (with --stats) the runtime's
 * statistics as JSON.
 *
 *   gramps-render [options] [SCENE]      SCENE: .scene file, mesh file or built-in name
 *
 * Bad values stop with a message naming the flag and exit status 2; a scene that cannot
 * be loaded or a failed render exits with 1. The output image (PNG or JPEG by -o's
 * extension; with no output named, SCENE-GRAPH.png here, never over a file) is written
 * to a temporary file and renamed over the target only after a successful render. A
 * stage that crashes is named (crash_report.h). */
#include "accel/opencl.h"
#include "gramps/gramps.h"
#include "pipelines/frame_memory.h"
#include "pipelines/kept_graph.h"
#include "pipelines/raster/raster.h"
#include "pipelines/stages.h"
#include "raytracer/isa.h"
#include "scenes/limits.h"
#include "scenes/scene.h"
#include "output/image_format.h"
#include "output/image_out.h"
#include "output/interrupt.h"
#include "output/safe_file.h"
#include "tools/common/crash_report.h"
#include "tools/common/default_output.h"
#include "tools/common/float_aovs.h"
#include "tools/common/json_out.h"
#include "tools/common/measure.h"
#include "tools/common/memory_estimate.h"
#include "tools/common/queue_table.h"
#include "tools/common/render_graph.h"
#include "tools/common/render_opts.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct options {
    ro_options c;                  /* scene, graph, image and runtime (render_opts.h) */
    const char *output, *stats;
    const char *trace, *dot;       /* timeline (Chrome/Perfetto JSON) and graph (DOT) files */
    const gr_profile *profile;     /* static: the profiling frame's (run) */
    unsigned simulate;             /* --simulate P: virtual workers (0: a real run) */
    bool measured_cost;            /* --sim-cost measured: no calibration frame */
    const gr_profile *calibration; /* simulated: the calibration frame's (run) */
    bool info, list_stages, list_devices;
    bool stats_table;              /* --stats-table (or -v): the per-queue footprint table */
    bool output_defaulted;         /* output is default_output: no output was named */
    char default_output[256];
} options;

typedef struct frame_result {
    double ms;
    double cpu_ms;                 /* this thread's CPU time (a simulated frame's outside work) */
    pl_counter counters[PL_MAX_COUNTERS];   /* the frame's work counts, by name */
    int ncounters;
    int msaa;                      /* the frame's samples per pixel */
    uint64_t sample_bytes;         /* its sample buffers (CP_PER_SAMPLE resources) */
    uint64_t hdr_bytes;            /* its linear colour ("hdr-color"), 0 when not kept */
    bool hdr_written;              /* the graph's sinks wrote it (else: decode the image) */
    uint64_t surface_bytes;        /* its depth and normals ("surface"), 0 when not written */
    bool surface_written;          /* its stages wrote the surfaces (else: no Z, N) */
    const gr_graph *graph;         /* the kept graph's last run (render_ctx.kept owns it) */
} frame_result;

/* What every frame renders with: the graph and the scene's data. */
typedef struct render_ctx {
    rg_setup setup;
    pl_scene_data data;
    pl_kept_graph *kept;           /* the graph and frame, built once for all the frames */
    float *hdr;                    /* -o FILE.exr: the sinks' linear colour, RGBA f32 a
                                      pixel (pl_frame_use_hdr); else NULL */
    pl_surface *surface;           /* -o FILE.exr: depth and normal per pixel
                                      (pl_frame_use_surface); else NULL */
} render_ctx;

/* What the statistics report per frame (the runtime's are the last frame's only).
 * outside_ms: the frame's time outside its graph's run (building the graph and its
 * stages' state, clearing buffers, launching and joining the workers); busy_ms: the
 * stages' busy time, of which serial_share went to singletons. */
typedef struct frame_stats {
    double ms, avg_footprint, outside_ms, busy_ms, serial_share;
    uint64_t peak_footprint;
} frame_stats;

/* One per-frame figure over all frames. */
typedef struct spread { double median, min, max; } spread;

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gramps-render [options] [SCENE]\n"
        "SCENE is a .scene file, a mesh file (OBJ, PLY, glTF...) or a built-in:\n"
        "teapot (default), courtyard, fairy, cornell, showcase.\n\n");
    ro_usage(out);
    fprintf(out,
        "      --list-stages     list the stage types and packet formats, then exit; with\n"
        "                        TYPE in SCENE's place, that stage type and its formats\n"
        "      --list-devices    list the OpenCL platforms and devices found (where\n"
        "                        device = opencl|auto places stages), then exit\n"
        "  -o, --output FILE     image to write: .png, .jpg, .jpeg or .exr (linear float\n"
        "                        colour before the sRGB encode, values above 1 kept;\n"
        "                        depth, normal) (default, when no output is named:\n"
        "                        SCENE-PIPELINE.png here, never replaced)\n"
        "      --frames N        render N frames after one warm-up frame, report each\n"
        "      --stats FILE      write statistics as JSON\n"
        "      --stats-table     print the last frame's queues: peak, average, capacity\n"
        "                        in packets and bytes (also with -v)\n"
        "      --trace FILE      write the last frame's timeline as Chrome/Perfetto JSON\n"
        "      --dot FILE        write the last frame's graph as Graphviz DOT\n"
        "      --simulate P      run the graph on P virtual workers (1-1024) on one thread:\n"
        "                        times and footprints are predicted, the image the same\n"
        "      --sim-cost calibrated|measured\n"
        "                        simulated tasks cost what they took in a frame at 1 virtual\n"
        "                        worker (calibrated, the default from P = 2) or what they\n"
        "                        took here\n"
        "      --info            print the scene report and exit\n"
        "  -h, --help            this help\n"
        "      --version         version\n");
}

enum { OPT_STATS = RO_OPT_END, OPT_INFO, OPT_VERSION, OPT_TRACE, OPT_DOT, OPT_LIST_STAGES,
       OPT_STATS_TABLE, OPT_SIMULATE, OPT_LIST_DEVICES, OPT_SIM_COST };

/* The options only gramps-render has: its outputs, --info and --list-stages. */
static int parse_one(void *ctx, int c, const char *arg, const char *flag)
{
    options *o = ctx;
    switch (c) {
    case 'o': {
        io_image_format format;
        if (!io_image_format_of(arg, &format))
            return ro_bad_flag(&o->c, flag, arg, "unknown image type: name it " IO_IMAGE_EXTENSIONS);
        o->output = arg;
        return 0;
    }
    case OPT_STATS: o->stats = arg; return 0;
    case OPT_TRACE: o->trace = arg; return 0;
    case OPT_DOT: o->dot = arg; return 0;
    case OPT_INFO: o->info = true; return 0;
    case OPT_LIST_STAGES: o->list_stages = true; return 0;
    case OPT_LIST_DEVICES: o->list_devices = true; return 0;
    case OPT_STATS_TABLE: o->stats_table = true; return 0;
    case OPT_SIMULATE: {
        char *end;
        long n = strtol(arg, &end, 10);
        if (*end || end == arg || n < 1 || n > GR_MAX_WORKERS)
            return ro_bad_flag(&o->c, flag, arg, "not a number of virtual workers from 1 to 1024");
        o->simulate = (unsigned)n;
        return 0;
    }
    case OPT_SIM_COST:
        if (strcmp(arg, "calibrated") && strcmp(arg, "measured"))
            return ro_bad_flag(&o->c, flag, arg, "expected calibrated or measured");
        o->measured_cost = !strcmp(arg, "measured");
        return 0;
    }
    return ro_parse_one(&o->c, c, arg, flag);
}

static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        RO_LONG_OPTIONS, {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"stats", required_argument, 0, OPT_STATS}, {"info", no_argument, 0, OPT_INFO},
        {"version", no_argument, 0, OPT_VERSION},
        {"trace", required_argument, 0, OPT_TRACE}, {"dot", required_argument, 0, OPT_DOT},
        {"list-stages", no_argument, 0, OPT_LIST_STAGES},
        {"list-devices", no_argument, 0, OPT_LIST_DEVICES},
        {"stats-table", no_argument, 0, OPT_STATS_TABLE},
        {"simulate", required_argument, 0, OPT_SIMULATE},
        {"sim-cost", required_argument, 0, OPT_SIM_COST}, {0, 0, 0, 0}};
    *o = (options){0};
    int rc = ro_init(&o->c, "gramps-render", argc);
    if (rc) return rc;
    return ro_parse_args(&o->c, argc, argv,
                         &(ro_program){"o:h", longs, OPT_VERSION, usage, parse_one, o});
}

/* Limits the renderers have, said once on stderr rather than applied silently. */
static void warn_limits(const options *o, const rg_setup *g, const sc_scene *s)
{
    if (s->nlights > SH_MAX_LIGHTS)
        fprintf(stderr, "gramps-render: warning: %s has %zu lights; the renderers use the "
                "first %d (SH_MAX_LIGHTS)\n", o->c.scene, s->nlights, SH_MAX_LIGHTS);
    if (!rg_needs_resource(g, "textures") && s->ntextures > 0)
        fprintf(stderr, "gramps-render: warning: %s has textures; this graph's shading "
                "ignores them (albedo colours only)\n", o->c.scene);
}

/* The runtime options every frame launches with (the pipelines set the worker count). */
static gr_launch_opts launch_opts(const options *o)
{
    return (gr_launch_opts){.scheduler = o->c.scheduler, .journal = o->trace != NULL,
                            .profile = o->profile, .verbose = o->c.verbose,
                            .simulate = o->simulate, .sim_calibration = o->calibration};
}

/* One frame through the graph into rgba; the frame's counters and graph into r. The
 * graph is built for the first frame and run again for the next while nothing that
 * shapes it changes (pl_kept_graph: a profiling or calibration frame's options do). */
static int render_graph(const options *o, render_ctx *ctx, uint8_t *rgba, frame_result *r,
                        char err[CP_ERR_MAX])
{
    const pl_frame_spec spec = {&ctx->data, o->c.width, o->c.height, o->c.aov, (uint32_t *)rgba,
                                ctx->hdr, ctx->surface};
    gr_launch_opts launch = launch_opts(o);
    launch.workers = o->c.threads;
    r->graph = pl_kept_graph_render(ctx->kept, ctx->setup.graph, &spec, &launch, err);
    if (!r->graph) return 1;
    pl_frame *f = pl_kept_graph_frame(ctx->kept);
    r->msaa = f->samples;
    r->hdr_bytes = pl_frame_hdr(f) ? (uint64_t)pl_resource_bytes(&pl_hdr_resource, f->width,
                                                                  f->height, 1, 0, 0) : 0;
    r->hdr_written = pl_frame_hdr(f) != NULL;
    r->surface_written = pl_frame_surface(f) != NULL;
    r->surface_bytes = r->surface_written ? (uint64_t)pl_resource_bytes(&pl_surface_resource, f->width,
                                                                        f->height, 1, 0, 0) : 0;
    r->sample_bytes = 0;
    for (int i = 0; i < f->nresources; i++)
        if (f->resources[i].type->extent == CP_PER_SAMPLE)
            r->sample_bytes += (uint64_t)pl_resource_bytes(f->resources[i].type, f->width, f->height,
                                                           f->samples, 0, 0);
    r->ncounters = f->ncounters;
    for (int i = 0; i < f->ncounters; i++) {
        snprintf(r->counters[i].name, sizeof r->counters[i].name, "%s", f->counters[i].name);
        atomic_init(&r->counters[i].value, atomic_load(&f->counters[i].value));
    }
    return 0;
}

static int render_frame(const options *o, render_ctx *ctx, uint8_t *rgba, frame_result *r)
{
    char err[CP_ERR_MAX];
    double t0 = io_now_ms(), cpu0 = io_thread_cpu_ms();
    int rc = render_graph(o, ctx, rgba, r, err);
    r->ms = io_now_ms() - t0;
    r->cpu_ms = io_thread_cpu_ms() - cpu0;
    if (rc) fprintf(stderr, "gramps-render: %s\n", err);
    return rc;
}

static uint64_t counter(const frame_result *r, const char *name)
{
    for (int i = 0; i < r->ncounters; i++)
        if (!strcmp(r->counters[i].name, name)) return atomic_load(&r->counters[i].value);
    return 0;
}

static bool has_counter(const frame_result *r, const char *name)
{
    for (int i = 0; i < r->ncounters; i++)
        if (!strcmp(r->counters[i].name, name)) return true;
    return false;
}

static bool is_ray_counter(const pl_counter *c) { return !strncmp(c->name, "rays.", 5); }

/* Every rays.* counter: the ray tracer's primary, shadow and secondary rays and any a
 * plugin stage adds (rays.ao). */
static uint64_t rays_of(const frame_result *r)
{
    uint64_t n = 0;
    for (int i = 0; i < r->ncounters; i++)
        if (is_ray_counter(&r->counters[i])) n += atomic_load(&r->counters[i].value);
    return n;
}

static void print_ray_counter(const char *name, uint64_t v, int k, FILE *f, bool json)
{
    fprintf(f, "%s", k ? ", " : "");
    if (json) { io_json_string(f, name + 5); fprintf(f, ": %llu", (unsigned long long)v); }
    else fprintf(f, "%llu %s", (unsigned long long)v, name + 5);
}

/* The rays.* counters as "KIND": N pairs (JSON) or "N KIND" (the summary): primary,
 * shadow and secondary first, as before plugins could add theirs, then the others in
 * the order the stages made them. */
static void print_ray_counters(const frame_result *r, FILE *f, bool json)
{
    static const char *const first[] = {"rays.primary", "rays.shadow", "rays.secondary"};
    int k = 0;
    for (int i = 0; i < 3; i++)
        if (has_counter(r, first[i])) print_ray_counter(first[i], counter(r, first[i]), k++, f, json);
    for (int i = 0; i < r->ncounters; i++) {
        const pl_counter *c = &r->counters[i];
        bool listed = !strcmp(c->name, first[0]) || !strcmp(c->name, first[1]) || !strcmp(c->name, first[2]);
        if (is_ray_counter(c) && !listed) print_ray_counter(c->name, atomic_load(&c->value), k++, f, json);
    }
}

static double frame_ms(const frame_stats *f) { return f->ms; }
static double frame_peak(const frame_stats *f) { return (double)f->peak_footprint; }
static double frame_avg(const frame_stats *f) { return f->avg_footprint; }

static frame_stats frame_stats_of(const frame_result *r)
{
    const gr_stats *st = gr_get_stats(r->graph);
    frame_stats f = {.ms = r->ms};
    if (!st) return f;
    f.avg_footprint = st->avg_footprint_bytes;
    f.peak_footprint = st->peak_footprint_bytes;
    f.outside_ms = r->ms > st->host_ms ? r->ms - st->host_ms : 0;
    /* Simulated: the graph's run takes its virtual time, the rest this thread's CPU time
     * (it sleeps while the graph runs; another tenant's load would lengthen the wall time). */
    if (st->simulated_workers) {
        f.outside_ms = r->cpu_ms;
        f.ms = f.outside_ms + st->wall_ms;
    }
    for (int i = 0; i < st->nstages; i++) f.busy_ms += st->stages[i].busy_ms;
    f.serial_share = st->serial_share;
    return f;
}

/* The share of a frame's work that more workers do not spread, counting all the time
 * outside the graph's run as such (its clears are parallel, so this is an upper bound). */
static double frame_serial_share(const frame_stats *f)
{
    double all = f->outside_ms + f->busy_ms;
    return all > 0 ? (f->outside_ms + f->serial_share * f->busy_ms) / all : 0;
}

static double frame_outside(const frame_stats *f) { return f->outside_ms; }

static spread spread_of(const frame_stats *fs, int n, double (*figure)(const frame_stats *))
{
    double v[n];
    for (int i = 0; i < n; i++) v[i] = figure(&fs[i]);
    qsort(v, (size_t)n, sizeof *v, io_cmp_double);
    return (spread){io_median_sorted(v, (size_t)n), v[0], v[n - 1]};
}

/* The frames' average footprints, each weighted by its frame's time. */
static double avg_footprint(const frame_stats *fs, int n)
{
    double bytes_ms = 0, ms = 0;
    for (int i = 0; i < n; i++) {
        bytes_ms += fs[i].avg_footprint * fs[i].ms;
        ms += fs[i].ms;
    }
    return ms > 0 ? bytes_ms / ms : 0;
}

/* The frame's counters: rays.* as one "rays" object (with rays per second), the rest by
 * name; then the kernels' instruction sets. */
static void write_work(const frame_stats *fs, int n, const frame_result *last, FILE *f)
{
    for (int i = 0; i < last->ncounters; i++) {
        if (is_ray_counter(&last->counters[i])) continue;
        io_json_string(f, last->counters[i].name);
        fprintf(f, ": %llu,\n", (unsigned long long)atomic_load(&last->counters[i].value));
    }
    if (has_counter(last, "rays.primary")) {
        fprintf(f, "\"rays\": {");
        print_ray_counters(last, f, true);
        fprintf(f, ", \"per_second\": %.0f},\n", rays_of(last) / (fs[n - 1].ms / 1e3));
    }
    fprintf(f, "\"ps_isa\": ");
    io_json_string(f, rt_isa_name(rt_isa_best()));
    fprintf(f, ",\n\"rt_isa\": ");
    io_json_string(f, rt_isa_name(rt_isa_best()));
    fprintf(f, ",\n");
}

/* The frames' time outside their graphs and the serial share it makes (medians). */
static void write_frame_serial(const frame_stats *fs, int n, FILE *f)
{
    spread out = spread_of(fs, n, frame_outside), share = spread_of(fs, n, frame_serial_share);
    fprintf(f, "\"outside_graph_ms\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f},\n"
            "\"frame_serial_share\": %.4f,\n\"frame_amdahl_bound_16\": %.2f,\n"
            "\"frame_amdahl_bound_64\": %.2f,\n", out.median, out.min, out.max, share.median,
            gr_amdahl_bound(share.median, 16), gr_amdahl_bound(share.median, 64));
}

static void write_frames(const frame_stats *fs, int n, FILE *f)
{
    spread ms = spread_of(fs, n, frame_ms), peak = spread_of(fs, n, frame_peak),
           avg = spread_of(fs, n, frame_avg);
    fprintf(f, "\"frame_ms\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f, \"frames\": [",
            ms.median, ms.min, ms.max);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.3f", i ? ", " : "", fs[i].ms);
    fprintf(f, "]},\n\"frames\": [");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s\n  {\"frame_ms\": %.3f, \"outside_graph_ms\": %.3f, "
                "\"peak_footprint_bytes\": %llu, \"avg_footprint_bytes\": %.1f}", i ? "," : "",
                fs[i].ms, fs[i].outside_ms, (unsigned long long)fs[i].peak_footprint,
                fs[i].avg_footprint);
    fprintf(f, "\n],\n\"peak_footprint_bytes\": %.0f,\n\"avg_footprint_bytes\": %.1f,\n"
            "\"footprint_over_frames\": {\"peak_bytes\": {\"median\": %.1f, \"max\": %.0f}, "
            "\"avg_bytes\": {\"median\": %.1f, \"max\": %.1f}},\n", peak.max,
            avg_footprint(fs, n), peak.median, peak.max, avg.median, avg.max);
    write_frame_serial(fs, n, f);
}

static void write_stats(const options *o, const sc_scene *s, const sc_geometry *g,
                        const frame_stats *fs, int n, const frame_result *last, FILE *f)
{
    const gr_stats *st = gr_get_stats(last->graph);
    fprintf(f, "{\n\"scene\": ");
    io_json_string(f, s->name);
    fprintf(f, ",\n\"pipeline\": ");
    io_json_string(f, o->c.pipeline);
    fprintf(f, ",\n\"scheduler\": ");
    io_json_string(f, gr_scheduler_of(last->graph));
    fprintf(f, ",\n\"threads\": %u,\n\"size\": [%d, %d],\n"
            "\"triangles\": %zu,\n\"unreadable_textures\": %zu,\n", st ? st->workers : 0,
            o->c.width, o->c.height, g->ntriangles, s->unreadable_textures);
    fprintf(f, "\"msaa\": %d,\n\"sample_buffer_bytes\": %llu,\n", last->msaa,
            (unsigned long long)last->sample_bytes);
    fprintf(f, "\"hdr_color_bytes\": %llu,\n\"surface_bytes\": %llu,\n", (unsigned long long)last->hdr_bytes,
            (unsigned long long)last->surface_bytes);
    if (o->simulate)
        fprintf(f, "\"simulated_workers\": %u,\n\"sim_cost\": \"%s\",\n", o->simulate,
                o->calibration ? "calibrated" : "measured");
    write_work(fs, n, last, f);
    write_frames(fs, n, f);
    fprintf(f, "\"runtime\": ");
    gr_stats_write_json(last->graph, f);
    fprintf(f, "}\n");
}

static void summary(const options *o, const sc_scene *s, const sc_geometry *g,
                    const frame_stats *fs, int n, const frame_result *last)
{
    spread ms = spread_of(fs, n, frame_ms), peak = spread_of(fs, n, frame_peak);
    const gr_stats *st = gr_get_stats(last->graph);
    printf("%s: %s %dx%d, %zu triangles, %u %s, %s scheduler\n", s->name, o->c.pipeline,
           o->c.width, o->c.height, g->ntriangles, st ? st->workers : 0,
           o->simulate ? "virtual workers (simulated: times are predicted)" : "threads",
           gr_scheduler_of(last->graph));
    printf("frame %.2f ms (median of %d, min %.2f)", ms.median, n, ms.min);
    if (has_counter(last, "rays.primary")) {
        printf(", %llu rays (", (unsigned long long)rays_of(last));
        print_ray_counters(last, stdout, false);
        printf("), %.2f Mrays/s", rays_of(last) / (ms.median * 1e3));
    }
    for (int i = 0; i < last->ncounters; i++)
        if (!is_ray_counter(&last->counters[i]))
            printf(", %llu %s", (unsigned long long)atomic_load(&last->counters[i].value),
                   last->counters[i].name);
    printf("\n");
    printf("peak queue footprint %.1f KiB (largest frame), average %.1f KiB, occupancy %.0f%%\n",
           peak.max / 1024, avg_footprint(fs, n) / 1024, st ? st->occupancy * 100 : 0);
    if (st)
        printf("serial share %.1f%% (work in singleton stages; Amdahl bound %.1fx at 16 workers, "
               "%.1fx at 64)\n", st->serial_share * 100, gr_amdahl_bound(st->serial_share, 16),
               gr_amdahl_bound(st->serial_share, 64));
    spread out = spread_of(fs, n, frame_outside), share = spread_of(fs, n, frame_serial_share);
    printf("outside the graph %.2f ms a frame (building, clearing, launching); frame serial "
           "share %.1f%% (Amdahl bound %.1fx at 16 workers)\n", out.median, share.median * 100,
           gr_amdahl_bound(share.median, 16));
}

/* One frame rendered with *p, a copy of the options (its trace is dropped), for its
 * profile; NULL, saying that `what` failed, when it did. */
static gr_profile *frame_profile(options *p, render_ctx *ctx, uint8_t *rgba, const char *what)
{
    p->trace = NULL;
    frame_result r = {0};
    gr_profile *prof = render_frame(p, ctx, rgba, &r) ? NULL : gr_profile_take(r.graph);
    if (!prof) fprintf(stderr, "gramps-render: %s failed\n", what);
    return prof;
}

/* Simulated: one frame at 1 virtual worker under the same scheduler, whose profile
 * calibrates the frames' task costs (gr_launch_opts.sim_calibration), after a warm-up of
 * its own: the frame is a relaunch, warm as the measured frames are. NULL when it
 * failed. */
static gr_profile *calibration_frame(const options *o, render_ctx *ctx, uint8_t *rgba)
{
    options p = *o;
    p.simulate = 1;
    p.calibration = NULL;
    p.trace = NULL;
    frame_result warm_up = {0};
    if (render_frame(&p, ctx, rgba, &warm_up)) {
        fprintf(stderr, "gramps-render: the simulation's calibration frame failed\n");
        return NULL;
    }
    return frame_profile(&p, ctx, rgba, "the simulation's calibration frame");
}

/* Static: one frame under the GRAMPS scheduler first, whose stage times and queue
 * traffic weigh the partition (Sanchez et al. 2011 §IV-C). NULL when it failed. */
static gr_profile *profile_frame(const options *o, render_ctx *ctx, uint8_t *rgba)
{
    options p = *o;
    p.c.scheduler = "gramps";
    return frame_profile(&p, ctx, rgba, "the static scheduler's profiling frame");
}

static int dot_writer(const gr_graph *graph, FILE *f)
{
    gr_graph_dot(graph, f);
    return 0;
}

/* --trace / --dot: the last frame's timeline or graph, in memory (malloc'ed), or NULL
 * when it could not be made. */
static char *graph_text(const gr_graph *graph, int (*writer)(const gr_graph *, FILE *),
                        size_t *size)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, size);
    if (!f) return NULL;
    int rc = writer(graph, f);
    bool ok = rc == 0 && !ferror(f);
    if (fclose(f) != 0 || !ok) { free(buf); return NULL; }
    return buf;
}

/* The statistics JSON in memory (malloc'ed), or NULL when out of memory. */
static char *stats_json(const options *o, const sc_scene *s, const sc_geometry *g,
                        const frame_stats *fs, const frame_result *last, size_t *size)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, size);
    if (!f) return NULL;
    write_stats(o, s, g, fs, o->c.frames, last, f);
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) { free(buf); return NULL; }
    return buf;
}

/* -o FILE.exr: the float channels (float_aovs.h) as OpenEXR, malloc'ed; NULL with a
 * message printed when they cannot be made. */
static uint8_t *exr_file(const options *o, render_ctx *ctx, const frame_result *last,
                         const uint8_t *rgba, size_t *size)
{
    io_exr_channel ch[FA_CHANNELS];
    char err[300] = "out of memory making the float channels";
    const float *hdr = last->hdr_written ? ctx->hdr : NULL;
    const pl_surface *surface = last->surface_written ? ctx->surface : NULL;
    if (!surface)
        fprintf(stderr, "gramps-render: -o %s: no stage of graph %s writes the surfaces' depth "
                "and normal (frame resource \"surface\"): the file has R, G, B, A only\n",
                o->output, o->c.pipeline);
    int n = fa_make(o->c.width, o->c.height, rgba, hdr, surface, ch);
    uint8_t *exr = n ? io_encode_exr(o->c.width, o->c.height, ch, n, size, err, sizeof err) : NULL;
    fa_free(ch);
    if (!exr) fprintf(stderr, "gramps-render: -o %s: %s\n", o->output, err);
    return exr;
}

static bool is_exr(const char *path)
{
    io_image_format f;
    return path && io_image_format_of(path, &f) && f == IO_IMAGE_EXR;
}

/* -o, --stats, --trace and --dot succeed or fail together: all are made in memory and
 * staged (safe_file.h) before any replaces its file, so a failure leaves every old file
 * as it was; the same file named twice is refused. An .exr image goes as one more
 * output, made here from float channels. */
static int write_outputs(const options *o, render_ctx *ctx, const frame_stats *fs,
                         const frame_result *last, const uint8_t *rgba)
{
    char err[600];
    size_t stats_size = 0;
    char *stats = o->stats ? stats_json(o, ctx->data.scene, ctx->data.geo, fs, last, &stats_size) : NULL;
    io_extra_output extra[3] = {{"--trace", o->trace, NULL, 0}, {"--dot", o->dot, NULL, 0},
                                {"-o", NULL, NULL, 0}};
    if (o->trace) extra[0].data = graph_text(last->graph, gr_journal_write, &extra[0].size);
    if (o->dot) extra[1].data = graph_text(last->graph, dot_writer, &extra[1].size);
    bool exr = is_exr(o->output);
    if (exr && !(extra[2].data = exr_file(o, ctx, last, rgba, &extra[2].size))) {
        free(stats);
        free((void *)extra[0].data);
        free((void *)extra[1].data);
        return 1;
    }
    extra[2].path = exr ? o->output : NULL;
    int rc = io_write_outputs_with(exr ? NULL : o->output, o->c.width, o->c.height, rgba,
                                   o->c.threads, o->stats, stats, stats_size, extra, 3, err,
                                   sizeof err) != 0;
    free(stats);
    for (int i = 0; i < 3; i++) free((void *)extra[i].data);
    if (rc) fprintf(stderr, "gramps-render: %s\n", err);
    return rc;
}

/* The graph's multisampling: its [graph] msaa (1 when it has none). */
static int graph_msaa(const render_ctx *ctx)
{
    const char *msaa = cp_graph_value(ctx->setup.graph, "msaa");
    return msaa ? (int)strtol(msaa, NULL, 10) : 1;
}

/* The render's estimated memory against --max-memory: 0, or 1 with a message. */
static int check_memory(const options *o, const render_ctx *ctx)
{
    unsigned threads = o->simulate ? o->simulate : gr_worker_count(o->c.threads);
    const sc_geometry *g = ctx->data.geo;
    pl_vars_ctx vc = {ctx->setup.graph, o->c.width, o->c.height, threads};
    cp_vars vars = pl_vars(&vc);
    cp_resource_need needs[CP_MAX_RESOURCES];
    char err[CP_ERR_MAX];
    int n = cp_graph_resources(ctx->setup.graph, &vars, needs, err);
    if (n < 0) {
        fprintf(stderr, "gramps-render: %s\n", err);
        return 1;
    }
    io_render_size size = {o->c.width, o->c.height, pl_graph_tile(&vc),
                           graph_msaa(ctx), threads, needs, n,
                           is_exr(o->output) || pl_graph_reads_hdr(ctx->setup.graph, &vars),
                           is_exr(o->output)};
    io_memory_estimate e = io_estimate_memory(ctx->data.scene, g->nvertices, g->ntriangles, &size);
    if (e.total <= (double)o->c.max_memory) return 0;
    const double mib = 1048576.0;
    fprintf(stderr, "gramps-render: %s at %dx%d needs about %.0f MiB (image %.0f, frame buffers "
            "%.0f, textures %.0f, geometry %.0f, BVH %.0f, queues %.0f), more than --max-memory "
            "%.0f MiB\n", o->c.scene, o->c.width, o->c.height, e.total / mib, e.image / mib,
            e.buffers / mib, e.textures / mib, e.geometry / mib, e.bvh / mib, e.queues / mib,
            (double)o->c.max_memory / mib);
    return 1;
}

/* The graph's name for reports: its [graph] name, else the built-in's or file's. */
static const char *graph_name(const render_ctx *ctx)
{
    const char *name = cp_graph_value(ctx->setup.graph, "name");
    return name ? name : ctx->setup.name;
}

/* No output named (-o, --stats, --trace, --dot): the image goes to SCENE-GRAPH.png in
 * the working directory. */
static void choose_default_output(options *o, const render_ctx *ctx)
{
    if (o->output || o->stats || o->trace || o->dot) return;
    do_default_name(o->c.scene, graph_name(ctx), o->default_output, sizeof o->default_output);
    o->output = o->default_output;
    o->output_defaulted = true;
}

/* The default image never replaces a file: checked once the render is done, so that
 * what went wrong before (a bad graph, a failed frame) is what the user is told. 0, or 1
 * with a message saying how to replace it. */
static int check_default_output(const options *o)
{
    struct stat st;
    if (!o->output_defaulted || lstat(o->output, &st) != 0) return 0;
    fprintf(stderr, "gramps-render: no -o given and %s already exists here: not replaced "
            "(-o %s replaces it; -o OTHER.png writes another file)\n", o->output, o->output);
    return 1;
}

/* Where the default image went, on stderr whatever -q says: the user did not name it. */
static void say_default_output(const options *o)
{
    char cwd[4096];
    const char *dir = getcwd(cwd, sizeof cwd) ? cwd : ".";
    fprintf(stderr, "gramps-render: wrote %s/%s (no -o given)\n", dir, o->output);
}

/* The outputs can be written: checked before the frames, so that a mistyped directory
 * does not cost a render (staging leaves an existing file as it is; whether the default
 * image's name is taken is told after the render: check_default_output). 0, or 1 with
 * the message. */
static int check_outputs_writable(const options *o)
{
    const char *paths[] = {o->output, o->stats, o->trace, o->dot};
    char err[600];
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        if (paths[i] && io_check_writable(paths[i], err, sizeof err)) {
            fprintf(stderr, "gramps-render: %s\n", err);
            return 1;
        }
    return 0;
}

static int run(const options *o_in, render_ctx *ctx)
{
    options ro = *o_in;
    const options *o = &ro;
    ro.c.pipeline = graph_name(ctx);
    if (check_outputs_writable(o) || check_memory(o, ctx)) return 1;
    /* the BVH is the scene's, not a frame's: built before the frames are timed */
    bool needs_bvh = rg_needs_resource(&ctx->setup, "bvh");
    uint8_t *rgba = malloc((size_t)o->c.width * o->c.height * 4);
    const size_t pixels = (size_t)o->c.width * o->c.height;
    if (is_exr(o->output)) {
        ctx->hdr = malloc(pixels * 4 * sizeof *ctx->hdr);
        ctx->surface = malloc(pixels * sizeof *ctx->surface);
    }
    frame_stats *fs = calloc((size_t)o->c.frames, sizeof *fs);
    frame_result r = {0};
    int rc = ((needs_bvh && !pl_scene_data_bvh(&ctx->data)) || !rgba || !fs ||
              (is_exr(o->output) && (!ctx->hdr || !ctx->surface))) ? 1 : 0;
    if (rc) fprintf(stderr, "gramps-render: out of memory\n");
    gr_profile *prof = NULL;
    bool is_static = ro.c.scheduler ? !strcmp(ro.c.scheduler, "static")
                                  : !strcmp(gr_scheduler_default(), "static");
    if (!rc && is_static && !(ro.profile = prof = profile_frame(o, ctx, rgba))) rc = 1;
    gr_profile *cal = NULL;
    /* one virtual worker is the calibration's own configuration: charged as measured */
    const bool calibrated = o->simulate > 1 && !o->measured_cost;
    if (!rc && calibrated && !(ro.calibration = cal = calibration_frame(o, ctx, rgba))) rc = 1;
    /* negative frames are warm-ups; calibrated, two: the second is a relaunch, so that
     * the first measured frame is charged against a warm run's costs */
    for (int f = calibrated ? -2 : -1; !rc && f < o->c.frames; f++) {
        /* a single frame needs no warm-up, unless calibrated */
        if (o->c.frames == 1 && f == -1 && !calibrated) continue;
        rc = render_frame(o, ctx, rgba, &r);
        if (!rc && f >= 0) fs[f] = frame_stats_of(&r);
    }
    if (!rc) rc = check_default_output(o);
    if (!rc) rc = write_outputs(o, ctx, fs, &r, rgba);
    if (!rc && o->output_defaulted) say_default_output(o);
    if (!rc && !o->c.quiet) summary(o, ctx->data.scene, ctx->data.geo, fs, o->c.frames, &r);
    if (!rc && (o->stats_table || o->c.verbose) && gr_get_stats(r.graph)) {
        printf("queues of the last frame (graph %s):\n", o->c.pipeline);
        qt_print(gr_get_stats(r.graph), stdout);
    }
    gr_profile_free(prof);
    gr_profile_free(cal);
    free(rgba);
    free(ctx->hdr);
    free(ctx->surface);
    ctx->hdr = NULL;
    ctx->surface = NULL;
    free(fs);
    return rc;
}

/* --list-stages: every type, or the one the command line names where a SCENE would be. */
static int list_stages(const options *o, const cp_registry *r)
{
    if (!o->c.scene_given) {
        cp_registry_print(r, stdout);
        return 0;
    }
    if (!cp_registry_print_stage(r, o->c.scene, stdout)) return 0;
    fprintf(stderr, "gramps-render: --list-stages '%s': no such stage type (--list-stages "
            "lists them; --plugin or --graph adds a plugin's)\n", o->c.scene);
    return 2;
}

/* The graph first (a bad graph is reported before a large scene loads), then the scene,
 * then the frames. */
static int render_main(options *o)
{
    render_ctx ctx = {0};
    char err[CP_ERR_MAX];
    int rc = rg_setup_init(&ctx.setup, &o->c.graph, err);
    if (rc) {
        fprintf(stderr, "gramps-render: %s\n", err);
    } else if (o->list_stages) {
        rc = list_stages(o, ctx.setup.registry);
    } else if (!(rc = ro_check_flags_apply(&o->c, &ctx.setup))) {
        sc_scene *s;
        sc_geometry g;
        rc = ro_load_scene(&o->c, !o->info, &s, &g);   /* on failure nothing is left to free */
        if (!rc) {
            warn_limits(o, &ctx.setup, s);
            if (o->info) {
                sc_report(s, o->c.width, o->c.height, stdout);
            } else {
                pl_scene_data_init(&ctx.data, s, &g);
                ctx.data.build_threads = o->c.threads;
                choose_default_output(o, &ctx);
                rc = (ctx.kept = pl_kept_graph_new()) ? run(o, &ctx) : 1;
                if (!ctx.kept) fprintf(stderr, "gramps-render: out of memory\n");
                pl_kept_graph_free(ctx.kept);
                pl_scene_data_free(&ctx.data);
                sc_geometry_free(&g);
            }
            sc_free(s);
        }
    }
    rg_setup_free(&ctx.setup);
    return rc;
}

int main(int argc, char **argv)
{
    pl_keep_freed_memory();           /* frames reuse memory, as a renderer would */
    signal(SIGXFSZ, SIG_IGN);         /* a file-size limit is a write error, not a kill */
    io_interrupt_install("gramps-render");
    cr_install("gramps-render");      /* a stage that crashes is named */
    options o;
    int rc = parse_args(argc, argv, &o);
    if (!rc && o.list_devices) rc = ac_list(stdout) > 0 ? 0 : 1;
    else if (!rc) rc = render_main(&o);
    ro_free(&o.c);
    ac_close();                       /* the OpenCL device, if a placed stage opened it */
    return rc < 0 ? 0 : rc;
}

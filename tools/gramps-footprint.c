/* gramps-footprint — the footprint study: renders a matrix of scenes x pipelines x
 * schedulers x worker counts, each configuration `--repeats` times after a warm-up, in
 * this process through pl_render_frame, and writes into --out DIR:
 *
 *   footprint.csv   one row per configuration (fp_report.h has the columns)
 *   queues.txt      per configuration, its last measured frame's queues (queue_table.h)
 *   footprint.md    the same for people, Sanchez 2011 Table III and Sugerman 2010
 *                   Table 4.2 beside ours, and the plots
 *   *.svg           peak / average footprint and frame time per scheduler per scene,
 *                   and the queue depths over one journaled frame (fp_plots.h)
 *
 * Progress goes to stderr, a line per configuration. Bad flags exit 2; a scene or graph
 * that cannot be loaded, a failed render or an unwritable output exits 1. Every scene
 * name is checked before the first configuration runs. METIS (the Static scheduler's
 * partitioner) prints its complaints on stdout; they are counted into one line. */
#include "pipelines/frame_memory.h"
#include "pipelines/stages.h"
#include "scenes/scene.h"
#include "tools/common/cli_args.h"
#include "tools/common/fp_apps.h"
#include "tools/common/fp_plots.h"
#include "tools/common/fp_report.h"
#include "tools/common/fp_run.h"
#include "tools/common/render_graph.h"
#include "tools/common/measure.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LIST 64                /* entries of one list option */

/* A comma-separated option's entries, pointing into `text` (strdup'ed, commas cut). */
typedef struct list {
    char *text;
    const char *item[MAX_LIST];
    int n;
} list;

typedef struct options {
    list scenes, pipelines, schedulers;
    list apps;                     /* --apps: the apps study instead of the scenes' */
    const char *graphs[MAX_LIST];  /* --graph files, after the --pipelines built-ins */
    int ngraphs;
    unsigned workers[MAX_LIST];
    int nworkers, repeats, width, height;
    const char *out;
    bool quiet, simulate;
    bool measured_cost;            /* --sim-cost measured */
} options;

static const char default_scenes[] = "teapot,courtyard,fairy,../shared/scenes/bunny.obj";
static const char default_pipelines[] = "raster,raytrace,hybrid";
static const char default_schedulers[] = "gramps,task-stealing,breadth-first,static,qes,pss";

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gramps-footprint [options]\n"
        "Renders every scene x pipeline x scheduler x worker count --repeats times and writes\n"
        "footprint.csv, footprint.md, queues.txt (per-queue tables) and SVG plots into --out.\n\n"
        "  --scenes LIST      scenes, comma-separated: built-in names or files\n"
        "                     (default %s)\n"
        "  --pipelines LIST   built-in graphs (default %s; also raster-parallel)\n"
        "  --graph FILE       a graph file as one more pipeline (repeatable)\n"
        "  --schedulers LIST  (default %s)\n"
        "  --apps LIST        instead of the scenes: gramps-run apps (histogram, srad, fm-radio,\n"
        "                     mergesort, gaussian, spheres) at their defaults, each run checked; writes apps.csv\n"
        "                     and apps.md (wall time, peak and average footprint)\n"
        "  --workers LIST     worker counts, " LIMIT_RANGE(1, GR_MAX_WORKERS) " (default 1,2; e.g. 1,2,8,16: more workers\n"
        "                     than cores shows footprint and overheads, not speedup)\n"
        "  --simulate LIST    virtual worker counts instead of --workers, " LIMIT_RANGE(1, GR_MAX_WORKERS) ": each run on\n"
        "                     one thread in virtual time (times and footprints predicted)\n"
        "  --sim-cost calibrated|measured\n"
        "                     simulated tasks' cost: what they took in a frame at 1 virtual worker\n"
        "                     (calibrated, the default from 2 workers) or what they took sharing one\n"
        "                     core's caches\n"
        "  --repeats N        measured frames per configuration, after a warm-up (default 5)\n"
        "  --size WxH         image size (default 512x512)\n"
        "  --out DIR          output directory, made if missing (default footprint-study)\n"
        "  -q, --quiet        no progress lines\n"
        "  -h, --help         this help\n"
        "      --version      version\n", default_scenes, default_pipelines, default_schedulers);
}

static int bad_flag(const char *flag, const char *value, const char *why)
{
    return io_bad_flag("gramps-footprint", flag, value, why);
}

/* Splits text at commas into l (replacing what it held); false for an empty entry or
 * more than MAX_LIST. */
static bool split(list *l, const char *text)
{
    free(l->text);
    *l = (list){.text = strdup(text)};
    if (!l->text) return false;
    for (char *s = l->text, *comma; s; s = comma ? comma + 1 : NULL) {
        comma = strchr(s, ',');
        if (comma) *comma = 0;
        if (!*s || l->n == MAX_LIST) return false;
        l->item[l->n++] = s;
    }
    return true;
}

static int parse_workers(options *o, const char *arg, const char *flag)
{
    list l = {0};
    bool ok = split(&l, arg);
    o->nworkers = 0;
    for (int i = 0; ok && i < l.n; i++) {
        int n;
        ok = io_parse_int(l.item[i], 1, GR_MAX_WORKERS, &n);
        if (ok) o->workers[o->nworkers++] = (unsigned)n;
    }
    free(l.text);
    return ok ? 0 : bad_flag(flag, arg, "expected worker counts " LIMIT_RANGE(1, GR_MAX_WORKERS)
                                    ", comma-separated");
}

/* Every entry of l passes known(); else exit status 2 naming the first that does not. */
static int check_names(const list *l, bool (*known)(const char *), const char *flag,
                       const char *names)
{
    for (int i = 0; i < l->n; i++)
        if (!known(l->item[i])) {
            char why[200];
            snprintf(why, sizeof why, "unknown name '%s' (%s)", l->item[i], names);
            return bad_flag(flag, l->item[i], why);
        }
    return 0;
}

static bool builtin_graph(const char *name) { return pl_builtin_graph(name) != NULL; }

enum { OPT_SCENES = 256, OPT_PIPELINES, OPT_GRAPH, OPT_SCHEDULERS, OPT_WORKERS, OPT_REPEATS,
       OPT_SIZE, OPT_OUT, OPT_VERSION, OPT_SIMULATE, OPT_APPS, OPT_SIM_COST };

static int parse_one(void *ctx, int c, const char *arg, const char *flag)
{
    options *o = ctx;
    switch (c) {
    case OPT_SCENES: return split(&o->scenes, arg) ? 0 : bad_flag(flag, arg, "expected names, comma-separated");
    case OPT_PIPELINES:
        if (!split(&o->pipelines, arg)) return bad_flag(flag, arg, "expected names, comma-separated");
        return check_names(&o->pipelines, builtin_graph, flag, "raster, raster-parallel, raytrace, hybrid, hybrid-visibility");
    case OPT_SCHEDULERS:
        if (!split(&o->schedulers, arg)) return bad_flag(flag, arg, "expected names, comma-separated");
        return check_names(&o->schedulers, gr_scheduler_known, flag, gr_scheduler_names());
    case OPT_GRAPH:
        if (o->ngraphs == MAX_LIST) return bad_flag(flag, arg, "too many graph files");
        o->graphs[o->ngraphs++] = arg;
        return 0;
    case OPT_WORKERS: o->simulate = false; return parse_workers(o, arg, flag);
    case OPT_SIMULATE: o->simulate = true; return parse_workers(o, arg, flag);
    case OPT_SIM_COST:
        if (strcmp(arg, "calibrated") && strcmp(arg, "measured"))
            return bad_flag(flag, arg, "expected calibrated or measured");
        o->measured_cost = !strcmp(arg, "measured");
        return 0;
    case OPT_REPEATS:
        return io_parse_int(arg, 1, 1000, &o->repeats) ? 0 : bad_flag(flag, arg, "expected 1..1000");
    case OPT_SIZE:
        return io_parse_size(arg, &o->width, &o->height) ? 0 : bad_flag(flag, arg,
                                                           "expected WxH, each " LIMIT_RANGE(1, PL_MAX_IMAGE_SIDE));
    case OPT_OUT: o->out = arg; return 0;
    case OPT_APPS:
        return split(&o->apps, arg) ? 0 : bad_flag(flag, arg, "expected names, comma-separated");
    case 'q': o->quiet = true; return 0;
    }
    return 0;
}

static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"scenes", required_argument, 0, OPT_SCENES}, {"pipelines", required_argument, 0, OPT_PIPELINES},
        {"graph", required_argument, 0, OPT_GRAPH}, {"schedulers", required_argument, 0, OPT_SCHEDULERS},
        {"workers", required_argument, 0, OPT_WORKERS}, {"repeats", required_argument, 0, OPT_REPEATS},
        {"simulate", required_argument, 0, OPT_SIMULATE}, {"apps", required_argument, 0, OPT_APPS},
        {"sim-cost", required_argument, 0, OPT_SIM_COST},
        {"size", required_argument, 0, OPT_SIZE}, {"out", required_argument, 0, OPT_OUT},
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, OPT_VERSION}, {0, 0, 0, 0}};
    *o = (options){.workers = {1, 2}, .nworkers = 2, .repeats = 5, .width = 512, .height = 512,
                   .out = "footprint-study"};
    if (!split(&o->scenes, default_scenes) || !split(&o->pipelines, default_pipelines) ||
        !split(&o->schedulers, default_schedulers))
        return bad_flag("memory", "", "out of memory");
    int rc = io_parse_flags(argc, argv, &(io_program){"gramps-footprint", ":qh", longs,
                                                      OPT_VERSION, usage, parse_one, o});
    if (rc) return rc;
    if (optind < argc) return bad_flag("argument", argv[optind], "takes no arguments (see --help)");
    return 0;
}

/* ---- the matrix ------------------------------------------------------------------------ */

/* What the study runs: every pipeline's graph, and where progress stands. */
typedef struct study_run {
    const options *o;
    fp_study *s;
    rg_setup *setups;              /* one per pipeline */
    int done, total;
    double t0;
    FILE *queues;                  /* queues.txt's text, in memory until the outputs */
} study_run;

static void progress(study_run *r, const fp_config *c, int sc, int p, const fp_summary *v)
{
    r->done++;
    if (r->o->quiet) return;
    fprintf(stderr, "gramps-footprint: [%3d/%d] %s %s %s %u%s: %.1f ms, peak %.0f KiB, avg %.0f "
            "KiB (%.0f s)\n", r->done, r->total, r->s->scenes[sc], r->s->pipelines[p],
            c->scheduler, c->workers, c->simulate ? " virtual" : "w", v->ms.median, v->peak_bytes.median / 1024,
            v->avg_bytes.median / 1024, io_now_s() - r->t0);
}

/* One configuration's repeats, summarised into its cell. */
static int run_cell(study_run *r, fp_config *c, int sc, int p, int w, int k, char *err)
{
    fp_frame frames[r->s->repeats];
    char title[300];
    snprintf(title, sizeof title, "%s %s %s %uw", r->s->scenes[sc], r->s->pipelines[p],
             c->scheduler, c->workers);
    c->queues = r->queues;
    c->title = title;
    if (fp_frames(c, r->s->repeats, frames, err)) return 1;
    fp_summary *v = &r->s->cells[fp_cell_index(r->s, sc, p, w, k)];
    *v = fp_summarize(frames, r->s->repeats);
    progress(r, c, sc, p, v);
    return 0;
}

static bool runs_static(const fp_study *s)
{
    for (int k = 0; k < s->nschedulers; k++)
        if (!strcmp(s->schedulers[k], "static")) return true;
    return false;
}

/* Every scheduler at one pipeline and worker count; the timelines too on the first
 * scene at the last worker count. Static's profile is taken once here for both. */
static int run_workers(study_run *r, pl_scene_data *data, int sc, int p, int w, char *err)
{
    const fp_study *s = r->s;
    fp_config c = {.graph = r->setups[p].graph, .data = data, .width = s->width,
                   .height = s->height, .workers = s->workers[w], .simulate = s->simulated,
                   .measured_cost = r->o->measured_cost};
    gr_profile *prof = runs_static(s) ? fp_profile(&c, err) : NULL;
    if (runs_static(s) && !prof) return 1;
    c.profile = prof;
    int rc = 0;
    bool timeline = sc == 0 && w == s->nworkers - 1;
    for (int k = 0; k < s->nschedulers && !rc; k++) {
        c.scheduler = s->schedulers[k];
        rc = run_cell(r, &c, sc, p, w, k, err);
        if (!rc && timeline) rc = fp_timeline_take(&c, &s->timelines[p * s->nschedulers + k], err);
    }
    gr_profile_free(prof);
    return rc;
}

static bool needs_bvh(const study_run *r)
{
    for (int p = 0; p < r->s->npipelines; p++)
        if (rg_needs_resource(&r->setups[p], "bvh")) return true;
    return false;
}

/* Loads scene sc, runs it through every pipeline and worker count, frees it. */
static int run_scene(study_run *r, int sc, char *err)
{
    sc_scene *scene;
    sc_geometry geo;
    const char *path = r->o->scenes.item[sc];
    if (sc_load(path, &scene, err)) return 1;
    if (sc_flatten(scene, &geo, err)) { sc_free(scene); return 1; }
    pl_scene_data data;
    pl_scene_data_init(&data, scene, &geo);
    int rc = needs_bvh(r) && !pl_scene_data_bvh(&data);     /* built before any frame is timed */
    if (rc) snprintf(err, CP_ERR_MAX, "out of memory building the BVH of %s", path);
    for (int p = 0; p < r->s->npipelines && !rc; p++)
        for (int w = 0; w < r->s->nworkers && !rc; w++) rc = run_workers(r, &data, sc, p, w, err);
    pl_scene_data_free(&data);
    sc_geometry_free(&geo);
    sc_free(scene);
    return rc;
}

/* ---- set-up and outputs ---------------------------------------------------------------- */

/* A scene's label: the built-in name, or the file name without directory and extension. */
static char *scene_label(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char *label = strdup(base);
    char *dot = label ? strrchr(label, '.') : NULL;
    if (dot && dot != label) *dot = 0;
    return label;
}

/* The graphs: --pipelines built-ins, then --graph files; labels are their [graph] names. */
static int setup_graphs(const options *o, rg_setup *setups, const char **labels, char *err)
{
    for (int p = 0; p < o->pipelines.n + o->ngraphs; p++) {
        bool builtin = p < o->pipelines.n;
        const char *file = builtin ? NULL : o->graphs[p - o->pipelines.n];
        rg_options g = {.pipeline = builtin ? o->pipelines.item[p] : NULL, .graphs = &file,
                        .ngraphs = builtin ? 0 : 1};
        if (rg_setup_init(&setups[p], &g, err)) return 1;
        const char *name = cp_graph_value(setups[p].graph, "name");
        labels[p] = name ? name : setups[p].name;
    }
    return 0;
}

static int write_table(const char *dir, const char *name, int (*write)(FILE *, const fp_study *),
                       const fp_study *s, char *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) { snprintf(err, CP_ERR_MAX, "%.900s: %s", path, strerror(errno)); return 1; }
    int rc = write(f, s);
    if (fclose(f) != 0 || rc) { snprintf(err, CP_ERR_MAX, "%.900s: could not write it", path); return 1; }
    return 0;
}

/* queues.txt from the text gathered in memory. */
static int write_queues(const char *dir, const char *text, size_t size, char *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/queues.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) { snprintf(err, CP_ERR_MAX, "%.900s: %s", path, strerror(errno)); return 1; }
    fputs("Per configuration, the queues of its last measured frame (gramps-render "
          "--stats-table's table).\n", f);
    bool ok = fwrite(text, 1, size, f) == size;
    if (fclose(f) != 0 || !ok) { snprintf(err, CP_ERR_MAX, "%.900s: could not write it", path); return 1; }
    return 0;
}

static int write_outputs(const options *o, const fp_study *s, const char *queues,
                         size_t queues_size, char *err)
{
    if (mkdir(o->out, 0777) != 0 && errno != EEXIST) {
        snprintf(err, CP_ERR_MAX, "--out %s: %s", o->out, strerror(errno));
        return 1;
    }
    int rc = write_table(o->out, "footprint.csv", fp_write_csv, s, err);
    if (!rc) rc = write_table(o->out, "footprint.md", fp_write_markdown, s, err);
    if (!rc) rc = fp_write_plots(o->out, s, err, CP_ERR_MAX);
    if (!rc) rc = write_queues(o->out, queues, queues_size, err);
    if (!rc && !o->quiet) fprintf(stderr, "gramps-footprint: wrote %s/footprint.csv, footprint.md, "
                                  "queues.txt and the plots\n", o->out);
    return rc;
}

/* Every scene names a built-in or an existing file: 0, or 1 with the message in err,
 * before hours of the matrix have run. */
static int check_scenes(const options *o, char *err)
{
    char why[SC_ERR_MAX];
    for (int i = 0; i < o->scenes.n; i++)
        if (sc_scene_findable(o->scenes.item[i], why)) {
            snprintf(err, CP_ERR_MAX, "--scenes: %s", why);
            return 1;
        }
    return 0;
}

/* METIS writes "***Cannot bisect a graph with 0 vertices!" and the like with printf
 * when a worker count leaves too few stages per part (the Static scheduler then falls
 * back to longest-processing-time first: docs/schedulers.md). The study writes nothing
 * on stdout, so while it runs stdout goes to a temporary file, whose lines are counted
 * into one line on stderr afterwards. */
typedef struct quiet_stdout { FILE *file; int saved; } quiet_stdout;

static quiet_stdout stdout_to_temporary(void)
{
    quiet_stdout q = {tmpfile(), -1};
    fflush(stdout);
    if (q.file) q.saved = dup(STDOUT_FILENO);
    if (q.saved >= 0 && dup2(fileno(q.file), STDOUT_FILENO) < 0) {
        close(q.saved);
        q.saved = -1;
    }
    return q;
}

static void stdout_back(quiet_stdout *q, bool quiet)
{
    if (!q->file) return;
    fflush(stdout);
    if (q->saved >= 0) {
        dup2(q->saved, STDOUT_FILENO);
        close(q->saved);
    }
    rewind(q->file);
    int lines = 0;
    for (int c; (c = fgetc(q->file)) != EOF;) lines += c == '\n';
    fclose(q->file);
    if (lines && !quiet)
        fprintf(stderr, "gramps-footprint: METIS printed %d line%s of complaints while partitioning "
                "for the static scheduler (too few stages per worker; its partition fell back to "
                "longest-processing-time first where worse)\n", lines, lines == 1 ? "" : "s");
}

/* Runs the matrix and writes the outputs; 0 or 1 with the message printed. */
static int study_main(const options *o)
{
    int np = o->pipelines.n + o->ngraphs, ns = o->scenes.n;
    rg_setup *setups = calloc((size_t)np, sizeof *setups);
    const char **pipelines = calloc((size_t)np, sizeof *pipelines);
    char **scenes = calloc((size_t)ns, sizeof *scenes);
    fp_study s = {ns, np, o->nworkers, o->schedulers.n, (const char *const *)scenes, pipelines,
                  o->workers, o->schedulers.item, o->width, o->height, o->repeats, NULL, NULL,
                  o->simulate};
    s.cells = calloc((size_t)(ns * np * o->nworkers * o->schedulers.n), sizeof *s.cells);
    s.timelines = calloc((size_t)(np * o->schedulers.n), sizeof *s.timelines);
    char err[CP_ERR_MAX] = "out of memory";
    int rc = !setups || !pipelines || !scenes || !s.cells || !s.timelines;
    for (int i = 0; !rc && i < ns; i++) rc = !(scenes[i] = scene_label(o->scenes.item[i]));
    if (!rc) rc = check_scenes(o, err);
    if (!rc) rc = setup_graphs(o, setups, pipelines, err);
    char *queues = NULL;
    size_t queues_size = 0;
    study_run r = {o, &s, setups, 0, ns * np * o->nworkers * o->schedulers.n, io_now_s(),
                   open_memstream(&queues, &queues_size)};
    if (!r.queues) rc = 1;
    quiet_stdout metis = stdout_to_temporary();
    for (int sc = 0; sc < ns && !rc; sc++) rc = run_scene(&r, sc, err);
    stdout_back(&metis, o->quiet);
    if (r.queues && fclose(r.queues) != 0 && !rc) rc = 1;
    if (!rc) rc = write_outputs(o, &s, queues ? queues : "", queues_size, err);
    free(queues);
    if (rc) fprintf(stderr, "gramps-footprint: %s\n", err);
    for (int i = 0; s.timelines && i < np * o->schedulers.n; i++) fp_timeline_free(&s.timelines[i]);
    for (int i = 0; setups && i < np; i++) rg_setup_free(&setups[i]);
    for (int i = 0; scenes && i < ns; i++) free(scenes[i]);
    free(setups);
    free(pipelines);
    free(scenes);
    free(s.cells);
    free(s.timelines);
    return rc;
}

/* --apps: the apps x schedulers x worker counts study (fp_apps.c). */
static int apps_main(const options *o)
{
    fp_apps_study s = {o->apps.item, o->apps.n, o->schedulers.item, o->schedulers.n,
                       o->workers, o->nworkers, o->simulate, o->repeats, o->quiet};
    char err[CP_ERR_MAX];
    int rc = fp_apps_check(&s, err, CP_ERR_MAX) ? 2 : 0;
    if (!rc && mkdir(o->out, 0777) != 0 && errno != EEXIST) {
        snprintf(err, CP_ERR_MAX, "--out %s: %s", o->out, strerror(errno));
        rc = 1;
    }
    if (!rc) rc = fp_apps_run(&s, o->out, err, CP_ERR_MAX);
    if (rc) fprintf(stderr, "gramps-footprint: %s\n", err);
    else if (!o->quiet) fprintf(stderr, "gramps-footprint: wrote %s/apps.csv and apps.md\n", o->out);
    return rc;
}

int main(int argc, char **argv)
{
    pl_keep_freed_memory();           /* frames reuse memory, as a renderer would */
    options o;
    int rc = parse_args(argc, argv, &o);
    if (!rc) rc = o.apps.n ? apps_main(&o) : study_main(&o);
    free(o.apps.text);
    free(o.scenes.text);
    free(o.pipelines.text);
    free(o.schedulers.text);
    return rc < 0 ? 0 : rc;
}

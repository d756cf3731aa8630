/* gramps-run — runs any graph file whose stages come from plugins, once, and prints the
 * runtime's statistics: the thesis' grampsh (appendix A.1.2), without rendering.
 *
 *   gramps-run FILE.graph [--set S.K=V]... [--plugin F.so]... [-t N] [--stats FILE.json]
 *   gramps-run APP [--set graph.K=V]... [-t N] [--scheduler S] [--stats FILE.json]
 *   gramps-run [--plugin F.so]... --list-stages | --list-apps
 *
 * The registry holds only plugin stage types (the graph's `plugins`, --plugin): the
 * renderer's stages need a renderer frame, which this program does not make; stages get
 * a NULL frame object and keep what they need in their own state. Plugins named without
 * a '/' are looked up in GRAMPS_PLUGIN_PATH, then in plugins/ beside this program's bin/
 * (tools/common/plugin_path.h). Graph values may use $workers.
 *
 * APP is a built-in application (apps/apps.h: histogram, srad, fm-radio, mergesort,
 * gaussian, spheres): a graph built in C whose result is compared with a serial implementation
 * after the run.
 * An argument with a '/' or ending in ".graph" is a graph file, any other an app's name.
 *
 * Exit status: 0 after a successful run (an app's: whose result equals the serial one),
 * 1 for a graph, plugin or run error (the message names the file and line, or the stage
 * and queue) or an app result that differs, 2 for a bad flag or --set. */
#include "apps/apps.h"
#include "compose/compose.h"
#include "output/safe_file.h"
#include "scenes/limits.h"
#include "tools/common/cli_args.h"
#include "tools/common/crash_report.h"
#include "tools/common/plugin_path.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
    const char *graph_file, *stats, *scheduler;
    const char **sets, **plugins;
    int nsets, nplugins;
    unsigned workers;                     /* 0: all hardware threads */
    bool list_stages, list_apps;
    ap_config app;                        /* app.app NULL: graph_file is a file */
} options;

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gramps-run FILE.graph [options]\n"
        "       gramps-run APP [options]       (APP: %s)\n"
        "       gramps-run [--plugin F.so]... --list-stages | --list-apps\n"
        "Runs a graph of plugin stages, or a built-in app checked against its serial\n"
        "implementation, once and prints the runtime statistics.\n\n"
        "  -t, --threads N       worker threads, " LIMIT_RANGE(1, GR_MAX_WORKERS) " (default:\n"
        "                        GRAMPS_NUM_THREADS, else all hardware threads)\n"
        "      --set S.K=V       set graph setting K of section S (graph, a stage or a queue);\n"
        "                        an app's parameter: --set graph.K=V\n"
        "      --scheduler NAME  %s\n"
        "                        (default: GRAMPS_SCHEDULER, else gramps)\n"
        "      --plugin F.so     load plugin stages (a bare name: GRAMPS_PLUGIN_PATH, then\n"
        "                        plugins/ beside bin/)\n"
        "      --stats FILE.json write the runtime statistics as JSON\n"
        "      --list-stages     list the stage types and packet formats, then exit\n"
        "      --list-apps       list the built-in apps and their parameters, then exit\n"
        "  -h, --help            this text\n", ap_names(), gr_scheduler_names());
}

static int bad_flag(const char *flag, const char *value, const char *why)
{
    return io_bad_flag("gramps-run", flag, value, why);
}

enum { OPT_SET = 256, OPT_PLUGIN, OPT_STATS, OPT_LIST_STAGES, OPT_LIST_APPS, OPT_SCHEDULER };

static int parse_one(void *ctx, int c, const char *arg, const char *flag)
{
    options *o = ctx;
    switch (c) {
    case 't': {
        int n;
        if (!io_parse_int(arg, 1, GR_MAX_WORKERS, &n))
            return bad_flag(flag, arg, "expected " LIMIT_RANGE(1, GR_MAX_WORKERS));
        o->workers = (unsigned)n;
        return 0;
    }
    case OPT_SET: o->sets[o->nsets++] = arg; return 0;
    case OPT_PLUGIN: o->plugins[o->nplugins++] = arg; return 0;
    case OPT_STATS: o->stats = arg; return 0;
    case OPT_LIST_STAGES: o->list_stages = true; return 0;
    case OPT_LIST_APPS: o->list_apps = true; return 0;
    case OPT_SCHEDULER:
        if (!gr_scheduler_known(arg)) {
            char why[256];
            snprintf(why, sizeof why, "unknown scheduler (%s)", gr_scheduler_names());
            return bad_flag(flag, arg, why);
        }
        o->scheduler = arg;
        return 0;
    }
    return bad_flag(flag, arg, "unknown option (see --help)");
}

static bool names_a_file(const char *arg)
{
    size_t n = strlen(arg);
    return strchr(arg, '/') || (n >= 6 && !strcmp(arg + n - 6, ".graph"));
}

/* An app named instead of a graph file: its parameters from --set; 0 or 2. */
static int parse_app(options *o)
{
    char err[AP_MSG_MAX];
    if (names_a_file(o->graph_file)) return 0;
    if (ap_config_init(&o->app, o->graph_file, err)) return bad_flag("argument", o->graph_file, err);
    if (o->nplugins) return bad_flag("--plugin", o->plugins[0], "an app has no plugin stages");
    for (int i = 0; i < o->nsets; i++)
        if (ap_config_set(&o->app, o->sets[i], err)) return bad_flag("--set", o->sets[i], err);
    return 0;
}

/* 0, -1 after --help, or 2 for a bad flag. */
static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"threads", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'},
        {"set", required_argument, 0, OPT_SET}, {"plugin", required_argument, 0, OPT_PLUGIN},
        {"stats", required_argument, 0, OPT_STATS},
        {"list-stages", no_argument, 0, OPT_LIST_STAGES}, {"list-apps", no_argument, 0, OPT_LIST_APPS},
        {"scheduler", required_argument, 0, OPT_SCHEDULER}, {0, 0, 0, 0}};
    int rc = io_parse_flags(argc, argv,
                            &(io_program){"gramps-run", ":t:h", longs, 0, usage, parse_one, o});
    if (rc) return rc;
    if (optind < argc) o->graph_file = argv[optind++];
    if (optind < argc) return bad_flag("argument", argv[optind], "only one graph file may be given");
    if (!o->graph_file && !o->list_stages && !o->list_apps)
        return bad_flag("argument", "", "a graph file or an app is needed (see --help)");
    return o->graph_file ? parse_app(o) : 0;
}

/* $workers for graph values: the worker count the run will have. */
static const char *get_var(void *ctx, const char *name, char buf[64])
{
    const options *o = ctx;
    if (strcmp(name, "workers")) return NULL;
    snprintf(buf, 64, "%u", gr_worker_count(o->workers));
    return buf;
}

/* The registry with the plugins and the graph with its overrides; 0, 1 or 2 as main's
 * exit status. */
static int setup(const options *o, cp_registry *r, cp_graph *g, char err[CP_ERR_MAX])
{
    if (tp_plugin_path_default(r, err)) return 1;
    for (int i = 0; i < o->nplugins; i++)
        if (cp_plugin_load(r, o->plugins[i], err)) return 1;
    if (!o->graph_file) return 0;
    if (cp_graph_layer(g, r, NULL, NULL, o->graph_file, err)) return 1;   /* and its bases */
    for (int i = 0; i < o->nsets; i++)
        if (cp_set(g, o->sets[i], err)) return 2;
    return cp_graph_load_plugins(g, r, err) ? 1 : 0;  /* a --set graph.plugins */
}

static void print_summary(const char *name, const gr_stats *st)
{
    printf("%s: %u workers, %s scheduler, %.2f ms, occupancy %.1f%%, peak footprint %llu "
           "bytes\n", name, st->workers, st->scheduler, st->wall_ms, st->occupancy * 100,
           (unsigned long long)st->peak_footprint_bytes);
    printf("  serial share %.1f%% (Amdahl bound %.1fx at 16 workers, %.1fx at 64)\n",
           st->serial_share * 100, gr_amdahl_bound(st->serial_share, 16),
           gr_amdahl_bound(st->serial_share, 64));
    for (int i = 0; i < st->nstages; i++) {
        const gr_stage_stats *s = &st->stages[i];
        printf("  stage %-20s %8llu tasks %6llu instances %9.3f ms busy%s\n", s->name,
               (unsigned long long)s->tasks, (unsigned long long)s->instances, s->busy_ms,
               s->singleton ? " (singleton)" : "");
    }
    for (int i = 0; i < st->nqueues; i++) {
        const gr_queue_stats *q = &st->queues[i];
        printf("  queue %-20s %8llu packets, peak %llu, capacity %u x %u subqueues\n", q->name,
               (unsigned long long)q->packets, (unsigned long long)q->peak_packets, q->capacity,
               q->subqueues);
    }
}

static int write_stats(const char *path, const gr_graph *graph)
{
    FILE *f = fopen(path, "w");
    if (f) gr_stats_write_json(graph, f);
    if (!f || fclose(f)) {
        fprintf(stderr, "gramps-run: --stats '%s': %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* One run of the graph: its stages' finish hooks print their results, then the
 * statistics. */
static int run(options *o, cp_graph *g, char err[CP_ERR_MAX])
{
    cp_vars vars = {get_var, o};
    cp_instance *in = cp_instance_new(g, NULL, &vars, err);
    if (!in) return 1;
    gr_launch_opts launch = {.workers = o->workers, .scheduler = o->scheduler};
    int rc = cp_instance_run(in, &launch, err) == GR_OK ? 0 : 1;
    if (!rc) {
        const char *name = cp_graph_value(g, "name");
        fflush(stdout);
        print_summary(name ? name : o->graph_file, gr_get_stats(cp_instance_graph(in)));
        if (o->stats) rc = write_stats(o->stats, cp_instance_graph(in));
    }
    cp_instance_free(in);
    return rc;
}

/* One checked run of a built-in app: its result line, then the statistics. */
static int run_app(const options *o, char err[CP_ERR_MAX])
{
    gr_launch_opts launch = {.workers = o->workers, .scheduler = o->scheduler};
    ap_outcome out;
    int rc = ap_run(&o->app, &launch, &out);
    if (out.status == GR_OK) {
        printf("%s\n", out.line);
        fflush(stdout);
        print_summary(o->app.app->name, gr_get_stats(out.graph));
        if (o->stats && write_stats(o->stats, out.graph)) rc = 1;
    }
    if (out.status != GR_OK || !out.matches) snprintf(err, CP_ERR_MAX, "%s", out.line);
    else if (rc) snprintf(err, CP_ERR_MAX, "the statistics were not written");
    gr_graph_destroy(out.graph);
    return rc;
}

static void list_apps(FILE *out)
{
    for (int i = 0; ap_app_at(i); i++) {
        const ap_app *a = ap_app_at(i);
        fprintf(out, "%s: %s\n", a->name, a->help);
        for (int k = 0; k < a->nparams; k++)
            fprintf(out, "  graph.%-12s %-10lld [%lld, %lld] %s\n", a->params[k].name,
                    (long long)a->params[k].def, (long long)a->params[k].min,
                    (long long)a->params[k].max, a->params[k].help);
    }
}

/* Everything after the flags; the exit status, with a message in err when not 0. */
static int execute(options *o, char err[CP_ERR_MAX])
{
    if (o->list_apps) { list_apps(stdout); return 0; }
    /* before the run, so that a mistyped directory does not cost it */
    if (o->stats && !o->list_stages && io_check_writable(o->stats, err, CP_ERR_MAX)) return 1;
    if (o->app.app) return run_app(o, err);
    cp_registry *r = cp_registry_new();
    cp_graph *g = r ? cp_graph_new(r) : NULL;
    int rc = g ? setup(o, r, g, err) : 1;
    if (!g) snprintf(err, CP_ERR_MAX, "out of memory");
    if (!rc && o->list_stages) cp_registry_print(r, stdout);
    else if (!rc) rc = run(o, g, err);
    cp_graph_free(g);
    cp_registry_free(r);
    return rc;
}

int main(int argc, char **argv)
{
    cr_install("gramps-run");         /* a stage that crashes is named */
    options o = {.sets = calloc((size_t)argc, sizeof(char *)),
                 .plugins = calloc((size_t)argc, sizeof(char *))};
    int rc = o.sets && o.plugins ? parse_args(argc, argv, &o) : bad_flag("memory", "", "out of memory");
    char err[CP_ERR_MAX];
    if (!rc) {
        rc = execute(&o, err);
        if (rc) fprintf(stderr, "gramps-run: %s\n", err);
    }
    free(o.sets);
    free(o.plugins);
    return rc < 0 ? 0 : rc;
}

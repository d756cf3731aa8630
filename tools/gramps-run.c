/* gramps-run — runs any graph file whose stages come from plugins, once, and prints the
 * runtime's statistics: the thesis' grampsh (appendix A.1.2), without rendering.
 *
 *   gramps-run FILE.graph [--set S.K=V]... [--plugin F.so]... [-t N] [--stats FILE.json]
 *   gramps-run [--plugin F.so]... --list-stages
 *
 * The registry holds only plugin stage types (the graph's `plugins`, --plugin): the
 * renderer's stages need a renderer frame, which this program does not make; stages get
 * a NULL frame object and keep what they need in their own state. Plugins named without
 * a '/' are looked up in GRAMPS_PLUGIN_PATH, then in plugins/ beside this program's bin/
 * (tools/common/plugin_path.h). Graph values may use $workers.
 *
 * Exit status: 0 after a successful run, 1 for a graph, plugin or run error (the message
 * names the file and line, or the stage and queue), 2 for a bad flag or --set. */
#include "compose/compose.h"
#include "scenes/limits.h"
#include "tools/common/cli_args.h"
#include "tools/common/plugin_path.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
    const char *graph_file, *stats;
    const char **sets, **plugins;
    int nsets, nplugins;
    unsigned workers;                     /* 0: all hardware threads */
    bool list_stages;
} options;

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gramps-run FILE.graph [options]\n"
        "       gramps-run [--plugin F.so]... --list-stages\n"
        "Runs a graph of plugin stages once and prints the runtime statistics.\n\n"
        "  -t, --threads N       worker threads, " LIMIT_RANGE(1, GR_MAX_WORKERS) " (default:\n"
        "                        GRAMPS_NUM_THREADS, else all hardware threads)\n"
        "      --set S.K=V       set graph setting K of section S (graph, a stage or a queue)\n"
        "      --plugin F.so     load plugin stages (a bare name: GRAMPS_PLUGIN_PATH, then\n"
        "                        plugins/ beside bin/)\n"
        "      --stats FILE.json write the runtime statistics as JSON\n"
        "      --list-stages     list the stage types and packet formats, then exit\n"
        "  -h, --help            this text\n");
}

static int bad_flag(const char *flag, const char *value, const char *why)
{
    fprintf(stderr, "gramps-run: %s '%s': %s\n", flag, value ? value : "", why);
    return 2;
}

enum { OPT_SET = 256, OPT_PLUGIN, OPT_STATS, OPT_LIST_STAGES };

static int parse_one(options *o, int c, const char *arg, const char *flag)
{
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
    }
    return bad_flag(flag, arg, "unknown option (see --help)");
}

/* 0, -1 after --help, or 2 for a bad flag. */
static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"threads", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'},
        {"set", required_argument, 0, OPT_SET}, {"plugin", required_argument, 0, OPT_PLUGIN},
        {"stats", required_argument, 0, OPT_STATS},
        {"list-stages", no_argument, 0, OPT_LIST_STAGES}, {0, 0, 0, 0}};
    opterr = 0;
    int c, idx = -1;
    while ((c = getopt_long(argc, argv, ":t:h", longs, &idx)) != -1) {
        char flag[40];
        if (idx >= 0) snprintf(flag, sizeof flag, "--%s", longs[idx].name);
        else snprintf(flag, sizeof flag, "-%c", c);
        idx = -1;
        if (c == 'h') { usage(stdout); return -1; }
        if (c == '?') return bad_flag("option", argv[optind - 1], "unknown option (see --help)");
        if (c == ':') return bad_flag("option", argv[optind - 1], "needs a value");
        int rc = parse_one(o, c, optarg, flag);
        if (rc) return rc;
    }
    if (optind < argc) o->graph_file = argv[optind++];
    if (optind < argc) return bad_flag("argument", argv[optind], "only one graph file may be given");
    if (!o->graph_file && !o->list_stages) return bad_flag("argument", "", "a graph file is needed (see --help)");
    return 0;
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
    if (cp_graph_load(g, o->graph_file, err)) return 1;
    for (int i = 0; i < o->nsets; i++)
        if (cp_set(g, o->sets[i], err)) return 2;
    return cp_graph_load_plugins(g, r, err) ? 1 : 0;
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
    gr_launch_opts launch = {.workers = o->workers};
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

/* Everything after the flags; the exit status, with a message in err when not 0. */
static int execute(options *o, char err[CP_ERR_MAX])
{
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

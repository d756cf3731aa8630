/* compose/: stage types, graph text, --set, replication and the errors a user meets,
 * on toy stages (a counter source, a doubling Shader, a summing sink). */
#include "compose/compose.h"
#include "tests/check.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Atomic throughout: a graph may have several sinks (a --set test adds one), each
 * writing from its own worker. */
typedef struct toy_frame { _Atomic(uint64_t) sum, packets; _Atomic(unsigned) workers; } toy_frame;

typedef struct num_pkt { uint32_t v; } num_pkt;

static const cp_format toy_num = {.name = "toy.num", .kind = GR_OPAQUE, .packet_bytes = sizeof(num_pkt)};
static const cp_format toy_other = {.name = "toy.other", .kind = GR_OPAQUE, .packet_bytes = 8};

typedef struct source_state { uint32_t first, count, stride; size_t packet_bytes; } source_state;

static void *source_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    source_state *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    *s = (source_state){i->replica, (uint32_t)cp_int(i, "count"), i->replicas,
                        cp_port_packet_bytes(i, "out")};
    return s;
}

static void source_main(gr_ctx *c)
{
    source_state *s = gr_user(c);
    for (uint32_t v = s->first; v < s->count; v += s->stride) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        ((num_pkt *)w.mem)->v = v;
        gr_commit_out(c, 0, 1);
    }
}

static void double_main(gr_ctx *c)
{
    const num_pkt *in = gr_input(c, NULL);
    ((num_pkt *)gr_output(c, 0))->v = in->v * 2;
}

static void sink_main(gr_ctx *c)
{
    toy_frame *f = gr_user(c);
    atomic_store(&f->workers, gr_num_workers(c));
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        atomic_fetch_add(&f->sum, ((num_pkt *)w.mem)->v);
        atomic_fetch_add(&f->packets, 1);
        gr_commit(c, 0, 1);
    }
}

static const cp_port source_ports[] = {{"out", GR_BIND_OUTPUT, "toy.num", NULL}};
static const cp_param source_params[] = {{"count", CP_INT, "100", 0, 1000000, "values to send"}};
static const cp_port double_ports[] = {{"in", GR_BIND_INPUT, "toy.num", NULL},
                                       {"out", GR_BIND_OUTPUT, "toy.num", NULL}};
static const cp_port sink_ports[] = {{"in", GR_BIND_INPUT, "toy.num", NULL}};
static const cp_port other_ports[] = {{"in", GR_BIND_INPUT, "toy.other", NULL}};

static const cp_stage_type toy_types[] = {
    {.name = "toy.source", .kind = GR_THREAD, .ports = source_ports, .nports = 1,
     .params = source_params, .nparams = 1, .main = source_main, .create = source_create,
     .destroy = free},
    {.name = "toy.double", .kind = GR_SHADER, .ports = double_ports, .nports = 2, .main = double_main},
    {.name = "toy.sink", .kind = GR_THREAD, .ports = sink_ports, .nports = 1, .main = sink_main},
    {.name = "toy.other-sink", .kind = GR_THREAD, .ports = other_ports, .nports = 1, .main = sink_main},
};

static cp_registry *toy_registry(void)
{
    char err[CP_ERR_MAX];
    cp_registry *r = cp_registry_new();
    CHECK(cp_register_format(r, &toy_num, err) == 0);
    CHECK(cp_register_format(r, &toy_other, err) == 0);
    for (size_t i = 0; i < sizeof toy_types / sizeof *toy_types; i++)
        CHECK_MSG(cp_register_stage(r, &toy_types[i], err) == 0, "%s", err);
    return r;
}

static const char *const pipeline_text =
    "# a toy pipeline\n"
    "[graph]\n"
    "n = 1000\n"
    "[queue numbers]\n"
    "format = toy.num\n"
    "capacity = 8\n"
    "[queue doubled]\n"
    "  format = toy.num   ; indented lines are fine\n"
    "[stage src]\n"
    "type = toy.source\n"
    "count = $n\n"
    "out = numbers\n"
    "[stage dbl]\n"
    "type = toy.double\n"
    "in = numbers\n"
    "out = doubled\n"
    "[stage sink]\n"
    "type = toy.sink\n"
    "in = doubled\n";

/* Loads pipeline_text plus `extra` (appended lines) and returns the first error, or ""
 * after a successful run whose frame is *f. */
static const char *run_text(cp_registry *r, const char *extra, const char *set, toy_frame *f,
                            uint32_t *cap_out, char err[CP_ERR_MAX])
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", pipeline_text, extra ? extra : "");
    cp_graph *g = cp_graph_new(r);
    err[0] = 0;
    if (cp_graph_load_text(g, text, "toy.graph", err) || (set && cp_set(g, set, err))) {
        cp_graph_free(g);
        return err;
    }
    for (unsigned workers = 1; workers <= 3; workers++) {
        memset(f, 0, sizeof *f);
        cp_instance *in = cp_instance_new(g, f, NULL, err);
        if (!in) break;
        gr_launch_opts o = {.workers = workers};
        if (cp_instance_run(in, &o, err) == GR_OK && cap_out)
            *cap_out = gr_get_stats(cp_instance_graph(in))->queues[0].capacity;
        cp_instance_free(in);
        if (*err) break;
    }
    cp_graph_free(g);
    return err;
}

static void test_runs_a_graph(void)
{
    cp_registry *r = toy_registry();
    toy_frame f;
    char err[CP_ERR_MAX];
    uint32_t cap = 0;
    CHECK_MSG(!*run_text(r, NULL, NULL, &f, &cap, err), "%s", err);
    CHECK(f.packets == 1000 && f.sum == 999 * 1000);
    CHECK(cap == 8);
    CHECK(f.workers == 3);                  /* run_text's last run had 3 workers */
    CHECK_MSG(!*run_text(r, NULL, "numbers.capacity=3", &f, &cap, err), "%s", err);
    CHECK(cap == 3 && f.sum == 999 * 1000);
    CHECK_MSG(!*run_text(r, NULL, "graph.n=10", &f, &cap, err), "%s", err);
    CHECK(f.packets == 10 && f.sum == 90);
    cp_registry_free(r);
}

/* Replicated sources each get their share, bound to replicated queues one to one. */
static void test_replication(void)
{
    cp_registry *r = toy_registry();
    toy_frame f;
    char err[CP_ERR_MAX];
    const char *extra = "[queue part]\nformat = toy.num\nreplicate = 3\n"
                        "[stage src3]\ntype = toy.source\nreplicate = 3\ncount = 30\nout = part\n"
                        "[stage dbl3]\ntype = toy.double\nreplicate = 3\nin = part\nout = doubled\n";
    CHECK_MSG(!*run_text(r, extra, NULL, &f, NULL, err), "%s", err);
    CHECK(f.packets == 1000 + 30 && f.sum == 999 * 1000 + 29 * 30);
    /* copy k of src3 sends k, k + 3, ... (10 values) through copy k of part, not copy 0's */
    char text[4096];
    snprintf(text, sizeof text, "%s%s", pipeline_text, extra);
    cp_graph *g = cp_graph_new(r);
    CHECK_MSG(cp_graph_load_text(g, text, "toy.graph", err) == 0, "%s", err);
    memset(&f, 0, sizeof f);
    cp_instance *in = cp_instance_new(g, &f, NULL, err);
    CHECK_MSG(in && cp_instance_run(in, &(gr_launch_opts){.workers = 2}, err) == GR_OK, "%s", err);
    const gr_stats *st = in ? gr_get_stats(cp_instance_graph(in)) : NULL;
    int parts = 0;
    for (int q = 0; st && q < st->nqueues; q++) {
        if (strncmp(st->queues[q].name, "part-", 5)) continue;
        parts++;
        CHECK_MSG(st->queues[q].packets == 10, "queue %s carried %llu packets, not 10",
                  st->queues[q].name, (unsigned long long)st->queues[q].packets);
    }
    CHECK(parts == 3);
    cp_instance_free(in);
    cp_graph_free(g);
    cp_registry_free(r);
}

/* What an embedding program does to a loaded graph: take a stage out and rebind around
 * it (cp_remove, cp_put), and read a stage's state after the run (cp_instance_state),
 * here what its create learnt of its port (cp_port_packet_bytes). */
static void test_edit_graph_and_read_state(void)
{
    cp_registry *r = toy_registry();
    char err[CP_ERR_MAX];
    cp_graph *g = cp_graph_new(r);
    CHECK_MSG(cp_graph_load_text(g, pipeline_text, "toy.graph", err) == 0, "%s", err);
    CHECK(cp_remove(g, "stage dbl", err) == 0 && cp_remove(g, "queue doubled", err) == 0);
    CHECK(cp_put(g, "stage sink", "in", "numbers", "test", err) == 0);
    CHECK(cp_remove(g, "stage dbl", err) == -1 && strstr(err, "no section [stage dbl]"));
    CHECK(cp_remove(g, "graph", err) == -1);
    toy_frame f = {0};
    cp_instance *in = cp_instance_new(g, &f, NULL, err);
    CHECK_MSG(in && cp_instance_run(in, &(gr_launch_opts){.workers = 2}, err) == GR_OK, "%s", err);
    CHECK(f.packets == 1000 && f.sum == 999 * 1000 / 2);   /* not doubled */
    const source_state *s = in ? cp_instance_state(in, "src") : NULL;
    CHECK(s && s->count == 1000 && s->packet_bytes == sizeof(num_pkt));
    CHECK(in && !cp_instance_state(in, "dbl"));
    cp_instance_free(in);
    cp_graph_free(g);
    cp_registry_free(r);
}

/* A stage's `low_watermark` reaches the runtime: on one worker the source, whose every
 * committed packet is a task of the higher-priority Shader, is preempted at each commit
 * with watermark 1 and never (it blocks on the full queue of 8 first) with the default. */
static uint64_t source_preemptions(cp_registry *r, const char *set)
{
    char err[CP_ERR_MAX];
    cp_graph *g = cp_graph_new(r);
    CHECK_MSG(cp_graph_load_text(g, pipeline_text, "toy.graph", err) == 0, "%s", err);
    if (set) CHECK_MSG(cp_set(g, set, err) == 0, "%s", err);
    toy_frame f = {0};
    cp_instance *in = cp_instance_new(g, &f, NULL, err);
    gr_launch_opts o = {.workers = 1, .scheduler = "gramps"};
    CHECK_MSG(in && cp_instance_run(in, &o, err) == GR_OK, "%s", err);
    const gr_stats *st = in ? gr_get_stats(cp_instance_graph(in)) : NULL;
    uint64_t n = 0;
    for (int i = 0; st && i < st->nstages; i++)
        if (!strcmp(st->stages[i].name, "src")) n = st->stages[i].preemptions;
    CHECK(f.packets == 1000);
    cp_instance_free(in);
    cp_graph_free(g);
    return n;
}

static void test_stage_low_watermark(void)
{
    const char *torture = getenv("GRAMPS_TORTURE");
    if (torture && strcmp(torture, "0")) SKIP("torture builds preempt at every commit");
    cp_registry *r = toy_registry();
    uint64_t by_default = source_preemptions(r, NULL), at_1 = source_preemptions(r, "src.low_watermark=1");
    CHECK_MSG(by_default == 0 && at_1 >= 999, "preemptions: default %llu, watermark 1 %llu",
              (unsigned long long)by_default, (unsigned long long)at_1);
    cp_registry_free(r);
}

static void expect_error(cp_registry *r, const char *extra, const char *set, const char *const *want)
{
    toy_frame f;
    char err[CP_ERR_MAX];
    const char *got = run_text(r, extra, set, &f, NULL, err);
    CHECK_MSG(*got, "no error for: %s", extra ? extra : set);
    for (; *want; want++) CHECK_MSG(strstr(got, *want), "'%s' lacks '%s'", got, *want);
}

static void test_errors_name_file_and_line(void)
{
    cp_registry *r = toy_registry();
    expect_error(r, "[stage x]\ntype = toy.nothing\n", NULL,
                 (const char *[]){"toy.graph:21", "unknown stage type 'toy.nothing'", NULL});
    expect_error(r, "[stage x]\ntype = toy.source\nout = numbers\nspeed = 3\n", NULL,
                 (const char *[]){"toy.graph:23", "no port or parameter 'speed'", NULL});
    expect_error(r, "[queue o]\nformat = toy.other\n[stage x]\ntype = toy.source\nout = o\n", NULL,
                 (const char *[]){"toy.graph:24", "stage 'x'", "port 'out'", "'toy.num'",
                                  "'toy.other'", NULL});
    expect_error(r, "[stage x]\ntype = toy.other-sink\n", NULL,
                 (const char *[]){"toy.graph:21", "port 'in'", "not bound", NULL});
    expect_error(r, "[stage x]\ntype = toy.sink\nin = nowhere\n", NULL,
                 (const char *[]){"toy.graph:22", "queue 'nowhere'", NULL});
    expect_error(r, "[stage x]\ntype = toy.source\nout = numbers\ncount = lots\n", NULL,
                 (const char *[]){"toy.graph:23", "not an integer", NULL});
    expect_error(r, "[stage x]\ntype = toy.source\nout = numbers\ncount = -4\n", NULL,
                 (const char *[]){"toy.graph:23", "out of range", NULL});
    expect_error(r, "[stage x]\ntype = toy.source\nout = numbers\ncount = $missing\n", NULL,
                 (const char *[]){"toy.graph:23", "variable 'missing'", NULL});
    expect_error(r, "[queue q]\nformat = toy.num\ncolour = red\n", NULL,
                 (const char *[]){"toy.graph:22", "unknown setting 'colour'", NULL});
    expect_error(r, "[queue q]\nformat = toy.none\n", NULL,
                 (const char *[]){"toy.graph:21", "unknown packet format 'toy.none'", NULL});
    expect_error(r, "this line is not ini\n", NULL, (const char *[]){"toy.graph:20", "syntax", NULL});
    expect_error(r, "[stage bad name]\ntype = toy.sink\n", NULL, (const char *[]){"toy.graph:21", "bad section", NULL});
    expect_error(r, NULL, "nosuch.capacity=3", (const char *[]){"no stage or queue 'nosuch'", NULL});
    expect_error(r, "[stage x]\ntype = toy.double\nin = numbers\nout = doubled\nlow_watermark = -1\n",
                 NULL, (const char *[]){"toy.graph:24", "low_watermark = -1 is out of range", NULL});
    expect_error(r, NULL, "numbers.capacity=0", (const char *[]){"command line", "out of range", NULL});
    expect_error(r, NULL, "numbers=3", (const char *[]){"SECTION.KEY=VALUE", NULL});
    /* a --set of a [graph] key nothing declares or reads would change nothing */
    expect_error(r, NULL, "graph.nn=10", (const char *[]){"--set 'graph.nn=10'",
                 "no setting 'nn'", "[graph] settings: n;", NULL});
    /* a bad value set through a variable names the variable as well as the line reading it */
    expect_error(r, NULL, "graph.n=lots", (const char *[]){"toy.graph:", "'count = $n' ($n = lots): "
                 "not an integer", NULL});
    /* a graph-wide device is checked though no toy stage has a kernel to place */
    expect_error(r, NULL, "graph.device=gpu", (const char *[]){"command line (--set)",
                 "[graph]: device = gpu: expected cpu, opencl or auto", NULL});
    toy_frame f;
    char err[CP_ERR_MAX];
    CHECK_MSG(!*run_text(r, NULL, "graph.low_watermark=2", &f, NULL, err), "%s", err);
    CHECK_MSG(!*run_text(r, NULL, "graph.device=cpu", &f, NULL, err), "%s", err);
    CHECK_MSG(!*run_text(r, "[stage tail]\ntype = toy.source\ncount = $m\nout = extra\n"
                         "[queue extra]\nformat = toy.num\n[stage tail-sink]\ntype = toy.sink\n"
                         "in = extra\n", "graph.m=4", &f, NULL, err), "%s", err);
    cp_registry_free(r);
}

static void test_registry_errors(void)
{
    char err[CP_ERR_MAX];
    cp_registry *r = toy_registry();
    CHECK(cp_register_stage(r, &toy_types[0], err) != 0 && strstr(err, "twice"));
    static const cp_port bad_ports[] = {{"in", GR_BIND_INPUT, "toy.unknown", NULL}};
    static const cp_stage_type bad = {.name = "toy.bad", .kind = GR_THREAD, .ports = bad_ports,
                                      .nports = 1, .main = sink_main};
    CHECK(cp_register_stage(r, &bad, err) != 0 && strstr(err, "toy.unknown"));
    CHECK(cp_plugin_load(r, "/nonexistent/plugin.so", err) != 0 && strstr(err, "/nonexistent/plugin.so"));
    cp_registry_free(r);
}

/* A plugin name without a '/' is looked for in the plugin path only (dlopen would search
 * the system's libraries), and the message lists the directories tried; a graph file's
 * plugins setting adds its file and line. */
static void test_plugin_path(void)
{
    char err[CP_ERR_MAX];
    cp_registry *r = toy_registry();
    CHECK(cp_plugin_load(r, "libm.so.6", err) != 0 && strstr(err, "plugin path (empty)"));
    CHECK(cp_plugin_path_add(r, "/nonexistent/a::/nonexistent/b", err) == 0);
    CHECK_MSG(cp_plugin_load(r, "p.so", err) != 0 &&
              strstr(err, "'p.so': not found in the plugin path (/nonexistent/a:/nonexistent/b)"),
              "%s", err);
    cp_graph *g = cp_graph_new(r);
    CHECK(cp_graph_load_text(g, "[graph]\nname = x\nplugins = p.so\n", "p.graph", err) == 0);
    CHECK_MSG(cp_graph_load_plugins(g, r, err) != 0 && strstr(err, "p.graph:3: plugin 'p.so'"),
              "%s", err);
    cp_graph_free(g);
    cp_registry_free(r);
}

/* A long line is an error naming it, not a silently cut value. */
static void test_long_line(void)
{
    cp_registry *r = toy_registry();
    char extra[600];
    snprintf(extra, sizeof extra, "[queue q]\nformat = toy.num\n# %0500d\n", 0);
    expect_error(r, extra, NULL, (const char *[]){"toy.graph:22", "longer than", NULL});
    cp_registry_free(r);
}

/* A description beyond the size limits is refused at the line that crosses them, with
 * the limit named (lookups are linear scans: a 200,000-key file took 95 s). */
static void test_size_limits(void)
{
    cp_registry *r = toy_registry();
    size_t cap = (size_t)(CP_MAX_SECTION_KEYS + 1) * 24 + 256;
    char *text = malloc(cap);
    int n = snprintf(text, cap, "[graph]\n");
    for (int i = 0; i <= CP_MAX_SECTION_KEYS; i++) n += snprintf(text + n, cap - n, "v%d = %d\n", i, i);
    cp_graph *g = cp_graph_new(r);
    char err[CP_ERR_MAX] = "";
    CHECK(cp_graph_load_text(g, text, "keys.graph", err) != 0);
    CHECK_MSG(strstr(err, "CP_MAX_SECTION_KEYS") && strstr(err, "keys.graph:4098"), "%s", err);
    cp_graph_free(g);
    free(text);
    cap = (size_t)(CP_MAX_SECTIONS + 1) * 40 + 256;
    text = malloc(cap);
    n = 0;
    for (int i = 0; i <= CP_MAX_SECTIONS; i++) n += snprintf(text + n, cap - n, "[queue q%d]\nformat = toy.num\n", i);
    g = cp_graph_new(r);
    CHECK(cp_graph_load_text(g, text, "sections.graph", err) != 0);
    CHECK_MSG(strstr(err, "CP_MAX_SECTIONS") && strstr(err, "q4096"), "%s", err);
    cp_graph_free(g);
    free(text);
    cp_registry_free(r);
}

int main(void)
{
    RUN(test_runs_a_graph);
    RUN(test_replication);
    RUN(test_edit_graph_and_read_state);
    RUN(test_stage_low_watermark);
    RUN(test_errors_name_file_and_line);
    RUN(test_registry_errors);
    RUN(test_plugin_path);
    RUN(test_long_line);
    RUN(test_size_limits);
    return check_finish();
}

/* A graph file's Shader flags coalesce_input, recirculate, reduce_per_key and
 * ticket_order (compose/): a summing Shader that coalesces and recirculates reduces a
 * stream to one packet, a ticket-ordered doubling Shader keeps its source's order, under
 * 1-3 workers; bad values and misplaced flags fail with the file and line. */
#include "compose/compose.h"
#include "tests/check.h"

#include <stdlib.h>
#include <string.h>

#define SUM_ELEMS 16
typedef struct sums_pkt { uint32_t count, pad; uint64_t v[SUM_ELEMS]; } sums_pkt;
typedef struct num_pkt { uint64_t v; } num_pkt;

typedef struct flags_frame {
    uint64_t packets, elements, sum, out_of_order, last;
} flags_frame;

static const cp_format toy_sums = {.name = "toy.sums", .kind = GR_COLLECTION, .header_bytes = 8,
                                   .element_bytes = sizeof(uint64_t),
                                   .default_elements = SUM_ELEMS, .max_elements = SUM_ELEMS};
static const cp_format toy_num = {.name = "toy.num", .kind = GR_OPAQUE, .packet_bytes = sizeof(num_pkt)};

/* 1 .. 500, one value per packet. */
static void singles_main(gr_ctx *c)
{
    for (uint64_t i = 1; i <= 500; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        sums_pkt *p = w.mem;
        p->count = 1;
        p->v[0] = i;
        gr_commit_out(c, 0, 1);
    }
}

/* Sums the packet into its first element. */
static void sum_main(gr_ctx *c)
{
    sums_pkt *p = gr_input(c, NULL);
    uint64_t s = 0;
    for (uint32_t k = 0; k < p->count; k++) s += p->v[k];
    p->v[0] = s;
    p->count = 1;
}

static void sums_sink_main(gr_ctx *c)
{
    flags_frame *f = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const sums_pkt *p = w.mem;
        f->packets++;
        f->elements += p->count;
        for (uint32_t k = 0; k < p->count; k++) f->sum += p->v[k];
        gr_commit(c, 0, 1);
    }
}

static void numbers_main(gr_ctx *c)
{
    for (uint64_t i = 0; i < 400; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        ((num_pkt *)w.mem)->v = i;
        gr_commit_out(c, 0, 1);
    }
}

/* Uneven work, so later packets often finish first. */
static void double_main(gr_ctx *c)
{
    const num_pkt *in = gr_input(c, NULL);
    volatile uint64_t x = 0;
    for (uint64_t k = 0; k < (in->v * 2654435761u) % 3000; k++) x += k;
    ((num_pkt *)gr_output(c, 0))->v = in->v * 2;
}

static void order_sink_main(gr_ctx *c)
{
    flags_frame *f = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        uint64_t v = ((const num_pkt *)w.mem)->v;
        if (f->packets && v <= f->last) f->out_of_order++;
        f->last = v;
        f->packets++;
        gr_commit(c, 0, 1);
    }
}

static const cp_port singles_ports[] = {{"out", GR_BIND_OUTPUT, "toy.sums", NULL}};
static const cp_port sum_ports[] = {{"in", GR_BIND_INPUT, "toy.sums", NULL},
                                    {"out", GR_BIND_INPLACE, "toy.sums", NULL}};
static const cp_port sums_sink_ports[] = {{"in", GR_BIND_INPUT, "toy.sums", NULL}};
static const cp_port numbers_ports[] = {{"out", GR_BIND_OUTPUT, "toy.num", NULL}};
static const cp_port double_ports[] = {{"in", GR_BIND_INPUT, "toy.num", NULL},
                                       {"out", GR_BIND_OUTPUT, "toy.num", NULL}};
static const cp_port order_sink_ports[] = {{"in", GR_BIND_INPUT, "toy.num", NULL}};

static const cp_stage_type toy_types[] = {
    {.name = "toy.singles", .kind = GR_THREAD, .ports = singles_ports, .nports = 1, .main = singles_main},
    {.name = "toy.sum", .kind = GR_SHADER, .ports = sum_ports, .nports = 2, .main = sum_main},
    {.name = "toy.sums-sink", .kind = GR_THREAD, .ports = sums_sink_ports, .nports = 1, .main = sums_sink_main},
    {.name = "toy.numbers", .kind = GR_THREAD, .ports = numbers_ports, .nports = 1, .main = numbers_main},
    {.name = "toy.double", .kind = GR_SHADER, .ports = double_ports, .nports = 2, .main = double_main},
    {.name = "toy.order-sink", .kind = GR_THREAD, .ports = order_sink_ports, .nports = 1, .main = order_sink_main},
};

static const char *const reduce_text =
    "[queue singles]\nformat = toy.sums\n"
    "[queue result]\nformat = toy.sums\n"
    "[stage gen]\ntype = toy.singles\nout = singles\n"
    "[stage sum]\ntype = toy.sum\nin = singles\nout = result\n"
    "[stage sink]\ntype = toy.sums-sink\nin = result\n";

static const char *const order_text =
    "[queue numbers]\nformat = toy.num\ncapacity = 8\n"
    "[queue doubled]\nformat = toy.num\ncapacity = 4\nordered = true\n"
    "[stage gen]\ntype = toy.numbers\nout = numbers\n"
    "[stage dbl]\ntype = toy.double\nin = numbers\nout = doubled\n"
    "[stage sink]\ntype = toy.order-sink\nin = doubled\n";

static cp_registry *toy_registry(void)
{
    char err[CP_ERR_MAX];
    cp_registry *r = cp_registry_new();
    CHECK(cp_register_format(r, &toy_sums, err) == 0);
    CHECK(cp_register_format(r, &toy_num, err) == 0);
    for (size_t i = 0; i < sizeof toy_types / sizeof *toy_types; i++)
        CHECK_MSG(cp_register_stage(r, &toy_types[i], err) == 0, "%s", err);
    return r;
}

/* Runs `text` with the --set edits (NULL-terminated) at `workers`; "" or the error. */
static const char *run_graph(const char *text, const char *const *sets, unsigned workers,
                             flags_frame *f, char err[CP_ERR_MAX])
{
    cp_registry *r = toy_registry();
    cp_graph *g = cp_graph_new(r);
    err[0] = 0;
    memset(f, 0, sizeof *f);
    bool ok = cp_graph_load_text(g, text, "flags.graph", err) == 0;
    for (; ok && sets && *sets; sets++) ok = cp_set(g, *sets, err) == 0;
    if (ok) {
        cp_instance *in = cp_instance_new(g, f, NULL, err);
        if (in) {
            gr_launch_opts o = {.workers = workers};
            cp_instance_run(in, &o, err);
            cp_instance_free(in);
        }
    }
    cp_graph_free(g);
    cp_registry_free(r);
    return err;
}

static void test_recirculate_from_graph_file(void)
{
    static const char *const sets[] = {"sum.coalesce_input=true", "sum.recirculate=yes", NULL};
    flags_frame f;
    char err[CP_ERR_MAX];
    for (unsigned w = 1; w <= 3; w++) {
        CHECK_MSG(!*run_graph(reduce_text, sets, w, &f, err), "%s", err);
        CHECK_MSG(f.packets == 1 && f.elements == 1 && f.sum == 500 * 501 / 2,
                  "%u workers: %llu packets, %llu elements, sum %llu", w,
                  (unsigned long long)f.packets, (unsigned long long)f.elements,
                  (unsigned long long)f.sum);
    }
    /* Without the flags every packet comes through on its own. */
    CHECK_MSG(!*run_graph(reduce_text, NULL, 2, &f, err), "%s", err);
    CHECK(f.packets == 500 && f.sum == 500 * 501 / 2);
}

static void test_ticket_order_from_graph_file(void)
{
    static const char *const sets[] = {"dbl.ticket_order=on", NULL};
    flags_frame f;
    char err[CP_ERR_MAX];
    for (unsigned w = 1; w <= 3; w++) {
        CHECK_MSG(!*run_graph(order_text, sets, w, &f, err), "%s", err);
        CHECK_MSG(f.packets == 400 && f.out_of_order == 0 && f.last == 798,
                  "%u workers: %llu packets, %llu out of order", w,
                  (unsigned long long)f.packets, (unsigned long long)f.out_of_order);
    }
    /* Without it the ordered output of an unordered input is refused. */
    CHECK(strstr(run_graph(order_text, NULL, 1, &f, err), "input queue 'numbers' is not ordered"));
}

static void expect_error(const char *text, const char *set, const char *want)
{
    const char *sets[] = {set, NULL};
    flags_frame f;
    char err[CP_ERR_MAX];
    run_graph(text, set ? sets : NULL, 1, &f, err);
    CHECK_MSG(strstr(err, want), "want '%s' in: %s", want, err);
}

static void test_bad_values_name_file_and_line(void)
{
    char text[2048];
    snprintf(text, sizeof text, "%srecirculate = maybe\n", reduce_text);
    expect_error(text, NULL, "flags.graph:15: 'recirculate = maybe': expected true or false");
    snprintf(text, sizeof text, "%srecirculate = true\n", reduce_text);
    expect_error(text, NULL, "flags.graph:15: stage 'sink': 'recirculate' is for Shader stages; "
                             "type 'toy.sums-sink' is a Thread stage");
    snprintf(text, sizeof text, "%s[stage sum]\nrecirculate = true\n", reduce_text);
    expect_error(text, NULL, "flags.graph:16: stage 'sum': 'recirculate = true' needs "
                             "'coalesce_input = true'");
    snprintf(text, sizeof text, "%s[stage sum]\ncoalesce_input = 1\nreduce_per_key = 1\n", reduce_text);
    expect_error(text, NULL, "flags.graph:17: stage 'sum': 'reduce_per_key = true' needs "
                             "'recirculate = true'");
    snprintf(text, sizeof text, "%s[stage sum]\ncoalesce_input = 1\nticket_order = 1\n", reduce_text);
    expect_error(text, NULL, "flags.graph:17: stage 'sum': 'ticket_order = true' gives one result");
    /* What the queues must be is the runtime's check, naming the stage and queue. */
    expect_error(order_text, "dbl.coalesce_input=true", "Shader stage 'dbl' coalesces its input, "
                 "which needs an unordered Collection input queue ('numbers' is Opaque)");
    expect_error(reduce_text, "sum.ticket_order=true", "'sum' orders its output by tickets, which "
                 "needs exactly one ordered output queue");
}

int main(void)
{
    RUN(test_recirculate_from_graph_file);
    RUN(test_ticket_order_from_graph_file);
    RUN(test_bad_values_name_file_and_line);
    return check_finish();
}

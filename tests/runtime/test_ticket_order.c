/* Ticket-ordered Shader outputs (DANBI §II, gr_stage_desc.ticket_order): a Shader whose
 * tasks take uneven time delivers into its ordered output in the order its input packets
 * were committed, per key, skipping the tasks that discard, under every policy at 1, 2,
 * 3 and 8 workers and simulated; the output queue's capacity bounds the reserved slots
 * even at capacity 1, with no deadlock. Graphs that cannot give an order are refused
 * with a message naming the stage and queue. */
#include "gramps/gramps.h"
#include "tests/check.h"
#include "tests/runtime/run_graph.h"

#include <stdint.h>
#include <string.h>

#define KEYS 4
#define PACKETS 600

typedef struct item { uint64_t seq, key, work; } item;

typedef struct order_params {
    uint32_t packets;
    uint64_t seen[KEYS], last[KEYS];      /* per key: results read, last sequence + 1 */
    uint64_t out_of_order, wrong_key;
} order_params;

/* Sequence numbers 0.. in order; key and uneven work from a hash of the number. */
static void gen(gr_ctx *c)
{
    order_params *p = gr_user(c);
    for (uint64_t i = 0; i < p->packets; i++) {
        uint64_t h = i * 0x9E3779B97F4A7C15ull;
        gr_window w;
        gr_reserve_out_key(c, 0, 1, h >> 62, &w);
        *(item *)w.mem = (item){.seq = i, .key = h >> 62, .work = (h >> 40) & 4095};
        gr_commit_out(c, 0, 1);
    }
}

/* Spins for the item's work, so later tickets often finish first; every 7th discards. */
static void shade(gr_ctx *c)
{
    item *in = gr_input(c, NULL);
    volatile uint64_t x = 0;
    for (uint64_t k = 0; k < in->work; k++) x += k;
    if (in->seq % 7 == 3) gr_discard(c, 0);
    else *(item *)gr_output(c, 0) = *in;
}

/* One instance per key: the results must come in sequence order. */
static void collect(gr_ctx *c)
{
    order_params *p = gr_user(c);
    uint64_t key = gr_key(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const item *it = w.mem;
        if (it->key != key) p->wrong_key++;
        else {
            if (it->seq + 1 <= p->last[key]) p->out_of_order++;
            p->last[key] = it->seq + 1;
            p->seen[key]++;
        }
        gr_commit(c, 0, 1);
    }
}

/* gen -> work -> shade (ticket_order) -> results (ordered set) -> collect[key] */
static gr_graph *ticket_graph(order_params *p, uint32_t capacity, bool tickets)
{
    gr_queue_desc work = {.name = "work", .packet_bytes = sizeof(item), .capacity = 16};
    gr_queue_desc res = {.name = "results", .packet_bytes = sizeof(item), .capacity = capacity,
                         .subqueues = KEYS, .ordered = true};
    return chain_graph(&work, &res,
                       &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen, .user = p},
                       &(gr_stage_desc){.name = "shade", .kind = GR_SHADER, .main = shade,
                                        .ticket_order = tickets},
                       GR_BIND_OUTPUT,
                       &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect,
                                        .user = p, .instanced = true});
}

/* Results expected per key: the sequence numbers of that key not discarded. */
static void expected(uint32_t packets, uint64_t want[KEYS])
{
    memset(want, 0, KEYS * sizeof *want);
    for (uint64_t i = 0; i < packets; i++)
        if (i % 7 != 3) want[(i * 0x9E3779B97F4A7C15ull) >> 62]++;
}

static void run_once(const char *sched, unsigned workers, unsigned simulate, uint32_t capacity)
{
    order_params p = {.packets = PACKETS};
    gr_graph *g = ticket_graph(&p, capacity, true);
    gr_status st = launch_and_wait(g, sched, workers, simulate);
    CHECK_MSG(st == GR_OK, "%s, %u workers: %s", sched, workers, gr_error(g));
    uint64_t want[KEYS];
    expected(PACKETS, want);
    for (int k = 0; k < KEYS; k++)
        CHECK_MSG(p.seen[k] == want[k], "%s, %u workers (%u simulated), capacity %u: key %d "
                  "got %llu results, want %llu", sched, workers, simulate, capacity, k,
                  (unsigned long long)p.seen[k], (unsigned long long)want[k]);
    CHECK_MSG(p.out_of_order == 0 && p.wrong_key == 0, "%s, %u workers (%u simulated): %llu "
              "results out of ticket order, %llu in the wrong subqueue", sched, workers,
              simulate, (unsigned long long)p.out_of_order, (unsigned long long)p.wrong_key);
    const gr_stats *stats = gr_get_stats(g);
    for (int q = 0; stats && q < stats->nqueues; q++)
        if (!strcmp(stats->queues[q].name, "results") && gr_scheduler_bounded(sched))
            CHECK_MSG(stats->queues[q].reserved_peak_packets <= (uint64_t)capacity * KEYS,
                      "%s: %llu result slots reserved at once, capacity %u x %d", sched,
                      (unsigned long long)stats->queues[q].reserved_peak_packets, capacity, KEYS);
    gr_graph_destroy(g);
}

static void test_ticket_order_every_policy_and_worker_count(void)
{
    for (int k = 0; k < POLICIES; k++)
        for (int i = 0; i < WORKER_COUNTS; i++) run_once(every_policy[k], worker_counts[i], 0, 4);
}

static void test_ticket_order_simulated_workers(void)
{
    for (int k = 0; k < POLICIES; k++) run_once(every_policy[k], 1, 16, 4);
}

/* One slot per key: each task must wait for the one before it to be read. */
static void test_capacity_one_does_not_deadlock(void)
{
    for (int k = 0; k < POLICIES; k++) run_once(every_policy[k], 3, 0, 1);
}

/* Without tickets an ordered output from an unordered input has no order to keep. */
static void test_without_tickets_refused(void)
{
    order_params p = {.packets = 10};
    gr_graph *g = ticket_graph(&p, 4, false);
    CHECK(launch_and_wait(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "input queue 'work' is not ordered"), "%s", gr_error(g));
    gr_graph_destroy(g);
}

static void dummy_shader(gr_ctx *c) { (void)gr_input(c, NULL); }

/* A Shader-fed input (no commit order) and an unordered output are refused; so is the
 * flag on a Thread stage. */
static void test_bad_graphs_refused(void)
{
    gr_queue_desc a = {.name = "a", .packet_bytes = sizeof(item)};
    gr_queue_desc b = {.name = "b", .packet_bytes = sizeof(item)};
    gr_queue_desc c = {.name = "c", .packet_bytes = sizeof(item), .ordered = true};
    order_params p = {.packets = 4};
    gr_stage_desc source = {.name = "gen", .kind = GR_THREAD, .main = gen, .user = &p};
    gr_stage_desc sink = {.name = "sink", .kind = GR_THREAD, .main = collect, .user = &p};

    /* gen -> a -> first -> b -> second (tickets) -> c -> sink */
    gr_graph *g = gr_graph_create();
    int qa = gr_queue(g, &a), qb = gr_queue(g, &b), qc = gr_queue(g, &c);
    int sg = gr_stage(g, &source);
    int s1 = gr_stage(g, &(gr_stage_desc){.name = "first", .kind = GR_SHADER, .main = dummy_shader});
    int s2 = gr_stage(g, &(gr_stage_desc){.name = "second", .kind = GR_SHADER, .main = dummy_shader,
                                          .ticket_order = true});
    int sc = gr_stage(g, &sink);
    gr_bind(g, sg, GR_BIND_OUTPUT, qa);
    gr_bind(g, s1, GR_BIND_INPUT, qa);
    gr_bind(g, s1, GR_BIND_INPLACE, qb);
    gr_bind(g, s2, GR_BIND_INPUT, qb);
    gr_bind(g, s2, GR_BIND_INPLACE, qc);
    gr_bind(g, sc, GR_BIND_INPUT, qc);
    CHECK(launch_and_wait(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "Shader stage 'second' orders its output by tickets") &&
              strstr(gr_error(g), "'b' is not"), "%s", gr_error(g));
    gr_graph_destroy(g);

    g = chain_graph(&a, &b, &source,
                    &(gr_stage_desc){.name = "shade", .kind = GR_SHADER, .main = dummy_shader,
                                     .ticket_order = true},
                    GR_BIND_INPLACE, &sink);
    CHECK(launch_and_wait(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "'shade' orders its output by tickets, which needs exactly one "
                     "ordered output queue"), "%s", gr_error(g));
    gr_graph_destroy(g);

    g = gr_graph_create();
    qa = gr_queue(g, &a);
    source.ticket_order = true;
    sg = gr_stage(g, &source);
    sc = gr_stage(g, &sink);
    gr_bind(g, sg, GR_BIND_OUTPUT, qa);
    gr_bind(g, sc, GR_BIND_INPUT, qa);
    CHECK(launch_and_wait(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "Thread stage 'gen' asks for ticket-ordered output"), "%s", gr_error(g));
    gr_graph_destroy(g);
}

int main(void)
{
    RUN(test_ticket_order_every_policy_and_worker_count);
    RUN(test_ticket_order_simulated_workers);
    RUN(test_capacity_one_does_not_deadlock);
    RUN(test_without_tickets_refused);
    RUN(test_bad_graphs_refused);
    return check_finish();
}

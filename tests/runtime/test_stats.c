/* Statistics that tell the truth (issue 11 item 5), checked against what the
 * application itself knows: packets delivered through an ordered chain's end are
 * counted; a packet in an in-place ordered chain counts once in the footprint, not once
 * in its Shader's input queue and again as its reorder slot at the chain's end; the
 * time-averaged footprint; JSON that parses whatever the stage and queue names hold;
 * DOT that draws only backward bindings as backward; the journal's depth samples as
 * gr_journal_depths hands them out. */
#include "gramps/gramps.h"
#include "tests/check.h"
#include "tests/json_check.h"

#include <stdint.h>
#include <time.h>

typedef struct seq_pkt { uint32_t seq, value; } seq_pkt;
#define PKT_BYTES 1024
typedef struct chain_params { uint32_t n, got, spin_ms; } chain_params;

static gr_status run(gr_graph *g, unsigned workers, bool journal)
{
    gr_launch_opts o = {.workers = workers, .deadlock_seconds = 20, .journal = journal};
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    if (st != GR_OK) fprintf(stderr, "  run failed: %s\n", gr_error(g));
    return st;
}

static void spin_us(double us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1e6 + (t.tv_nsec - t0.tv_nsec) / 1e3 < us);
}

static void spin_ms(uint32_t ms) { spin_us(ms * 1000.0); }

/* Reserves all n packets at once and holds them for spin_ms before committing: the
 * only worker is busy here, so the watchdog's footprint samples see exactly the n
 * reserved packets (and, in the chain's end queue, n reorder slots with no packet). */
static void produce(gr_ctx *c)
{
    chain_params *p = gr_user(c);
    gr_window w;
    if (gr_reserve_out(c, 0, p->n, &w) != GR_OK) return;
    for (uint32_t i = 0; i < p->n; i++) *(seq_pkt *)((char *)w.mem + i * PKT_BYTES) = (seq_pkt){i, 0};
    spin_ms(p->spin_ms);
    gr_commit_out(c, 0, p->n);
}

static void shade_inplace(gr_ctx *c)
{
    seq_pkt *s = gr_input(c, NULL);
    s->value = s->seq * 3;
}

/* Copies to a fresh output packet, dropping every 4th (a SKIP slot at the chain end). */
static void shade_copy(gr_ctx *c)
{
    const seq_pkt *in = gr_input(c, NULL);
    *(seq_pkt *)gr_output(c, 0) = *in;
    if (in->seq % 4 == 3) gr_discard(c, 0);
}

static void consume(gr_ctx *c)
{
    chain_params *p = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        p->got++;
        gr_commit(c, 0, 1);
    }
}

enum { FRAGMENTS, TILES };

/* produce -> fragments (ordered, Shader-fed) -> shade -> tiles (ordered) -> consume,
 * the raster graph's Rast -> PS -> OM chain. */
static gr_graph *chain_graph(chain_params *p, bool inplace)
{
    gr_graph *g = gr_graph_create();
    gr_queue(g, &(gr_queue_desc){.name = "fragments", .packet_bytes = PKT_BYTES, .capacity = 64,
                                 .ordered = true});
    gr_queue(g, &(gr_queue_desc){.name = "tiles", .packet_bytes = PKT_BYTES, .capacity = 64,
                                 .ordered = true});
    int pr = gr_stage(g, &(gr_stage_desc){.name = "rast", .kind = GR_THREAD, .main = produce, .user = p});
    int sh = gr_stage(g, &(gr_stage_desc){.name = "ps", .kind = GR_SHADER,
                                          .main = inplace ? shade_inplace : shade_copy});
    int co = gr_stage(g, &(gr_stage_desc){.name = "om", .kind = GR_THREAD, .main = consume, .user = p});
    gr_bind(g, pr, GR_BIND_OUTPUT, FRAGMENTS);
    gr_bind(g, sh, GR_BIND_INPUT, FRAGMENTS);
    gr_bind(g, sh, inplace ? GR_BIND_INPLACE : GR_BIND_OUTPUT, TILES);
    gr_bind(g, co, GR_BIND_INPUT, TILES);
    return g;
}

/* Every packet the chain's last Shader delivers passes through the end queue; the
 * ordered delivery path bypasses gr_enqueue and used to count none. */
static void test_packets_through_chain_end(void)
{
    for (unsigned w = 1; w <= 2; w++) {
        for (int inplace = 0; inplace <= 1; inplace++) {
            chain_params p = {.n = 40};
            gr_graph *g = chain_graph(&p, inplace);
            CHECK(run(g, w, false) == GR_OK);
            uint32_t delivered = inplace ? p.n : p.n - p.n / 4;
            CHECK_MSG(p.got == delivered, "got %u of %u", p.got, delivered);
            const gr_stats *st = gr_get_stats(g);
            CHECK(st != NULL);
            if (st) {
                CHECK(st->queues[FRAGMENTS].packets == p.n);
                CHECK_MSG(st->queues[TILES].packets == delivered, "%u workers, %s: tiles "
                          "packets %llu, delivered %u", w, inplace ? "in place" : "copy",
                          (unsigned long long)st->queues[TILES].packets, delivered);
            }
            gr_graph_destroy(g);
        }
    }
}

/* The application never holds more than its n packets, so the footprint can never be
 * more than n packets' bytes (but for the transient below), and while the producer holds them (for 60 ms, 6 watchdog
 * periods) it is exactly that. The reorder slots reserved for them at the chain's end
 * hold no packet. */
static void test_inplace_chain_footprint_once(void)
{
    chain_params p = {.n = 16, .spin_ms = 60};
    gr_graph *g = chain_graph(&p, true);
    CHECK(run(g, 1, false) == GR_OK && p.got == p.n);
    const gr_stats *st = gr_get_stats(g);
    CHECK(st != NULL);
    if (st) {
        uint64_t held = (uint64_t)p.n * st->queues[FRAGMENTS].packet_bytes;
        /* one packet of slack: between the Shader filling a packet's slot and releasing
         * its input, a sample by the watchdog may see it in both queues */
        CHECK_MSG(st->peak_footprint_bytes >= held &&
                  st->peak_footprint_bytes <= held + st->queues[FRAGMENTS].packet_bytes,
                  "peak footprint %llu bytes, the application held %llu",
                  (unsigned long long)st->peak_footprint_bytes, (unsigned long long)held);
        CHECK(st->queues[FRAGMENTS].peak_packets == p.n);
        CHECK(st->queues[TILES].peak_packets <= p.n);
        CHECK(st->queues[TILES].reserved_peak_packets == p.n);   /* the slots still bound it */
        /* held for 60 ms of the run: the average is at least that share of the bytes */
        double least = (double)held * (p.spin_ms - 10) / st->wall_ms;
        CHECK_MSG(st->avg_footprint_bytes >= least && st->avg_footprint_bytes <= (double)held,
                  "average footprint %.0f bytes, expected %.0f..%llu", st->avg_footprint_bytes,
                  least, (unsigned long long)held);
    }
    gr_graph_destroy(g);
}

/* ---- a run shorter than the sampling period ------------------------------------------ */

#define BURST 24

static void burst(gr_ctx *c)
{
    gr_window w;
    if (gr_reserve_out(c, 0, BURST, &w) != GR_OK) return;
    gr_commit_out(c, 0, BURST);
}

static void take_slowly(gr_ctx *c)
{
    (void)gr_input(c, NULL);
    spin_us(2);
}

/* A Thread commits BURST packets at once, then a Shader takes them one task at a time,
 * 2 us each: about 50 us with packets in flight, less than the 100 us period. Samples
 * taken only at the period and at both ends (where every queue is empty) read a peak
 * of 0; the warm-up's samples see packets held. Workers sample between tasks, so the
 * Shader's tasks give them the chance. */
static void test_short_run_sampled(void)
{
    for (unsigned w = 1; w <= 2; w++) {
        gr_graph *g = gr_graph_create();
        int q = gr_queue(g, &(gr_queue_desc){.name = "burst", .packet_bytes = 64, .capacity = 64});
        int src = gr_stage(g, &(gr_stage_desc){.name = "burst", .kind = GR_THREAD, .main = burst});
        int sh = gr_stage(g, &(gr_stage_desc){.name = "take", .kind = GR_SHADER, .main = take_slowly});
        gr_bind(g, src, GR_BIND_OUTPUT, q);
        gr_bind(g, sh, GR_BIND_INPUT, q);
        CHECK(run(g, w, false) == GR_OK);
        const gr_stats *st = gr_get_stats(g);
        CHECK_MSG(st && st->peak_footprint_bytes > 0 && st->queues[q].peak_packets > 0,
                  "%u workers: a %.3f ms run held up to %d packets; sampled peak %llu bytes", w,
                  st ? st->wall_ms : 0, BURST, st ? (unsigned long long)st->peak_footprint_bytes : 0);
        CHECK_MSG(st && st->peak_footprint_bytes <= BURST * 64,
                  "%u workers: sampled peak %llu bytes, more than the %d packets ever held", w,
                  st ? (unsigned long long)st->peak_footprint_bytes : 0, BURST);
        gr_graph_destroy(g);
    }
}

/* gr_journal_depths hands out the samples the statistics come from: a queue's largest
 * journaled depth is its peak_packets; without the journal there are none. */
static void test_journal_depths(void)
{
    chain_params p = {.n = 16, .spin_ms = 30};
    gr_graph *g = chain_graph(&p, true);
    CHECK(run(g, 1, true) == GR_OK);
    size_t n = gr_journal_depths(g, NULL, 0);
    gr_depth_sample *d = calloc(n ? n : 1, sizeof *d);
    CHECK(n > 0 && d && gr_journal_depths(g, d, n) == n);
    uint64_t peak[2] = {0, 0};
    double last_ms = 0;
    for (size_t i = 0; d && i < n; i++) {
        CHECK(d[i].queue == FRAGMENTS || d[i].queue == TILES);
        if (d[i].queue == FRAGMENTS || d[i].queue == TILES)
            if (d[i].packets > peak[d[i].queue]) peak[d[i].queue] = d[i].packets;
        if (d[i].ms > last_ms) last_ms = d[i].ms;
    }
    const gr_stats *st = gr_get_stats(g);
    CHECK(st && peak[FRAGMENTS] == st->queues[FRAGMENTS].peak_packets && peak[FRAGMENTS] == p.n);
    CHECK(st && peak[TILES] == st->queues[TILES].peak_packets);
    CHECK_MSG(st && last_ms <= st->wall_ms + 1, "sample at %.3f ms of a %.3f ms run", last_ms,
              st ? st->wall_ms : 0);
    free(d);
    gr_graph_destroy(g);
    g = chain_graph(&p, true);
    CHECK(run(g, 1, false) == GR_OK && gr_journal_depths(g, NULL, 0) == 0);
    gr_graph_destroy(g);
}

/* ---- names in JSON and DOT ------------------------------------------------------------- */

#define ODD_QUEUE "q\"uote\\back\x01" "ctl\ttab \xc3\xa9\xe2\x86\x92"
#define ODD_STAGE "st\"age\\\n\x1f\xf0\x9f\x98\x80"

static void gen_two(gr_ctx *c)
{
    gr_window w;
    for (int i = 0; i < 2; i++) {
        gr_reserve_out(c, 0, 1, &w);
        gr_commit_out(c, 0, 1);
    }
}

static void drain(gr_ctx *c)
{
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) gr_commit(c, 0, 1);
}

static gr_graph *odd_names_graph(void)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = ODD_QUEUE, .packet_bytes = 8, .capacity = 4});
    int a = gr_stage(g, &(gr_stage_desc){.name = ODD_STAGE, .kind = GR_THREAD, .main = gen_two});
    int b = gr_stage(g, &(gr_stage_desc){.name = "drain", .kind = GR_THREAD, .main = drain});
    gr_bind(g, a, GR_BIND_OUTPUT, q);
    gr_bind(g, b, GR_BIND_INPUT, q);
    return g;
}

static char *written(void (*write)(const gr_graph *, FILE *), const gr_graph *g)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    write(g, f);
    fclose(f);
    return buf;
}

static void write_journal(const gr_graph *g, FILE *f) { gr_journal_write(g, f); }

static void test_json_escapes_names(void)
{
    gr_graph *g = odd_names_graph();
    CHECK(run(g, 1, true) == GR_OK);
    char *stats = written(gr_stats_write_json, g), *journal = written(write_journal, g);
    CHECK_MSG(stats && json_valid(stats), "stats JSON does not parse:\n%s", stats);
    CHECK_MSG(journal && json_valid(journal), "journal JSON does not parse");
    CHECK(stats && strstr(stats, "\"q\\\"uote\\\\back\\u0001ctl\\u0009tab \xc3\xa9\xe2\x86\x92\""));
    CHECK(stats && strstr(stats, "\"st\\\"age\\\\\\u000a\\u001f\xf0\x9f\x98\x80\""));
    CHECK(journal && strstr(journal, "\"st\\\"age\\\\\\u000a\\u001f\xf0\x9f\x98\x80\""));
    free(stats);
    free(journal);
    gr_graph_destroy(g);
}

/* The journal's slices, as a viewer draws them: one per Shader task or Thread
 * activation, each on a worker that exists, within the run, of a stage that exists;
 * none without the journal, and a short buffer gets the first ones but the full count. */
static void test_journal_slices(void)
{
    chain_params p = {.n = 40};
    gr_graph *g = chain_graph(&p, false);
    CHECK(gr_journal_slices(g, NULL, 0) == 0);
    CHECK(run(g, 2, true) == GR_OK);
    const gr_stats *st = gr_get_stats(g);
    size_t n = gr_journal_slices(g, NULL, 0);
    gr_slice *s = calloc(n ? n : 1, sizeof *s);
    CHECK(st && s && n >= st->stages[1].tasks && gr_journal_slices(g, s, n) == n);
    size_t ps = 0;
    for (size_t i = 0; st && s && i < n; i++) {
        CHECK(s[i].stage >= 0 && s[i].stage < st->nstages && s[i].worker < st->workers);
        CHECK(s[i].t0_ms <= s[i].t1_ms && s[i].t1_ms <= st->wall_ms + 1);
        ps += s[i].stage == 1;
    }
    CHECK_MSG(st && ps == st->stages[1].tasks, "%zu ps slices, %llu tasks", ps,
              st ? (unsigned long long)st->stages[1].tasks : 0);
    gr_slice first;
    CHECK(gr_journal_slices(g, &first, 1) == n && s && first.t0_ms == s[0].t0_ms);
    free(s);
    gr_graph_destroy(g);
    g = chain_graph(&p, false);
    CHECK(run(g, 2, false) == GR_OK && gr_journal_slices(g, NULL, 0) == 0);
    gr_graph_destroy(g);
}

/* Whether every line's double quotes pair up once backslash escapes are taken out. */
static bool dot_quotes_balanced(const char *dot)
{
    bool open = false;
    for (const char *s = dot; *s; s++) {
        if (*s == '\\' && s[1]) s++;
        else if (*s == '"') open = !open;
        else if (*s == '\n' && open) return false;
    }
    return !open;
}

static void test_dot_escapes_names(void)
{
    gr_graph *g = odd_names_graph();
    CHECK(run(g, 1, false) == GR_OK);
    char *dot = written(gr_graph_dot, g);
    CHECK_MSG(dot && dot_quotes_balanced(dot), "DOT strings not closed:\n%s", dot);
    free(dot);
    gr_graph_destroy(g);
}

/* ---- DOT: backward per binding ------------------------------------------------------- */

static void gen_rays(gr_ctx *c)
{
    gr_window w;
    for (uint32_t i = 0; i < 8; i++) {
        gr_reserve_out(c, 0, 1, &w);
        *(seq_pkt *)w.mem = (seq_pkt){i, 0};
        gr_commit_out(c, 0, 1);
    }
}

/* A packet goes round twice (the backward binding), then out. */
static void bounce(gr_ctx *c)
{
    seq_pkt in = *(const seq_pkt *)gr_input(c, NULL);
    int go = in.value < 2 ? 0 : 1;
    in.value++;
    *(seq_pkt *)gr_output(c, go) = in;
    gr_discard(c, 1 - go);
}

/* Whether the line starting at s contains word. */
static bool line_has(const char *s, const char *word)
{
    const char *hit = strstr(s, word), *eol = strchr(s, '\n');
    return hit && (!eol || hit < eol);
}

/* The ray tracer's shape: camera (forward) and shade (backward) both produce `rays`. */
static void test_dot_backward_per_binding(void)
{
    gr_graph *g = gr_graph_create();
    int rays = gr_queue(g, &(gr_queue_desc){.name = "rays", .packet_bytes = 8, .capacity = 4});
    int out = gr_queue(g, &(gr_queue_desc){.name = "out", .packet_bytes = 8, .capacity = 4});
    int cam = gr_stage(g, &(gr_stage_desc){.name = "camera", .kind = GR_THREAD, .main = gen_rays});
    int sh = gr_stage(g, &(gr_stage_desc){.name = "shade", .kind = GR_SHADER, .main = bounce});
    int bl = gr_stage(g, &(gr_stage_desc){.name = "blend", .kind = GR_THREAD, .main = drain});
    gr_bind(g, cam, GR_BIND_OUTPUT, rays);
    gr_bind(g, sh, GR_BIND_INPUT, rays);
    gr_bind(g, sh, GR_BIND_OUTPUT, rays);
    gr_bind(g, sh, GR_BIND_OUTPUT, out);
    gr_bind(g, bl, GR_BIND_INPUT, out);
    CHECK(run(g, 1, false) == GR_OK);
    char *dot = written(gr_graph_dot, g);
    char cam_edge[32], back_edge[32];
    snprintf(cam_edge, sizeof cam_edge, "s%d -> s%d ", cam, sh);
    snprintf(back_edge, sizeof back_edge, "s%d -> s%d ", sh, sh);
    const char *c = dot ? strstr(dot, cam_edge) : NULL, *b = dot ? strstr(dot, back_edge) : NULL;
    CHECK_MSG(c && !line_has(c, "dashed"), "camera's forward binding drawn backward:\n%s", dot);
    CHECK(b && line_has(b, "dashed"));
    free(dot);
    gr_graph_destroy(g);
}


/* ---- serial share ------------------------------------------------------------------------ */

#define SHARE_PACKETS 8
#define SHARE_KEYS 4
typedef struct share_params {
    uint32_t source_ms, work_ms;
    bool replicated_source;        /* the source marked as one of a replicated stage's copies */
} share_params;

/* The source (a Thread singleton) spins source_ms, then deals SHARE_PACKETS packets over
 * the queue set's SHARE_KEYS subqueues. */
static void share_source(gr_ctx *c)
{
    share_params *p = gr_user(c);
    spin_ms(p->source_ms);
    gr_window w;
    for (uint32_t i = 0; i < SHARE_PACKETS; i++) {
        gr_reserve_out(c, 0, 1, &w);
        *(uint64_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void share_shader(gr_ctx *c)
{
    share_params *p = gr_user(c);
    uint64_t i = *(const uint64_t *)gr_input(c, NULL);
    *(uint64_t *)gr_output(c, 0) = i;
    gr_output_key(c, 0, i % SHARE_KEYS);
    spin_ms(p->work_ms);
}

static void share_sink(gr_ctx *c)
{
    share_params *p = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        spin_ms(p->work_ms);
        gr_commit(c, 0, 1);
    }
}

/* source (Thread) -> work (Shader) -> sink (Thread instanced per subqueue). */
static gr_graph *share_graph(share_params *p)
{
    gr_graph *g = gr_graph_create();
    int a = gr_queue(g, &(gr_queue_desc){.name = "a", .packet_bytes = 8, .capacity = 4});
    int b = gr_queue(g, &(gr_queue_desc){.name = "b", .packet_bytes = 8, .capacity = 4,
                                         .subqueues = SHARE_KEYS});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD,
                                           .main = share_source, .user = p,
                                           .replicated = p->replicated_source});
    int sh = gr_stage(g, &(gr_stage_desc){.name = "work", .kind = GR_SHADER,
                                          .main = share_shader, .user = p});
    int sk = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = share_sink,
                                          .user = p, .instanced = true});
    gr_bind(g, src, GR_BIND_OUTPUT, a);
    gr_bind(g, sh, GR_BIND_INPUT, a);
    gr_bind(g, sh, GR_BIND_OUTPUT, b);
    gr_bind(g, sk, GR_BIND_INPUT, b);
    return g;
}

/* Runs the graph; checks which stages are singletons and that serial_share is their
 * share of the stages' busy time, in [0, 1]; returns it (-1 when the run failed). */
static double measured_share(share_params *p)
{
    gr_graph *g = share_graph(p);
    double share = -1;
    const gr_stats *st = run(g, 2, false) == GR_OK ? gr_get_stats(g) : NULL;
    CHECK(st != NULL);
    if (st) {
        double all = 0, serial = 0;
        for (int i = 0; i < st->nstages; i++) {
            all += st->stages[i].busy_ms;
            if (st->stages[i].singleton) serial += st->stages[i].busy_ms;
        }
        CHECK(st->stages[0].singleton == !p->replicated_source);  /* source: one Thread instance */
        CHECK(!st->stages[1].singleton);                     /* a Shader never is */
        CHECK_MSG(!st->stages[2].singleton && st->stages[2].instances == SHARE_KEYS,
                  "sink: %llu instances", (unsigned long long)st->stages[2].instances);
        CHECK(st->serial_share >= 0 && st->serial_share <= 1);
        CHECK(all > 0 && st->serial_share > serial / all - 1e-9 && st->serial_share < serial / all + 1e-9);
        char *json = written(gr_stats_write_json, g);
        CHECK(json && json_valid(json) && strstr(json, "\"serial_share\": ") &&
              strstr(json, "\"amdahl_bound_16\": ") && strstr(json, "\"singleton\": ") &&
              strstr(json, "\"replicated\": "));
        free(json);
        share = st->serial_share;
    }
    gr_graph_destroy(g);
    return share;
}

/* The serial share is the singletons' share of the work: near 1 when the singleton
 * does the work (it spins 40 ms, the rest nothing), near 0 when the parallel stages do
 * (16 x 5 ms of spinning against a source that only deals 8 packets), 0 when the
 * source doing the work is one of a replicated stage's copies. */
static void test_serial_share(void)
{
    double serial = measured_share(&(share_params){.source_ms = 40, .work_ms = 0});
    double parallel = measured_share(&(share_params){.source_ms = 0, .work_ms = 5});
    double copies = measured_share(&(share_params){.source_ms = 40, .work_ms = 0,
                                                   .replicated_source = true});
    CHECK_MSG(serial > 0.5, "singleton doing the work: serial share %.3f", serial);
    CHECK_MSG(parallel >= 0 && parallel < 0.1, "parallel stages doing it: %.3f", parallel);
    CHECK_MSG(copies == 0, "a replicated stage's copy doing it: %.3f (not serial)", copies);
}

/* Amdahl's bound: no serial work scales with the workers, all serial work not at all. */
static void test_amdahl_bound(void)
{
    CHECK(gr_amdahl_bound(0, 16) == 16 && gr_amdahl_bound(1, 64) == 1);
    double b = gr_amdahl_bound(0.1, 16);
    CHECK_MSG(b > 6.39 && b < 6.41, "s = 0.1, 16 workers: %.3f", b);
    b = gr_amdahl_bound(0.05, 16);
    CHECK_MSG(b > 9.14 && b < 9.15, "s = 0.05, 16 workers: %.3f", b);
}

int main(void)
{
    RUN(test_packets_through_chain_end);
    RUN(test_inplace_chain_footprint_once);
    RUN(test_journal_depths);
    RUN(test_short_run_sampled);
    RUN(test_json_escapes_names);
    RUN(test_dot_escapes_names);
    RUN(test_journal_slices);
    RUN(test_dot_backward_per_binding);
    RUN(test_serial_share);
    RUN(test_amdahl_bound);
    return check_finish();
}

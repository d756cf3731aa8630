/* Nothing is lost without a word: packets a consumer leaves behind, an output into a
 * queue set with no key to go by, a Collection count beyond its packet, a Thread stage
 * returning with a window open, and a write into a read-only buffer each fail the run
 * (or fault) naming the stage and the queue or buffer, where they used to pass
 * silently or end as an anonymous deadlock. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static bool error_mentions(gr_graph *g, const char *what)
{
    bool ok = strstr(gr_error(g), what) != NULL;
    if (!ok) fprintf(stderr, "  error was: %s\n", gr_error(g));
    return ok;
}

/* Short deadlock timeout: the old runtime ended some of these cases in a deadlock. */
static gr_status run(gr_graph *g)
{
    gr_launch_opts o = {.workers = 2, .deadlock_seconds = 0.5};
    gr_status st = gr_launch(g, &o, NULL, 0);
    return st != GR_OK ? st : gr_wait(g);
}

static int thread(gr_graph *g, const char *name, gr_stage_fn fn, bool instanced)
{
    return gr_stage(g, &(gr_stage_desc){.name = name, .kind = GR_THREAD, .main = fn,
                                        .instanced = instanced});
}

static int shader(gr_graph *g, const char *name, gr_stage_fn fn)
{
    return gr_stage(g, &(gr_stage_desc){.name = name, .kind = GR_SHADER, .main = fn});
}

static int plain(gr_graph *g, const char *name, uint32_t subqueues)
{
    return gr_queue(g, &(gr_queue_desc){.name = name, .packet_bytes = 8, .subqueues = subqueues});
}

static int collection(gr_graph *g, const char *name, uint32_t subqueues)
{
    return gr_queue(g, &(gr_queue_desc){.name = name, .kind = GR_COLLECTION, .header_bytes = 4,
                                        .element_bytes = 4, .elements = 4,
                                        .subqueues = subqueues});
}

/* One packet holding `key` to output `out`, tagged with the key if `keyed`. */
static void emit(gr_ctx *c, int out, uint64_t key, bool keyed)
{
    gr_window w;
    if (keyed) gr_reserve_out_key(c, out, 1, key, &w);
    else gr_reserve_out(c, out, 1, &w);
    memcpy(w.mem, &key, sizeof key);
    gr_commit_out(c, out, 1);
}

static void produce_10(gr_ctx *c)
{
    for (uint64_t i = 0; i < 10; i++) emit(c, 0, i, false);
}

static void produce_10_twice(gr_ctx *c)
{
    for (uint64_t i = 0; i < 10; i++) { emit(c, 0, i, false); emit(c, 1, i, false); }
}

/* 4 packets for each of keys 0-3 (a queue set's subqueues, or tags on a plain queue). */
static void produce_keyed(gr_ctx *c)
{
    for (uint64_t i = 0; i < 16; i++) emit(c, 0, i % 4, true);
}

static void drain_all(gr_ctx *c)
{
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) gr_commit(c, 0, 1);
}

static void take_one(gr_ctx *c)
{
    gr_window w;
    if (gr_reserve(c, 0, 1, &w) == GR_OK) gr_commit(c, 0, 1);
}

static void return_at_once(gr_ctx *c) { (void)c; }

static void copy_through(gr_ctx *c)
{
    memcpy(gr_output(c, 0), gr_input(c, NULL), 8);
}

/* ---- 1. a consumer that leaves packets behind --------------------------------------- */

static gr_status run_pair(gr_stage_fn prod, gr_stage_fn cons, bool set, gr_graph **out)
{
    gr_graph *g = gr_graph_create();
    int q = plain(g, "data", set ? 4 : 0);
    int p = thread(g, "producer", prod, false);
    int k = thread(g, "early", cons, set);
    gr_bind(g, p, GR_BIND_OUTPUT, q);
    gr_bind(g, k, GR_BIND_INPUT, q);
    *out = g;
    return run(g);
}

/* Whether the consumer returns before or after the producer's last commit, the run
 * fails naming both: at its return, or at the commit that finds it gone. */
static void test_consumer_leaves_packets(void)
{
    gr_graph *g;
    CHECK(run_pair(produce_10, take_one, false, &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'early' finished with") &&
          error_mentions(g, "packets left in its input queue 'data'"));
    gr_graph_destroy(g);
    CHECK(run_pair(produce_10, return_at_once, false, &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'early' finished with"));
    gr_graph_destroy(g);
    CHECK(run_pair(produce_10, drain_all, false, &g) == GR_OK);
    gr_graph_destroy(g);
}

/* Instanced: each instance answers for its own subqueue. */
static void test_instance_leaves_packets(void)
{
    gr_graph *g;
    CHECK(run_pair(produce_keyed, take_one, true, &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'early' finished with") &&
          error_mentions(g, "queue 'data' (subqueue"));
    gr_graph_destroy(g);
    CHECK(run_pair(produce_keyed, drain_all, true, &g) == GR_OK);
    gr_graph_destroy(g);
}

/* Every input binding counts, not only the one the stage waited on. */
static void test_unread_second_input(void)
{
    gr_graph *g = gr_graph_create();
    int a = plain(g, "first", 0), b = plain(g, "second", 0);
    int p = thread(g, "producer", produce_10_twice, false);
    int k = thread(g, "one-sided", drain_all, false);   /* input 0 only */
    gr_bind(g, p, GR_BIND_OUTPUT, a);
    gr_bind(g, p, GR_BIND_OUTPUT, b);
    gr_bind(g, k, GR_BIND_INPUT, a);
    gr_bind(g, k, GR_BIND_INPUT, b);
    CHECK(run(g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'one-sided' finished with") &&
          error_mentions(g, "queue 'second'"));
    gr_graph_destroy(g);
}

/* A Shader's output reaching a consumer that already returned is reported at its
 * commit (the Shader-fed queue in front cannot hold anything back: every packet there
 * is a task that runs). */
static void test_shader_output_after_consumer(void)
{
    gr_graph *g = gr_graph_create();
    int a = plain(g, "in", 0), b = plain(g, "out", 0);
    int p = thread(g, "producer", produce_10, false);
    int s = shader(g, "copy", copy_through);
    int k = thread(g, "gone", return_at_once, false);
    gr_bind(g, p, GR_BIND_OUTPUT, a);
    gr_bind(g, s, GR_BIND_INPUT, a);
    gr_bind(g, s, GR_BIND_OUTPUT, b);
    gr_bind(g, k, GR_BIND_INPUT, b);
    CHECK(run(g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'gone' finished with") && error_mentions(g, "'out'"));
    gr_graph_destroy(g);
}

/* ---- 2. outputs into a queue set without a key -------------------------------------- */

static void push_no_key(gr_ctx *c)
{
    uint32_t v;
    memcpy(&v, gr_input(c, NULL), sizeof v);
    gr_push(c, 0, &v);
}

/* Instanced consumer: every value it reads must equal its key (the producer wrote the
 * key it tagged the packet with). */
static void check_key(gr_ctx *c)
{
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        uint64_t v;
        memcpy(&v, w.mem, sizeof v);
        gr_assert(c, v == gr_key(c));
        gr_commit(c, 0, 1);
    }
}

static void check_pushed_key(gr_ctx *c)
{
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        uint32_t *p = w.mem;
        for (uint32_t i = 0; i < p[0]; i++) gr_assert(c, p[1 + i] == gr_key(c));
        gr_commit(c, 0, 1);
    }
}

/* Thread -> plain queue -> Shader -> queue set -> instanced Thread; keyed: whether the
 * Thread tags its packets with gr_reserve_out_key. */
static gr_status run_into_set(gr_stage_fn sh, bool push, bool keyed, gr_graph **out)
{
    gr_graph *g = gr_graph_create();
    int a = plain(g, "in", 0);
    int b = push ? collection(g, "set", 4) : plain(g, "set", 4);
    int p = thread(g, "producer", keyed ? produce_keyed : produce_10, false);
    int s = shader(g, "router", sh);
    int k = thread(g, "per-key", push ? check_pushed_key : check_key, true);
    gr_bind(g, p, GR_BIND_OUTPUT, a);
    gr_bind(g, s, GR_BIND_INPUT, a);
    gr_bind(g, s, push ? GR_BIND_PUSH : GR_BIND_OUTPUT, b);
    gr_bind(g, k, GR_BIND_INPUT, b);
    *out = g;
    return run(g);
}

static void test_set_output_needs_key(void)
{
    gr_graph *g;
    CHECK(run_into_set(copy_through, false, false, &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'router': gr_output into queue set 'set' without a key"));
    gr_graph_destroy(g);
    CHECK(run_into_set(push_no_key, true, false, &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'router': gr_push into queue set 'set' without a key"));
    gr_graph_destroy(g);
}

/* The allowed side: a keyed input packet's key is inherited (output and push). */
static void test_set_output_inherits_key(void)
{
    gr_graph *g;
    CHECK(run_into_set(copy_through, false, true, &g) == GR_OK);
    if (gr_get_stats(g)) CHECK(gr_get_stats(g)->queues[1].subqueues == 4);
    gr_graph_destroy(g);
    CHECK(run_into_set(push_no_key, true, true, &g) == GR_OK);
    gr_graph_destroy(g);
}

static void forward(gr_ctx *c) { (void)c; }

/* Thread -> ordered queue -> in-place Shader -> ordered queue set (the raster graph's
 * Rast -> PS -> tiles): the chain's slot is taken when the Thread commits, so the
 * Thread must give the key. */
static gr_status run_chain(gr_stage_fn prod, gr_graph **out)
{
    gr_graph *g = gr_graph_create();
    int a = gr_queue(g, &(gr_queue_desc){.name = "frags", .packet_bytes = 8, .ordered = true});
    int b = gr_queue(g, &(gr_queue_desc){.name = "tiles", .packet_bytes = 8, .ordered = true,
                                         .subqueues = 4});
    int p = thread(g, "rast", prod, false);
    int s = shader(g, "ps", forward);
    int k = thread(g, "om", check_key, true);
    gr_bind(g, p, GR_BIND_OUTPUT, a);
    gr_bind(g, s, GR_BIND_INPUT, a);
    gr_bind(g, s, GR_BIND_INPLACE, b);
    gr_bind(g, k, GR_BIND_INPUT, b);
    *out = g;
    return run(g);
}

static void test_chain_into_set_needs_key(void)
{
    gr_graph *g;
    CHECK(run_chain(produce_10, &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'rast': output 'frags' is an ordered chain ending in "
                            "queue set 'tiles'; use gr_reserve_out_key"));
    gr_graph_destroy(g);
    CHECK(run_chain(produce_keyed, &g) == GR_OK);
    gr_graph_destroy(g);
}

/* ---- 3. a Collection count beyond its packet ---------------------------------------- */

static void commit_overfull(gr_ctx *c)
{
    gr_window w;
    gr_reserve_out(c, 0, 1, &w);
    gr_set_count(w.mem, 5);               /* the queue's packets hold 4 elements */
    gr_commit_out(c, 0, 1);
}

static void output_overfull(gr_ctx *c) { gr_set_count(gr_output(c, 0), 99); }

static void test_count_beyond_packet(void)
{
    gr_graph *g = gr_graph_create();
    int q = collection(g, "coll", 0);
    int p = thread(g, "overfill", commit_overfull, false);
    int k = thread(g, "sink", drain_all, false);
    gr_bind(g, p, GR_BIND_OUTPUT, q);
    gr_bind(g, k, GR_BIND_INPUT, q);
    CHECK(run(g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'overfill' committed a Collection packet with count 5 to "
                            "queue 'coll', whose packets hold at most 4 elements"));
    gr_graph_destroy(g);

    g = gr_graph_create();
    int a = plain(g, "in", 0);
    q = collection(g, "coll", 0);
    p = thread(g, "producer", produce_10, false);
    int s = shader(g, "shade", output_overfull);
    k = thread(g, "sink", drain_all, false);
    gr_bind(g, p, GR_BIND_OUTPUT, a);
    gr_bind(g, s, GR_BIND_INPUT, a);
    gr_bind(g, s, GR_BIND_OUTPUT, q);
    gr_bind(g, k, GR_BIND_INPUT, q);
    CHECK(run(g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'shade' committed a Collection packet with count 99 to "
                            "queue 'coll'"));
    gr_graph_destroy(g);
}

/* ---- 4. returning with a reservation open ------------------------------------------- */

static void hold_output(gr_ctx *c)
{
    gr_window w;
    gr_reserve_out(c, 0, 2, &w);
}

static void hold_input(gr_ctx *c)
{
    gr_window w;
    gr_reserve(c, 0, 3, &w);
}

static void test_return_with_reservation(void)
{
    gr_graph *g;
    CHECK(run_pair(hold_output, drain_all, false, &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'producer' returned holding a reservation of 2 packets on "
                            "its output queue 'data'"));
    gr_graph_destroy(g);
    CHECK(run_pair(produce_10, hold_input, false, &g) == GR_ERR_INVALID);
    CHECK(error_mentions(g, "stage 'early' returned holding a reservation of 3 packets on its "
                            "input queue 'data'"));
    gr_graph_destroy(g);
}

/* ---- 5. read-only buffers ------------------------------------------------------------ */

static void write_buffer(gr_ctx *c)
{
    size_t n;
    volatile char *b = gr_buf(c, 0, &n);
    b[n - 1] = 1;
}

static void on_segv(int sig)
{
    (void)sig;
    _exit(42);
}

/* In a child: runs one stage that writes to a buffer of `bytes`, then writes it from the
 * host. Exit 42: the stage's write faulted; 0: everything was written. */
static void child_writes(bool writable, size_t bytes)
{
    signal(SIGSEGV, on_segv);
    gr_graph *g = gr_graph_create();
    int buf = gr_buffer(g, "table", bytes, NULL, writable);
    int s = thread(g, "writer", write_buffer, false);
    gr_bind_buffer(g, s, buf);
    gr_status st = run(g);
    char *host = gr_buffer_data(g, buf);
    host[0] = 2;                          /* the host may write again after gr_wait */
    bool ok = st == GR_OK && host[bytes - 1] == 1;
    gr_graph_destroy(g);
    _exit(ok ? 0 : 1);
}

static int exit_code_of(bool writable, size_t bytes)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) child_writes(writable, bytes);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

static void test_read_only_buffer(void)
{
    CHECK(exit_code_of(false, 100) == 42);
    CHECK(exit_code_of(false, 3 * 4096 + 5) == 42);
    CHECK(exit_code_of(true, 100) == 0);
}

int main(void)
{
    RUN(test_consumer_leaves_packets);
    RUN(test_instance_leaves_packets);
    RUN(test_unread_second_input);
    RUN(test_shader_output_after_consumer);
    RUN(test_set_output_needs_key);
    RUN(test_set_output_inherits_key);
    RUN(test_chain_into_set_needs_key);
    RUN(test_count_beyond_packet);
    RUN(test_return_with_reservation);
    RUN(test_read_only_buffer);
    return check_finish();
}

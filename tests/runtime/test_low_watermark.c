/* Per-stage low watermarks (gr_stage_desc.low_watermark, thesis §5.4.1) under the GRAMPS
 * policy, observed on one worker, where the order of tasks is deterministic:
 * - a Shader stage runs up to its watermark of its own tasks in a row before the
 *   higher-priority stage it feeds (0 or 1: strictly by priority, task by task);
 * - a Thread stage is preempted once its worker's higher-priority local tasks reach the
 *   stage's own watermark, not the run's. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdlib.h>
#include <string.h>

#define BURST 16                      /* packets the source commits at once */
#define N 256                         /* packets the counting source sends one by one */

typedef struct order_log { char ran[2 * BURST + 1]; int len; } order_log;

/* Thread: BURST packets in one commit, so every one of them is a task of the next
 * stage before any runs (even when torture builds preempt at every commit). */
static void burst_src(gr_ctx *c)
{
    gr_window w;
    if (gr_reserve_out(c, 0, BURST, &w) != GR_OK) return;
    memset(w.mem, 0, (size_t)BURST * 4);
    gr_commit_out(c, 0, BURST);
}

static void log_task(gr_ctx *c, char what)
{
    order_log *l = gr_user(c);
    if (l->len < 2 * BURST) l->ran[l->len++] = what;
}

static void first_shader(gr_ctx *c)
{
    log_task(c, 'a');
    *(uint32_t *)gr_output(c, 0) = *(const uint32_t *)gr_input(c, NULL);
}

static void second_shader(gr_ctx *c)
{
    (void)gr_input(c, NULL);
    log_task(c, 'b');
}

/* src -> a -> b (b, downstream, has the higher priority); a's watermark as given. */
static void run_chain(uint32_t a_watermark, order_log *l)
{
    memset(l, 0, sizeof *l);
    gr_graph *g = gr_graph_create();
    int q0 = gr_queue(g, &(gr_queue_desc){.name = "to-a", .packet_bytes = 4, .capacity = BURST});
    int q1 = gr_queue(g, &(gr_queue_desc){.name = "to-b", .packet_bytes = 4, .capacity = BURST});
    int src = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = burst_src});
    int a = gr_stage(g, &(gr_stage_desc){.name = "a", .kind = GR_SHADER, .main = first_shader,
                                         .user = l, .low_watermark = a_watermark});
    int b = gr_stage(g, &(gr_stage_desc){.name = "b", .kind = GR_SHADER, .main = second_shader,
                                         .user = l});
    gr_bind(g, src, GR_BIND_OUTPUT, q0);
    gr_bind(g, a, GR_BIND_INPUT, q0);
    gr_bind(g, a, GR_BIND_OUTPUT, q1);
    gr_bind(g, b, GR_BIND_INPUT, q1);
    gr_launch_opts o = {.workers = 1, .scheduler = "gramps"};
    gr_status st = gr_launch(g, &o, &src, 1);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s", gr_error(g));
    gr_graph_destroy(g);
}

static void test_shader_runs_up_to_its_watermark(void)
{
    order_log l;
    run_chain(1, &l);
    CHECK_MSG(!strcmp(l.ran, "abababababababababababababababab"), "watermark 1: %s", l.ran);
    run_chain(4, &l);
    CHECK_MSG(!strcmp(l.ran, "aaaabbbbaaaabbbbaaaabbbbaaaabbbb"), "watermark 4: %s", l.ran);
    run_chain(BURST, &l);
    CHECK_MSG(!strcmp(l.ran, "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb"), "watermark 16: %s", l.ran);
    run_chain(0, &l);                 /* a Shader's default: by priority */
    CHECK_MSG(!strcmp(l.ran, "abababababababababababababababab"), "default: %s", l.ran);
}

/* Thread: N packets, one commit each. */
static void counting_src(gr_ctx *c)
{
    for (uint32_t i = 0; i < N; i++) {
        gr_window w;
        if (gr_reserve_out(c, 0, 1, &w) != GR_OK) return;
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void drain(gr_ctx *c) { (void)gr_input(c, NULL); }

/* How often the source was preempted with the given watermarks (0: the default). */
static uint64_t source_preemptions(uint32_t stage_watermark, uint32_t run_watermark)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "numbers", .packet_bytes = 4, .capacity = N});
    int src = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = counting_src,
                                           .low_watermark = stage_watermark});
    int d = gr_stage(g, &(gr_stage_desc){.name = "drain", .kind = GR_SHADER, .main = drain});
    gr_bind(g, src, GR_BIND_OUTPUT, q);
    gr_bind(g, d, GR_BIND_INPUT, q);
    gr_launch_opts o = {.workers = 1, .scheduler = "gramps", .low_watermark = run_watermark};
    gr_status st = gr_launch(g, &o, &src, 1);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s", gr_error(g));
    const gr_stats *s = gr_get_stats(g);
    uint64_t n = s ? s->stages[src].preemptions : 0;
    gr_graph_destroy(g);
    return n;
}

static void test_thread_stage_uses_its_own_watermark(void)
{
    const char *torture = getenv("GRAMPS_TORTURE");
    if (torture && strcmp(torture, "0")) SKIP("torture builds preempt at every commit");
    uint64_t run_default = source_preemptions(0, 0);   /* 32 on one worker */
    uint64_t own_4 = source_preemptions(4, 0);
    uint64_t own_over_run = source_preemptions(4, 128);
    uint64_t run_128 = source_preemptions(0, 128);
    CHECK_MSG(run_default >= N / 32 - 1 && run_default <= N / 32 + 1, "default: %llu",
              (unsigned long long)run_default);
    CHECK_MSG(own_4 >= N / 4 - 1 && own_4 <= N / 4 + 1, "stage watermark 4: %llu",
              (unsigned long long)own_4);
    CHECK_MSG(own_over_run == own_4, "stage 4 under run 128: %llu", (unsigned long long)own_over_run);
    CHECK_MSG(run_128 <= N / 128 + 1, "run watermark 128: %llu", (unsigned long long)run_128);
}

int main(void)
{
    RUN(test_shader_runs_up_to_its_watermark);
    RUN(test_thread_stage_uses_its_own_watermark);
    return check_finish();
}

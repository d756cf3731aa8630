/* gr_state_touched (simulate.c): a Thread instance whose stage says what of its declared
 * state it touches pays, when it resumes on another worker, for the lines it touches
 * there, not for all of its state. Checked by structure (the statistics' state moves and
 * lines moved between cores), never by time: under Task-Stealing at 4 virtual workers a
 * stateful Thread stage is preempted at each packet it commits and its continuation
 * stolen, once with a stage that declares 64 bytes touched per packet and once with one
 * that declares nothing (its whole 1 MiB moves each time, as before). */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdint.h>

#define PACKETS 400
#define STATE (1u << 20)
#define TOUCHED 64

static void source(gr_ctx *c)
{
    gr_window w;
    for (uint32_t i = 0; i < PACKETS; i++) {
        for (volatile int k = 0; k < 2000; k++) {}
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

/* keeps STATE bytes; per packet touches TOUCHED of them, and says so when told to */
static void keeper(gr_ctx *c)
{
    const bool says = gr_user(c) != NULL;
    gr_state_bytes(c, STATE);
    gr_window in, out;
    while (gr_reserve(c, 0, 1, &in) == GR_OK) {
        for (volatile int k = 0; k < 2000; k++) {}
        if (says) gr_state_touched(c, TOUCHED);
        gr_reserve_out(c, 0, 1, &out);
        *(uint32_t *)out.mem = *(const uint32_t *)in.mem;
        gr_commit_out(c, 0, 1);
        gr_commit(c, 0, 1);
    }
}

static void drain(gr_ctx *c) { (void)gr_input(c, NULL); }

typedef struct moved { uint64_t moves, lines; } moved;

/* source -> keeper -> drain under Task-Stealing on 4 virtual workers; the keeper says
 * what it touches when `says`. */
static moved run(bool says)
{
    gr_graph *g = gr_graph_create();
    int q0 = gr_queue(g, &(gr_queue_desc){.name = "in", .packet_bytes = 4, .capacity = 8});
    int q1 = gr_queue(g, &(gr_queue_desc){.name = "out", .packet_bytes = 4, .capacity = 8});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = source});
    int kp = gr_stage(g, &(gr_stage_desc){.name = "keeper", .kind = GR_THREAD, .main = keeper,
                                          .user = says ? (void *)g : NULL});
    int dr = gr_stage(g, &(gr_stage_desc){.name = "drain", .kind = GR_SHADER, .main = drain});
    gr_bind(g, src, GR_BIND_OUTPUT, q0);
    gr_bind(g, kp, GR_BIND_INPUT, q0);
    gr_bind(g, kp, GR_BIND_OUTPUT, q1);
    gr_bind(g, dr, GR_BIND_INPUT, q1);
    gr_launch_opts o = {.scheduler = "task-stealing", .simulate = 4, .stack_bytes = 64 * 1024};
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s", gr_error(g));
    moved m = {0, 0};
    const gr_stats *s = gr_get_stats(g);
    for (unsigned i = 0; s && i < s->workers; i++) {
        m.moves += s->per_worker[i].state_moves;
        m.lines += s->per_worker[i].remote_lines;
    }
    gr_graph_destroy(g);
    return m;
}

static void test_touched_lines_instead_of_all(void)
{
    const moved all = run(false), touched = run(true);
    /* the control: moves happen, and each brings the whole state */
    CHECK_MSG(all.moves > 0 && all.lines >= all.moves * (STATE / 64),
              "silent keeper: %llu moves, %llu lines", (unsigned long long)all.moves,
              (unsigned long long)all.lines);
    /* a move now brings what is touched after it: a line a packet, plus the packets
     * read on another worker (a few lines each), and the whole state once at most (a
     * move before the stage's first gr_state_touched is charged as before) */
    CHECK_MSG(touched.moves > 0 &&
              touched.lines < STATE / 64 + touched.moves * 64 + PACKETS * 8,
              "keeper saying %u bytes a packet: %llu moves, %llu lines", TOUCHED,
              (unsigned long long)touched.moves, (unsigned long long)touched.lines);
}

int main(void)
{
    RUN(test_touched_lines_instead_of_all);
    return check_finish();
}

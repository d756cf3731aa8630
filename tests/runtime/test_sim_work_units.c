/* A stage's declared units of work (gr_work_units), the measure a simulated run's
 * calibration charges per (gramps/simulate.c): a stage that declares them is counted in
 * its units, whatever packets carry them, so partly filled packets (as at many workers)
 * do not change its cost per unit; a stage that does not is counted per packet (Thread)
 * or per task (Shader). Checked by structure, on a 1-virtual-worker run's profile (the
 * calibration's own), never by time: the same 1,200 elements in packets of 4 and of 12. */
#include "gramps/gramps.h"
#include "gramps/profile.h"
#include "tests/check.h"

#include <stdint.h>
#include <string.h>

#define ELEMENTS 1200

typedef struct part {
    uint32_t count;                       /* elements in this packet, as binned_pkt's */
    uint32_t value[12];
} part;

typedef struct setup {
    uint32_t per_packet;                  /* the source's fill */
    bool declare;                         /* the consumers call gr_work_units */
} setup;

static void source(gr_ctx *c)
{
    const setup *s = gr_user(c);
    gr_window w;
    for (uint32_t done = 0; done < ELEMENTS; done += s->per_packet) {
        gr_reserve_out(c, 0, 1, &w);
        part *p = w.mem;
        p->count = s->per_packet;
        for (uint32_t i = 0; i < p->count; i++) p->value[i] = done + i;
        gr_commit_out(c, 0, 1);
    }
}

/* A Thread consumer, as tile-shade: declares each packet's elements after reserving it. */
static void sink(gr_ctx *c)
{
    const setup *s = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        if (s->declare) gr_work_units(c, ((const part *)w.mem)->count);
        gr_commit(c, 0, 1);
    }
}

static void shader(gr_ctx *c)
{
    const setup *s = gr_user(c);
    if (s->declare) gr_work_units(c, ((const part *)gr_input(c, NULL))->count);
}

static double units_of(const gr_profile *p, const char *stage)
{
    for (int i = 0; i < p->nstages; i++)
        if (!strcmp(p->stage_names[i], stage)) return p->stage_units[i];
    return -1;
}

/* source -> sink (Thread) and source -> shader, one profiled run at `simulate` virtual
 * workers: the two consumers' units. */
static void run(setup s, unsigned simulate, double *sink_units, double *shader_units)
{
    gr_graph *g = gr_graph_create();
    int a = gr_queue(g, &(gr_queue_desc){.name = "a", .packet_bytes = sizeof(part), .capacity = 32});
    int b = gr_queue(g, &(gr_queue_desc){.name = "b", .packet_bytes = sizeof(part), .capacity = 32});
    int src1 = gr_stage(g, &(gr_stage_desc){.name = "source-a", .kind = GR_THREAD, .main = source,
                                            .user = &s});
    int src2 = gr_stage(g, &(gr_stage_desc){.name = "source-b", .kind = GR_THREAD, .main = source,
                                            .user = &s});
    int snk = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = sink,
                                           .user = &s});
    int sh = gr_stage(g, &(gr_stage_desc){.name = "shader", .kind = GR_SHADER, .main = shader,
                                          .user = &s});
    gr_bind(g, src1, GR_BIND_OUTPUT, a);
    gr_bind(g, snk, GR_BIND_INPUT, a);
    gr_bind(g, src2, GR_BIND_OUTPUT, b);
    gr_bind(g, sh, GR_BIND_INPUT, b);
    gr_launch_opts o = {.simulate = simulate, .workers = simulate ? 0 : 2,
                        .stack_bytes = 64 * 1024, .deadlock_seconds = 30};
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s", gr_error(g));
    *sink_units = *shader_units = -1;
    gr_profile *p = st == GR_OK ? gr_profile_take(g) : NULL;
    if (p && p->stage_units) {
        *sink_units = units_of(p, "sink");
        *shader_units = units_of(p, "shader");
    }
    gr_profile_free(p);
    gr_graph_destroy(g);
}

static void test_declared_units_follow_elements(void)
{
    double sink4, shader4, sink12, shader12;
    run((setup){4, true}, 1, &sink4, &shader4);
    run((setup){12, true}, 1, &sink12, &shader12);
    CHECK_MSG(sink4 == ELEMENTS && sink12 == ELEMENTS, "Thread: %.0f and %.0f units",
              sink4, sink12);
    CHECK_MSG(shader4 == ELEMENTS && shader12 == ELEMENTS, "Shader: %.0f and %.0f units",
              shader4, shader12);
}

/* Without the declaration: a Thread stage's packets, a Shader's tasks. */
static void test_undeclared_units_are_packets(void)
{
    double sink4, shader4, sink12, shader12;
    run((setup){4, false}, 1, &sink4, &shader4);
    run((setup){12, false}, 1, &sink12, &shader12);
    CHECK_MSG(sink4 == ELEMENTS / 4 && sink12 == ELEMENTS / 12, "Thread: %.0f and %.0f units",
              sink4, sink12);
    CHECK_MSG(shader4 == ELEMENTS / 4 && shader12 == ELEMENTS / 12, "Shader: %.0f and %.0f",
              shader4, shader12);
}

/* A real run's profile counts no units; at 8 virtual workers the declared units are
 * those of 1. */
static void test_real_run_and_many_workers(void)
{
    double sink, shader;
    run((setup){4, true}, 0, &sink, &shader);
    CHECK(sink == -1 && shader == -1);
    run((setup){4, true}, 8, &sink, &shader);
    CHECK_MSG(sink == ELEMENTS && shader == ELEMENTS, "8 workers: %.0f and %.0f", sink, shader);
}

int main(void)
{
    RUN(test_declared_units_follow_elements);
    RUN(test_undeclared_units_are_packets);
    RUN(test_real_run_and_many_workers);
    return check_finish();
}

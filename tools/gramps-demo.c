/* gramps-demo — runs a small GRAMPS graph and prints its statistics as JSON.
 *
 *   generate (Thread) -> numbers -> square (Shader, push) -> squares -> sum (Thread)
 *
 * Usage: gramps-demo [-t THREADS] [-n PACKETS]. It checks the sum of squares it computes
 * against the closed form and exits nonzero if they differ. */
#include "gramps/gramps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEMS 32
typedef struct nums { uint32_t count; uint32_t v[ELEMS]; } nums;
typedef struct demo { uint32_t packets; unsigned long long sum; } demo;

static void generate(gr_ctx *c)
{
    demo *d = gr_user(c);
    for (uint32_t i = 0; i < d->packets; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        nums *n = w.mem;
        n->count = ELEMS;
        for (uint32_t k = 0; k < ELEMS; k++) n->v[k] = i * ELEMS + k;
        gr_commit_out(c, 0, 1);
    }
}

static void square(gr_ctx *c)
{
    nums *in = gr_input(c, NULL);
    for (uint32_t k = 0; k < in->count; k++) {
        uint32_t s = (in->v[k] % 1000) * (in->v[k] % 1000);
        gr_push(c, 0, &s);
    }
}

static void sum(gr_ctx *c)
{
    demo *d = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        nums *n = w.mem;
        for (uint32_t k = 0; k < n->count; k++) d->sum += n->v[k];
        gr_commit(c, 0, 1);
    }
}

static int usage(const char *msg)
{
    fprintf(stderr, "gramps-demo: %s\nusage: gramps-demo [-t THREADS] [-n PACKETS]\n", msg);
    return 2;
}

int main(int argc, char **argv)
{
    demo d = {.packets = 20000};
    gr_launch_opts o = {0};
    for (int i = 1; i < argc; i++) {
        char *end;
        if (i + 1 >= argc) return usage("missing value after an option");
        long v = strtol(argv[i + 1], &end, 10);
        if (*end || v <= 0) return usage("option values are positive integers");
        if (!strcmp(argv[i], "-t")) o.workers = (unsigned)v;
        else if (!strcmp(argv[i], "-n")) d.packets = (uint32_t)v;
        else return usage("unknown option");
        i++;
    }
    gr_graph *g = gr_graph_create();
    gr_queue_desc nq = {.name = "numbers", .kind = GR_COLLECTION, .header_bytes = 4,
                        .element_bytes = 4, .elements = ELEMS, .capacity = 64};
    int q1 = gr_queue(g, &nq);
    nq.name = "squares";
    int q2 = gr_queue(g, &nq);
    int s1 = gr_stage(g, &(gr_stage_desc){.name = "generate", .kind = GR_THREAD, .main = generate, .user = &d});
    int s2 = gr_stage(g, &(gr_stage_desc){.name = "square", .kind = GR_SHADER, .main = square});
    int s3 = gr_stage(g, &(gr_stage_desc){.name = "sum", .kind = GR_THREAD, .main = sum, .user = &d});
    gr_bind(g, s1, GR_BIND_OUTPUT, q1);
    gr_bind(g, s2, GR_BIND_INPUT, q1);
    gr_bind(g, s2, GR_BIND_PUSH, q2);
    gr_bind(g, s3, GR_BIND_INPUT, q2);
    if (gr_launch(g, &o, NULL, 0) != GR_OK || gr_wait(g) != GR_OK) {
        fprintf(stderr, "gramps-demo: %s\n", gr_error(g));
        gr_graph_destroy(g);
        return 1;
    }
    unsigned long long n = (unsigned long long)d.packets * ELEMS, expect = 0;
    for (unsigned long long i = 0; i < n; i++) expect += (i % 1000) * (i % 1000);
    gr_stats_write_json(g, stdout);
    printf("sum of squares %llu (%s)\n", d.sum, d.sum == expect ? "correct" : "WRONG");
    gr_graph_destroy(g);
    return d.sum == expect ? 0 : 1;
}

/* gaussian.c — Gaussian elimination (Rodinia's gaussian, from the CUDA SDK; thesis ch. 5:
 * "like srad, an entirely data-parallel workload, whose graph is laid out very
 * similarly"): kernels over read-write buffers separated by queues used as barriers:
 *
 *   gen -> fan1-tasks -> fan1 --\
 *   gen -> fan2-tasks -> fan2 ----> done -> gen      (a cycle: the barrier)
 *
 * gen (Thread) is the Task-Generator and the elimination loop: for each pivot t it hands
 * out the rows below t in bands of `band` rows to fan1 (Rodinia's Fan1: the multipliers
 * m[i] = a[i][t] / a[t][t]), waits for a token per band on `done`, then does the same
 * for fan2 (Fan2: a[i][j] -= m[i] a[t][j] for j >= t, b[i] -= m[i] b[t]). After the last
 * pivot it back-substitutes serially, as Rodinia's host does. No pivoting, as in
 * Rodinia: the input is made diagonally dominant (a seeded hash) so none is needed.
 *
 * The serial reference runs the same per-row kernels over all rows below each pivot;
 * every element's arithmetic is the same, so x agrees bit for bit. */
#include "apps/apps.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_N, P_BAND, P_SEED };
enum { BUF_A, BUF_B, BUF_M, BUF_X, NBUF };

typedef struct ge_task { uint32_t t, first, rows; } ge_task;
typedef struct ge_system { float *a, *b, *m, *x; } ge_system;

typedef struct ge_state {
    uint32_t n, band;
    uint64_t seed;
    int buffers[NBUF];
} ge_state;

/* ---- the kernels, shared with the serial reference ---------------------------------- */

static void fan1_rows(uint32_t n, ge_system *e, uint32_t t, uint32_t first, uint32_t rows)
{
    for (uint32_t i = first; i < first + rows; i++)
        e->m[i] = e->a[(size_t)i * n + t] / e->a[(size_t)t * n + t];
}

static void fan2_rows(uint32_t n, ge_system *e, uint32_t t, uint32_t first, uint32_t rows)
{
    const float *pivot = e->a + (size_t)t * n;
    for (uint32_t i = first; i < first + rows; i++) {
        float *row = e->a + (size_t)i * n, m = e->m[i];
        for (uint32_t j = t; j < n; j++) row[j] -= m * pivot[j];
        e->b[i] -= m * e->b[t];
    }
}

static void back_substitute(uint32_t n, ge_system *e)
{
    for (uint32_t i = n; i-- > 0;) {
        float s = e->b[i];
        for (uint32_t j = i + 1; j < n; j++) s -= e->a[(size_t)i * n + j] * e->x[j];
        e->x[i] = s / e->a[(size_t)i * n + i];
    }
}

/* A diagonally dominant system: off-diagonal entries in [-0.5, 0.5), the diagonal n + [0, 1). */
static void make_system(const ge_state *s, float *a, float *b)
{
    uint32_t n = s->n;
    for (size_t k = 0; k < (size_t)n * n; k++) a[k] = (float)ap_hash(s->seed, k) / 4294967296.0f - 0.5f;
    for (uint32_t i = 0; i < n; i++) {
        a[(size_t)i * n + i] = (float)n + (float)ap_hash(s->seed + 1, i) / 4294967296.0f;
        b[i] = (float)ap_hash(s->seed + 2, i) / 4294967296.0f * 2.0f - 1.0f;
    }
}

/* ---- the stages ------------------------------------------------------------------------ */

static ge_system system_of(gr_ctx *c)
{
    return (ge_system){gr_buf(c, BUF_A, NULL), gr_buf(c, BUF_B, NULL), gr_buf(c, BUF_M, NULL),
                       gr_buf(c, BUF_X, NULL)};
}

static void fan1_main(gr_ctx *c)
{
    const ge_state *s = gr_user(c);
    const ge_task *k = gr_input(c, NULL);
    ge_system e = system_of(c);
    fan1_rows(s->n, &e, k->t, k->first, k->rows);
    *(uint32_t *)gr_output(c, 0) = 1;
}

static void fan2_main(gr_ctx *c)
{
    const ge_state *s = gr_user(c);
    const ge_task *k = gr_input(c, NULL);
    ge_system e = system_of(c);
    fan2_rows(s->n, &e, k->t, k->first, k->rows);
    *(uint32_t *)gr_output(c, 0) = 1;
}

/* One kernel launch over the rows below pivot t, then the barrier: a token per band. */
static void launch_kernel(gr_ctx *c, const ge_state *s, int kernel, uint32_t t)
{
    uint32_t bands = 0;
    for (uint32_t first = t + 1; first < s->n; first += s->band, bands++) {
        gr_window w;
        gr_reserve_out(c, kernel, 1, &w);
        uint32_t left = s->n - first;
        *(ge_task *)w.mem = (ge_task){t, first, left < s->band ? left : s->band};
        gr_commit_out(c, kernel, 1);
    }
    for (uint32_t b = 0; b < bands; b++) {
        gr_window w;
        gr_assert(c, gr_reserve(c, 0, 1, &w) == GR_OK);
        gr_commit(c, 0, 1);
    }
}

static void gen_main(gr_ctx *c)
{
    const ge_state *s = gr_user(c);
    for (uint32_t t = 0; t + 1 < s->n; t++) {
        launch_kernel(c, s, 0, t);
        launch_kernel(c, s, 1, t);
    }
    ge_system e = system_of(c);
    back_substitute(s->n, &e);
}

/* ---- the graph ------------------------------------------------------------------------- */

static void add_stages(gr_graph *g, ge_state *s)
{
    static const char *const names[2] = {"fan1", "fan2"}, *const queues[2] = {"fan1-tasks", "fan2-tasks"};
    static const gr_stage_fn mains[2] = {fan1_main, fan2_main};
    int done = gr_queue(g, &(gr_queue_desc){.name = "done", .packet_bytes = 4});
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_main, .user = s});
    gr_bind(g, gen, GR_BIND_INPUT, done);
    for (int b = 0; b < NBUF; b++) gr_bind_buffer(g, gen, s->buffers[b]);
    for (int k = 0; k < 2; k++) {
        int tasks = gr_queue(g, &(gr_queue_desc){.name = queues[k], .packet_bytes = sizeof(ge_task)});
        int st = gr_stage(g, &(gr_stage_desc){.name = names[k], .kind = GR_SHADER, .main = mains[k], .user = s});
        gr_bind(g, gen, GR_BIND_OUTPUT, tasks);
        gr_bind(g, st, GR_BIND_INPUT, tasks);
        gr_bind(g, st, GR_BIND_OUTPUT, done);
        for (int b = 0; b < NBUF; b++) gr_bind_buffer(g, st, s->buffers[b]);
    }
}

static void *ge_build(gr_graph *g, const int64_t *v, char err[AP_MSG_MAX])
{
    ge_state *s = calloc(1, sizeof *s);
    size_t n = (size_t)v[P_N];
    float *a = s ? malloc(n * n * sizeof *a) : NULL, *b = malloc(n * sizeof *b);
    if (!a || !b) {
        free(s); free(a); free(b);
        snprintf(err, AP_MSG_MAX, "gaussian: out of memory for a %zux%zu system", n, n);
        return NULL;
    }
    *s = (ge_state){(uint32_t)n, (uint32_t)v[P_BAND], (uint64_t)v[P_SEED], {0}};
    make_system(s, a, b);
    s->buffers[BUF_A] = gr_buffer(g, "a", n * n * sizeof(float), a, true);
    s->buffers[BUF_B] = gr_buffer(g, "b", n * sizeof(float), b, true);
    s->buffers[BUF_M] = gr_buffer(g, "m", n * sizeof(float), NULL, true);
    s->buffers[BUF_X] = gr_buffer(g, "x", n * sizeof(float), NULL, true);
    free(a);
    free(b);
    add_stages(g, s);
    if (*gr_error(g)) {
        snprintf(err, AP_MSG_MAX, "gaussian: %s", gr_error(g));
        free(s);
        return NULL;
    }
    return s;
}

/* The serial reference: the same kernels over every row below each pivot, then the
 * same back substitution. x is NULL when out of memory. */
static float *serial_gaussian(const ge_state *s, float **a_out, float **b_out)
{
    size_t n = s->n;
    ge_system e = {malloc(n * n * sizeof(float)), malloc(n * sizeof(float)),
                   malloc(n * sizeof(float)), malloc(n * sizeof(float))};
    if (e.a && e.b && e.m && e.x) {
        make_system(s, e.a, e.b);
        *a_out = malloc(n * n * sizeof(float));
        *b_out = malloc(n * sizeof(float));
        if (*a_out && *b_out) {
            memcpy(*a_out, e.a, n * n * sizeof(float));
            memcpy(*b_out, e.b, n * sizeof(float));
        }
        for (uint32_t t = 0; t + 1 < s->n; t++) {
            fan1_rows(s->n, &e, t, t + 1, s->n - t - 1);
            fan2_rows(s->n, &e, t, t + 1, s->n - t - 1);
        }
        back_substitute(s->n, &e);
    }
    free(e.a); free(e.b); free(e.m);
    if (!*a_out || !*b_out) { free(e.x); return NULL; }
    return e.x;
}

/* max |A x - b| over the rows, for the result line. */
static double residual(uint32_t n, const float *a, const float *b, const float *x)
{
    double worst = 0;
    for (uint32_t i = 0; i < n; i++) {
        double r = -b[i];
        for (uint32_t j = 0; j < n; j++) r += (double)a[(size_t)i * n + j] * x[j];
        if (fabs(r) > worst) worst = fabs(r);
    }
    return worst;
}

static int ge_check(void *p, gr_graph *g, char line[AP_MSG_MAX])
{
    const ge_state *s = p;
    const float *x = gr_buffer_data(g, s->buffers[BUF_X]);
    float *a0 = NULL, *b0 = NULL, *serial = serial_gaussian(s, &a0, &b0);
    if (!serial) {
        free(a0); free(b0);
        snprintf(line, AP_MSG_MAX, "gaussian: out of memory for the check");
        return -1;
    }
    uint32_t bad = s->n;
    for (uint32_t i = 0; i < s->n && bad == s->n; i++)
        if (memcmp(&x[i], &serial[i], sizeof *x)) bad = i;
    if (bad < s->n)
        snprintf(line, AP_MSG_MAX, "gaussian: x[%" PRIu32 "] is %.9g, the serial solution's %.9g",
                 bad, x[bad], serial[bad]);
    else
        snprintf(line, AP_MSG_MAX, "gaussian: %" PRIu32 "x%" PRIu32 " system, max |Ax - b| %.2g; "
                 "equal bit for bit to the serial solution", s->n, s->n, residual(s->n, a0, b0, x));
    free(serial); free(a0); free(b0);
    return bad < s->n ? -1 : 0;
}

static const ap_param ge_params[] = {
    [P_N] = {"n", 512, 2, 4096, "unknowns (the matrix is n x n)"},
    [P_BAND] = {"band", 16, 1, 4096, "rows per kernel task"},
    [P_SEED] = {"seed", 1, 0, INT32_MAX, "the system's hash seed"},
};

static void ge_destroy(void *s) { free(s); }

const ap_app ap_gaussian = {
    "gaussian", "Gaussian elimination (Rodinia): Fan1 and Fan2 kernels per pivot over read-write "
    "buffers, queues as barriers, serial back substitution",
    ge_params, 3, ge_build, ge_check, ge_destroy};

/* srad.c — Speckle Reducing Anisotropic Diffusion (Rodinia's srad; thesis ch. 5, Sanchez
 * §V): a data-parallel CUDA program cast as GRAMPS' breadth-first idiom, kernels over
 * read-write buffers separated by queues used as barriers:
 *
 *   gen -> stat-tasks -> stats ---\
 *   gen -> diffuse-tasks -> diffuse --> done -> gen      (a cycle: the barrier)
 *   gen -> update-tasks -> update --/
 *
 * gen (Thread) is the Task-Generator and the iteration loop: per iteration it hands out
 * bands of `band` rows to stats (each band's sum and sum of squares of the image J),
 * waits for a token per band on `done`, derives the speckle scale q0^2 from the band sums
 * (in band order), then does the same for diffuse (the diffusion coefficient c and the
 * four directional derivatives, from J) and update (J += lambda/4 * divergence). The
 * image and the coefficients live in writable GRAMPS buffers; no data flows in queues.
 *
 * The serial reference runs the same per-pixel kernels over the whole image and sums
 * the statistics band by band in the same order, so the images agree bit for bit: the
 * check tests the graph's decomposition, barriers and buffers. */
#include "apps/apps.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_ROWS, P_COLS, P_ITERATIONS, P_BAND, P_LAMBDA, P_SEED };
enum { BUF_J, BUF_C, BUF_DN, BUF_DS, BUF_DW, BUF_DE, BUF_SUMS, NBUF };

typedef struct sr_task { uint32_t first, rows; float q0sqr; } sr_task;
typedef struct sr_image { float *b[NBUF - 1]; double *sums; } sr_image;  /* J, c, dN, dS, dW, dE */

typedef struct sr_state {
    uint32_t rows, cols, iterations, band, bands;
    float lambda;
    uint64_t seed;
    int buffers[NBUF];
} sr_state;

/* ---- the kernels, shared with the serial reference --------------------------------- */

/* Rows [first, first + n): their sum and sum of squares into sums[2 band], [2 band + 1]. */
static void stats_rows(const sr_state *s, const float *J, double *sums, uint32_t first, uint32_t n)
{
    double sum = 0, sum2 = 0;
    for (size_t k = (size_t)first * s->cols; k < (size_t)(first + n) * s->cols; k++) {
        sum += J[k];
        sum2 += (double)J[k] * J[k];
    }
    sums[2 * (first / s->band)] = sum;
    sums[2 * (first / s->band) + 1] = sum2;
}

static float q0sqr_of(const sr_state *s, const double *sums)
{
    double sum = 0, sum2 = 0, size = (double)s->rows * s->cols;
    for (uint32_t b = 0; b < s->bands; b++) { sum += sums[2 * b]; sum2 += sums[2 * b + 1]; }
    double mean = sum / size, var = sum2 / size - mean * mean;
    return (float)(var / (mean * mean));
}

/* Rodinia's first kernel: derivatives and the diffusion coefficient, clamped to [0, 1]. */
static void diffuse_rows(const sr_state *s, sr_image *im, float q0sqr, uint32_t first, uint32_t n)
{
    uint32_t R = s->rows, C = s->cols;
    const float *J = im->b[BUF_J];
    for (uint32_t i = first; i < first + n; i++)
        for (uint32_t j = 0; j < C; j++) {
            size_t k = (size_t)i * C + j;
            float Jc = J[k];
            float dN = J[(size_t)(i ? i - 1 : 0) * C + j] - Jc;
            float dS = J[(size_t)(i + 1 < R ? i + 1 : i) * C + j] - Jc;
            float dW = J[(size_t)i * C + (j ? j - 1 : 0)] - Jc;
            float dE = J[(size_t)i * C + (j + 1 < C ? j + 1 : j)] - Jc;
            float G2 = (dN * dN + dS * dS + dW * dW + dE * dE) / (Jc * Jc);
            float L = (dN + dS + dW + dE) / Jc;
            float num = 0.5f * G2 - (1.0f / 16.0f) * (L * L);
            float den = 1 + 0.25f * L;
            float qsqr = num / (den * den);
            den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr));
            float c = 1.0f / (1.0f + den);
            im->b[BUF_C][k] = c < 0 ? 0 : c > 1 ? 1 : c;
            im->b[BUF_DN][k] = dN; im->b[BUF_DS][k] = dS;
            im->b[BUF_DW][k] = dW; im->b[BUF_DE][k] = dE;
        }
}

/* Rodinia's second kernel: the divergence of c grad J, and the update of J. */
static void update_rows(const sr_state *s, sr_image *im, uint32_t first, uint32_t n)
{
    uint32_t R = s->rows, C = s->cols;
    const float *c = im->b[BUF_C];
    for (uint32_t i = first; i < first + n; i++)
        for (uint32_t j = 0; j < C; j++) {
            size_t k = (size_t)i * C + j;
            float cS = c[(size_t)(i + 1 < R ? i + 1 : i) * C + j];
            float cE = c[(size_t)i * C + (j + 1 < C ? j + 1 : j)];
            float D = c[k] * im->b[BUF_DN][k] + cS * im->b[BUF_DS][k] +
                      c[k] * im->b[BUF_DW][k] + cE * im->b[BUF_DE][k];
            im->b[BUF_J][k] += 0.25f * s->lambda * D;
        }
}

static float initial_pixel(const sr_state *s, size_t k)
{
    return expf((float)(ap_hash(s->seed, k) & 255) / 255.0f);
}

/* ---- the stages ---------------------------------------------------------------------- */

static sr_image image_of(gr_ctx *c)
{
    sr_image im;
    for (int i = 0; i < NBUF - 1; i++) im.b[i] = gr_buf(c, i, NULL);
    im.sums = gr_buf(c, BUF_SUMS, NULL);
    return im;
}

static void token(gr_ctx *c) { *(uint32_t *)gr_output(c, 0) = 1; }

static void stats_main(gr_ctx *c)
{
    const sr_task *t = gr_input(c, NULL);
    sr_image im = image_of(c);
    stats_rows(gr_user(c), im.b[BUF_J], im.sums, t->first, t->rows);
    token(c);
}

static void diffuse_main(gr_ctx *c)
{
    const sr_task *t = gr_input(c, NULL);
    sr_image im = image_of(c);
    diffuse_rows(gr_user(c), &im, t->q0sqr, t->first, t->rows);
    token(c);
}

static void update_main(gr_ctx *c)
{
    const sr_task *t = gr_input(c, NULL);
    sr_image im = image_of(c);
    update_rows(gr_user(c), &im, t->first, t->rows);
    token(c);
}

/* One kernel launch: a task per band on output `kernel`, then the barrier: a token per
 * band back on `done`. */
static void launch_kernel(gr_ctx *c, const sr_state *s, int kernel, float q0sqr)
{
    for (uint32_t first = 0; first < s->rows; first += s->band) {
        gr_window w;
        gr_reserve_out(c, kernel, 1, &w);
        uint32_t left = s->rows - first;
        *(sr_task *)w.mem = (sr_task){first, left < s->band ? left : s->band, q0sqr};
        gr_commit_out(c, kernel, 1);
    }
    for (uint32_t b = 0; b < s->bands; b++) {
        gr_window w;
        gr_assert(c, gr_reserve(c, 0, 1, &w) == GR_OK);
        gr_commit(c, 0, 1);
    }
}

static void gen_main(gr_ctx *c)
{
    const sr_state *s = gr_user(c);
    const double *sums = gr_buf(c, 0, NULL);
    for (uint32_t it = 0; it < s->iterations; it++) {
        launch_kernel(c, s, 0, 0);
        float q0sqr = q0sqr_of(s, sums);
        launch_kernel(c, s, 1, q0sqr);
        launch_kernel(c, s, 2, q0sqr);
    }
}

/* ---- the graph ------------------------------------------------------------------------ */

static int kernel_stage(gr_graph *g, const sr_state *s, const char *name, gr_stage_fn fn,
                        int tasks, int done)
{
    int st = gr_stage(g, &(gr_stage_desc){.name = name, .kind = GR_SHADER, .main = fn, .user = (void *)s});
    gr_bind(g, st, GR_BIND_INPUT, tasks);
    gr_bind(g, st, GR_BIND_OUTPUT, done);
    for (int b = 0; b < NBUF; b++) gr_bind_buffer(g, st, s->buffers[b]);
    return st;
}

static void add_stages(gr_graph *g, sr_state *s)
{
    static const char *const names[] = {"stat-tasks", "diffuse-tasks", "update-tasks"};
    int tasks[3], done = gr_queue(g, &(gr_queue_desc){.name = "done", .packet_bytes = 4});
    for (int k = 0; k < 3; k++)
        tasks[k] = gr_queue(g, &(gr_queue_desc){.name = names[k], .packet_bytes = sizeof(sr_task)});
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_main, .user = s});
    gr_bind(g, gen, GR_BIND_INPUT, done);
    for (int k = 0; k < 3; k++) gr_bind(g, gen, GR_BIND_OUTPUT, tasks[k]);
    gr_bind_buffer(g, gen, s->buffers[BUF_SUMS]);
    kernel_stage(g, s, "stats", stats_main, tasks[0], done);
    kernel_stage(g, s, "diffuse", diffuse_main, tasks[1], done);
    kernel_stage(g, s, "update", update_main, tasks[2], done);
}

static void *sr_build(gr_graph *g, const int64_t *v, char err[AP_MSG_MAX])
{
    sr_state *s = calloc(1, sizeof *s);
    size_t pixels = (size_t)v[P_ROWS] * (size_t)v[P_COLS];
    float *J = s ? malloc(pixels * sizeof *J) : NULL;
    if (!J) {
        free(s);
        snprintf(err, AP_MSG_MAX, "srad: out of memory for a %" PRId64 "x%" PRId64 " image",
                 v[P_ROWS], v[P_COLS]);
        return NULL;
    }
    *s = (sr_state){(uint32_t)v[P_ROWS], (uint32_t)v[P_COLS], (uint32_t)v[P_ITERATIONS],
                    (uint32_t)v[P_BAND], 0, (float)v[P_LAMBDA] / 1000.0f, (uint64_t)v[P_SEED], {0}};
    s->bands = (s->rows + s->band - 1) / s->band;
    for (size_t k = 0; k < pixels; k++) J[k] = initial_pixel(s, k);
    static const char *const names[NBUF - 1] = {"J", "c", "dN", "dS", "dW", "dE"};
    s->buffers[BUF_J] = gr_buffer(g, names[0], pixels * sizeof(float), J, true);
    for (int b = 1; b < NBUF - 1; b++) s->buffers[b] = gr_buffer(g, names[b], pixels * sizeof(float), NULL, true);
    s->buffers[BUF_SUMS] = gr_buffer(g, "band-sums", 2 * s->bands * sizeof(double), NULL, true);
    free(J);
    add_stages(g, s);
    if (*gr_error(g)) {
        snprintf(err, AP_MSG_MAX, "srad: %s", gr_error(g));
        free(s);
        return NULL;
    }
    return s;
}

/* The serial reference: the same kernels over the whole image, `iterations` times. */
static int serial_srad(const sr_state *s, float *J)
{
    size_t pixels = (size_t)s->rows * s->cols;
    sr_image im = {{J}, calloc(2 * s->bands, sizeof(double))};
    for (int b = 1; b < NBUF - 1; b++) im.b[b] = malloc(pixels * sizeof(float));
    bool ok = im.sums;
    for (int b = 1; b < NBUF - 1; b++) ok = ok && im.b[b];
    for (size_t k = 0; ok && k < pixels; k++) J[k] = initial_pixel(s, k);
    for (uint32_t it = 0; ok && it < s->iterations; it++) {
        for (uint32_t first = 0; first < s->rows; first += s->band)
            stats_rows(s, J, im.sums, first, s->rows - first < s->band ? s->rows - first : s->band);
        float q0sqr = q0sqr_of(s, im.sums);
        diffuse_rows(s, &im, q0sqr, 0, s->rows);
        update_rows(s, &im, 0, s->rows);
    }
    for (int b = 1; b < NBUF - 1; b++) free(im.b[b]);
    free(im.sums);
    return ok ? 0 : -1;
}

static int sr_check(void *p, gr_graph *g, char line[AP_MSG_MAX])
{
    const sr_state *s = p;
    size_t pixels = (size_t)s->rows * s->cols;
    const float *J = gr_buffer_data(g, s->buffers[BUF_J]);
    float *serial = malloc(pixels * sizeof *serial);
    if (!serial || serial_srad(s, serial)) {
        free(serial);
        snprintf(line, AP_MSG_MAX, "srad: out of memory for the check");
        return -1;
    }
    size_t bad = pixels;
    double sum = 0;
    for (size_t k = 0; k < pixels; k++) {
        if (memcmp(&J[k], &serial[k], sizeof *J) && bad == pixels) bad = k;
        sum += J[k];
    }
    if (bad < pixels)
        snprintf(line, AP_MSG_MAX, "srad: pixel (%zu, %zu) is %.9g, the serial image's %.9g",
                 bad % s->cols, bad / s->cols, J[bad], serial[bad]);
    else
        snprintf(line, AP_MSG_MAX, "srad: %" PRIu32 "x%" PRIu32 " image, %" PRIu32 " iterations, "
                 "mean %.6f; equal bit for bit to the serial image", s->cols, s->rows,
                 s->iterations, sum / (double)pixels);
    free(serial);
    return bad < pixels ? -1 : 0;
}

static const ap_param sr_params[] = {
    [P_ROWS] = {"rows", 512, 2, 16384, "image rows"},
    [P_COLS] = {"cols", 512, 2, 16384, "image columns"},
    [P_ITERATIONS] = {"iterations", 10, 1, 10000, "diffusion steps"},
    [P_BAND] = {"band", 16, 1, 16384, "rows per kernel task"},
    [P_LAMBDA] = {"lambda", 500, 1, 1000, "the update's step, in thousandths"},
    [P_SEED] = {"seed", 1, 0, INT32_MAX, "the input's hash seed"},
};

static void sr_destroy(void *s) { free(s); }

const ap_app ap_srad = {
    "srad", "Rodinia SRAD: three data-parallel kernels over read-write buffers, queues as barriers",
    sr_params, 6, sr_build, sr_check, sr_destroy};

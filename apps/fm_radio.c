/* fm_radio.c — StreamIt's FM radio (thesis ch. 5, Sanchez §V; an SGMS benchmark): a low-
 * pass filter that decimates by 4, an FM demodulator, and an equalizer of `bands` band-
 * pass filters whose gained outputs are summed, as a graph of ordered queues:
 *
 *   source -> samples -> lowpass -> filtered -> demod -> demodulated -> split
 *   split -> band-b -> eq-b -> eq-out-b -> summer        (b = 0 .. bands-1, replicated)
 *
 * StreamIt's filters peek past the sample they pop; here each packet carries the margin
 * of input its block of `block` output samples needs, so the filters are stateless
 * Shaders: source (Thread) cuts the input signal into overlapping blocks, lowpass, demod
 * and eq-b (Shaders) shrink the block as their taps consume the margin, split (Thread)
 * is StreamIt's duplicate splitter and summer (Thread) its round-robin joiner and Summer,
 * adding the bands in band order. Every output sample is the same sequence of float
 * operations as in the serial reference, so the two agree bit for bit. */
#include "apps/apps.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_SAMPLES, P_BANDS, P_TAPS, P_BLOCK, P_SEED };
#define FM_DECIMATION 4
#define FM_MAX_BANDS 32
#define FM_RATE 250e6                     /* StreamIt's FMRadio constants */
#define FM_CUTOFF 108e6
#define FM_MAX_AMP 27000.0
#define FM_BANDWIDTH 10000.0
#define FM_EQ_LOW 55.0
#define FM_EQ_HIGH 1760.0

/* Every packet: which block, how many output samples it makes, then its samples. */
typedef struct fm_block { uint32_t seq, n; float v[]; } fm_block;

typedef struct fm_state fm_state;
typedef struct fm_band { const fm_state *s; uint32_t b; } fm_band;

struct fm_state {
    uint32_t samples, bands, taps, block;
    uint64_t seed;
    float *lowpass;                       /* taps coefficients */
    float *eq_high, *eq_low;              /* bands x taps: the band-pass's two low-passes */
    float gain[FM_MAX_BANDS];
    fm_band band[FM_MAX_BANDS];
    float *out;                           /* samples: summer's result */
};

/* Input samples an output block of n needs at each step (the filters' margins). */
static size_t need_demod(const fm_state *s, size_t n) { return n + s->taps - 1; }
static size_t need_lowpass(const fm_state *s, size_t n) { return need_demod(s, n) + 1; }
static size_t need_input(const fm_state *s, size_t n) { return FM_DECIMATION * (need_lowpass(s, n) - 1) + s->taps; }

/* ---- the filters, shared with the serial reference -------------------------------- */

static float fir(const float *x, const float *h, uint32_t taps)
{
    float sum = 0;
    for (uint32_t k = 0; k < taps; k++) sum += h[k] * x[k];
    return sum;
}

static void lowpass_coefficients(float *h, uint32_t taps, double cutoff)
{
    double m = taps - 1, w = 2 * M_PI * cutoff / FM_RATE;
    for (uint32_t i = 0; i < taps; i++) {
        double t = i - m / 2;
        h[i] = (float)((t == 0 ? w / M_PI : sin(w * t) / M_PI / t) *
                       (0.54 - 0.46 * cos(2 * M_PI * i / (m ? m : 1))));
    }
}

static float input_sample(const fm_state *s, size_t i)
{
    double noise = (double)(ap_hash(s->seed, i) & 1023) / 1023.0 - 0.5;
    return (float)(cos(0.3 * (double)i + 2 * sin(0.0005 * (double)i)) + 0.05 * noise);
}

static void lowpass_run(const fm_state *s, const float *x, float *L, size_t n)
{
    for (size_t i = 0; i < n; i++) L[i] = fir(x + FM_DECIMATION * i, s->lowpass, s->taps);
}

static void demod_run(const float *L, float *D, size_t n)
{
    const float gain = (float)(FM_MAX_AMP * (FM_RATE / (FM_BANDWIDTH * M_PI)));
    for (size_t i = 0; i < n; i++) D[i] = gain * atanf(L[i] * L[i + 1]);
}

static void band_run(const fm_state *s, uint32_t b, const float *D, float *y, size_t n)
{
    const float *hh = s->eq_high + (size_t)b * s->taps, *hl = s->eq_low + (size_t)b * s->taps;
    for (size_t i = 0; i < n; i++) y[i] = s->gain[b] * (fir(D + i, hh, s->taps) - fir(D + i, hl, s->taps));
}

/* ---- the stages ------------------------------------------------------------------------ */

static void source_main(gr_ctx *c)
{
    const fm_state *s = gr_user(c);
    for (uint32_t seq = 0; (size_t)seq * s->block < s->samples; seq++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        fm_block *p = w.mem;
        uint32_t left = s->samples - seq * s->block;
        p->seq = seq;
        p->n = left < s->block ? left : s->block;
        size_t first = (size_t)FM_DECIMATION * seq * s->block;
        for (size_t i = 0; i < need_input(s, p->n); i++) p->v[i] = input_sample(s, first + i);
        gr_commit_out(c, 0, 1);
    }
}

static void lowpass_main(gr_ctx *c)
{
    const fm_block *in = gr_input(c, NULL);
    fm_block *out = gr_output(c, 0);
    *out = *in;
    lowpass_run(gr_user(c), in->v, out->v, need_lowpass(gr_user(c), in->n));
}

static void demod_main(gr_ctx *c)
{
    const fm_block *in = gr_input(c, NULL);
    fm_block *out = gr_output(c, 0);
    *out = *in;
    demod_run(in->v, out->v, need_demod(gr_user(c), in->n));
}

/* The duplicate splitter: every block to every band. */
static void split_main(gr_ctx *c)
{
    const fm_state *s = gr_user(c);
    gr_window w, o;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const fm_block *in = w.mem;
        size_t bytes = sizeof *in + need_demod(s, in->n) * sizeof(float);
        for (uint32_t b = 0; b < s->bands; b++) {
            gr_reserve_out(c, (int)b, 1, &o);
            memcpy(o.mem, in, bytes);
            gr_commit_out(c, (int)b, 1);
        }
        gr_commit(c, 0, 1);
    }
}

static void eq_main(gr_ctx *c)
{
    const fm_band *band = gr_user(c);
    const fm_block *in = gr_input(c, NULL);
    fm_block *out = gr_output(c, 0);
    *out = *in;
    band_run(band->s, band->b, in->v, out->v, in->n);
}

/* The joiner and Summer: block seq of every band, added in band order. */
static void summer_main(gr_ctx *c)
{
    const fm_state *s = gr_user(c);
    gr_window w;
    for (uint32_t seq = 0; gr_reserve(c, 0, 1, &w) == GR_OK; seq++) {
        const fm_block *first = w.mem;
        gr_assert(c, first->seq == seq);
        float *out = s->out + (size_t)seq * s->block;
        memcpy(out, first->v, first->n * sizeof(float));
        gr_commit(c, 0, 1);
        for (uint32_t b = 1; b < s->bands; b++) {
            gr_assert(c, gr_reserve(c, (int)b, 1, &w) == GR_OK);
            const fm_block *p = w.mem;
            gr_assert(c, p->seq == seq);
            for (uint32_t i = 0; i < p->n; i++) out[i] += p->v[i];
            gr_commit(c, (int)b, 1);
        }
    }
    for (uint32_t b = 1; b < s->bands; b++) gr_assert(c, gr_reserve(c, (int)b, 1, &w) == GR_NOMORE);
}

/* ---- the graph ------------------------------------------------------------------------- */

static int block_queue(gr_graph *g, const char *name, size_t floats)
{
    return gr_queue(g, &(gr_queue_desc){.name = name, .packet_bytes = sizeof(fm_block) + floats * sizeof(float),
                                        .capacity = 16, .ordered = true});
}

static int shader(gr_graph *g, const char *name, gr_stage_fn fn, void *user, int in, int out)
{
    int st = gr_stage(g, &(gr_stage_desc){.name = name, .kind = GR_SHADER, .main = fn, .user = user});
    gr_bind(g, st, GR_BIND_INPUT, in);
    gr_bind(g, st, GR_BIND_OUTPUT, out);
    return st;
}

static void add_stages(gr_graph *g, fm_state *s)
{
    int samples = block_queue(g, "samples", need_input(s, s->block));
    int filtered = block_queue(g, "filtered", need_lowpass(s, s->block));
    int demodulated = block_queue(g, "demodulated", need_demod(s, s->block));
    int source = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = source_main, .user = s});
    int split = gr_stage(g, &(gr_stage_desc){.name = "split", .kind = GR_THREAD, .main = split_main, .user = s});
    int summer = gr_stage(g, &(gr_stage_desc){.name = "summer", .kind = GR_THREAD, .main = summer_main, .user = s});
    gr_bind(g, source, GR_BIND_OUTPUT, samples);
    shader(g, "lowpass", lowpass_main, s, samples, filtered);
    shader(g, "demod", demod_main, s, filtered, demodulated);
    gr_bind(g, split, GR_BIND_INPUT, demodulated);
    for (uint32_t b = 0; b < s->bands; b++) {
        char name[32];
        snprintf(name, sizeof name, "band-%" PRIu32, b);
        int band = block_queue(g, name, need_demod(s, s->block));
        snprintf(name, sizeof name, "eq-out-%" PRIu32, b);
        int eq_out = block_queue(g, name, s->block);
        snprintf(name, sizeof name, "eq-%" PRIu32, b);
        s->band[b] = (fm_band){s, b};
        gr_bind(g, split, GR_BIND_OUTPUT, band);
        shader(g, name, eq_main, &s->band[b], band, eq_out);
        gr_bind(g, summer, GR_BIND_INPUT, eq_out);
    }
}

static void fm_destroy(void *p)
{
    fm_state *s = p;
    if (!s) return;
    free(s->lowpass);
    free(s->eq_high);
    free(s->eq_low);
    free(s->out);
    free(s);
}

/* The filters' coefficients: StreamIt's low-pass, and band b between the geometrically
 * spaced cutoffs b and b + 1 from 55 Hz to 1760 Hz, with gains rising by band. */
static void design_filters(fm_state *s)
{
    lowpass_coefficients(s->lowpass, s->taps, FM_CUTOFF);
    for (uint32_t b = 0; b < s->bands; b++) {
        double step = log(FM_EQ_HIGH / FM_EQ_LOW) / s->bands;
        lowpass_coefficients(s->eq_high + (size_t)b * s->taps, s->taps, FM_EQ_LOW * exp(step * (b + 1)));
        lowpass_coefficients(s->eq_low + (size_t)b * s->taps, s->taps, FM_EQ_LOW * exp(step * b));
        s->gain[b] = 1.0f + 0.25f * (float)b;
    }
}

static void *fm_build(gr_graph *g, const int64_t *v, char err[AP_MSG_MAX])
{
    fm_state *s = calloc(1, sizeof *s);
    if (s) {
        s->samples = (uint32_t)v[P_SAMPLES];
        s->bands = (uint32_t)v[P_BANDS];
        s->taps = (uint32_t)v[P_TAPS];
        s->block = (uint32_t)v[P_BLOCK];
        s->seed = (uint64_t)v[P_SEED];
        s->lowpass = malloc(s->taps * sizeof(float));
        s->eq_high = malloc((size_t)s->bands * s->taps * sizeof(float));
        s->eq_low = malloc((size_t)s->bands * s->taps * sizeof(float));
        s->out = calloc(s->samples, sizeof(float));
    }
    if (!s || !s->lowpass || !s->eq_high || !s->eq_low || !s->out) {
        fm_destroy(s);
        snprintf(err, AP_MSG_MAX, "fm-radio: out of memory for %" PRId64 " samples", v[P_SAMPLES]);
        return NULL;
    }
    design_filters(s);
    add_stages(g, s);
    if (*gr_error(g)) {
        snprintf(err, AP_MSG_MAX, "fm-radio: %s", gr_error(g));
        fm_destroy(s);
        return NULL;
    }
    return s;
}

/* The serial reference: each filter over the whole signal, then the bands summed. */
static float *serial_fm(const fm_state *s)
{
    size_t M = s->samples, nx = need_input(s, M), nl = need_lowpass(s, M), nd = need_demod(s, M);
    float *x = malloc(nx * sizeof *x), *L = malloc(nl * sizeof *L), *D = malloc(nd * sizeof *D);
    float *y = malloc(M * sizeof *y), *out = calloc(M, sizeof *out);
    if (x && L && D && y && out) {
        for (size_t i = 0; i < nx; i++) x[i] = input_sample(s, i);
        lowpass_run(s, x, L, nl);
        demod_run(L, D, nd);
        for (uint32_t b = 0; b < s->bands; b++) {
            band_run(s, b, D, y, M);
            for (size_t i = 0; i < M; i++) out[i] = b ? out[i] + y[i] : y[i];
        }
    } else {
        free(out);
        out = NULL;
    }
    free(x); free(L); free(D); free(y);
    return out;
}

static int fm_check(void *p, gr_graph *g, char line[AP_MSG_MAX])
{
    (void)g;
    const fm_state *s = p;
    float *serial = serial_fm(s);
    if (!serial) { snprintf(line, AP_MSG_MAX, "fm-radio: out of memory for the check"); return -1; }
    size_t bad = s->samples;
    double energy = 0;
    for (size_t i = 0; i < s->samples; i++) {
        if (memcmp(&serial[i], &s->out[i], sizeof *serial) && bad == s->samples) bad = i;
        energy += (double)s->out[i] * s->out[i];
    }
    if (bad < s->samples)
        snprintf(line, AP_MSG_MAX, "fm-radio: output sample %zu is %.9g, the serial chain's %.9g",
                 bad, s->out[bad], serial[bad]);
    else
        snprintf(line, AP_MSG_MAX, "fm-radio: %" PRIu32 " output samples through %" PRIu32
                 " bands, RMS %.6g; equal bit for bit to the serial chain", s->samples, s->bands,
                 sqrt(energy / s->samples));
    free(serial);
    return bad < s->samples ? -1 : 0;
}

static const ap_param fm_params[] = {
    [P_SAMPLES] = {"samples", 1 << 16, 1, 1 << 24, "output samples"},
    [P_BANDS] = {"bands", 7, 1, FM_MAX_BANDS, "equalizer bands (each its own branch of the graph)"},
    [P_TAPS] = {"taps", 64, 2, 256, "taps of every FIR filter"},
    [P_BLOCK] = {"block", 256, 1, 4096, "output samples per packet"},
    [P_SEED] = {"seed", 1, 0, INT32_MAX, "the input noise's hash seed"},
};

const ap_app ap_fm_radio = {
    "fm-radio", "StreamIt FM radio: low-pass, demodulator, equalizer bands summed, ordered queues",
    fm_params, 5, fm_build, fm_check, fm_destroy};

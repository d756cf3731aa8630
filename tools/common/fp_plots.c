/* fp_plots.c — the footprint study's plots (see fp_plots.h). */
#include "tools/common/fp_plots.h"
#include "tools/common/svg_plot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A timeline draws the queues with the largest peaks, then the total: more lines would
 * not fit the legend (the raster graph has a queue per IA/VS group). */
#define DEPTH_QUEUES_DRAWN 8

static const char *const bar_kinds[FP_NBAR_PLOTS] = {"peak", "avg", "time"};

/* s with every byte outside [A-Za-z0-9._-] as '_', so that it is one safe path part. */
static void safe_part(char *dst, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        dst[i] = ok ? c : '_';
    }
    dst[i] = 0;
}

void fp_bar_plot_name(char name[FP_PLOT_NAME], fp_bar_plot kind, const char *pipeline,
                      unsigned workers)
{
    char p[128];
    safe_part(p, sizeof p, pipeline);
    snprintf(name, FP_PLOT_NAME, "%s-%s-%uw.svg", bar_kinds[kind], p, workers);
}

void fp_depth_plot_name(char name[FP_PLOT_NAME], const fp_study *s, int pipeline, int sched)
{
    char sc[128], p[128];
    safe_part(sc, sizeof sc, s->scenes[0]);
    safe_part(p, sizeof p, s->pipelines[pipeline]);
    snprintf(name, FP_PLOT_NAME, "depth-%s-%s-%s-%uw.svg", sc, p, s->schedulers[sched],
             s->workers[s->nworkers - 1]);
}

/* Opens dir/name, runs write, closes: 0, or 1 with a message. */
static int write_file(const char *dir, const char *name, int (*write)(FILE *, const void *),
                      const void *what, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return 1; }
    int rc = write(f, what);
    if (fclose(f) != 0 || rc != 0) { snprintf(err, errlen, "%s: could not write it", path); return 1; }
    return 0;
}

static int bars_writer(FILE *f, const void *b) { return svg_write_bars(f, b); }
static int steps_writer(FILE *f, const void *st) { return svg_write_steps(f, st); }

static const fp_spread *figure(const fp_summary *c, fp_bar_plot kind)
{
    return kind == FP_PLOT_PEAK ? &c->peak_bytes : kind == FP_PLOT_AVG ? &c->avg_bytes : &c->ms;
}

/* One bar chart: scenes as groups, schedulers as bars, at pipeline p and worker index w. */
static int bar_plot(const char *dir, const fp_study *s, int p, int w, fp_bar_plot kind,
                    char *err, size_t errlen)
{
    int n = s->nscenes * s->nschedulers;
    double value[n], lo[n], hi[n], unit = kind == FP_PLOT_TIME ? 1 : 1024;
    for (int sc = 0; sc < s->nscenes; sc++)
        for (int k = 0; k < s->nschedulers; k++) {
            const fp_spread *v = figure(&s->cells[fp_cell_index(s, sc, p, w, k)], kind);
            int i = sc * s->nschedulers + k;
            value[i] = v->median / unit;
            lo[i] = v->min / unit;
            hi[i] = v->max / unit;
        }
    static const char *const what[FP_NBAR_PLOTS] = {"peak footprint", "average footprint", "frame time"};
    static const char *const ylabel[FP_NBAR_PLOTS] = {"KiB (log scale)", "KiB (log scale)", "ms"};
    char title[256], name[FP_PLOT_NAME];
    snprintf(title, sizeof title, "%s, %s, %u %s, %dx%d", what[kind], s->pipelines[p],
             s->workers[w], fp_workers_word(s, s->workers[w]), s->width, s->height);
    svg_bars b = {title, ylabel[kind], s->nscenes, s->nschedulers, s->scenes, s->schedulers,
                  value, lo, hi, kind != FP_PLOT_TIME};
    fp_bar_plot_name(name, kind, s->pipelines[p], s->workers[w]);
    return write_file(dir, name, bars_writer, &b, err, errlen);
}

/* Each queue's peak bytes in the timeline. */
static void queue_peaks(const fp_timeline *t, double *peak)
{
    for (int q = 0; q < t->nqueues; q++) peak[q] = 0;
    for (size_t i = 0; i < t->nsamples; i++) {
        const gr_depth_sample *d = &t->samples[i];
        double bytes = (double)d->packets * t->packet_bytes[d->queue];
        if (bytes > peak[d->queue]) peak[d->queue] = bytes;
    }
}

/* The queues to draw: up to DEPTH_QUEUES_DRAWN with the largest peaks above 0, in
 * graph order. Returns how many. */
static int pick_queues(const fp_timeline *t, int *chosen)
{
    double peak[t->nqueues + 1];
    bool taken[t->nqueues + 1];
    queue_peaks(t, peak);
    memset(taken, 0, sizeof taken);
    int n = 0;
    for (; n < DEPTH_QUEUES_DRAWN; n++) {
        int best = -1;
        for (int q = 0; q < t->nqueues; q++)
            if (!taken[q] && peak[q] > 0 && (best < 0 || peak[q] > peak[best])) best = q;
        if (best < 0) break;
        taken[best] = true;
    }
    for (int q = 0, k = 0; q < t->nqueues; q++) if (taken[q]) chosen[k++] = q;
    return n;
}

/* Series k < nq: queue chosen[k]'s samples; series nq: the total, the running sum of
 * every queue's latest value after each sample (all queues, drawn or not). */
static void fill_series(const fp_timeline *t, const int *chosen, int nq, double **x, double **y, int *np)
{
    double cur[t->nqueues + 1], total = 0;
    int series[t->nqueues + 1];
    for (int q = 0; q < t->nqueues; q++) { cur[q] = 0; series[q] = -1; }
    for (int k = 0; k < nq; k++) series[chosen[k]] = k;
    for (size_t i = 0; i < t->nsamples; i++) {
        const gr_depth_sample *d = &t->samples[i];
        double kib = (double)d->packets * t->packet_bytes[d->queue] / 1024;
        total += kib - cur[d->queue];
        cur[d->queue] = kib;
        int k = series[d->queue];
        if (k >= 0) { x[k][np[k]] = d->ms; y[k][np[k]++] = kib; }
        if (i + 1 == t->nsamples || t->samples[i + 1].ms != d->ms) {
            x[nq][np[nq]] = d->ms;
            y[nq][np[nq]++] = total;
        }
    }
}

static int depth_plot(const char *dir, const fp_study *s, int p, int k, char *err, size_t errlen)
{
    const fp_timeline *t = &s->timelines[p * s->nschedulers + k];
    int chosen[DEPTH_QUEUES_DRAWN], nq = pick_queues(t, chosen), np[DEPTH_QUEUES_DRAWN + 1] = {0};
    double *x[DEPTH_QUEUES_DRAWN + 1], *y[DEPTH_QUEUES_DRAWN + 1];
    const char *names[DEPTH_QUEUES_DRAWN + 1];
    bool ok = true;
    for (int i = 0; i <= nq; i++) {
        x[i] = malloc((t->nsamples + 1) * sizeof **x);
        y[i] = malloc((t->nsamples + 1) * sizeof **y);
        ok = ok && x[i] && y[i];
        names[i] = i < nq ? t->names[chosen[i]] : "total footprint";
    }
    int rc = 1;
    if (!ok) snprintf(err, errlen, "out of memory drawing a timeline");
    else {
        fill_series(t, chosen, nq, x, y, np);
        char title[256], name[FP_PLOT_NAME];
        unsigned n = s->workers[s->nworkers - 1];
        snprintf(title, sizeof title, "queue depth over one frame: %s, %s, %s, %u %s%s",
                 s->scenes[0], s->pipelines[p], s->schedulers[k], n, fp_workers_word(s, n),
                 s->simulated ? " (virtual time)" : "");
        svg_steps st = {title, "ms since launch", "KiB held", nq + 1, names, np,
                        (const double *const *)x, (const double *const *)y};
        fp_depth_plot_name(name, s, p, k);
        rc = write_file(dir, name, steps_writer, &st, err, errlen);
    }
    for (int i = 0; i <= nq; i++) { free(x[i]); free(y[i]); }
    return rc;
}

int fp_write_plots(const char *dir, const fp_study *s, char *err, size_t errlen)
{
    int rc = 0;
    for (int p = 0; p < s->npipelines && !rc; p++)
        for (int w = 0; w < s->nworkers && !rc; w++)
            for (int kind = 0; kind < FP_NBAR_PLOTS && !rc; kind++)
                rc = bar_plot(dir, s, p, w, (fp_bar_plot)kind, err, errlen);
    for (int p = 0; p < s->npipelines && !rc; p++)
        for (int k = 0; k < s->nschedulers && !rc; k++) rc = depth_plot(dir, s, p, k, err, errlen);
    return rc;
}

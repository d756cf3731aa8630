/* svg_plot.c — grouped bars and step lines as SVG (see svg_plot.h).
 *
 * Every chart has the same frame: a plot area of PLOT_W x PLOT_H at (LEFT, TOP), the
 * y axis with ticks on the left, the legend on the right. Numbers are written with %.2f,
 * in user units, so the files are byte-identical for identical inputs. */
#include "tools/common/svg_plot.h"

#include <math.h>

enum { LEFT = 80, TOP = 40, PLOT_W = 560, PLOT_H = 300, LEGEND_W = 190, BOTTOM = 60 };

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
#define NCOLOURS (int)(sizeof palette / sizeof *palette)

/* A tick step of 1, 2 or 5 x 10^k giving 4-10 ticks up to hi. */
static double tick_step(double hi)
{
    double step = pow(10, floor(log10(hi / 5)));
    if (hi / step > 20) step *= 5;
    else if (hi / step > 10) step *= 2;
    return step;
}

/* hi rounded up to a whole tick, so the top grid line is the plot's top. */
static double round_up(double hi)
{
    double step = tick_step(hi);
    return ceil(hi / step * (1 - 1e-12)) * step;
}

/* A y scale: value -> pixel, linear from 0 or logarithmic over whole decades. */
typedef struct scale {
    bool log;
    double lo, hi;                 /* linear: 0..hi; log: log10 bounds */
} scale;

static double scale_y(const scale *s, double v)
{
    double f;
    if (s->log) f = v > 0 ? (log10(v) - s->lo) / (s->hi - s->lo) : 0;
    else f = v / s->hi;
    if (f < 0) f = 0;
    if (f > 1) f = 1;
    return TOP + PLOT_H * (1 - f);
}

/* Linear: 0 to the largest value rounded up to a 1-2-5 step (a 0 chart spans 0..1).
 * Log: the decades around the positive values. */
static scale scale_of(const double *v, int n, bool log_y)
{
    double min = INFINITY, max = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] > max) max = v[i];
        if (v[i] > 0 && v[i] < min) min = v[i];
    }
    if (log_y) {
        double lo = isfinite(min) ? floor(log10(min)) : 0, hi = max > 0 ? ceil(log10(max)) : 1;
        return (scale){true, lo, hi > lo ? hi : lo + 1};
    }
    return (scale){false, 0, round_up(max > 0 ? max : 1)};
}

static void text_escaped(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

static void text_at(FILE *out, double x, double y, const char *anchor, const char *extra,
                    const char *s)
{
    fprintf(out, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\"%s>", x, y, anchor, extra);
    text_escaped(out, s);
    fputs("</text>\n", out);
}

static void header(FILE *out, const char *title, const char *ylabel)
{
    int w = LEFT + PLOT_W + LEGEND_W, h = TOP + PLOT_H + BOTTOM;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h, w, h, w, h);
    text_at(out, LEFT + PLOT_W / 2.0, 22, "middle", " font-size=\"15\"", title);
    char rot[96];
    snprintf(rot, sizeof rot, " transform=\"rotate(-90 16 %.2f)\"", TOP + PLOT_H / 2.0);
    text_at(out, 16, TOP + PLOT_H / 2.0, "middle", rot, ylabel);
}

static void y_tick(FILE *out, const scale *s, double v)
{
    char label[32];
    double y = scale_y(s, v);
    snprintf(label, sizeof label, "%g", v);
    fprintf(out, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#ddd\"/>\n",
            LEFT, y, LEFT + PLOT_W, y);
    text_at(out, LEFT - 6, y + 4, "end", "", label);
}

/* Grid lines and labels, then the axes over them. */
static void y_axis(FILE *out, const scale *s)
{
    if (s->log) {
        for (double e = s->lo; e <= s->hi + 1e-9; e++) y_tick(out, s, pow(10, e));
    } else {
        double step = tick_step(s->hi);
        for (double v = 0; v <= s->hi * (1 + 1e-9); v += step) y_tick(out, s, v);
    }
    fprintf(out, "<path d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"black\"/>\n", LEFT, TOP,
            TOP + PLOT_H, LEFT + PLOT_W);
}

static void legend(FILE *out, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        double y = TOP + 8 + 18.0 * i;
        fprintf(out, "<rect x=\"%d\" y=\"%.2f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
                LEFT + PLOT_W + 16, y, palette[i % NCOLOURS]);
        text_at(out, LEFT + PLOT_W + 34, y + 10, "start", "", names[i]);
    }
}

static int footer(FILE *out)
{
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}

static void bar(FILE *out, const svg_bars *b, const scale *s, int g, int k, double x, double w)
{
    int i = g * b->nseries + k;
    double y = scale_y(s, b->value[i]);
    fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
            "<title>", x, y, w, TOP + PLOT_H - y, palette[k % NCOLOURS]);
    text_escaped(out, b->series[k]);
    fprintf(out, ": %g</title></rect>\n", b->value[i]);
    if (!b->lo || !b->hi) return;
    double cx = x + w / 2, y0 = scale_y(s, b->lo[i]), y1 = scale_y(s, b->hi[i]);
    fprintf(out, "<path d=\"M%.2f %.2f V%.2f M%.2f %.2f h%.2f M%.2f %.2f h%.2f\" "
            "stroke=\"black\"/>\n", cx, y0, y1, cx - w / 4, y0, w / 2, cx - w / 4, y1, w / 2);
}

int svg_write_bars(FILE *out, const svg_bars *b)
{
    int n = b->ngroups * b->nseries;
    const double *top = b->hi ? b->hi : b->value;
    scale s = scale_of(top, n, b->log_y);
    if (b->log_y) {                /* the floor must reach below the smallest bar too */
        scale lo = scale_of(b->lo ? b->lo : b->value, n, true);
        if (lo.lo < s.lo) s.lo = lo.lo;
    }
    header(out, b->title, b->ylabel);
    y_axis(out, &s);
    double gw = (double)PLOT_W / (b->ngroups ? b->ngroups : 1), bw = gw * 0.8 / (b->nseries ? b->nseries : 1);
    for (int g = 0; g < b->ngroups; g++) {
        for (int k = 0; k < b->nseries; k++) bar(out, b, &s, g, k, LEFT + g * gw + gw * 0.1 + k * bw, bw);
        text_at(out, LEFT + (g + 0.5) * gw, TOP + PLOT_H + 18, "middle", "", b->groups[g]);
    }
    legend(out, b->series, b->nseries);
    return footer(out);
}

static double max_of(const double *const *v, const int *n, int nseries)
{
    double m = 0;
    for (int k = 0; k < nseries; k++)
        for (int i = 0; i < n[k]; i++) if (v[k][i] > m) m = v[k][i];
    return m;
}

static void x_axis(FILE *out, double xmax, const char *xlabel)
{
    double step = tick_step(xmax);
    for (double v = 0; v <= xmax * (1 + 1e-9); v += step) {
        char label[32];
        snprintf(label, sizeof label, "%g", v);
        text_at(out, LEFT + PLOT_W * v / xmax, TOP + PLOT_H + 18, "middle", "", label);
    }
    text_at(out, LEFT + PLOT_W / 2.0, TOP + PLOT_H + 42, "middle", "", xlabel);
}

static void step_line(FILE *out, const svg_steps *st, const scale *s, double xmax, int k)
{
    fprintf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"M%d %.2f",
            palette[k % NCOLOURS], LEFT, scale_y(s, 0));
    for (int i = 0; i < st->npoints[k]; i++) {
        double x = LEFT + PLOT_W * st->x[k][i] / xmax;
        fprintf(out, " H%.2f V%.2f", x, scale_y(s, st->y[k][i]));
    }
    fprintf(out, " H%d\"/>\n", LEFT + PLOT_W);
}

int svg_write_steps(FILE *out, const svg_steps *st)
{
    double ymax = max_of(st->y, st->npoints, st->nseries), x = max_of(st->x, st->npoints, st->nseries);
    double xmax = round_up(x > 0 ? x : 1);          /* a run with no samples spans 0..1 */
    scale s = {false, 0, round_up(ymax > 0 ? ymax : 1)};
    header(out, st->title, st->ylabel);
    y_axis(out, &s);
    x_axis(out, xmax, st->xlabel);
    for (int k = 0; k < st->nseries; k++) step_line(out, st, &s, xmax, k);
    legend(out, st->series, st->nseries);
    return footer(out);
}

/* fp_report.c — the footprint study's CSV and Markdown tables (see fp_report.h). */
#include "tools/common/fp_report.h"
#include "tools/common/fp_papers.h"
#include "tools/common/fp_plots.h"

#include <string.h>

const char fp_csv_header[] =
    "scene,pipeline,scheduler,workers,width,height,repeats,"
    "frame_ms_median,frame_ms_min,frame_ms_max,"
    "peak_bytes_median,peak_bytes_min,peak_bytes_max,"
    "avg_bytes_median,avg_bytes_min,avg_bytes_max,occupancy_median,"
    "application_share,queue_share,scheduling_share,idle_share";

/* A CSV field, quoted (RFC 4180) when it holds a comma, quote or line break: a graph
 * file's name may. */
static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) { fputs(s, out); return; }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void csv_spread(FILE *out, const fp_spread *v, const char *fmt)
{
    fprintf(out, ",");
    fprintf(out, fmt, v->median);
    fprintf(out, ",");
    fprintf(out, fmt, v->min);
    fprintf(out, ",");
    fprintf(out, fmt, v->max);
}

static void csv_row(FILE *out, const fp_study *s, int sc, int p, int w, int k)
{
    const fp_summary *c = &s->cells[fp_cell_index(s, sc, p, w, k)];
    csv_field(out, s->scenes[sc]);
    fputc(',', out);
    csv_field(out, s->pipelines[p]);
    fprintf(out, ",%s,%u,%d,%d,%d", s->schedulers[k], s->workers[w], s->width, s->height, s->repeats);
    csv_spread(out, &c->ms, "%.3f");
    csv_spread(out, &c->peak_bytes, "%.0f");
    csv_spread(out, &c->avg_bytes, "%.0f");
    fprintf(out, ",%.4f", c->occupancy.median);
    for (int i = 0; i < FP_NSHARES; i++) fprintf(out, ",%.4f", c->share[i]);
    fputc('\n', out);
}

int fp_write_csv(FILE *out, const fp_study *s)
{
    fprintf(out, "%s\n", fp_csv_header);
    for (int sc = 0; sc < s->nscenes; sc++)
        for (int p = 0; p < s->npipelines; p++)
            for (int w = 0; w < s->nworkers; w++)
                for (int k = 0; k < s->nschedulers; k++) csv_row(out, s, sc, p, w, k);
    return ferror(out) ? -1 : 0;
}

/* Text in a Markdown table cell: a '|' would end the cell. */
static void md_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputc('\\', out);
        fputc(*s, out);
    }
}

static void md_spread(FILE *out, const fp_spread *v, double unit, const char *fmt)
{
    fputs(" | ", out);
    fprintf(out, fmt, v->median / unit);
    fputs(" (", out);
    fprintf(out, fmt, v->min / unit);
    fputs("-", out);
    fprintf(out, fmt, v->max / unit);
    fputs(")", out);
}

static void md_row(FILE *out, const fp_study *s, int sc, int p, int w, int k)
{
    const fp_summary *c = &s->cells[fp_cell_index(s, sc, p, w, k)];
    fputs("| ", out);
    md_text(out, s->scenes[sc]);
    fputs(" | ", out);
    md_text(out, s->pipelines[p]);
    fprintf(out, " | %s | %u", s->schedulers[k], s->workers[w]);
    md_spread(out, &c->ms, 1, "%.1f");
    md_spread(out, &c->peak_bytes, 1024, "%.0f");
    md_spread(out, &c->avg_bytes, 1024, "%.0f");
    fprintf(out, " | %.0f%% | %.0f / %.0f / %.0f / %.0f |\n", c->occupancy.median * 100,
            c->share[FP_APP] * 100, c->share[FP_QUEUE] * 100, c->share[FP_SCHED] * 100,
            c->share[FP_IDLE] * 100);
}

static void md_results(FILE *out, const fp_study *s)
{
    fprintf(out, "## Measured\n\n"
            "%dx%d, %d measured frame(s) per configuration after a warm-up; median (smallest-"
            "largest frame). KiB = 1024 bytes. Peak: the largest sampled sum over all queues of "
            "packets held x packet size in a frame; avg: that sum averaged over the frame's "
            "time. Time shares: of all workers' time over the repeats (gr_stats per_worker).%s\n\n"
            "| scene | pipeline | scheduler | %s | frame ms | peak KiB | avg KiB | "
            "occupancy | application / queue / scheduling / idle %% |\n"
            "|---|---|---|---|---|---|---|---|---|\n", s->width, s->height, s->repeats,
            s->simulated ? " Simulated (--simulate): the graph's run in virtual time on "
            "virtual workers, frame ms = that plus what the rest of the frame took here." : "",
            fp_workers_word(s, 2));
    for (int sc = 0; sc < s->nscenes; sc++)
        for (int p = 0; p < s->npipelines; p++)
            for (int w = 0; w < s->nworkers; w++)
                for (int k = 0; k < s->nschedulers; k++) md_row(out, s, sc, p, w, k);
}

static void md_plots(FILE *out, const fp_study *s)
{
    char name[FP_PLOT_NAME];
    fprintf(out, "\n## Plots\n\n");
    for (int p = 0; p < s->npipelines; p++)
        for (int w = 0; w < s->nworkers; w++)
            for (int kind = 0; kind < FP_NBAR_PLOTS; kind++) {
                fp_bar_plot_name(name, (fp_bar_plot)kind, s->pipelines[p], s->workers[w]);
                fprintf(out, "![%s](%s)\n\n", name, name);
            }
    for (int p = 0; p < s->npipelines; p++)
        for (int k = 0; k < s->nschedulers; k++) {
            fp_depth_plot_name(name, s, p, k);
            fprintf(out, "![%s](%s)\n\n", name, name);
        }
}

int fp_write_markdown(FILE *out, const fp_study *s)
{
    fprintf(out, "# Queue footprint by scheduler (gramps-footprint)\n\n");
    md_results(out, s);
    fp_papers_markdown(out, s);
    md_plots(out, s);
    return ferror(out) ? -1 : 0;
}

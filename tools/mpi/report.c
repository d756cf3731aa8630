/* report.c — rank 0's statistics and summary (see report.h). */
#include "tools/mpi/report.h"

#include "tools/common/json_out.h"
#include "tools/common/measure.h"

#include <stdlib.h>

typedef struct totals { double busy_ms, comm_ms, bytes, gathered; } totals;

static totals totals_of(const mp_report *rep)
{
    totals t = {0};
    for (int i = 0; i < rep->nranks; i++) {
        t.busy_ms += rep->works[i].busy_ms;
        t.comm_ms += rep->works[i].comm_ms;
        t.bytes += rep->works[i].bytes_sent;
        if (i > 0) t.gathered += rep->works[i].bytes_sent;   /* everything ranks send goes to 0 */
    }
    return t;
}

static double share(const totals *t)
{
    return t->busy_ms + t->comm_ms > 0 ? t->comm_ms / (t->busy_ms + t->comm_ms) : 0;
}

static double median_frame_ms(const mp_report *rep)
{
    int n = rep->plan->frames;
    double *v = malloc((size_t)n * sizeof *v);
    if (!v) return 0;
    for (int i = 0; i < n; i++) v[i] = mp_frames_ms(rep->frames, i);
    qsort(v, (size_t)n, sizeof *v, io_cmp_double);
    double m = io_median_sorted(v, (size_t)n);
    free(v);
    return m;
}

static void write_frames(const mp_report *rep, FILE *f)
{
    fprintf(f, "\"frame_ms\": {\"median\": %.3f, \"frames\": [", median_frame_ms(rep));
    for (int i = 0; i < rep->plan->frames; i++)
        fprintf(f, "%s%.3f", i ? ", " : "", mp_frames_ms(rep->frames, i));
    fprintf(f, "]},\n\"wall_ms\": %.3f,\n", rep->wall_ms);
}

static void write_ranks(const mp_report *rep, FILE *f)
{
    fprintf(f, "\"ranks\": [");
    for (int i = 0; i < rep->nranks; i++) {
        const mp_work *w = &rep->works[i];
        fprintf(f, "%s\n  {\"rank\": %d, \"tiles\": %.0f, \"busy_ms\": %.3f, \"comm_ms\": %.3f, "
                "\"peak_footprint_bytes\": %.0f, \"bytes_sent\": %.0f}", i ? "," : "", i, w->chunks,
                w->busy_ms, w->comm_ms, w->peak_footprint, w->bytes_sent);
    }
    fprintf(f, "\n],\n");
}

static void write_communication(const mp_report *rep, FILE *f)
{
    totals t = totals_of(rep);
    fprintf(f, "\"communication\": {\"bytes_total\": %.0f, \"bytes_gathered\": %.0f, "
            "\"bytes_gathered_per_frame\": %.1f, \"image_bytes_per_frame\": %.0f, "
            "\"comm_ms\": %.3f, \"busy_ms\": %.3f, \"share\": %.4f}\n", t.bytes, t.gathered,
            t.gathered / rep->plan->frames, (double)rep->plan->width * rep->plan->height * 4,
            t.comm_ms, t.busy_ms, share(&t));
}

void mp_write_stats(const mp_report *rep, FILE *f)
{
    const mp_plan *p = rep->plan;
    fprintf(f, "{\n\"scene\": ");
    io_json_string(f, rep->r->scene->name);
    fprintf(f, ",\n\"pipeline\": ");
    io_json_string(f, mp_renderer_graph_name(rep->r));
    fprintf(f, ",\n\"size\": [%d, %d],\n\"triangles\": %zu,\n\"nranks\": %d,\n\"handout\": \"%s\",\n"
            "\"chunk_rows\": %d,\n\"chunks_per_frame\": %d,\n\"frames\": %d,\n", p->width, p->height,
            rep->r->geo.ntriangles, rep->nranks, rep->o->handout == MP_STATIC ? "static" : "dynamic",
            p->rows, p->per_frame, p->frames);
    mp_counters_write_json(&rep->r->counters, f);
    write_frames(rep, f);
    write_ranks(rep, f);
    write_communication(rep, f);
    fprintf(f, "}\n");
}

void mp_summary(const mp_report *rep, FILE *f)
{
    const mp_plan *p = rep->plan;
    totals t = totals_of(rep);
    fprintf(f, "%s: %s %dx%d, %zu triangles, %d ranks, %s handout, %d chunks of %d rows per frame\n",
            rep->r->scene->name, mp_renderer_graph_name(rep->r), p->width, p->height,
            rep->r->geo.ntriangles, rep->nranks, rep->o->handout == MP_STATIC ? "static" : "dynamic",
            p->per_frame, p->rows);
    fprintf(f, "frame %.2f ms (median of %d), %.0f bytes gathered per frame, communication "
            "%.1f%% of rank time\n", median_frame_ms(rep), p->frames, t.gathered / p->frames,
            100 * share(&t));
    for (int i = 0; i < rep->nranks; i++)
        fprintf(f, "rank %d: %.0f chunks, busy %.1f ms, communication %.1f ms, peak footprint "
                "%.1f KiB, %.0f bytes sent\n", i, rep->works[i].chunks, rep->works[i].busy_ms,
                rep->works[i].comm_ms, rep->works[i].peak_footprint / 1024, rep->works[i].bytes_sent);
}

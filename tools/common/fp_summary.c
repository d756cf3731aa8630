/* fp_summary.c — medians, spreads and time shares over a configuration's repeats. */
#include "tools/common/fp_summary.h"
#include "tools/common/measure.h"

#include <stdlib.h>

static fp_spread spread(const fp_frame *frames, int n, double (*figure)(const fp_frame *))
{
    double v[n];
    for (int i = 0; i < n; i++) v[i] = figure(&frames[i]);
    qsort(v, (size_t)n, sizeof *v, io_cmp_double);
    return (fp_spread){io_median_sorted(v, (size_t)n), v[0], v[n - 1]};
}

static double ms_of(const fp_frame *f) { return f->ms; }
static double peak_of(const fp_frame *f) { return f->peak_bytes; }
static double avg_of(const fp_frame *f) { return f->avg_bytes; }
static double occupancy_of(const fp_frame *f) { return f->occupancy; }

fp_summary fp_summarize(const fp_frame *frames, int n)
{
    fp_summary s = {.ms = spread(frames, n, ms_of), .peak_bytes = spread(frames, n, peak_of),
                    .avg_bytes = spread(frames, n, avg_of),
                    .occupancy = spread(frames, n, occupancy_of)};
    double total = 0;
    for (int i = 0; i < n; i++) {
        s.share[FP_APP] += frames[i].app_ms;
        s.share[FP_QUEUE] += frames[i].queue_ms;
        s.share[FP_SCHED] += frames[i].sched_ms;
        s.share[FP_IDLE] += frames[i].idle_ms;
    }
    for (int k = 0; k < FP_NSHARES; k++) total += s.share[k];
    for (int k = 0; k < FP_NSHARES; k++) s.share[k] = total > 0 ? s.share[k] / total : 0;
    return s;
}

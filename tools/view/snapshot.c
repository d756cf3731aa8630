/* snapshot.c — a frame's statistics for the overlay (see snapshot.h). */
#include "tools/view/snapshot.h"

#include <stdlib.h>
#include <string.h>

/* Rays per second when the graph counts rays (every rays.* counter: primary, shadow,
 * secondary and a plugin's), else shaded fragments per second. */
static void take_rate(vw_snapshot *s, const pl_frame *f)
{
    uint64_t rays = 0;
    for (int i = 0; i < f->ncounters; i++)
        if (!strncmp(f->counters[i].name, "rays.", 5)) rays += atomic_load(&f->counters[i].value);
    uint64_t frags = pl_frame_count(f, "fragments_shaded");
    double per_s = s->frame_ms > 0 ? 1e3 / s->frame_ms / 1e6 : 0;
    s->rate_unit = rays ? "Mrays/s" : frags ? "Mfrags/s" : NULL;
    s->rate = (double)(rays ? rays : frags) * per_s;
}

static bool take_queues(vw_snapshot *s, const gr_stats *st)
{
    s->queues = calloc((size_t)st->nqueues + 1, sizeof *s->queues);
    if (!s->queues) return false;
    for (int i = 0; i < st->nqueues; i++) {
        const gr_queue_stats *q = &st->queues[i];
        vw_queue_bar *b = &s->queues[i];
        snprintf(b->name, sizeof b->name, "%s", q->name);
        b->capacity = (uint64_t)q->capacity * (q->subqueues ? q->subqueues : 1);
        b->peak = q->peak_packets;
        b->avg = q->avg_packets;
    }
    s->nqueues = st->nqueues;
    return true;
}

static bool take_stages(vw_snapshot *s, const gr_stats *st)
{
    s->stages = calloc((size_t)st->nstages + 1, sizeof *s->stages);
    if (!s->stages) return false;
    for (int i = 0; i < st->nstages; i++) {
        snprintf(s->stages[i].name, sizeof s->stages[i].name, "%s", st->stages[i].name);
        s->stages[i].busy_ms = st->stages[i].busy_ms;
    }
    s->nstages = st->nstages;
    s->serial_share = st->serial_share;
    return true;
}

static bool take_slices(vw_snapshot *s, const gr_graph *g)
{
    size_t n = gr_journal_slices(g, NULL, 0);
    s->slices = malloc((n ? n : 1) * sizeof *s->slices);
    if (!s->slices) return false;
    s->nslices = gr_journal_slices(g, s->slices, n);
    return true;
}

bool vw_snapshot_take(vw_snapshot *s, const gr_graph *g, const pl_frame *f, double frame_ms,
                      const char *pipeline)
{
    const gr_stats *st = gr_get_stats(g);
    *s = (vw_snapshot){.aov = f->aov, .frame_ms = frame_ms};
    snprintf(s->pipeline, sizeof s->pipeline, "%s", pipeline);
    snprintf(s->scheduler, sizeof s->scheduler, "%s", gr_scheduler_of(g) ? gr_scheduler_of(g) : "");
    take_rate(s, f);
    if (!st) return true;
    s->workers = st->workers;
    s->wall_ms = st->wall_ms;
    bool ok = take_queues(s, st) && take_stages(s, st) && take_slices(s, g);
    if (!ok) vw_snapshot_free(s);
    return ok;
}

void vw_snapshot_free(vw_snapshot *s)
{
    free(s->queues);
    free(s->stages);
    free(s->slices);
    *s = (vw_snapshot){0};
}

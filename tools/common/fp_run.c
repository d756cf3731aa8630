/* fp_run.c — one configuration's frames for the footprint study (see fp_run.h). */
#include "tools/common/fp_run.h"
#include "tools/common/measure.h"
#include "tools/common/queue_table.h"

#include <stdlib.h>
#include <string.h>

/* One frame under `scheduler`; the finished graph (the caller destroys it) and its time,
 * or NULL with a message. */
static gr_graph *render(const fp_config *c, const char *scheduler, bool journal, double *ms,
                        char err[CP_ERR_MAX])
{
    gr_launch_opts launch = {.workers = c->workers, .scheduler = scheduler,
                             .journal = journal, .profile = c->profile,
                             .simulate = c->simulate ? c->workers : 0,
                             .sim_calibration = c->calibration};
    pl_frame f;
    double t0 = io_now_ms(), cpu0 = io_thread_cpu_ms();
    if (!pl_frame_init(&f, c->data, c->width, c->height, SH_AOV_COLOR, err)) return NULL;
    gr_graph *g = pl_render_frame(c->graph, &f, &launch, err);
    pl_frame_free(&f);
    *ms = io_now_ms() - t0;
    const gr_stats *st = g ? gr_get_stats(g) : NULL;
    if (st && st->simulated_workers) *ms = st->wall_ms + io_thread_cpu_ms() - cpu0;
    return g;
}

gr_profile *fp_profile(const fp_config *c, char err[CP_ERR_MAX])
{
    double ms;
    gr_graph *g = render(c, "gramps", false, &ms, err);
    gr_profile *p = g ? gr_profile_take(g) : NULL;
    if (g && !p) snprintf(err, CP_ERR_MAX, "out of memory taking the static profile");
    gr_graph_destroy(g);
    return p;
}

static fp_frame frame_of(const gr_graph *g, double ms)
{
    const gr_stats *st = gr_get_stats(g);
    fp_frame f = {.ms = ms, .peak_bytes = (double)st->peak_footprint_bytes,
                  .avg_bytes = st->avg_footprint_bytes, .occupancy = st->occupancy};
    for (unsigned i = 0; i < st->workers; i++) {
        f.app_ms += st->per_worker[i].app_ms;
        f.queue_ms += st->per_worker[i].queue_ms;
        f.sched_ms += st->per_worker[i].sched_ms;
        f.idle_ms += st->per_worker[i].idle_ms;
    }
    return f;
}

/* The calibration frame: 1 virtual worker, the same scheduler, charged as measured. */
static gr_profile *calibration(const fp_config *c, char err[CP_ERR_MAX])
{
    fp_config one = *c;
    one.workers = 1;
    one.calibration = NULL;
    double ms;
    gr_graph *g = render(&one, c->scheduler, false, &ms, err);
    gr_profile *p = g ? gr_profile_take(g) : NULL;
    if (g && !p) snprintf(err, CP_ERR_MAX, "out of memory taking the calibration profile");
    gr_graph_destroy(g);
    return p;
}

/* Frame i (-1: the warm-up) into frames[i]; the last one's queue table. */
static int one_frame(const fp_config *c, int i, int repeats, fp_frame *frames, char err[CP_ERR_MAX])
{
    double ms;
    gr_graph *g = render(c, c->scheduler, false, &ms, err);
    if (!g) return 1;
    if (!gr_get_stats(g)) {
        snprintf(err, CP_ERR_MAX, "out of memory collecting the statistics");
        gr_graph_destroy(g);
        return 1;
    }
    if (i >= 0) frames[i] = frame_of(g, ms);
    if (i == repeats - 1 && c->queues) {
        fprintf(c->queues, "\n%s\n", c->title ? c->title : "");
        qt_print(gr_get_stats(g), c->queues);
    }
    gr_graph_destroy(g);
    return 0;
}

int fp_frames(const fp_config *c, int repeats, fp_frame *frames, char err[CP_ERR_MAX])
{
    fp_config calibrated = *c;
    gr_profile *prof = NULL;
    int rc = one_frame(c, -1, repeats, frames, err);      /* the warm-up */
    if (!rc && c->simulate && !c->measured_cost && !(calibrated.calibration = prof = calibration(c, err)))
        rc = 1;
    for (int i = 0; i < repeats && !rc; i++) rc = one_frame(&calibrated, i, repeats, frames, err);
    gr_profile_free(prof);
    return rc;
}

/* The samples and the queues they index, copied out of the finished graph. */
static int copy_timeline(const gr_graph *g, fp_timeline *t)
{
    const gr_stats *st = gr_get_stats(g);
    if (!st) return 1;
    t->nqueues = st->nqueues;
    t->wall_ms = st->wall_ms;
    t->nsamples = gr_journal_depths(g, NULL, 0);
    t->names = calloc((size_t)st->nqueues + 1, sizeof *t->names);
    t->packet_bytes = calloc((size_t)st->nqueues + 1, sizeof *t->packet_bytes);
    t->samples = calloc(t->nsamples + 1, sizeof *t->samples);
    if (!t->names || !t->packet_bytes || !t->samples) return 1;
    for (int q = 0; q < st->nqueues; q++) {
        snprintf(t->names[q], sizeof t->names[q], "%s", st->queues[q].name);
        t->packet_bytes[q] = (double)st->queues[q].packet_bytes;
    }
    gr_journal_depths(g, t->samples, t->nsamples);
    return 0;
}

int fp_timeline_take(const fp_config *c, fp_timeline *t, char err[CP_ERR_MAX])
{
    double ms;
    *t = (fp_timeline){0};
    gr_graph *g = render(c, c->scheduler, true, &ms, err);
    if (!g) return 1;
    int rc = copy_timeline(g, t);
    gr_graph_destroy(g);
    if (rc) {
        snprintf(err, CP_ERR_MAX, "out of memory copying the journal");
        fp_timeline_free(t);
    }
    return rc;
}

void fp_timeline_free(fp_timeline *t)
{
    free(t->names);
    free(t->packet_bytes);
    free(t->samples);
    *t = (fp_timeline){0};
}

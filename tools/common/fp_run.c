/* fp_run.c — one configuration's frames for the footprint study (see fp_run.h). */
#include "tools/common/fp_run.h"
#include "pipelines/kept_graph.h"
#include "tools/common/measure.h"
#include "tools/common/queue_table.h"

#include <stdlib.h>
#include <string.h>

static gr_launch_opts launch_of(const fp_config *c, const char *scheduler, bool journal)
{
    return (gr_launch_opts){.workers = c->workers, .scheduler = scheduler, .journal = journal,
                            .profile = c->profile, .simulate = c->simulate ? c->workers : 0,
                            .sim_calibration = c->calibration};
}

/* A run's time: the wall clock since t0, or simulated, its virtual time plus this
 * thread's CPU time since cpu0 for the rest (set-up and tear-down). */
static double frame_ms(const gr_graph *g, double t0, double cpu0)
{
    const gr_stats *st = gr_get_stats(g);
    if (st && st->simulated_workers) return st->wall_ms + io_thread_cpu_ms() - cpu0;
    return io_now_ms() - t0;
}

/* One frame under `scheduler` in a graph built for it; the finished graph (the caller
 * destroys it) and its time, or NULL with a message. */
static gr_graph *render(const fp_config *c, const char *scheduler, bool journal, double *ms,
                        char err[CP_ERR_MAX])
{
    gr_launch_opts launch = launch_of(c, scheduler, journal);
    pl_frame f;
    double t0 = io_now_ms(), cpu0 = io_thread_cpu_ms();
    if (!pl_frame_init(&f, c->data, c->width, c->height, SH_AOV_COLOR, err)) return NULL;
    gr_graph *g = pl_render_frame(c->graph, &f, &launch, err);
    pl_frame_free(&f);
    if (g) *ms = frame_ms(g, t0, cpu0);
    return g;
}

/* One frame of c through k (which owns the graph: a configuration's frames run one graph
 * again, as gramps-render's do, and a simulated relaunch is charged against the run
 * before it, gr_launch_opts.sim_calibration); its time. NULL with a message. */
static const gr_graph *render_kept(const fp_config *c, pl_kept_graph *k, double *ms,
                                   char err[CP_ERR_MAX])
{
    gr_launch_opts launch = launch_of(c, c->scheduler, false);
    const pl_frame_spec spec = {.data = c->data, .width = c->width, .height = c->height,
                                .aov = SH_AOV_COLOR};
    double t0 = io_now_ms(), cpu0 = io_thread_cpu_ms();
    const gr_graph *g = pl_kept_graph_render(k, c->graph, &spec, &launch, err);
    if (g) *ms = frame_ms(g, t0, cpu0);
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

/* The calibration frame: 1 virtual worker, the same scheduler, charged as measured,
 * after a warm-up of its own (the frame is a relaunch, warm as the measured ones are). */
static gr_profile *calibration(const fp_config *c, pl_kept_graph *k, char err[CP_ERR_MAX])
{
    fp_config one = *c;
    one.workers = 1;
    one.calibration = NULL;
    double ms;
    const gr_graph *g = render_kept(&one, k, &ms, err);
    if (g) g = render_kept(&one, k, &ms, err);
    gr_profile *p = g ? gr_profile_take(g) : NULL;
    if (g && !p) snprintf(err, CP_ERR_MAX, "out of memory taking the calibration profile");
    return p;
}

/* Frame i (negative: a warm-up) into frames[i]; the last one's queue table. */
static int one_frame(const fp_config *c, pl_kept_graph *k, int i, int repeats, fp_frame *frames,
                     char err[CP_ERR_MAX])
{
    double ms;
    const gr_graph *g = render_kept(c, k, &ms, err);
    if (!g) return 1;
    if (!gr_get_stats(g)) {
        snprintf(err, CP_ERR_MAX, "out of memory collecting the statistics");
        return 1;
    }
    if (i >= 0) frames[i] = frame_of(g, ms);
    if (i == repeats - 1 && c->queues) {
        fprintf(c->queues, "\n%s\n", c->title ? c->title : "");
        qt_print(gr_get_stats(g), c->queues);
    }
    return 0;
}

int fp_frames(const fp_config *c, int repeats, fp_frame *frames, char err[CP_ERR_MAX])
{
    pl_kept_graph *k = pl_kept_graph_new();
    if (!k) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return 1;
    }
    fp_config calibrated = *c;
    gr_profile *prof = NULL;
    /* one virtual worker is the calibration's own configuration: charged as measured */
    const bool calibrating = c->simulate && c->workers > 1 && !c->measured_cost;
    int rc = 0;
    if (calibrating && !(calibrated.calibration = prof = calibration(c, k, err))) rc = 1;
    /* warm-ups: simulated, the second is a relaunch, so that the first measured frame
     * is charged against a warm run's costs */
    for (int i = calibrating ? -2 : -1; i < repeats && !rc; i++)
        rc = one_frame(&calibrated, k, i, repeats, frames, err);
    pl_kept_graph_free(k);
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

/* fp_run.h — the frames of one configuration of the footprint study (gramps-footprint):
 * a scene through a graph under one scheduler at one worker count, in-process through
 * pl_kept_graph_render, each frame's time, footprint, occupancy and time breakdown kept; and
 * one extra frame with the journal on, whose queue-depth samples draw the timeline.
 *
 * Data flow: gramps-footprint -> fp_frames (repeats) / fp_timeline_take (one frame) ->
 * fp_summary, fp_report, fp_plots. */
#ifndef TOOLS_FP_RUN_H
#define TOOLS_FP_RUN_H

#include "pipelines/stages.h"

#include <stdio.h>

/* One configuration: what every frame of it renders with. */
typedef struct fp_config {
    cp_graph *graph;
    pl_scene_data *data;           /* its BVH built already when the graph needs one */
    int width, height;
    const char *scheduler;
    unsigned workers;
    const gr_profile *profile;     /* static: the profiling frame's (fp_profile) */
    const gr_profile *calibration; /* simulated: fp_frames's calibration frame's */
    FILE *queues;                  /* if set: the last measured frame's per-queue table
                                      (queue_table.h) goes here, after a `title` line */
    const char *title;
    bool simulate;                 /* `workers` virtual workers on one thread (--simulate) */
    bool measured_cost;            /* simulated: tasks charged as measured, not calibrated
                                      by a 1-virtual-worker frame (--sim-cost measured) */
} fp_config;

/* One measured frame; times are summed over the workers (gr_stats.per_worker). */
typedef struct fp_frame {
    double ms;                     /* frame set-up, run and tear-down, as gramps-render times it
                                      (simulated: the run's virtual time plus this thread's
                                      CPU time for the rest, io_thread_cpu_ms) */
    double peak_bytes, avg_bytes, occupancy;
    double app_ms, queue_ms, sched_ms, idle_ms;
} fp_frame;

/* The static scheduler's profile: one frame of the same graph, scene and workers under
 * gramps (as gramps-render --scheduler static does). NULL with a message on failure. */
gr_profile *fp_profile(const fp_config *c, char err[CP_ERR_MAX]);

/* A warm-up frame, then `repeats` measured ones into frames[], all of one graph run
 * again (pl_kept_graph). Simulated at 2 or more workers, unless measured_cost, first a
 * warm-up and a frame at 1 virtual worker under the same scheduler, whose profile
 * calibrates the measured frames' costs (gr_launch_opts.sim_calibration), and two
 * warm-ups. 0, or 1 with a message. */
int fp_frames(const fp_config *c, int repeats, fp_frame *frames, char err[CP_ERR_MAX]);

/* One frame's queue depths over time: the journal's samples, with each queue's name and
 * packet size copied out of the frame's graph. */
typedef struct fp_timeline {
    int nqueues;
    char (*names)[64];
    double *packet_bytes;
    gr_depth_sample *samples;
    size_t nsamples;
    double wall_ms;
} fp_timeline;

/* Renders one frame with the journal on into t. 0, or 1 with a message. */
int fp_timeline_take(const fp_config *c, fp_timeline *t, char err[CP_ERR_MAX]);
void fp_timeline_free(fp_timeline *t);

#endif

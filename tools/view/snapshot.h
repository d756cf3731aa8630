/* snapshot.h — what the overlay shows of one finished frame, copied out of its graph's
 * statistics and journal on the render thread, so the window thread draws from its own
 * copy while the next frame runs (the graph is destroyed before that frame starts). */
#ifndef TOOLS_VIEW_SNAPSHOT_H
#define TOOLS_VIEW_SNAPSHOT_H

#include "gramps/gramps.h"
#include "pipelines/frame.h"

#define VW_NAME 40

typedef struct vw_queue_bar {
    char name[VW_NAME];
    uint64_t capacity;             /* packets: capacity x subqueues */
    uint64_t peak;                 /* most packets held at once (sampled) */
    double avg;                    /* time-averaged packets held */
} vw_queue_bar;

typedef struct vw_stage_share {
    char name[VW_NAME];
    double busy_ms;                /* time in the stage's code, all workers */
} vw_stage_share;

typedef struct vw_snapshot {
    char pipeline[VW_NAME], scheduler[VW_NAME];
    sh_aov aov;
    unsigned workers;
    double frame_ms, wall_ms;      /* frame: the whole pl_render_frame; wall: the run */
    double rate;                   /* rays or fragments per second */
    const char *rate_unit;         /* "Mrays/s", "Mfrags/s" or NULL when neither */
    vw_queue_bar *queues;
    int nqueues;
    vw_stage_share *stages;
    int nstages;
    double serial_share;           /* the singleton stages' share of the work (gr_stats) */
    gr_slice *slices;              /* the journal's, stage indexes into stages */
    size_t nslices;
} vw_snapshot;

/* Fills s from a finished frame's graph and counters; false when out of memory. */
bool vw_snapshot_take(vw_snapshot *s, const gr_graph *g, const pl_frame *f, double frame_ms,
                      const char *pipeline);
void vw_snapshot_free(vw_snapshot *s);

#endif

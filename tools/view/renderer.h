/* renderer.h — the viewer's render thread: renders frame after frame with the settings
 * the window thread last asked for, on the graph's own workers (pl_render_frame), and
 * publishes each finished image with its statistics snapshot. The window thread only
 * takes what is published, so presenting and drawing the overlay never stall a frame,
 * and a slow window only skips frames, never delays them. Except under --test-events:
 * there each frame waits until the window has taken the one before (lockstep), so the
 * synthetic input, pressed once per frame taken, is the same under any load.
 *
 * Invariants: everything under `lock` is shared (settings asked for, the published
 * frame, the thread's state); the rest belongs to the render thread once started. The
 * three image buffers (being rendered, published, the window's) are swapped, never
 * shared: each is touched by one thread at a time. */
#ifndef TOOLS_VIEW_RENDERER_H
#define TOOLS_VIEW_RENDERER_H

#include "pipelines/frame.h"
#include "tools/common/render_graph.h"
#include "tools/view/options.h"
#include "tools/view/snapshot.h"

#include <pthread.h>

/* The built-in pipelines P cycles through; -1 is the command line's graph. */
#define VW_NPIPELINES 3
extern const char *const vw_pipelines[VW_NPIPELINES];

typedef struct vw_settings {
    sc_camera camera;
    int pipeline;                  /* index into vw_pipelines, or -1 */
    sh_aov aov;
    unsigned threads;              /* 0: all hardware threads */
    const char *scheduler;         /* NULL: GRAMPS_SCHEDULER, else gramps */
} vw_settings;

typedef struct vw_renderer {
    pthread_mutex_t lock;
    vw_settings want;              /* lock: what the next frame renders with */
    bool stop;                     /* lock: the window asks the thread to end */
    bool finished, failed;         /* lock: the thread ended (after --frames, or an error) */
    uint64_t published;            /* lock: frames published so far */
    uint64_t taken;                /* lock: the last publication the window took */
    pthread_cond_t was_taken;      /* lock: signalled when `taken` or `stop` changes */
    uint8_t *front;                /* lock: the published image */
    vw_snapshot front_snap;        /* lock: its statistics */

    pthread_t thread;              /* render thread only, from here down */
    const vw_options *opts;
    sc_scene *scene;               /* its camera is set before each frame */
    pl_scene_data *data;
    rg_setup setup;                /* the graph being rendered */
    int tried_pipeline;            /* the vw_settings.pipeline last asked for, built or not */
    gr_profile *profile;           /* static scheduler: profiled under gramps, per setup */
    struct pl_kept_graph *kept;    /* the graph and frame kept across frames (kept_graph.h) */
    uint8_t *back;
    uint32_t wake_event;           /* SDL user event pushed after each publication */
} vw_renderer;

/* Starts rendering `setup` (taken over) with `initial`. false with a message if the
 * thread or its buffers cannot be made (setup is freed then too). */
bool vw_renderer_start(vw_renderer *r, const vw_options *o, sc_scene *s, pl_scene_data *d,
                       rg_setup *setup, const vw_settings *initial, uint32_t wake_event);
void vw_renderer_want(vw_renderer *r, const vw_settings *s);
/* Swaps the newest published image into *rgba (a buffer of the image's size that the
 * renderer keeps in turn) and moves its snapshot into *snap (the old one freed), when
 * one was published since `*seen`; then true and *seen updated. */
bool vw_renderer_take(vw_renderer *r, uint8_t **rgba, vw_snapshot *snap, uint64_t *seen);
/* Whether the thread has ended, and whether with an error. */
bool vw_renderer_finished(vw_renderer *r, bool *failed);
/* Asks the thread to end after its frame, joins it and frees everything it holds. */
void vw_renderer_stop(vw_renderer *r);

#endif

/* kept_graph.h — a graph built once and run for frame after frame.
 *
 * pl_render_frame builds everything anew for each frame: the graph's instance (its
 * GRAMPS graph: queues, stages, validation, packet pools), the frame and its resources
 * (depth buffers, sums, bins). A program that renders many frames of one graph (an
 * animation, the viewer, a benchmark) keeps them instead: pl_kept_graph_render builds
 * them for the first frame and, while nothing that shapes them changes (the graph's
 * description, the frame's scene data, size, AOV and lent buffers, the launch options),
 * runs the same GRAMPS graph again (gr_relaunch) on the same frame. Per frame the frame
 * takes the scene's camera again and every stage's state is made again by its create
 * hook (cp_instance_renew), so whatever a stage takes from the frame (the camera, the
 * shading environment, its resources and their clears) is this frame's: each frame's
 * image is the bytes a new graph would draw.
 *
 * Built anew each time instead: a graph with stages on a device (their device bindings
 * are made once per instance) or placed `device = auto` (each instance chooses its
 * side from the runs before). A kept frame renders the whole image: a program that
 * renders regions uses pl_render_frame. */
#ifndef PIPELINES_KEPT_GRAPH_H
#define PIPELINES_KEPT_GRAPH_H

#include "pipelines/stages.h"
#include "pipelines/surface.h"

/* The frame a render draws: what pl_frame_init and the pl_frame_use_* calls take. */
typedef struct pl_frame_spec {
    pl_scene_data *data;              /* its scene's camera is read at every render */
    int width, height;
    sh_aov aov;
    uint32_t *color;                  /* the caller's image to draw into (pl_frame_use_color),
                                         or NULL: the frame's own */
    float *hdr;                       /* pl_frame_use_hdr's pixels, or NULL */
    pl_surface *surface;              /* pl_frame_use_surface's pixels, or NULL */
} pl_frame_spec;

typedef struct pl_kept_graph pl_kept_graph;

GR_API pl_kept_graph *pl_kept_graph_new(void);   /* NULL when out of memory */
GR_API void pl_kept_graph_free(pl_kept_graph *k);
/* Frees what k keeps (the next render builds anew): call it before freeing or changing
 * the registry of the graph it renders (a plugin's stage types go with it), or the
 * scene data. */
GR_API void pl_kept_graph_forget(pl_kept_graph *k);

/* One frame of graph g as pl_render_frame renders it, through the kept graph when
 * nothing that shapes it changed since the last call, else through one built now (and
 * kept). Returns the run's GRAMPS graph (statistics), which k owns: valid until the next
 * call or pl_kept_graph_free. NULL with a message in err; a failed frame drops the kept
 * graph. */
GR_API const gr_graph *pl_kept_graph_render(pl_kept_graph *k, cp_graph *g, const pl_frame_spec *spec,
                                            const gr_launch_opts *launch, char err[CP_ERR_MAX]);
/* The frame the last render drew (its image, counters, resources), until the next call;
 * NULL before the first or after a failed one. */
GR_API pl_frame *pl_kept_graph_frame(pl_kept_graph *k);
/* How many times k built a graph: 1 for a run of frames that kept its graph. */
GR_API unsigned pl_kept_graph_builds(const pl_kept_graph *k);

/* ---- the one-call renderers' (plr_render_kept, plrt_render_kept) ---------------------- */

/* A built-in graph with a program's settings (pl_render_builtin's put and cfg), its
 * scene data and a pl_kept_graph, kept across calls: the registry and graph are made
 * again only when name or cfg's bytes change, the scene data when scene, geometry or
 * BVH do. */
typedef struct pl_kept_builtin pl_kept_builtin;
GR_API pl_kept_builtin *pl_kept_builtin_new(void);   /* NULL when out of memory */
GR_API void pl_kept_builtin_free(pl_kept_builtin *k);
/* Frees the kept scene data, graph run and frame: call it before freeing a scene it
 * rendered (scenes are told apart by their addresses, which a new one may reuse). */
GR_API void pl_kept_builtin_forget(pl_kept_builtin *k);

typedef struct pl_builtin_frame {
    const char *name;                 /* the built-in graph */
    pl_put_fn put;                    /* applies cfg to it, as pl_render_builtin */
    const void *cfg;
    size_t cfg_bytes;
    const sc_scene *scene;
    const sc_geometry *geo;
    const rt_bvh *bvh;                /* NULL: built on first use */
    int width, height;
    sh_aov aov;
    uint32_t *color;                  /* drawn into (width x height RGBA8) */
} pl_builtin_frame;

/* One frame (pl_kept_graph_render's rules); the graph is k's. NULL with a message. */
GR_API const gr_graph *pl_kept_builtin_render(pl_kept_builtin *k, const pl_builtin_frame *b,
                                              const gr_launch_opts *launch, char err[CP_ERR_MAX]);
GR_API pl_frame *pl_kept_builtin_frame(pl_kept_builtin *k);   /* the last frame's, or NULL */

#endif

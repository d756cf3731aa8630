/* stages.h — the renderers' stage library: registering the built-in stage types and
 * formats, the built-in graphs (the .graph files of pipelines/graphs, compiled in), and the
 * variables graph files may use ($width, $height, $workers, $tiles...).
 *
 * Data flow: program -> pl_registry_new -> cp_graph (pl_builtin_graph or a file) ->
 * pl_render_frame per frame -> image and statistics. */
#ifndef PIPELINES_STAGES_H
#define PIPELINES_STAGES_H

#include "compose/compose.h"
#include "pipelines/frame.h"

/* Each family's frame resources (before any family's stages: stage types name the
 * resources they use, and the hybrid's and raster.ztile use the ray tracer's sums), then
 * its formats and stage types. */
GR_API int pl_register_raster_resources(cp_registry *r, char err[CP_ERR_MAX]);
GR_API int pl_register_raytrace_resources(cp_registry *r, char err[CP_ERR_MAX]);
GR_API int pl_register_raytrace_stages(cp_registry *r, char err[CP_ERR_MAX]);
GR_API int pl_register_raster_stages(cp_registry *r, char err[CP_ERR_MAX]);
GR_API int pl_register_hybrid_stages(cp_registry *r, char err[CP_ERR_MAX]);

/* A registry holding every built-in stage type and format. NULL (message in err) only
 * when out of memory. */
GR_API cp_registry *pl_registry_new(char err[CP_ERR_MAX]);

/* The text of a built-in graph ("raster", "raster-ordered", "raster-parallel", "raytrace",
 * "hybrid", "hybrid-visibility", and those that add image-space stages to one: "raster-tonemap",
 * "raster-fxaa", "raytrace-tonemap"), or NULL. */
GR_API const char *pl_builtin_graph(const char *name);

/* Loads the built-in graph `builtin` (path NULL) or the graph file `path` over what g
 * holds (cp_graph_layer, with the built-in graphs as the names a `base` may give): a
 * file may hold only what it adds to its base (stages, edits, overrides), and a program
 * layers files in turn. Each file's plugins are loaded into `plugins` (NULL: none). 0,
 * or -1 with a message naming the file, line or name. */
GR_API int pl_graph_load(cp_graph *g, cp_registry *plugins, const char *builtin, const char *path,
                         char err[CP_ERR_MAX]);

/* Variables for $name values, from the frame and launch settings:
 *   width, height   the image size
 *   workers         the worker count (hardware threads when 0)
 *   default_groups  raster IA/VS groups by default: workers, at most PLR_DEFAULT_GROUPS_MAX
 *   default_tile    the sort-middle raster graph's tile edge by default: PLR_LARGE_TILE
 *                   while the image has PLR_TILES_PER_WORKER such tiles per worker, else
 *                   PLR_SMALL_TILE
 *   tiles           framebuffer tiles for the graph's `tile` setting (raster queue sets)
 *   default_bands   Blend bands: a power of two, one per row of `tile` tiles, at most
 *                   PL_MAX_DEFAULT_BANDS */
#define PL_MAX_DEFAULT_BANDS 32
typedef struct pl_vars_ctx {
    const cp_graph *graph;
    int width, height;                /* the frame's */
    unsigned workers;
} pl_vars_ctx;

GR_API cp_vars pl_vars(pl_vars_ctx *ctx);

/* The graph's `tile` setting through its variables; 0 when it has none. A tile that is
 * not a positive number or is larger than any image counts as one image-sized tile
 * here, so that sums over tiles cannot overflow and the graph still expands: the stages
 * that read `tile` then refuse it, naming it. */
GR_API long pl_graph_tile(const pl_vars_ctx *ctx);

/* Does a stage of the graph read the sinks' linear colour ("hdr-color": an image-space
 * stage, which declares "post")? pl_render_frame then sets the frame's hdr. */
GR_API bool pl_graph_reads_hdr(const cp_graph *g, const cp_vars *vars);

/* One frame through a graph: instantiates it for the frame, runs it on `launch`'s
 * workers and returns the finished GRAMPS graph (statistics; the caller destroys it),
 * or NULL with a message. The image is pl_frame_image(frame). */
GR_API gr_graph *pl_render_frame(cp_graph *g, pl_frame *frame, const gr_launch_opts *launch,
                          char err[CP_ERR_MAX]);

/* The same for the built-in graph `name` with a program's settings applied first by
 * put(g, cfg), as `--set` would apply them (plr_render and plrt_render pass their
 * configs this way). */
typedef int (*pl_put_fn)(cp_graph *g, const void *cfg, char err[CP_ERR_MAX]);
GR_API gr_graph *pl_render_builtin(const char *name, pl_put_fn put, const void *cfg, pl_frame *frame,
                            const gr_launch_opts *launch, char err[CP_ERR_MAX]);

#endif

/* raster.h — the Direct3D-like rasterization pipeline as GRAMPS graphs. The default
 * (pipelines/graphs/raster.graph) sorts in the middle and has no serial stage:
 *
 *   IA[g] -> VS[g] -> Bin[g] -> Tile-Shade[tile]
 *
 * IA groups are Thread stages; the VS (Shader) transforms, clip-tests and sets up its
 * triangles (rasterizer/); each group's Bin sends them to the framebuffer tiles they
 * touch through a queue set; Tile-Shade, a Thread stage instanced per tile, resolves
 * visibility as triangles arrive in any order (nearest depth, equal depths to the
 * smaller primitive id: what the draw-order `less` test keeps) and, once every group
 * has finished, shades each visible pixel once.
 *
 * PLR_ORDERED is the thesis' sort-last graph (Fig. 4.1, raster-ordered.graph):
 *
 *   IA[g] -> VS[g] -> Reorder -> Rast -> PS -> OM[tile]
 *
 * Reorder, a Thread singleton, restores draw order; Rast, a Fixed-function singleton,
 * walks the tiles each triangle touches, skips what the coarse depth test hides and finds
 * covered pixels; the PS (Shader) computes depth and weights, tests early-Z and shades;
 * the OM, instanced per tile, depth-tests and writes, in strict primitive order (its
 * subqueue is a reorder buffer). PLR_PARALLEL splits its Rast: a Setup/Bin singleton
 * sends each set-up triangle to every tile it touches; a Rast instanced per tile
 * rasterizes its tile and leads the ordered chain for that tile. All three give the
 * same image, bit for bit, for any number of workers. */
#ifndef PIPELINES_RASTER_H
#define PIPELINES_RASTER_H

#include "gramps/gramps.h"
#include "scenes/camera.h"
#include "shaders/color.h"

/* The default group count's cap. A group is two stages, and every worker keeps a deque
 * per stage and scans them all when stealing, so groups = workers costs workers^2
 * (bunny at 64x64, 256 workers on 2 cores: 6.6 s and 124 MB with 256 groups, 0.2 s
 * and 35 MB with 16). More groups add little: IA only deals batches, and VS is a Shader
 * whose tasks any worker runs whatever the group count; Reorder takes them one by one. */
#define PLR_DEFAULT_GROUPS_MAX 16
/* $default_tile (pipelines/stages.h): the larger edge while the image has this many
 * such tiles per worker */
#define PLR_LARGE_TILE 128
#define PLR_SMALL_TILE 64
#define PLR_TILES_PER_WORKER 16

/* Which graph: sort-middle (raster.graph), the thesis' sort-last one
 * (raster-ordered.graph), or that one with its Rast split per tile (raster-parallel). */
typedef enum plr_graph { PLR_TILED, PLR_ORDERED, PLR_PARALLEL } plr_graph;

typedef struct plr_config {
    int width, height;
    int tile;                      /* framebuffer tile edge in pixels (default 0: the
                                      graph's, raster.graph's $default_tile, 64 in the
                                      ordered graphs) */
    int groups;                    /* IA/VS groups, 1..256 (0: one per worker, at most
                                      PLR_DEFAULT_GROUPS_MAX) */
    int batch;                     /* triangles per IA/VS packet (default 0: the
                                      graph's, 128 in raster.graph, 64 in the ordered
                                      graphs) */
    plr_graph graph;               /* default PLR_TILED */
    uint32_t frag_capacity;        /* ordered graphs: Rast -> PS queue, packets (default 64) */
    uint32_t tile_capacity;        /* ordered graphs: per-tile OM subqueue (default 8) */
    bool coarse_z;                 /* ordered graphs: skip triangles hidden per 8x8 block
                                      (default on) */
    int msaa;                      /* samples per pixel: 1 (default), 4 or 8 */
    sh_aov aov;
    unsigned workers;              /* 0: all hardware threads */
    /* Runtime options besides the worker count (scheduler, journal, profile...): copied
     * into gr_launch with `workers` set from above. Zero: the runtime's defaults. */
    gr_launch_opts launch;
} plr_config;

typedef struct plr_counts {
    uint64_t triangles_in, triangles_rasterized, fragments;
    uint64_t coarse_z_culled;      /* triangle-tile pairs skipped by the coarse depth test */
} plr_counts;

GR_API void plr_config_default(plr_config *c);

/* Renders into rgba (width*height*4); returns the finished graph (for statistics; the
 * caller destroys it) or NULL with a message in err. */
GR_API gr_graph *plr_render(const sc_scene *scene, const sc_geometry *geo, const plr_config *cfg,
                     uint8_t *rgba, plr_counts *counts, char err[SC_ERR_MAX]);
/* The same frame after frame (a benchmark's, an animation's): the graph is built on the
 * first call and run again on the next while cfg, scene, geo and rgba stay (the scene's
 * camera may change; pipelines/kept_graph.h), kept in `keep` (pl_kept_builtin_new),
 * which owns the returned graph: valid until the next call or pl_kept_builtin_free.
 * Before freeing the scene, pl_kept_builtin_forget(keep). */
typedef struct pl_kept_builtin pl_kept_builtin;
GR_API const gr_graph *plr_render_kept(pl_kept_builtin *keep, const sc_scene *scene,
                                       const sc_geometry *geo, const plr_config *cfg, uint8_t *rgba,
                                       plr_counts *counts, char err[SC_ERR_MAX]);

#endif

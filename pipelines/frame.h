/* frame.h — the frame object every renderer stage reads and writes: the scene and its
 * acceleration structures, the image being made and its side buffers, and named
 * counters. Stages get it from cp_stage_init.frame (compose/compose.h) and keep only
 * their own small state.
 *
 * Buffers are made on first request, by the stages' create hooks (before the run, on
 * one thread), so a graph pays only for what its stages use: the raster OM asks for
 * the depth buffer, the ray tracer's Blend for the fixed-point accumulator.
 *
 * Data flow: program -> pl_scene_data (scene, geometry, BVH; kept across frames) ->
 * pl_frame per frame -> graph instance -> pl_frame_image. */
#ifndef PIPELINES_FRAME_H
#define PIPELINES_FRAME_H

#include "scenes/camera.h"
#include "shaders/color.h"
#include "pipelines/raster/hiz.h"
#include "raytracer/bvh.h"
#include "shaders/ray_shading.h"
#include "shaders/raster_shading.h"

#include <stdatomic.h>

/* What a scene needs for any number of frames; the BVH is built on first use, on
 * gr_parallel_parts(build_threads) threads at once (build_threads 0, as
 * pl_scene_data_init sets it: one per online CPU; the tree is the same for any count). */
typedef struct pl_scene_data {
    const sc_scene *scene;
    const sc_geometry *geo;
    rt_bvh *bvh;
    bool own_bvh;
    unsigned build_threads;
} pl_scene_data;

void pl_scene_data_init(pl_scene_data *d, const sc_scene *s, const sc_geometry *g);
/* Uses a BVH the caller built (not freed by pl_scene_data_free). */
void pl_scene_data_set_bvh(pl_scene_data *d, const rt_bvh *bvh);
void pl_scene_data_free(pl_scene_data *d);
/* The BVH, built now if it was not (NULL when out of memory). */
const rt_bvh *pl_scene_data_bvh(pl_scene_data *d);

#define PL_MAX_IMAGE_SIDE 16384           /* pixels, each side of a frame */
#define PL_MAX_COUNTERS 32
#define PL_COUNTER_NAME 48

typedef struct pl_counter {
    char name[PL_COUNTER_NAME];
    _Atomic(uint64_t) value;
} pl_counter;

#define PL_MAX_CURSORS PL_MAX_COUNTERS

/* A position the copies of one replicated stage take work from. */
typedef struct pl_cursor {
    _Atomic(uint32_t) next;
    char name[PL_COUNTER_NAME];
} pl_cursor;

/* The fixed point the ray tracer's stages sum contributions in: 24 fraction bits. */
#define PL_FIXED_ONE 16777216.0

/* A depth layer: depth and visible primitive + 1 per pixel over the whole image, private
 * to the stage copy named `owner` (raster.zraster, one per IA/VS group), which clears
 * the parts it draws in; undefined elsewhere. */
typedef struct pl_depth_layer {
    float *z;
    uint32_t *vis;
    char owner[PL_COUNTER_NAME];
} pl_depth_layer;

#define PL_MAX_DEPTH_LAYERS 64

/* A rectangle of image pixels, [x0,x1) x [y0,y1). */
typedef struct pl_region { int x0, y0, x1, y1; } pl_region;

typedef struct pl_frame {
    pl_scene_data *data;
    int width, height;
    sh_aov aov;
    sc_camera_frame camera;
    /* The pixels the stages produce: the whole image unless pl_frame_set_region narrowed
     * it. A pixel inside gets the value it has in a whole-image frame, bit for bit (the
     * full image's camera; the coarse depth test only culls what the depth test would);
     * a pixel outside keeps its cleared value. */
    pl_region region;
    uint32_t *color;                  /* RGBA8 per pixel (R in the low byte) */
    bool color_borrowed;              /* the caller's (pl_frame_use_color): not freed */
    /* What pl_frame_prepare owes before the next run, as PL_CLEAR_* bits: `clears`, the
     * region of each buffer a stage asked for cleared; `fresh`, the buffers made since the
     * last run, whose pixels outside the region are cleared once. */
    unsigned clears, fresh;
    _Atomic(uint32_t) *depth;         /* the ordered raster graph's depth, float bits, cleared
                                         to FLT_MAX (sort-middle stages keep depth per tile) */
    plr_hiz hiz;                      /* coarse depth bounds over `depth` */
    bool has_hiz;
    int64_t *accum;                   /* RGB sums in PL_FIXED_ONE fixed point */
    bool tiles_clear_sums;            /* the graph's tile cutters (rt.tiler, raster.ztile)
                                         clear each tile's sums before handing it on, so
                                         rt.blend does not (set when they are made) */
    uint32_t *vis;                    /* visibility buffer: visible primitive + 1, 0 = none */
    pl_depth_layer layers[PL_MAX_DEPTH_LAYERS];   /* made by pl_frame_depth_layer */
    int nlayers;
    sh_raster_env raster_env;
    sh_ray_env ray_env;
    bool has_raster_env, has_ray_env;
    pl_counter counters[PL_MAX_COUNTERS];
    int ncounters;
    pl_cursor cursors[PL_MAX_CURSORS];
    int ncursors;
} pl_frame;

/* A frame of width x height. false (message in err) for a bad size or no memory. */
bool pl_frame_init(pl_frame *f, pl_scene_data *d, int width, int height, sh_aov aov,
                   char err[SC_ERR_MAX]);
void pl_frame_free(pl_frame *f);
/* Renders only r (before the run). false (message in err) when r is empty or not inside
 * the image. */
bool pl_frame_set_region(pl_frame *f, pl_region r, char err[SC_ERR_MAX]);

/* Buffers and environments, made on first request (create hooks only: not thread-safe).
 * NULL when out of memory. "Cleared" means before each run, by pl_frame_prepare. */
uint32_t *pl_frame_color(pl_frame *f);             /* cleared to the raster background */
/* The color buffer for a stage that writes every pixel of the region (rt.blend): unless
 * another stage asks for pl_frame_color, only pixels outside the region are cleared. */
uint32_t *pl_frame_color_overwritten(pl_frame *f);
_Atomic(uint32_t) *pl_frame_depth(pl_frame *f);    /* cleared to FLT_MAX */
plr_hiz *pl_frame_hiz(pl_frame *f);
int64_t *pl_frame_accum(pl_frame *f);              /* not cleared: rt.blend clears its bands */
uint32_t *pl_frame_vis(pl_frame *f);               /* cleared to 0 */
/* Draws into the caller's width x height pixels instead of a buffer of its own (call
 * before the run; pl_frame_free leaves them), so the image needs no copy. */
void pl_frame_use_color(pl_frame *f, uint32_t *pixels);

#define PL_CLEAR_COLOR 1u
#define PL_CLEAR_DEPTH 2u
#define PL_CLEAR_VIS 4u
/* The clears the buffers' requests owe (see pl_frame.clears), split into `parts` bands
 * of rows cleared at once (gr_parallel); pl_render_frame calls it before each run. */
void pl_frame_prepare(pl_frame *f, unsigned parts);
/* The depth layer of the stage copy named `owner` (its own, so no two copies share one;
 * the same one for every run of a graph on the frame), not cleared: width x height x 8
 * bytes and rs_depth_rect's slack. NULL when out of memory, when PL_MAX_DEPTH_LAYERS
 * are in use or when the name does not fit PL_COUNTER_NAME (two names cut to one would
 * share a layer). */
pl_depth_layer *pl_frame_depth_layer(pl_frame *f, const char *owner);
const sh_raster_env *pl_frame_raster_env(pl_frame *f);
const sh_ray_env *pl_frame_ray_env(pl_frame *f);
const rt_bvh *pl_frame_bvh(pl_frame *f);

/* The counter named `name`, made at 0 on first request (create hooks only); stages add
 * to it with relaxed atomics. NULL when PL_MAX_COUNTERS are in use. */
_Atomic(uint64_t) *pl_frame_counter(pl_frame *f, const char *name);

/* The work cursor named `name`, set to 0 (create hooks only: every copy's create runs
 * before the graph does, and a frame may serve several runs, as gramps-render-mpi's
 * chunks do, each starting from 0): the copies of a replicated stage share it to take
 * work (the next batch, say) as they go instead of dealing it out in turns. Not a
 * statistic. NULL when PL_MAX_CURSORS are in use. */
_Atomic(uint32_t) *pl_frame_cursor(pl_frame *f, const char *name);
/* Its value after the run (0 if no stage made it). */
uint64_t pl_frame_count(const pl_frame *f, const char *name);

/* The finished image: RGBA8, width * height * 4 bytes (the background where no stage
 * wrote). */
const uint8_t *pl_frame_image(pl_frame *f);

#endif

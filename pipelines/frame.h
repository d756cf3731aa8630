/* frame.h — the frame object every renderer stage reads and writes: the scene and its
 * acceleration structures, the resources the graph's stages asked for (the image and its
 * side buffers), and named counters. Stages get it from cp_stage_init.frame
 * (compose/compose.h) and keep only their own small state.
 *
 * The frame is a registry of resources: a stage type declares the ones it may use
 * (cp_stage_type.resources, their types registered like packet formats), its create hook
 * asks for them by name (pl_frame_use, before the run, on one thread), and the frame
 * makes, clears and frees them as their types say, so a graph pays only for what its
 * stages use and a plugin may bring resources of its own.
 *
 * Data flow: program -> pl_scene_data (scene, geometry, BVH; kept across frames) ->
 * pl_frame per frame -> graph instance -> pl_frame_image. */
#ifndef PIPELINES_FRAME_H
#define PIPELINES_FRAME_H

#include "scenes/camera.h"
#include "shaders/color.h"
#include "compose/compose.h"
#include "raytracer/trace.h"
#include "shaders/ray_shading.h"
#include "shaders/raster_shading.h"
#include "shaders/position_buffer.h"

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
    struct sh_hit_filter *hit_filter;     /* the BVH's any-hit filter while it is this
                                             data's (shaders/hit_filter.h), or NULL */
    /* The BVH's copy on an accelerator (the frame resource "bvh.opencl" makes it on
     * first use: uploaded once per scene, not per frame), freed with the data or when
     * the BVH is replaced; NULL: none. */
    void *device_bvh;
    void (*device_bvh_free)(void *device_bvh);
    /* The normals, indices and triangle materials there ("shading.opencl", rt.shade's
     * kernel), likewise; freed with the data. */
    void *device_shading;
    void (*device_shading_free)(void *device_shading);
    /* The geometry's vertices interleaved for the raster VS (shaders/vertex_buffer.h),
     * made on first use by the frame resource "raster-vertices"; NULL: not yet. */
    sh_vertex *raster_vertices;
    /* Its positions alone in first-use order, for the depth-only VS
     * (shaders/position_buffer.h), made on first use by "depth-positions"; NULL: not yet. */
    sh_position_buffer *depth_positions;
} pl_scene_data;

GR_API void pl_scene_data_init(pl_scene_data *d, const sc_scene *s, const sc_geometry *g);
/* Uses a BVH the caller built (not freed by pl_scene_data_free). */
GR_API void pl_scene_data_set_bvh(pl_scene_data *d, const rt_bvh *bvh);
GR_API void pl_scene_data_free(pl_scene_data *d);
/* The BVH, built now if it was not (NULL when out of memory). */
GR_API const rt_bvh *pl_scene_data_bvh(pl_scene_data *d);
/* The raster vertex buffer, made now if it was not (NULL when out of memory). */
GR_API const sh_vertex *pl_scene_data_raster_vertices(pl_scene_data *d);
/* The depth-only pass's position buffer, made now if it was not (NULL when out of memory). */
GR_API const sh_position_buffer *pl_scene_data_depth_positions(pl_scene_data *d);

#include "scenes/limits.h"
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

/* A rectangle of image pixels, [x0,x1) x [y0,y1). */
typedef struct pl_region { int x0, y0, x1, y1; } pl_region;

/* One frame resource the stages asked for (see cp_resource_type, compose/compose.h). */
typedef struct pl_resource {
    const cp_resource_type *type;
    char owner[PL_COUNTER_NAME];      /* the stage copy of a per-copy resource, else "" */
    void *data;
    bool borrowed;                    /* the caller's (pl_frame_use_color): not freed */
    bool clear_owed;                  /* a stage that writes it without overwriting it
                                         asked since the last pl_frame_prepare */
    bool fresh;                       /* made since the last pl_frame_prepare: the part
                                         outside the region is cleared once */
} pl_resource;

#define PL_MAX_RESOURCES 96
#define PL_MAX_COPIES_PER_RESOURCE 64  /* of one per-copy type (depth layers) */

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
    /* Samples per pixel of the CP_PER_SAMPLE resources (multisampling's sample buffers):
     * 1 unless the graph's stages set it (pl_frame_set_samples) before asking for one. */
    int samples;
    /* The sinks also write their linear colour, before the sRGB encode, to the resource
     * "hdr-color" (pl_hdr_resource): set before the graph's stages are made, by
     * pl_render_frame when the graph has image-space stages (they read it) and by a
     * program that writes a float image (pl_frame_use_hdr). Colour output only. */
    bool hdr;
    bool hdr_written;                 /* a sink of a graph run on the frame asked for it */
    /* The resources the graph's stages asked for, in the order they were first asked
     * for: only what a stage declared (cp_stage_type.resources) and the image. */
    pl_resource resources[PL_MAX_RESOURCES];
    int nresources;
    sh_raster_env raster_env;
    sh_ray_env ray_env;
    bool has_raster_env, has_ray_env;
    pl_counter counters[PL_MAX_COUNTERS];
    int ncounters;
    pl_cursor cursors[PL_MAX_CURSORS];
    int ncursors;
    /* The stages that decide what each pixel shows also write its surface's depth and
     * normal to the resource "surface" (pipelines/surface.h): set by a program that
     * writes float depth and normals (pl_frame_use_surface), before the stages are made. */
    bool surface;
    bool surface_written;             /* a stage of a graph run on the frame asked for it */
} pl_frame;

/* A frame of width x height. false (message in err) for a bad size or no memory. */
GR_API bool pl_frame_init(pl_frame *f, pl_scene_data *d, int width, int height, sh_aov aov,
                   char err[SC_ERR_MAX]);
GR_API void pl_frame_free(pl_frame *f);
/* Renders only r (before the run). false (message in err) when r is empty or not inside
 * the image. */
GR_API bool pl_frame_set_region(pl_frame *f, pl_region r, char err[SC_ERR_MAX]);

/* ---- resources ------------------------------------------------------------------------ */

/* The resources every renderer may share: the image ("color", RGBA8 with R in the low
 * byte, cleared to the scene's background), the scene's BVH ("bvh", built on first
 * request, the scene data's), its triangles in draw order ("triangles": declared by the
 * stages whose work is every triangle each run, a raster front end) and the scene's
 * textures ("textures": declared by the stages whose shading samples them). Registered
 * by pl_registry_new with each family's own. */
GR_API int pl_register_frame_resources(cp_registry *r, char err[CP_ERR_MAX]);
extern GR_API const cp_resource_type pl_color_resource;
/* "hdr-color": RGBA float per pixel (R first), linear, cleared to the background. */
extern GR_API const cp_resource_type pl_hdr_resource;
/* "sample-hdr": linear RGB floats per sample, multisampling's part of hdr-color (the
 * raster sinks at msaa > 1 resolve it into hdr-color as the samples' mean). */
extern GR_API const cp_resource_type pl_sample_hdr_resource;
/* "raster-vertices": the raster vertex buffer (pl_scene_data_raster_vertices), one per
 * scene, nvertices sh_vertex. */
extern GR_API const cp_resource_type pl_raster_vertices_resource;
/* "depth-positions": the depth-only VS's position buffer (pl_scene_data_depth_positions),
 * one per scene. */
extern GR_API const cp_resource_type pl_depth_positions_resource;
/* Is t one of the two, which a frame makes only when pl_frame.hdr is set? */
GR_API bool pl_resource_is_hdr(const cp_resource_type *t);

/* Stage i's resource `name`, made on first request (create hooks only: not
 * thread-safe), with the access its type declares: a stage that reads or writes it
 * without overwriting it has it cleared before the run (cp_resource_type.clear). A per-copy resource is the
 * stage copy's own: the same one for every run of a graph on the frame. NULL with a
 * message in err when the type does not declare it, when out of memory or when
 * PL_MAX_RESOURCES (or PL_MAX_COPIES_PER_RESOURCE) are in use. */
GR_API void *pl_frame_use(const cp_stage_init *i, const char *name, char err[CP_ERR_MAX]);
/* The same without a stage: type t asked for with `access` (cp_access bits) for owner
 * ("" unless t is per-copy). NULL when out of memory or full. */
GR_API void *pl_frame_resource(pl_frame *f, const cp_resource_type *t, unsigned access,
                        const char *owner);
/* The position of a resource in the frame's table, for packets that name one (a depth
 * layer), and back; -1 / NULL when there is none, or it is not of type `name`. */
GR_API int pl_frame_resource_index(const pl_frame *f, const void *data);
GR_API void *pl_frame_resource_at(const pl_frame *f, int index, const char *name);
/* The image, made (cleared to the background before the run) when no stage asked for
 * it: what pl_render_frame makes sure of. NULL when out of memory. */
GR_API uint32_t *pl_frame_image_pixels(pl_frame *f);

/* Sets the frame's samples per pixel (1..PL_MAX_MSAA) for its CP_PER_SAMPLE resources
 * (create hooks, before asking for one). false (message in err) for another count than
 * one already set, as when two stages of a graph disagree. */
#define PL_MAX_MSAA 8
GR_API bool pl_frame_set_samples(pl_frame *f, int samples, char err[CP_ERR_MAX]);

/* The depth pass's visible primitives (raster.ztile's): "visibility", a primitive per
 * pixel, or with multisampling (the hybrid's msaa > 1) "sample-visibility", one per
 * sample. */
static inline const char *pl_visibility_name(int msaa)
{
    return msaa > 1 ? "sample-visibility" : "visibility";
}

/* Samples per pixel of stage i, which has an `spp` parameter: its value for the colour
 * output; other outputs take one sample at the pixel centre. */
GR_API int pl_samples_per_pixel(const cp_stage_init *i);

/* A setting every stage of the graph that states it must share (agreed_settings.c): the
 * first stage of the run to state `setting` fixes its value in the frame resource
 * "agreed-settings" (which the stage's type declares); false with a message naming both
 * stages when this one's value differs. pl_agree_spp states stage i's `spp`. */
extern GR_API const cp_resource_type pl_agreed_settings_resource;
GR_API bool pl_stage_agree(const cp_stage_init *i, const char *setting, int value, char err[CP_ERR_MAX]);
GR_API bool pl_agree_spp(const cp_stage_init *i, char err[CP_ERR_MAX]);
/* The cp_resource_use line of a stage type that states `settings` ("spp", "msaa and tile"). */
#define PL_AGREED_USE(settings) \
    {"agreed-settings", CP_READS | CP_WRITES, "its " settings ", which every stage of the graph that " \
     "states them shares"}

/* The image: RGBA8 per pixel (R in the low byte). */
GR_API uint32_t *pl_frame_color(pl_frame *f);
/* Draws into the caller's width x height pixels instead of a buffer of its own (call
 * before the run; pl_frame_free leaves them), so the image needs no copy. */
GR_API void pl_frame_use_color(pl_frame *f, uint32_t *pixels);

/* The sinks' linear colour (see pl_frame.hdr), for a sink's create hook: *out is the
 * frame's "hdr-color" when the frame wants it and renders colour, else NULL. false
 * (message in err) when out of memory or the stage's type does not declare it. */
GR_API bool pl_frame_sink_hdr(const cp_stage_init *i, float **out, char err[CP_ERR_MAX]);
/* The linear colour after the run: 4 floats a pixel, or NULL when no sink wrote it. */
GR_API const float *pl_frame_hdr(pl_frame *f);
/* Asks the sinks for their linear colour (pl_frame.hdr) in the caller's width x height
 * x 4 floats (call before the run; pl_frame_free leaves them). Colour output only: with
 * another AOV nothing is written there. */
GR_API void pl_frame_use_hdr(pl_frame *f, float *pixels);

/* The clears the resources' requests owe (see pl_resource.clear_owed and fresh), split
 * into `parts` bands of rows cleared at once (gr_parallel); pl_render_frame calls it
 * before each run. */
GR_API void pl_frame_prepare(pl_frame *f, unsigned parts);
GR_API const sh_raster_env *pl_frame_raster_env(pl_frame *f);
/* Create hooks only: the raster graphs' background (what no geometry covers in the
 * colour output) becomes the linear colour rgb instead of the scene's, e.g. a fog
 * stage's colour, since what lies infinitely far is all fog. false when out of memory. */
GR_API bool pl_frame_set_background(pl_frame *f, const float rgb[3]);
GR_API const sh_ray_env *pl_frame_ray_env(pl_frame *f);

/* Bytes of resource type t for a frame of width x height with `samples` per pixel
 * (CP_PER_SAMPLE types), a [graph] tile of `tile` pixels and `triangles` scene triangles
 * (an upper-end estimate for types made by create). */
GR_API double pl_resource_bytes(const cp_resource_type *t, int width, int height, int samples,
                                long tile, size_t triangles);

/* The counter named `name`, made at 0 on first request (create hooks only); stages add
 * to it with relaxed atomics. NULL when PL_MAX_COUNTERS are in use. */
GR_API _Atomic(uint64_t) *pl_frame_counter(pl_frame *f, const char *name);

/* The work cursor named `name`, set to 0 (create hooks only: every copy's create runs
 * before the graph does, and a frame may serve several runs, as gramps-render-mpi's
 * chunks do, each starting from 0): the copies of a replicated stage share it to take
 * work (the next batch, say) as they go instead of dealing it out in turns. Not a
 * statistic. NULL when PL_MAX_CURSORS are in use. */
GR_API _Atomic(uint32_t) *pl_frame_cursor(pl_frame *f, const char *name);
/* Its value after the run (0 if no stage made it). */
GR_API uint64_t pl_frame_count(const pl_frame *f, const char *name);

/* The finished image: RGBA8, width * height * 4 bytes (the background where no stage
 * wrote). */
GR_API const uint8_t *pl_frame_image(pl_frame *f);

#endif

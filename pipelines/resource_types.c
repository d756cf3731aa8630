/* resource_types.c — the frame resources every renderer may share (see frame.h). */
#include "pipelines/frame.h"
#include "pipelines/surface.h"

static uint32_t background(void *frame) { return sh_background(pl_frame_raster_env(frame)); }

const cp_resource_type pl_color_resource = {
    "color", "the image", "rgba8", 4, CP_PER_PIXEL, false, CP_CLEAR_EACH_RUN, background,
    NULL, NULL, NULL};

/* The background as the sinks' linear colour: the raster env's (the ray tracer's sink
 * overwrites every pixel), alpha 1. */
static void hdr_background(void *frame, void *element)
{
    const sh_raster_env *e = pl_frame_raster_env(frame);
    float *px = element;
    for (int c = 0; c < 3; c++) px[c] = e->background[c];
    px[3] = 1.0f;
}

const cp_resource_type pl_hdr_resource = {
    "hdr-color", "the sinks' linear colour before the sRGB encode (values above 1 kept), "
    "made only when an image-space stage or a float output reads it",
    "rgba f32", 16, CP_PER_PIXEL, false, CP_CLEAR_EACH_RUN, NULL, NULL, NULL, hdr_background};

const cp_resource_type pl_sample_hdr_resource = {
    "sample-hdr", "multisampling's linear RGB per sample (msaa > 1, when hdr-color is read), "
    "resolved into hdr-color as their mean", "rgb f32", 12, CP_PER_SAMPLE, false, CP_CLEAR_NONE,
    NULL, NULL, NULL, NULL};

bool pl_resource_is_hdr(const cp_resource_type *t)
{
    return t == &pl_hdr_resource || t == &pl_sample_hdr_resource;
}

/* The scene's own data, owned by pl_scene_data: nothing to free. */
static void scene_owned(void *data) { (void)data; }

static void *scene_bvh(void *frame, const char *owner)
{
    (void)owner;
    return (void *)pl_scene_data_bvh(((pl_frame *)frame)->data);
}

static void *scene_geometry(void *frame, const char *owner)
{
    (void)owner;
    return (void *)((pl_frame *)frame)->data->geo;
}

static void *scene_raster_vertices(void *frame, const char *owner)
{
    (void)owner;
    return (void *)pl_scene_data_raster_vertices(((pl_frame *)frame)->data);
}

static void *scene_depth_positions(void *frame, const char *owner)
{
    (void)owner;
    return (void *)pl_scene_data_depth_positions(((pl_frame *)frame)->data);
}

static void *scene_textures(void *frame, const char *owner)
{
    (void)owner;
    return (void *)((pl_frame *)frame)->data->scene;
}

/* About 100 bytes a triangle: 2 triangle blocks of 96 bytes per 4 triangles, 1.5 nodes
 * of both widths, and the build's temporaries. */
static const cp_resource_type bvh = {
    "bvh", "the scene's bounding volume hierarchy (rt_bvh), built on first request",
    "rt_bvh", 100, CP_PER_SCENE, false, CP_CLEAR_NONE, NULL, scene_bvh, scene_owned, NULL};

static const cp_resource_type triangles = {
    "triangles", "the scene's triangles in draw order (sc_geometry), read whole every run: "
    "a raster front end's work does not shrink with the frame's region",
    "sc_geometry", 0, CP_PER_SCENE, false, CP_CLEAR_NONE, NULL, scene_geometry, scene_owned, NULL};

/* Sized per triangle like the other scene resources; the memory estimate counts it by
 * the scene's vertices instead (tools/common/memory_estimate.c). */
const cp_resource_type pl_raster_vertices_resource = {
    "raster-vertices", "the scene's vertices with their attributes interleaved (sh_vertex, "
    "32 bytes each) for the raster front end's vertex fetch, made once per scene",
    "sh_vertex", sizeof(sh_vertex), CP_PER_SCENE, false, CP_CLEAR_NONE, NULL,
    scene_raster_vertices, scene_owned, NULL};

/* Sized per triangle (its renumbered indices); the memory estimate counts the positions
 * by the scene's vertices too (tools/common/memory_estimate.c). */
const cp_resource_type pl_depth_positions_resource = {
    "depth-positions", "the scene's positions alone, in the order the triangles first use "
    "them, and the indices renumbered to match (sh_position_buffer), for the depth-only "
    "pass's vertex fetch, made once per scene",
    "sh_position_buffer", 3 * sizeof(uint32_t), CP_PER_SCENE, false, CP_CLEAR_NONE, NULL,
    scene_depth_positions, scene_owned, NULL};

static const cp_resource_type textures = {
    "textures", "the scene's textures (sc_scene), for the stages whose shading samples them",
    "sc_scene", 0, CP_PER_SCENE, false, CP_CLEAR_NONE, NULL, scene_textures, scene_owned, NULL};

int pl_register_frame_resources(cp_registry *r, char err[CP_ERR_MAX])
{
    const cp_resource_type *const types[] = {&pl_color_resource, &pl_hdr_resource,
                                             &pl_sample_hdr_resource, &pl_surface_resource, &bvh,
                                             &triangles, &pl_raster_vertices_resource,
                                             &pl_depth_positions_resource, &textures,
                                             &pl_agreed_settings_resource};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (cp_register_resource(r, types[i], err)) return -1;
    return 0;
}

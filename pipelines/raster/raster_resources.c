/* raster_resources.c — the frame resources of the raster graphs (see internal.h). */
#include "pipelines/raster/internal.h"
#include "pipelines/raster/hiz.h"
#include "pipelines/stages.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

static uint32_t far_bits(void)
{
    float far = FLT_MAX;
    uint32_t bits;
    memcpy(&bits, &far, sizeof bits);
    return bits;
}

static uint32_t far_value(void *frame)
{
    (void)frame;
    return far_bits();
}

static void *hiz_create(void *frame, const char *owner)
{
    (void)owner;
    const pl_frame *f = frame;
    plr_hiz *h = malloc(sizeof *h);
    if (h && plr_hiz_init(h, f->width, f->height, far_bits())) return h;
    free(h);
    return NULL;
}

static void hiz_destroy(void *data)
{
    plr_hiz_free(data);
    free(data);
}

/* A depth layer of `per_pixel` elements per pixel. */
static void *make_layer(const pl_frame *f, size_t per_pixel)
{
    size_t n = (size_t)f->width * (size_t)f->height * per_pixel + RS_DEPTH_SLACK;
    plr_depth_layer *l = malloc(sizeof *l);
    if (l) *l = (plr_depth_layer){malloc(n * sizeof *l->z), malloc(n * sizeof *l->vis), NULL, 0};
    if (l && l->z && l->vis) return l;
    if (l) free(l->z), free(l->vis);
    free(l);
    return NULL;
}

static void *layer_create(void *frame, const char *owner)
{
    (void)owner;
    return make_layer(frame, 1);
}

static void *sample_layer_create(void *frame, const char *owner)
{
    (void)owner;
    const pl_frame *f = frame;
    return make_layer(f, (size_t)f->samples);
}

static void layer_destroy(void *data)
{
    plr_depth_layer *l = data;
    free(l->z);
    free(l->vis);
    free(l);
}

static void *tile_buffers_create(void *frame, const char *owner)
{
    (void)frame;
    (void)owner;
    return plr_tile_pool_new(plr_shade_tile_free);
}

static void tile_buffers_destroy(void *data)
{
    plr_tile_pool_free(data);
}

static const cp_resource_type types[] = {
    {"depth", "the ordered graph's depth per pixel (sort-middle stages keep depth per tile)",
     "f32 bits", 4, CP_PER_PIXEL, false, CP_CLEAR_EACH_RUN, far_value, NULL, NULL, NULL},
    {"hiz", "coarse depth bounds per 8x8 block over `depth` (plr_hiz)", "plr_hiz", 1,
     CP_PER_PIXEL, false, CP_CLEAR_NONE, NULL, hiz_create, hiz_destroy, NULL},
    {"visibility", "the visible primitive + 1 per pixel, 0 for none", "u32", 4, CP_PER_PIXEL,
     false, CP_CLEAR_EACH_RUN, NULL, NULL, NULL, NULL},
    {"sample-visibility", "the visible primitive + 1 per sample, 0 for none (the hybrid's depth "
     "pass with msaa > 1)", "u32", 4, CP_PER_SAMPLE, false, CP_CLEAR_EACH_RUN, NULL, NULL, NULL,
     NULL},
    {"depth-layer", "a depth-only rasterizer's own depth and visible primitive per pixel "
     "(plr_depth_layer)", "f32 + u32", 8, CP_PER_PIXEL, true, CP_CLEAR_NONE, NULL, layer_create,
     layer_destroy, NULL},
    {"sample-depth-layer", "depth-layer per sample (the hybrid's depth pass with msaa > 1)",
     "f32 + u32", 8, CP_PER_SAMPLE, true, CP_CLEAR_NONE, NULL, sample_layer_create, layer_destroy,
     NULL},
    {"sample-depth", "multisampling's depth per sample (msaa > 1; the tile's stage sets "
     "its tile's part, the OM a pixel's at its first fragment)", "f32", 4, CP_PER_SAMPLE, false,
     CP_CLEAR_NONE, NULL, NULL, NULL, NULL},
    {"sample-color", "multisampling's RGBA8 per sample, resolved into the image per tile",
     "u32", 4, CP_PER_SAMPLE, false, CP_CLEAR_NONE, NULL, NULL, NULL, NULL},
    {"cleared-tiles", "the sort-middle tiles a Bin wrote the background of (plr_cleared_tiles: "
     "per tile, the run it did so in)", "u32", 4,
     CP_PER_TILE, false, CP_CLEAR_NONE, NULL, plr_cleared_tiles_create, plr_cleared_tiles_destroy,
     NULL},
    /* 71 B a pixel: 16 of buffers, and a quarter of a 220-byte slot (tile_shade.c
     * reserves a slot per 4 pixels of a tile) */
    {"tile-buffers", "a Tile-Shade copy's buffers per tile, kept across frames "
     "(plr_tile_pool): depth, visible primitive, won pixel, 16-bit owner slot and the "
     "owned pixels listed by slot, per pixel, and the tile's triangles' slots",
     "f32 + 2 u32 + 2 u16, slots", 71, CP_PER_PIXEL, true, CP_CLEAR_KEEP, NULL,
     tile_buffers_create, tile_buffers_destroy, NULL},
};

int pl_register_raster_resources(cp_registry *r, char err[CP_ERR_MAX])
{
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (cp_register_resource(r, &types[i], err)) return -1;
    return 0;
}

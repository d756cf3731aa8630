/* raster_stages.c — the rasterization graph's stages (thesis Fig. 4.1) as registered
 * stage types: raster.ia (Thread), raster.vs (Shader), raster.reorder (Thread),
 * raster.rast (Fixed-function), raster.setup-bin and raster.tile-rast (the parallel
 * variant), raster.ps (Shader) and raster.om (Thread, instanced per tile), the sort-middle
 * raster.bin (Fixed-function) and raster.tile-shade (Thread, instanced per tile), and the
 * depth-only pass raster.zraster (Fixed-function, one per group) and raster.ztile
 * (Thread, instanced per tile). Their code is in geometry.c, rast.c,
 * pixels.c, tile_shade.c, zraster.c and ztile.c;
 * pipelines/graphs/raster*.graph and hybrid.graph wire them. */
#include "pipelines/raster/internal.h"

#include "pipelines/stages.h"

#include <stdlib.h>
#include <string.h>

/* The stage type's parameter `name`, or NULL when it has none. */
static const cp_param *declared(const cp_stage_init *i, const char *name)
{
    for (int k = 0; k < i->type->nparams; k++)
        if (!strcmp(i->type->params[k].name, name)) return &i->type->params[k];
    return NULL;
}

/* The parameter `name` if the stage's type declares it, else `def`. */
static int64_t param_or(const cp_stage_init *i, const char *name, int64_t def)
{
    const cp_param *p = declared(i, name);
    if (!p) return def;
    return p->type == CP_BOOL ? cp_bool(i, name) : cp_int(i, name);
}

/* The frame's buffers, and its counters a stage of this type adds to: a graph's
 * statistics then list only what its stages count (no coarse_z_culled without a coarse
 * test). fragments_shaded is the shading stages' (shading_create). The frame's depth
 * buffer and its coarse bounds are made only for the stages that test against them
 * (the ordered graph's Rast, PS and OM): the sort-middle stages keep depth in their
 * tiles, and making the buffers is a pass over the image before every frame. */
static bool fetch_buffers(plr_state *s, const cp_stage_init *i, bool frame_depth,
                          char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    s->env = pl_frame_raster_env(f);
    if (frame_depth && (!(s->depth = pl_frame_use(i, "depth", err)) ||
                        !(s->hiz = pl_frame_use(i, "hiz", err))))
        return false;
    s->rasterized = pl_frame_counter(f, "triangles_rasterized");
    bool coarse = declared(i, "coarse_z") != NULL;
    s->hidden = coarse ? pl_frame_counter(f, "coarse_z_culled") : NULL;
    if (s->rasterized && (s->hidden || !coarse)) return true;
    snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    return false;
}

/* The raster stages of a graph pass tiles (keys of a tile queue set, regions of a depth
 * layer), triangles set up for a sample pattern and numbered batches to one another, so
 * the ones with a `tile`, `msaa` or `batch` parameter must agree on it (pl_stage_agree). */
static bool agree_layout(const plr_state *s, const cp_stage_init *i, char err[CP_ERR_MAX])
{
    return (!declared(i, "tile") || pl_stage_agree(i, "tile", s->tile, err)) &&
           (!declared(i, "msaa") || pl_stage_agree(i, "msaa", s->msaa, err)) &&
           (!declared(i, "batch") || pl_stage_agree(i, "batch", s->batch, err));
}

/* Every raster stage's state: the frame's buffers (its depth buffer when frame_depth)
 * and the parameters its type has. */
static plr_state *raster_state(const cp_stage_init *i, bool frame_depth, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    plr_state *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    s->width = f->width;
    s->height = f->height;
    s->geo = f->data->geo;
    s->tile = (int)param_or(i, "tile", 64);
    s->tiles_x = (s->width + s->tile - 1) / s->tile;
    s->tiles_y = (s->height + s->tile - 1) / s->tile;
    s->batch = (int)param_or(i, "batch", 64);
    s->batches = (uint32_t)((s->geo->ntriangles + (size_t)s->batch - 1) / (size_t)s->batch);
    if (i->type->main == plr_vs_main) s->vs_room = cp_port_elements(i, "out");
    /* the coarse test needs blocks that do not straddle tiles (see hiz.h) */
    s->coarse_z = param_or(i, "coarse_z", 0) && s->tile % PLR_HIZ_BLOCK == 0;
    s->attributes = true;
    s->rc = plr_rast_cfg(s->width, s->height, s->tile, s->tiles_x, f->region);
    s->msaa = (int)param_or(i, "msaa", 1);
    if (!agree_layout(s, i, err) || !fetch_buffers(s, i, frame_depth, err) ||
        !plr_msaa_setup(s, i, PLR_NO_SAMPLE_BUFFERS, err)) {
        free(s);
        return NULL;
    }
    s->alpha = plr_alpha_info_of(s->env->scene);
    return s;
}

/* Reorder passes its input's packets on whole: its output's must hold as many triangles. */
static void *reorder_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    const uint32_t in = cp_port_elements(i, "in"), out = cp_port_elements(i, "out");
    if (out < in) {
        snprintf(err, CP_ERR_MAX, "its output's packets hold %u triangles, its input's %u: it passes "
                 "batches on whole (give the queues the same `elements`)", out, in);
        return NULL;
    }
    return raster_state(i, false, err);
}

/* IA: its replicas take batches from one cursor per stage (named after the stage
 * without its replica suffix: "ia-1" -> "ia"). */
static void *ia_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    plr_state *s = raster_state(i, false, err);
    if (!s) return NULL;
    char name[PL_COUNTER_NAME];
    snprintf(name, sizeof name, "%s", i->name);
    char *dash = i->replicas > 1 ? strrchr(name, '-') : NULL;
    if (dash) *dash = 0;
    s->next_batch = pl_frame_cursor(i->frame, name);
    if (s->next_batch) return s;
    free(s);
    snprintf(err, CP_ERR_MAX, "more than %d IA stages in one graph", PL_MAX_CURSORS);
    return NULL;
}

/* The ordered graph's stages that test against the frame's depth (coarse or exact). */
static void *depth_test_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    return raster_state(i, true, err);
}

/* A VS that copies its vertices' attributes: it reads the interleaved vertex buffer
 * (the frame resource "raster-vertices"; s freed on failure). */
static plr_state *with_vertex_buffer(plr_state *s, const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (s && !(s->vertices = pl_frame_use(i, pl_raster_vertices_resource.name, err))) {
        free(s);
        return NULL;
    }
    return s;
}

static void *vs_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    return with_vertex_buffer(raster_state(i, false, err), i, err);
}

/* The depth-only pass's VS: no attributes, which nothing after it reads, unless the
 * scene has alpha-tested materials (Z-Raster then needs the uv). Without them it
 * gathers the positions alone, in first-use order (shaders/position_buffer.h), rather
 * than the interleaved buffer. */
static void *vs_depth_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    plr_state *s = raster_state(i, false, err);
    if (!s) return NULL;
    s->attributes = s->alpha.mask;   /* Z-Raster's alpha test reads the uv */
    if (s->attributes) return with_vertex_buffer(s, i, err);
    if (!(s->positions = pl_frame_use(i, pl_depth_positions_resource.name, err))) {
        free(s);
        return NULL;
    }
    return s;
}

/* A stage that shades fragments (the PS, Tile-Shade): it counts them. */
static void *shading_create(plr_state *s, const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (s && !(s->fragments = pl_frame_counter(i->frame, "fragments_shaded"))) {
        free(s);
        snprintf(err, CP_ERR_MAX, "out of memory (counters)");
        return NULL;
    }
    return s;
}

/* The stages that write the image (Tile-Shade, the OM) ask for it: a frame's color
 * buffer is cleared to the background before the run only when a stage asks for it
 * without overwriting it (the OM; Tile-Shade writes every pixel, tile_background.c; the
 * hybrid's raster stages leave the image to rt.blend). With msaa > 1 they draw into the
 * sample buffers (`samples`: which are the frame's) and resolve into it. */
static plr_state *with_color(plr_state *s, const cp_stage_init *i, plr_sample_buffers samples,
                             char err[CP_ERR_MAX])
{
    if (s && (!(s->color = pl_frame_use(i, "color", err)) || !pl_frame_sink_hdr(i, &s->hdr, err) ||
              !pl_frame_stage_surface(i, &s->surface, err) ||
              !plr_msaa_setup(s, i, samples, err))) {
        free(s);
        return NULL;
    }
    return s;
}

/* The frame's "cleared-tiles" for s's tiles (tile_background.c); false with a message. */
static bool use_cleared_tiles(plr_state *s, const cp_stage_init *i, char err[CP_ERR_MAX])
{
    const size_t tiles = (size_t)s->tiles_x * (size_t)s->tiles_y;
    if (!(s->cleared = pl_frame_use(i, "cleared-tiles", err))) return false;
    if (plr_cleared_tiles_reserve(s->cleared, tiles)) return true;
    snprintf(err, CP_ERR_MAX, "out of memory (cleared tiles)");
    return false;
}

/* Tile-Shade writes every pixel of the image's region (tile_background.c): its
 * instances their tiles, the Bins or its finish hook the rest. The marks' run advances
 * once a frame here. */
static void *tile_shade_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    plr_state *s = with_color(raster_state(i, false, err), i, PLR_SAMPLE_BUFFERS_OWN_COLORS, err);
    s = shading_create(s, i, err);
    if (!s) return NULL;
    const size_t tiles = (size_t)s->tiles_x * (size_t)s->tiles_y;
    s->clear_color = pl_color_resource.clear_value(i->frame);
    if (!use_cleared_tiles(s, i, err) || !(s->tile_pool = pl_frame_use(i, "tile-buffers", err))) {
        free(s);
        return NULL;
    }
    if (!plr_tile_pool_reserve(s->tile_pool, tiles) || !(s->visited = calloc(tiles, 1)) ||
        !(s->filled_late = pl_frame_counter(i->frame, "tiles_filled_after_run"))) {
        snprintf(err, CP_ERR_MAX, "out of memory (tile buffers)");
        free(s->visited);
        free(s);
        return NULL;
    }
    if (++s->cleared->run == 0) s->cleared->run = 1;   /* 0 is every unmarked tile's */
    return s;
}

static void tile_shade_destroy(void *state)
{
    plr_state *s = state;
    free(s->visited);
    free(s);
}

/* Bin: its copy, and the image and the marks when a Tile-Shade reads them (then it
 * writes the background of its share of the tiles it sends nothing to). */
static void *bin_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    plr_state *s = raster_state(i, false, err);
    if (!s) return NULL;
    s->replica = i->replica;
    s->replicas = i->replicas ? i->replicas : 1;
    if (!(cp_instance_resource_access(i->instance, "cleared-tiles") & CP_READS)) return s;
    s->clear_color = pl_color_resource.clear_value(i->frame);
    if (!(s->color = pl_frame_use(i, "color", err)) || !use_cleared_tiles(s, i, err)) {
        free(s);
        return NULL;
    }
    return s;
}

/* Fragments in any order: ties go to the smaller primitive id, which the OM needs the
 * pixel's current primitive for (pixels.c). */
static plr_state *any_order(plr_state *s, const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (s && !(s->vis = pl_frame_use(i, pl_visibility_name(s->msaa), err))) {
        free(s);
        return NULL;
    }
    if (s) s->any_order = true;
    return s;
}

/* The PS and OM: in any order when the graph asks for it (no Reorder before them). */
static void *pixel_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    plr_state *s = raster_state(i, true, err);
    return s && param_or(i, "any_order", 0) ? any_order(s, i, err) : s;
}

static void *ps_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    plr_state *s = shading_create(pixel_create(i, err), i, err);
    const pl_frame *f = i->frame;
    if (s) s->linear_out = f->hdr && f->aov == SH_AOV_COLOR;
    return s;
}

/* With msaa > 1 the OM tests depth per sample in draw order; ties in any order would
 * need the primitive per sample, which no graph asks for. */
static void *om_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    plr_state *s = with_color(pixel_create(i, err), i, PLR_SAMPLE_BUFFERS, err);
    if (s && s->msaa > 1 && s->any_order) {
        snprintf(err, CP_ERR_MAX, "stage '%s': any_order with msaa %d (multisampling needs "
                 "fragments in draw order)", i->name, s->msaa);
        free(s);
        return NULL;
    }
    return s;
}

/* The hybrid's depth pass with msaa > 1: the frame's per-sample resources (depth layers,
 * visibility, sums) get a slot per sample; false with a message in err when the graph's
 * stages disagree on the count. */
static plr_state *depth_pass_samples(plr_state *s, const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (!s || s->msaa == 1 || pl_frame_set_samples(i->frame, s->msaa, err)) return s;
    free(s);
    return NULL;
}

/* Z-Raster: its own depth layer, named after the stage copy. */
static void *zraster_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    plr_state *s = depth_pass_samples(raster_state(i, false, err), i, err);
    if (!s) return NULL;
    s->layer = pl_frame_use(i, plr_layer_name(s->msaa), err);
    s->layer_index = (uint32_t)pl_frame_resource_index(i->frame, s->layer);
    s->layer_drawn = malloc((size_t)(s->tiles_x * s->tiles_y));
    s->depth_tested = pl_frame_counter(i->frame, "fragments_depth_tested");
    s->ztile_copies = cp_port_subqueues(i, "out");
    if (s->layer && s->layer_drawn && s->depth_tested) {
        s->layer->drawn = s->layer_drawn;
        s->layer->ntiles = (size_t)(s->tiles_x * s->tiles_y);
        return s;
    }
    if (s->layer) snprintf(err, CP_ERR_MAX, "out of memory");
    free(s->layer_drawn);
    free(s);
    return NULL;
}

static void zraster_destroy(void *state)
{
    plr_state *s = state;
    free(s->layer_drawn);
    free(s);
}

/* Z-Tile: writes the visible primitive per pixel, no colour; a copy per subqueue of
 * its input set, dealt tiles by `bands`. */
static void *ztile_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    plr_state *s = any_order(depth_pass_samples(raster_state(i, false, err), i, err), i, err);
    if (!s) return NULL;
    s->frame = i->frame;
    if (!pl_agree_spp(i, err)) {
        free(s);
        return NULL;
    }
    s->spp = pl_samples_per_pixel(i);
    s->run_samples = (uint32_t)cp_int(i, "samples");
    s->run_outputs = cp_port_copies(i, "out");
    /* a background pixel's sums: its camera ray's miss, weight 1 times the background
       (nothing for an AOV), as the pixel stages would add it */
    s->background_blocks = cp_bool(i, "background") && s->spp == 1 && s->msaa == 1;
    const float *background = pl_frame_ray_env(i->frame)->background;
    for (int ch = 0; ch < 3; ch++)
        s->background[ch] = ((pl_frame *)i->frame)->aov == SH_AOV_COLOR ? plrt_to_fixed(background[ch]) : 0;
    if (plrt_tile_cutter_init(&s->deal, i, (uint32_t)cp_int(i, "bands"), s->rc.tile,
                              cp_port_subqueues(i, "in"), err))
        return s;
    free(s);
    return NULL;
}

static const cp_format formats[] = {
    {"raster.batch", "a batch of triangles for IA -> VS: sequence number, first, count",
     GR_OPAQUE, sizeof(ia_pkt), 0, 0, 0, 0},
    {"raster.primitives", "a batch of set-up (or to-be-clipped) triangles with its sequence "
     "number; elements = triangles per batch", GR_OPAQUE, 0, offsetof(prim_pkt, rec),
     sizeof(prim_rec), 64, MAX_BATCH},
    {"raster.depth-primitives", "raster.primitives without the vertices' attributes (from "
     "raster.vs-depth, for a depth-only pass)", GR_OPAQUE, 0, offsetof(prim_pkt, rec),
     sizeof(prim_rec), 64, MAX_BATCH},
    {"raster.binned", "set-up triangles of one framebuffer tile, in draw order", GR_OPAQUE,
     sizeof(binned_pkt), 0, 0, 0, 0},
    {"raster.ztile-done", "a depth-pass rasterizer is done with its layer, and where it drew "
     "(pipelines/raster/packets.h ztile_done_pkt)", GR_OPAQUE, sizeof(ztile_done_pkt), 0, 0,
     0, 0},
    {"raster.fragments", "covered pixels of one tile: coverage from Rast, depth and RGBA8 "
     "after the PS (pipelines/raster/packets.h frag_pkt)", GR_OPAQUE, sizeof(frag_pkt), 0, 0, 0, 0},
};

static const cp_param batch_param[] = {{"batch", CP_INT, "64", 1, MAX_BATCH, "triangles per batch"}};
#define TILE_PARAM {"tile", CP_INT, "64", PLR_MIN_TILE, PLR_MAX_TILE, "framebuffer tile edge in " \
                    "pixels (the tiles queue set's subqueues)"}
#define COARSE_Z_PARAM {"coarse_z", CP_BOOL, "true", 0, 0, "skip triangles hidden per 8x8 block " \
                        "(tile a multiple of 8)"}
#define ANY_ORDER_PARAM {"any_order", CP_BOOL, "false", 0, 0, "fragments arrive in any order: " \
                         "equal depths go to the smaller primitive id (the same image as in draw order)"}
#define MSAA_PARAM {"msaa", CP_INT, "1", 1, PL_MAX_MSAA, "samples per pixel: 1, 4 or 8 (Direct3D's " \
                    "standard positions; coverage and depth per sample, shading per pixel)"}
static const cp_param msaa_params[] = {MSAA_PARAM};
static const cp_param tile_msaa_params[] = {TILE_PARAM, MSAA_PARAM};
static const cp_param rast_params[] = {TILE_PARAM, COARSE_Z_PARAM, MSAA_PARAM};
static const cp_param ps_params[] = {ANY_ORDER_PARAM, MSAA_PARAM};
static const cp_param om_params[] = {TILE_PARAM, COARSE_Z_PARAM, ANY_ORDER_PARAM, MSAA_PARAM};

static const cp_port ia_ports[] = {{"out", GR_BIND_OUTPUT, "raster.batch", NULL}};
static const cp_port vs_ports[] = {{"in", GR_BIND_INPUT, "raster.batch", NULL},
                                   {"out", GR_BIND_OUTPUT, "raster.primitives", NULL}};
static const cp_port vs_depth_ports[] = {{"in", GR_BIND_INPUT, "raster.batch", NULL},
                                         {"out", GR_BIND_OUTPUT, "raster.depth-primitives", NULL}};
static const cp_port reorder_ports[] = {{"in", GR_BIND_INPUT, "raster.primitives", "in any order"},
                                        {"out", GR_BIND_OUTPUT, "raster.primitives", "in draw order"}};
static const cp_port rast_ports[] = {
    {"in", GR_BIND_INPUT, "raster.primitives", "in draw order"},
    {"out", GR_BIND_OUTPUT, "raster.fragments", "keyed by tile; heads the ordered chain to the "
     "OM (raster.graph)"}};
static const cp_port setup_bin_ports[] = {
    {"in", GR_BIND_INPUT, "raster.primitives", "in draw order"},
    {"out", GR_BIND_OUTPUT, "raster.binned", "a queue set with a subqueue per tile"}};
static const cp_port tile_rast_ports[] = {{"in", GR_BIND_INPUT, "raster.binned", NULL},
                                          {"out", GR_BIND_OUTPUT, "raster.fragments", NULL}};
static const cp_port ps_ports[] = {{"in", GR_BIND_INPUT, "raster.fragments", NULL},
                                   {"out", GR_BIND_INPLACE, "raster.fragments", "shaded, same packet"}};
static const cp_port om_ports[] = {{"in", GR_BIND_INPUT, "raster.fragments",
                                    "a queue set with a subqueue per tile"}};
static const cp_port bin_ports[] = {
    {"in", GR_BIND_INPUT, "raster.primitives", "in any order"},
    {"out", GR_BIND_OUTPUT, "raster.binned", "a queue set with a subqueue per tile"}};
static const cp_port tile_shade_ports[] = {
    {"in", GR_BIND_INPUT, "raster.binned", "a queue set with a subqueue per tile, any order"}};
static const cp_port zraster_ports[] = {
    {"in", GR_BIND_INPUT, "raster.depth-primitives", "in any order"},
    {"out", GR_BIND_OUTPUT, "raster.ztile-done", "a queue set with a subqueue per Z-Tile copy"}};
static const cp_port ztile_ports[] = {
    {"in", GR_BIND_INPUT, "raster.ztile-done", "a queue set with a subqueue per copy"},
    {"out", GR_BIND_OUTPUT, "rt.sample-runs", "its tiles' samples, each tile once its depth "
     "and visible primitives are final (runs[*]: copy k sends to copy k modulo their number)"}};
static const cp_param ztile_params[] = {
    {"tile", CP_INT, "64", PLR_MIN_TILE, PLR_MAX_TILE, "framebuffer tile edge in pixels"},
    {"spp", CP_INT, "1", 1, PL_MAX_SPP, "samples per pixel (as the Sampler's)"},
    {"samples", CP_INT, "64", 1, RT_PACKET_MAX, "samples per run (the Sampler's packet size)"},
    {"bands", CP_INT, "1", 1, 1 << 20, "copy k takes the tiles in pixel bands k, k + copies, ... "
     "of this many (a power of two; the rt.blend instances', so each copy's pixels are summed apart)"},
    {"background", CP_BOOL, "false", 0, 0, "with spp 1 and msaa 1: an 8x8 block of a tile where no "
     "primitive is visible gets the background added to its sums here and is sent on in no run (the "
     "sums are the stages' after it: their camera rays would miss)"},
    MSAA_PARAM};

/* What each stage type may ask the frame for (parameters decide: the sort-middle
 * stages keep depth in their tiles; the PS and OM use the visibility buffer only with
 * `any_order`). "triangles": the front end reads every triangle each run. */
#define LAYOUT_USE PL_AGREED_USE("tile, msaa, batch or spp")
static const cp_resource_use front_end_uses[] = {{"triangles", CP_READS, NULL}, LAYOUT_USE};
static const cp_resource_use reorder_uses[] = {LAYOUT_USE};
static const cp_resource_use vs_uses[] = {
    {"triangles", CP_READS, NULL},
    {"raster-vertices", CP_READS, "the vertex fetch (one cache line a vertex, not one an attribute)"},
    LAYOUT_USE};
static const cp_resource_use vs_depth_uses[] = {
    {"triangles", CP_READS, NULL},
    {"raster-vertices", CP_READS, "with alpha-tested materials (Z-Raster's alpha test reads the uv)"},
    {"depth-positions", CP_READS, "without: the positions alone, read front to back"}, LAYOUT_USE};
static const cp_resource_use depth_test_uses[] = {
    {"depth", CP_READS, "the coarse and early depth tests"},
    {"hiz", CP_READS, "the coarse depth test"}, LAYOUT_USE};
static const cp_resource_use ps_uses[] = {
    {"depth", CP_READS | CP_WRITES, "early-Z"}, {"hiz", CP_READS | CP_WRITES, NULL},
    {"visibility", CP_READS | CP_WRITES, "with any_order"},
    {"textures", CP_READS, "the shading samples them"}, LAYOUT_USE};
#define HDR_USE {"hdr-color", CP_WRITES, "when an image-space stage or a float output reads it"}, \
                {"surface", CP_WRITES, "the visible fragment's depth and normal, when a float " \
                 "output reads them"}
#define SAMPLE_USES {"sample-depth", CP_READS | CP_WRITES, "with msaa > 1"}, \
                    {"sample-color", CP_READS | CP_WRITES, "with msaa > 1"}, SAMPLE_HDR_USE
#define SAMPLE_HDR_USE {"sample-hdr", CP_READS | CP_WRITES, "with msaa > 1 and hdr-color"}
static const cp_resource_use om_uses[] = {
    {"depth", CP_READS | CP_WRITES, NULL}, {"hiz", CP_READS | CP_WRITES, NULL},
    {"visibility", CP_READS | CP_WRITES, "with any_order"}, {"color", CP_WRITES, NULL},
    HDR_USE, SAMPLE_USES, LAYOUT_USE};
static const cp_resource_use tile_shade_uses[] = {
    {"color", CP_OVERWRITES, "every pixel of its tiles, and in its finish hook those of the "
     "tiles it had no instance for that no Bin wrote"},
    {"cleared-tiles", CP_READS, "the tiles whose background a Bin wrote"}, HDR_USE, {"textures", CP_READS, "the shading samples them"},
    {"sample-color", CP_READS | CP_WRITES | CP_WITH_HDR, "with msaa > 1 and linear samples "
     "(hdr-color); else its tile's depths and colours per sample are its own"},
    SAMPLE_HDR_USE, {"tile-buffers", CP_READS | CP_WRITES, "the tiles' depth, visibility and owners"},
    LAYOUT_USE};
static const cp_resource_use bin_uses[] = {
    {"color", CP_OVERWRITES, "with a Tile-Shade in the graph: the background of its share of "
     "the tiles it sends no triangle to (the tile rows whose number modulo the copies is its copy)"},
    {"cleared-tiles", CP_WRITES, "with a Tile-Shade in the graph: marks those tiles"}, LAYOUT_USE};
static const cp_resource_use zraster_uses[] = {
    {"depth-layer", CP_READS | CP_WRITES, NULL},
    {"sample-depth-layer", CP_READS | CP_WRITES, "with msaa > 1"}, LAYOUT_USE};
static const cp_resource_use ztile_uses[] = {
    {"depth-layer", CP_READS, "every Z-Raster copy's"},
    {"sample-depth-layer", CP_READS, "with msaa > 1"},
    {"visibility", CP_READS | CP_WRITES, NULL},
    {"sample-visibility", CP_READS | CP_WRITES, "with msaa > 1"},
    {"sums", CP_OVERWRITES, "clears each tile's before handing it on (with `background`, adds the "
     "background of the blocks where nothing is visible)"},
    {"sample-sums", CP_OVERWRITES, "with msaa > 1"}, LAYOUT_USE};

#define NUSES(uses) (int)(sizeof uses / sizeof *uses)

static const cp_stage_type stages[] = {
    {"raster.ia", "input assembly: batches of triangles (replicas take the next one as they go)",
     GR_THREAD, false, ia_ports, 1, batch_param, 1, plr_ia_main, ia_create, NULL, free,
     front_end_uses, NUSES(front_end_uses)},
    {"raster.vs", "vertex shader, clip test and triangle setup of a batch", GR_SHADER, false,
     vs_ports, 2, msaa_params, 1, plr_vs_main, vs_create, NULL, free, vs_uses, NUSES(vs_uses)},
    {"raster.vs-depth", "the vertex shader of a depth-only pass: clip test and triangle setup, "
     "no attributes (its own format, so no shading stage can read it)", GR_SHADER, false,
     vs_depth_ports, 2, msaa_params, 1, plr_vs_main, vs_depth_create, NULL, free, vs_depth_uses, NUSES(vs_depth_uses)},
    {"raster.reorder", "restores draw order (batch sequence numbers)", GR_THREAD, false,
     reorder_ports, 2, batch_param, 1, plr_reorder_main, reorder_create, NULL, free, reorder_uses,
     NUSES(reorder_uses)},
    {"raster.rast", "clips, walks the tiles each triangle touches, coarse depth test, coverage",
     GR_FIXED, false, rast_ports, 2, rast_params, 3, plr_rast_main, depth_test_create, NULL, free,
     depth_test_uses, NUSES(depth_test_uses)},
    {"raster.setup-bin", "parallel variant: sends each triangle to the tiles it touches",
     GR_FIXED, false, setup_bin_ports, 2, rast_params, 3, plr_setup_bin_main, depth_test_create,
     NULL, free, depth_test_uses, NUSES(depth_test_uses)},
    {"raster.tile-rast", "parallel variant: rasterizes one tile's triangles", GR_THREAD, true,
     tile_rast_ports, 2, rast_params, 3, plr_tile_rast_main, depth_test_create, NULL, free,
     depth_test_uses, NUSES(depth_test_uses)},
    {"raster.ps", "pixel shader: depth, early-Z, Blinn-Phong (or the AOV)", GR_SHADER, false,
     ps_ports, 2, ps_params, 2, plr_ps_main, ps_create, NULL, free, ps_uses, NUSES(ps_uses)},
    {"raster.om", "output merger of one tile: depth test and write (in primitive order, or in "
     "any order with ties to the smaller primitive id); blended fragments last, in primitive "
     "order, over the final depth",
     GR_THREAD, true, om_ports, 1, om_params, 4, plr_om_main, om_create, NULL, free, om_uses, NUSES(om_uses)},
    {"raster.bin", "sort-middle: sends each set-up triangle to the tiles it touches, in any "
     "order (one per IA/VS group)", GR_FIXED, false, bin_ports, 2, tile_msaa_params, 2, plr_bin_main,
     bin_create, NULL, free, bin_uses, NUSES(bin_uses)},
    {"raster.tile-shade", "sort-middle, one tile: visibility of its triangles (nearest, equal "
     "depths to the smaller primitive id), then each visible pixel shaded once, then its "
     "blended triangles in primitive order",
     GR_THREAD, true, tile_shade_ports, 1, tile_msaa_params, 2, plr_tile_shade_main,
     tile_shade_create, plr_tile_shade_finish, tile_shade_destroy, tile_shade_uses, NUSES(tile_shade_uses)},
    {"raster.zraster", "depth-only pass, one per IA/VS group: rasterizes its triangles, in any "
     "order, into its own depth layer of the whole image", GR_FIXED, false, zraster_ports, 2,
     tile_msaa_params, 2, plr_zraster_main, zraster_create, NULL, zraster_destroy, zraster_uses, NUSES(zraster_uses)},
    {"raster.ztile", "end of the depth-only pass, a copy per subqueue taking its share of "
     "the tiles: once every rasterizer is done, per tile the visible primitive per pixel "
     "(the nearest over their layers) into the visibility buffer, then the tile's samples on",
     GR_THREAD, true, ztile_ports, 2, ztile_params, 6, plr_ztile_main, ztile_create, NULL, free,
     ztile_uses, NUSES(ztile_uses)},
};

int pl_register_raster_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (cp_register_format(r, &formats[i], err)) return -1;
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++)
        if (cp_register_stage(r, &stages[i], err)) return -1;
    return 0;
}

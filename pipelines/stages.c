/* stages.c — the built-in stage library, graphs and variables (see stages.h). */
#include "pipelines/stages.h"

#include "pipelines/raster/raster.h"
#include "pipelines/raytrace/packets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs of samples of an image tile (pipelines/raytrace/sample_runs.h): what the ray tracer's
 * Tiler makes and what the hybrid's depth pass hands on when a tile is final, so both
 * libraries' stages use it. */
static const cp_format runs_format = {
    "rt.sample-runs", "one samples packet's run of a tile: tile, block, first sample, count",
    GR_OPAQUE, sizeof(plrt_sample_run), 0, 0, 0, 0};

cp_registry *pl_registry_new(char err[CP_ERR_MAX])
{
    cp_registry *r = cp_registry_new();
    if (!r) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    if (pl_register_frame_resources(r, err) || pl_register_raster_resources(r, err) ||
        pl_register_raytrace_resources(r, err) ||
        cp_register_format(r, &runs_format, err) || pl_register_raster_stages(r, err) ||
        pl_register_raytrace_stages(r, err) || pl_register_hybrid_stages(r, err)) {
        cp_registry_free(r);
        return NULL;
    }
    return r;
}

/* The graph files, compiled in by mk/graphs.mk. */
static const char raster_graph[] =
#include "graphs/raster.graph.inc"
    ;
static const char raster_ordered_graph[] =
#include "graphs/raster-ordered.graph.inc"
    ;
static const char raster_parallel_graph[] =
#include "graphs/raster-parallel.graph.inc"
    ;
static const char raytrace_graph[] =
#include "graphs/raytrace.graph.inc"
    ;
static const char hybrid_graph[] =
#include "graphs/hybrid.graph.inc"
    ;

const char *pl_builtin_graph(const char *name)
{
    if (!strcmp(name, "raster")) return raster_graph;
    if (!strcmp(name, "raster-ordered")) return raster_ordered_graph;
    if (!strcmp(name, "raster-parallel")) return raster_parallel_graph;
    if (!strcmp(name, "raytrace")) return raytrace_graph;
    if (!strcmp(name, "hybrid")) return hybrid_graph;
    return NULL;
}

/* The graph's `tile` setting (a number, or $variable of one); 0 when it has none. A
 * tile that is not a positive number or is larger than any image counts as one
 * image-sized tile here, so that the sums below cannot overflow and the graph still
 * expands: the stages that read `tile` then refuse it, naming it. */
static long graph_tile(const pl_vars_ctx *c)
{
    const char *t = cp_graph_value(c->graph, "tile");
    if (!t) return 0;
    long tile = strtol(t, NULL, 10);
    return tile <= 0 || tile > PL_MAX_IMAGE_SIDE ? PL_MAX_IMAGE_SIDE : tile;
}

/* Framebuffer tiles for the graph's `tile` setting. */
static const char *tiles_var(const pl_vars_ctx *c, char buf[64])
{
    long tile = graph_tile(c);
    if (!tile) return NULL;
    long tx = (c->width + tile - 1) / tile, ty = (c->height + tile - 1) / tile;
    snprintf(buf, 64, "%ld", tx * ty);
    return buf;
}

/* Blend bands for the graph's `tile` at this image size: one per row of tiles, rounded
 * down to a power of two (plrt_blend_key), at most PL_MAX_DEFAULT_BANDS. A band is what a
 * copy of the stages before Blend takes at a time (plrt_tile_deal), so there is no use
 * in thinner ones, and each is a subqueue that every worker may hold a partly filled
 * packet of: at 64x64, 32 bands held more than the rest of the ray tracer's queues. */
static const char *bands_var(const pl_vars_ctx *c, char buf[64])
{
    long tile = graph_tile(c);
    if (!tile) return NULL;
    long rows = (c->height + tile - 1) / tile, bands = 1;
    while (bands * 2 <= rows && bands * 2 <= PL_MAX_DEFAULT_BANDS) bands *= 2;
    snprintf(buf, 64, "%ld", bands);
    return buf;
}

static const char *get_var(void *ctx, const char *name, char buf[64])
{
    pl_vars_ctx *c = ctx;
    unsigned workers = gr_worker_count(c->workers);
    if (!strcmp(name, "width")) snprintf(buf, 64, "%d", c->width);
    else if (!strcmp(name, "height")) snprintf(buf, 64, "%d", c->height);
    else if (!strcmp(name, "workers")) snprintf(buf, 64, "%u", workers);
    else if (!strcmp(name, "default_groups"))
        snprintf(buf, 64, "%u", workers < PLR_DEFAULT_GROUPS_MAX ? workers : PLR_DEFAULT_GROUPS_MAX);
    else if (!strcmp(name, "tiles")) return tiles_var(c, buf);
    else if (!strcmp(name, "default_bands")) return bands_var(c, buf);
    else return NULL;
    return buf;
}

cp_vars pl_vars(pl_vars_ctx *ctx) { return (cp_vars){get_var, ctx}; }

/* Clearing a frame's buffers is bound by memory bandwidth: a part per worker (at most
 * gr_parallel_parts), and none under 64 K pixels (waking a thread costs more than
 * clearing that much). */
static unsigned clear_parts(unsigned workers, const pl_frame *f)
{
    unsigned n = gr_parallel_parts(workers);
    uint64_t by_size = ((uint64_t)f->width * (uint64_t)f->height + 65535) / 65536;
    return n < by_size ? n : (unsigned)by_size;
}

gr_graph *pl_render_frame(cp_graph *g, pl_frame *frame, const gr_launch_opts *launch,
                          char err[CP_ERR_MAX])
{
    pl_vars_ctx vc = {g, frame->width, frame->height, launch ? launch->workers : 0};
    cp_vars vars = pl_vars(&vc);
    cp_instance *in = cp_instance_new(g, frame, &vars, err);
    if (!in) return NULL;
    if (!pl_frame_image_pixels(frame)) {   /* made here when no stage draws: background */
        cp_instance_free(in);
        snprintf(err, CP_ERR_MAX, "out of memory (image)");
        return NULL;
    }
    pl_frame_prepare(frame, clear_parts(vc.workers, frame));
    gr_graph *result = NULL;
    if (cp_instance_run(in, launch, err) == GR_OK) result = cp_instance_take_graph(in);
    cp_instance_free(in);
    return result;
}

gr_graph *pl_render_builtin(const char *name, pl_put_fn put, const void *cfg, pl_frame *frame,
                            const gr_launch_opts *launch, char err[CP_ERR_MAX])
{
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = r ? cp_graph_new(r) : NULL;
    const char *text = pl_builtin_graph(name);
    gr_graph *result = NULL;
    if (r && !g) snprintf(err, CP_ERR_MAX, "out of memory");
    else if (g && !text) snprintf(err, CP_ERR_MAX, "no built-in graph '%s'", name);
    else if (g && !cp_graph_load_text(g, text, name, err) && !put(g, cfg, err))
        result = pl_render_frame(g, frame, launch, err);
    cp_graph_free(g);
    cp_registry_free(r);
    return result;
}

/* stages.c — the built-in stage library, graphs and variables (see stages.h). */
#include "pipelines/stages.h"
#include "pipelines/render_internal.h"

#include "pipelines/image/image.h"
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
        pl_register_raytrace_resources(r, err) || pli_register_resources(r, err) ||
        cp_register_format(r, &runs_format, err) || pl_register_raster_stages(r, err) ||
        pl_register_raytrace_stages(r, err) || pl_register_hybrid_stages(r, err) ||
        pli_register_stages(r, err)) {
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
static const char hybrid_visibility_graph[] =
#include "graphs/hybrid-visibility.graph.inc"
    ;
static const char raster_tonemap_graph[] =
#include "graphs/raster-tonemap.graph.inc"
    ;
static const char raster_fxaa_graph[] =
#include "graphs/raster-fxaa.graph.inc"
    ;
static const char raytrace_tonemap_graph[] =
#include "graphs/raytrace-tonemap.graph.inc"
    ;

const char *pl_builtin_graph(const char *name)
{
    if (!strcmp(name, "raster")) return raster_graph;
    if (!strcmp(name, "raster-ordered")) return raster_ordered_graph;
    if (!strcmp(name, "raster-parallel")) return raster_parallel_graph;
    if (!strcmp(name, "raytrace")) return raytrace_graph;
    if (!strcmp(name, "hybrid")) return hybrid_graph;
    if (!strcmp(name, "hybrid-visibility")) return hybrid_visibility_graph;
    if (!strcmp(name, "raster-tonemap")) return raster_tonemap_graph;
    if (!strcmp(name, "raster-fxaa")) return raster_fxaa_graph;
    if (!strcmp(name, "raytrace-tonemap")) return raytrace_tonemap_graph;
    return NULL;
}

static const char *builtin_text(void *ctx, const char *name)
{
    (void)ctx;
    return pl_builtin_graph(name);
}

int pl_graph_load(cp_graph *g, cp_registry *plugins, const char *builtin, const char *path,
                  char err[CP_ERR_MAX])
{
    cp_named_graphs builtins = {builtin_text, NULL};
    return cp_graph_layer(g, plugins, &builtins, builtin, path, err);
}

/* The sort-middle raster graph's default tile edge ($default_tile): PLR_LARGE_TILE
 * while the image has at least PLR_TILES_PER_WORKER such tiles per worker, else
 * PLR_SMALL_TILE. Fewer, larger tiles cost less per triangle (fewer bins and tile
 * states, triangles split across fewer tiles), more tiles share the work between more
 * workers; docs/performance.md has the measurements. */
static long default_tile(const pl_vars_ctx *c, unsigned workers)
{
    const long side = PLR_LARGE_TILE;
    const long tiles = ((c->width + side - 1) / side) * ((c->height + side - 1) / side);
    return tiles >= (long)PLR_TILES_PER_WORKER * (long)workers ? PLR_LARGE_TILE : PLR_SMALL_TILE;
}

/* The variables that do not depend on the graph's tile (the ones `tile` may name). */
static const char *size_var(void *ctx, const char *name, char buf[64])
{
    const pl_vars_ctx *c = ctx;
    unsigned workers = gr_worker_count(c->workers);
    if (!strcmp(name, "width")) snprintf(buf, 64, "%d", c->width);
    else if (!strcmp(name, "height")) snprintf(buf, 64, "%d", c->height);
    else if (!strcmp(name, "workers")) snprintf(buf, 64, "%u", workers);
    else if (!strcmp(name, "default_groups"))
        snprintf(buf, 64, "%u", workers < PLR_DEFAULT_GROUPS_MAX ? workers : PLR_DEFAULT_GROUPS_MAX);
    else if (!strcmp(name, "default_tile")) snprintf(buf, 64, "%ld", default_tile(c, workers));
    else return NULL;
    return buf;
}

long pl_graph_tile(const pl_vars_ctx *c)
{
    char buf[256];
    const char *t = cp_graph_resolved(c->graph, &(cp_vars){size_var, (void *)c}, "tile", buf);
    if (!t) return 0;
    long tile = strtol(t, NULL, 10);
    return tile <= 0 || tile > PL_MAX_IMAGE_SIDE ? PL_MAX_IMAGE_SIDE : tile;
}

/* Framebuffer tiles for the graph's `tile` setting. */
static const char *tiles_var(const pl_vars_ctx *c, char buf[64])
{
    long tile = pl_graph_tile(c);
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
    long tile = pl_graph_tile(c);
    if (!tile) return NULL;
    long rows = (c->height + tile - 1) / tile, bands = 1;
    while (bands * 2 <= rows && bands * 2 <= PL_MAX_DEFAULT_BANDS) bands *= 2;
    snprintf(buf, 64, "%ld", bands);
    return buf;
}

static const char *get_var(void *ctx, const char *name, char buf[64])
{
    pl_vars_ctx *c = ctx;
    if (!strcmp(name, "tiles")) return tiles_var(c, buf);
    if (!strcmp(name, "default_bands")) return bands_var(c, buf);
    return size_var(c, name, buf);
}

cp_vars pl_vars(pl_vars_ctx *ctx) { return (cp_vars){get_var, ctx}; }

unsigned pl_launch_workers(const gr_launch_opts *launch)
{
    /* A simulated run's graph is the one its virtual workers would run. */
    return launch ? (launch->simulate ? launch->simulate : launch->workers) : 0;
}

/* Clearing a frame's buffers is bound by memory bandwidth: a part per worker (at most
 * gr_parallel_parts), and none under 64 K pixels (waking a thread costs more than
 * clearing that much). */
static unsigned clear_parts(unsigned workers, const pl_frame *f)
{
    unsigned n = gr_parallel_parts(workers);
    uint64_t by_size = ((uint64_t)f->width * (uint64_t)f->height + 65535) / 65536;
    return n < by_size ? n : (unsigned)by_size;
}

/* r widened by `halo` pixels on each side, within the image. */
static pl_region widen(const pl_frame *f, pl_region r, int halo)
{
    return (pl_region){r.x0 > halo ? r.x0 - halo : 0, r.y0 > halo ? r.y0 - halo : 0,
                       r.x1 + halo < f->width ? r.x1 + halo : f->width,
                       r.y1 + halo < f->height ? r.y1 + halo : f->height};
}

static bool same_region(pl_region a, pl_region b)
{
    return a.x0 == b.x0 && a.y0 == b.y0 && a.x1 == b.x1 && a.y1 == b.y1;
}

/* The instance for the frame; when the graph has image-space stages and the frame renders
 * part of the image, the part widened by their halo (and *widened set), so that they read
 * what they would in a whole-image render (pipelines/image/image.h). The stages' create
 * hooks read the region, so the instance is made again for the wider one. */
cp_instance *pl_instantiate(cp_graph *g, pl_frame *frame, const cp_vars *vars,
                            pl_region *widened, char err[CP_ERR_MAX])
{
    cp_instance *in = cp_instance_new(g, frame, vars, err);
    if (!in) return NULL;
    const cp_image_pass *passes;
    int n = cp_instance_image_passes(in, &passes);
    int halo = n ? pli_total_halo(frame, passes, n, pli_graph_tile(g, vars), err) : 0;
    if (halo < 0) {
        cp_instance_free(in);
        return NULL;
    }
    pl_region wide = widen(frame, frame->region, halo);
    if (same_region(wide, frame->region)) return in;
    cp_instance_free(in);
    *widened = frame->region;
    frame->region = wide;
    return cp_instance_new(g, frame, vars, err);
}

bool pl_instance_render(cp_instance *in, cp_graph *g, pl_frame *frame, const gr_launch_opts *launch,
                        char err[CP_ERR_MAX])
{
    unsigned workers = pl_launch_workers(launch);
    if (!pl_frame_image_pixels(frame)) {   /* made here when no stage draws: background */
        snprintf(err, CP_ERR_MAX, "out of memory (image)");
        return false;
    }
    pl_frame_prepare(frame, clear_parts(workers, frame));
    if (cp_instance_run(in, launch, err) != GR_OK) return false;
    const cp_image_pass *passes;
    int n = cp_instance_image_passes(in, &passes);
    pl_vars_ctx vc = {g, frame->width, frame->height, workers};
    const cp_vars vars = pl_vars(&vc);
    return !n || pli_run(frame, passes, n, pli_graph_tile(g, &vars), workers, err);
}

/* The image's pixels in `wide` outside `asked`, kept while a widened region renders
 * (the stages write the margin, the image-space stages leave it half done) and put back
 * after, so that pixels outside the asked region keep their values, as pl_frame_set_region
 * promises: regions rendered in turn into one frame still make the whole image. */
typedef struct margin { pl_region wide, asked; uint32_t *saved; } margin;

static void margin_copy(pl_frame *f, margin *m, bool save)
{
    uint32_t *img = pl_frame_color(f), *p = m->saved;
    for (int y = m->wide.y0; y < m->wide.y1; y++)
        for (int x = m->wide.x0; x < m->wide.x1; x++) {
            if (x >= m->asked.x0 && x < m->asked.x1 && y >= m->asked.y0 && y < m->asked.y1) continue;
            uint32_t *px = &img[(size_t)y * (size_t)f->width + (size_t)x];
            if (save) *p++ = *px;
            else *px = *p++;
        }
}

/* pl_frame_image clears the image first when it is new, so what is kept is defined. */
static bool margin_save(pl_frame *f, margin *m)
{
    size_t n = (size_t)(m->wide.x1 - m->wide.x0) * (size_t)(m->wide.y1 - m->wide.y0);
    m->saved = pl_frame_image(f) ? malloc(n * sizeof *m->saved) : NULL;
    if (m->saved) margin_copy(f, m, true);
    return m->saved != NULL;
}

bool pl_graph_reads_hdr(const cp_graph *g, const cp_vars *vars)
{
    cp_resource_need needs[CP_MAX_RESOURCES];
    char err[CP_ERR_MAX];
    int n = cp_graph_resources(g, vars, needs, err);
    const cp_resource_need *hdr = n > 0 ? cp_resource_needed(needs, n, pl_hdr_resource.name) : NULL;
    return (hdr && (hdr->access & CP_READS)) || (n > 0 && cp_resource_needed(needs, n, "post"));
}

gr_graph *pl_render_frame(cp_graph *g, pl_frame *frame, const gr_launch_opts *launch,
                          char err[CP_ERR_MAX])
{
    pl_vars_ctx vc = {g, frame->width, frame->height, pl_launch_workers(launch)};
    cp_vars vars = pl_vars(&vc);
    margin m = {.asked = frame->region};
    pl_region asked = {0, 0, 0, 0};
    frame->hdr |= pl_graph_reads_hdr(g, &vars);
    cp_instance *in = pl_instantiate(g, frame, &vars, &asked, err);
    gr_graph *result = NULL;
    m.wide = frame->region;
    bool widened = asked.x1 > asked.x0;
    if (in && widened && !margin_save(frame, &m)) snprintf(err, CP_ERR_MAX, "out of memory (image margin)");
    else if (in && pl_instance_render(in, g, frame, launch, err)) result = cp_instance_take_graph(in);
    cp_instance_free(in);
    if (result && widened) margin_copy(frame, &m, false);
    free(m.saved);
    if (widened) frame->region = asked;
    return result;
}

gr_graph *pl_render_builtin(const char *name, pl_put_fn put, const void *cfg, pl_frame *frame,
                            const gr_launch_opts *launch, char err[CP_ERR_MAX])
{
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = r ? cp_graph_new(r) : NULL;
    gr_graph *result = NULL;
    if (r && !g) snprintf(err, CP_ERR_MAX, "out of memory");
    else if (g && !pl_graph_load(g, NULL, name, NULL, err) && !put(g, cfg, err))
        result = pl_render_frame(g, frame, launch, err);
    cp_graph_free(g);
    cp_registry_free(r);
    return result;
}

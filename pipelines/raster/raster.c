/* raster.c — plr_render: a rasterization graph (pipelines/graphs/raster.graph,
 * raster-ordered.graph or raster-parallel.graph) run for one frame with an plr_config's settings applied as
 * graph overrides, exactly as `gramps-render --set` would. The stages are in
 * raster_stages.c. */
#include "pipelines/raster/raster.h"

#include "pipelines/kept_graph.h"
#include "pipelines/raster/packets.h"
#include "pipelines/stages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plr_config_default(plr_config *c)
{
    memset(c, 0, sizeof *c);
    c->width = c->height = 1024;
    c->frag_capacity = 64;
    c->tile_capacity = 8;
    c->coarse_z = true;
    c->msaa = 1;
}

static bool check_config(const plr_config *c, char err[SC_ERR_MAX])
{
    const char *bad = NULL;
    if (c->width <= 0 || c->height <= 0 || c->width > PL_MAX_IMAGE_SIDE ||
        c->height > PL_MAX_IMAGE_SIDE)
        bad = "image size (" LIMIT_RANGE(1, PL_MAX_IMAGE_SIDE) ")";
    else if (c->tile && (c->tile < PLR_MIN_TILE || c->tile > PLR_MAX_TILE))
        bad = "tile size (0: the graph's, or " LIMIT_RANGE(PLR_MIN_TILE, PLR_MAX_TILE) ")";
    else if (c->batch < 0 || c->batch > MAX_BATCH) bad = "batch (0: the graph's, or " LIMIT_RANGE(1, MAX_BATCH) " triangles)";
    else if (c->groups < 0 || c->groups > PLR_MAX_GROUPS) bad = "groups (" LIMIT_RANGE(0, PLR_MAX_GROUPS) ")";
    else if (c->graph < PLR_TILED || c->graph > PLR_PARALLEL) bad = "graph";
    else if (!rs_sample_pattern(c->msaa)) bad = "msaa (1, 4 or 8 samples per pixel)";
    if (bad) snprintf(err, SC_ERR_MAX, "raster: invalid %s", bad);
    return bad == NULL;
}

/* The config's settings as overrides of the built-in graph. */
static int apply_config(cp_graph *g, const void *config, char err[CP_ERR_MAX])
{
    const plr_config *c = config;
    char v[7][32];
    snprintf(v[0], 32, "%d", c->tile);
    snprintf(v[1], 32, "%d", c->batch);
    snprintf(v[2], 32, "%d", c->groups);
    snprintf(v[3], 32, "%u", c->frag_capacity);
    snprintf(v[4], 32, "%u", c->tile_capacity);
    snprintf(v[5], 32, "%s", c->coarse_z ? "true" : "false");
    snprintf(v[6], 32, "%d", c->msaa);
    const char *w = "plr_config";
    bool ordered = c->graph != PLR_TILED;    /* the fragment queues are theirs */
    return (c->tile && cp_put(g, "graph", "tile", v[0], w, err)) ||
           (c->batch && cp_put(g, "graph", "batch", v[1], w, err)) ||
           cp_put(g, "graph", "msaa", v[6], w, err) ||
           (c->groups && cp_put(g, "graph", "groups", v[2], w, err)) ||
           (ordered && cp_put(g, "queue fragments", "capacity", v[3], w, err)) ||
           (ordered && cp_put(g, "queue tiles", "capacity", v[4], w, err)) ||
           (ordered && cp_put(g, "graph", "coarse_z", v[5], w, err));
}

gr_graph *plr_render(const sc_scene *scene, const sc_geometry *geo, const plr_config *cfg,
                     uint8_t *rgba, plr_counts *counts, char err[SC_ERR_MAX])
{
    if (!check_config(cfg, err)) return NULL;
    char why[CP_ERR_MAX];
    pl_scene_data data;
    pl_scene_data_init(&data, scene, geo);
    pl_frame f;
    gr_launch_opts o = cfg->launch;
    o.workers = cfg->workers;
    gr_graph *result = NULL;
    if (pl_frame_init(&f, &data, cfg->width, cfg->height, cfg->aov, why)) {
        static const char *const names[] = {"raster", "raster-ordered", "raster-parallel"};
        result = pl_render_builtin(names[cfg->graph], apply_config, cfg, &f, &o, why);
        if (result) memcpy(rgba, pl_frame_image(&f), (size_t)f.width * f.height * 4);
        if (result && counts)
            *counts = (plr_counts){geo->ntriangles, pl_frame_count(&f, "triangles_rasterized"),
                                   pl_frame_count(&f, "fragments_shaded"),
                                   pl_frame_count(&f, "coarse_z_culled")};
        pl_frame_free(&f);
    }
    if (!result) snprintf(err, SC_ERR_MAX, "raster: %.490s", why);
    pl_scene_data_free(&data);
    return result;
}

const gr_graph *plr_render_kept(pl_kept_builtin *keep, const sc_scene *scene, const sc_geometry *geo,
                                const plr_config *cfg, uint8_t *rgba, plr_counts *counts,
                                char err[SC_ERR_MAX])
{
    if (!check_config(cfg, err)) return NULL;
    static const char *const names[] = {"raster", "raster-ordered", "raster-parallel"};
    const pl_builtin_frame b = {names[cfg->graph], apply_config, cfg, sizeof *cfg, scene, geo, NULL,
                                cfg->width, cfg->height, cfg->aov, (uint32_t *)rgba};
    gr_launch_opts o = cfg->launch;
    o.workers = cfg->workers;
    char why[CP_ERR_MAX];
    const gr_graph *result = pl_kept_builtin_render(keep, &b, &o, why);
    pl_frame *f = pl_kept_builtin_frame(keep);
    if (result && counts)
        *counts = (plr_counts){geo->ntriangles, pl_frame_count(f, "triangles_rasterized"),
                               pl_frame_count(f, "fragments_shaded"),
                               pl_frame_count(f, "coarse_z_culled")};
    if (!result) snprintf(err, SC_ERR_MAX, "raster: %.490s", why);
    return result;
}

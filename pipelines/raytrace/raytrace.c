/* raytrace.c — plrt_render: the ray-tracing graph (pipelines/graphs/raytrace.graph) run
 * for one frame with an plrt_config's settings applied as graph overrides, exactly as
 * `gramps-render --set` would. The stages are in raytrace_stages.c. */
#include "pipelines/raytrace/raytrace.h"

#include "pipelines/kept_graph.h"
#include "pipelines/stages.h"
#include "raytracer/packet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plrt_config_default(plrt_config *c)
{
    memset(c, 0, sizeof *c);
    c->width = c->height = 1024;
    c->spp = 1;
    c->bounces = 1;
    c->packet_rays = 64;
    c->tile = 32;
    c->runs_capacity = 64;
    c->min_weight = 0.01f;
}

static bool check_config(const plrt_config *c, char err[SC_ERR_MAX])
{
    const char *bad = NULL;
    if (c->width <= 0 || c->height <= 0 || c->width > PL_MAX_IMAGE_SIDE ||
        c->height > PL_MAX_IMAGE_SIDE)
        bad = "image size (" LIMIT_RANGE(1, PL_MAX_IMAGE_SIDE) ")";
    else if (c->spp < 1 || c->spp > PL_MAX_SPP) bad = "samples per pixel (" LIMIT_RANGE(1, PL_MAX_SPP) ")";
    else if (c->bounces < 0 || c->bounces > PL_MAX_BOUNCES) bad = "bounces (" LIMIT_RANGE(0, PL_MAX_BOUNCES) ")";
    else if (c->packet_rays < 1 || c->packet_rays > RT_PACKET_MAX)
        bad = "packet size (" LIMIT_RANGE(1, RT_PACKET_MAX) " rays)";
    else if (c->tile < 1) bad = "tile size";
    if (bad) snprintf(err, SC_ERR_MAX, "raytrace: invalid %s", bad);
    return bad == NULL;
}

/* The config's settings as overrides of the built-in graph. */
static int apply_config(cp_graph *g, const void *config, char err[CP_ERR_MAX])
{
    const plrt_config *c = config;
    char v[6][32];
    snprintf(v[0], 32, "%d", c->spp);
    snprintf(v[1], 32, "%d", c->bounces);
    snprintf(v[2], 32, "%d", c->packet_rays);
    snprintf(v[3], 32, "%d", c->tile);
    snprintf(v[4], 32, "%u", c->runs_capacity);
    snprintf(v[5], 32, "%.9g", c->min_weight);
    const char *w = "plrt_config";
    return cp_put(g, "graph", "spp", v[0], w, err) || cp_put(g, "graph", "bounces", v[1], w, err) ||
           cp_put(g, "graph", "rays", v[2], w, err) || cp_put(g, "graph", "tile", v[3], w, err) ||
           cp_put(g, "queue runs", "capacity", v[4], w, err) ||
           cp_put(g, "stage shade", "min_weight", v[5], w, err);
}

gr_graph *plrt_render(const sc_scene *scene, const sc_geometry *geo, const rt_bvh *bvh,
                     const plrt_config *cfg, uint8_t *rgba, plrt_counts *counts,
                     char err[SC_ERR_MAX])
{
    if (!check_config(cfg, err)) return NULL;
    char why[CP_ERR_MAX];
    pl_scene_data data;
    pl_scene_data_init(&data, scene, geo);
    pl_scene_data_set_bvh(&data, bvh);
    pl_frame f;
    gr_launch_opts o = cfg->launch;
    o.workers = cfg->workers;
    gr_graph *result = NULL;
    if (pl_frame_init(&f, &data, cfg->width, cfg->height, cfg->aov, why)) {
        result = pl_render_builtin("raytrace", apply_config, cfg, &f, &o, why);
        if (result) memcpy(rgba, pl_frame_image(&f), (size_t)f.width * f.height * 4);
        if (result && counts)
            *counts = (plrt_counts){pl_frame_count(&f, "rays.primary"),
                                   pl_frame_count(&f, "rays.shadow"),
                                   pl_frame_count(&f, "rays.secondary")};
        pl_frame_free(&f);
    }
    if (!result) snprintf(err, SC_ERR_MAX, "raytrace: %.490s", why);
    pl_scene_data_free(&data);
    return result;
}

const gr_graph *plrt_render_kept(pl_kept_builtin *keep, const sc_scene *scene, const sc_geometry *geo,
                                 const rt_bvh *bvh, const plrt_config *cfg, uint8_t *rgba,
                                 plrt_counts *counts, char err[SC_ERR_MAX])
{
    if (!check_config(cfg, err)) return NULL;
    const pl_builtin_frame b = {"raytrace", apply_config, cfg, sizeof *cfg, scene, geo, bvh,
                                cfg->width, cfg->height, cfg->aov, (uint32_t *)rgba};
    gr_launch_opts o = cfg->launch;
    o.workers = cfg->workers;
    char why[CP_ERR_MAX];
    const gr_graph *result = pl_kept_builtin_render(keep, &b, &o, why);
    pl_frame *f = pl_kept_builtin_frame(keep);
    if (result && counts)
        *counts = (plrt_counts){pl_frame_count(f, "rays.primary"), pl_frame_count(f, "rays.shadow"),
                                pl_frame_count(f, "rays.secondary")};
    if (!result) snprintf(err, SC_ERR_MAX, "raytrace: %.490s", why);
    return result;
}

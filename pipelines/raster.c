/* raster.c — configures, builds and runs the rasterization graph described in raster.h;
 * its stages live in raster_geometry.c, raster_rast.c and raster_pixels.c. */
#include "pipelines/raster_internal.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rsp_config_default(rsp_config *c)
{
    memset(c, 0, sizeof *c);
    c->width = c->height = 1024;
    c->tile = 64;
    c->batch = 64;
    c->frag_capacity = 64;
    c->tile_capacity = 8;
    c->coarse_z = true;
}

/* ---- graph ------------------------------------------------------------------------------------ */

static int opaque(gr_graph *g, const char *name, size_t bytes, uint32_t cap, uint32_t subqueues, bool ordered)
{
    return gr_queue(g, &(gr_queue_desc){.name = name, .packet_bytes = bytes, .capacity = cap,
                                        .subqueues = subqueues, .ordered = ordered});
}

static gr_graph *build_graph(rsp_state *s, group_info *groups, int ngroups, const rast_cfg *rc)
{
    gr_graph *g = gr_graph_create();
    size_t prim_bytes = prim_pkt_bytes((uint32_t)s->cfg.batch);
    int prims = opaque(g, "primitives", prim_bytes, 8, 0, false);
    int ordered = opaque(g, "ordered-primitives", prim_bytes, 8, 0, false);
    int frags = opaque(g, "fragments", sizeof(frag_pkt), s->cfg.frag_capacity, 0, true);
    int tiles = opaque(g, "tiles", sizeof(frag_pkt), s->cfg.tile_capacity,
                       (uint32_t)(s->tiles_x * s->tiles_y), true);
    int reorder = gr_stage(g, &(gr_stage_desc){.name = "reorder", .kind = GR_THREAD, .main = rsp_reorder_main, .user = s});
    int rast = gr_stage(g, &(gr_stage_desc){.name = s->cfg.parallel_rast ? "setup-bin" : "rast",
                                            .kind = GR_FIXED, .main = s->cfg.parallel_rast ? rsp_setup_bin_main : rsp_rast_main,
                                            .user = s, .config = rc, .config_bytes = sizeof *rc});
    int ps = gr_stage(g, &(gr_stage_desc){.name = "ps", .kind = GR_SHADER, .main = rsp_ps_main, .user = s});
    int om = gr_stage(g, &(gr_stage_desc){.name = "om", .kind = GR_THREAD, .main = rsp_om_main, .user = s, .instanced = true});
    for (int k = 0; k < ngroups; k++) {
        char qn[32], ian[32], vsn[32];
        snprintf(qn, sizeof qn, "ia-%d", k);
        snprintf(ian, sizeof ian, "ia-%d", k);
        snprintf(vsn, sizeof vsn, "vs-%d", k);
        int q = opaque(g, qn, sizeof(ia_pkt), 8, 0, false);
        int ia = gr_stage(g, &(gr_stage_desc){.name = ian, .kind = GR_THREAD, .main = rsp_ia_main, .user = &groups[k]});
        int vs = gr_stage(g, &(gr_stage_desc){.name = vsn, .kind = GR_SHADER, .main = rsp_vs_main, .user = s});
        gr_bind(g, ia, GR_BIND_OUTPUT, q);
        gr_bind(g, vs, GR_BIND_INPUT, q);
        gr_bind(g, vs, GR_BIND_OUTPUT, prims);
    }
    gr_bind(g, reorder, GR_BIND_INPUT, prims);
    gr_bind(g, reorder, GR_BIND_OUTPUT, ordered);
    gr_bind(g, rast, GR_BIND_INPUT, ordered);
    if (s->cfg.parallel_rast) {
        int binned = opaque(g, "binned", sizeof(binned_pkt), 16, (uint32_t)(s->tiles_x * s->tiles_y), false);
        int trast = gr_stage(g, &(gr_stage_desc){.name = "rast", .kind = GR_THREAD, .main = rsp_tile_rast_main,
                                                 .user = s, .config = rc, .config_bytes = sizeof *rc,
                                                 .instanced = true});
        gr_bind(g, rast, GR_BIND_OUTPUT, binned);
        gr_bind(g, trast, GR_BIND_INPUT, binned);
        gr_bind(g, trast, GR_BIND_OUTPUT, frags);
    } else {
        gr_bind(g, rast, GR_BIND_OUTPUT, frags);
    }
    gr_bind(g, ps, GR_BIND_INPUT, frags);
    gr_bind(g, ps, GR_BIND_INPLACE, tiles);
    gr_bind(g, om, GR_BIND_INPUT, tiles);
    return g;
}

static bool check_config(const rsp_config *c, char err[SC_ERR_MAX])
{
    const char *bad = NULL;
    if (c->width <= 0 || c->height <= 0 || c->width > 16384 || c->height > 16384) bad = "image size (1..16384)";
    else if (c->tile < 8 || c->tile > 256) bad = "tile size (8..256)";
    else if (c->batch < 1 || c->batch > MAX_BATCH) bad = "batch (1..128 triangles)";
    else if (c->groups < 0 || c->groups > 256) bad = "groups (0..256)";
    if (bad) snprintf(err, SC_ERR_MAX, "raster: invalid %s", bad);
    return bad == NULL;
}

/* One group per worker, at most RSP_DEFAULT_GROUPS_MAX (see raster.h). */
static int default_groups(unsigned workers)
{
    long n = workers ? (long)workers : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > RSP_DEFAULT_GROUPS_MAX ? RSP_DEFAULT_GROUPS_MAX : (int)n;
}

/* Batches dealt round-robin to the groups, so they reach Reorder nearly in sequence.
 * Contiguous index ranges per group made every later group's batches wait there for all
 * of the earlier ones: Reorder copied half of the primitives twice (into a holding
 * buffer outside any queue, then out) and took 16 ms of a bunny frame at 2 workers
 * against 0.7 ms at 1. */
static void split_groups(rsp_state *s, group_info *gi, int n)
{
    for (int k = 0; k < n; k++) gi[k] = (group_info){s, (uint32_t)k, (uint32_t)n};
}

gr_graph *rsp_render(const sc_scene *scene, const sc_geometry *geo, const rsp_config *cfg,
                     uint8_t *rgba, rsp_counts *counts, char err[SC_ERR_MAX])
{
    if (!check_config(cfg, err)) return NULL;
    rsp_state *s = calloc(1, sizeof *s);
    size_t npix = (size_t)cfg->width * cfg->height;
    if (s) {
        s->color = malloc(npix * sizeof *s->color);
        s->depth = malloc(npix * sizeof *s->depth);
    }
    if (!s || !s->color || !s->depth) {
        if (s) { free(s->color); free(s->depth); free(s); }
        snprintf(err, SC_ERR_MAX, "raster: out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->geo = geo;
    sh_raster_env_init(&s->env, scene, geo, cfg->width, cfg->height, cfg->aov);
    s->tiles_x = (cfg->width + cfg->tile - 1) / cfg->tile;
    s->tiles_y = (cfg->height + cfg->tile - 1) / cfg->tile;
    s->batches = (uint32_t)((geo->ntriangles + (size_t)cfg->batch - 1) / (size_t)cfg->batch);
    uint32_t bg = sh_background(&s->env);
    uint32_t far_bits;
    float far = FLT_MAX;
    memcpy(&far_bits, &far, sizeof far_bits);
    for (size_t i = 0; i < npix; i++) { s->color[i] = bg; atomic_init(&s->depth[i], far_bits); }
    int ngroups = cfg->groups ? cfg->groups : default_groups(cfg->workers);
    if ((uint32_t)ngroups > s->batches) ngroups = s->batches ? (int)s->batches : 1;
    group_info *gi = calloc((size_t)ngroups, sizeof *gi);
    rast_cfg rc = {cfg->width, cfg->height, cfg->tile, s->tiles_x};
    gr_graph *g = NULL;
    if (gi && rsp_hiz_init(&s->hiz, cfg->width, cfg->height, far_bits)) {
        split_groups(s, gi, ngroups);
        g = build_graph(s, gi, ngroups, &rc);
    }
    gr_launch_opts o = cfg->launch;
    o.workers = cfg->workers;
    if (!g || gr_launch(g, &o, NULL, 0) != GR_OK || gr_wait(g) != GR_OK) {
        snprintf(err, SC_ERR_MAX, "raster: %s", g ? gr_error(g) : "out of memory");
        gr_graph_destroy(g);
        g = NULL;
    } else {
        memcpy(rgba, s->color, npix * 4);
        if (counts) *counts = (rsp_counts){geo->ntriangles, s->rasterized, s->fragments, s->hidden};
    }
    rsp_hiz_free(&s->hiz);
    free(gi);
    free(s->color);
    free(s->depth);
    free(s);
    return g;
}

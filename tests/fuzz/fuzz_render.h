/* fuzz_render.h — what a fuzz input goes through, shared by the libFuzzer targets
 * (fuzz_load.c) and the replay test (tests/render/test_fuzz_corpus.c): load (with small
 * import limits), flatten, render with both pipelines at 16x16 on one worker. */
#ifndef TESTS_FUZZ_RENDER_H
#define TESTS_FUZZ_RENDER_H

#include "pipelines/raster/raster.h"
#include "pipelines/raytrace/raytrace.h"
#include "raytracer/bvh.h"
#include "scenes/scene.h"

#include <stdlib.h>

/* 0 when the scene loaded and both renders succeeded; -1 with err set when it was
 * refused (load, flatten or render error). Never crashes, by contract. */
static inline int fuzz_load_and_render(const char *path, char err[SC_ERR_MAX])
{
    sc_load_opts lo = sc_load_opts_default();
    lo.max_memory = (size_t)1 << 30;
    lo.import_seconds = 5;
    lo.max_texture_pixels = 1 << 20;
    sc_scene *s;
    if (sc_load_with(path, &lo, &s, err) != 0) return -1;
    sc_geometry g;
    int rc = sc_flatten(s, &g, err);
    uint8_t rgba[16 * 16 * 4];
    if (rc == 0) {
        plr_config rc_cfg;
        plr_config_default(&rc_cfg);
        rc_cfg.width = rc_cfg.height = 16;
        rc_cfg.workers = 1;
        plr_counts rcounts;
        gr_graph *gr = plr_render(s, &g, &rc_cfg, rgba, &rcounts, err);
        rc = gr ? 0 : -1;
        gr_graph_destroy(gr);
        rt_bvh *bvh = rc == 0 ? rt_bvh_build(g.positions, g.indices, g.ntriangles, NULL) : NULL;
        plrt_config rt_cfg;
        plrt_config_default(&rt_cfg);
        rt_cfg.width = rt_cfg.height = 16;
        rt_cfg.workers = 1;
        plrt_counts tcounts;
        gr = bvh ? plrt_render(s, &g, bvh, &rt_cfg, rgba, &tcounts, err) : NULL;
        if (rc == 0 && !gr) rc = -1;
        gr_graph_destroy(gr);
        rt_bvh_free(bvh);
        sc_geometry_free(&g);
    }
    sc_free(s);
    return rc;
}

#endif

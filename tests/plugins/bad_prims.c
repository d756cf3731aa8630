/* bad_prims.c — Thread stages that send the built-in sort-middle stages set-up triangles
 * no setup makes, for tests/render/test_plugins.c: the stage that reads them must fail
 * the run naming the record, not rasterize outside its tile or the image.
 *   test.bad-binned: one packet to tile 0 of Tile-Shade, whose third triangle has no area;
 *   test.bad-prims:  one primitives packet to Bin, whose second record has cut flag 2. */
#include "compose/compose.h"
#include "pipelines/raster/packets.h"

#include <string.h>

/* A set-up triangle that plr_prim_ok accepts: primitive 0, one pixel, some area. */
static void valid_prim(plr_prim *p)
{
    memset(p, 0, sizeof *p);
    p->su.area = 1;
}

static void run_binned(gr_ctx *c)
{
    gr_window w;
    gr_reserve_out_key(c, 0, 1, 0, &w);
    binned_pkt *p = w.mem;
    memset(p, 0, sizeof *p);
    p->count = 3;
    for (int i = 0; i < 3; i++) valid_prim(&p->t[i].prim);
    p->t[2].prim.su.area = 0;
    gr_commit_out(c, 0, 1);
}

static void run_prims(gr_ctx *c)
{
    gr_window w;
    gr_reserve_out(c, 0, 1, &w);
    prim_pkt *p = w.mem;
    p->seq = 0;
    p->count = 3;
    for (int i = 0; i < 3; i++) {
        p->rec[i].cut = 0;
        valid_prim(&p->rec[i].set);
    }
    p->rec[1].cut = 2;
    gr_commit_out(c, 0, 1);
}

static const cp_port binned_ports[] = {{"out", GR_BIND_OUTPUT, "raster.binned", NULL}};
static const cp_port prims_ports[] = {{"out", GR_BIND_OUTPUT, "raster.primitives", NULL}};
static const cp_stage_type bad_binned = {.name = "test.bad-binned", .help = "a triangle with no area to tile 0",
                                         .kind = GR_THREAD, .ports = binned_ports, .nports = 1,
                                         .main = run_binned};
static const cp_stage_type bad_prims = {.name = "test.bad-prims", .help = "a record with cut flag 2",
                                        .kind = GR_THREAD, .ports = prims_ports, .nports = 1,
                                        .main = run_prims};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_stage(r, &bad_binned, err) || cp_register_stage(r, &bad_prims, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "bad-prims", register_stages};

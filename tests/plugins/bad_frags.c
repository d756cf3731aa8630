/* bad_frags.c — a Thread stage that sends the built-in Output Merger a fragment outside
 * its tile, for tests/render/test_plugins.c: the OM must fail the run with a message
 * instead of writing outside its tile or the image. */
#include "compose/compose.h"
#include "pipelines/raster/packets.h"

#include <string.h>

static void run(gr_ctx *c)
{
    gr_window w;
    gr_reserve_out_key(c, 0, 1, 0, &w);
    frag_pkt *p = w.mem;
    memset(p, 0, sizeof *p);
    p->count = 1;
    p->ntris = 1;
    p->x[0] = 60000;                      /* tile 0 is 0..63 */
    p->y[0] = 3;
    gr_commit_out(c, 0, 1);
}

static const cp_port ports[] = {{"out", GR_BIND_OUTPUT, "raster.fragments", NULL}};
static const cp_stage_type bad = {.name = "test.bad-frags", .help = "one fragment outside tile 0",
                                  .kind = GR_THREAD, .ports = ports, .nports = 1, .main = run};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_stage(r, &bad, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "bad-frags", register_stages};

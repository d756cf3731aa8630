/* bad_contrib.c — a Thread stage that sends rt.blend one contribution to a pixel outside
 * the image, for tests/render/test_plugins.c: the built-in Blend must fail the run with
 * a message instead of adding outside its sums. */
#include "compose/compose.h"
#include "pipelines/raytrace/packets.h"

static void run(gr_ctx *c)
{
    gr_window w;
    gr_reserve_out_key(c, 0, 1, 0, &w);
    plrt_contrib *k = plrt_elems(w.mem);
    plrt_set_contrib(k, 0xfffffff0u, (const float[3]){1, 1, 1});
    gr_set_count(w.mem, 1);
    gr_commit_out(c, 0, 1);
}

static const cp_port ports[] = {{"out", GR_BIND_OUTPUT, "rt.contributions", NULL}};
static const cp_stage_type bad = {.name = "test.bad-contrib", .help = "one contribution to a pixel outside the image",
                                  .kind = GR_THREAD, .ports = ports, .nports = 1, .main = run};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_stage(r, &bad, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "bad-contrib", register_stages};

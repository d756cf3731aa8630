/* bad_counts.c — a plugin registering a stage type with a negative port count, for
 * tests/render/test_plugins.c: refused at registration, naming the type and the count
 * (it used to be accepted and reported later as "out of memory"). */
#include "compose/compose.h"

static void run(gr_ctx *c) { (void)c; }

static const cp_stage_type bad = {.name = "bad.counts", .help = "negative port count",
                                  .kind = GR_THREAD, .nports = -1, .main = run};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_stage(r, &bad, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "bad-counts", register_stages};

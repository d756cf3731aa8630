/* crash.c — stages that crash, for tests/render/test_crash_report.c: the program must
 * name the stage, its type and this plugin's file, and the signal, and exit 1.
 *   test.emit        Thread: one empty fragment packet, then done
 *   test.segv        Shader: writes through a null pointer on its packet
 *   test.segv-thread Thread: the same in a Thread stage (on a fiber)
 *   test.fpe         Shader: raises SIGFPE (integer division by zero traps on x86 only) */
#include "compose/compose.h"
#include "pipelines/raster/packets.h"

#include <signal.h>
#include <string.h>

static void emit(gr_ctx *c)
{
    gr_window w;
    gr_reserve_out_key(c, 0, 1, 0, &w);
    memset(w.mem, 0, sizeof(frag_pkt));
    gr_commit_out(c, 0, 1);
}

/* An unmapped address in the first page, read at run time: not NULL, so that
 * UBSan's null-pointer check leaves the fault to the signal handler under test. */
static int *volatile nowhere = (int *)16;

static void segv(gr_ctx *c)
{
    (void)c;
    *nowhere = 1;
}

static void fpe(gr_ctx *c)
{
    (void)c;
    raise(SIGFPE);
}

static const cp_port out[] = {{"out", GR_BIND_OUTPUT, "raster.fragments", NULL}};
static const cp_port in[] = {{"in", GR_BIND_INPUT, "raster.fragments", NULL}};
static const cp_stage_type types[] = {
    {.name = "test.emit", .help = "one empty fragment packet", .kind = GR_THREAD, .ports = out,
     .nports = 1, .main = emit},
    {.name = "test.segv", .help = "a null write", .kind = GR_SHADER, .ports = in, .nports = 1,
     .main = segv},
    {.name = "test.segv-thread", .help = "a null write", .kind = GR_THREAD, .ports = out,
     .nports = 1, .main = segv},
    {.name = "test.fpe", .help = "SIGFPE", .kind = GR_SHADER, .ports = in, .nports = 1, .main = fpe},
};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (cp_register_stage(r, &types[i], err)) return -1;
    return 0;
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "crash", register_stages};

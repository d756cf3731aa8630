/* bad_kernel.c — a plugin registering a Shader type whose OpenCL kernel does not build
 * (a syntax error), for tests/render/test_opencl.c: placed on the device, the graph is
 * refused before the run with the compiler's build log, the stage and the file named.
 * On the CPU it forwards its rays unchanged. */
#include "compose/compose.h"

static void run(gr_ctx *c) { (void)c; }

static int no_buffers(void *state, const struct ac_buffer *out[CP_KERNEL_BUFFERS])
{
    (void)state;
    (void)out;
    return 0;
}

static const char source[] =
    "kernel void broken(global uchar *e, uint n, global uchar *r)\n"
    "{\n"
    "    e[0] = n +;   /* the syntax error */\n"
    "}\n";

static const cp_port ports[] = {{"in", GR_BIND_INPUT, "rt.rays", NULL},
                                {"out", GR_BIND_INPLACE, "rt.rays", NULL}};

static const cp_kernel_stage_type bad = {
    {.name = "test.bad-kernel", .help = "a kernel with a syntax error", .kind = GR_SHADER,
     .ports = ports, .nports = 2, .main = run},
    {.file = "tests/plugins/bad_kernel.cl", .source = source, .name = "broken", .inplace = true,
     .buffers = no_buffers}};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_kernel_stage(r, &bad, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "bad-kernel", register_stages};

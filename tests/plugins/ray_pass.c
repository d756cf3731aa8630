/* ray_pass.c — a plugin registering test.ray-pass, a Shader type that forwards its rays
 * unchanged, on the CPU or as an OpenCL kernel that rewrites nothing, for
 * tests/render/test_device_queue.c: placed after rt.intersect on the device, the queue
 * between the two keeps its rays (and their hits) in device memory. */
#include "compose/compose.h"

static void run(gr_ctx *c) { (void)c; }

static int no_buffers(void *state, const struct ac_buffer *out[CP_KERNEL_BUFFERS])
{
    (void)state;
    (void)out;
    return 0;
}

static const char source[] =
    "kernel void ray_pass(global uchar *elements, uint n, global uchar *results)\n"
    "{\n"
    "}\n";

static const cp_port ports[] = {{"in", GR_BIND_INPUT, "rt.rays", NULL},
                                {"out", GR_BIND_INPLACE, "rt.rays", NULL}};

static const cp_kernel_stage_type pass = {
    {.name = "test.ray-pass", .help = "forwards its rays unchanged", .kind = GR_SHADER,
     .ports = ports, .nports = 2, .main = run},
    {.file = "tests/plugins/ray_pass.cl", .source = source, .name = "ray_pass", .inplace = true,
     .buffers = no_buffers}};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_kernel_stage(r, &pass, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "ray-pass", register_stages};

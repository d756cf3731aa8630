/* ray_pass.c — a plugin registering test.ray-pass, a Shader type that forwards its rays
 * unchanged, on the CPU or as an OpenCL kernel that rewrites nothing, for
 * tests/render/test_device_queue.c: placed after rt.intersect on the device, the queue
 * between the two keeps its rays (and their hits) in device memory. */
#include "tests/plugins/ray_kernel_type.h"

static const char source[] =
    "kernel void ray_pass(global uchar *elements, uint n, global uchar *results)\n"
    "{\n"
    "}\n";

static const cp_kernel_stage_type pass =
    RAY_KERNEL_TYPE("test.ray-pass", "forwards its rays unchanged",
                    "tests/plugins/ray_pass.cl", source, "ray_pass");

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_kernel_stage(r, &pass, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "ray-pass", register_stages};

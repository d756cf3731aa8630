/* bad_kernel.c — a plugin registering a Shader type whose OpenCL kernel does not build
 * (a syntax error), for tests/render/test_opencl.c: placed on the device, the graph is
 * refused before the run with the compiler's build log, the stage and the file named.
 * On the CPU it forwards its rays unchanged. */
#include "tests/plugins/ray_kernel_type.h"

static const char source[] =
    "kernel void broken(global uchar *e, uint n, global uchar *r)\n"
    "{\n"
    "    e[0] = n +;   /* the syntax error */\n"
    "}\n";

static const cp_kernel_stage_type bad =
    RAY_KERNEL_TYPE("test.bad-kernel", "a kernel with a syntax error",
                    "tests/plugins/bad_kernel.cl", source, "broken");

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_kernel_stage(r, &bad, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "bad-kernel", register_stages};

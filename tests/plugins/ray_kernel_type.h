/* ray_kernel_type.h — for the test plugins that register one Shader type with an OpenCL
 * kernel over the ray tracer's rays (ray_pass.c, bad_kernel.c): input "in" and in-place
 * output "out", both rt.rays, a CPU function that forwards the rays unchanged and a
 * kernel that takes no buffers. The including file gives the name, help, kernel source
 * and kernel name and registers the type. */
#ifndef TESTS_PLUGINS_RAY_KERNEL_TYPE_H
#define TESTS_PLUGINS_RAY_KERNEL_TYPE_H

#include "compose/compose.h"

/* The packet goes on in place as it came. */
static void forward_rays(gr_ctx *c) { (void)c; }

static int no_buffers(void *state, const struct ac_buffer *out[CP_KERNEL_BUFFERS])
{
    (void)state;
    (void)out;
    return 0;
}

static const cp_port ray_ports[] = {{"in", GR_BIND_INPUT, "rt.rays", NULL},
                                    {"out", GR_BIND_INPLACE, "rt.rays", NULL}};

/* A cp_kernel_stage_type initializer; FILE names the kernel in build logs. */
#define RAY_KERNEL_TYPE(NAME, HELP, FILE, SOURCE, KERNEL)                                 \
    {{.name = NAME, .help = HELP, .kind = GR_SHADER, .ports = ray_ports, .nports = 2,     \
      .main = forward_rays},                                                              \
     {.file = FILE, .source = SOURCE, .name = KERNEL, .inplace = true, .buffers = no_buffers}}

#endif

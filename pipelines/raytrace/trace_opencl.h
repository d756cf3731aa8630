/* trace_opencl.h — rt.intersect and rt.shadow on the OpenCL device: the kernels of
 * pipelines/raytrace/opencl/trace.cl, the device copy of the scene's BVH they read (the
 * frame resource "bvh.opencl", uploaded once per scene and kept by its pl_scene_data)
 * and the host side of each launch (docs/opencl.md). */
#ifndef PIPELINES_RAYTRACE_TRACE_OPENCL_H
#define PIPELINES_RAYTRACE_TRACE_OPENCL_H

#include "compose/compose.h"
#include "pipelines/raytrace/packets.h"
#include "shaders/ray_shading.h"

/* The state rt.intersect and rt.shadow share (raytrace_stages.c makes it). */
typedef struct plrt_trace_state {
    const rt_bvh *bvh;
    _Atomic(uint64_t) *primary, *secondary, *shadow;
    plrt_blend_keys keys;                  /* for Shadow's contributions */
    const sh_ray_env *env;                 /* Shadow in a scene with blended materials, else NULL */
    const struct plrt_device_bvh *device;  /* placed on the device: the BVH's copy there */
} plrt_trace_state;

extern const cp_resource_type plrt_device_bvh_resource;

/* The kernels' descriptions (cp_kernel initialisers, for raytrace_stages.c's table) and
 * the hooks they name. */
extern const char cl_pipelines_raytrace_opencl_trace[];
#define PLRT_TRACE_CL "pipelines/raytrace/opencl/trace.cl"
/* Intersect's emit reads only a ray's depth and layers, which the kernel leaves as they
 * were: its hits may stay on the device for a next stage there (resident_emit). */
#define PLRT_INTERSECT_KERNEL {.file = PLRT_TRACE_CL, .source = cl_pipelines_raytrace_opencl_trace, \
    .name = "rt_intersect", .result_bytes = 0, .inplace = true, .resident_emit = true, \
    .buffers = plrt_trace_buffers, .unsupported = plrt_intersect_unsupported, .emit = plrt_intersect_emit}
#define PLRT_SHADOW_KERNEL {.file = PLRT_TRACE_CL, .source = cl_pipelines_raytrace_opencl_trace, \
    .name = "rt_occluded", .result_bytes = 1, .inplace = false, .buffers = plrt_trace_buffers, \
    .unsupported = plrt_shadow_unsupported, .emit = plrt_shadow_emit, \
    .emit_reads_from = offsetof(plrt_shadow, color), .set_pushes = plrt_shadow_set_pushes}
/* Why bvh.opencl could not be made on this thread, for the stage's message. */
const char *plrt_device_bvh_error(void);
int plrt_trace_buffers(void *state, const struct ac_buffer *out[CP_KERNEL_BUFFERS]);
/* The BVH's buffers as trace.cl's kernels take them (nodes, triangle blocks, info); -1
 * without a copy. For other stages that trace on the device (hybrid.trace). */
int plrt_device_bvh_buffers(const struct plrt_device_bvh *d,
                            const struct ac_buffer *out[CP_KERNEL_BUFFERS]);
const char *plrt_intersect_unsupported(void *state);
const char *plrt_shadow_unsupported(void *state);
void plrt_intersect_emit(gr_ctx *c, void *state, void *packet, const void *results, uint32_t n);
void plrt_shadow_emit(gr_ctx *c, void *state, void *packet, const void *results, uint32_t n);
/* The Blend keys its contributions go to, one at most per shadow ray (cp_kernel.set_pushes). */
uint32_t plrt_shadow_set_pushes(void *state, const void *packet, int output, gr_set_push *pushes);

#endif

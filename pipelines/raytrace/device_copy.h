/* device_copy.h — host data copied to the OpenCL device as a few buffers uploaded
 * together, in order, all or none: the scene's BVH (bvh.opencl, trace_opencl.c), its
 * normals, indices, triangle materials, positions and texture coordinates (shading.opencl)
 * and each rt.shade instance's
 * material table and lights (shade_opencl.c). The buffers are a kernel's arguments in
 * the same order. */
#ifndef PIPELINES_RAYTRACE_DEVICE_COPY_H
#define PIPELINES_RAYTRACE_DEVICE_COPY_H

#include "accel/opencl.h"
#include "compose/compose.h"

#define PLRT_COPY_MAX 5

/* `bytes` bytes at `data`, to be one buffer. */
typedef struct plrt_host_range { const void *data; size_t bytes; } plrt_host_range;

typedef struct plrt_device_copy {
    int n;
    ac_buffer *buf[PLRT_COPY_MAX];
} plrt_device_copy;

/* Uploads r[0..n) (n <= PLRT_COPY_MAX) to dev into *c, one buffer each: 0, or -1 with why
 * in err and nothing left on the device (*c empty). */
int plrt_copy_upload(plrt_device_copy *c, ac_device *dev, const plrt_host_range *r, int n,
                     char err[AC_ERR_MAX]);
/* Frees the buffers; *c is empty after. */
void plrt_copy_free(plrt_device_copy *c);
/* c's buffers in order into out[at..]: at plus their number. */
int plrt_copy_buffers(const plrt_device_copy *c, const ac_buffer *out[CP_KERNEL_BUFFERS], int at);

#endif

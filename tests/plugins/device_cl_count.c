/* device_cl_count.c — an LD_PRELOAD shim for the device tests (test_device_counts.c):
 * counts what the process really asked of OpenCL, independently of the statistics the
 * runtime keeps: kernel launches (clEnqueueNDRangeKernel; those of accel/'s gather
 * kernel, ac_gather, also apart), bytes written to and read
 * from device buffers by the host (the plain and rectangular writes and reads; a
 * rectangle's bytes are its region's), bytes copied within the device, and the bytes
 * buffers were created with from host memory (CL_MEM_COPY_HOST_PTR: the scene's and
 * frame's uploads, which no stage's statistics claim). Each call is passed on
 * unchanged. At exit it writes one line "launches L gathers G to T from F within W created C",
 * then a line "items KERNEL N" per kernel launched (its work-items, summed: elements
 * launched, so a packet launched twice counts twice), to the file named by
 * DEVICE_CL_COUNT (nothing when unset). Not a stage plugin: it
 * sits in tests/plugins so that the build makes it a shared object.
 *
 * The program calls the ICD loader's exported cl* functions (librender links
 * libOpenCL.so), so a preloaded definition comes first and RTLD_NEXT finds the loader's;
 * the vendor library (PoCL) is reached through the loader's dispatch table, never by
 * these names. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic(unsigned long long) launches, gathers, to_device, from_device, within_device, created;

/* The loader's function `name` (the next definition after this shim's). */
static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "device_cl_count: no %s after the shim\n", name);
        abort();
    }
    return f;
}

#define NEXT(type, name) ((type)next(#name))

/* Work-items launched per kernel name (a process launches a handful of kernels). */
#define MAX_KERNELS 16
static struct { char name[64]; unsigned long long items; } kernels[MAX_KERNELS];
static int nkernels;
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;

static void add_items(const char *name, unsigned long long items)
{
    pthread_mutex_lock(&kernels_lock);
    int i = 0;
    while (i < nkernels && strcmp(kernels[i].name, name)) i++;
    if (i == nkernels && nkernels < MAX_KERNELS) snprintf(kernels[nkernels++].name, 64, "%s", name);
    if (i < nkernels) kernels[i].items += items;
    pthread_mutex_unlock(&kernels_lock);
}

/* A launch of k over `global`: counted, the gather kernel (accel/opencl/gather.cl's
 * ac_gather) apart; the name asked of the loader (not intercepted). */
static void count_launch(cl_kernel k, cl_uint dims, const size_t *global)
{
    char name[64] = "?";
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    unsigned long long items = 1;
    for (cl_uint d = 0; d < dims; d++) items *= global[d];
    launches++;
    if (!strcmp(name, "ac_gather")) gathers++;
    add_items(name, items);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *offset,
                              const size_t *global, const size_t *local, cl_uint nwait,
                              const cl_event *wait, cl_event *ev)
{
    typedef cl_int (*fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                         const size_t *, cl_uint, const cl_event *, cl_event *);
    cl_int e = NEXT(fn, clEnqueueNDRangeKernel)(q, k, dims, offset, global, local, nwait, wait, ev);
    if (e == CL_SUCCESS) count_launch(k, dims, global);
    return e;
}

cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t bytes,
                            const void *p, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    typedef cl_int (*fn)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                         const cl_event *, cl_event *);
    cl_int e = NEXT(fn, clEnqueueWriteBuffer)(q, b, blocking, offset, bytes, p, nwait, wait, ev);
    if (e == CL_SUCCESS) to_device += bytes;
    return e;
}

cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t bytes,
                           void *p, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    typedef cl_int (*fn)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                         const cl_event *, cl_event *);
    cl_int e = NEXT(fn, clEnqueueReadBuffer)(q, b, blocking, offset, bytes, p, nwait, wait, ev);
    if (e == CL_SUCCESS) from_device += bytes;
    return e;
}

static unsigned long long region_bytes(const size_t *region)
{
    return (unsigned long long)region[0] * region[1] * region[2];
}

cl_int clEnqueueWriteBufferRect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *buf_origin,
                                const size_t *host_origin, const size_t *region, size_t buf_row,
                                size_t buf_slice, size_t host_row, size_t host_slice, const void *p,
                                cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    typedef cl_int (*fn)(cl_command_queue, cl_mem, cl_bool, const size_t *, const size_t *,
                         const size_t *, size_t, size_t, size_t, size_t, const void *, cl_uint,
                         const cl_event *, cl_event *);
    cl_int e = NEXT(fn, clEnqueueWriteBufferRect)(q, b, blocking, buf_origin, host_origin, region, buf_row,
                                                  buf_slice, host_row, host_slice, p, nwait, wait, ev);
    if (e == CL_SUCCESS) to_device += region_bytes(region);
    return e;
}

cl_int clEnqueueReadBufferRect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *buf_origin,
                               const size_t *host_origin, const size_t *region, size_t buf_row,
                               size_t buf_slice, size_t host_row, size_t host_slice, void *p,
                               cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    typedef cl_int (*fn)(cl_command_queue, cl_mem, cl_bool, const size_t *, const size_t *,
                         const size_t *, size_t, size_t, size_t, size_t, void *, cl_uint,
                         const cl_event *, cl_event *);
    cl_int e = NEXT(fn, clEnqueueReadBufferRect)(q, b, blocking, buf_origin, host_origin, region, buf_row,
                                                 buf_slice, host_row, host_slice, p, nwait, wait, ev);
    if (e == CL_SUCCESS) from_device += region_bytes(region);
    return e;
}

cl_int clEnqueueCopyBuffer(cl_command_queue q, cl_mem from, cl_mem to, size_t from_offset,
                           size_t to_offset, size_t bytes, cl_uint nwait, const cl_event *wait,
                           cl_event *ev)
{
    typedef cl_int (*fn)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                         const cl_event *, cl_event *);
    cl_int e = NEXT(fn, clEnqueueCopyBuffer)(q, from, to, from_offset, to_offset, bytes, nwait, wait, ev);
    if (e == CL_SUCCESS) within_device += bytes;
    return e;
}

cl_mem clCreateBuffer(cl_context c, cl_mem_flags flags, size_t bytes, void *p, cl_int *err)
{
    typedef cl_mem (*fn)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
    cl_mem m = NEXT(fn, clCreateBuffer)(c, flags, bytes, p, err);
    if (m && (flags & CL_MEM_COPY_HOST_PTR)) created += bytes;
    return m;
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("DEVICE_CL_COUNT");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) return;
    fprintf(f, "launches %llu gathers %llu to %llu from %llu within %llu created %llu\n", launches,
            gathers, to_device, from_device, within_device, created);
    for (int i = 0; i < nkernels; i++) fprintf(f, "items %s %llu\n", kernels[i].name, kernels[i].items);
    fclose(f);
}

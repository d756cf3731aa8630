/* device_cl_count.c — an LD_PRELOAD shim for the device tests (test_device_counts.c):
 * counts what the process really asked of OpenCL, independently of the statistics the
 * runtime keeps: kernel launches (clEnqueueNDRangeKernel; those of accel/'s gather
 * kernel, ac_gather, also apart), bytes written to and read
 * from device buffers by the host (the plain and rectangular writes and reads; a
 * rectangle's bytes are its region's), bytes copied within the device, and the bytes
 * buffers were created with from host memory (CL_MEM_COPY_HOST_PTR: the scene's and
 * frame's uploads, which no stage's statistics claim), and each kernel's device time.
 * Each call is passed on unchanged (a launch asked for no event gets one, which the shim
 * releases). At exit it writes one line "launches L gathers G to T from F within W
 * created C", then a line "items KERNEL N" per kernel launched (its work-items, summed:
 * elements launched, so a packet launched twice counts twice), a line "kernel_ns KERNEL
 * N" per kernel (its device time, summed: each launch's profiling event, END - START,
 * read once a clFinish on the launch's queue has returned) and a last line "window_ns W
 * unfinished U": W sums, over the launches, the host time from the enqueue to the
 * return of the clFinish that waited for it (no kernel runs outside its window, so the
 * device time is at most W), U counts the launches no clFinish waited for (not timed),
 * to the file named by DEVICE_CL_COUNT (nothing when unset). Not a stage plugin: it
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
#include <time.h>

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

/* Work-items launched and device time per kernel name (a process launches a handful of
 * kernels). */
#define MAX_KERNELS 16
static struct { char name[64]; unsigned long long items, ns; } kernels[MAX_KERNELS];
static int nkernels;
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;

/* Launches enqueued and not yet waited for by a clFinish on their queue. */
#define MAX_PENDING 256
typedef struct pending_launch {
    cl_command_queue q;
    cl_event ev;
    int kernel;
    unsigned long long enqueued;
} pending_launch;
static pending_launch pending[MAX_PENDING];
static int npending;
static unsigned long long window_ns, unfinished;

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* The index of kernel `name` in kernels (lock held); -1 when they are too many. */
static int kernel_index(const char *name)
{
    int i = 0;
    while (i < nkernels && strcmp(kernels[i].name, name)) i++;
    if (i == nkernels && nkernels < MAX_KERNELS) snprintf(kernels[nkernels++].name, 64, "%s", name);
    return i < nkernels ? i : -1;
}

/* A launch of k over `global`: counted, the gather kernel (accel/opencl/gather.cl's
 * ac_gather) apart; the name asked of the loader (not intercepted). Its event (a
 * reference the shim holds) waits for the clFinish that times it. */
static void count_launch(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *global,
                         cl_event ev, unsigned long long enqueued)
{
    char name[64] = "?";
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    unsigned long long items = 1;
    for (cl_uint d = 0; d < dims; d++) items *= global[d];
    launches++;
    if (!strcmp(name, "ac_gather")) gathers++;
    pthread_mutex_lock(&kernels_lock);
    int i = kernel_index(name);
    if (i >= 0) kernels[i].items += items;
    if (i >= 0 && npending < MAX_PENDING) {
        pending[npending++] = (pending_launch){q, ev, i, enqueued};
    } else {
        unfinished++;
        clReleaseEvent(ev);
    }
    pthread_mutex_unlock(&kernels_lock);
}

/* A finished launch's device time from its profiling event (the program's queues are made
 * with CL_QUEUE_PROFILING_ENABLE; without it nothing is counted). */
static unsigned long long device_ns(cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS)
        return 0;
    return t1 > t0 ? t1 - t0 : 0;
}

/* clFinish(q) returned at `done`: q's pending launches have run; their times. */
static void time_finished(cl_command_queue q, unsigned long long done)
{
    pthread_mutex_lock(&kernels_lock);
    for (int i = 0; i < npending;) {
        if (pending[i].q != q) {
            i++;
            continue;
        }
        kernels[pending[i].kernel].ns += device_ns(pending[i].ev);
        window_ns += done - pending[i].enqueued;
        clReleaseEvent(pending[i].ev);
        pending[i] = pending[--npending];
    }
    pthread_mutex_unlock(&kernels_lock);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *offset,
                              const size_t *global, const size_t *local, cl_uint nwait,
                              const cl_event *wait, cl_event *ev)
{
    typedef cl_int (*fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                         const size_t *, cl_uint, const cl_event *, cl_event *);
    cl_event own = NULL;
    unsigned long long enqueued = now_ns();
    cl_int e = NEXT(fn, clEnqueueNDRangeKernel)(q, k, dims, offset, global, local, nwait, wait,
                                                ev ? ev : &own);
    if (e == CL_SUCCESS && ev) clRetainEvent(*ev);
    if (e == CL_SUCCESS) count_launch(q, k, dims, global, ev ? *ev : own, enqueued);
    return e;
}

cl_int clFinish(cl_command_queue q)
{
    typedef cl_int (*fn)(cl_command_queue);
    cl_int e = NEXT(fn, clFinish)(q);
    if (e == CL_SUCCESS) time_finished(q, now_ns());
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
    for (int i = 0; i < nkernels; i++) fprintf(f, "kernel_ns %s %llu\n", kernels[i].name, kernels[i].ns);
    fprintf(f, "window_ns %llu unfinished %llu\n", window_ns, unfinished + (unsigned long long)npending);
    fclose(f);
}

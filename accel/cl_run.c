/* cl_run.c — device copies of read-only data, and one kernel launch over a packet's
 * elements on the calling worker's command queue. */
#include "accel/cl_internal.h"

#include <stdlib.h>

/* Devices may allocate lazily, so a buffer too large would fail only at its first use:
 * refuse it before the run, naming the limit. */
static int fits(ac_device *d, size_t bytes, char err[AC_ERR_MAX])
{
    cl_ulong max = 0;
    if (clGetDeviceInfo(d->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max, NULL) != CL_SUCCESS ||
        bytes <= max) return 0;
    snprintf(err, AC_ERR_MAX, "out of device memory: %zu bytes in one buffer, %s allows at most "
             "%llu (CL_DEVICE_MAX_MEM_ALLOC_SIZE)", bytes, d->name, (unsigned long long)max);
    return -1;
}

ac_buffer *ac_upload(ac_device *d, const void *data, size_t bytes, char err[AC_ERR_MAX])
{
    if (fits(d, bytes, err)) return NULL;
    ac_buffer *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, AC_ERR_MAX, "out of memory");
        return NULL;
    }
    cl_int e;
    /* A zero-byte buffer is not allowed: an empty scene still gets one element. */
    b->bytes = bytes;
    b->mem = clCreateBuffer(d->context, CL_MEM_READ_ONLY | (bytes ? CL_MEM_COPY_HOST_PTR : 0),
                            bytes ? bytes : 16, bytes ? (void *)data : NULL, &e);
    if (!b->mem) {
        snprintf(err, AC_ERR_MAX, "OpenCL: could not place %zu bytes on %s (%s)", bytes, d->name,
                 ac_error_name(e));
        free(b);
        return NULL;
    }
    return b;
}

void ac_buffer_free(ac_buffer *b)
{
    if (!b) return;
    clReleaseMemObject(b->mem);
    free(b);
}

size_t ac_buffer_bytes(const ac_buffer *b) { return b->bytes; }

/* Device memory of at least `bytes` in *mem (kept between launches, grown by doubling). */
static int ensure(ac_device *d, cl_mem *mem, size_t *cap, size_t bytes, char err[AC_ERR_MAX])
{
    if (*mem && *cap >= bytes) return 0;
    size_t want = *cap ? *cap : 4096;
    while (want < bytes) want *= 2;
    if (*mem) clReleaseMemObject(*mem);
    cl_int e;
    *mem = clCreateBuffer(d->context, CL_MEM_READ_WRITE, want, NULL, &e);
    *cap = *mem ? want : 0;
    if (*mem) return 0;
    snprintf(err, AC_ERR_MAX, "OpenCL: could not place %zu bytes on %s (%s)", want, d->name,
             ac_error_name(e));
    return -1;
}

static ac_slot *slot_of(ac_kernel *k, unsigned w, char err[AC_ERR_MAX])
{
    if (k->slots[w]) return k->slots[w];
    ac_slot *s = calloc(1, sizeof *s);
    cl_int e = CL_OUT_OF_HOST_MEMORY;
    if (s) s->kernel = clCreateKernel(k->program, k->name, &e);
    if (!s || !s->kernel) {
        snprintf(err, AC_ERR_MAX, "%s: kernel '%s': clCreateKernel failed (%s)", k->file, k->name,
                 ac_error_name(e));
        free(s);
        return NULL;
    }
    return k->slots[w] = s;
}

static cl_int set_args(ac_slot *s, const ac_launch *l)
{
    cl_uint n = l->n;
    cl_int e = clSetKernelArg(s->kernel, 0, sizeof(cl_mem), &s->elements);
    e |= clSetKernelArg(s->kernel, 1, sizeof n, &n);
    e |= clSetKernelArg(s->kernel, 2, sizeof(cl_mem), &s->results);
    for (int i = 0; i < l->nbuffers; i++)
        e |= clSetKernelArg(s->kernel, (cl_uint)(3 + i), sizeof(cl_mem), &l->buffers[i]->mem);
    return e;
}

/* The device time of a finished kernel, from its profiling event. */
static uint64_t kernel_ns(cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS)
        return 0;
    return t1 > t0 ? t1 - t0 : 0;
}

/* Copies in, launches, copies back; blocking at the last read (an in-order queue). */
static cl_int enqueue(cl_command_queue q, ac_slot *s, const ac_launch *l, cl_event *ev)
{
    const size_t in_bytes = l->element_bytes * l->n, res_bytes = l->result_bytes * l->n;
    const size_t global = l->n;
    cl_int e = clEnqueueWriteBuffer(q, s->elements, CL_FALSE, 0, in_bytes, l->elements, 0, NULL, NULL);
    if (e == CL_SUCCESS) e = clEnqueueNDRangeKernel(q, s->kernel, 1, NULL, &global, NULL, 0, NULL, ev);
    if (e == CL_SUCCESS && l->inplace)
        e = clEnqueueReadBuffer(q, s->elements, CL_FALSE, 0, in_bytes, l->elements, 0, NULL, NULL);
    if (e == CL_SUCCESS && res_bytes)
        e = clEnqueueReadBuffer(q, s->results, CL_FALSE, 0, res_bytes, l->results, 0, NULL, NULL);
    if (e == CL_SUCCESS) e = clFinish(q);
    return e;
}

int ac_run(ac_kernel *k, unsigned worker, const ac_launch *l, gr_device_work *work,
           char err[AC_ERR_MAX])
{
    ac_device *d = ac_device_opened();
    if (l->n == 0) return 0;
    cl_command_queue q = d ? ac_queue(d, worker, err) : NULL;
    ac_slot *s = q ? slot_of(k, worker, err) : NULL;
    if (!s) return -1;
    const size_t in_bytes = l->element_bytes * l->n, res_bytes = l->result_bytes * l->n;
    if (ensure(d, &s->elements, &s->elements_cap, in_bytes, err) ||
        ensure(d, &s->results, &s->results_cap, res_bytes ? res_bytes : 16, err)) return -1;
    cl_int e = set_args(s, l);
    if (e != CL_SUCCESS) {
        snprintf(err, AC_ERR_MAX, "%s: kernel '%s': its arguments do not match (elements, n, "
                 "results and %d buffers) (%s)", k->file, k->name, l->nbuffers, ac_error_name(e));
        return -1;
    }
    cl_event ev = NULL;
    e = enqueue(q, s, l, &ev);
    if (e != CL_SUCCESS) {
        snprintf(err, AC_ERR_MAX, "%s: kernel '%s' on %s failed (%s)", k->file, k->name, d->name,
                 ac_error_name(e));
        if (ev) clReleaseEvent(ev);
        return -1;
    }
    work->launches++;
    work->kernel_ns += kernel_ns(ev);
    work->bytes_to_device += in_bytes;
    work->bytes_from_device += (l->inplace ? in_bytes : 0) + res_bytes;
    clReleaseEvent(ev);
    return 0;
}

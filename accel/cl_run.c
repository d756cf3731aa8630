/* cl_run.c — device copies of read-only data, and one kernel launch over a packet's
 * elements on the calling worker's command queue. */
#include "accel/cl_internal.h"

#include <stdlib.h>

/* Devices may allocate lazily, so a buffer too large would fail only at its first use:
 * refuse it when it is asked for, naming the limit, and take its bytes from the
 * process's device memory (cl_memory.c). */
static int fits(ac_device *d, size_t bytes, const char *what, char err[AC_ERR_MAX])
{
    cl_ulong max = 0;
    if (clGetDeviceInfo(d->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max, NULL) == CL_SUCCESS &&
        bytes > max) {
        snprintf(err, AC_ERR_MAX, "out of device memory: %s: %zu bytes in one buffer, %s allows "
                 "at most %llu (CL_DEVICE_MAX_MEM_ALLOC_SIZE)", what, bytes, d->name,
                 (unsigned long long)max);
        return -1;
    }
    return ac_reserve(d, bytes, what, err);
}

/* A device buffer of `bytes` with `flags`, filled from data when it is not NULL, its bytes
 * taken from the device's memory as `what`. A zero-byte buffer is not allowed: an empty
 * one still gets 16 bytes. */
static ac_buffer *make_buffer(ac_device *d, cl_mem_flags flags, const void *data, size_t bytes,
                              const char *what, char err[AC_ERR_MAX])
{
    if (fits(d, bytes, what, err)) return NULL;
    ac_buffer *b = calloc(1, sizeof *b);
    if (!b) {
        ac_unreserve(d, bytes);
        snprintf(err, AC_ERR_MAX, "out of memory");
        return NULL;
    }
    cl_int e;
    const bool copy = data && bytes;
    b->bytes = bytes;
    b->mem = clCreateBuffer(d->context, flags | (copy ? CL_MEM_COPY_HOST_PTR : 0), bytes ? bytes : 16,
                            copy ? (void *)data : NULL, &e);
    if (!b->mem) {
        snprintf(err, AC_ERR_MAX, "OpenCL: could not place %zu bytes on %s (%s)", bytes, d->name,
                 ac_error_name(e));
        ac_unreserve(d, bytes);
        free(b);
        return NULL;
    }
    return b;
}

ac_buffer *ac_upload(ac_device *d, const void *data, size_t bytes, char err[AC_ERR_MAX])
{
    return make_buffer(d, CL_MEM_READ_ONLY, data, bytes, "a copy of host data", err);
}

ac_buffer *ac_alloc(ac_device *d, size_t bytes, char err[AC_ERR_MAX])
{
    return make_buffer(d, CL_MEM_READ_WRITE, NULL, bytes, "device memory for packets", err);
}

void ac_buffer_free(ac_buffer *b)
{
    if (!b) return;
    if (ac_device_opened()) ac_unreserve(ac_device_opened(), b->bytes);
    clReleaseMemObject(b->mem);
    free(b);
}

size_t ac_buffer_bytes(const ac_buffer *b) { return b->bytes; }

/* Grown by doubling. */
int ac_ensure(ac_device *d, cl_mem *mem, size_t *cap, size_t bytes, char err[AC_ERR_MAX])
{
    if (*mem && *cap >= bytes) return 0;
    size_t want = *cap ? *cap : 4096;
    while (want < bytes) want *= 2;
    if (*mem) clReleaseMemObject(*mem);
    ac_unreserve(d, *cap);
    *cap = 0;
    *mem = NULL;
    if (fits(d, want, "a launch's elements or results", err)) return -1;
    cl_int e;
    *mem = clCreateBuffer(d->context, CL_MEM_READ_WRITE, want, NULL, &e);
    *cap = *mem ? want : 0;
    if (*mem) return 0;
    ac_unreserve(d, want);
    snprintf(err, AC_ERR_MAX, "OpenCL: could not place %zu bytes on %s (%s)", want, d->name,
             ac_error_name(e));
    return -1;
}

/* The buffer ensure makes for `bytes`. */
static size_t rounded(size_t bytes)
{
    size_t want = 4096;
    while (want < bytes) want *= 2;
    return want;
}

/* The launch buffers worker slot s holds. */
static size_t slot_bytes(const ac_slot *s)
{
    size_t bytes = s->elements_cap + s->results_cap + s->index_cap;
    for (int i = 0; i < AC_MAX_APPENDS; i++) bytes += s->ctl_cap[i];
    return bytes;
}

int ac_launch_room(ac_kernel *k, size_t elements, size_t element_bytes, size_t result_bytes,
                   int nappends, char err[AC_ERR_MAX])
{
    ac_device *d = ac_device_opened();
    size_t need = rounded(elements * element_bytes) + rounded(result_bytes ? elements * result_bytes : 16) +
                  rounded(elements * sizeof(cl_uint)) + (size_t)nappends * rounded(1), have = 0;
    for (unsigned w = 0; w < GR_MAX_WORKERS; w++)
        if (k->slots[w] && slot_bytes(k->slots[w]) > have) have = slot_bytes(k->slots[w]);
    return have >= need ? 0 : ac_room(d, need - have, "a launch's elements, results, gather "
                                      "indices and append counters", err);
}

ac_slot *ac_slot_of(ac_kernel *k, unsigned w, char err[AC_ERR_MAX])
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

static uint32_t elements_of(const ac_launch *l)
{
    uint32_t n = 0;
    for (int i = 0; i < l->nspans; i++) n += l->spans[i].n;
    return n;
}

static cl_int set_args(ac_slot *s, const ac_launch *l, cl_uint n)
{
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

/* A host span's elements without their leading gather_bytes (those come from the
 * device): one rectangular write, a row per element. */
static cl_int write_rest(cl_command_queue q, ac_slot *s, const ac_launch *l, const ac_span *sp,
                         size_t at, gr_device_work *work)
{
    const size_t rest = l->element_bytes - l->gather_bytes;
    if (!rest) return CL_SUCCESS;
    const size_t buf_origin[3] = {at + l->gather_bytes, 0, 0}, host_origin[3] = {l->gather_bytes, 0, 0};
    const size_t region[3] = {rest, sp->n, 1};
    work->bytes_to_device += rest * sp->n;
    return clEnqueueWriteBufferRect(q, s->elements, CL_FALSE, buf_origin, host_origin, region,
                                    l->element_bytes, 0, l->element_bytes, 0, sp->from.host, 0, NULL,
                                    NULL);
}

/* The spans' elements into the launch buffer, side by side: host spans written (counted
 * in *work), device spans copied within the device. */
static cl_int gather(cl_command_queue q, ac_slot *s, const ac_launch *l, gr_device_work *work)
{
    size_t at = 0;
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < l->nspans && e == CL_SUCCESS; i++) {
        const ac_span *sp = &l->spans[i];
        const size_t bytes = sp->n * l->element_bytes;
        if (!bytes) continue;
        if (sp->from.device)
            e = clEnqueueCopyBuffer(q, sp->from.device->mem, s->elements, sp->from.offset, at, bytes,
                                    0, NULL, NULL);
        else if (sp->rest_only)
            e = write_rest(q, s, l, sp, at, work);
        else {
            e = clEnqueueWriteBuffer(q, s->elements, CL_FALSE, at, bytes, sp->from.host, 0, NULL, NULL);
            work->bytes_to_device += bytes;
        }
        at += bytes;
    }
    return e;
}

/* An in-place kernel's elements back to each span's `to`. */
static cl_int scatter(cl_command_queue q, ac_slot *s, const ac_launch *l, gr_device_work *work)
{
    size_t at = 0;
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < l->nspans && e == CL_SUCCESS; i++) {
        const ac_span *sp = &l->spans[i];
        const size_t bytes = sp->n * l->element_bytes;
        if (!bytes) continue;
        if (sp->to.device)
            e = clEnqueueCopyBuffer(q, s->elements, sp->to.device->mem, at, sp->to.offset, bytes,
                                    0, NULL, NULL);
        else {
            e = clEnqueueReadBuffer(q, s->elements, CL_FALSE, at, bytes, sp->to.host, 0, NULL, NULL);
            work->bytes_from_device += bytes;
        }
        at += bytes;
    }
    return e;
}

/* Launches and copies back; blocking at the end (an in-order queue: after the copies
 * in and the gather). */
static cl_int enqueue(cl_command_queue q, ac_slot *s, const ac_launch *l, size_t n, cl_event *ev,
                      gr_device_work *work)
{
    cl_int e = clEnqueueNDRangeKernel(q, s->kernel, 1, NULL, &n, NULL, 0, NULL, ev);
    if (e == CL_SUCCESS && l->inplace) e = scatter(q, s, l, work);
    if (e == CL_SUCCESS) e = ac_results_enqueue(q, s, l, n, work);
    if (e == CL_SUCCESS) e = ac_append_counts(q, s, l, work);
    if (e == CL_SUCCESS) e = clFinish(q);
    return e;
}

/* The launch's inputs on the device: its arguments, the appends' counters, the elements
 * from the host and the device, the appended ones gathered (that kernel's event in
 * *gather_ev, left NULL without one). 0, or -1 with a message (after waiting for what
 * was queued: it reads host memory). */
static int prepare(ac_device *d, cl_command_queue q, unsigned worker, ac_kernel *k, ac_slot *s,
                   const ac_launch *l, cl_uint n, cl_event *gather_ev, gr_device_work *work,
                   char err[AC_ERR_MAX])
{
    cl_int e = set_args(s, l, n);
    if (e != CL_SUCCESS) {
        snprintf(err, AC_ERR_MAX, "%s: kernel '%s': its arguments do not match (elements, n, "
                 "results, %d buffers and %d appends) (%s)", k->file, k->name, l->nbuffers,
                 l->nappends, ac_error_name(e));
        return -1;
    }
    if (ac_append_args(d, q, s, l, work, err)) {
        clFinish(q);
        return -1;
    }
    e = gather(q, s, l, work);
    if (e != CL_SUCCESS) {
        snprintf(err, AC_ERR_MAX, "%s: kernel '%s': copying its elements to %s failed (%s)", k->file,
                 k->name, d->name, ac_error_name(e));
        clFinish(q);
        return -1;
    }
    if (ac_gather_enqueue(d, q, worker, s, l, n, gather_ev, work, err)) {
        clFinish(q);
        return -1;
    }
    return 0;
}

/* A finished launch's figures added to the stage's: every kernel it ran (its own and
 * the gather of its appended elements, counted by prepare) with their device time, and
 * the bytes its copies moved. */
static void claim(gr_device_work *work, const gr_device_work *done, cl_event ev, cl_event gather_ev)
{
    work->launches += 1 + done->launches;
    work->kernel_ns += kernel_ns(ev) + (gather_ev ? kernel_ns(gather_ev) : 0);
    work->bytes_to_device += done->bytes_to_device;
    work->bytes_from_device += done->bytes_from_device;
}

int ac_run(ac_kernel *k, unsigned worker, const ac_launch *l, gr_device_work *work,
           char err[AC_ERR_MAX])
{
    ac_device *d = ac_device_opened();
    const uint32_t n = elements_of(l);
    if (n == 0) return 0;
    cl_command_queue q = d ? ac_queue(d, worker, err) : NULL;
    ac_slot *s = q ? ac_slot_of(k, worker, err) : NULL;
    if (!s) return -1;
    const size_t in_bytes = l->element_bytes * n, res_bytes = l->result_bytes * n;
    if (ac_ensure(d, &s->elements, &s->elements_cap, in_bytes, err) ||
        ac_ensure(d, &s->results, &s->results_cap, res_bytes ? res_bytes : 16, err)) return -1;
    gr_device_work done = {0};
    cl_event ev = NULL, gather_ev = NULL;
    int rc = prepare(d, q, worker, k, s, l, n, &gather_ev, &done, err);
    if (rc == 0) {
        cl_int e = enqueue(q, s, l, n, &ev, &done);
        if (e == CL_SUCCESS) {
            claim(work, &done, ev, gather_ev);
        } else {
            snprintf(err, AC_ERR_MAX, "%s: kernel '%s' on %s failed (%s)", k->file, k->name, d->name,
                     ac_error_name(e));
            clFinish(q);
            rc = -1;
        }
    }
    if (ev) clReleaseEvent(ev);
    if (gather_ev) clReleaseEvent(gather_ev);
    return rc;
}

/* cl_append.c — the two halves of a queue between device stages that is filled by
 * pushes (accel/opencl.h, ac_append): the producer kernel's append counters, handed to
 * it as arguments after its buffers, and the consumer's gather, a small kernel that
 * copies the appended elements into its launch buffer before its own kernel runs. */
#include "accel/cl_internal.h"

extern const char cl_accel_opencl_gather[];
#define GATHER_CL "accel/opencl/gather.cl"

/* gather.cl's and the producer kernels' append_ctl. */
typedef struct append_ctl {
    cl_uint counter, limit, per_slot, nslots;
    cl_uint slots[AC_APPEND_SLOTS];
} append_ctl;

/* The bytes of ctl a launch writes: the header and the slots it claimed. */
static size_t ctl_bytes(const append_ctl *c)
{
    return offsetof(append_ctl, slots) + c->nslots * sizeof(cl_uint);
}

int ac_append_args(ac_device *d, cl_command_queue q, ac_slot *s, const ac_launch *l,
                   gr_device_work *work, char err[AC_ERR_MAX])
{
    cl_uint arg = 3 + (cl_uint)l->nbuffers;
    for (int i = 0; i < l->nappends && i < AC_MAX_APPENDS; i++) {
        const ac_append *a = &l->appends[i];
        append_ctl c = {.per_slot = a->per_slot, .nslots = a->entries ? a->nslots : 0};
        if (c.nslots > AC_APPEND_SLOTS) c.nslots = AC_APPEND_SLOTS;
        c.limit = c.nslots * c.per_slot;
        for (cl_uint k = 0; k < c.nslots; k++) c.slots[k] = a->slots[k];
        if (ac_ensure(d, &s->ctl[i], &s->ctl_cap[i], sizeof c, err)) return -1;
        /* Without entries the kernel still needs a buffer there; it writes none (limit 0). */
        const cl_mem entries = a->entries ? a->entries->mem : s->ctl[i];
        /* Blocking: c is on this stack frame. */
        cl_int e = clEnqueueWriteBuffer(q, s->ctl[i], CL_TRUE, 0, ctl_bytes(&c), &c, 0, NULL, NULL);
        e |= clSetKernelArg(s->kernel, arg++, sizeof(cl_mem), &entries);
        e |= clSetKernelArg(s->kernel, arg++, sizeof(cl_mem), &s->ctl[i]);
        if (e != CL_SUCCESS) {
            snprintf(err, AC_ERR_MAX, "OpenCL: the kernel's append %d on %s failed (%s)", i, d->name,
                     ac_error_name(e));
            return -1;
        }
        work->bytes_to_device += ctl_bytes(&c);
    }
    return 0;
}

cl_int ac_append_counts(cl_command_queue q, ac_slot *s, const ac_launch *l, gr_device_work *work)
{
    cl_int e = CL_SUCCESS;
    for (int i = 0; l->appended && i < l->nappends && i < AC_MAX_APPENDS && e == CL_SUCCESS; i++) {
        e = clEnqueueReadBuffer(q, s->ctl[i], CL_FALSE, offsetof(append_ctl, counter), sizeof(cl_uint),
                                &l->appended[i], 0, NULL, NULL);
        work->bytes_from_device += sizeof(cl_uint);
    }
    return e;
}

int ac_gather_enqueue(ac_device *d, cl_command_queue q, unsigned worker, ac_slot *s,
                      const ac_launch *l, cl_uint n, cl_event *ev, gr_device_work *work,
                      char err[AC_ERR_MAX])
{
    if (!l->gather_entries) return 0;
    ac_kernel *k = ac_kernel_get(d, cl_accel_opencl_gather, GATHER_CL, "ac_gather", err);
    ac_slot *g = k ? ac_slot_of(k, worker, err) : NULL;
    if (!g || ac_ensure(d, &s->index, &s->index_cap, n * sizeof(cl_uint), err)) return -1;
    const cl_uint element_bytes = (cl_uint)l->element_bytes, part = (cl_uint)l->gather_bytes;
    cl_int e = clEnqueueWriteBuffer(q, s->index, CL_FALSE, 0, n * sizeof(cl_uint), l->gather_index,
                                    0, NULL, NULL);
    e |= clSetKernelArg(g->kernel, 0, sizeof(cl_mem), &s->elements);
    e |= clSetKernelArg(g->kernel, 1, sizeof element_bytes, &element_bytes);
    e |= clSetKernelArg(g->kernel, 2, sizeof part, &part);
    e |= clSetKernelArg(g->kernel, 3, sizeof(cl_mem), &s->index);
    e |= clSetKernelArg(g->kernel, 4, sizeof n, &n);
    e |= clSetKernelArg(g->kernel, 5, sizeof(cl_mem), &l->gather_entries->mem);
    const size_t global = n;
    if (e == CL_SUCCESS) e = clEnqueueNDRangeKernel(q, g->kernel, 1, NULL, &global, NULL, 0, NULL, ev);
    if (e != CL_SUCCESS) {
        snprintf(err, AC_ERR_MAX, "%s: gathering %u appended elements on %s failed (%s)", GATHER_CL, n,
                 d->name, ac_error_name(e));
        return -1;
    }
    work->bytes_to_device += n * sizeof(cl_uint);
    work->launches++;
    return 0;
}

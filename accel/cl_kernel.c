/* cl_kernel.c — building a stage type's OpenCL C source once per process, and finding
 * its kernel; a failed build's message carries the compiler's log. */
#include "accel/cl_internal.h"

#include <stdlib.h>
#include <string.h>

/* Float arithmetic as the C kernels do it: divisions and square roots correctly
 * rounded, no fast-math licence (the sources say FP_CONTRACT OFF themselves). */
static const char build_options[] = "-cl-fp32-correctly-rounded-divide-sqrt";

static void build_log(ac_device *d, cl_program p, char *out, size_t size)
{
    size_t len = 0;
    out[0] = 0;
    if (clGetProgramBuildInfo(p, d->device, CL_PROGRAM_BUILD_LOG, size - 1, out, &len) != CL_SUCCESS)
        snprintf(out, size, "(no build log)");
    else out[len < size ? len : size - 1] = 0;
}

static cl_program build(ac_device *d, const char *source, const char *file, char err[AC_ERR_MAX])
{
    cl_int e;
    size_t len = strlen(source);
    cl_program p = clCreateProgramWithSource(d->context, 1, &source, &len, &e);
    if (!p) {
        snprintf(err, AC_ERR_MAX, "%s: OpenCL: clCreateProgramWithSource failed (%s)", file,
                 ac_error_name(e));
        return NULL;
    }
    e = clBuildProgram(p, 1, &d->device, build_options, NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[AC_ERR_MAX - 512];
        build_log(d, p, log, sizeof log);
        snprintf(err, AC_ERR_MAX, "%s: the OpenCL kernel source does not build on %s (%s); "
                 "build log:\n%s", file, d->name, ac_error_name(e), log);
        clReleaseProgram(p);
        return NULL;
    }
    return p;
}

static ac_kernel *find(ac_device *d, const char *source, const char *name)
{
    for (ac_kernel *k = d->kernels; k; k = k->next)
        if (k->source == source && !strcmp(k->name, name)) return k;
    return NULL;
}

/* A program already built from this source (another kernel of it), to share. */
static cl_program built(ac_device *d, const char *source)
{
    for (ac_kernel *k = d->kernels; k; k = k->next)
        if (k->source == source) return k->program;
    return NULL;
}

static ac_kernel *make(ac_device *d, const char *source, const char *file, const char *name,
                       char err[AC_ERR_MAX])
{
    cl_program p = built(d, source);
    bool own = !p;
    if (own && !(p = build(d, source, file, err))) return NULL;
    /* Check that the kernel exists now, so a misnamed one fails before the run. */
    cl_int e;
    cl_kernel probe = clCreateKernel(p, name, &e);
    if (!probe) {
        snprintf(err, AC_ERR_MAX, "%s: no kernel '%s' in the OpenCL source (%s)", file, name,
                 ac_error_name(e));
        if (own) clReleaseProgram(p);
        return NULL;
    }
    clReleaseKernel(probe);
    ac_kernel *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, AC_ERR_MAX, "out of memory");
        if (own) clReleaseProgram(p);
        return NULL;
    }
    if (!own) clRetainProgram(p);
    k->source = source;
    k->program = p;
    snprintf(k->name, sizeof k->name, "%s", name);
    snprintf(k->file, sizeof k->file, "%s", file);
    k->next = d->kernels;
    d->kernels = k;
    return k;
}

ac_kernel *ac_kernel_get(ac_device *d, const char *source, const char *file, const char *name,
                         char err[AC_ERR_MAX])
{
    pthread_mutex_lock(&d->lock);
    ac_kernel *k = find(d, source, name);
    if (!k) k = make(d, source, file, name, err);
    pthread_mutex_unlock(&d->lock);
    return k;
}

static void slot_free(ac_slot *s)
{
    if (!s) return;
    if (s->kernel) clReleaseKernel(s->kernel);
    if (s->elements) clReleaseMemObject(s->elements);
    if (s->results) clReleaseMemObject(s->results);
    if (s->index) clReleaseMemObject(s->index);
    for (int i = 0; i < AC_MAX_APPENDS; i++)
        if (s->ctl[i]) clReleaseMemObject(s->ctl[i]);
    free(s);
}

void ac_kernels_free(ac_device *d)
{
    while (d->kernels) {
        ac_kernel *k = d->kernels;
        d->kernels = k->next;
        for (unsigned w = 0; w < GR_MAX_WORKERS; w++) slot_free(k->slots[w]);
        clReleaseProgram(k->program);
        free(k);
    }
}

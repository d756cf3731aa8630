/* cl_device.c — finding and opening the process's OpenCL device, listing what the ICD
 * loader finds, and the per-worker command queues. */
#include "accel/cl_internal.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static ac_device *opened;
static bool fell_back;                 /* ac_first_fallback answered once */

/* Where the ICD loader looks for platforms, for the messages that say none was found. */
static const char *icd_place(char buf[512])
{
    const char *v = getenv("OCL_ICD_VENDORS");
    if (v && *v) snprintf(buf, 512, "OCL_ICD_VENDORS=%s", v);
    else snprintf(buf, 512, "/etc/OpenCL/vendors/*.icd");
    return buf;
}

#define AC_MAX_PLATFORMS 16
#define AC_MAX_DEVICES 16

static cl_uint platforms_of(cl_platform_id ids[AC_MAX_PLATFORMS])
{
    cl_uint n = 0;
    if (clGetPlatformIDs(AC_MAX_PLATFORMS, ids, &n) != CL_SUCCESS) return 0;
    return n < AC_MAX_PLATFORMS ? n : AC_MAX_PLATFORMS;
}

static cl_uint devices_of(cl_platform_id p, cl_device_id ids[AC_MAX_DEVICES])
{
    cl_uint n = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, AC_MAX_DEVICES, ids, &n) != CL_SUCCESS) return 0;
    return n < AC_MAX_DEVICES ? n : AC_MAX_DEVICES;
}

static void platform_name(cl_platform_id p, char *out, size_t size)
{
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, size, out, NULL) != CL_SUCCESS) snprintf(out, size, "?");
}

static void device_name(cl_device_id d, char *out, size_t size)
{
    if (clGetDeviceInfo(d, CL_DEVICE_NAME, size, out, NULL) != CL_SUCCESS) snprintf(out, size, "?");
}

/* GRAMPS_OPENCL_DEVICE=P.D, else 0.0 (the first device of the first platform with one). */
static int wanted(int *p, int *d, char err[AC_ERR_MAX])
{
    const char *v = getenv("GRAMPS_OPENCL_DEVICE");
    *p = *d = -1;
    if (!v || !*v) return 0;
    char end;
    if (sscanf(v, "%d.%d%c", p, d, &end) != 2 || *p < 0 || *d < 0) {
        snprintf(err, AC_ERR_MAX, "GRAMPS_OPENCL_DEVICE=%s: expected PLATFORM.DEVICE as "
                 "gramps-render --list-devices numbers them (e.g. 0.0)", v);
        return -1;
    }
    return 0;
}

static int pick(cl_platform_id *pp, cl_device_id *dd, char err[AC_ERR_MAX])
{
    int want_p, want_d;
    if (wanted(&want_p, &want_d, err)) return -1;
    cl_platform_id ps[AC_MAX_PLATFORMS];
    cl_uint np = platforms_of(ps);
    char where[512];
    if (np == 0) {
        snprintf(err, AC_ERR_MAX, "no OpenCL platform: the ICD loader found none in %s "
                 "(install pocl-opencl-icd for the CPU, or a GPU driver's ICD)", icd_place(where));
        return -1;
    }
    for (cl_uint i = 0; i < np; i++) {
        cl_device_id ds[AC_MAX_DEVICES];
        cl_uint nd = devices_of(ps[i], ds);
        if (want_p >= 0 && (int)i != want_p) continue;
        if (want_d >= 0 && want_d >= (int)nd) break;
        if (nd == 0) continue;
        *pp = ps[i];
        *dd = ds[want_d >= 0 ? want_d : 0];
        return 0;
    }
    if (want_p >= 0)
        snprintf(err, AC_ERR_MAX, "GRAMPS_OPENCL_DEVICE=%d.%d: no such device among the %u "
                 "platform(s) in %s (gramps-render --list-devices lists them)", want_p, want_d,
                 np, icd_place(where));
    else
        snprintf(err, AC_ERR_MAX, "no OpenCL device: the %u platform(s) in %s have none", np,
                 icd_place(where));
    return -1;
}

static ac_device *open_device(char err[AC_ERR_MAX])
{
    cl_platform_id p;
    cl_device_id dev;
    if (pick(&p, &dev, err)) return NULL;
    ac_device *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, AC_ERR_MAX, "out of memory");
        return NULL;
    }
    cl_int e;
    d->platform = p;
    d->device = dev;
    d->context = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    if (!d->context) {
        snprintf(err, AC_ERR_MAX, "OpenCL: clCreateContext failed (%s)", ac_error_name(e));
        free(d);
        return NULL;
    }
    char pn[256], dn[256];
    platform_name(p, pn, sizeof pn);
    device_name(dev, dn, sizeof dn);
    snprintf(d->name, sizeof d->name, "%s (%s)", dn, pn);
    if (ac_memory_init(d, err)) {
        clReleaseContext(d->context);
    pthread_mutex_destroy(&d->mem_lock);
        free(d);
        return NULL;
    }
    pthread_mutex_init(&d->lock, NULL);
    pthread_mutex_init(&d->mem_lock, NULL);
    return d;
}

ac_device *ac_open(char err[AC_ERR_MAX])
{
    pthread_mutex_lock(&open_lock);
    if (!opened) opened = open_device(err);
    ac_device *d = opened;
    pthread_mutex_unlock(&open_lock);
    return d;
}

ac_device *ac_device_opened(void) { return opened; }

bool ac_first_fallback(void)
{
    pthread_mutex_lock(&open_lock);
    bool first = !fell_back;
    fell_back = true;
    pthread_mutex_unlock(&open_lock);
    return first;
}

const char *ac_device_name(void) { return opened ? opened->name : ""; }

void ac_close(void)
{
    pthread_mutex_lock(&open_lock);
    ac_device *d = opened;
    opened = NULL;
    pthread_mutex_unlock(&open_lock);
    if (!d) return;
    ac_kernels_free(d);
    for (unsigned w = 0; w < GR_MAX_WORKERS; w++)
        if (d->queues[w]) clReleaseCommandQueue(d->queues[w]);
    clReleaseContext(d->context);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

cl_command_queue ac_queue(ac_device *d, unsigned w, char err[AC_ERR_MAX])
{
    if (w >= GR_MAX_WORKERS) {
        snprintf(err, AC_ERR_MAX, "worker %u beyond %d", w, GR_MAX_WORKERS);
        return NULL;
    }
    pthread_mutex_lock(&d->lock);
    if (!d->queues[w]) {
        cl_int e;
        d->queues[w] = clCreateCommandQueue(d->context, d->device, CL_QUEUE_PROFILING_ENABLE, &e);
        if (!d->queues[w])
            snprintf(err, AC_ERR_MAX, "OpenCL: clCreateCommandQueue failed (%s)", ac_error_name(e));
    }
    cl_command_queue q = d->queues[w];
    pthread_mutex_unlock(&d->lock);
    return q;
}

int ac_list(FILE *out)
{
    cl_platform_id ps[AC_MAX_PLATFORMS];
    cl_uint np = platforms_of(ps);
    char where[512];
    if (np == 0) {
        fprintf(out, "no OpenCL platform: the ICD loader found none in %s\n", icd_place(where));
        return 0;
    }
    int total = 0;
    for (cl_uint i = 0; i < np; i++) {
        char pn[256], ver[256];
        platform_name(ps[i], pn, sizeof pn);
        if (clGetPlatformInfo(ps[i], CL_PLATFORM_VERSION, sizeof ver, ver, NULL) != CL_SUCCESS)
            snprintf(ver, sizeof ver, "?");
        fprintf(out, "platform %u: %s (%s)\n", i, pn, ver);
        cl_device_id ds[AC_MAX_DEVICES];
        cl_uint nd = devices_of(ps[i], ds);
        for (cl_uint k = 0; k < nd; k++) {
            char dn[256];
            cl_ulong mem = 0;
            cl_uint units = 0;
            device_name(ds[k], dn, sizeof dn);
            clGetDeviceInfo(ds[k], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
            clGetDeviceInfo(ds[k], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
            fprintf(out, "  device %u.%u: %s, %u compute units, %.1f GiB%s\n", i, k, dn, units,
                    (double)mem / (1024.0 * 1024.0 * 1024.0), total == 0 ? " (the default)" : "");
            total++;
        }
        if (nd == 0) fprintf(out, "  (no devices)\n");
    }
    return total;
}

const char *ac_error_name(cl_int e)
{
    switch (e) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
    case CL_PLATFORM_NOT_FOUND_KHR: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an OpenCL error";
    }
}

/* cl_memory.c — the device memory the process may use: the device's global memory, or
 * less where GRAMPS_OPENCL_MAX_MEMORY says so (a size such as 64M), and what the buffers
 * made so far hold. A buffer that would pass the limit is refused with a message naming
 * both, so a graph whose device data cannot fit fails before its run, as --max-memory
 * does on the host, instead of in a launch. */
#include "accel/cl_internal.h"

#include <errno.h>
#include <stdlib.h>

/* "123", "64K", "64M", "2G" (binary units); false for anything else. */
static bool parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-') return false;
    unsigned shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    default: break;
    }
    if (*end || v > (~0ull >> shift)) return false;
    *out = (size_t)(v << shift);
    return true;
}

int ac_memory_init(ac_device *d, char err[AC_ERR_MAX])
{
    cl_ulong global = 0;
    clGetDeviceInfo(d->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL);
    d->mem_limit = (size_t)global;
    snprintf(d->mem_limit_from, sizeof d->mem_limit_from, "CL_DEVICE_GLOBAL_MEM_SIZE");
    const char *cap = getenv("GRAMPS_OPENCL_MAX_MEMORY");
    if (!cap || !*cap) return 0;
    size_t v;
    if (!parse_size(cap, &v)) {
        snprintf(err, AC_ERR_MAX, "GRAMPS_OPENCL_MAX_MEMORY=%s: expected a size in bytes, "
                 "optionally with K, M or G (e.g. 256M)", cap);
        return -1;
    }
    if (v < d->mem_limit || !d->mem_limit) {
        d->mem_limit = v;
        snprintf(d->mem_limit_from, sizeof d->mem_limit_from, "GRAMPS_OPENCL_MAX_MEMORY=%s", cap);
    }
    return 0;
}

static bool room_for(const ac_device *d, size_t bytes)
{
    return bytes <= d->mem_limit && d->mem_used <= d->mem_limit - bytes;
}

static void say_full(const ac_device *d, size_t bytes, const char *what, char err[AC_ERR_MAX])
{
    snprintf(err, AC_ERR_MAX, "out of device memory: %s needs %zu bytes, %zu of %zu are in use "
             "on %s (%s)", what, bytes, d->mem_used, d->mem_limit, d->name, d->mem_limit_from);
}

int ac_reserve(ac_device *d, size_t bytes, const char *what, char err[AC_ERR_MAX])
{
    pthread_mutex_lock(&d->mem_lock);
    bool ok = room_for(d, bytes);
    if (ok) d->mem_used += bytes;
    else say_full(d, bytes, what, err);
    pthread_mutex_unlock(&d->mem_lock);
    return ok ? 0 : -1;
}

void ac_unreserve(ac_device *d, size_t bytes)
{
    pthread_mutex_lock(&d->mem_lock);
    d->mem_used -= bytes < d->mem_used ? bytes : d->mem_used;
    pthread_mutex_unlock(&d->mem_lock);
}

int ac_room(ac_device *d, size_t bytes, const char *what, char err[AC_ERR_MAX])
{
    pthread_mutex_lock(&d->mem_lock);
    bool ok = room_for(d, bytes);
    if (!ok) say_full(d, bytes, what, err);
    pthread_mutex_unlock(&d->mem_lock);
    return ok ? 0 : -1;
}

/* cl_results.c — a launch's results back to the host: whole, or (ac_launch.spill_bytes)
 * only each element's leading part, its spill read later for the elements that need it
 * (ac_read_spill). The kernel writes the spills after every leading part, so each read
 * is one rectangle: rows of the device's packed parts into rows of result_bytes on the
 * host. */
#include "accel/cl_internal.h"

/* `rows` rows of `bytes` from the results buffer at `from` (rows packed) into the host at
 * `to` (rows result_bytes apart); not blocking. */
static cl_int read_rows(cl_command_queue q, ac_slot *s, const ac_launch *l, size_t from, void *to,
                        size_t bytes, size_t rows)
{
    const size_t device_origin[3] = {from, 0, 0}, host_origin[3] = {0, 0, 0};
    const size_t region[3] = {bytes, rows, 1};
    return clEnqueueReadBufferRect(q, s->results, CL_FALSE, device_origin, host_origin, region,
                                   bytes, 0, l->result_bytes, 0, to, 0, NULL, NULL);
}

cl_int ac_results_enqueue(cl_command_queue q, ac_slot *s, const ac_launch *l, size_t n,
                          gr_device_work *work)
{
    if (!l->result_bytes) return CL_SUCCESS;
    const size_t lead = l->result_bytes - l->spill_bytes;
    work->bytes_from_device += lead * n;
    if (!l->spill_bytes)
        return clEnqueueReadBuffer(q, s->results, CL_FALSE, 0, lead * n, l->results, 0, NULL, NULL);
    return read_rows(q, s, l, 0, l->results, lead, n);
}

int ac_read_spill(ac_kernel *k, unsigned worker, const ac_launch *l, uint32_t first, uint32_t count,
                  gr_device_work *work, char err[AC_ERR_MAX])
{
    ac_device *d = ac_device_opened();
    cl_command_queue q = d ? ac_queue(d, worker, err) : NULL;
    ac_slot *s = q ? ac_slot_of(k, worker, err) : NULL;
    if (!s) return -1;
    size_t n = 0;
    for (int i = 0; i < l->nspans; i++) n += l->spans[i].n;
    const size_t lead = l->result_bytes - l->spill_bytes;
    if (!count || !l->spill_bytes || (size_t)first + count > n) return 0;
    cl_int e = read_rows(q, s, l, n * lead + (size_t)first * l->spill_bytes,
                         (char *)l->results + (size_t)first * l->result_bytes + lead, l->spill_bytes,
                         count);
    if (e == CL_SUCCESS) e = clFinish(q);
    if (e != CL_SUCCESS) {
        snprintf(err, AC_ERR_MAX, "%s: kernel '%s': reading its results' spills from %s failed (%s)",
                 k->file, k->name, d->name, ac_error_name(e));
        return -1;
    }
    work->bytes_from_device += (size_t)count * l->spill_bytes;
    return 0;
}

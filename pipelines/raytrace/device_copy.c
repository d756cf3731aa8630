/* device_copy.c — buffers uploaded together (see device_copy.h). */
#include "pipelines/raytrace/device_copy.h"

#include <stdio.h>

int plrt_copy_upload(plrt_device_copy *c, ac_device *dev, const plrt_host_range *r, int n,
                     char err[AC_ERR_MAX])
{
    *c = (plrt_device_copy){0};
    if (n > PLRT_COPY_MAX) {
        snprintf(err, AC_ERR_MAX, "%d device buffers in one copy, at most %d", n, PLRT_COPY_MAX);
        return -1;
    }
    for (; c->n < n; c->n++) {
        c->buf[c->n] = ac_upload(dev, r[c->n].data, r[c->n].bytes, err);
        if (!c->buf[c->n]) {
            plrt_copy_free(c);
            return -1;
        }
    }
    return 0;
}

void plrt_copy_free(plrt_device_copy *c)
{
    for (int i = 0; i < c->n; i++) ac_buffer_free(c->buf[i]);
    *c = (plrt_device_copy){0};
}

int plrt_copy_buffers(const plrt_device_copy *c, const ac_buffer *out[CP_KERNEL_BUFFERS], int at)
{
    for (int i = 0; i < c->n; i++) out[at++] = c->buf[i];
    return at;
}

/* contribs.c — contributions keyed to their Blend instance (see packets.h): the calls
 * that a plugin stage and the built-in ones share, so that they agree with rt.blend's
 * bands (sums.h) whichever build of the library they run against. */
#include "pipelines/raytrace/packets.h"

#include "pipelines/raytrace/sums.h"

#include <string.h>

bool plrt_blend_keys_of(const pl_frame *f, uint32_t subqueues, plrt_blend_keys *k)
{
    const pl_region *r = &f->region;
    uint64_t first = (uint64_t)r->y0 * (uint64_t)f->width + (uint64_t)r->x0;
    uint64_t span = (uint64_t)(r->y1 - 1) * (uint64_t)f->width + (uint64_t)r->x1 - first;
    k->first = (uint32_t)first;
    k->span = (uint32_t)span;
    k->mask = subqueues ? subqueues - 1 : 0;
    k->shift = 0;
    k->scale = (((uint64_t)k->mask + 1) << 32) / span;
    return (subqueues & (subqueues - 1)) == 0;
}

void plrt_push_contribs(gr_ctx *c, int output, plrt_contribs *b)
{
    for (uint32_t i = 0, j; i < b->n; i = j) {
        uint64_t key = plrt_blend_key(b->k[i].pixel, &b->keys);
        for (j = i + 1; j < b->n && plrt_blend_key(b->k[j].pixel, &b->keys) == key; j++) {}
        gr_push_key_n(c, output, key, &b->k[i], j - i);
    }
    b->n = 0;
}

uint32_t plrt_contrib_pushes(const plrt_blend_keys *keys, const void *elements, size_t stride,
                             size_t pixel_at, uint32_t n, gr_set_push *pushes)
{
    const char *e = elements;
    uint32_t nkeys = 0;
    for (uint32_t i = 0; i < n; i++, e += stride) {
        uint32_t pixel;
        memcpy(&pixel, e + pixel_at, sizeof pixel);
        if (!gr_set_push_add(pushes, &nkeys, plrt_blend_key(pixel, keys))) return GR_SET_PUSHES_UNKNOWN;
    }
    return nkeys;
}

/* hiz.c — see hiz.h. */
#include "pipelines/raster/hiz.h"

#include <stdlib.h>
#include <string.h>

#define HIZ_MARGIN 1e-6f                 /* > rounding of an interpolated depth in [0,1] */

static float as_float(uint32_t bits) { float f; memcpy(&f, &bits, sizeof f); return f; }

bool plr_hiz_init(plr_hiz *h, int width, int height, uint32_t far_bits)
{
    h->width = width;
    h->height = height;
    h->bw = (width + PLR_HIZ_BLOCK - 1) / PLR_HIZ_BLOCK;
    h->bh = (height + PLR_HIZ_BLOCK - 1) / PLR_HIZ_BLOCK;
    size_t n = (size_t)h->bw * h->bh;
    h->zmax = malloc(n * sizeof *h->zmax);
    h->covered = calloc(n, sizeof *h->covered);
    if (!h->zmax || !h->covered) {
        plr_hiz_free(h);
        return false;
    }
    for (size_t i = 0; i < n; i++) atomic_init(&h->zmax[i], far_bits);
    return true;
}

void plr_hiz_free(plr_hiz *h)
{
    free(h->zmax);
    free(h->covered);
    h->zmax = NULL;
    h->covered = NULL;
}



void plr_hiz_update(plr_hiz *h, const _Atomic(uint32_t) *depth, int x, int y)
{
    int bx = x / PLR_HIZ_BLOCK, by = y / PLR_HIZ_BLOCK;
    int x0 = bx * PLR_HIZ_BLOCK, y0 = by * PLR_HIZ_BLOCK;
    int x1 = x0 + PLR_HIZ_BLOCK < h->width ? x0 + PLR_HIZ_BLOCK : h->width;
    int y1 = y0 + PLR_HIZ_BLOCK < h->height ? y0 + PLR_HIZ_BLOCK : h->height;
    int pixels = (x1 - x0) * (y1 - y0);
    if (h->covered[plr_hiz_block_of(h, x, y)] < pixels) return;
    float m = 0;
    for (int py = y0; py < y1; py++)
        for (int px = x0; px < x1; px++) {
            float z = as_float(atomic_load_explicit((_Atomic(uint32_t) *)&depth[(size_t)py * h->width + px],
                                                    memory_order_relaxed));
            m = z > m ? z : m;
        }
    uint32_t bits;
    memcpy(&bits, &m, sizeof bits);
    atomic_store_explicit(&h->zmax[(size_t)by * h->bw + bx], bits, memory_order_relaxed);
}

bool plr_hiz_hidden(const plr_hiz *h, int x0, int y0, int x1, int y1, float zmin)
{
    const float limit = zmin - HIZ_MARGIN;
    for (int by = y0 / PLR_HIZ_BLOCK; by <= (y1 - 1) / PLR_HIZ_BLOCK; by++)
        for (int bx = x0 / PLR_HIZ_BLOCK; bx <= (x1 - 1) / PLR_HIZ_BLOCK; bx++) {
            uint32_t bits = atomic_load_explicit((_Atomic(uint32_t) *)&h->zmax[(size_t)by * h->bw + bx],
                                                 memory_order_relaxed);
            if (!(as_float(bits) <= limit)) return false;
        }
    return true;
}

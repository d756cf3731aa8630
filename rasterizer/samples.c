/* samples.c — the standard sample patterns and coverage of a rectangle per sample (see
 * samples.h). */
#include "rasterizer/samples.h"

#include "rasterizer/edges.h"

#include <stddef.h>

/* reach: the patterns' extremes on each axis, in subpixels from the pixel's corner
 * (half a pixel + 16 per sixteenth). */
#define REACH(lx, hx, ly, hy) {128 + 16 * (lx), 128 + 16 * (hx), 128 + 16 * (ly), 128 + 16 * (hy)}

static const rs_samples patterns[] = {
    {1, {0}, {0}, REACH(0, 0, 0, 0)},
    {4, {-2, 6, -6, 2}, {-6, -2, 2, 6}, REACH(-6, 6, -6, 6)},
    {8, {1, -1, 5, -3, -5, -7, 3, 7}, {-3, 3, 1, -5, 5, -1, 7, -7}, REACH(-7, 7, -7, 7)},
};

const rs_samples *rs_sample_pattern(int count)
{
    for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++)
        if (patterns[i].count == count) return &patterns[i];
    return NULL;
}

int rs_raster_rect_samples(const rs_setup *s, const rs_samples *p, int x0, int y0, int x1,
                           int y1, rs_cover *out, uint8_t *mask)
{
    clamp_to_bounds(s, &x0, &y0, &x1, &y1);
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            unsigned m = rs_sample_cover(s, p, x, y);
            if (!m) continue;
            int64_t e0, e1;
            rs_edges_at(s, x, y, &e0, &e1);
            mask[n] = (uint8_t)m;
            out[n++] = (rs_cover){(uint16_t)x, (uint16_t)y, e0, e1};
        }
    return n;
}

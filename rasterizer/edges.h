/* edges.h — the integer edge functions shared by the coverage and depth kernels
 * (raster.c, depth_rect.c; internal to rasterizer/). */
#ifndef RASTERIZER_EDGES_H
#define RASTERIZER_EDGES_H

#include "rasterizer/raster.h"

/* Edge i's value at subpixel point (X, Y): an exact integer (raster.h: why 64 bits
 * suffice). The kernels evaluate it once per row or rectangle and step it by a pixel's
 * a * one (or a row's b * one), which gives the same integers; with the top-left bias
 * folded in, a pixel is covered when no biased value is negative, that is when the OR of
 * the three has its sign bit clear. */
static inline int64_t edge_at(const rs_setup *s, int i, int64_t X, int64_t Y)
{
    return s->a[i] * X + s->b[i] * Y + s->c[i];
}

/* The rectangle [x0,x1) x [y0,y1) cut to the triangle's pixel bounds. */
static inline void clamp_to_bounds(const rs_setup *s, int *x0, int *y0, int *x1, int *y1)
{
    if (*x0 < s->x0) *x0 = s->x0;
    if (*y0 < s->y0) *y0 = s->y0;
    if (*x1 > s->x1 + 1) *x1 = s->x1 + 1;
    if (*y1 > s->y1 + 1) *y1 = s->y1 + 1;
}

#endif

/* setup_projected.h — triangle setup from snapped screen vertices (the body of
 * rs_setup_projected_reach, raster.h), inline so the vertex shader (pipelines/raster/
 * geometry.c), which sets up nearly every triangle it keeps, pays no call per triangle
 * and its corners need not round-trip through memory; raster.c's exported functions use
 * the same body, so every caller gets the same bits. */
#ifndef RASTERIZER_SETUP_PROJECTED_H
#define RASTERIZER_SETUP_PROJECTED_H

#include "rasterizer/raster.h"

/* Edge i goes from vertex j = (i+1)%3 to k = (i+2)%3, so it is zero at both and equals
 * the doubled area at vertex i. Top edge: horizontal, interior below (dx > 0 with y
 * down); left edge: interior to the right (dy < 0). Top or left is (dy, -dx) below
 * (0, 0) in lexicographic order, that is dy 2^32 - dx < 0 (|dx|, |dy| < 2^29: raster.h),
 * whose sign bit gives the bias without compares. */
static inline void rs_make_edge(rs_setup *s, const int64_t x[3], const int64_t y[3], int i, int j, int k)
{
    int64_t dx = x[k] - x[j], dy = y[k] - y[j];
    s->a[i] = (int32_t)-dy;
    s->b[i] = (int32_t)dx;
    s->c[i] = dy * x[j] - dx * y[j];
    s->bias[i] = (int8_t)~(((int64_t)((uint64_t)dy << 32) - dx) >> 63);
}

/* Branch-free where it can be: whether a triangle faces the camera, and its edges'
 * top-left bias, are as good as random per triangle, and mispredicted branches were
 * most of the setup's time on meshes of small triangles. */
static inline __attribute__((always_inline)) bool
rs_setup_projected_body(const rs_screen_vertex *const v[3], int width, int height, const rs_reach *r,
                        rs_setup *s)
{
    if (!(v[0]->ok & v[1]->ok & v[2]->ok)) return false;
    int64_t area = (v[1]->x - v[0]->x) * (v[2]->y - v[0]->y) - (v[2]->x - v[0]->x) * (v[1]->y - v[0]->y);
    if (area == 0) return false;
    /* The pixel bounds first, from the snapped coordinates in any order: the triangles
     * of a dense mesh often reach no sample point (fairy at 512x512: 46%), and then
     * need no edges. Pixels p one of whose points p * one + lo .. p * one + hi can lie
     * inside: ceil((min - hi) / one) .. floor((max - lo) / one) (the centre: lo = hi =
     * one / 2). */
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    int64_t minx = v[0]->x < v[1]->x ? v[0]->x : v[1]->x, maxx = v[0]->x < v[1]->x ? v[1]->x : v[0]->x;
    int64_t miny = v[0]->y < v[1]->y ? v[0]->y : v[1]->y, maxy = v[0]->y < v[1]->y ? v[1]->y : v[0]->y;
    minx = v[2]->x < minx ? v[2]->x : minx;
    maxx = v[2]->x > maxx ? v[2]->x : maxx;
    miny = v[2]->y < miny ? v[2]->y : miny;
    maxy = v[2]->y > maxy ? v[2]->y : maxy;
    int64_t x0 = (minx - r->hi_x + one - 1) >> RS_SUBPIXEL_BITS, x1 = (maxx - r->lo_x) >> RS_SUBPIXEL_BITS;
    int64_t y0 = (miny - r->hi_y + one - 1) >> RS_SUBPIXEL_BITS, y1 = (maxy - r->lo_y) >> RS_SUBPIXEL_BITS;
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > width - 1 ? width - 1 : x1;
    y1 = y1 > height - 1 ? height - 1 : y1;
    if (x0 > x1 || y0 > y1) return false;
    /* both windings: vertices 1 and 2 swap places for a negative area */
    const int swap = area < 0;
    const rs_screen_vertex *const in[3] = {v[0], v[1 + swap], v[2 - swap]};
    int64_t x[3], y[3];                        /* snapped screen coordinates (fixed point) */
    for (int k = 0; k < 3; k++) {
        s->inv_w[k] = in[k]->inv_w;
        s->z[k] = in[k]->z;
        x[k] = in[k]->x;
        y[k] = in[k]->y;
    }
    s->order[0] = 0;
    s->order[1] = (uint8_t)(1 + swap);
    s->order[2] = (uint8_t)(2 - swap);
    s->area = swap ? -area : area;
    rs_make_edge(s, x, y, 0, 1, 2);
    rs_make_edge(s, x, y, 1, 2, 0);
    rs_make_edge(s, x, y, 2, 0, 1);
    s->x0 = (int)x0; s->x1 = (int)x1; s->y0 = (int)y0; s->y1 = (int)y1;
    return true;
}

#endif

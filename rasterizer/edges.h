/* edges.h — the integer edge functions shared by the coverage and depth kernels
 * (raster.c, depth_rect.c; internal to rasterizer/). */
#ifndef RASTERIZER_EDGES_H
#define RASTERIZER_EDGES_H

#include "rasterizer/raster.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Edge i's value at subpixel point (X, Y): an exact integer (raster.h: why 64 bits
 * suffice). The kernels evaluate it once per row or rectangle and step it by a pixel's
 * a * one (or a row's b * one), which gives the same integers; with the top-left bias
 * folded in, a pixel is covered when no biased value is negative, that is when the OR of
 * the three has its sign bit clear. */
static inline int64_t edge_at(const rs_setup *s, int i, int64_t X, int64_t Y)
{
    return s->a[i] * X + s->b[i] * Y + s->c[i];
}

/* Pixel p's centre in subpixels. */
static inline int64_t pixel_centre(int p)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    return (int64_t)p * one + one / 2;
}

/* A row walk from column x0: its pixel centre's x and each edge's step per pixel. */
typedef struct edge_walk { int64_t X0, step[3]; } edge_walk;

static inline edge_walk edge_walk_from(const rs_setup *s, int x0)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS;
    return (edge_walk){pixel_centre(x0), {s->a[0] * one, s->a[1] * one, s->a[2] * one}};
}

/* The biased values of the three edges at the walk's first pixel of row y. */
static inline void edge_row(const rs_setup *s, const edge_walk *w, int y, int64_t e[3])
{
    const int64_t Y = pixel_centre(y);
    for (int i = 0; i < 3; i++) e[i] = edge_at(s, i, w->X0, Y) + s->bias[i];
}

/* The rectangle [x0,x1) x [y0,y1) cut to the triangle's pixel bounds. */
static inline void clamp_to_bounds(const rs_setup *s, int *x0, int *y0, int *x1, int *y1)
{
    if (*x0 < s->x0) *x0 = s->x0;
    if (*y0 < s->y0) *y0 = s->y0;
    if (*x1 > s->x1 + 1) *x1 = s->x1 + 1;
    if (*y1 > s->y1 + 1) *y1 = s->y1 + 1;
}

#if defined(__x86_64__)
/* Four int64 lanes as doubles, exact for values below 2^51 in magnitude. */
__attribute__((target("avx2")))
static inline __m256d exact_to_double(__m256i v)
{
    const __m256i magic = _mm256_set1_epi64x(0x4338000000000000);   /* 2^52 + 2^51 */
    return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(v, magic)), _mm256_castsi256_pd(magic));
}
#endif

#endif

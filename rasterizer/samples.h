/* samples.h — multisampling's sample points and per-sample coverage (rasterizer/).
 *
 * A pixel's samples sit at Direct3D 11's standard positions (D3D11_STANDARD_MULTISAMPLE_
 * PATTERN), given in 1/16 pixel from the pixel centre, y down as in our images:
 *
 *   4x: (-2,-6) (6,-2) (-6,2) (2,6)
 *   8x: (1,-3) (-1,3) (5,1) (-3,-5) (-5,5) (-7,-1) (3,7) (7,-7)
 *
 * A sixteenth of a pixel is 16 subpixels (RS_SUBPIXEL_BITS = 8), so every sample point is
 * a subpixel point and its edge values are exact integers, as the pixel centre's are:
 * coverage per sample uses the same top-left rule (the biased values' sign), and a
 * sample's depth is rs_depth of its exact edge values, whichever stage computes it. */
#ifndef RASTERIZER_SAMPLES_H
#define RASTERIZER_SAMPLES_H

#include "rasterizer/raster.h"

#include <stddef.h>

#define RS_MAX_SAMPLES 8

typedef struct rs_samples {
    int count;                            /* 1, 4 or 8 */
    int8_t dx[RS_MAX_SAMPLES], dy[RS_MAX_SAMPLES];   /* 1/16 pixel from the centre */
    rs_reach reach;                       /* where they lie in a pixel (setup bounds) */
} rs_samples;

/* The standard pattern of `count` samples (1: the centre), or NULL for another count. */
GR_API const rs_samples *rs_sample_pattern(int count);

/* What a stage needs of a triangle to find its edges 0 and 1 at any sample: the exact
 * values there are a * X + b * Y + c at the sample's subpixel point (X, Y). */
typedef struct rs_edge01 {
    int32_t a[2], b[2];
    int64_t c[2];
} rs_edge01;

static inline void rs_edge01_of(const rs_setup *s, rs_edge01 *e)
{
    for (int i = 0; i < 2; i++) {
        e->a[i] = s->a[i];
        e->b[i] = s->b[i];
        e->c[i] = s->c[i];
    }
}

/* A triangle's depth as a plane over its exact edge values: at a sample, the plane's
 * value at the pixel centre plus its change from there to the sample, each in double as
 * below, then rounded to float. Every stage that needs a sample's depth computes it this
 * way (rs_sample_depth, or the walk's dz), so they agree to the bit. */
typedef struct rs_depth_plane { double z2, d0, d1, inv_area; } rs_depth_plane;

static inline void rs_depth_plane_of(const rs_interp *ip, rs_depth_plane *p)
{
    p->z2 = ip->z[2];
    p->d0 = (double)ip->z[0] - (double)ip->z[2];
    p->d1 = (double)ip->z[1] - (double)ip->z[2];
    p->inv_area = 1.0 / ip->area;
}

/* The plane at the pixel centre whose edges 0 and 1 are e0, e1. */
static inline double rs_plane_centre(const rs_depth_plane *p, int64_t e0, int64_t e1)
{
    return p->z2 + ((double)e0 * p->d0 + (double)e1 * p->d1) * p->inv_area;
}

/* Its change over edge offsets o0, o1 (a sample's from the centre). */
static inline double rs_plane_step(const rs_depth_plane *p, int64_t o0, int64_t o1)
{
    return ((double)o0 * p->d0 + (double)o1 * p->d1) * p->inv_area;
}

/* The plane of the triangle with edges e at the centre of pixel (x, y). */
static inline double rs_pixel_centre_depth(const rs_edge01 *e, const rs_depth_plane *z, int x, int y)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS, half = one / 2;
    const int64_t X = (int64_t)x * one + half, Y = (int64_t)y * one + half;
    return rs_plane_centre(z, e->a[0] * X + e->b[0] * Y + e->c[0], e->a[1] * X + e->b[1] * Y + e->c[1]);
}

/* The plane's change from any pixel centre to its sample k: the same for every pixel. */
static inline double rs_sample_step(const rs_edge01 *e, const rs_depth_plane *z, const rs_samples *p, int k)
{
    const int64_t step = (1 << RS_SUBPIXEL_BITS) / 16;
    const int64_t ox = p->dx[k] * step, oy = p->dy[k] * step;
    return rs_plane_step(z, e->a[0] * ox + e->b[0] * oy, e->a[1] * ox + e->b[1] * oy);
}

/* The depth at sample k of pixel (x, y) of the triangle with edges e and plane z
 * (covered or not: the plane's value there): its centre's plus its step, rounded once. */
static inline float rs_sample_depth(const rs_edge01 *e, const rs_depth_plane *z, const rs_samples *p,
                                    int k, int x, int y)
{
    return (float)(rs_pixel_centre_depth(e, z, x, y) + rs_sample_step(e, z, p, k));
}

/* Walking a triangle's samples pixel by pixel: each edge's value at sample k is its value
 * at the pixel centre plus off[i][k] (exact integers); with the top-left bias added
 * (cover[i][k]) a sample is covered when no edge is negative. lo[i] and hi[i] are the
 * least and greatest of cover[i][*]: a pixel whose centre values pass with lo for every
 * edge has all samples covered, one that fails with hi for some edge has none. With a
 * depth plane, dz[k] is its step from the centre to sample k (rs_sample_depth's). */
typedef struct rs_sample_walk {
    int count;
    int64_t cover[3][RS_MAX_SAMPLES], lo[3], hi[3];
    double dz[RS_MAX_SAMPLES];            /* the depth plane's step to each sample */
    bool int32_rows;                      /* rs_sample_walk_bound: every value fits int32 */
} rs_sample_walk;

static inline void rs_sample_walk_of(const rs_setup *s, const rs_samples *p,
                                     const rs_depth_plane *z, rs_sample_walk *w)
{
    const int64_t step = (1 << RS_SUBPIXEL_BITS) / 16;
    int64_t off[3][RS_MAX_SAMPLES];
    w->count = p->count;
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < p->count; k++) {
            off[i][k] = s->a[i] * (p->dx[k] * step) + s->b[i] * (p->dy[k] * step);
            w->cover[i][k] = off[i][k] + s->bias[i];
            if (k == 0 || w->cover[i][k] < w->lo[i]) w->lo[i] = w->cover[i][k];
            if (k == 0 || w->cover[i][k] > w->hi[i]) w->hi[i] = w->cover[i][k];
        }
    }
    for (int k = 0; k < p->count; k++) w->dz[k] = z ? rs_plane_step(z, off[0][k], off[1][k]) : 0;
    w->int32_rows = false;
}

/* rs_sample_walk_of with avx2 (only where the CPU has it) four samples a vector: the
 * same walk, for stages that make one per triangle and tile. */
GR_API void rs_sample_walk_make(const rs_setup *s, const rs_samples *p, const rs_depth_plane *z,
                                rs_sample_walk *w, bool avx2);

/* Marks w for rows inside the pixels [x0,x1) x [y0,y1) (not empty) when every sample's
 * biased edge value there fits int32 (each edge is linear: its extremes over the
 * rectangle are at the corner pixels'), so rs_sample_row_take may use int32 lanes. */
static inline void rs_sample_walk_bound(const rs_setup *s, rs_sample_walk *w, int x0, int y0, int x1, int y1)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS, half = one / 2;
    const int64_t X[2] = {(int64_t)x0 * one + half, (int64_t)(x1 - 1) * one + half};
    const int64_t Y[2] = {(int64_t)y0 * one + half, (int64_t)(y1 - 1) * one + half};
    w->int32_rows = true;
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 4; c++) {
            const int64_t e = s->a[i] * X[c & 1] + s->b[i] * Y[c >> 1] + s->c[i];
            if (e + w->lo[i] < INT32_MIN || e + w->hi[i] > INT32_MAX) w->int32_rows = false;
        }
}

/* The exact values of the three edges at pixel (x, y)'s centre; the next pixel's are
 * these plus a[i] << RS_SUBPIXEL_BITS. */
static inline void rs_centre_edges(const rs_setup *s, int x, int y, int64_t e[3])
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS, half = one / 2;
    const int64_t X = (int64_t)x * one + half, Y = (int64_t)y * one + half;
    for (int i = 0; i < 3; i++) e[i] = s->a[i] * X + s->b[i] * Y + s->c[i];
}

/* The covered samples of the pixel whose exact centre edge values are e[3]. */
static inline unsigned rs_walk_cover(const rs_sample_walk *w, const int64_t e[3])
{
    if (((e[0] + w->lo[0]) | (e[1] + w->lo[1]) | (e[2] + w->lo[2])) >= 0) return (1u << w->count) - 1;
    if (e[0] + w->hi[0] < 0 || e[1] + w->hi[1] < 0 || e[2] + w->hi[2] < 0) return 0;
    unsigned mask = 0;
    for (int k = 0; k < w->count; k++)
        mask |= (unsigned)(((e[0] + w->cover[0][k]) | (e[1] + w->cover[1][k]) |
                            (e[2] + w->cover[2][k])) >= 0) << k;
    return mask;
}

/* One row of a triangle's samples against the depths held there: n pixels from the one
 * whose exact centre edge values are e (the next pixel's: e + a << RS_SUBPIXEL_BITS,
 * a: the setup's), their samples' held depths from held (count per pixel, pixel-major).
 * For pixel j, nearer[j] has the covered samples whose depth (rs_sample_depth's, written
 * to depth[j * count + k] where any sample is covered) is below the held one, tie[j]
 * those where they are equal. With avx2 (only where the CPU has it) four samples a step;
 * the same results. */
GR_API void rs_sample_row(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                          const int64_t e[3], int n, const float *held, uint8_t *nearer,
                          uint8_t *tie, float *depth, bool avx2);

/* rs_sample_row for a triangle that takes what it wins: the covered samples nearer than
 * held get their depth written to held and `id` to owner (laid out as held); tie[j] gets
 * the covered samples at equal depth, for the caller to decide. Returns whether any
 * pixel has such a tie. With avx2, eight samples a step on int32 edge values when w is
 * bounded (rs_sample_walk_bound) over a rectangle holding the row, else four on int64;
 * the same results. */
GR_API bool rs_sample_row_take(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                               const int64_t e[3], int n, float *held, uint32_t *owner,
                               uint32_t id, uint8_t *tie, bool avx2);

/* rs_sample_row_take for every row of the rectangle [x0,x1) x [y0,y1) (not empty, inside
 * s's pixel bounds): row y's samples at held + (y - y0) * stride (owner likewise; stride
 * in samples), its ties at tie + (y - y0) * (x1 - x0). Returns whether any pixel has a
 * tie. With avx2, a rectangle at most RS_SAMPLE_BLOCK_WIDTH pixels wide whose sample
 * values all fit int32 is walked as one block: the int32 lanes set up once, not per row,
 * and no per-row span (most triangles at 1024x1024 are a few pixels: the per-row setup
 * was most of their cost; a wider triangle's block steps over the empty part of its
 * rectangle, which costs less than a span per row up to this width); other rectangles
 * row by row. The same results. */
#define RS_SAMPLE_BLOCK_WIDTH 32
GR_API bool rs_sample_rect_take(const rs_setup *s, const rs_sample_walk *w, const rs_depth_plane *z,
                                int x0, int y0, int x1, int y1, float *held, uint32_t *owner, size_t stride,
                                uint32_t id, uint8_t *tie, bool avx2);

/* What rs_sample_block_take did: whether a pixel has a tie, whether it took a sample. */
typedef struct rs_block_taken { bool ties, took; } rs_block_taken;

/* rs_sample_rect_take for a triangle with no walk made (most triangles at 1024x1024 are a
 * few pixels, and making the walk was a third of their cost): with avx2, a rectangle at
 * most RS_SAMPLE_BLOCK_WIDTH pixels wide (inside s's pixel bounds) whose values fit
 * int32 by a bound from s and the pattern (4 or 8 samples) alone is walked as one block,
 * its lanes made from s: the same held, owner and tie as rs_sample_rect_take, and
 * taken->ties its result. tie (n per row) must be zero beforehand, and stays zero where
 * taken->ties is false. Returns false, writing nothing, for any other rectangle, pattern
 * or CPU: the caller makes the walk and calls rs_sample_rect_take. */
GR_API bool rs_sample_block_take(const rs_setup *s, const rs_samples *p, const rs_depth_plane *z, int x0, int y0,
                                 int x1, int y1, float *held, uint32_t *owner, size_t stride, uint32_t id,
                                 uint8_t *tie, bool avx2, rs_block_taken *taken);

/* rs_raster_rect with samples: every pixel of [x0,x1) x [y0,y1) where s covers at least
 * one sample, in row-major order, with the exact edge values at its centre (covered or
 * not: the shading point) and its covered samples in mask[]. Returns how many. out and
 * mask have room for every pixel of the rectangle (inside s's bounds). With avx2 (only
 * where the CPU has it) a rectangle at most RS_SAMPLE_BLOCK_WIDTH wide whose values fit
 * int32 takes eight samples a step; the same results. */
GR_API int rs_raster_rect_samples(const rs_setup *s, const rs_samples *p, int x0, int y0, int x1,
                                  int y1, rs_cover *out, uint8_t *mask, bool avx2);

#endif

/* raster.h — the software rasterizer's kernels (no threads, no runtime calls).
 *
 * Data flow: post-vertex-shader triangles (clip-space positions + attributes, in draw
 * order) -> rs_clip() (homogeneous clipping against near/far and a guard band) ->
 * rs_setup_triangle() (snapped fixed-point screen coordinates, edge functions, bounding
 * box) -> rs_raster_rect() per framebuffer tile the bounding box touches -> covered
 * pixels (never crossing a tile) -> rs_weights() -> depth and perspective-correct
 * barycentrics.
 *
 * Conventions: OpenGL-style clip space (visible: -w <= x,y,z <= w), image row 0 at the
 * top, samples at pixel centres, top-left fill rule, both windings drawn (no culling).
 *
 * Why 64-bit edge math is safe: the guard band keeps |x|,|y| <= RS_GUARD * image size
 * (at most 64 * 16384 = 2^20 pixels); with RS_SUBPIXEL_BITS = 8 a coordinate is below
 * 2^28, an edge coefficient below 2^29, and a product of two below 2^58 < 2^63. */
#ifndef RASTERIZER_RASTER_H
#define RASTERIZER_RASTER_H

#include "gramps/api.h"

#include <stdbool.h>
#include <stdint.h>

#define RS_SUBPIXEL_BITS 8
#define RS_GUARD 64.0f                   /* guard band, in multiples of the image size */
#define RS_ATTRS 8                       /* world position (3), normal (3), uv (2) */
#define RS_MAX_CLIPPED 9                 /* triangles a clipped triangle can become */

typedef struct rs_vertex {
    float clip[4];
    float attr[RS_ATTRS];
} rs_vertex;

typedef struct rs_triangle {
    rs_vertex v[3];
    uint32_t prim;                       /* primitive id */
    uint32_t material;
} rs_triangle;

/* A triangle ready to rasterize: fixed-point vertices, edges and its pixel bounds. */
typedef struct rs_setup {
    int64_t c[3];                        /* edge i: a*X + b*Y + c, opposite vertex i */
    int64_t area;                        /* twice the area, > 0 after orientation */
    int32_t a[3], b[3];                  /* coordinate differences: below 2^29 (see above) */
    int x0, y0, x1, y1;                  /* inclusive pixel bounds, clamped to the image */
    float z[3], inv_w[3];                /* window depth 0..1 and 1/w per vertex */
    int8_t bias[3];                      /* 0 on top-left edges, -1 elsewhere */
    uint8_t order[3];                    /* setup vertex k is input vertex order[k] */
} rs_setup;

/* A covered pixel centre and the exact (unbiased) values of edges 0 and 1 there. */
typedef struct rs_cover {
    uint16_t x, y;
    int64_t e0, e1;
} rs_cover;

/* What turns a covered pixel's edge values into its depth and weights. */
typedef struct rs_interp {
    double area;                         /* rs_setup.area */
    float z[3], inv_w[3];
} rs_interp;

static inline void rs_interp_of(const rs_setup *s, rs_interp *ip)
{
    ip->area = (double)s->area;
    for (int k = 0; k < 3; k++) {
        ip->z[k] = s->z[k];
        ip->inv_w[k] = s->inv_w[k];
    }
}

/* Window depth (0 near .. 1 far) at a covered pixel from the screen barycentrics l0, l1
 * (and 1 - l0 - l1): the one formula rs_depth and rs_weights share, so both give the
 * same bits. */
static inline float rs_depth_at(const rs_interp *ip, double l0, double l1, double l2)
{
    return (float)(l0 * ip->z[0] + l1 * ip->z[1] + l2 * ip->z[2]);
}

/* Window depth at a covered pixel: barycentrics from the exact edge values, in double. */
static inline float rs_depth(const rs_interp *ip, int64_t e0, int64_t e1)
{
    double l0 = (double)e0 / ip->area, l1 = (double)e1 / ip->area;
    return rs_depth_at(ip, l0, l1, 1.0 - l0 - l1);
}

/* The perspective-correct weights of vertices 1 and 2 from the screen barycentrics and
 * the vertices' 1/w: the one formula rs_weights and rs_weights_packet share. */
static inline void rs_persp_weights(double l0, double l1, double l2, float iw0, float iw1,
                                    float iw2, float *b1, float *b2)
{
    double p0 = l0 * iw0, p1 = l1 * iw1, p2 = l2 * iw2;
    double sum = p0 + p1 + p2;
    *b1 = (float)(p1 / sum);
    *b2 = (float)(p2 / sum);
}

/* The depth and the perspective-correct weights of vertices 1 and 2 at a covered pixel.
 * Inline and branch-free so a loop over a packet's fragments vectorizes. */
static inline void rs_weights(const rs_interp *ip, int64_t e0, int64_t e1, float *z, float *b1,
                              float *b2)
{
    double l0 = (double)e0 / ip->area, l1 = (double)e1 / ip->area;
    double l2 = 1.0 - l0 - l1;
    *z = rs_depth_at(ip, l0, l1, l2);
    rs_persp_weights(l0, l1, l2, ip->inv_w[0], ip->inv_w[1], ip->inv_w[2], b1, b2);
}

/* rs_weights' b1 and b2 for n fragments as arrays (fragment i: edge values e0[i], e1[i]
 * as doubles, its triangle's area[i] and 1/w iw[k][i]), in a loop that vectorizes
 * (rasterizer/weights.c, -O3, with an AVX2 body when avx2 is true). Same bits as
 * rs_weights. */
GR_API void rs_weights_packet(int n, const double *e0, const double *e1, const double *area,
                       const float *const iw[3], float *b1, float *b2, bool avx2);

/* What clipping would do to a triangle: nothing, drop it, or cut it into pieces, from
 * its vertices' outcodes (rs_clip_classify_codes), which a vertex shader computes once
 * per vertex: bit p is set when the vertex is outside clip plane p (near z >= -w, far
 * z <= w, the guard band |x|, |y| <= RS_GUARD w). rs_outcode_of is inline so a loop
 * over vertices vectorizes. */
typedef enum rs_clip_kind { RS_CLIP_INSIDE, RS_CLIP_CULLED, RS_CLIP_CUT } rs_clip_kind;

static inline unsigned rs_outcode_of(float x, float y, float z, float w)
{
    const float g = RS_GUARD * w;
    return (unsigned)(z + w < 0) | (unsigned)(w - z < 0) << 1 | (unsigned)(g - x < 0) << 2 |
           (unsigned)(g + x < 0) << 3 | (unsigned)(g - y < 0) << 4 | (unsigned)(g + y < 0) << 5;
}
GR_API unsigned rs_outcode(const rs_vertex *v);
GR_API rs_clip_kind rs_clip_classify_codes(unsigned c0, unsigned c1, unsigned c2);

/* Clips against near, far and the guard band. Returns the number of triangles written
 * to out (0 when nothing is left); each keeps prim and material. */
GR_API int rs_clip(const rs_triangle *in, rs_triangle out[RS_MAX_CLIPPED]);

/* Sets up a clipped triangle for a width x height image. false when it covers no sample
 * (zero area, or outside the image). */
GR_API bool rs_setup_triangle(const rs_triangle *t, int width, int height, rs_setup *s);

/* rs_setup_triangle in two steps, for vertices shared by several triangles: each vertex
 * projected (rs_project: 1/w, window depth, screen position; then snapped to
 * rs_subpixels, rounded to nearest; ok is false behind the eye, w <= 0), then the
 * triangle set up from its three. The same result. rs_project and rs_subpixels are
 * inline so a vertex shader's loop over vertices vectorizes. */
typedef struct rs_screen_vertex { int64_t x, y; float z, inv_w; bool ok; } rs_screen_vertex;

static inline void rs_project(float cx, float cy, float cz, float cw, int width, int height,
                              float *inv_w, float *z, float *sx, float *sy)
{
    float iw = 1.0f / cw;
    *sx = (cx * iw * 0.5f + 0.5f) * (float)width;
    *sy = (0.5f - cy * iw * 0.5f) * (float)height;
    *inv_w = iw;
    *z = cz * iw * 0.5f + 0.5f;
}

static inline float rs_subpixels(float v) { return v * (float)(1 << RS_SUBPIXEL_BITS); }

/* Where in a pixel its sample points lie, in subpixels from its top-left corner, per
 * axis: lo..hi. The setup's pixel bounds are the pixels one of whose points can lie in
 * the triangle, and it fails (no pixel) only when there is none: rs_centre_reach for
 * the pixel centre (rs_setup_projected, rs_setup_triangle), a multisample pattern's
 * (rasterizer/samples.h) for multisampling. */
typedef struct rs_reach { int32_t lo_x, hi_x, lo_y, hi_y; } rs_reach;
extern GR_API const rs_reach rs_centre_reach;

GR_API void rs_project_vertex(const rs_vertex *v, int width, int height, rs_screen_vertex *out);
GR_API bool rs_setup_projected(const rs_screen_vertex *const v[3], int width, int height, rs_setup *s);
/* The same with the pixel bounds of reach r (bounds only: edges and depths are the same). */
GR_API bool rs_setup_projected_reach(const rs_screen_vertex *const v[3], int width, int height,
                                     const rs_reach *r, rs_setup *s);
GR_API bool rs_setup_triangle_reach(const rs_triangle *t, int width, int height, const rs_reach *r,
                                    rs_setup *s);

/* Writes the covered pixels of s inside the pixel rectangle [x0,x1) x [y0,y1) to out,
 * in row-major order; returns how many (at most (x1-x0)*(y1-y0)). Coverage only: depth
 * and weights come from rs_weights, so a pipeline can compute them in parallel. */
GR_API int rs_raster_rect(const rs_setup *s, int x0, int y0, int x1, int y1, rs_cover *out);

/* A depth and visibility buffer over a rectangle of the image: pixel (x, y) is at
 * (y - oy) * stride + (x - ox). vis holds the nearest primitive's id + 1 (0: none).
 * The AVX2 kernels work on whole steps of eight pixels: they may read up to
 * RS_DEPTH_SLACK - 1 elements past a row's last pixel and write them back unchanged, so
 * both buffers must extend that far (allocate RS_DEPTH_SLACK more elements than the last
 * pixel's index) and no other thread may touch them during the call.
 * When won is not NULL, rs_depth_rect appends there the index of every pixel the
 * triangle takes (at most the rectangle's area) and counts them in nwon; the AVX2
 * kernels store four indices at a time, so won needs room for RS_DEPTH_SLACK elements
 * past the rectangle's area (whatever lies there after the call means nothing). */
#define RS_DEPTH_SLACK 8

typedef struct rs_depth_target {
    float *z;
    uint32_t *vis;
    int ox, oy;
    int stride;
    int32_t *won;
    int nwon;
} rs_depth_target;

/* Depth-tests the covered pixels of s inside [x0,x1) x [y0,y1) (coverage as
 * rs_raster_rect, depth as rs_depth) against t, keeping the nearer depth and, at equal
 * depths, the smaller primitive id: the result is the draw-order `less` test's whatever
 * order the triangles come in (ids follow draw order). id is the triangle's primitive
 * id. Returns the number of covered pixels. With avx2 (only where the CPU has it; the
 * shaders' sh_raster_env.isa says) the AVX2 kernels, eight or four pixels a step, else the
 * baseline (rasterizer/depth_rect.c): the same results, won order and count. */
GR_API int rs_depth_rect(const rs_setup *s, int x0, int y0, int x1, int y1, rs_depth_target *t,
                  uint32_t id, bool avx2);

/* The exact (unbiased) values of edges 0 and 1 at pixel (x, y)'s centre: what
 * rs_raster_rect reports for a covered pixel there (inline: Tile-Shade asks per pixel). */
static inline void rs_edges_at(const rs_setup *s, int x, int y, int64_t *e0, int64_t *e1)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS, half = one / 2;
    int64_t X = (int64_t)x * one + half, Y = (int64_t)y * one + half;
    *e0 = s->a[0] * X + s->b[0] * Y + s->c[0];
    *e1 = s->a[1] * X + s->b[1] * Y + s->c[1];
}

#endif

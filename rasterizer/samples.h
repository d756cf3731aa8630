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

/* Sample k of pixel (x, y) in subpixels. */
static inline void rs_sample_point(const rs_samples *p, int k, int x, int y, int64_t *X, int64_t *Y)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS, half = one / 2, step = one / 16;
    *X = (int64_t)x * one + half + p->dx[k] * step;
    *Y = (int64_t)y * one + half + p->dy[k] * step;
}

/* The depth at sample k of pixel (x, y) of the triangle with edges e and interpolants ip
 * (covered or not: the plane's value there). */
static inline float rs_sample_depth(const rs_edge01 *e, const rs_interp *ip, const rs_samples *p,
                                    int k, int x, int y)
{
    int64_t X, Y;
    rs_sample_point(p, k, x, y, &X, &Y);
    return rs_depth(ip, e->a[0] * X + e->b[0] * Y + e->c[0], e->a[1] * X + e->b[1] * Y + e->c[1]);
}

/* The samples of pixel (x, y) that s covers (bit k: sample k), by the top-left rule. */
static inline unsigned rs_sample_cover(const rs_setup *s, const rs_samples *p, int x, int y)
{
    unsigned mask = 0;
    for (int k = 0; k < p->count; k++) {
        int64_t X, Y;
        rs_sample_point(p, k, x, y, &X, &Y);
        int64_t all = 0;
        for (int i = 0; i < 3; i++) all |= s->a[i] * X + s->b[i] * Y + s->c[i] + s->bias[i];
        mask |= (unsigned)(all >= 0) << k;
    }
    return mask;
}

/* rs_raster_rect with samples: every pixel of [x0,x1) x [y0,y1) where s covers at least
 * one sample, in row-major order, with the exact edge values at its centre (covered or
 * not: the shading point) and its covered samples in mask[]. Returns how many. */
GR_API int rs_raster_rect_samples(const rs_setup *s, const rs_samples *p, int x0, int y0, int x1,
                                  int y1, rs_cover *out, uint8_t *mask);

#endif

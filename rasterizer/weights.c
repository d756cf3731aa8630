/* weights.c — rs_weights_packet (see raster.h): the perspective-correct weights across a
 * packet of fragments, compiled -O3 (Makefile VECTOR_KERNELS) for the baseline and, on
 * x86-64, for AVX2, where its four divisions per fragment run four fragments at a time. */
#include "rasterizer/raster.h"

static inline __attribute__((always_inline)) void
weights(int n, const double *restrict e0, const double *restrict e1, const double *restrict area,
        const float *restrict iw0, const float *restrict iw1, const float *restrict iw2,
        float *restrict b1, float *restrict b2)
{
    for (int i = 0; i < n; i++) {
        double l0 = e0[i] / area[i], l1 = e1[i] / area[i];
        rs_persp_weights(l0, l1, 1.0 - l0 - l1, iw0[i], iw1[i], iw2[i], &b1[i], &b2[i]);
    }
}

static void weights_baseline(int n, const double *e0, const double *e1, const double *area,
                             const float *const iw[3], float *b1, float *b2)
{
    weights(n, e0, e1, area, iw[0], iw[1], iw[2], b1, b2);
}

#if defined(__x86_64__)
__attribute__((target("avx2")))
static void weights_avx2(int n, const double *e0, const double *e1, const double *area,
                         const float *const iw[3], float *b1, float *b2)
{
    weights(n, e0, e1, area, iw[0], iw[1], iw[2], b1, b2);
}
#endif

void rs_weights_packet(int n, const double *e0, const double *e1, const double *area,
                       const float *const iw[3], float *b1, float *b2, bool avx2)
{
#if defined(__x86_64__)
    if (avx2) { weights_avx2(n, e0, e1, area, iw, b1, b2); return; }
#endif
    (void)avx2;
    weights_baseline(n, e0, e1, area, iw, b1, b2);
}

/* sum_encode.c — the image from the contribution sums (see the header). */
#include "pipelines/raytrace/sum_encode.h"

#include "pipelines/raytrace/sums.h"
#include "rasterizer/samples.h"

bool plrt_encoder_init(plrt_encoder *e, const cp_stage_init *i, int msaa, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    *e = (plrt_encoder){f, NULL, NULL, NULL, (uint32_t)msaa, NULL};
    if (!rs_sample_pattern(msaa)) {
        snprintf(err, CP_ERR_MAX, "msaa %d: expected 1, 4 or 8 samples per pixel", msaa);
        return false;
    }
    if (msaa > 1 && !(pl_frame_set_samples(f, msaa, err) && (e->vis = pl_frame_use(i, "sample-visibility", err))))
        return false;
    if (!(e->sums = pl_frame_use(i, plrt_sums_name(msaa), err)) || !(e->color = pl_frame_use(i, "color", err)) ||
        !pl_frame_sink_hdr(i, &e->hdr, err))
        return false;
    sh_srgb_init();                       /* then the inline lookup, without a call per value */
    return true;
}

uint8_t plrt_encode(sh_aov aov, int64_t sum)
{
    double v = (double)sum / PL_FIXED_ONE;
    if (aov == SH_AOV_PRIMID) return (uint8_t)v;
    if (aov == SH_AOV_COLOR) return sh_srgb8_lookup((float)v);
    return (uint8_t)(v < 0 ? 0 : v > 1 ? 255 : v * 255.0 + 0.5);
}

/* One sample per pixel. Runs of equal sums (background, flat areas) reuse the last byte
 * instead of encoding again. */
static void encode_single(const plrt_encoder *e, size_t lo, size_t hi)
{
    uint8_t *restrict rgba = (uint8_t *)e->color;
    const int64_t *restrict accum = e->sums;
    const sh_aov aov = e->f->aov;
    int64_t last = 0;
    uint8_t byte = plrt_encode(aov, 0);
    for (size_t i = lo; i < hi; i++) {
        for (int ch = 0; ch < 3; ch++) {
            int64_t sum = accum[i * 3 + ch];
            if (sum != last) { last = sum; byte = plrt_encode(aov, sum); }
            rgba[i * 4 + ch] = byte;
        }
        rgba[i * 4 + 3] = 255;
    }
    for (size_t i = lo; e->hdr && i < hi; i++) {
        for (int ch = 0; ch < 3; ch++) e->hdr[i * 4 + ch] = (float)((double)accum[i * 3 + ch] / PL_FIXED_ONE);
        e->hdr[i * 4 + 3] = 1.0f;
    }
}

/* Pixel p's linear colour with msaa > 1: the mean of its samples' sums as floats (the
 * raster graphs' resolve in linear colour), where the image averages their bytes. */
static void resolve_hdr(const plrt_encoder *e, size_t p)
{
    float mean[3] = {0, 0, 0};
    for (size_t k = 0; k < e->msaa; k++) {
        const int64_t *s = e->sums + plrt_sample_slot(e, p, k) * 3;
        for (int ch = 0; ch < 3; ch++) mean[ch] += (float)((double)s[ch] / PL_FIXED_ONE);
    }
    for (int ch = 0; ch < 3; ch++) e->hdr[p * 4 + ch] = mean[ch] / (float)e->msaa;
    e->hdr[p * 4 + 3] = 1.0f;
}

static void resolve(const plrt_encoder *e, size_t lo, size_t hi)
{
    const size_t m = e->msaa;
    const int shift = __builtin_ctz(e->msaa);
    const sh_aov aov = e->f->aov;
    uint8_t *restrict rgba = (uint8_t *)e->color;
    for (size_t p = lo; p < hi; p++) {
        uint32_t sum[3] = {0, 0, 0};
        for (size_t k = 0; k < m; k++) {
            const int64_t *s = e->sums + plrt_sample_slot(e, p, k) * 3;
            for (int ch = 0; ch < 3; ch++) sum[ch] += plrt_encode(aov, s[ch]);
        }
        for (int ch = 0; ch < 3; ch++) rgba[p * 4 + ch] = (uint8_t)((sum[ch] + m / 2) >> shift);
        rgba[p * 4 + 3] = 255;
        if (e->hdr) resolve_hdr(e, p);
    }
}

void plrt_encode_pixels(const plrt_encoder *e, size_t lo, size_t hi)
{
    if (e->msaa > 1) resolve(e, lo, hi);
    else encode_single(e, lo, hi);
}

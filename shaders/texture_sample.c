/* texture_sample.c — mip level selection, filtering and addressing (see the header). */
#include "shaders/texture_sample.h"

#include "shaders/texture_sample_body.h"

#include <math.h>

float sh_texture_lod(const sc_texture *t, float dudx, float dvdx, float dudy, float dvdy)
{
    return ts_lod(t, dudx, dvdx, dudy, dvdy);
}

float sh_texture_cone_lod(const sc_texture *t, float uv_area, float world_area, float width,
                          float cos_theta)
{
    float texels = fabsf(uv_area) * (float)t->levels[0].width * (float)t->levels[0].height;
    float c = fabsf(cos_theta);
    if (!(texels > 0.0f) || !(world_area > 0.0f) || !(width > 0.0f) || !(c > 0.0f)) return 0.0f;
    float lod = 0.5f * log2f(texels / world_area) + log2f(width / c);
    return isfinite(lod) ? lod : 0.0f;
}

void sh_texture_sample(const sc_texture *t, const sc_sampler *s, float u, float v, float lod,
                       float rgba[4])
{
    sh_texture_sample_inline(t, s, u, v, lod, rgba);
}

__attribute__((target("avx2")))
static void sample_avx2(const sc_texture *t, const sc_sampler *s, float u, float v, float lod, float rgba[4])
{
    sh_texture_sample_inline(t, s, u, v, lod, rgba);
}

void sh_texture_sample_on(rt_isa isa, const sc_texture *t, const sc_sampler *s, float u, float v, float lod,
                          float rgba[4])
{
    if (isa == RT_ISA_AVX2) sample_avx2(t, s, u, v, lod, rgba);
    else sh_texture_sample_inline(t, s, u, v, lod, rgba);
}

void sh_texture_transform(const sc_texture_ref *ref, float *u, float *v)
{
    if (sh_texture_transform_is_identity(ref)) return;
    float c = cosf(ref->rotation), s = sinf(ref->rotation);
    float su = ref->scale[0] * *u, sv = ref->scale[1] * *v;
    *u = ref->offset[0] + c * su + s * sv;
    *v = ref->offset[1] - s * su + c * sv;
}

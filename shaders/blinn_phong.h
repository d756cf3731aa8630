/* blinn_phong.h — the lighting model both renderers share, so a surface shaded by the
 * rasterizer's pixel shader and by the ray tracer's Shade stage gets the same colour:
 * per point light, albedo * max(n.l, 0) + specular * max(n.h, 0)^exponent, times the
 * light's colour (the power is sh_spec_pow's: the same bits in the packet kernel).
 * Small vector helpers for the shading kernels live here too. */
#ifndef SHADERS_BLINN_PHONG_H
#define SHADERS_BLINN_PHONG_H

#include "scenes/scene.h"
#include "shaders/spec_pow.h"

#include <math.h>
#include <stdbool.h>

static inline float sh_dot3(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void sh_normalize3(float v[3])
{
    float l = sqrtf(sh_dot3(v, v));
    if (l > 0) { v[0] /= l; v[1] /= l; v[2] /= l; }
}

/* The material of triangles whose index is out of range (grey, reflectivity 0.3). */
#define SH_NO_TEXTURE {.texture = -1, .scale = {1, 1}}
static const sc_material sh_default_material = {
    .name = "default", .albedo = {0.8f, 0.8f, 0.8f}, .alpha = 1, .albedo_map = SH_NO_TEXTURE,
    .alpha_cutoff = 0.5f, .double_sided = true, .reflectivity = 0.3f, .specular = 0.5f,
    .specular_exponent = 32.0f, .roughness = 1, .metallic_roughness_map = SH_NO_TEXTURE,
    .emissive_map = SH_NO_TEXTURE, .normal_map = SH_NO_TEXTURE, .normal_scale = 1,
    .occlusion_map = SH_NO_TEXTURE, .occlusion_strength = 1};
#undef SH_NO_TEXTURE

/* Adds nothing and returns false when the light is behind the surface; otherwise
 * writes the light's contribution at p (unit normal n, unit view vector) to out. */
static inline bool sh_blinn_phong(const float p[3], const float n[3], const float view[3],
                                  const sc_light *l, const float albedo[3],
                                  const sc_material *m, float out[3])
{
    float L[3] = {l->position[0] - p[0], l->position[1] - p[1], l->position[2] - p[2]};
    sh_normalize3(L);
    float ndotl = sh_dot3(n, L);
    if (ndotl <= 0) return false;
    float h[3] = {L[0] + view[0], L[1] + view[1], L[2] + view[2]};
    sh_normalize3(h);
    float spec = m->specular * sh_spec_pow(fmaxf(sh_dot3(n, h), 0.0f), m->specular_exponent);
    for (int i = 0; i < 3; i++) out[i] = (albedo[i] * ndotl + spec) * l->color[i];
    return true;
}

#endif

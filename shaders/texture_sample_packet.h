/* texture_sample_packet.h — sh_texture_sample over many fragments of one texture and
 * sampler at once: on CPUs with AVX2, eight lanes per step (the level of each lane, the
 * addressing of its four texels per level, a gather of each corner, the lerps across
 * lanes), as llvmpipe samples in SoA.
 *
 * Invariant: lane i gives the bits sh_texture_sample(t, s, u[i], v[i], lod[i]) gives.
 * Each lane does the scalar sampler's IEEE operations in the same order (no FMA, the
 * same divide by 255), and every integer step (floor, wrap, row order) has the scalar
 * result; filters other than trilinear, bilinear and linear-no-mips, and CPUs without
 * AVX2, take the scalar sampler lane by lane. tests/render/test_texture_sample_packet.c
 * checks it on random coordinates, levels, wraps, filters and texture sizes. */
#ifndef SHADERS_TEXTURE_SAMPLE_PACKET_H
#define SHADERS_TEXTURE_SAMPLE_PACKET_H

#include "gramps/api.h"
#include "scenes/scene.h"

#include <stdbool.h>

/* rgba[c][i] = channel c of the sample of t at (u[i], v[i]) and level of detail lod[i],
 * for i < n; rgba[3] NULL: colour only (alpha not filtered). avx2: the CPU has it
 * (rt_isa_best() == RT_ISA_AVX2). */
GR_API void sh_texture_sample_n(const sc_texture *t, const sc_sampler *s, const float *u,
                                const float *v, const float *lod, int n, float *const rgba[4],
                                bool avx2);

#endif

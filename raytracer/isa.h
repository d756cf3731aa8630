/* Instruction-set choice of every packet kernel: SSE2 baseline or AVX2. The one selector
 * of the renderer: it lives in raytracer/, the lowest module with kernels that choose, so
 * the shaders above (the raster pipeline's vertex and pixel shaders, and through their
 * env the depth and weight kernels) ask it too.
 *
 * Data flow: the CPU (cpuid, once per query) and the environment variable GRAMPS_ISA ->
 * rt_isa_best() -> rt_bvh_build (bvh.c) builds the 8-wide nodes the AVX2 kernels read
 * and records the choice in rt_bvh.isa -> rt_intersect1 / rt_occluded1 dispatch on it,
 * one predictable branch per ray, and so do the stream traversal (bvh_traverse.c, one
 * branch per stream) and the packet path (packet.c: the 4-wide or 8-wide instance of
 * packet_tmp.h); and -> sh_raster_env_init records it in sh_raster_env.isa for the
 * raster kernels.
 *
 * GRAMPS_ISA=baseline forces the baseline; the choice is made at run time with
 * __builtin_cpu_supports, never with an ifunc or target_clones (their resolvers run
 * before sanitizers are initialised). Both ISAs give the same bits: the AVX2 kernels run
 * the same arithmetic (no FMA). */
#ifndef RAYTRACER_ISA_H
#define RAYTRACER_ISA_H

#include "gramps/api.h"

#include <stdbool.h>

typedef enum rt_isa { RT_ISA_BASELINE, RT_ISA_AVX2 } rt_isa;

/* Whether the CPU (and the OS, for the YMM state) can run isa. */
GR_API bool rt_isa_available(rt_isa isa);
/* The best the CPU has, unless GRAMPS_ISA=baseline asks for the baseline. */
GR_API rt_isa rt_isa_best(void);
/* "baseline" or "avx2" (the statistics' ps_isa and rt_isa). */
GR_API const char *rt_isa_name(rt_isa isa);

#endif

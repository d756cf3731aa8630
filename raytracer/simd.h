/* SSE baseline and the inlining rule shared by the ray-tracing kernels.
 *
 * Data flow: included by tri_intersect.h and through it by every traversal file; holds no
 * data. The kernels' hot helpers (slab tests, block tests, child ordering) must inline
 * into the traversal loops: a call there spills the SSE ray constants and costs more than
 * the work, and GCC at -O2 declines to inline the larger ones on its own. */
#ifndef RAYTRACER_SIMD_H
#define RAYTRACER_SIMD_H

#if !defined(__SSE2__)
#error "raytracer/ needs SSE2 (x86-64)"
#endif
#include <emmintrin.h>

#define RT_INLINE static inline __attribute__((always_inline))

/* The AVX2 kernels (bvh8_traverse.c, tri_intersect8.h): compiled for AVX2 per function,
 * not per file, so the library still runs on any x86-64; callers check rt_bvh.isa (isa.h)
 * first. "avx2" alone, without "fma": a fused multiply-add would round differently from
 * the SSE kernels. RT_INLINE helpers inline into these (the baseline is a subset). */
#define RT_AVX2 __attribute__((target("avx2")))
#define RT_AVX2_INLINE static inline __attribute__((always_inline, target("avx2")))

#endif

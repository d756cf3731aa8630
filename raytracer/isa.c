/* Instruction-set choice of the ray-tracing kernels (see isa.h). */
#include "raytracer/isa.h"

#include <stdlib.h>
#include <string.h>

bool rt_isa_available(rt_isa isa)
{
    switch (isa) {
    case RT_ISA_BASELINE: return true;
#if defined(__x86_64__)
    case RT_ISA_AVX2: return __builtin_cpu_supports("avx2");   /* checks XCR0 too */
#endif
    default: return false;
    }
}

rt_isa rt_isa_best(void)
{
    const char *force = getenv("GRAMPS_ISA");     /* "baseline" to compare or debug */
    if (force && !strcmp(force, "baseline")) return RT_ISA_BASELINE;
    return rt_isa_available(RT_ISA_AVX2) ? RT_ISA_AVX2 : RT_ISA_BASELINE;
}

const char *rt_isa_name(rt_isa isa) { return isa == RT_ISA_AVX2 ? "avx2" : "baseline"; }

/* frame_memory.c — see frame_memory.h. */
#include "pipelines/frame_memory.h"

#include <stdlib.h>     /* defines __GLIBC__ when the C library is glibc */

#if defined(__GLIBC__)
#include <malloc.h>

int pl_keep_freed_memory(void)
{
    /* Blocks below the mmap threshold come from the heap and are reused after free;
     * 32 MiB is glibc's largest allowed threshold on 64-bit. A trim threshold above any
     * heap size keeps freed heap tops from being returned. Both also stop glibc's own
     * adjustment of the thresholds. */
    int ok = mallopt(M_MMAP_THRESHOLD, 32 << 20);
    ok &= mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return ok ? 0 : -1;
}
#else
int pl_keep_freed_memory(void) { return -1; }
#endif

#if defined(__linux__)
#include <sys/mman.h>
#endif

void *pl_frame_array_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < huge) return malloc(bytes);
    const size_t whole = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, whole);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p) madvise(p, whole, MADV_HUGEPAGE);   /* a hint: refused, the pages stay small */
#endif
    return p;
}

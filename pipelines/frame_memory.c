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

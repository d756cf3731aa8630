/* prefetch.h — a request for one cache line, for stages that know what they read next
 * before they read it (Tile-Shade: the next triangle's depth, visibility and owner
 * lines; the hybrid's OM: a tile's next row of sums).
 *
 * An asm statement on x86-64, which GCC keeps: GCC 12 deleted loops and functions whose
 * only effect was __builtin_prefetch as having no effect. A hint: it loads nothing and
 * cannot fault. */
#ifndef RASTERIZER_PREFETCH_H
#define RASTERIZER_PREFETCH_H

static inline void rs_prefetch_line(const void *a)
{
#if defined(__x86_64__)
    __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)a));
#else
    __builtin_prefetch(a, 0, 3);
#endif
}

#endif

/* clock.h — cheap timestamps for the always-on statistics (internal).
 *
 * gr_ticks() is the time-stamp counter on x86-64 (a few ns, no fence: we attribute
 * intervals of thousands of cycles, so reordering by a few instructions is noise) and
 * the virtual counter on aarch64; elsewhere CLOCK_MONOTONIC in ns. gr_ticks_per_ns()
 * is measured once per process against CLOCK_MONOTONIC. */
#ifndef GRAMPS_CLOCK_H
#define GRAMPS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t gr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t gr_ticks(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return gr_now_ns();
#endif
}

double gr_ticks_per_ns(void);
static inline double gr_ticks_to_ms(uint64_t t) { return (double)t / gr_ticks_per_ns() / 1e6; }

#endif

/* measure.h — wall-clock time and the median of measurements (frame times, footprints)
 * as the tools and benchmarks take and report them. */
#ifndef TOOLS_MEASURE_H
#define TOOLS_MEASURE_H

#include <stddef.h>
#include <time.h>

/* Seconds on the monotonic clock, from an arbitrary origin. */
static inline double io_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double io_now_ms(void) { return io_now_s() * 1e3; }

/* qsort's comparison for doubles, ascending. */
static inline int io_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of sorted[0..n-1], sorted ascending, n >= 1: for an even count, the mean of
 * the two middle values (the upper middle value alone biased every even-count median
 * upwards). */
static inline double io_median_sorted(const double *sorted, size_t n)
{
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* The calling thread's CPU time in ms: a simulated frame's work outside its graph, which
 * the OS's other tenants do not lengthen (the thread sleeps while the graph runs). */
static inline double io_thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* The CPU time of all the process's threads in ms: a benchmark's whole frame (llvmpipe's
 * and ours at one thread keep one core busy each: the steadier figure on a shared
 * machine). */
static inline double io_process_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

#endif

/* median.h — the median of measurements (frame times, footprints) as the tools and
 * benchmarks report it: for an even count, the mean of the two middle values (the
 * upper middle value alone biased every even-count median upwards). */
#ifndef TOOLS_MEDIAN_H
#define TOOLS_MEDIAN_H

#include <stddef.h>

/* Median of sorted[0..n-1], sorted ascending, n >= 1. */
static inline double io_median_sorted(const double *sorted, size_t n)
{
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

#endif

/* clock.c — calibrates gr_ticks() against CLOCK_MONOTONIC once per process. */
#include "gramps/clock.h"

#include <pthread.h>

static double ticks_per_ns = 1.0;
static pthread_once_t calibrated = PTHREAD_ONCE_INIT;

static void calibrate(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
    uint64_t n0 = gr_now_ns(), t0 = gr_ticks();
    while (gr_now_ns() - n0 < 2000000) { /* 2 ms is enough for 0.1% accuracy */ }
    uint64_t n1 = gr_now_ns(), t1 = gr_ticks();
    if (n1 > n0 && t1 > t0) ticks_per_ns = (double)(t1 - t0) / (double)(n1 - n0);
#endif
}

double gr_ticks_per_ns(void)
{
    pthread_once(&calibrated, calibrate);
    return ticks_per_ns;
}

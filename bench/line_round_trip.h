/* line_round_trip.h — how long the machine takes to move a cache line from one thread
 * to another and back, for the benchmarks to print beside their 2-thread figures.
 *
 * Why: a GRAMPS frame hands every packet between workers through shared queue state,
 * so its 2-worker time depends on this cost far more than a peer's that splits the image
 * into independent tiles. The development VM switches for minutes at a time between
 * about 100 ns and about 400 ns, and its 2-worker frames with it (docs/performance.md);
 * a figure is only comparable with another taken at a similar round trip. */
#ifndef BENCH_LINE_ROUND_TRIP_H
#define BENCH_LINE_ROUND_TRIP_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

enum { LINE_ROUND_TRIPS = 100000 };

static _Atomic long line_flag __attribute__((aligned(64)));

static void *line_echo(void *arg)
{
    (void)arg;
    for (long i = 0; i < LINE_ROUND_TRIPS; i++) {
        while (atomic_load_explicit(&line_flag, memory_order_acquire) != 2 * i + 1) {}
        atomic_store_explicit(&line_flag, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

/* The mean round trip in ns (one thread writes the line, the other answers), or -1
 * when a second thread cannot be started. */
static double bench_line_round_trip_ns(void)
{
    pthread_t echo;
    atomic_store(&line_flag, 0);
    if (pthread_create(&echo, NULL, line_echo, NULL) != 0) return -1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < LINE_ROUND_TRIPS; i++) {
        atomic_store_explicit(&line_flag, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&line_flag, memory_order_acquire) != 2 * i + 2) {}
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(echo, NULL);
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / LINE_ROUND_TRIPS;
}

#endif

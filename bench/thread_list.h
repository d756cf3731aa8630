/* thread_list.h — the --threads LIST option of the peer benchmarks (bench_rt_embree,
 * bench_rs_llvmpipe): the thread counts to measure, each renderer and its peer at each.
 * The default 1,2 fits the 2-core development VM; 1,2,4,8,16 gives the many-core
 * figures (bench/scaling.sh), with each one's speedup over its own 1-thread frame. */
#ifndef BENCH_THREAD_LIST_H
#define BENCH_THREAD_LIST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

enum { BENCH_MAX_COUNTS = 16, BENCH_MAX_THREADS = 64 };

typedef struct bench_threads {
    int n;
    int count[BENCH_MAX_COUNTS];
} bench_threads;

static const bench_threads bench_threads_default = {2, {1, 2}};

/* Parses a comma-separated list of thread counts ("1,2,4"). Returns 0, or -1 after
 * printing what is wrong (naming prog and the item) to stderr. */
static int bench_threads_parse(const char *prog, const char *text, bench_threads *t)
{
    t->n = 0;
    for (const char *p = text;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > BENCH_MAX_THREADS || (*end && *end != ',')) {
            fprintf(stderr, "%s: --threads '%s': each item must be a whole number from 1 to %d, "
                    "separated by commas\n", prog, text, BENCH_MAX_THREADS);
            return -1;
        }
        if (t->n == BENCH_MAX_COUNTS) {
            fprintf(stderr, "%s: --threads '%s': at most %d thread counts\n", prog, text,
                    BENCH_MAX_COUNTS);
            return -1;
        }
        t->count[t->n++] = (int)v;
        if (!*end) return 0;
        p = end + 1;
    }
}

/* The position of the 1-thread count in t, or -1: the base of the speedups. */
static int bench_threads_one(const bench_threads *t)
{
    for (int i = 0; i < t->n; i++)
        if (t->count[i] == 1) return i;
    return -1;
}

#endif

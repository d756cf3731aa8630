/* sim_costs.h — the machine's costs the simulator's cost model charges (gramps/simulate.c,
 * docs/many-cores.md): how long a sleeping thread takes to run after a broadcast wakes
 * it, how long an idle worker's spins before it sleeps take (tasks.c: GR_IDLE_SPINS
 * searches, a pause each, a sched_yield every 8th), and what each line of a packet costs
 * when a thread reads what another thread just wrote (the misses overlap), and how long a
 * contended mutex takes to pass to a thread sleeping in its lock. The line cost
 * is half of bench_line_round_trip_ns (line_round_trip.h). */
#ifndef BENCH_SIM_COSTS_H
#define BENCH_SIM_COSTS_H

#include "gramps/spin.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

enum { SIM_WAKES = 2000, SIM_IDLE_SPINS = 64 };
enum { SIM_STREAM_BYTES = 16384, SIM_STREAM_ROUNDS = 2000 };   /* a packet of Bin's size */

static double sim_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

typedef struct sim_sleeper {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    long round;                   /* the broadcast the sleeper waits for */
    bool asleep;
    double sent, woke_sum;
} sim_sleeper;

static void *sim_sleep_loop(void *arg)
{
    sim_sleeper *s = arg;
    pthread_mutex_lock(&s->lock);
    for (long r = 1; r <= SIM_WAKES; r++) {
        s->asleep = true;
        pthread_cond_broadcast(&s->cond);           /* tells the waker it sleeps */
        while (s->round < r) pthread_cond_wait(&s->cond, &s->lock);
        s->woke_sum += sim_now_ns() - s->sent;
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* Mean ns from a broadcast to the sleeping thread running, or -1 without a thread. */
static double sim_wake_ns(void)
{
    sim_sleeper s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false, 0, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, sim_sleep_loop, &s) != 0) return -1;
    for (long r = 1; r <= SIM_WAKES; r++) {
        pthread_mutex_lock(&s.lock);
        while (!s.asleep) pthread_cond_wait(&s.cond, &s.lock);
        pthread_mutex_unlock(&s.lock);
        struct timespec nap = {0, 20000};           /* let it reach the kernel's sleep */
        nanosleep(&nap, NULL);
        pthread_mutex_lock(&s.lock);
        s.asleep = false;
        s.round = r;
        s.sent = sim_now_ns();
        pthread_cond_broadcast(&s.cond);
        pthread_mutex_unlock(&s.lock);
    }
    pthread_join(t, NULL);
    return s.woke_sum / SIM_WAKES;
}

/* Mean ns of an idle worker's spin phase (without its searches, which cost a few ns
 * each at a handful of workers). */
static double sim_spin_ns(void)
{
    double best = 1e30;
    for (int k = 0; k < 200; k++) {
        double t0 = sim_now_ns();
        for (int i = 1; i < SIM_IDLE_SPINS; i++) {
            if (i & 7) gr_cpu_relax();
            else sched_yield();
        }
        double t = sim_now_ns() - t0;
        if (t < best) best = t;
    }
    return best;
}

typedef struct sim_stream {
    _Alignas(64) unsigned char buf[SIM_STREAM_BYTES];
    _Alignas(64) _Atomic long turn;      /* odd: the writer's round done, the reader's go */
    double read_ns[SIM_STREAM_ROUNDS];
    long sink;
} sim_stream;

/* Puts the calling thread on CPU `cpu` (the two sides of a transfer must be two cores);
 * false where it cannot. */
static bool sim_pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/* The reader: times one pass over the buffer (a load per line) after each write. */
static void *sim_stream_reader(void *arg)
{
    sim_stream *s = arg;
    sim_pin(1);
    for (long r = 0; r < SIM_STREAM_ROUNDS; r++) {
        while (atomic_load_explicit(&s->turn, memory_order_acquire) != 2 * r + 1) {}
        double t0 = sim_now_ns();
        long sum = 0;
        for (int i = 0; i < SIM_STREAM_BYTES; i += 64) sum += ((volatile unsigned char *)s->buf)[i];
        s->read_ns[r] = sim_now_ns() - t0;
        s->sink += sum;
        atomic_store_explicit(&s->turn, 2 * r + 2, memory_order_release);
    }
    return NULL;
}

static int sim_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Ns per line of a buffer another thread has just written (it holds the lines
 * modified), read one load per line: the median pass, since a pass the OS interrupts
 * measures the interruption; or -1 without a thread. */
static double sim_stream_ns(void)
{
    static sim_stream s;
    pthread_t t;
    cpu_set_t was;
    pthread_getaffinity_np(pthread_self(), sizeof was, &was);
    if (!sim_pin(0) || pthread_create(&t, NULL, sim_stream_reader, &s) != 0) return -1;
    for (long r = 0; r < SIM_STREAM_ROUNDS; r++) {
        while (atomic_load_explicit(&s.turn, memory_order_acquire) != 2 * r) {}
        for (int i = 0; i < SIM_STREAM_BYTES; i += 64) s.buf[i] = (unsigned char)(r + i);
        atomic_store_explicit(&s.turn, 2 * r + 1, memory_order_release);
    }
    pthread_join(t, NULL);
    pthread_setaffinity_np(pthread_self(), sizeof was, &was);
    qsort(s.read_ns, SIM_STREAM_ROUNDS, sizeof *s.read_ns, sim_cmp_double);
    return s.read_ns[SIM_STREAM_ROUNDS / 2] / (SIM_STREAM_BYTES / 64);
}

typedef struct sim_handoff {
    pthread_mutex_t lock;
    _Atomic long held;            /* the round the holder has the lock for */
    _Atomic long asking;          /* the round whose lock call the waiter is about to make */
    _Atomic long done;            /* the last round the waiter got the lock in */
    double released;              /* when the holder let go, this round */
    double ns[SIM_WAKES];
} sim_handoff;

/* The waiter: asks for the lock the holder has, and times its release to its running. */
static void *sim_handoff_waiter(void *arg)
{
    sim_handoff *h = arg;
    for (long r = 1; r <= SIM_WAKES; r++) {
        while (atomic_load(&h->held) != r) {}
        atomic_store(&h->asking, r);
        pthread_mutex_lock(&h->lock);
        h->ns[r - 1] = sim_now_ns() - h->released;
        pthread_mutex_unlock(&h->lock);
        atomic_store(&h->done, r);
    }
    return NULL;
}

/* Median ns from a mutex's release to the thread that waits for it (asleep in the
 * kernel by then) running with it: a contended hand-off, which a lock convoy pays once
 * per waiter. The median, since a round the OS interrupts measures the interruption;
 * -1 without a thread. */
static double sim_handoff_ns(void)
{
    static sim_handoff h = {.lock = PTHREAD_MUTEX_INITIALIZER};
    pthread_t t;
    pthread_mutex_lock(&h.lock);
    if (pthread_create(&t, NULL, sim_handoff_waiter, &h) != 0) {
        pthread_mutex_unlock(&h.lock);
        return -1;
    }
    for (long r = 1; r <= SIM_WAKES; r++) {
        atomic_store(&h.held, r);
        while (atomic_load(&h.asking) != r) {}
        struct timespec nap = {0, 20000};           /* let it reach the kernel's sleep */
        nanosleep(&nap, NULL);
        h.released = sim_now_ns();
        pthread_mutex_unlock(&h.lock);
        while (atomic_load(&h.done) != r) {}
        pthread_mutex_lock(&h.lock);
    }
    pthread_mutex_unlock(&h.lock);
    pthread_join(t, NULL);
    qsort(h.ns, SIM_WAKES, sizeof *h.ns, sim_cmp_double);
    return h.ns[SIM_WAKES / 2];
}

#endif

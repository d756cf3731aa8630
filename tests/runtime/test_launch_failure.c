/* A launch that fails partway, and allocation failures anywhere in a run, unwind
 * cleanly: gr_launch, gr_wait and gr_graph_destroy end with GR_OK or a named error,
 * never a crash, a hang or a use of freed state.
 *
 * Allocation-failure injection, as Lua's and SQLite's test suites do it: the Nth
 * allocation after launch begins fails, for every N up to the number a whole run makes.
 * malloc, calloc, realloc, aligned_alloc and posix_memalign are interposed over glibc's
 * __libc_* entry points; a sanitizer build has an allocator of its own, where the
 * injection cannot be installed and the test says so (the launch-failure test through
 * the worker limit still runs there). */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INJECTION 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define INJECTION 0
#endif
#endif
#ifndef INJECTION
#define INJECTION 1
#endif

#if INJECTION
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static _Atomic long allocations;          /* since the count was reset */
static _Atomic long fail_at = -1;         /* the allocation that fails; -1: none */

static bool fails(void)
{
    long n = atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return n == atomic_load_explicit(&fail_at, memory_order_relaxed);
}

void *malloc(size_t n) { return fails() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return fails() ? NULL : __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return fails() ? NULL : __libc_realloc(p, n); }
void *aligned_alloc(size_t align, size_t n) { return fails() ? NULL : __libc_memalign(align, n); }
int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = fails() ? NULL : __libc_memalign(align, n);
    if (!p) return 12;                    /* ENOMEM */
    *out = p;
    return 0;
}
#endif

enum { PACKETS = 200 };

typedef struct app { _Atomic uint64_t sum; } app;

static void src(gr_ctx *c)
{
    for (uint32_t i = 1; i <= PACKETS; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void twice(gr_ctx *c)
{
    uint32_t x = *(uint32_t *)gr_input(c, NULL);
    *(uint32_t *)gr_output(c, 0) = 2 * x;
}

static void sink(gr_ctx *c)
{
    app *a = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) != GR_NOMORE) {
        atomic_fetch_add(&a->sum, *(uint32_t *)w.mem);
        gr_commit(c, 0, 1);
    }
}

static gr_graph *build(app *a)
{
    gr_graph *g = gr_graph_create();
    if (!g) return NULL;
    int q0 = gr_queue(g, &(gr_queue_desc){.name = "numbers", .packet_bytes = 4, .capacity = 4});
    int q1 = gr_queue(g, &(gr_queue_desc){.name = "doubled", .packet_bytes = 4, .capacity = 4});
    int s0 = gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = src});
    int s1 = gr_stage(g, &(gr_stage_desc){.name = "twice", .kind = GR_SHADER, .main = twice});
    int s2 = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = sink, .user = a});
    gr_bind(g, s0, GR_BIND_OUTPUT, q0);
    gr_bind(g, s1, GR_BIND_INPUT, q0);
    gr_bind(g, s1, GR_BIND_OUTPUT, q1);
    gr_bind(g, s2, GR_BIND_INPUT, q1);
    return g;
}

/* One launch, wait and destroy of the graph; the status the run ended with. */
static gr_status run_once(const char *sched, unsigned workers, app *a, char err[256])
{
    gr_graph *g = build(a);
    if (!g) {
        snprintf(err, 256, "gr_graph_create: out of memory");
        return GR_ERR_NOMEM;
    }
    int start[] = {0, 2};
    gr_launch_opts o = {.workers = workers, .scheduler = sched, .deadlock_seconds = 5};
    gr_status st = gr_launch(g, &o, start, 2);
    gr_status waited = gr_wait(g);
    if (st == GR_OK) st = waited;
    snprintf(err, 256, "%s", gr_error(g) ? gr_error(g) : "");
    gr_graph_destroy(g);
    return st;
}

#if INJECTION
static const uint64_t expected = (uint64_t)PACKETS * (PACKETS + 1);

/* Every allocation of a run at 3 workers fails once, in turn: each run ends with the
 * right sum or an error that says what failed. */
static void test_every_allocation_fails_once(void)
{
    static const char *const scheds[] = {"gramps", "task-stealing"};
    for (int k = 0; k < 2; k++) {
        app a = {0};
        char err[256];
        atomic_store(&fail_at, -1);
        atomic_store(&allocations, 0);
        gr_graph *g = build(&a);
        long building = atomic_load(&allocations);
        gr_graph_destroy(g);
        atomic_store(&allocations, 0);
        CHECK(run_once(scheds[k], 3, &a, err) == GR_OK && a.sum == expected);
        long total = atomic_load(&allocations);
        CHECK_MSG(total > building, "%ld allocations in a run", total);
        int failed = 0, wrong = 0;
        for (long n = 0; n < total + 8; n++) {
            a.sum = 0;
            atomic_store(&allocations, 0);
            atomic_store(&fail_at, n);
            gr_status st = run_once(scheds[k], 3, &a, err);
            atomic_store(&fail_at, -1);
            if (st != GR_OK) {
                failed++;
                if (!err[0]) { wrong++; fprintf(stderr, "  allocation %ld: error with no message\n", n); }
            } else if (a.sum != expected) {
                wrong++;
                fprintf(stderr, "  allocation %ld: GR_OK with sum %llu\n", n, (unsigned long long)a.sum);
            }
        }
        CHECK_MSG(wrong == 0, "%s: %d of %ld runs ended wrongly", scheds[k], wrong, total);
        printf("  %s: %ld allocations per run; %d runs failed with a message, the rest "
               "completed\n", scheds[k], total, failed);
    }
}
#endif

/* More workers than the limit: refused with the limit named, nothing started. */
static void test_worker_limit(void)
{
    app a = {0};
    char err[256];
    gr_status st = run_once("gramps", GR_MAX_WORKERS + 1, &a, err);
    CHECK(st == GR_OK || strstr(err, "workers") || strstr(err, "GR_MAX_WORKERS"));
}

int main(void)
{
#if INJECTION
    RUN(test_every_allocation_fails_once);
#else
    printf("  (sanitizer build: allocation-failure injection not installed)\n");
#endif
    RUN(test_worker_limit);
    return check_finish();
}

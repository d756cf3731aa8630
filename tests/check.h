/* Minimal test harness shared by every test program.
 *
 * A test program defines test functions and calls RUN(fn) for each from main, then
 * returns check_finish(). CHECK records a failure with file and line and carries on, so
 * one run reports every broken expectation. Each program prints one line
 * "RESULT <passed> <failed>" that tests/run_tests.sh adds up. */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 in ThreadSanitizer and AddressSanitizer builds (make SAN=thread|address), which run
 * 5-30x slower: a test may check fewer cases of a matrix there, never none, keeping the
 * runs that exercise several workers (what the sanitizers watch). */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CHECK_SANITIZED 1
#else
#define CHECK_SANITIZED 0
#endif

static int check_failures_in_test;
static int check_skipped_in_test __attribute__((unused));   /* a program may skip all its tests */
static int check_tests_passed;
static int check_tests_failed;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                      \
            check_failures_in_test++;                                            \
        }                                                                        \
    } while (0)

#define CHECK_MSG(cond, ...)                                                     \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "  %s:%d: CHECK failed: %s: ", __FILE__, __LINE__,   \
                    #cond);                                                      \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
            check_failures_in_test++;                                            \
        }                                                                        \
    } while (0)

/* Skips the rest of the running test, visibly ("skip <test>: why"): for tests whose
 * property does not hold by design in the configuration under test (e.g. capacity
 * bounds under a scheduler without backpressure). A skipped test counts as passed. */
#define SKIP(...)                                                                \
    do {                                                                         \
        printf("skip %s: ", __func__);                                           \
        printf(__VA_ARGS__);                                                     \
        putchar('\n');                                                           \
        check_skipped_in_test = 1;                                               \
        return;                                                                  \
    } while (0)

#define RUN(fn)                                                                  \
    do {                                                                         \
        check_failures_in_test = 0;                                              \
        check_skipped_in_test = 0;                                               \
        fn();                                                                    \
        if (check_skipped_in_test && !check_failures_in_test) {                  \
            check_tests_passed++;                                                \
        } else if (check_failures_in_test) {                                     \
            check_tests_failed++;                                                \
            printf("FAIL %s\n", #fn);                                            \
        } else {                                                                 \
            check_tests_passed++;                                                \
            printf("ok   %s\n", #fn);                                            \
        }                                                                        \
        fflush(stdout);                                                          \
    } while (0)

static inline int check_finish(void)
{
    printf("RESULT %d %d\n", check_tests_passed, check_tests_failed);
    return check_tests_failed ? 1 : 0;
}

#endif

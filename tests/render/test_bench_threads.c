/* The peer benchmarks' --threads LIST option (bench/thread_list.h): the lists it takes,
 * and the malformed ones it refuses with a message instead of measuring something else. */
#include "bench/thread_list.h"
#include "tests/check.h"

static void test_lists_taken(void)
{
    bench_threads t;
    CHECK(bench_threads_parse("test", "1,2,4,8,16", &t) == 0 && t.n == 5);
    CHECK(t.count[0] == 1 && t.count[4] == 16 && bench_threads_one(&t) == 0);
    CHECK(bench_threads_parse("test", "16,2,1", &t) == 0 && t.n == 3 && bench_threads_one(&t) == 2);
    CHECK(bench_threads_parse("test", "64", &t) == 0 && t.n == 1 && bench_threads_one(&t) == -1);
    CHECK(bench_threads_default.n == 2 && bench_threads_default.count[1] == 2);
}

static void test_malformed_refused(void)
{
    static const char *const bad[] = {"", "0", "65", "-1", "x", "1,", ",1", "1,,2", "2.5",
                                      "1;2", "99999999999999999999",
                                      "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"};
    printf("(expected messages on stderr follow)\n");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bench_threads t;
        CHECK_MSG(bench_threads_parse("test", bad[i], &t) == -1, "'%s' was taken", bad[i]);
    }
}

int main(void)
{
    RUN(test_lists_taken);
    RUN(test_malformed_refused);
    return check_finish();
}

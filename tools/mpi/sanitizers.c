/* sanitizers.c — Open MPI under the sanitizers (see sanitizers.h). */
#include "tools/mpi/sanitizers.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MP_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MP_ASAN 1
#endif

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MP_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define MP_TSAN 1
#endif

/* The sanitizer runtimes look these hooks up by name in the program's dynamic symbols:
 * they must stay visible when the objects are compiled -fvisibility=hidden (without it,
 * TSan saw none of the suppressions below and stopped at Open MPI's own lock order). */
#define MP_SANITIZER_HOOK __attribute__((visibility("default")))

#ifdef MP_TSAN
/* Open MPI's libraries and components are not built with TSan: their own locking and
 * progress threads are invisible to it, so its reports there are about code it cannot
 * see (e.g. a lock-order inversion inside mca_btl_tcp). This program's own threads and
 * locks (master.c) are still checked. */
MP_SANITIZER_HOOK const char *__tsan_default_suppressions(void);
MP_SANITIZER_HOOK const char *__tsan_default_suppressions(void)
{
#define MP_OPEN_MPI_CODE(kind)                                                            \
    kind ":mca_\n" kind ":libmpi.so\n" kind ":libopen-pal.so\n" kind ":libopen-rte.so\n"   \
    kind ":libpmix.so\n" kind ":libevent\n" kind ":libhwloc.so\n"
    return MP_OPEN_MPI_CODE("race") MP_OPEN_MPI_CODE("mutex") MP_OPEN_MPI_CODE("deadlock")
        MP_OPEN_MPI_CODE("thread") MP_OPEN_MPI_CODE("signal")
        /* each of these must name one library loaded at start (not dlopen'ed) */
        "called_from_lib:libmpi.so\ncalled_from_lib:libopen-pal.so\ncalled_from_lib:libopen-rte.so\n"
        "called_from_lib:libevent_core\n"
        "called_from_lib:libevent_pthreads\ncalled_from_lib:libhwloc.so\n";
#undef MP_OPEN_MPI_CODE
}
#endif

#ifdef MP_ASAN
#include <sanitizer/lsan_interface.h>

/* Exits with LSan's exit code when leaks are found. */
void mp_check_leaks_now(void) { __lsan_do_leak_check(); }

MP_SANITIZER_HOOK const char *__lsan_default_suppressions(void);
MP_SANITIZER_HOOK const char *__lsan_default_suppressions(void)
{
    return "leak:libmpi.so\nleak:libopen-pal.so\nleak:libopen-rte.so\nleak:libpmix.so\n"
           "leak:libhwloc.so\nleak:libevent\nleak:/openmpi/\n";
}

MP_SANITIZER_HOOK const char *__lsan_default_options(void);
MP_SANITIZER_HOOK const char *__lsan_default_options(void) { return "print_suppressions=0"; }

/* Open MPI is built without frame pointers: the fast unwinder loses its stacks (and so
 * the suppressions above their libraries' names). */
MP_SANITIZER_HOOK const char *__asan_default_options(void);
MP_SANITIZER_HOOK const char *__asan_default_options(void) { return "fast_unwind_on_malloc=0"; }
#else
void mp_check_leaks_now(void) {}
#endif

/* leak_check.c — the leak check before MPI_Finalize (see leak_check.h). */
#include "tools/mpi/leak_check.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MP_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MP_ASAN 1
#endif

#ifdef MP_ASAN
#include <sanitizer/lsan_interface.h>

/* Exits with LSan's exit code when leaks are found. */
void mp_check_leaks_now(void) { __lsan_do_leak_check(); }

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libmpi.so\nleak:libopen-pal.so\nleak:libopen-rte.so\nleak:libpmix.so\n"
           "leak:libhwloc.so\nleak:libevent\nleak:/openmpi/\n";
}

const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "print_suppressions=0"; }

/* Open MPI is built without frame pointers: the fast unwinder loses its stacks (and so
 * the suppressions above their libraries' names). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "fast_unwind_on_malloc=0"; }
#else
void mp_check_leaks_now(void) {}
#endif

/* crash_report.c — naming the stage that crashed (see crash_report.h). The handler is
 * async-signal-safe: it reads the thread's running stage (precomputed strings), copies
 * them into a buffer on its stack and write(2)s it; getenv is read at install time. */
#include "tools/common/crash_report.h"

#include "gramps/gramps.h"

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Under AddressSanitizer or ThreadSanitizer the sanitizer's own handler reports crashes,
 * and cr_install installs nothing. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
static const char *crash_program = "gramps";
static bool keep_core;                 /* GRAMPS_CORE=1: the signal's default action after */

typedef struct msg_buf { char text[1400]; size_t n; } msg_buf;

static void put(msg_buf *m, const char *s)
{
    while (*s && m->n < sizeof m->text - 1) m->text[m->n++] = *s++;
}

static const char *signal_text(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error: a misaligned access or memory past a mapped file's end)";
    case SIGFPE: return "SIGFPE (arithmetic exception, e.g. integer division by zero)";
    case SIGILL: return "SIGILL (illegal instruction, or a trap such as __builtin_trap)";
    }
    return "a fatal signal";
}

static void on_crash(int sig)
{
    msg_buf m = {.n = 0};
    const char *name, *origin;
    put(&m, crash_program);
    if (gr_running_stage(&name, &origin)) {
        put(&m, ": stage '");
        put(&m, name);
        put(&m, "' (");
        put(&m, origin);
        put(&m, ") crashed: ");
    } else {
        put(&m, ": crashed outside any stage's program: ");
    }
    put(&m, signal_text(sig));
    put(&m, keep_core ? "; GRAMPS_CORE=1: the signal's default action follows (a core dump where allowed)\n"
                      : "\n(exit status 1; GRAMPS_CORE=1 keeps the signal's core dump)\n");
    ssize_t w = write(STDERR_FILENO, m.text, m.n);
    (void)w;
    if (!keep_core) _exit(1);
    signal(sig, SIG_DFL);                 /* pending until we return, then the default */
    raise(sig);
}

/* An alternate stack for the main thread, so that overflowing its stack is reported. */
static void alternate_stack(void)
{
    static char stack[64 * 1024];
    stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
    sigaltstack(&ss, NULL);
}
#endif

void cr_install(const char *program)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    (void)program;
#else
    crash_program = program;
    const char *core = getenv("GRAMPS_CORE");
    keep_core = core && !strcmp(core, "1");
    alternate_stack();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) sigaction(fatal[i], &sa, NULL);
#endif
}

/* crash_report.h — a stage that crashes is named: SIGSEGV, SIGBUS, SIGFPE and SIGILL in
 * a program that runs graphs print, on the faulting thread, which stage its worker was
 * running (name, type, plugin file: gr_running_stage) and the signal, then exit with
 * status 1, without the shell's "Segmentation fault (core dumped)". With GRAMPS_CORE=1
 * in the environment the message is printed and the signal then takes its default
 * action (a core dump where the system keeps them).
 *
 * Not installed in AddressSanitizer and ThreadSanitizer builds, whose own handlers
 * report more (a stack trace). A stack overflow cannot run the handler on the
 * overflowed stack: the main thread has an alternate signal stack; a worker's fiber
 * does not, and such a crash ends as SIGSEGV unnamed. */
#ifndef TOOLS_COMMON_CRASH_REPORT_H
#define TOOLS_COMMON_CRASH_REPORT_H

/* Installs the handlers; `program` prefixes the message (kept, not copied). */
void cr_install(const char *program);

#endif

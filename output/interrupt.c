/* interrupt.c — see interrupt.h. The handler does only async-signal-safe things:
 * unlink, write and _exit. */
#include "output/interrupt.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TRACKED 8                          /* files staged at once: gramps-render's 4 */

static char tracked[TRACKED][PATH_MAX];
static volatile sig_atomic_t in_use[TRACKED];
static const char *program_name = "gramps";

int io_interrupt_track(const char *path)
{
    if (strlen(path) >= PATH_MAX) return -1;
    for (int i = 0; i < TRACKED; i++)
        if (!in_use[i]) {
            memcpy(tracked[i], path, strlen(path) + 1);
            in_use[i] = 1;                  /* set after the name is complete */
            return i;
        }
    return -1;
}

void io_interrupt_untrack(int slot)
{
    if (slot >= 0 && slot < TRACKED) in_use[slot] = 0;
}

static void say(const char *s) { ssize_t n = write(2, s, strlen(s)); (void)n; }

static void on_signal(int sig)
{
    for (int i = 0; i < TRACKED; i++)
        if (in_use[i]) unlink(tracked[i]);
    say(program_name);
    say(sig == SIGINT ? ": interrupted (SIGINT)" : sig == SIGTERM ? ": terminated (SIGTERM)"
                                                                 : ": hung up (SIGHUP)");
    say("; files not yet written were left as they were\n");
    _exit(128 + sig);
}

void io_interrupt_install(const char *program)
{
    program_name = program;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

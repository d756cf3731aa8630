/* interrupt.h — SIGINT, SIGTERM and SIGHUP in a program that writes result files: the
 * run stops at once, every staged temporary (safe_file.h) is removed, every old output
 * is kept, and the program exits 128 + the signal (130, 143, 129) with a message.
 * Outputs are committed with these signals blocked (io_commit_all), so a signal during
 * the renames takes effect after the last one: all the new files, or none. */
#ifndef OUTPUT_INTERRUPT_H
#define OUTPUT_INTERRUPT_H

/* Installs the handlers; `program` prefixes the message (kept, not copied). */
void io_interrupt_install(const char *program);

/* safe_file.c's registry of staged temporaries, which the handler removes: a slot for
 * `path` (copied; -1 when the registry is full, and then the handler cannot remove it),
 * and its release once the temporary is renamed or removed. */
int io_interrupt_track(const char *path);
void io_interrupt_untrack(int slot);

#endif

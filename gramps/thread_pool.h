/* thread_pool.h — threads that outlive their graph (thread_pool.c): gr_launch starts
 * each worker and the watchdog as a job on a parked thread, gr_wait joins the job. */
#ifndef GRAMPS_THREAD_POOL_H
#define GRAMPS_THREAD_POOL_H

#include <pthread.h>

typedef struct gr_thread gr_thread;

/* Runs job(arg) on a parked thread, or a new one when none is parked; pinned to `cpu`
 * (its affinity when made comes back after the job) unless cpu < 0. NULL when no
 * thread could be made. */
gr_thread *gr_thread_start(void *(*job)(void *), void *arg, int cpu);
/* Waits for the job to return; the thread then parks for the next one. */
void gr_thread_join(gr_thread *t);

#endif

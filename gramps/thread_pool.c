/* thread_pool.c — the process's parked threads, which run graphs' workers and watchdogs.
 *
 * A renderer builds and runs a graph per frame. Creating its threads each time (a clone,
 * a stack mapping and a join per thread, one after another on the launching thread) is
 * serial work that grows with the worker count, and the last worker starts that much
 * after the first (docs/performance.md). A thread whose job returned parks here
 * instead, and the next job wakes it (one futex call). Threads are made only when none
 * is parked, so the pool holds as many as the most jobs ever run at once;
 * gr_release_parked_threads ends them.
 *
 * A job's thread is the launcher's until gr_thread_join returns: only then does it go
 * back on the parked list, so no job can take a thread whose last job is not joined.
 * fork() ends the parked threads first, so a process that forks between runs does so
 * with no thread of ours (a child of a multi-threaded process may only call
 * async-signal-safe functions, and ThreadSanitizer refuses to start threads in one); a
 * child forked while a run goes on has none of its parent's threads and forgets them. */
#include "gramps/thread_pool.h"

#include "gramps/gramps.h"

#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>

struct gr_thread {
    pthread_t id;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    void *(*job)(void *);                 /* NULL while parked or done */
    void *arg;
    bool done, quit, pinned;
    cpu_set_t home;                       /* its affinity when made: restored after a pin */
    struct gr_thread *next_parked;
};

static struct {
    pthread_mutex_t lock;
    gr_thread *parked;
} pool = {PTHREAD_MUTEX_INITIALIZER, NULL};
static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;

static void free_thread(gr_thread *t)
{
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->cond);
    free(t);
}

/* In the child only the forking thread exists; the parked ones' records are freed
 * without their locks, which no thread holds there (a parked thread only waits). */
static void forget_parked_in_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    for (gr_thread *t = pool.parked, *next; t; t = next) {
        next = t->next_parked;
        free(t);
    }
    pool.parked = NULL;
}

static void add_fork_handler(void)
{
    pthread_atfork(gr_release_parked_threads, NULL, forget_parked_in_child);
}

static void finish_job(gr_thread *t)
{
    if (t->pinned) {
        pthread_setaffinity_np(t->id, sizeof t->home, &t->home);
        t->pinned = false;
    }
    pthread_mutex_lock(&t->lock);
    t->job = NULL;
    t->done = true;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

static void *thread_main(void *arg)
{
    gr_thread *t = arg;
    for (;;) {
        pthread_mutex_lock(&t->lock);
        while (!t->job && !t->quit) pthread_cond_wait(&t->cond, &t->lock);
        void *(*job)(void *) = t->job;
        void *job_arg = t->arg;
        bool quit = t->quit;
        pthread_mutex_unlock(&t->lock);
        if (quit) return NULL;
        job(job_arg);
        finish_job(t);
    }
}

static gr_thread *make_thread(void)
{
    pthread_once(&fork_handler_once, add_fork_handler);
    gr_thread *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    if (pthread_create(&t->id, NULL, thread_main, t) != 0) {
        free_thread(t);
        return NULL;
    }
    pthread_getaffinity_np(t->id, sizeof t->home, &t->home);
    return t;
}

/* Before the job is handed over, so it runs pinned from its first instruction. */
static void pin(gr_thread *t, unsigned cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % CPU_SETSIZE, &set);       /* past the set's size: wrap around */
    t->pinned = true;
    pthread_setaffinity_np(t->id, sizeof set, &set);
}

gr_thread *gr_thread_start(void *(*job)(void *), void *arg, int cpu)
{
    pthread_mutex_lock(&pool.lock);
    gr_thread *t = pool.parked;
    if (t) pool.parked = t->next_parked;
    pthread_mutex_unlock(&pool.lock);
    if (!t && !(t = make_thread())) return NULL;
    if (cpu >= 0) pin(t, (unsigned)cpu);
    pthread_mutex_lock(&t->lock);
    t->job = job;
    t->arg = arg;
    t->done = false;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
    return t;
}

void gr_thread_join(gr_thread *t)
{
    pthread_mutex_lock(&t->lock);
    while (!t->done) pthread_cond_wait(&t->cond, &t->lock);
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_lock(&pool.lock);
    t->next_parked = pool.parked;
    pool.parked = t;
    pthread_mutex_unlock(&pool.lock);
}

void gr_release_parked_threads(void)
{
    pthread_mutex_lock(&pool.lock);
    gr_thread *t = pool.parked;
    pool.parked = NULL;
    pthread_mutex_unlock(&pool.lock);
    while (t) {
        gr_thread *next = t->next_parked;
        pthread_mutex_lock(&t->lock);
        t->quit = true;
        pthread_cond_signal(&t->cond);
        pthread_mutex_unlock(&t->lock);
        pthread_join(t->id, NULL);
        free_thread(t);
        t = next;
    }
}

/* ---- gr_parallel ---------------------------------------------------------------------- */

typedef struct part_job {
    void (*part)(void *arg, unsigned i, unsigned n);
    void *arg;
    unsigned i, n;
    gr_thread *thread;                    /* NULL: the caller runs the part */
} part_job;

static void *run_part(void *p)
{
    part_job *j = p;
    j->part(j->arg, j->i, j->n);
    return NULL;
}

unsigned gr_parallel_parts(unsigned threads)
{
    unsigned n = gr_worker_count(threads);
    return n < GR_PARALLEL_MAX_PARTS ? n : GR_PARALLEL_MAX_PARTS;
}

void gr_parallel(unsigned n, void (*part)(void *arg, unsigned i, unsigned n), void *arg)
{
    if (n == 0) return;
    part_job *jobs = n > 1 ? calloc(n, sizeof *jobs) : NULL;
    for (unsigned i = 1; jobs && i < n; i++) {
        jobs[i] = (part_job){part, arg, i, n, NULL};
        jobs[i].thread = gr_thread_start(run_part, &jobs[i], -1);
    }
    part(arg, 0, n);
    for (unsigned i = 1; i < n; i++) {
        if (jobs && jobs[i].thread) gr_thread_join(jobs[i].thread);
        else part(arg, i, n);             /* no memory or no thread for it: on the caller */
    }
    free(jobs);
}

/* spin.h — a small test-and-test-and-set spin lock (internal).
 *
 * Guards subqueue rings and waiter lists: critical sections are a few loads and stores,
 * far shorter than a futex round trip. Acquire on lock pairs with release on unlock, so
 * everything written inside one critical section is visible in the next. After a few
 * hundred spins it yields the CPU so an oversubscribed machine still makes progress. */
#ifndef GRAMPS_SPIN_H
#define GRAMPS_SPIN_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct gr_spin { _Atomic(bool) held; } gr_spin;

static inline void gr_spin_init(gr_spin *l) { atomic_init(&l->held, false); }

static inline void gr_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline void gr_spin_lock(gr_spin *l)
{
    for (unsigned spins = 0;; spins++) {
        if (!atomic_exchange_explicit(&l->held, true, memory_order_acquire))
            return;
        while (atomic_load_explicit(&l->held, memory_order_relaxed)) {
            if (++spins > 256) { sched_yield(); spins = 0; }
            else gr_cpu_relax();
        }
    }
}

static inline void gr_spin_unlock(gr_spin *l)
{
    atomic_store_explicit(&l->held, false, memory_order_release);
}

#endif

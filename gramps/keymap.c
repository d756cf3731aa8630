/* keymap.c — the lock-free map from sparse subqueue keys to dense indices used by
 * dynamic queue sets (gramps/queue.c). Open addressing with linear probing over
 * 2 * max_keys slots (rounded up to a power of two); slots are never freed.
 *
 * Insert: claim an empty slot by CAS on its key, take the next dense index from `count`,
 * run the caller's init, then publish the index with a release store. Every reader
 * that finds the key loads the index with acquire, waiting while it is unpublished, so
 * it sees everything init wrote. */
#include "gramps/keymap.h"
#include "gramps/spin.h"

#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>

#define EMPTY_KEY UINT64_MAX
#define UNPUBLISHED UINT32_MAX
/* Index of a slot whose inserter found the map full after claiming it: the key stays
 * there for good (slots are never freed) and every lookup of it reports "full". */
#define DEAD (UINT32_MAX - 2)
#define MAX_KEYS (1u << 30)             /* 2 * max_keys slots must fit the 32-bit mask */

/* splitmix64 finaliser (Stafford's Mix13): every input bit affects every output bit,
 * so keys that differ only in high bits (tile x/y packed in a word) still spread. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int gr_keymap_init(gr_keymap *m, uint32_t max_keys)
{
    m->slots = NULL;
    if (max_keys > MAX_KEYS) return -1;
    uint64_t nslots = 16;
    while (nslots < 2ull * max_keys) nslots *= 2;
    m->slots = malloc(nslots * sizeof *m->slots);
    if (!m->slots) return -1;
    for (uint64_t i = 0; i < nslots; i++) {
        atomic_init(&m->slots[i].key, EMPTY_KEY);
        atomic_init(&m->slots[i].index, UNPUBLISHED);
    }
    m->mask = (uint32_t)(nslots - 1);
    m->max_keys = max_keys;
    atomic_init(&m->count, 0);
    return 0;
}

void gr_keymap_destroy(gr_keymap *m)
{
    free(m->slots);
    m->slots = NULL;
}

/* The inserting thread is between its key CAS and its index store (running init):
 * wait for it, spinning briefly (init is usually short) and then yielding, since the
 * inserter may have been descheduled. acquire pairs with the release store in
 * publish(). */
static uint32_t await_index(const gr_keymap_slot *s)
{
    uint32_t i;
    for (unsigned spins = 0;
         (i = atomic_load_explicit(&((gr_keymap_slot *)s)->index, memory_order_acquire))
         == UNPUBLISHED;
         spins++) {
        if (spins < 64) gr_cpu_relax();
        else sched_yield();
    }
    return i == DEAD ? GR_KEYMAP_FULL : i;
}

/* Takes the next dense index unless max_keys are taken. A CAS loop rather than a
 * fetch-add so `count` never overshoots and stays "the number of keys". release on
 * success: pairs with the acquire load in map_full(), so a thread that sees the map
 * full also sees the slot this thread claimed just before (see gr_keymap_get). */
static bool take_index(gr_keymap *m, uint32_t *out)
{
    uint32_t c = atomic_load_explicit(&m->count, memory_order_relaxed);
    do {
        if (c >= m->max_keys) return false;
    } while (!atomic_compare_exchange_weak_explicit(&m->count, &c, c + 1,
                                                    memory_order_release,
                                                    memory_order_relaxed));
    *out = c;
    return true;
}

/* acquire: pairs with take_index's release (every successful take is in the release
 * sequence that the final increment reads from). */
static bool map_full(const gr_keymap *m)
{
    return atomic_load_explicit(&((gr_keymap *)m)->count, memory_order_acquire)
           >= m->max_keys;
}

/* We own slot s (our CAS put key there): give it an index and publish it. */
static uint32_t publish(gr_keymap *m, gr_keymap_slot *s, uint64_t key,
                        void (*init)(void *, uint64_t, uint32_t), void *ctx)
{
    uint32_t idx;
    if (!take_index(m, &idx)) {
        atomic_store_explicit(&s->index, DEAD, memory_order_release);
        return GR_KEYMAP_FULL;
    }
    if (init) init(ctx, key, idx);
    /* release: pairs with the acquire loads in await_index and gr_keymap_find, so
     * whoever sees idx also sees what init wrote */
    atomic_store_explicit(&s->index, idx, memory_order_release);
    return idx;
}

uint32_t gr_keymap_get(gr_keymap *m, uint64_t key,
                       void (*init)(void *ctx, uint64_t key, uint32_t index), void *ctx)
{
    if (key == EMPTY_KEY) return GR_KEYMAP_BADKEY;
    uint32_t h = (uint32_t)mix64(key) & m->mask;
    for (uint32_t probe = 0; probe <= m->mask; probe++, h = (h + 1) & m->mask) {
        gr_keymap_slot *s = &m->slots[h];
        /* relaxed: the key is only compared; the index's acquire orders the rest */
        uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
        if (k == EMPTY_KEY && map_full(m)) {
            /* Full: an absent key can get no index, so do not burn a slot on it. Reload
             * the slot first: map_full() made every claim that took an index visible,
             * so a racing insert of this very key is seen here and waited for. */
            k = atomic_load_explicit(&s->key, memory_order_relaxed);
            if (k == EMPTY_KEY) return GR_KEYMAP_FULL;
        } else if (k == EMPTY_KEY) {
            /* relaxed CAS: claiming is all it does; on failure k is the winner's key */
            if (atomic_compare_exchange_strong_explicit(&s->key, &k, key,
                                                        memory_order_relaxed,
                                                        memory_order_relaxed))
                return publish(m, s, key, init, ctx);
        }
        if (k == key) return await_index(s);
        /* another key lives here: keep probing */
    }
    return GR_KEYMAP_FULL;
}

uint32_t gr_keymap_find(const gr_keymap *m, uint64_t key)
{
    if (key == EMPTY_KEY) return UINT32_MAX;
    uint32_t h = (uint32_t)mix64(key) & m->mask;
    for (uint32_t probe = 0; probe <= m->mask; probe++, h = (h + 1) & m->mask) {
        const gr_keymap_slot *s = &m->slots[h];
        uint64_t k = atomic_load_explicit(&((gr_keymap_slot *)s)->key, memory_order_relaxed);
        if (k == key) {
            /* wait-free: an insert still running init counts as not inserted yet.
             * acquire pairs with the release store in publish(). */
            uint32_t i = atomic_load_explicit(&((gr_keymap_slot *)s)->index,
                                              memory_order_acquire);
            return i == DEAD ? UINT32_MAX : i;
        }
        if (k == EMPTY_KEY) return UINT32_MAX;
    }
    return UINT32_MAX;
}

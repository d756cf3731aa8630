/* keymap.c — lock-free open-addressing map from sparse keys to dense indices. A slot is
 * claimed by CAS on its key, then a dense index is taken from `count` (bounded by a CAS
 * loop, so count never passes max_keys), the caller's init runs, and the index is
 * published with a release store that readers pair with an acquire load. */
#include "gramps/keymap.h"

#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>

#define EMPTY_KEY UINT64_MAX
#define UNPUBLISHED UINT32_MAX

static uint64_t mix64(uint64_t x)      /* splitmix64 finaliser */
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int gr_keymap_init(gr_keymap *m, uint32_t max_keys)
{
    uint64_t slots = 16;
    while (slots < 2ull * max_keys) slots *= 2;
    m->slots = malloc(slots * sizeof *m->slots);
    if (!m->slots) return -1;
    for (uint64_t i = 0; i < slots; i++) {
        atomic_init(&m->slots[i].key, EMPTY_KEY);
        atomic_init(&m->slots[i].index, UNPUBLISHED);
    }
    m->mask = (uint32_t)(slots - 1);
    m->max_keys = max_keys;
    atomic_init(&m->count, 0);
    return 0;
}

void gr_keymap_destroy(gr_keymap *m)
{
    free(m->slots);
    m->slots = NULL;
}

/* Waits for the inserting thread to publish (it is between its CAS and its store). */
static uint32_t await_index(gr_keymap_slot *s)
{
    uint32_t i;
    while ((i = atomic_load_explicit(&s->index, memory_order_acquire)) == UNPUBLISHED)
        sched_yield();
    return i;
}

static bool take_index(gr_keymap *m, uint32_t *out)
{
    uint32_t c = atomic_load_explicit(&m->count, memory_order_relaxed);
    do {
        if (c >= m->max_keys) return false;
    } while (!atomic_compare_exchange_weak_explicit(&m->count, &c, c + 1,
                                                    memory_order_relaxed, memory_order_relaxed));
    *out = c;
    return true;
}

uint32_t gr_keymap_get(gr_keymap *m, uint64_t key,
                       void (*init)(void *ctx, uint64_t key, uint32_t index), void *ctx)
{
    if (key == EMPTY_KEY) return GR_KEYMAP_BADKEY;
    uint32_t h = (uint32_t)mix64(key) & m->mask;
    for (uint32_t probe = 0; probe <= m->mask; probe++, h = (h + 1) & m->mask) {
        gr_keymap_slot *s = &m->slots[h];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == EMPTY_KEY) {
            if (!atomic_compare_exchange_strong_explicit(&s->key, &k, key,
                    memory_order_acq_rel, memory_order_acquire)) {
                if (k != key) continue;              /* another key took the slot */
                return await_index(s);
            }
            uint32_t idx;
            if (!take_index(m, &idx)) {
                atomic_store_explicit(&s->index, GR_KEYMAP_FULL, memory_order_release);
                return GR_KEYMAP_FULL;
            }
            if (init) init(ctx, key, idx);
            atomic_store_explicit(&s->index, idx, memory_order_release);
            return idx;
        }
        if (k == key) return await_index(s);
    }
    return GR_KEYMAP_FULL;
}

uint32_t gr_keymap_find(const gr_keymap *m, uint64_t key)
{
    if (key == EMPTY_KEY) return UINT32_MAX;
    uint32_t h = (uint32_t)mix64(key) & m->mask;
    for (uint32_t probe = 0; probe <= m->mask; probe++, h = (h + 1) & m->mask) {
        uint64_t k = atomic_load_explicit(&m->slots[h].key, memory_order_acquire);
        if (k == key) {
            uint32_t i = atomic_load_explicit(&m->slots[h].index, memory_order_acquire);
            return i == GR_KEYMAP_FULL ? UINT32_MAX : i;
        }
        if (k == EMPTY_KEY) return UINT32_MAX;
    }
    return UINT32_MAX;
}

/* Lock-free map from sparse 64-bit subqueue keys to dense indices (internal).
 *
 * Dynamic queue sets name subqueues by key; the runtime works with dense indices.
 * Mappings are never deleted, so the map is an open-addressing table whose slots are
 * claimed by CAS and never freed: lookups are wait-free reads, inserts are one CAS plus
 * one fetch-add. The capacity (maximum number of keys) is fixed at creation; the table
 * has twice that many slots so probe sequences stay short. */
#ifndef GRAMPS_KEYMAP_H
#define GRAMPS_KEYMAP_H

#include <stdatomic.h>
#include <stdint.h>

#define GR_KEYMAP_FULL UINT32_MAX       /* returned when max_keys keys exist already */
#define GR_KEYMAP_BADKEY (UINT32_MAX - 1) /* returned for the reserved key UINT64_MAX */

typedef struct gr_keymap_slot {
    _Atomic(uint64_t) key;              /* UINT64_MAX while empty */
    _Atomic(uint32_t) index;            /* UINT32_MAX until published */
} gr_keymap_slot;

typedef struct gr_keymap {
    gr_keymap_slot *slots;
    uint32_t mask;                      /* slot count - 1 (power of two) */
    uint32_t max_keys;
    _Atomic(uint32_t) count;            /* keys inserted; also the next dense index */
} gr_keymap;

int gr_keymap_init(gr_keymap *m, uint32_t max_keys);
void gr_keymap_destroy(gr_keymap *m);

/* Returns the dense index of key, inserting it if absent. The thread that inserts a
 * key calls init(ctx, key, index) before the index is published, so every other thread
 * that looks the key up sees whatever init set up. Indices are 0,1,2,... in insertion
 * order. Returns GR_KEYMAP_FULL or GR_KEYMAP_BADKEY on failure. */
uint32_t gr_keymap_get(gr_keymap *m, uint64_t key,
                       void (*init)(void *ctx, uint64_t key, uint32_t index), void *ctx);
/* Returns the index of key, or UINT32_MAX if it was never inserted. */
uint32_t gr_keymap_find(const gr_keymap *m, uint64_t key);

#endif

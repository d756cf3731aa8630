/* device_append.c — a queue filled by a device stage's pushes and read by another
 * device stage: the pushed elements' leading bytes (a ray) stay in device memory, made
 * there by the producer's kernel (accel/opencl.h, ac_append), and the host queue
 * carries the elements with a handle of their entry in place of those bytes. The
 * consumer's launch gathers them within the device (accel/opencl/gather.cl).
 *
 * Capacity as on the CPU: the memory is the queue's capacity in packets, cut into one
 * slot per packet. A launch claims free slots (held until its tasks have pushed what
 * they keep); a slot is taken while held or while any of its entries is pushed and not
 * yet read. A launch that finds no slot free, or more elements than its slots, appends
 * nothing more: the host makes the rest, so the device never holds more than the
 * capacity and no producer waits for a consumer. */
#include "compose/internal.h"

#include "accel/opencl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct cp_device_append {
    ac_buffer *entries;                /* capacity slots of per_slot entries of part_bytes */
    size_t part_bytes;
    uint32_t per_slot, capacity;
    pthread_mutex_t lock;              /* refs, used, peak */
    uint32_t *refs;                    /* per slot: launches holding it + entries pushed, unread */
    uint32_t used, peak;
};

cp_device_append *cp_device_append_new(const char *queue, const gr_queue_desc *desc,
                                       size_t part_bytes, char err[CP_ERR_MAX])
{
    char why[AC_ERR_MAX];
    ac_device *dev = ac_open(why);
    cp_device_append *q = dev ? calloc(1, sizeof *q) : NULL;
    const uint32_t capacity = desc->capacity ? desc->capacity : GR_DEFAULT_CAPACITY;
    if (q) q->refs = calloc(capacity, sizeof *q->refs);
    if (!q || !q->refs) {
        if (dev) snprintf(why, sizeof why, "out of memory");
        cp_fail(err, "queue '%s' appended on the device: %s", queue, why);
        if (q) free(q);
        return NULL;
    }
    q->capacity = capacity;
    q->per_slot = desc->elements;
    q->part_bytes = part_bytes;
    q->entries = ac_alloc(dev, (size_t)capacity * q->per_slot * part_bytes, why);
    if (!q->entries) {
        cp_fail(err, "queue '%s' appended on the device (%u packets of %u x %zu bytes): %s", queue,
                capacity, q->per_slot, part_bytes, why);
        cp_device_append_free(q);
        return NULL;
    }
    pthread_mutex_init(&q->lock, NULL);
    return q;
}

void cp_device_append_free(cp_device_append *q)
{
    if (!q) return;
    if (q->entries) {
        ac_buffer_free(q->entries);
        pthread_mutex_destroy(&q->lock);
    }
    free(q->refs);
    free(q);
}

size_t cp_device_append_part(const cp_device_append *q) { return q->part_bytes; }

const ac_buffer *cp_device_append_entries(const cp_device_append *q) { return q->entries; }

/* One reference less on slot s. Called with the lock held. */
static void unref(cp_device_append *q, uint32_t s)
{
    if (s < q->capacity && q->refs[s] && --q->refs[s] == 0) q->used--;
}

void cp_device_append_claim(cp_device_append *q, uint64_t entries, ac_append *a)
{
    *a = (ac_append){.per_slot = q->per_slot};
    uint64_t want = (entries + q->per_slot - 1) / q->per_slot;
    if (want > AC_APPEND_SLOTS) want = AC_APPEND_SLOTS;
    pthread_mutex_lock(&q->lock);
    for (uint32_t s = 0; s < q->capacity && a->nslots < want; s++) {
        if (q->refs[s]) continue;
        q->refs[s] = 1;
        a->slots[a->nslots++] = s;
        if (++q->used > q->peak) q->peak = q->used;
    }
    pthread_mutex_unlock(&q->lock);
    if (a->nslots) a->entries = q->entries;
}

void cp_device_append_drop(cp_device_append *q, ac_append *a)
{
    pthread_mutex_lock(&q->lock);
    for (uint32_t k = 0; k < a->nslots; k++) unref(q, a->slots[k]);
    pthread_mutex_unlock(&q->lock);
    a->nslots = 0;
    a->entries = NULL;
}

void cp_device_append_trim(cp_device_append *q, ac_append *a, uint32_t asked)
{
    const uint64_t limit = (uint64_t)a->nslots * q->per_slot;
    const uint32_t reached = (uint32_t)(((asked < limit ? asked : limit) + q->per_slot - 1) / q->per_slot);
    pthread_mutex_lock(&q->lock);
    for (uint32_t k = reached; k < a->nslots; k++) unref(q, a->slots[k]);
    pthread_mutex_unlock(&q->lock);
    a->nslots = reached;
    if (!reached) a->entries = NULL;
}

uint32_t cp_device_append_take(cp_device_append *q, const ac_append *a, uint32_t position)
{
    if (position == AC_NO_ENTRY || position / q->per_slot >= a->nslots) return AC_NO_ENTRY;
    const uint32_t s = a->slots[position / q->per_slot];
    pthread_mutex_lock(&q->lock);
    q->refs[s]++;                      /* held by a, so taken already */
    pthread_mutex_unlock(&q->lock);
    return s * q->per_slot + position % q->per_slot;
}

void cp_device_append_release(cp_device_append *q, uint32_t entry)
{
    pthread_mutex_lock(&q->lock);
    unref(q, entry / q->per_slot);
    pthread_mutex_unlock(&q->lock);
}

void cp_device_append_usage(cp_device_append *q, uint32_t *peak, uint32_t *capacity)
{
    pthread_mutex_lock(&q->lock);
    *peak = q->peak;
    *capacity = q->capacity;
    pthread_mutex_unlock(&q->lock);
}

void cp_device_handle_set(void *element, uint32_t entry)
{
    const uint32_t h[2] = {CP_DEVICE_HANDLE, entry};
    memcpy(element, h, sizeof h);
}

bool cp_device_handle_of(const void *element, uint32_t *entry)
{
    uint32_t h[2];
    memcpy(h, element, sizeof h);
    if (h[0] != CP_DEVICE_HANDLE) return false;
    *entry = h[1];
    return true;
}

/* device_queue.c — a queue between two stages placed on the OpenCL device, whose packets'
 * elements stay in device memory: the producer's in-place kernel leaves them in a slot
 * here instead of copying them back, and the consumer's launch copies them from the slot
 * within the device. The host queue still carries the packet (its header and count), so
 * the runtime schedules, counts and bounds it as any other; only its elements live on the
 * device, and the host copy of them is stale while the packet holds a slot.
 *
 * Capacity: one slot per packet of the queue's capacity, so the device memory is bounded
 * by what the CPU queue would hold. A packet that finds every slot taken goes back to the
 * host as before (its elements copied back): never more than `capacity` packets here. */
#include "compose/internal.h"

#include "accel/opencl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct cp_device_queue {
    ac_buffer *memory;                 /* capacity slots of slot_bytes */
    size_t slot_bytes;
    uint32_t capacity;
    pthread_mutex_t lock;              /* owner, used, peak */
    const void **owner;                /* per slot: the packet whose elements it holds */
    uint32_t used, peak;
};

cp_device_queue *cp_device_queue_new(const char *queue, const gr_queue_desc *desc,
                                     char err[CP_ERR_MAX])
{
    char why[AC_ERR_MAX];
    ac_device *dev = ac_open(why);
    cp_device_queue *q = dev ? calloc(1, sizeof *q) : NULL;
    const uint32_t capacity = desc->capacity ? desc->capacity : GR_DEFAULT_CAPACITY;
    if (q) q->owner = calloc(capacity, sizeof *q->owner);
    if (!q || !q->owner) {
        if (dev) snprintf(why, sizeof why, "out of memory");
        cp_fail(err, "queue '%s' on the device: %s", queue, why);
        if (q) free(q);
        return NULL;
    }
    q->capacity = capacity;
    q->slot_bytes = (size_t)desc->elements * desc->element_bytes;
    q->memory = ac_alloc(dev, q->slot_bytes * capacity, why);
    if (!q->memory) {
        cp_fail(err, "queue '%s' on the device (%u packets of %zu bytes): %s", queue, capacity,
                q->slot_bytes, why);
        cp_device_queue_free(q);
        return NULL;
    }
    pthread_mutex_init(&q->lock, NULL);
    return q;
}

void cp_device_queue_free(cp_device_queue *q)
{
    if (!q) return;
    if (q->memory) {
        ac_buffer_free(q->memory);
        pthread_mutex_destroy(&q->lock);
    }
    free(q->owner);
    free(q);
}

/* The slot holding packet's elements, or -1. Called with the lock held. */
static int64_t find(const cp_device_queue *q, const void *packet)
{
    for (uint32_t i = 0; i < q->capacity; i++)
        if (q->owner[i] == packet) return i;
    return -1;
}

static ac_place place_of(const cp_device_queue *q, int64_t slot)
{
    return (ac_place){.device = q->memory, .offset = (size_t)slot * q->slot_bytes};
}

bool cp_device_queue_holds(cp_device_queue *q, const void *packet, ac_place *where)
{
    pthread_mutex_lock(&q->lock);
    int64_t slot = find(q, packet);
    pthread_mutex_unlock(&q->lock);
    if (slot >= 0) *where = place_of(q, slot);
    return slot >= 0;
}

bool cp_device_queue_claim(cp_device_queue *q, const void *packet, ac_place *where)
{
    pthread_mutex_lock(&q->lock);
    int64_t slot = find(q, packet);              /* a task run again keeps its slot */
    if (slot < 0 && q->used < q->capacity) {
        slot = find(q, NULL);
        q->owner[slot] = packet;
        if (++q->used > q->peak) q->peak = q->used;
    }
    pthread_mutex_unlock(&q->lock);
    if (slot >= 0) *where = place_of(q, slot);
    return slot >= 0;
}

void cp_device_queue_release(cp_device_queue *q, const void *packet)
{
    pthread_mutex_lock(&q->lock);
    int64_t slot = find(q, packet);
    if (slot >= 0) {
        q->owner[slot] = NULL;
        q->used--;
    }
    pthread_mutex_unlock(&q->lock);
}

void cp_device_queue_usage(cp_device_queue *q, uint32_t *peak, uint32_t *capacity)
{
    pthread_mutex_lock(&q->lock);
    *peak = q->peak;
    *capacity = q->capacity;
    pthread_mutex_unlock(&q->lock);
}

/* bufpool.c — the packet-stealing buffer manager (Sanchez et al. 2011 §III-B) behind
 * every queue's packets: one gr_bufpool per packet size, created at launch
 * (gramps/launch.c) and used through gr_pkt_alloc/gr_pkt_free (gramps/queue.c).
 *
 * Each worker owns a partition: a LIFO free list threaded through the first word of
 * each free packet, and a run of packets never handed out (`fresh`), under its own spin
 * lock. Preallocated packets start in the runs, so launching touches none of them: each
 * is first written by the worker that takes it. Only stealing touches another worker's
 * lock, so in the steady state every lock stays in its owner's cache. An empty
 * partition steals half of a victim's packets, nearest worker first; when a whole round
 * finds nothing (possible only with cycles in the graph) it mallocs a chunk, the
 * deadlock safeguard counted in `mallocs`. Every block ever allocated is recorded in
 * `chunks`, so packets are never freed one by one: destroy frees the blocks. */
#include "gramps/bufpool.h"
#include "gramps/spin.h"

#include <stdlib.h>
#include <string.h>

#define PACKET_ALIGN 64
#define SAFEGUARD_BYTES (256u * 1024)  /* size of one safeguard chunk... */
#define SAFEGUARD_MAX_PACKETS 64       /* ...capped at this many packets */

/* One worker's free packets. Alignment pads it to a cache line, so two workers'
 * partitions never share one (false sharing between owners). */
struct gr_buf_part {
    _Alignas(64) gr_spin lock;
    void *head;                   /* most recently freed packet (cache-hot) */
    char *fresh, *fresh_end;      /* packets never handed out, taken from the front */
    /* Number of packets on the list and in the fresh run. Written under the lock; read
     * without it only as a hint (relaxed), to skip empty victims without their locks. */
    _Atomic(size_t) n;
};

/* A run of packets linked through their first words; last is NULL if unknown. */
typedef struct pkt_list { void *first, *last; size_t n; } pkt_list;

static inline void *next_of(void *pkt) { return *(void **)pkt; }
static inline void set_next(void *pkt, void *next) { *(void **)pkt = next; }

static size_t count_of(gr_buf_part *part)
{
    return atomic_load_explicit(&part->n, memory_order_relaxed);
}

static void set_count(gr_buf_part *part, size_t n)   /* caller holds part->lock */
{
    atomic_store_explicit(&part->n, n, memory_order_relaxed);
}

/* ---- chunks ---------------------------------------------------------------------- */

static void chunks_lock(gr_bufpool *p)
{
    while (atomic_exchange_explicit(&p->chunks_lock, 1, memory_order_acquire))
        gr_cpu_relax();
}

static void chunks_unlock(gr_bufpool *p)
{
    atomic_store_explicit(&p->chunks_lock, 0, memory_order_release);
}

/* Records a block in `chunks` so destroy frees it. false (block not recorded) on ENOMEM. */
static bool record_chunk(gr_bufpool *p, void *chunk)
{
    chunks_lock(p);
    bool ok = true;
    if (p->nchunks == p->chunks_cap) {
        size_t ncap = p->chunks_cap ? p->chunks_cap * 2 : 16;
        void **c = realloc(p->chunks, ncap * sizeof *c);
        if (c) {
            p->chunks = c;
            p->chunks_cap = ncap;
        } else {
            ok = false;
        }
    }
    if (ok) p->chunks[p->nchunks++] = chunk;
    chunks_unlock(p);
    return ok;
}

/* Allocates n packets in one 64-byte aligned block, linked into a list, without
 * taking any partition lock. */
static bool new_chunk(gr_bufpool *p, size_t n, pkt_list *out)
{
    char *chunk = aligned_alloc(PACKET_ALIGN, n * p->packet_bytes);
    if (!chunk) return false;
    if (!record_chunk(p, chunk)) {
        free(chunk);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char *pkt = chunk + i * p->packet_bytes;
        set_next(pkt, i + 1 < n ? pkt + p->packet_bytes : NULL);
    }
    *out = (pkt_list){ chunk, chunk + (n - 1) * p->packet_bytes, n };
    atomic_fetch_add_explicit(&p->packets_total, n, memory_order_relaxed);
    return true;
}

/* Puts a list on top of a partition. Finding an unknown tail walks the list; that only
 * happens when packets reached the partition between its owner's empty check and now. */
static void splice(gr_buf_part *part, pkt_list l)
{
    gr_spin_lock(&part->lock);
    if (part->head) {
        if (!l.last)
            for (l.last = l.first; next_of(l.last); l.last = next_of(l.last)) {}
        set_next(l.last, part->head);
    }
    part->head = l.first;
    set_count(part, count_of(part) + l.n);
    gr_spin_unlock(&part->lock);
}

/* ---- init / destroy -------------------------------------------------------------- */

int gr_buf_init(gr_bufpool *p, size_t packet_bytes, unsigned nworkers, size_t prealloc)
{
    memset(p, 0, sizeof *p);
    if (nworkers == 0) return -1;
    if (packet_bytes == 0) packet_bytes = 1;   /* a free packet holds its list link */
    p->packet_bytes = (packet_bytes + PACKET_ALIGN - 1) & ~(size_t)(PACKET_ALIGN - 1);
    p->nworkers = nworkers;
    p->parts = aligned_alloc(64, nworkers * sizeof *p->parts);
    if (!p->parts) return -1;
    memset(p->parts, 0, nworkers * sizeof *p->parts);
    if (prealloc < nworkers) prealloc = nworkers;
    char *chunk = aligned_alloc(PACKET_ALIGN, prealloc * p->packet_bytes);
    if (!chunk || !record_chunk(p, chunk)) {
        free(chunk);
        gr_buf_destroy(p);         /* the caller does not destroy a pool that failed */
        return -1;
    }
    atomic_store_explicit(&p->packets_total, prealloc, memory_order_relaxed);
    for (unsigned w = 0; w < nworkers; w++) {
        gr_spin_init(&p->parts[w].lock);
        /* evenly: the first prealloc % nworkers partitions get one extra packet */
        size_t n = prealloc / nworkers + (w < prealloc % nworkers);
        p->parts[w].fresh = chunk;
        p->parts[w].fresh_end = chunk += n * p->packet_bytes;
        set_count(&p->parts[w], n);
    }
    return 0;
}

void gr_buf_destroy(gr_bufpool *p)
{
    for (size_t i = 0; i < p->nchunks; i++) free(p->chunks[i]);
    free(p->chunks);
    free(p->parts);
    p->chunks = NULL;
    p->nchunks = p->chunks_cap = 0;
    p->parts = NULL;
}

/* ---- stealing -------------------------------------------------------------------- */

/* Takes the colder half (rounded up) of victim's packets: its fresh run's end first
 * (never touched), then the end of its LIFO list, so the victim keeps the packets still
 * warm in its cache. The thief's partition is empty, so it takes over the run as is. */
static bool steal_half(gr_bufpool *p, gr_buf_part *victim, gr_buf_part *thief, pkt_list *out)
{
    if (count_of(victim) == 0) return false;         /* hint: skip without locking */
    gr_spin_lock(&victim->lock);
    size_t n = count_of(victim), take = (n + 1) / 2;
    if (take == 0) {
        gr_spin_unlock(&victim->lock);
        return false;
    }
    size_t in_run = (size_t)(victim->fresh_end - victim->fresh) / p->packet_bytes;
    size_t from_run = take < in_run ? take : in_run, from_list = take - from_run;
    char *run = victim->fresh_end - from_run * p->packet_bytes;
    victim->fresh_end = run;
    size_t keep = n - in_run - from_list;            /* of the list */
    *out = (pkt_list){NULL, NULL, from_list};
    if (from_list && keep == 0) {
        out->first = victim->head;
        victim->head = NULL;
    } else if (from_list) {
        void *cut = victim->head;                    /* last packet the victim keeps */
        for (size_t i = 1; i < keep; i++) cut = next_of(cut);
        out->first = next_of(cut);
        set_next(cut, NULL);
    }
    set_count(victim, n - take);
    gr_spin_unlock(&victim->lock);
    gr_spin_lock(&thief->lock);
    thief->fresh = run;
    thief->fresh_end = run + from_run * p->packet_bytes;
    set_count(thief, count_of(thief) + from_run);
    gr_spin_unlock(&thief->lock);
    return true;
}

/* Victim order for `worker`: +1, -1, +2, -2, ... (mod nworkers), nearest first, so a
 * steal most likely stays within the cores that share a cache with the thief. */
static unsigned victim_at(const gr_bufpool *p, unsigned worker, unsigned d)
{
    unsigned off = d % 2 ? (d + 1) / 2 : p->nworkers - d / 2;
    return (worker + off) % p->nworkers;
}

/* Worker's partition was empty: one round of stealing, then the malloc safeguard. */
static bool refill(gr_bufpool *p, unsigned worker)
{
    gr_buf_part *part = &p->parts[worker];
    pkt_list l;
    for (unsigned d = 1; d < p->nworkers; d++) {
        if (steal_half(p, &p->parts[victim_at(p, worker, d)], part, &l)) {
            if (l.n) splice(part, l);
            atomic_fetch_add_explicit(&p->steals, 1, memory_order_relaxed);
            return true;
        }
    }
    size_t n = SAFEGUARD_BYTES / p->packet_bytes;
    if (n > SAFEGUARD_MAX_PACKETS) n = SAFEGUARD_MAX_PACKETS;
    if (n == 0) n = 1;
    if (!new_chunk(p, n, &l)) return false;
    splice(part, l);
    atomic_fetch_add_explicit(&p->mallocs, 1, memory_order_relaxed);
    return true;
}

/* ---- alloc / free ---------------------------------------------------------------- */

static void *pop_packet(gr_buf_part *part, size_t packet_bytes)
{
    gr_spin_lock(&part->lock);
    void *pkt = part->head;
    if (pkt) {
        part->head = next_of(pkt);
    } else if (part->fresh < part->fresh_end) {
        pkt = part->fresh;
        part->fresh += packet_bytes;
    }
    if (pkt) set_count(part, count_of(part) - 1);
    gr_spin_unlock(&part->lock);
    return pkt;
}

void *gr_buf_alloc(gr_bufpool *p, unsigned worker)
{
    gr_buf_part *part = &p->parts[worker];
    for (;;) {
        void *pkt = pop_packet(part, p->packet_bytes);
        if (pkt) return pkt;
        /* Loops only if a thief emptied the refilled partition in between. */
        if (!refill(p, worker)) return NULL;
    }
}

void gr_buf_free(gr_bufpool *p, unsigned worker, void *packet)
{
    gr_buf_part *part = &p->parts[worker];
    gr_spin_lock(&part->lock);
    set_next(packet, part->head);
    part->head = packet;
    set_count(part, count_of(part) + 1);
    gr_spin_unlock(&part->lock);
}

/* bufpool.c — the packet-stealing buffer manager (Sanchez et al. 2011 §III-B). Each
 * worker owns a LIFO free list of packets (the first word of a free packet links it);
 * an empty partition steals half of another's, nearest worker first; after one fruitless
 * round a chunk is malloc'd (the cycle safeguard, counted in `mallocs`). */
#include "gramps/bufpool.h"
#include "gramps/spin.h"

#include <stdlib.h>
#include <string.h>

#define SAFEGUARD_PACKETS 64

struct gr_buf_part {
    _Alignas(64) gr_spin lock;
    void *head;
    size_t n;
};

static bool add_chunk(gr_bufpool *p, void *chunk)
{
    while (atomic_exchange_explicit(&p->chunks_lock, 1, memory_order_acquire)) gr_cpu_relax();
    bool ok = true;
    if (p->nchunks == p->chunks_cap) {
        size_t ncap = p->chunks_cap ? p->chunks_cap * 2 : 16;
        void **c = realloc(p->chunks, ncap * sizeof *c);
        if (c) { p->chunks = c; p->chunks_cap = ncap; } else ok = false;
    }
    if (ok) p->chunks[p->nchunks++] = chunk;
    atomic_store_explicit(&p->chunks_lock, 0, memory_order_release);
    return ok;
}

/* Allocates n packets in one block and threads them onto partition `part`. */
static bool carve(gr_bufpool *p, gr_buf_part *part, size_t n)
{
    char *chunk = aligned_alloc(64, n * p->packet_bytes);
    if (!chunk || !add_chunk(p, chunk)) { free(chunk); return false; }
    for (size_t i = 0; i < n; i++) {
        void *pkt = chunk + i * p->packet_bytes;
        *(void **)pkt = part->head;
        part->head = pkt;
    }
    part->n += n;
    atomic_fetch_add_explicit(&p->packets_total, n, memory_order_relaxed);
    return true;
}

int gr_buf_init(gr_bufpool *p, size_t packet_bytes, unsigned nworkers, size_t prealloc)
{
    memset(p, 0, sizeof *p);
    p->packet_bytes = (packet_bytes + 63) & ~(size_t)63;
    p->nworkers = nworkers;
    p->parts = aligned_alloc(64, nworkers * sizeof *p->parts);
    if (!p->parts) return -1;
    memset(p->parts, 0, nworkers * sizeof *p->parts);
    size_t each = (prealloc + nworkers - 1) / nworkers;
    if (each == 0) each = 1;
    for (unsigned w = 0; w < nworkers; w++) {
        gr_spin_init(&p->parts[w].lock);
        if (!carve(p, &p->parts[w], each)) return -1;
    }
    return 0;
}

void gr_buf_destroy(gr_bufpool *p)
{
    for (size_t i = 0; i < p->nchunks; i++) free(p->chunks[i]);
    free(p->chunks);
    free(p->parts);
    p->chunks = NULL;
    p->parts = NULL;
}

/* Moves half of victim's packets (at least one) to part; both locks are taken one at a
 * time, never together, so there is no lock order to get wrong. */
static bool steal_half(gr_bufpool *p, gr_buf_part *part, gr_buf_part *victim)
{
    gr_spin_lock(&victim->lock);
    size_t take = (victim->n + 1) / 2;
    void *first = victim->head, *last = NULL;
    for (size_t i = 0; i < take; i++) { last = victim->head; victim->head = *(void **)last; }
    victim->n -= take;
    gr_spin_unlock(&victim->lock);
    if (!take) return false;
    gr_spin_lock(&part->lock);
    *(void **)last = part->head;
    part->head = first;
    part->n += take;
    gr_spin_unlock(&part->lock);
    atomic_fetch_add_explicit(&p->steals, 1, memory_order_relaxed);
    return true;
}

static bool refill(gr_bufpool *p, unsigned worker)
{
    gr_buf_part *part = &p->parts[worker];
    for (unsigned d = 1; d < p->nworkers; d++) {
        unsigned v = (worker + (d % 2 ? (d + 1) / 2 : p->nworkers - d / 2)) % p->nworkers;
        if (steal_half(p, part, &p->parts[v])) return true;
    }
    gr_spin_lock(&part->lock);
    bool ok = carve(p, part, SAFEGUARD_PACKETS);
    gr_spin_unlock(&part->lock);
    if (ok) atomic_fetch_add_explicit(&p->mallocs, 1, memory_order_relaxed);
    return ok;
}

void *gr_buf_alloc(gr_bufpool *p, unsigned worker)
{
    gr_buf_part *part = &p->parts[worker];
    for (;;) {
        gr_spin_lock(&part->lock);
        void *pkt = part->head;
        if (pkt) { part->head = *(void **)pkt; part->n--; }
        gr_spin_unlock(&part->lock);
        if (pkt) return pkt;
        if (!refill(p, worker)) return NULL;
    }
}

void gr_buf_free(gr_bufpool *p, unsigned worker, void *packet)
{
    gr_buf_part *part = &p->parts[worker];
    gr_spin_lock(&part->lock);
    *(void **)packet = part->head;
    part->head = packet;
    part->n++;
    gr_spin_unlock(&part->lock);
}

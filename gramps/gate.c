/* gate.c — a queue set consumed by a Shader stage (thesis §3.4.2, §3.5.3): the stage's
 * tasks run in parallel across subqueues, but at most one packet per subqueue is in
 * flight, and a subqueue's packets run in the order they arrived.
 *
 * Such a set is not physical: like every Shader input its packets live in tasks. A gate
 * per subqueue lets a packet through as a task when no task of its subqueue runs, and
 * otherwise holds it, in arrival order, until the running task ends. Held packets stay
 * charged to the queue (capacity, footprint and the consumer's pending work count them
 * as they count tasks), so termination cannot see the stage idle while a gate holds any.
 * The set's capacity bounds the packets of all its subqueues together here: there are
 * no per-subqueue rings to fill. Subqueues are found as the producers name them: a
 * static set's index, a dynamic set's key (mapped to a dense index on first use). */
#include "gramps/internal.h"

#include <stdlib.h>

typedef struct gr_gate {
    gr_spin lock;
    bool busy;                        /* a task of this subqueue is queued or running */
    gr_pkt *head, *tail;              /* held packets, linked through gr_pkt.next */
} gr_gate;

static uint32_t gate_count(const gr_queue_rt *q)
{
    return q->d.dynamic_keys ? q->d.max_keys : q->d.subqueues;
}

bool gr_gates_create(gr_queue_rt *q)
{
    if (!q->d.dynamic_keys) q->nsubs = q->d.subqueues;   /* for the statistics */
    q->gates = calloc(gate_count(q), sizeof *q->gates);
    if (!q->gates) return false;
    for (uint32_t i = 0; i < gate_count(q); i++) gr_spin_init(&q->gates[i].lock);
    return !q->d.dynamic_keys || gr_keymap_init(&q->keys, q->d.max_keys) == 0;
}

void gr_gates_destroy(gr_queue_rt *q)
{
    free(q->gates);
    q->gates = NULL;
}

static void no_init(void *ctx, uint64_t key, uint32_t index) { (void)ctx; (void)key; (void)index; }

uint32_t gr_gate_index(gr_worker *w, gr_queue_rt *q, uint64_t key)
{
    uint32_t i = q->d.dynamic_keys ? gr_keymap_get(&q->keys, key, no_init, NULL)
                                   : key < q->d.subqueues ? (uint32_t)key : GR_KEYMAP_BADKEY;
    if (i < gate_count(q)) return i;
    if (!q->d.dynamic_keys)
        gr_set_error(w->g, GR_ERR_INVALID, "queue set '%s': subqueue %llu does not exist (%u "
                     "subqueues)", q->name, (unsigned long long)key, q->d.subqueues);
    else
        gr_set_error(w->g, GR_ERR_INVALID, "queue set '%s': %s (key %llu)", q->name,
                     i == GR_KEYMAP_FULL ? "more keys than max_keys" : "reserved key",
                     (unsigned long long)key);
    atomic_store(&w->g->abort, true);
    gr_wake_sleepers(w->g);
    return UINT32_MAX;
}

/* The gate of a key; NULL (the run fails) for a key the set has no subqueue for. */
static gr_gate *gate_of(gr_worker *w, gr_queue_rt *q, uint64_t key)
{
    uint32_t i = gr_gate_index(w, q, key);
    return i == UINT32_MAX ? NULL : &q->gates[i];
}

/* A charged packet arrives for the Shader: a task now, or held behind its subqueue's.
 * It has a key: producers into a set must give one (gr_reserve_out_key, or a Shader's
 * key given or inherited), which they check before it gets here. */
void gr_gate_enqueue(gr_worker *w, gr_queue_rt *q, gr_pkt *p)
{
    gr_stage_rt *consumer = w->g->stages[q->consumer];
    gr_gate *gate = gate_of(w, q, p->key);
    if (!gate) return;
    gr_spin_lock(&gate->lock);
    bool run = !gate->busy;
    if (run) gate->busy = true;
    else {
        p->next = NULL;
        if (gate->tail) gate->tail->next = p; else gate->head = p;
        gate->tail = p;
    }
    gr_spin_unlock(&gate->lock);
    if (run) gr_push_task(w, consumer, p);
}

/* The task of key's subqueue ended: its next packet, if one is held, becomes a task. */
void gr_gate_task_done(gr_worker *w, gr_queue_rt *q, uint64_t key)
{
    gr_gate *gate = gate_of(w, q, key);
    if (!gate) return;
    gr_spin_lock(&gate->lock);
    gr_pkt *next = gate->head;
    if (next) {
        gate->head = next->next;
        if (!gate->head) gate->tail = NULL;
    } else {
        gate->busy = false;
    }
    gr_spin_unlock(&gate->lock);
    if (next) gr_push_task(w, w->g->stages[q->consumer], next);
}

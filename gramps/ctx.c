/* ctx.c — intrinsics every stage kind may call: its user data, configuration,
 * buffers, identity, printing, assertions, and failing the run. */
#include "gramps/internal.h"

#include <stdarg.h>

void gr_fail(gr_ctx *c, gr_status st, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gr_set_error(c->g, st, "%s", msg);
    atomic_store(&c->g->abort, true);
    gr_wake_sleepers(c->g);
    if (c->inst) gr_inst_abandon(c);     /* a Thread instance never resumes */
}

void *gr_user(const gr_ctx *c) { return c->stage->d.user; }

static void raise_to(_Atomic(uint32_t) *max, uint32_t v)
{
    uint32_t cur = atomic_load_explicit(max, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak_explicit(max, &cur, v, memory_order_relaxed,
                                                             memory_order_relaxed)) {}
}

void gr_device_wait(gr_ctx *c, bool waiting)
{
    gr_alive(c->w);
    atomic_store_explicit(&c->w->device_wait, waiting, memory_order_relaxed);
}

void gr_device_work_add(gr_ctx *c, const gr_device_work *w)
{
    gr_stage_rt *s = c->stage;
    atomic_fetch_add_explicit(&s->dev_launches, w->launches, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->dev_kernel_ns, w->kernel_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->dev_bytes_to, w->bytes_to_device, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->dev_bytes_from, w->bytes_from_device, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->dev_slot_relaunches, w->relaunches_from_slot,
                              memory_order_relaxed);
    raise_to(&s->dev_queue_peak, w->queue_peak);
    raise_to(&s->dev_queue_capacity, w->queue_capacity);
}

const void *gr_config(const gr_ctx *c, size_t *bytes)
{
    if (bytes) *bytes = c->stage->d.config_bytes;
    return c->stage->config;
}

void *gr_buf(const gr_ctx *c, int slot, size_t *bytes)
{
    if (slot < 0 || slot >= c->stage->nbuffers) {
        gr_fail((gr_ctx *)c, GR_ERR_INVALID, "stage '%s': no buffer %d (it has %d)",
                c->stage->name, slot, c->stage->nbuffers);
        if (bytes) *bytes = 0;
        return NULL;
    }
    gr_buffer_rt *b = &c->g->buffers[c->stage->buffers[slot]];
    if (bytes) *bytes = b->bytes;
    return b->data;
}

unsigned gr_worker_id(const gr_ctx *c) { return c->w->id; }

void gr_state_bytes(gr_ctx *c, size_t bytes)
{
    if (!c->inst) return;
    c->inst->state_bytes = bytes;
    if (bytes && !c->inst->home_chosen) gr_choose_home(c->w, c->inst);
    if (bytes) atomic_store_explicit(&c->inst->stage->keeps_state, true, memory_order_relaxed);
}
void gr_state_touched(gr_ctx *c, size_t bytes)
{
    if (c->inst && c->g->sim) gr_sim_touched(c->w, c->inst, bytes);
}

void gr_work_units(gr_ctx *c, uint64_t units)
{
    if (c->g->sim) gr_sim_declared_work(c->stage, units);
}

int gr_batch_index(const gr_ctx *c) { return c->inst ? -1 : (int)c->w->batch_pos - 1; }
unsigned gr_num_workers(const gr_ctx *c) { return c->g->nworkers; }
uint32_t gr_instance(const gr_ctx *c) { return c->inst ? c->inst->number : 0; }

void gr_assert_at(gr_ctx *c, bool ok, const char *what, const char *file, int line)
{
    if (ok) return;
    gr_fail(c, GR_ERR_ASSERT, "stage '%s': assertion failed: %s (%s:%d)", c->stage->name,
            what, file, line);
}

/* Consumers index elements by the count: one beyond the packet would read (or write)
 * past it. Only d.elements are guaranteed to fit, so that is the bound. */
bool gr_check_count(gr_ctx *c, const gr_queue_rt *q, const void *packet)
{
    uint32_t n = gr_count(packet);
    if (n <= q->d.elements) return true;
    gr_fail(c, GR_ERR_INVALID, "stage '%s' committed a Collection packet with count %u to "
            "queue '%s', whose packets hold at most %u elements", c->stage->name, n,
            q->name, q->d.elements);
    return false;
}

/* device.c — a Shader stage placed on the OpenCL device: its kernel built before the
 * run, and the program the runtime runs for each of its tasks, which launches the kernel
 * over the task's input packet and hands the results to the type's emit hook. Where a
 * stage goes (`device = cpu|opencl|auto`) is decided in instance.c. */
#include "compose/internal.h"

#include "accel/opencl.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(CP_DEVICE_BATCH <= AC_MAX_SPANS, "a batch's packets fit one launch's spans");
_Static_assert(CP_KERNEL_BUFFERS == AC_MAX_BUFFERS, "a stage's buffers are a launch's");
_Static_assert(CP_KERNEL_APPENDS <= AC_MAX_APPENDS, "a stage's appends fit a launch");

/* One worker's batch: the results of one launch over every packet's elements, and
 * where each packet's are. */
typedef struct device_batch {
    unsigned char *results;
    uint32_t first[CP_DEVICE_BATCH];
    uint32_t n;
    ac_append held[CP_KERNEL_APPENDS];     /* the slots its launch appended into */
    uint32_t *index;                       /* its elements' appended entries (a gather) */
} device_batch;

struct cp_device_stage {
    const cp_kernel *kernel;
    ac_kernel *compiled;
    void *state;                       /* the type's state, for buffers and emit */
    size_t header_bytes, element_bytes;
    size_t result_bytes;               /* per element, this instance's (cp_kernel.results_of) */
    uint32_t max_elements;
    const ac_buffer *buffers[CP_KERNEL_BUFFERS];
    int nbuffers;
    char stage[GR_NAME_MAX_CP];
    char why[AC_ERR_MAX];              /* why bind refused the device */
    cp_device_queue *in_queue, *out_queue;   /* device_queue.c; NULL: the host */
    cp_device_append *appends[CP_KERNEL_APPENDS];   /* device_append.c; NULL: the host */
    cp_device_append *gather;                /* where its input's appended elements are */
    device_batch *batches[GR_MAX_WORKERS];   /* each worker's, made on its first batch */
    ac_append *current[GR_MAX_WORKERS];      /* the slots of the launch whose results the
                                                worker's running task emits */
};

int cp_placement_parse(const char *v, cp_placement *out)
{
    if (!strcmp(v, "cpu")) *out = CP_PLACE_CPU;
    else if (!strcmp(v, "opencl")) *out = CP_PLACE_OPENCL;
    else if (!strcmp(v, "auto")) *out = CP_PLACE_AUTO;
    else return -1;
    return 0;
}

cp_device_stage *cp_device_stage_new(const char *stage, const cp_stage_type *t,
                                     const cp_kernel *k, const gr_queue_desc *input,
                                     bool *no_device, char err[CP_ERR_MAX])
{
    char why[AC_ERR_MAX];
    *no_device = false;
    if (!input || input->kind != GR_COLLECTION) {
        cp_fail(err, "stage '%s' (type %s): a device stage needs a Collection input queue",
                stage, t->name);
        return NULL;
    }
    if ((size_t)input->elements * k->result_bytes > CP_KERNEL_RESULTS_MAX) {
        cp_fail(err, "stage '%s' (type %s): %u elements a packet give %zu result bytes, more "
                "than a device launch returns (%d)", stage, t->name, input->elements,
                (size_t)input->elements * k->result_bytes, CP_KERNEL_RESULTS_MAX);
        return NULL;
    }
    ac_device *dev = ac_open(why);
    if (!dev) {
        *no_device = true;
        cp_fail(err, "%s", why);
        return NULL;
    }
    ac_kernel *compiled = ac_kernel_get(dev, k->source, k->file, k->name, why);
    if (!compiled) {
        cp_fail(err, "stage '%s' (type %s): %s", stage, t->name, why);
        return NULL;
    }
    cp_device_stage *d = calloc(1, sizeof *d);
    if (!d) {
        cp_fail(err, "out of memory");
        return NULL;
    }
    *d = (cp_device_stage){.kernel = k, .compiled = compiled, .header_bytes = input->header_bytes,
                           .element_bytes = input->element_bytes, .max_elements = input->elements};
    snprintf(d->stage, sizeof d->stage, "%s", stage);
    return d;
}

const char *cp_device_stage_bind(cp_device_stage *d, void *state)
{
    d->state = state;
    const char *why = d->kernel->unsupported ? d->kernel->unsupported(state) : NULL;
    if (why) return why;
    d->result_bytes = d->kernel->results_of ? d->kernel->results_of(state) : d->kernel->result_bytes;
    if (d->result_bytes > d->kernel->result_bytes) return "its kernel's results are larger than it declares";
    if (d->kernel->spill_bytes && (d->kernel->spill_bytes >= d->result_bytes || !d->kernel->spills))
        return "its kernel's result spills are larger than its results, or have no test";
    d->nbuffers = d->kernel->buffers(state, d->buffers);
    if (d->nbuffers < 0 || d->nbuffers > CP_KERNEL_BUFFERS) return "its kernel's buffers are missing";
    /* The frame's device data is there now: what a batch's launch will add must fit too. */
    const size_t elements = (size_t)CP_DEVICE_BATCH * d->max_elements;
    if (ac_launch_room(d->compiled, elements, d->element_bytes, d->result_bytes, d->kernel->nappends,
                       d->why)) return d->why;
    return NULL;
}

/* Gives back the slots a launch held for its tasks' appends. */
static void drop_held(cp_device_stage *d, ac_append held[CP_KERNEL_APPENDS])
{
    for (int i = 0; i < CP_KERNEL_APPENDS; i++)
        if (d->appends[i] && held[i].nslots) cp_device_append_drop(d->appends[i], &held[i]);
}

void cp_device_stage_free(cp_device_stage *d)
{
    if (!d) return;
    for (unsigned w = 0; w < GR_MAX_WORKERS; w++) {
        if (!d->batches[w]) continue;
        drop_held(d, d->batches[w]->held);
        free(d->batches[w]->results);
        free(d->batches[w]->index);
        free(d->batches[w]);
    }
    free(d);
}

bool cp_device_stage_resident_ok(const cp_device_stage *d)
{
    return d->kernel->inplace && (d->kernel->resident_emit || !d->kernel->emit);
}

void cp_device_stage_link(cp_device_stage *d, cp_device_queue *in, cp_device_queue *out)
{
    if (in) d->in_queue = in;
    if (out) d->out_queue = out;
}

void cp_device_stage_link_append(cp_device_stage *d, int append, cp_device_append *out)
{
    d->appends[append] = out;
}

void cp_device_stage_link_gather(cp_device_stage *d, cp_device_append *in) { d->gather = in; }

/* The appended entries of a host packet's n elements into index (AC_NO_ENTRY for an
 * element the host made whole); how many there are. */
static uint32_t appended_of(const cp_device_stage *d, const void *host, uint32_t n, uint32_t *index)
{
    uint32_t found = 0;
    for (uint32_t i = 0; i < n; i++) {
        const void *e = (const char *)host + (size_t)i * d->element_bytes;
        if (cp_device_handle_of(e, &index[i])) found++;
        else index[i] = AC_NO_ENTRY;
    }
    return found;
}

/* What one launch reads and holds besides its spans: the slots its appends go to, and
 * the entries of its appended input elements (index, one per element). */
typedef struct launch_extra {
    ac_append *held;
    uint32_t *index;
    bool gathers;
    uint32_t from_slot;              /* its packets launched again from their output slot */
} launch_extra;

/* A packet launched again (its task went back after its launch) whose first launch
 * left its elements in a slot of the output's device queue: read from there and written
 * back there, with nothing gathered, since the entries its host packet names were given
 * back after that launch (release_entries). */
static bool relaunched_from_slot(const cp_device_stage *d, void *packet, uint32_t n, uint32_t *index,
                                 ac_span *s)
{
    if (!d->out_queue || !d->kernel->inplace || !cp_device_queue_holds(d->out_queue, packet, &s->to))
        return false;
    s->from = s->to;
    for (uint32_t i = 0; i < n; i++) index[i] = AC_NO_ENTRY;
    return true;
}

/* A packet's elements in a launch: from its slot in the input's device queue or from
 * the host packet (with the leading bytes of appended elements gathered on the device:
 * their entries into index); an in-place kernel's back to a slot of the output's
 * device queue or (none, or every slot taken) to the host packet. */
static ac_span span_of(cp_device_stage *d, void *packet, uint32_t n, uint32_t *index, launch_extra *x)
{
    void *host = (char *)packet + d->header_bytes;
    ac_span s = {.from = {.host = host}, .to = {.host = host}, .n = n};
    uint32_t appended = d->gather ? appended_of(d, host, n, index) : 0;
    if (appended && relaunched_from_slot(d, packet, n, index, &s)) {
        x->from_slot++;
        return s;
    }
    if (appended) {
        x->gathers = true;
        s.rest_only = appended == n;
    } else if (d->in_queue) {
        cp_device_queue_holds(d->in_queue, packet, &s.from);
    }
    if (d->out_queue && d->kernel->inplace && !cp_device_queue_claim(d->out_queue, packet, &s.to))
        s.to = (ac_place){.host = host};
    return s;
}

/* Entries the launch has read: an in-place kernel's elements are whole now, in their
 * host packets or in their output slots, so the entries are free at once (a task run
 * again reads the host's elements, or its slot: relaunched_from_slot). */
static void release_entries(cp_device_stage *d, const uint32_t *index, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (index[i] != AC_NO_ENTRY) cp_device_append_release(d->gather, index[i]);
}

/* A task's appended input elements, read: a kernel that is not in place leaves the
 * handles in its packet until the task runs (it may go back and be launched again). */
static void release_packet(cp_device_stage *d, void *packet)
{
    uint32_t n = gr_count(packet), entry;
    const char *host = (const char *)packet + d->header_bytes;
    for (uint32_t i = 0; i < n; i++)
        if (cp_device_handle_of(host + (size_t)i * d->element_bytes, &entry))
            cp_device_append_release(d->gather, entry);
}

/* The slots a launch over `elements` input elements may append into, claimed: as many
 * as its elements could fill (given back after the launch where the kernel did not
 * reach them: trim_appends). */
static void claim_appends(cp_device_stage *d, uint32_t elements, ac_launch *l,
                          ac_append held[CP_KERNEL_APPENDS])
{
    l->nappends = d->kernel->nappends;
    for (int i = 0; i < d->kernel->nappends; i++) {
        const cp_kernel_append *ka = &d->kernel->appends[i];
        held[i] = (ac_append){0};
        if (d->appends[i])
            cp_device_append_claim(d->appends[i], (uint64_t)elements * (ka->most ? ka->most(d->state) : 1),
                                   &held[i]);
        l->appends[i] = held[i];
    }
}

static void trim_appends(cp_device_stage *d, ac_append held[CP_KERNEL_APPENDS],
                         const uint32_t appended[AC_MAX_APPENDS])
{
    for (int i = 0; i < d->kernel->nappends; i++)
        if (d->appends[i] && held[i].nslots) cp_device_append_trim(d->appends[i], &held[i], appended[i]);
}

/* The device queues the stage fills: their most packets at once and their capacity,
 * summed over its in-place output's and its appends'. */
static void queue_usage(cp_device_stage *d, gr_device_work *work)
{
    uint32_t peak = 0, capacity = 0;
    if (d->out_queue) cp_device_queue_usage(d->out_queue, &peak, &capacity);
    work->queue_peak = peak;
    work->queue_capacity = capacity;
    for (int i = 0; i < CP_KERNEL_APPENDS; i++) {
        if (!d->appends[i]) continue;
        cp_device_append_usage(d->appends[i], &peak, &capacity);
        work->queue_peak += peak;
        work->queue_capacity += capacity;
    }
}

/* The spills of the launch's results from the first element whose result asks for its
 * spill to the last one that does (cp_kernel.spills). 0, or -1 with a message. */
static int read_spills(cp_device_stage *d, unsigned worker, const ac_launch *l, uint32_t n,
                       gr_device_work *work, char err[AC_ERR_MAX])
{
    if (!l->spill_bytes) return 0;
    uint32_t first = n, last = 0;
    const unsigned char *r = l->results;
    for (uint32_t i = 0; i < n; i++) {
        if (!d->kernel->spills(r + (size_t)i * l->result_bytes)) continue;
        if (first == n) first = i;
        last = i;
    }
    if (first == n) return 0;
    return ac_read_spill(d->compiled, worker, l, first, last - first + 1, work, err);
}

/* One launch over the spans (the packets' elements), results into `results`; false
 * (the run failed, naming the stage) on a device error. */
static bool launch(gr_ctx *c, cp_device_stage *d, ac_launch *l, const launch_extra *x, void *results)
{
    uint32_t n = 0;
    for (int i = 0; i < l->nspans; i++) n += l->spans[i].n;
    l->element_bytes = d->element_bytes;
    l->inplace = d->kernel->inplace;
    l->results = d->result_bytes ? results : NULL;
    l->result_bytes = d->result_bytes;
    l->spill_bytes = d->result_bytes ? d->kernel->spill_bytes : 0;
    l->nbuffers = d->nbuffers;
    memcpy(l->buffers, d->buffers, sizeof l->buffers);
    uint32_t appended[AC_MAX_APPENDS] = {0};
    claim_appends(d, n, l, x->held);
    l->appended = appended;
    if (x->gathers) {
        l->gather_entries = cp_device_append_entries(d->gather);
        l->gather_bytes = cp_device_append_part(d->gather);
        l->gather_index = x->index;
    }
    gr_device_work work = {.relaunches_from_slot = x->from_slot};
    char err[AC_ERR_MAX];
    gr_device_wait(c, true);
    const bool ran = !ac_run(d->compiled, gr_worker_id(c), l, &work, err) &&
                     !read_spills(d, gr_worker_id(c), l, n, &work, err);
    gr_device_wait(c, false);
    if (!ran) {
        gr_fail(c, GR_ERR_INVALID, "stage '%s': %s", d->stage, err);
        return false;
    }
    trim_appends(d, x->held, appended);
    if (x->gathers && d->kernel->inplace) release_entries(d, x->index, n);
    queue_usage(d, &work);
    gr_device_work_add(c, &work);
    return true;
}

static bool count_fits(gr_ctx *c, const cp_device_stage *d, uint32_t n)
{
    if (n <= d->max_elements) return true;
    gr_fail(c, GR_ERR_INVALID, "stage '%s': a packet of %u elements (at most %u)", d->stage, n,
            d->max_elements);
    return false;
}

static device_batch *batch_of(gr_ctx *c, cp_device_stage *d)
{
    unsigned w = gr_worker_id(c);
    if (d->batches[w]) return d->batches[w];
    device_batch *b = calloc(1, sizeof *b);
    size_t elements = (size_t)CP_DEVICE_BATCH * d->max_elements;
    if (b) b->results = malloc(elements * d->kernel->result_bytes + 1);
    if (b) b->index = malloc((elements + 1) * sizeof *b->index);
    if (!b || !b->results || !b->index) {
        if (b) free(b->results);
        free(b);
        gr_fail(c, GR_ERR_NOMEM, "stage '%s': out of memory for a batch of packets", d->stage);
        return NULL;
    }
    return d->batches[w] = b;
}

/* The runtime's batch hook: one launch over the elements of every packet; an in-place
 * kernel's elements go back to their packets (or stay on the device). The slots the
 * worker's previous batch appended into are given back (its tasks have run, or went
 * back to be launched again). */
void cp_device_stage_batch(gr_ctx *c, void *const packets[], uint32_t n)
{
    cp_device_stage *d = gr_user(c);
    device_batch *b = batch_of(c, d);
    if (!b) return;
    drop_held(d, b->held);
    b->n = 0;
    ac_launch l = {.nspans = 0};
    launch_extra x = {.held = b->held, .index = b->index};
    uint32_t total = 0;
    for (uint32_t k = 0; k < n && k < AC_MAX_SPANS; k++) {
        uint32_t m = gr_count(packets[k]);
        if (!count_fits(c, d, m)) return;
        l.spans[l.nspans++] = span_of(d, packets[k], m, b->index + total, &x);
        b->first[k] = total;
        total += m;
    }
    if (!launch(c, d, &l, &x, b->results)) return;
    b->n = (uint32_t)l.nspans;
}

/* The task's emit, with the slots its launch appended into. */
static void emit(gr_ctx *c, cp_device_stage *d, ac_append *held, void *packet,
                 const unsigned char *results, uint32_t n)
{
    const unsigned w = gr_worker_id(c);
    d->current[w] = held;
    if (d->kernel->emit) d->kernel->emit(c, d->state, packet, results, n);
    d->current[w] = NULL;
}

/* A task not launched in a batch: a launch of its own (its gather index in the
 * worker's batch record, whose launch has read its own already). */
static void run_alone(gr_ctx *c, cp_device_stage *d, void *packet, uint32_t n)
{
    _Alignas(16) unsigned char results[CP_KERNEL_RESULTS_MAX];
    device_batch *b = batch_of(c, d);
    ac_append held[CP_KERNEL_APPENDS];
    launch_extra x = {.held = held, .index = b ? b->index : NULL};
    ac_launch l = {.nspans = 1};
    if (!b || !count_fits(c, d, n)) return;
    l.spans[0] = span_of(d, packet, n, x.index, &x);
    if (!launch(c, d, &l, &x, results)) return;
    if (d->in_queue) cp_device_queue_release(d->in_queue, packet);
    if (d->gather && !d->kernel->inplace) release_packet(d, packet);
    emit(c, d, held, packet, results, n);
    drop_held(d, held);
}

/* A task: its results from its batch's launch, or (not batched) a launch of its own;
 * then the type's emit. Its input's slot on the device is free once it has run, and
 * its batch's append slots once the batch's last task has. */
void cp_device_stage_main(gr_ctx *c)
{
    cp_device_stage *d = gr_user(c);
    void *packet = gr_input(c, NULL);
    uint32_t n = gr_count(packet);
    int k = gr_batch_index(c);
    device_batch *b = d->batches[gr_worker_id(c)];
    if (k < 0 || !b || (uint32_t)k >= b->n) {
        run_alone(c, d, packet, n);
        return;
    }
    if (d->in_queue) cp_device_queue_release(d->in_queue, packet);
    if (d->gather && !d->kernel->inplace) release_packet(d, packet);
    emit(c, d, b->held, packet, b->results + (size_t)b->first[k] * d->result_bytes, n);
    if ((uint32_t)k + 1 == b->n) drop_held(d, b->held);
}

static uint32_t set_pushes(gr_ctx *c, int output, gr_set_push *pushes)
{
    cp_device_stage *d = gr_user(c);
    return d->kernel->set_pushes(d->state, gr_input(c, NULL), output, pushes);
}

gr_set_pushes_fn cp_device_stage_set_pushes(const cp_device_stage *d)
{
    return d->kernel->set_pushes ? set_pushes : NULL;
}

bool cp_device_appended(gr_ctx *c, int append, uint32_t position, void *element)
{
    cp_device_stage *d = gr_user(c);
    ac_append *held = append >= 0 && append < CP_KERNEL_APPENDS ? d->current[gr_worker_id(c)] : NULL;
    if (!held || !d->appends[append]) return false;
    uint32_t entry = cp_device_append_take(d->appends[append], &held[append], position);
    if (entry == AC_NO_ENTRY) return false;
    cp_device_handle_set(element, entry);
    return true;
}

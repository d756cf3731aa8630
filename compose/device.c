/* device.c — a Shader stage placed on the OpenCL device: its kernel built before the
 * run, and the program the runtime runs for each of its tasks, which launches the kernel
 * over the task's input packet and hands the results to the type's emit hook. Where a
 * stage goes (`device = cpu|opencl|auto`) is decided in instance.c. */
#include "compose/internal.h"

#include "accel/opencl.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(CP_DEVICE_BATCH <= AC_MAX_SPANS, "a batch's packets fit one launch's spans");

/* One worker's batch: the results of one launch over every packet's elements, and
 * where each packet's are. */
typedef struct device_batch {
    unsigned char *results;
    uint32_t first[CP_DEVICE_BATCH];
    uint32_t n;
} device_batch;

struct cp_device_stage {
    const cp_kernel *kernel;
    ac_kernel *compiled;
    void *state;                       /* the type's state, for buffers and emit */
    size_t header_bytes, element_bytes;
    uint32_t max_elements;
    const ac_buffer *buffers[CP_KERNEL_BUFFERS];
    int nbuffers;
    char stage[GR_NAME_MAX_CP];
    char why[AC_ERR_MAX];              /* why bind refused the device */
    cp_device_queue *in_queue, *out_queue;   /* device_queue.c; NULL: the host */
    device_batch *batches[GR_MAX_WORKERS];   /* each worker's, made on its first batch */
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
    d->nbuffers = d->kernel->buffers(state, d->buffers);
    if (d->nbuffers < 0 || d->nbuffers > CP_KERNEL_BUFFERS) return "its kernel's buffers are missing";
    /* The frame's device data is there now: what a batch's launch will add must fit too. */
    const size_t elements = (size_t)CP_DEVICE_BATCH * d->max_elements;
    if (ac_launch_room(d->compiled, elements * d->element_bytes, elements * d->kernel->result_bytes,
                       d->why)) return d->why;
    return NULL;
}

void cp_device_stage_free(cp_device_stage *d)
{
    if (!d) return;
    for (unsigned w = 0; w < GR_MAX_WORKERS; w++) {
        if (!d->batches[w]) continue;
        free(d->batches[w]->results);
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

/* A packet's elements in a launch: from its slot in the input's device queue or from
 * the host packet; an in-place kernel's back to a slot of the output's device queue or
 * (none, or every slot taken) to the host packet. */
static ac_span span_of(cp_device_stage *d, void *packet, uint32_t n)
{
    void *host = (char *)packet + d->header_bytes;
    ac_span s = {.from = {.host = host}, .to = {.host = host}, .n = n};
    if (d->in_queue) cp_device_queue_holds(d->in_queue, packet, &s.from);
    if (d->out_queue && d->kernel->inplace && !cp_device_queue_claim(d->out_queue, packet, &s.to))
        s.to = (ac_place){.host = host};
    return s;
}

/* One launch over the spans (the packets' elements), results into `results`; false
 * (the run failed, naming the stage) on a device error. */
static bool launch(gr_ctx *c, cp_device_stage *d, ac_launch *l, void *results)
{
    l->element_bytes = d->element_bytes;
    l->inplace = d->kernel->inplace;
    l->results = d->kernel->result_bytes ? results : NULL;
    l->result_bytes = d->kernel->result_bytes;
    l->nbuffers = d->nbuffers;
    memcpy(l->buffers, d->buffers, sizeof l->buffers);
    gr_device_work work = {0};
    char err[AC_ERR_MAX];
    if (ac_run(d->compiled, gr_worker_id(c), l, &work, err)) {
        gr_fail(c, GR_ERR_INVALID, "stage '%s': %s", d->stage, err);
        return false;
    }
    if (d->out_queue) cp_device_queue_usage(d->out_queue, &work.queue_peak, &work.queue_capacity);
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
    if (!b || !b->results) {
        free(b);
        gr_fail(c, GR_ERR_NOMEM, "stage '%s': out of memory for a batch of packets", d->stage);
        return NULL;
    }
    return d->batches[w] = b;
}

/* The runtime's batch hook: one launch over the elements of every packet; an in-place
 * kernel's elements go back to their packets (or stay on the device). */
void cp_device_stage_batch(gr_ctx *c, void *const packets[], uint32_t n)
{
    cp_device_stage *d = gr_user(c);
    device_batch *b = batch_of(c, d);
    if (!b) return;
    b->n = 0;
    ac_launch l = {.nspans = 0};
    uint32_t total = 0;
    for (uint32_t k = 0; k < n && k < AC_MAX_SPANS; k++) {
        uint32_t m = gr_count(packets[k]);
        if (!count_fits(c, d, m)) return;
        l.spans[l.nspans++] = span_of(d, packets[k], m);
        b->first[k] = total;
        total += m;
    }
    if (!launch(c, d, &l, b->results)) return;
    b->n = (uint32_t)l.nspans;
}

/* A task: its results from its batch's launch, or (not batched) a launch of its own;
 * then the type's emit. Its input's slot on the device is free once it has run. */
void cp_device_stage_main(gr_ctx *c)
{
    cp_device_stage *d = gr_user(c);
    void *packet = gr_input(c, NULL);
    uint32_t n = gr_count(packet);
    int k = gr_batch_index(c);
    const device_batch *b = d->batches[gr_worker_id(c)];
    const unsigned char *results;
    _Alignas(16) unsigned char own[CP_KERNEL_RESULTS_MAX];
    if (k >= 0 && b && (uint32_t)k < b->n) {
        results = b->results + (size_t)b->first[k] * d->kernel->result_bytes;
    } else {
        ac_launch l = {.nspans = 1};
        if (!count_fits(c, d, n)) return;
        l.spans[0] = span_of(d, packet, n);
        if (!launch(c, d, &l, own)) return;
        results = own;
    }
    if (d->in_queue) cp_device_queue_release(d->in_queue, packet);
    if (d->kernel->emit) d->kernel->emit(c, d->state, packet, results, n);
}

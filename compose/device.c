/* device.c — a Shader stage placed on the OpenCL device: its kernel built before the
 * run, and the program the runtime runs for each of its tasks, which launches the kernel
 * over the task's input packet and hands the results to the type's emit hook. Where a
 * stage goes (`device = cpu|opencl|auto`) is decided in instance.c. */
#include "compose/internal.h"

#include "accel/opencl.h"

#include <stdlib.h>
#include <string.h>

/* One worker's batch: the packets' elements side by side (one launch over all of them)
 * and their results, and where each packet's are. */
typedef struct device_batch {
    unsigned char *elements, *results;
    uint32_t first[CP_DEVICE_BATCH], count[CP_DEVICE_BATCH];
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
    return NULL;
}

void cp_device_stage_free(cp_device_stage *d)
{
    if (!d) return;
    for (unsigned w = 0; w < GR_MAX_WORKERS; w++) {
        if (!d->batches[w]) continue;
        free(d->batches[w]->elements);
        free(d->batches[w]->results);
        free(d->batches[w]);
    }
    free(d);
}

/* n elements at `elements` through the kernel, results into `results`; false (the run
 * failed, naming the stage) on a device error. */
static bool launch(gr_ctx *c, cp_device_stage *d, void *elements, uint32_t n, void *results)
{
    ac_launch l = {.elements = elements, .element_bytes = d->element_bytes, .n = n,
                   .inplace = d->kernel->inplace,
                   .results = d->kernel->result_bytes ? results : NULL,
                   .result_bytes = d->kernel->result_bytes, .nbuffers = d->nbuffers};
    memcpy(l.buffers, d->buffers, sizeof l.buffers);
    gr_device_work work = {0};
    char err[AC_ERR_MAX];
    if (ac_run(d->compiled, gr_worker_id(c), &l, &work, err)) {
        gr_fail(c, GR_ERR_INVALID, "stage '%s': %s", d->stage, err);
        return false;
    }
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
    if (b) b->elements = malloc(elements * d->element_bytes);
    if (b) b->results = malloc(elements * d->kernel->result_bytes + 1);
    if (!b || !b->elements || !b->results) {
        if (b) free(b->elements);
        free(b);
        gr_fail(c, GR_ERR_NOMEM, "stage '%s': out of memory for a batch of packets", d->stage);
        return NULL;
    }
    return d->batches[w] = b;
}

/* The runtime's batch hook: one launch over the elements of every packet, copied side
 * by side; an in-place kernel's elements go back into their packets. */
void cp_device_stage_batch(gr_ctx *c, void *const packets[], uint32_t n)
{
    cp_device_stage *d = gr_user(c);
    device_batch *b = batch_of(c, d);
    if (!b) return;
    b->n = 0;
    uint32_t total = 0;
    const size_t eb = d->element_bytes;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t m = gr_count(packets[k]);
        if (!count_fits(c, d, m)) return;
        memcpy(b->elements + (size_t)total * eb, (char *)packets[k] + d->header_bytes, m * eb);
        b->first[k] = total;
        b->count[k] = m;
        total += m;
    }
    if (!launch(c, d, b->elements, total, b->results)) return;
    if (d->kernel->inplace)
        for (uint32_t k = 0; k < n; k++)
            memcpy((char *)packets[k] + d->header_bytes, b->elements + (size_t)b->first[k] * eb,
                   b->count[k] * eb);
    b->n = n;
}

/* A task: its results from its batch's launch, or (not batched) a launch of its own;
 * then the type's emit. */
void cp_device_stage_main(gr_ctx *c)
{
    cp_device_stage *d = gr_user(c);
    void *packet = gr_input(c, NULL);
    uint32_t n = gr_count(packet);
    int k = gr_batch_index(c);
    const device_batch *b = d->batches[gr_worker_id(c)];
    const unsigned char *results;
    unsigned char own[CP_KERNEL_RESULTS_MAX];
    if (k >= 0 && b && (uint32_t)k < b->n) {
        results = b->results + (size_t)b->first[k] * d->kernel->result_bytes;
    } else {
        if (!count_fits(c, d, n) || !launch(c, d, (char *)packet + d->header_bytes, n, own)) return;
        results = own;
    }
    if (d->kernel->emit) d->kernel->emit(c, d->state, packet, results, n);
}

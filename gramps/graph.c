/* graph.c — building an application graph: queues, stages, buffers and bindings.
 *
 * These calls only record the graph; validate.c checks it at launch. Each call checks
 * its own arguments and records the first error in the graph, naming what was wrong. */
#include "gramps/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void gr_set_error(gr_graph *g, gr_status st, const char *fmt, ...)
{
    pthread_mutex_lock(&g->error_lock);
    if (g->status == GR_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->error, sizeof g->error, fmt, ap);
        va_end(ap);
        g->status = st;
    }
    pthread_mutex_unlock(&g->error_lock);
}

const char *gr_error(const gr_graph *g) { return g ? g->error : "no graph"; }

void gr_error_blame(const gr_graph *g, int *stage, int *queue)
{
    *stage = g ? g->blame_stage : GR_INVALID;
    *queue = g ? g->blame_queue : GR_INVALID;
}

gr_graph *gr_graph_create(void)
{
    gr_graph *g = gr_calloc_lines(1, sizeof *g);
    if (!g) return NULL;
    g->blame_stage = g->blame_queue = GR_INVALID;
    pthread_mutex_init(&g->error_lock, NULL);
    pthread_mutex_init(&g->sleep_lock, NULL);
    pthread_cond_init(&g->sleep_cond, NULL);
    return g;
}

static bool grow(void **arr, int *cap, int n, size_t elem)
{
    if (n < *cap) return true;
    int ncap = *cap ? *cap * 2 : 8;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p) return false;
    *arr = p;
    *cap = ncap;
    return true;
}

static void copy_name(char *dst, const char *src, const char *fallback, int id)
{
    if (src && *src) snprintf(dst, GR_NAME_MAX, "%s", src);
    else snprintf(dst, GR_NAME_MAX, "%s%d", fallback, id);
}

static bool check_building(gr_graph *g, const char *what)
{
    if (!g) return false;
    if (g->launched) {
        gr_set_error(g, GR_ERR_INVALID, "%s: the graph is already launched", what);
        return false;
    }
    return g->status == GR_OK;
}

/* Collection packets: the size is derived from header + elements when not given. */
static bool queue_packet_size(gr_graph *g, const gr_queue_desc *d, const char *name,
                              size_t *bytes)
{
    if (d->kind == GR_COLLECTION) {
        if (d->header_bytes < 4 || d->element_bytes == 0 || d->elements == 0) {
            gr_set_error(g, GR_ERR_INVALID, "queue '%s': a Collection packet needs "
                         "header_bytes >= 4 (element count), element_bytes > 0 and "
                         "elements > 0", name);
            return false;
        }
        size_t need = d->header_bytes + (size_t)d->element_bytes * d->elements;
        if (d->packet_bytes && d->packet_bytes < need) {
            gr_set_error(g, GR_ERR_INVALID, "queue '%s': packet_bytes %zu is smaller than "
                         "header + elements (%zu)", name, d->packet_bytes, need);
            return false;
        }
        *bytes = d->packet_bytes ? d->packet_bytes : need;
        return true;
    }
    if (d->packet_bytes == 0) {
        gr_set_error(g, GR_ERR_INVALID, "queue '%s': packet_bytes is 0", name);
        return false;
    }
    *bytes = d->packet_bytes;
    return true;
}

int gr_queue(gr_graph *g, const gr_queue_desc *d)
{
    if (!check_building(g, "gr_queue")) return GR_INVALID;
    if (!d) { gr_set_error(g, GR_ERR_INVALID, "gr_queue: NULL description"); return GR_INVALID; }
    char name[GR_NAME_MAX];
    copy_name(name, d->name, "queue", g->nqueues);
    size_t bytes;
    if (!queue_packet_size(g, d, name, &bytes)) return GR_INVALID;
    if (d->dynamic_keys && d->subqueues) {
        gr_set_error(g, GR_ERR_INVALID, "queue '%s': a queue set is either static "
                     "(subqueues = N) or dynamic (dynamic_keys), not both", name);
        return GR_INVALID;
    }
    if (!grow((void **)&g->queues, &g->cap_queues, g->nqueues, sizeof *g->queues))
        return GR_INVALID;
    gr_queue_rt *q = gr_calloc_lines(1, sizeof *q);
    if (!q) return GR_INVALID;
    q->id = g->nqueues;
    memcpy(q->name, name, sizeof name);
    q->d = *d;
    q->d.name = q->name;
    if (!q->d.capacity) q->d.capacity = GR_DEFAULT_CAPACITY;
    if (d->dynamic_keys && !q->d.max_keys) q->d.max_keys = GR_DEFAULT_MAX_KEYS;
    q->packet_bytes = bytes;
    q->consumer = -1;
    q->chain_end = -1;
    q->ticket_end = -1;
    q->is_set = d->subqueues > 0 || d->dynamic_keys;
    gr_spin_init(&q->wait_lock);
    g->queues[g->nqueues] = q;
    return g->nqueues++;
}

int gr_stage(gr_graph *g, const gr_stage_desc *d)
{
    if (!check_building(g, "gr_stage")) return GR_INVALID;
    if (!d) { gr_set_error(g, GR_ERR_INVALID, "gr_stage: NULL description"); return GR_INVALID; }
    char name[GR_NAME_MAX];
    copy_name(name, d->name, "stage", g->nstages);
    if (!d->main) {
        gr_set_error(g, GR_ERR_INVALID, "stage '%s': no program (main is NULL)", name);
        return GR_INVALID;
    }
    if (d->kind != GR_THREAD && d->kind != GR_SHADER && d->kind != GR_FIXED) {
        gr_set_error(g, GR_ERR_INVALID, "stage '%s': unknown stage kind %d", name, (int)d->kind);
        return GR_INVALID;
    }
    if (!grow((void **)&g->stages, &g->cap_stages, g->nstages, sizeof *g->stages))
        return GR_INVALID;
    gr_stage_rt *s = calloc(1, sizeof *s);
    if (!s) return GR_INVALID;
    s->id = g->nstages;
    memcpy(s->name, name, sizeof name);
    s->d = *d;
    s->fifo = d->fifo;
    s->d.name = s->name;
    snprintf(s->origin, sizeof s->origin, "%s", d->origin ? d->origin : "");
    s->d.origin = s->origin;
    snprintf(s->device, sizeof s->device, "%s", d->device ? d->device : "cpu");
    s->d.device = s->device;
    snprintf(s->placement, sizeof s->placement, "%s", d->placement ? d->placement : "");
    s->d.placement = s->placement;
    if (d->config_bytes) {
        s->config = malloc(d->config_bytes);
        if (!s->config) { free(s); return GR_INVALID; }
        memcpy(s->config, d->config, d->config_bytes);
    }
    gr_spin_init(&s->inst_lock);
    gr_spin_init(&s->held_lock);
    g->stages[g->nstages] = s;
    return g->nstages++;
}

/* Read-only buffers get whole pages of their own (mmap, zeroed) so that a run can
 * mprotect them: a stage that writes one faults at the write instead of corrupting
 * data other stages share. Writable ones come from calloc. */
static bool buffer_alloc(gr_buffer_rt *b, size_t bytes)
{
    if (b->writable) {
        b->data = calloc(1, bytes ? bytes : 1);
        return b->data != NULL;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = bytes ? (bytes + page - 1) / page * page : page;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    b->data = p;
    b->map_bytes = len;
    return true;
}

static void buffer_free(gr_buffer_rt *b)
{
    if (b->map_bytes) munmap(b->data, b->map_bytes);
    else free(b->data);
}

/* Protection changes only between runs (gr_launch, gr_wait): munmap works on either. */
bool gr_buffers_protect(gr_graph *g, bool ro)
{
    for (int i = 0; i < g->nbuffers; i++) {
        gr_buffer_rt *b = &g->buffers[i];
        if (!b->map_bytes) continue;
        if (mprotect(b->data, b->map_bytes, ro ? PROT_READ : PROT_READ | PROT_WRITE) != 0) {
            gr_set_error(g, GR_ERR_NOMEM, "buffer '%s': mprotect to %s failed: %s", b->name,
                         ro ? "read-only" : "read-write", strerror(errno));
            return false;
        }
    }
    return true;
}

int gr_buffer(gr_graph *g, const char *name, size_t bytes, const void *data, bool writable)
{
    if (!check_building(g, "gr_buffer")) return GR_INVALID;
    if (!grow((void **)&g->buffers, &g->cap_buffers, g->nbuffers, sizeof *g->buffers))
        return GR_INVALID;
    gr_buffer_rt *b = &g->buffers[g->nbuffers];
    memset(b, 0, sizeof *b);
    copy_name(b->name, name, "buffer", g->nbuffers);
    b->writable = writable;
    if (!buffer_alloc(b, bytes)) return GR_INVALID;
    if (data && bytes) memcpy(b->data, data, bytes);
    b->bytes = bytes;
    return g->nbuffers++;
}

static const char *mode_name(gr_bind_mode m)
{
    switch (m) {
    case GR_BIND_INPUT: return "input";
    case GR_BIND_OUTPUT: return "output";
    case GR_BIND_PUSH: return "push";
    case GR_BIND_INPLACE: return "in-place";
    }
    return "?";
}

static bool bind_consumer(gr_graph *g, gr_stage_rt *s, gr_queue_rt *q, gr_bind_mode m)
{
    if (q->consumer >= 0) {
        gr_set_error(g, GR_ERR_INVALID, "queue '%s' already has consumer '%s'; stage '%s' "
                     "cannot also consume it (one consumer stage per queue)",
                     q->name, g->stages[q->consumer]->name, s->name);
        return false;
    }
    q->consumer = s->id;
    q->consumer_mode = m;
    return true;
}

int gr_bind(gr_graph *g, int stage, gr_bind_mode mode, int queue)
{
    if (!check_building(g, "gr_bind")) return GR_INVALID;
    if (stage < 0 || stage >= g->nstages || queue < 0 || queue >= g->nqueues) {
        gr_set_error(g, GR_ERR_INVALID, "gr_bind: no stage %d or no queue %d", stage, queue);
        return GR_INVALID;
    }
    gr_stage_rt *s = g->stages[stage];
    gr_queue_rt *q = g->queues[queue];
    bool shader = s->d.kind == GR_SHADER;
    if ((mode == GR_BIND_PUSH || mode == GR_BIND_INPLACE) && !shader) {
        gr_set_error(g, GR_ERR_INVALID, "stage '%s': %s binding of queue '%s' needs a "
                     "Shader stage", s->name, mode_name(mode), q->name);
        return GR_INVALID;
    }
    if (mode == GR_BIND_PUSH && q->d.kind != GR_COLLECTION) {
        gr_set_error(g, GR_ERR_INVALID, "stage '%s': push queue '%s' must hold Collection "
                     "packets", s->name, q->name);
        return GR_INVALID;
    }
    if (mode == GR_BIND_INPUT) {
        if (!grow((void **)&s->in, &s->cap_in, s->nin, sizeof *s->in)) goto nomem;
        if (!bind_consumer(g, s, q, mode)) return GR_INVALID;
        s->in[s->nin] = (gr_binding){.mode = mode, .queue = queue};
        return s->nin++;
    }
    if (!grow((void **)&s->out, &s->cap_out, s->nout, sizeof *s->out) ||
        !grow((void **)&q->producers, &q->cap_producers, q->nproducers, sizeof *q->producers))
        goto nomem;
    q->producers[q->nproducers++] = stage;
    if (mode == GR_BIND_PUSH) q->push_fed = true;
    s->out[s->nout] = (gr_binding){.mode = mode, .queue = queue};
    return s->nout++;
nomem:
    gr_set_error(g, GR_ERR_NOMEM, "stage '%s': out of memory binding queue '%s'", s->name,
                 q->name);
    return GR_INVALID;
}

int gr_bind_buffer(gr_graph *g, int stage, int buffer)
{
    if (!check_building(g, "gr_bind_buffer")) return GR_INVALID;
    if (stage < 0 || stage >= g->nstages || buffer < 0 || buffer >= g->nbuffers) {
        gr_set_error(g, GR_ERR_INVALID, "gr_bind_buffer: no stage %d or no buffer %d",
                     stage, buffer);
        return GR_INVALID;
    }
    gr_stage_rt *s = g->stages[stage];
    if (!grow((void **)&s->buffers, &s->cap_buffers, s->nbuffers, sizeof *s->buffers)) {
        gr_set_error(g, GR_ERR_NOMEM, "stage '%s': out of memory binding buffer '%s'",
                     s->name, g->buffers[buffer].name);
        return GR_INVALID;
    }
    s->buffers[s->nbuffers] = buffer;
    return s->nbuffers++;
}

void *gr_buffer_data(gr_graph *g, int buffer)
{
    if (!g || buffer < 0 || buffer >= g->nbuffers) return NULL;
    return g->buffers[buffer].data;
}

static void free_queue(gr_queue_rt *q)
{
    gr_queue_free_subqueues(q);       /* first: a failed launch may have made only some */
    gr_queue_run_clear(q);
    free(q->producers);
    free(q->cycle_queues);
    free(q);
}

void gr_graph_destroy(gr_graph *g)
{
    if (!g) return;
    if (g->launched && !g->waited) gr_wait(g);
    gr_workers_free(g);
    for (int i = 0; i < g->nstages; i++) {
        gr_stage_rt *s = g->stages[i];
        for (int list = 0; list < 2; list++)
            for (gr_inst *n, *in = list ? s->spare : s->instances; in; in = n) {
                n = in->next_all;
                gr_inst_destroy(g, in);
            }
        free(s->config);
        free(s->in);
        free(s->out);
        free(s->buffers);
        free(s);
    }
    for (int i = 0; i < g->nqueues; i++) free_queue(g->queues[i]);
    for (int i = 0; i < g->nbuffers; i++) buffer_free(&g->buffers[i]);
    for (int i = 0; i < g->npools; i++) gr_buf_destroy(&g->pools[i]);
    for (int i = 0; i < g->ncomps; i++) {
        free(g->comps[i].stages);
        free(g->comps[i].consumers);
        free(g->comps[i].out_queues);
        free(g->comps[i].in_queues);
    }
    if (g->launched) gr_stack_pool_destroy(&g->stacks);
    gr_stats_free(g);
    free(g->comps);
    free(g->by_rank);
    free(g->pools);
    free(g->queues);
    free(g->stages);
    free(g->buffers);
    pthread_mutex_destroy(&g->error_lock);
    pthread_mutex_destroy(&g->sleep_lock);
    pthread_cond_destroy(&g->sleep_cond);
    free(g);
}

/* A name inside a DOT quoted string: quotes and backslashes escaped, control
 * characters (a raw newline would end the line inside the string) as spaces. */
static void dot_name(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(out, "\\%c", *s);
        else fputc((unsigned char)*s < 0x20 ? ' ' : *s, out);
    }
}

/* The queue's figures, once per queue: capacity (per subqueue, and the subqueues the
 * run made), packet size, and after a run its peak and average held. */
static void dot_queue_figures(const gr_graph *g, const gr_queue_rt *q, FILE *out)
{
    const gr_queue_stats *st = g->stats_ready && g->stats.queues ? &g->stats.queues[q->id] : NULL;
    if (st && st->subqueues > 1) fprintf(out, "\\n%u subqueues x", st->subqueues);
    fprintf(out, "\\ncap %u x %zu B%s", q->d.capacity, q->packet_bytes, q->d.ordered ? " ordered" : "");
    if (st)
        fprintf(out, "\\npeak %llu (%llu B) avg %.1f (%.0f B)", (unsigned long long)st->peak_packets,
                (unsigned long long)st->peak_bytes, st->avg_packets, st->avg_bytes);
}

/* One edge per output binding, dashed only if that binding is backward: a queue's
 * other producers (a cycle's entry) are forward and bounded by its capacity. The
 * queue's figures go on its first producer's edge only (`labelled`); the others carry
 * its name. */
static void dot_edge(const gr_graph *g, const gr_stage_rt *s, const gr_binding *b,
                     bool *labelled, FILE *out)
{
    const gr_queue_rt *q = g->queues[b->queue];
    fprintf(out, "  s%d -> s%d [label=\"", s->id, q->consumer);
    dot_name(out, q->name);
    if (!labelled[q->id]) dot_queue_figures(g, q, out);
    labelled[q->id] = true;
    fprintf(out, "\"%s];\n", b->backward ? ", style=dashed" : "");
}

void gr_graph_dot(const gr_graph *g, FILE *out)
{
    static const char *shape[] = {"box", "ellipse", "box3d"};
    fprintf(out, "digraph gramps {\n  rankdir=LR;\n");
    if (g->sched) fprintf(out, "  label=\"%s scheduler\";\n", g->sched->name);
    for (int i = 0; i < g->nstages; i++) {
        const gr_stage_rt *s = g->stages[i];
        fprintf(out, "  s%d [label=\"", i);
        dot_name(out, s->name);
        fprintf(out, "\\nprio %d\", shape=%s];\n", s->priority, shape[s->d.kind]);
    }
    bool *labelled = calloc((size_t)g->nqueues + 1, sizeof *labelled);
    for (int i = 0; labelled && i < g->nstages; i++)
        for (int k = 0; k < g->stages[i]->nout; k++)
            dot_edge(g, g->stages[i], &g->stages[i]->out[k], labelled, out);
    if (!labelled) fprintf(out, "  // out of memory: no edges\n");
    free(labelled);
    fprintf(out, "}\n");
}

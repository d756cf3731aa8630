/* instance.c — one run of a graph description: checks every section against the
 * registry (types, parameters, formats of both ends of every binding), expands
 * replicated stages and queues, makes the stages' states and builds the GRAMPS graph.
 *
 * Ports are bound in the order their type declares them, so a stage's slot numbers are
 * its port table's order (see cp_stage_type). */
#include "compose/internal.h"

#include "accel/opencl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct inst_queue {
    char name[GR_NAME_MAX_CP];
    const cp_section *sec;
    const cp_format *format;
    gr_queue_desc desc;
    uint32_t elements;                 /* per packet (sized formats), else 0 */
    int id;                            /* gramps queue id */
    const char *base;                  /* the section's name (replicas share it) */
    uint32_t replica, replicas;
    cp_device_queue *device;           /* its packets' elements may stay on the device */
    cp_device_append *append;          /* its pushed elements' leading bytes may too */
} inst_queue;

typedef union param_value { int64_t i; double f; bool b; char *s; } param_value;

/* A [stage] section's Shader flags (gr_stage_desc's fields of the same names). */
typedef struct shader_flags {
    bool coalesce_input, recirculate, reduce_per_key, ticket_order;
} shader_flags;

typedef struct inst_stage {
    cp_stage_init init;                /* first: cp_int & co. get the stage from it */
    const cp_image_stage_type *image;  /* an image-space stage's type, else NULL */
    char name[GR_NAME_MAX_CP];
    const cp_section *sec;
    param_value *params;               /* per type param */
    int *port_queue;                   /* per type port: index into queues (copy 0 of a
                                          fan-out binding) */
    uint32_t *port_copies;             /* per type port: 1, or the copies a `QUEUE[*]`
                                          binding sends to (output indices in a row) */
    void *state;
    bool created;
    int64_t priority;
    bool fifo;
    int64_t low_watermark;             /* its `low_watermark`; 0: the run's */
    shader_flags flow;                 /* its Shader flags (graph-file keys) */
    bool replicated;                   /* its section has `replicate` */
    cp_placement placement;            /* asked for: its `device`, else [graph] device */
    const char *placement_where;       /* the setting that asked (NULL: none, cpu) */
    bool wants_device;                 /* placement decided the device (place_stages) */
    cp_device_stage *device;           /* placed on the device, else NULL */
    char placement_why[CP_PLACEMENT_WHY];   /* why it runs where it does ("": not said) */
    int id;                            /* gramps stage id (image-space stages: GR_INVALID) */
} inst_stage;

struct cp_instance {
    cp_graph *desc;
    const cp_vars *vars;
    void *frame;
    gr_graph *g;
    inst_queue *queues;
    int nqueues;
    inst_stage *stages;
    int nstages;
    uint32_t low_watermark;
    bool device_queues;                /* [graph] device_queues (default true) */
    cp_image_pass *passes;             /* the image-space stages, in section order */
    int npasses;
    bool ran;                          /* its graph finished a run: the next relaunches it */
};

const cp_registry *cp_instance_registry(const cp_instance *in) { return in->desc->r; }

unsigned cp_instance_resource_access(const cp_instance *in, const char *name)
{
    unsigned access = 0;
    for (int k = 0; k < in->nstages; k++) {
        const cp_stage_type *t = in->stages[k].init.type;
        for (int i = 0; t && i < t->nresources; i++)
            if (!strcmp(t->resources[i].name, name)) access |= t->resources[i].access;
    }
    return access;
}

/* ---- values of a section --------------------------------------------------------------- */

static const char *value_of(cp_instance *in, const cp_section *sec, const char *key,
                            char buf[256], char err[CP_ERR_MAX], bool *missing)
{
    const cp_setting *s = cp_setting_find(sec, key);
    *missing = s == NULL;
    return s ? cp_resolve(in->desc, in->vars, s, buf, err) : NULL;
}

static int int_of(cp_instance *in, const cp_section *sec, const char *key, int64_t def,
                  int64_t lo, int64_t hi, int64_t *out, char err[CP_ERR_MAX])
{
    char buf[256], label[160];
    bool missing;
    const char *v = value_of(in, sec, key, buf, err, &missing);
    if (missing) { *out = def; return 0; }
    const cp_setting *s = cp_setting_find(sec, key);
    if (!v || cp_parse_int(s, v, out, err)) return -1;
    if (*out < lo || *out > hi)
        return cp_fail(err, "%s: %s: %s = %lld is out of range (%lld..%lld)", s->where,
                       cp_section_label(sec, label), key, (long long)*out, (long long)lo,
                       (long long)hi);
    return 0;
}

static int bool_of(cp_instance *in, const cp_section *sec, const char *key, bool *out,
                   char err[CP_ERR_MAX])
{
    char buf[256];
    bool missing;
    const char *v = value_of(in, sec, key, buf, err, &missing);
    if (missing) { *out = false; return 0; }
    return v ? cp_parse_bool(cp_setting_find(sec, key), v, out, err) : -1;
}

/* ---- queues ------------------------------------------------------------------------------ */

static const char *const queue_keys[] = {"format", "capacity", "elements", "ordered", "subqueues",
                                         "dynamic_keys", "max_keys", "replicate", NULL};

static bool in_list(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (!strcmp(*list, key)) return true;
    return false;
}

static int check_keys(const cp_section *sec, const char *const *known, const char *what,
                      char err[CP_ERR_MAX])
{
    char label[160];
    for (int i = 0; i < sec->n; i++)
        if (!in_list(known, sec->settings[i].key))
            return cp_fail(err, "%s: %s: unknown setting '%s' (%s)", sec->settings[i].where,
                           cp_section_label(sec, label), sec->settings[i].key, what);
    return 0;
}

static int queue_format(cp_instance *in, const cp_section *sec, const cp_format **out,
                        char err[CP_ERR_MAX])
{
    char buf[256], label[160];
    bool missing;
    const char *v = value_of(in, sec, "format", buf, err, &missing);
    if (missing)
        return cp_fail(err, "%s: %s has no format", sec->where, cp_section_label(sec, label));
    if (!v) return -1;
    *out = cp_find_format(in->desc->r, v);
    if (!*out)
        return cp_fail(err, "%s: %s: unknown packet format '%s' (--list-stages lists them)",
                       cp_setting_find(sec, "format")->where, cp_section_label(sec, label), v);
    return 0;
}

/* The gramps description of one queue section (its format's packet layout). */
static int queue_desc(cp_instance *in, const cp_section *sec, const cp_format *f,
                      gr_queue_desc *d, uint32_t *elements, char err[CP_ERR_MAX])
{
    int64_t cap, elems, subs, max_keys;
    bool ordered, dynamic;
    uint32_t max_elems = f->max_elements ? f->max_elements : f->default_elements;
    if (int_of(in, sec, "capacity", GR_DEFAULT_CAPACITY, 1, CP_MAX_CAPACITY, &cap, err) ||
        int_of(in, sec, "subqueues", 0, 0, CP_MAX_SUBQUEUES, &subs, err) ||
        int_of(in, sec, "max_keys", 0, 0, CP_MAX_KEYS, &max_keys, err) ||
        bool_of(in, sec, "ordered", &ordered, err) || bool_of(in, sec, "dynamic_keys", &dynamic, err))
        return -1;
    bool sized = f->kind == GR_COLLECTION || f->packet_bytes == 0;
    elems = 0;
    if (sized && int_of(in, sec, "elements", f->default_elements, 1, max_elems, &elems, err))
        return -1;
    *elements = (uint32_t)elems;
    *d = (gr_queue_desc){.kind = f->kind, .capacity = (uint32_t)cap, .ordered = ordered,
                         .subqueues = (uint32_t)subs, .dynamic_keys = dynamic,
                         .max_keys = (uint32_t)max_keys};
    if (f->kind == GR_OPAQUE) {
        d->packet_bytes = f->packet_bytes ? f->packet_bytes : f->header_bytes + elems * f->element_bytes;
    } else {
        d->header_bytes = f->header_bytes;
        d->element_bytes = f->element_bytes;
        d->elements = (uint32_t)elems;
    }
    return 0;
}

static int add_queue_section(cp_instance *in, const cp_section *sec, char err[CP_ERR_MAX])
{
    const cp_format *f;
    gr_queue_desc d;
    uint32_t elements;
    int64_t reps;
    if (check_keys(sec, queue_keys, "queues take format, capacity, elements, ordered, "
                   "subqueues, dynamic_keys, max_keys, replicate", err) ||
        queue_format(in, sec, &f, err) || queue_desc(in, sec, f, &d, &elements, err) ||
        int_of(in, sec, "replicate", 0, 0, CP_MAX_REPLICAS, &reps, err))
        return -1;
    for (int64_t k = 0; k < (reps ? reps : 1); k++) {
        inst_queue *q = &in->queues[in->nqueues++];
        *q = (inst_queue){.sec = sec, .format = f, .desc = d, .elements = elements,
                          .base = sec->name, .replica = (uint32_t)k, .replicas = (uint32_t)reps};
        if (reps) snprintf(q->name, sizeof q->name, "%s-%lld", sec->name, (long long)k);
        else snprintf(q->name, sizeof q->name, "%s", sec->name);
        q->desc.name = q->name;
    }
    return 0;
}

/* ---- stages ------------------------------------------------------------------------------ */

static const cp_port *find_port(const cp_stage_type *t, const char *name)
{
    for (int i = 0; i < t->nports; i++)
        if (!strcmp(t->ports[i].name, name)) return &t->ports[i];
    return NULL;
}

static const cp_param *find_param(const cp_stage_type *t, const char *name, int *index)
{
    for (int i = 0; i < t->nparams; i++)
        if (!strcmp(t->params[i].name, name)) { *index = i; return &t->params[i]; }
    return NULL;
}

/* The Shader-only flags of gr_stage_desc a [stage] section may set. */
static const char *const flow_keys[] = {"coalesce_input", "recirculate", "reduce_per_key",
                                        "ticket_order", NULL};

static bool is_flow_key(const char *k)
{
    for (int i = 0; flow_keys[i]; i++)
        if (!strcmp(flow_keys[i], k)) return true;
    return false;
}

/* coalesce_input, recirculate, reduce_per_key and ticket_order: booleans, for Shader
 * types only; recirculate only with coalesce_input, reduce_per_key only with
 * recirculate (the runtime checks the queues they need). */
static int flow_of(cp_instance *in, const cp_section *sec, const cp_stage_type *t,
                   shader_flags *f, char err[CP_ERR_MAX])
{
    char label[160];
    if (bool_of(in, sec, "coalesce_input", &f->coalesce_input, err) ||
        bool_of(in, sec, "recirculate", &f->recirculate, err) ||
        bool_of(in, sec, "reduce_per_key", &f->reduce_per_key, err) ||
        bool_of(in, sec, "ticket_order", &f->ticket_order, err)) return -1;
    for (int i = 0; flow_keys[i]; i++) {
        const cp_setting *set = cp_setting_find(sec, flow_keys[i]);
        if (set && t->kind != GR_SHADER)
            return cp_fail(err, "%s: %s: '%s' is for Shader stages; type '%s' is a %s stage",
                           set->where, cp_section_label(sec, label), flow_keys[i], t->name,
                           t->kind == GR_THREAD ? "Thread" : "Fixed-function");
    }
    if (f->recirculate && !f->coalesce_input)
        return cp_fail(err, "%s: %s: 'recirculate = true' needs 'coalesce_input = true' (a "
                       "recirculating reduction joins its results as it coalesces its input)",
                       cp_setting_find(sec, "recirculate")->where, cp_section_label(sec, label));
    if (f->reduce_per_key && !f->recirculate)
        return cp_fail(err, "%s: %s: 'reduce_per_key = true' needs 'recirculate = true' (and "
                       "'coalesce_input = true')", cp_setting_find(sec, "reduce_per_key")->where,
                       cp_section_label(sec, label));
    if (f->ticket_order && f->coalesce_input)
        return cp_fail(err, "%s: %s: 'ticket_order = true' gives one result per input packet, "
                       "which 'coalesce_input = true' excludes",
                       cp_setting_find(sec, "ticket_order")->where, cp_section_label(sec, label));
    return 0;
}

static int check_stage_keys(const cp_section *sec, const cp_stage_type *t, char err[CP_ERR_MAX])
{
    char label[160];
    int idx;
    for (int i = 0; i < sec->n; i++) {
        const char *k = sec->settings[i].key;
        if (!strcmp(k, "type") || !strcmp(k, "replicate") || !strcmp(k, "priority") ||
            !strcmp(k, "fifo") || !strcmp(k, "low_watermark") || !strcmp(k, "device") ||
            is_flow_key(k)) continue;
        if (find_port(t, k) || find_param(t, k, &idx)) continue;
        return cp_fail(err, "%s: %s: type '%s' has no port or parameter '%s' (--list-stages "
                       "shows its ports and parameters)", sec->settings[i].where,
                       cp_section_label(sec, label), t->name, k);
    }
    return 0;
}

static int stage_type(cp_instance *in, const cp_section *sec, const cp_stage_type **out,
                      char err[CP_ERR_MAX])
{
    char buf[256], label[160];
    bool missing;
    const char *v = value_of(in, sec, "type", buf, err, &missing);
    if (missing) return cp_fail(err, "%s: %s has no type", sec->where, cp_section_label(sec, label));
    if (!v) return -1;
    *out = cp_find_stage(in->desc->r, v);
    if (!*out)
        return cp_fail(err, "%s: %s: unknown stage type '%s' (--list-stages lists them; "
                       "plugins add more)", cp_setting_find(sec, "type")->where,
                       cp_section_label(sec, label), v);
    return check_stage_keys(sec, *out, err);
}

static int parse_param(cp_instance *in, const cp_section *sec, const cp_param *p,
                       param_value *out, char err[CP_ERR_MAX])
{
    char buf[256], label[160];
    const cp_setting *s = cp_setting_find(sec, p->name);
    cp_setting def = {(char *)p->name, (char *)p->def, sec->where};
    if (!s && !p->def)
        return cp_fail(err, "%s: %s: parameter '%s' has no default and is not set",
                       sec->where, cp_section_label(sec, label), p->name);
    if (!s) s = &def;
    const char *v = cp_resolve(in->desc, in->vars, s, buf, err);
    if (!v) return -1;
    int rc = 0;
    switch (p->type) {
    case CP_INT: rc = cp_parse_int(s, v, &out->i, err); break;
    case CP_FLOAT: rc = cp_parse_float(s, v, &out->f, err); break;
    case CP_BOOL: rc = cp_parse_bool(s, v, &out->b, err); break;
    case CP_STRING: out->s = cp_strdup(v); rc = out->s ? 0 : cp_fail(err, "out of memory"); break;
    }
    if (rc) return -1;
    double x = p->type == CP_INT ? (double)out->i : p->type == CP_FLOAT ? out->f : 0;
    if ((p->min != 0 || p->max != 0) && (x < p->min || x > p->max))
        return cp_fail(err, "%s: %s: %s = %s is out of range (%g..%g)", s->where,
                       cp_section_label(sec, label), p->name, v, p->min, p->max);
    return 0;
}

/* Whether queue q (named by the port) is the one copy k of a stage with `reps` copies
 * binds: 1 yes, 0 another copy of it, -1 an error (message in err). */
static int copy_binding(const cp_section *sec, const cp_setting *s, const cp_port *p,
                        uint32_t k, uint32_t reps, const inst_queue *q, char err[CP_ERR_MAX])
{
    char label[160];
    if (q->replicas && q->replicas != reps && reps)
        return cp_fail(err, "%s: %s: port '%s' binds queue '%s', replicated %u times, "
                       "but the stage is replicated %u times", s->where,
                       cp_section_label(sec, label), p->name, q->base, q->replicas, reps);
    if (q->replicas && !reps)
        return cp_fail(err, "%s: %s: port '%s' binds queue '%s', replicated %u times, "
                       "but the stage is not replicated (give it the same `replicate`, or "
                       "bind `%s[*]` to send to every copy)", s->where,
                       cp_section_label(sec, label), p->name, q->base, q->replicas, q->base);
    return !q->replicas || q->replica == k;
}

/* `QUEUE[*]` on a port: every copy of a replicated queue, for an output port that is its
 * (unreplicated) stage's last, so no other port's output index moves. The stage picks a
 * copy per packet (cp_port_copies); one that does not know of copies sends all to copy 0.
 * 1 for copy 0 of q, 0 another copy, -1 an error (message in err). */
static int fan_out_binding(const cp_section *sec, const cp_setting *s, const cp_stage_type *t,
                           const cp_port *p, uint32_t reps, const inst_queue *q,
                           char err[CP_ERR_MAX])
{
    char label[160];
    const char *why = NULL;
    if (reps) why = "the stage is replicated (its copies bind copy to copy)";
    else if (p->mode == GR_BIND_INPUT) why = "it is an input";
    else if (p != &t->ports[t->nports - 1]) why = "only a stage's last port may (the others' outputs would move)";
    else if (!q->replicas) why = "the queue is not replicated";
    if (why)
        return cp_fail(err, "%s: %s: port '%s' binds every copy of queue '%s' ([*]), but %s",
                       s->where, cp_section_label(sec, label), p->name, q->base, why);
    return q->replica == 0;
}

/* The queue a port binds to for replica k of a stage with `reps` copies; *copies is 1,
 * or the copies of a `QUEUE[*]` binding (the index returned is copy 0's). */
static int port_queue(cp_instance *in, const cp_section *sec, const cp_stage_type *t,
                      const cp_port *p, uint32_t k, uint32_t reps, uint32_t *copies,
                      char err[CP_ERR_MAX])
{
    char buf[256], label[160];
    bool missing;
    const char *v = value_of(in, sec, p->name, buf, err, &missing);
    if (missing)
        return cp_fail(err, "%s: %s: port '%s' (%s) is not bound to a queue", sec->where,
                       cp_section_label(sec, label), p->name, p->format);
    if (!v) return -1;
    const cp_setting *s = cp_setting_find(sec, p->name);
    size_t len = strlen(v);
    bool every = len > 3 && !strcmp(v + len - 3, "[*]");
    if (every) len -= 3;
    for (int i = 0; i < in->nqueues; i++) {
        inst_queue *q = &in->queues[i];
        if (strlen(q->base) != len || strncmp(q->base, v, len)) {
            if (q->replicas) i += (int)q->replicas - 1;   /* past the section's copies */
            continue;
        }
        int match = every ? fan_out_binding(sec, s, t, p, reps, q, err)
                          : copy_binding(sec, s, p, k, reps, q, err);
        if (match < 0) return -1;
        if (!match) continue;
        if (strcmp(q->format->name, p->format))
            return cp_fail(err, "%s: %s (type %s): port '%s' takes format '%s' but queue "
                           "'%s' carries '%s'", s->where, cp_section_label(sec, label),
                           t->name, p->name, p->format, q->base, q->format->name);
        *copies = every ? q->replicas : 1;
        return i;
    }
    return cp_fail(err, "%s: %s: port '%s' names queue '%.*s', which the graph does not "
                   "declare", s->where, cp_section_label(sec, label), p->name, (int)len, v);
}

/* A `device` setting's value (resolved, into v) and placement; -1 with a message naming
 * the setting's place and label (its section) when it is none of cpu, opencl, auto. */
static int placement_value(cp_instance *in, const cp_setting *s, const char *label, char v[256],
                           cp_placement *out, char err[CP_ERR_MAX])
{
    if (!cp_resolve(in->desc, in->vars, s, v, err)) return -1;
    if (cp_placement_parse(v, out))
        return cp_fail(err, "%s: %s: device = %s: expected cpu, opencl or auto", s->where,
                       label, v);
    return 0;
}

/* Where the stage asks to run: its `device` setting, else the [graph] one for a type
 * with a kernel (a graph-wide opencl leaves kernel-less stages on the CPU), else cpu.
 * A stage's own opencl or auto on a type without a kernel is refused. */
static int placement_of(cp_instance *in, inst_stage *st, const cp_section *sec,
                        const cp_stage_type *t, char err[CP_ERR_MAX])
{
    char v[256], label[160];
    const cp_section *graph = cp_section_find(in->desc, CP_SEC_GRAPH, NULL);
    const cp_setting *s = cp_setting_find(sec, "device");
    const cp_kernel *kernel = cp_kernel_of(in->desc->r, t);
    if (!s && kernel && graph) s = cp_setting_find(graph, "device");
    st->placement = CP_PLACE_CPU;
    st->placement_where = NULL;
    if (!s) return 0;
    if (placement_value(in, s, cp_section_label(sec, label), v, &st->placement, err)) return -1;
    st->placement_where = s->where;
    if (st->placement != CP_PLACE_CPU && !kernel)
        return cp_fail(err, "%s: stage '%s' (type %s): device = %s, but type %s has no OpenCL "
                       "kernel (--list-stages shows the types that have one)", s->where,
                       sec->name, t->name, v, t->name);
    return 0;
}

static int fill_stage(cp_instance *in, inst_stage *st, const cp_section *sec,
                      const cp_stage_type *t, uint32_t k, uint32_t reps, char err[CP_ERR_MAX])
{
    st->sec = sec;
    st->init = (cp_stage_init){.name = st->name, .type = t, .frame = in->frame, .replica = k,
                               .replicas = reps ? reps : 1, .instance = in};
    st->replicated = reps > 0;
    if (reps) snprintf(st->name, sizeof st->name, "%s-%u", sec->name, k);
    else snprintf(st->name, sizeof st->name, "%s", sec->name);
    st->params = calloc((size_t)t->nparams + 1, sizeof *st->params);
    st->port_queue = calloc((size_t)t->nports + 1, sizeof *st->port_queue);
    st->port_copies = calloc((size_t)t->nports + 1, sizeof *st->port_copies);
    if (!st->params || !st->port_queue || !st->port_copies) return cp_fail(err, "out of memory");
    if (int_of(in, sec, "priority", 0, -CP_MAX_PRIORITY, CP_MAX_PRIORITY, &st->priority, err) ||
        bool_of(in, sec, "fifo", &st->fifo, err) ||
        int_of(in, sec, "low_watermark", 0, 0, CP_MAX_LOW_WATERMARK, &st->low_watermark, err) ||
        flow_of(in, sec, t, &st->flow, err) ||
        placement_of(in, st, sec, t, err)) return -1;
    for (int i = 0; i < t->nparams; i++)
        if (parse_param(in, sec, &t->params[i], &st->params[i], err)) return -1;
    for (int i = 0; i < t->nports; i++) {
        st->port_queue[i] = port_queue(in, sec, t, &t->ports[i], k, reps, &st->port_copies[i], err);
        if (st->port_queue[i] < 0) return -1;
    }
    return 0;
}

/* Copy k > 0 of a replicated stage: copy 0's values (no setting depends on the copy, so
 * they are resolved, parsed and checked once a section), its own name, and copy k of each
 * replicated queue copy 0 binds (a queue section's copies are consecutive in
 * in->queues, copy 0 first). */
static int copy_stage(cp_instance *in, inst_stage *st, const inst_stage *first, uint32_t k,
                      char err[CP_ERR_MAX])
{
    const cp_stage_type *t = first->init.type;
    *st = (inst_stage){.init = first->init, .sec = first->sec, .priority = first->priority,
                       .fifo = first->fifo, .low_watermark = first->low_watermark,
                       .flow = first->flow, .replicated = true, .placement = first->placement,
                       .placement_where = first->placement_where};
    st->init.name = st->name;
    st->init.replica = k;
    snprintf(st->name, sizeof st->name, "%s-%u", st->sec->name, k);
    st->params = calloc((size_t)t->nparams + 1, sizeof *st->params);
    st->port_queue = calloc((size_t)t->nports + 1, sizeof *st->port_queue);
    st->port_copies = calloc((size_t)t->nports + 1, sizeof *st->port_copies);
    if (!st->params || !st->port_queue || !st->port_copies) return cp_fail(err, "out of memory");
    for (int i = 0; i < t->nparams; i++) {
        st->params[i] = first->params[i];
        if (t->params[i].type == CP_STRING && !(st->params[i].s = cp_strdup(first->params[i].s)))
            return cp_fail(err, "out of memory");
    }
    for (int i = 0; i < t->nports; i++) {
        int q = first->port_queue[i];
        st->port_queue[i] = in->queues[q].replicas ? q + (int)k : q;
        st->port_copies[i] = first->port_copies[i];
    }
    return 0;
}

static int add_stage_section(cp_instance *in, const cp_section *sec, char err[CP_ERR_MAX])
{
    const cp_stage_type *t = NULL;
    int64_t reps;
    char label[160];
    if (stage_type(in, sec, &t, err) || int_of(in, sec, "replicate", 0, 0, CP_MAX_REPLICAS, &reps, err))
        return -1;
    const cp_image_stage_type *image = cp_image_stage_of(in->desc->r, t);
    bool flow = false;
    for (int i = 0; flow_keys[i]; i++) flow = flow || cp_setting_find(sec, flow_keys[i]);
    if (image && (reps || cp_setting_find(sec, "priority") || cp_setting_find(sec, "fifo") ||
                  cp_setting_find(sec, "low_watermark") || cp_setting_find(sec, "device") ||
                  flow))
        return cp_fail(err, "%s: %s: image-space stage type '%s' takes no replicate, priority, "
                       "fifo, low_watermark, device, coalesce_input, recirculate, "
                       "reduce_per_key or "
                       "ticket_order (it runs per tile, tiles in parallel, after the graph)",
                       sec->where, cp_section_label(sec, label), t->name);
    const inst_stage *first = &in->stages[in->nstages];
    for (int64_t k = 0; k < (reps ? reps : 1); k++) {
        inst_stage *st = &in->stages[in->nstages++];
        if (k == 0 ? fill_stage(in, st, sec, t, 0, (uint32_t)reps, err)
                   : copy_stage(in, st, first, (uint32_t)k, err)) return -1;
        st->image = image;
    }
    return 0;
}

/* ---- counting and expanding ------------------------------------------------------------ */

static int copies(cp_instance *in, const cp_section *sec, int *out, char err[CP_ERR_MAX])
{
    int64_t reps;
    if (int_of(in, sec, "replicate", 0, 0, CP_MAX_REPLICAS, &reps, err)) return -1;
    *out = reps ? (int)reps : 1;
    return 0;
}

static int expand(cp_instance *in, char err[CP_ERR_MAX])
{
    int nq = 0, ns = 0;
    for (int i = 0; i < in->desc->n; i++) {
        const cp_section *sec = &in->desc->sections[i];
        int n = 0;
        if (sec->kind != CP_SEC_GRAPH && copies(in, sec, &n, err)) return -1;
        if (sec->kind == CP_SEC_QUEUE) nq += n;
        if (sec->kind == CP_SEC_STAGE) ns += n;
    }
    in->queues = calloc((size_t)nq + 1, sizeof *in->queues);
    in->stages = calloc((size_t)ns + 1, sizeof *in->stages);
    if (!in->queues || !in->stages) return cp_fail(err, "out of memory");
    for (int i = 0; i < in->desc->n; i++)
        if (in->desc->sections[i].kind == CP_SEC_QUEUE &&
            add_queue_section(in, &in->desc->sections[i], err)) return -1;
    for (int i = 0; i < in->desc->n; i++)
        if (in->desc->sections[i].kind == CP_SEC_STAGE &&
            add_stage_section(in, &in->desc->sections[i], err)) return -1;
    if (ns == 0) return cp_fail(err, "the graph declares no stages");
    int image = 0;
    for (int i = 0; i < in->nstages; i++) image += in->stages[i].image != NULL;
    if (image == in->nstages)
        return cp_fail(err, "the graph declares only image-space stages (they run on the "
                       "image that the graph's other stages make)");
    return 0;
}

/* The one [graph] setting the runtime reads; every other is a variable for $name values. */
static int read_graph_section(cp_instance *in, char err[CP_ERR_MAX])
{
    const cp_section *sec = cp_section_find(in->desc, CP_SEC_GRAPH, NULL);
    if (!sec) return 0;
    int64_t wm;
    if (int_of(in, sec, "low_watermark", 0, 0, CP_MAX_LOW_WATERMARK, &wm, err)) return -1;
    in->low_watermark = (uint32_t)wm;
    in->device_queues = !cp_setting_find(sec, "device_queues");
    if (!in->device_queues && bool_of(in, sec, "device_queues", &in->device_queues, err)) return -1;
    /* checked here too: a graph whose stages have no kernel never reads it otherwise */
    const cp_setting *device = cp_setting_find(sec, "device");
    char v[256];
    cp_placement placement;
    return device ? placement_value(in, device, "[graph]", v, &placement, err) : 0;
}

/* ---- building the gramps graph ----------------------------------------------------------- */

/* The input queue of a stage (its first INPUT port's), or NULL. */
static const gr_queue_desc *input_of(const cp_instance *in, const inst_stage *st)
{
    const cp_stage_type *t = st->init.type;
    for (int p = 0; p < t->nports; p++)
        if (t->ports[p].mode == GR_BIND_INPUT) return &in->queues[st->port_queue[p]].desc;
    return NULL;
}

/* Whether a stage decided for the device writes to st's input queue. */
static bool fed_from_device(const cp_instance *in, const inst_stage *st)
{
    const gr_queue_desc *input = input_of(in, st);
    for (int i = 0; input && i < in->nstages; i++) {
        const inst_stage *p = &in->stages[i];
        const cp_stage_type *t = p->init.type;
        for (int k = 0; p->wants_device && k < t->nports; k++)
            if (t->ports[k].mode != GR_BIND_INPUT && &in->queues[p->port_queue[k]].desc == input)
                return true;
    }
    return false;
}

/* Decides which stages go to the device. An `auto` stage whose two measured times are
 * within a tenth goes where the stage feeding it goes, and that stage may come later in
 * the graph (Intersect feeds Shade, in a cycle), so the decisions repeat until none
 * changes. They start on the CPU and a tie only ever follows a feeder to the device, so
 * each pass that changes something moves one more stage there: at most nstages + 1
 * passes, and the result does not depend on the order of the stages. */
static void decide_placements(cp_instance *in)
{
    for (int i = 0; i < in->nstages; i++) {
        inst_stage *st = &in->stages[i];
        st->wants_device = st->placement == CP_PLACE_OPENCL && !st->image;
        if (st->wants_device)
            snprintf(st->placement_why, sizeof st->placement_why, "device = opencl (%.150s)",
                     st->placement_where);
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < in->nstages; i++) {
            inst_stage *st = &in->stages[i];
            if (st->placement != CP_PLACE_AUTO || st->image) continue;
            const bool device = cp_auto_place(st->init.type, fed_from_device(in, st),
                                              st->placement_why);
            changed |= device != st->wants_device;
            st->wants_device = device;
        }
    }
}

/* Puts the stages that asked for the device on it, before their states are made:
 * opens the device and builds their kernels. `auto` goes where placement.c measured it
 * faster; without a device, it stays on the CPU (one warning) and `opencl` is refused;
 * a kernel that does not build is refused. */
static int place_stages(cp_instance *in, char err[CP_ERR_MAX])
{
    decide_placements(in);
    bool warned = false;
    for (int i = 0; i < in->nstages; i++) {
        inst_stage *st = &in->stages[i];
        if (!st->wants_device) continue;
        char why[CP_ERR_MAX];
        bool no_device;
        st->device = cp_device_stage_new(st->name, st->init.type,
                                         cp_kernel_of(in->desc->r, st->init.type),
                                         input_of(in, st), &no_device, why);
        if (st->device) {
            st->init.on_device = true;
            continue;
        }
        st->wants_device = false;
        snprintf(st->placement_why, sizeof st->placement_why, "auto: no OpenCL device");
        if (!no_device || st->placement == CP_PLACE_OPENCL)
            return cp_fail(err, "%s: stage '%s' (device = %s): %s", st->placement_where, st->name,
                           st->placement == CP_PLACE_OPENCL ? "opencl" : "auto", why);
        if (!warned && ac_first_fallback())
            fprintf(stderr, "warning: %s; the stages placed with device = auto run on the CPU\n", why);
        warned = true;
    }
    return 0;
}

/* Whether this is the first time in the process that a stage of type t goes back to the
 * CPU: the note is printed once, not for every frame (--frames) or graph. */
static bool first_fallback_of(const cp_stage_type *t)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static const cp_stage_type *noted[64];
    static int nnoted;
    pthread_mutex_lock(&lock);
    bool first = true;
    for (int i = 0; i < nnoted && first; i++) first = noted[i] != t;
    if (first && nnoted < 64) noted[nnoted++] = t;
    pthread_mutex_unlock(&lock);
    return first;
}

/* After the states: a placed stage whose instance needs what its kernel lacks goes back
 * to the CPU under `auto`, and is refused under `opencl`. */
static int bind_device_states(cp_instance *in, char err[CP_ERR_MAX])
{
    for (int i = 0; i < in->nstages; i++) {
        inst_stage *st = &in->stages[i];
        if (!st->device) continue;
        const char *why = cp_device_stage_bind(st->device, st->state);
        if (!why) continue;
        if (st->placement == CP_PLACE_OPENCL)
            return cp_fail(err, "%s: stage '%s' (device = opencl) cannot run on the device: %s",
                           st->placement_where, st->name, why);
        if (st->init.replica == 0 && first_fallback_of(st->init.type))
            fprintf(stderr, "note: stage '%s' runs on the CPU (device = auto): %s\n", st->name, why);
        snprintf(st->placement_why, sizeof st->placement_why, "auto: %.180s", why);
        cp_device_stage_free(st->device);
        st->device = NULL;
    }
    return 0;
}

/* The stage's in-place output queue (index into queues), or -1. */
static int inplace_queue_of(const inst_stage *st)
{
    const cp_stage_type *t = st->init.type;
    for (int p = 0; p < t->nports; p++)
        if (t->ports[p].mode == GR_BIND_INPLACE && st->port_copies[p] == 1) return st->port_queue[p];
    return -1;
}

/* The one stage that reads queue q, or NULL when none or several do. */
static inst_stage *sole_consumer(cp_instance *in, int q)
{
    inst_stage *found = NULL;
    for (int i = 0; i < in->nstages; i++) {
        const inst_stage *st = &in->stages[i];
        const cp_stage_type *t = st->init.type;
        for (int p = 0; !st->image && p < t->nports; p++) {
            if (t->ports[p].mode != GR_BIND_INPUT || st->port_queue[p] != q) continue;
            if (found) return NULL;
            found = &in->stages[i];
        }
    }
    return found;
}

/* A queue from a device stage's in-place output to a device stage that reads nothing
 * else keeps its packets' elements on the device (device_queue.c): the producer's
 * emit must not need the rewritten elements, and the consumer's must get them from
 * its own in-place copy back, from its results (cp_kernel.reads_resident) or not need
 * them either. Other writers of the queue (rt.primary into `hits`) keep theirs on the
 * host; the consumer reads each packet from where it is. `[graph] device_queues =
 * false` keeps every queue on the host. */
static int link_device_queues(cp_instance *in, char err[CP_ERR_MAX])
{
    for (int i = 0; in->device_queues && i < in->nstages; i++) {
        inst_stage *a = &in->stages[i];
        int q = a->device && cp_device_stage_resident_ok(a->device) ? inplace_queue_of(a) : -1;
        inst_stage *b = q >= 0 ? sole_consumer(in, q) : NULL;
        inst_queue *queue = q >= 0 ? &in->queues[q] : NULL;
        if (!b || b == a || !b->device || input_of(in, b) != &queue->desc ||
            queue->desc.kind != GR_COLLECTION || queue->desc.subqueues || queue->desc.dynamic_keys)
            continue;
        const cp_kernel *kb = cp_kernel_of(in->desc->r, b->init.type);
        if (!kb->inplace && kb->emit && !kb->resident_emit &&
            !(kb->reads_resident && kb->reads_resident(b->state)))
            continue;
        if (!queue->device && !(queue->device = cp_device_queue_new(queue->name, &queue->desc, err)))
            return -1;
        cp_device_stage_link(a->device, NULL, queue->device);
        cp_device_stage_link(b->device, queue->device, NULL);
    }
    return 0;
}

/* The queue of output slot `slot` (outputs numbered in port order) when it is a PUSH
 * port bound to one queue, else -1. */
static int push_queue_of(const inst_stage *st, int slot)
{
    const cp_stage_type *t = st->init.type;
    for (int p = 0, k = 0; p < t->nports; p++) {
        if (t->ports[p].mode == GR_BIND_INPUT) continue;
        if (k++ != slot) continue;
        return t->ports[p].mode == GR_BIND_PUSH && st->port_copies[p] == 1 ? st->port_queue[p] : -1;
    }
    return -1;
}

/* Whether b, on the device, may read queue's appended elements: it is the queue's only
 * reader, the queue is a plain Collection, and b's emit does not read the bytes that
 * stay on the device (or b's kernel rewrites them in place before emit). */
static bool gathers_from(cp_instance *in, const inst_stage *b, const inst_queue *queue, size_t part)
{
    if (!b || !b->device || input_of(in, b) != &queue->desc || queue->desc.kind != GR_COLLECTION ||
        queue->desc.subqueues || queue->desc.dynamic_keys || part < 8 ||
        part > queue->desc.element_bytes)
        return false;
    const cp_kernel *kb = cp_kernel_of(in->desc->r, b->init.type);
    return kb->inplace || !kb->emit || kb->emit_reads_from >= part;
}

/* A device stage's push whose queue's only reader runs on the device too appends there
 * (device_append.c): the elements' leading bytes stay in device memory. `[graph]
 * device_queues = false` keeps them on the host. */
static int link_device_appends(cp_instance *in, char err[CP_ERR_MAX])
{
    for (int i = 0; in->device_queues && i < in->nstages; i++) {
        inst_stage *a = &in->stages[i];
        const cp_kernel *ka = a->device ? cp_kernel_of(in->desc->r, a->init.type) : NULL;
        for (int k = 0; ka && k < ka->nappends && k < CP_KERNEL_APPENDS; k++) {
            const int q = push_queue_of(a, ka->appends[k].output);
            inst_queue *queue = q >= 0 ? &in->queues[q] : NULL;
            inst_stage *b = q >= 0 ? sole_consumer(in, q) : NULL;
            if (!queue || b == a || !gathers_from(in, b, queue, ka->appends[k].device_bytes)) continue;
            if (!queue->append && !(queue->append = cp_device_append_new(queue->name, &queue->desc,
                                                                         ka->appends[k].device_bytes, err)))
                return -1;
            cp_device_stage_link_append(a->device, k, queue->append);
            cp_device_stage_link_gather(b->device, queue->append);
        }
    }
    return 0;
}

static int make_states(cp_instance *in, char err[CP_ERR_MAX])
{
    for (int i = 0; i < in->nstages; i++) {
        inst_stage *st = &in->stages[i];
        const cp_stage_type *t = st->init.type;
        if (!t->create) { st->state = in->frame; continue; }
        char why[CP_ERR_MAX] = "";
        st->state = t->create(&st->init, why);
        if (!st->state && st->device && st->placement == CP_PLACE_AUTO) {
            /* What it needs on the device does not fit (or could not be made there). */
            if (st->init.replica == 0 && first_fallback_of(t))
                fprintf(stderr, "note: stage '%s' runs on the CPU (device = auto): %s\n", st->name, why);
            snprintf(st->placement_why, sizeof st->placement_why, "auto: %.180s", why);
            cp_device_stage_free(st->device);
            st->device = NULL;
            st->init.on_device = false;
            *why = 0;
            st->state = t->create(&st->init, why);
        }
        if (!st->state)
            return cp_fail(err, "%s: stage '%s' (type %s): %s", st->sec->where, st->name,
                           t->name, *why ? why : "could not be created");
        st->created = true;
    }
    return 0;
}

/* The image-space stages in order, with the halo each instance needs. */
static int list_passes(cp_instance *in, char err[CP_ERR_MAX])
{
    in->passes = calloc((unsigned)in->nstages + 1u, sizeof *in->passes);
    if (!in->passes) return cp_fail(err, "out of memory");
    for (int i = 0; i < in->nstages; i++) {
        const inst_stage *st = &in->stages[i];
        const cp_image_stage_type *im = st->image;
        if (!im) continue;
        int halo = im->halo_of ? im->halo_of(st->state) : im->halo;
        if (halo < 0)
            return cp_fail(err, "%s: stage '%s' (type %s): halo %d < 0", st->sec->where,
                           st->name, st->init.type->name, halo);
        in->passes[in->npasses++] = (cp_image_pass){st->name, im, st->state, halo};
    }
    return 0;
}

int cp_instance_image_passes(const cp_instance *in, const cp_image_pass **passes)
{
    *passes = in->passes;
    return in->npasses;
}

/* The index of copy c of the queue at index first, its copy 0 (a section's copies are
 * consecutive). */
static int copy_of(const cp_instance *in, int first, uint32_t c)
{
    return c < in->queues[first].replicas ? first + (int)c : first;
}

/* A stage placed on the device runs after the stages that feed it unless its section
 * sets a priority: its input queue fills meanwhile, so one launch takes a batch of
 * packets rather than one (cornell at 128x128: 13 launches for 356 tasks, 343 at the
 * derived priority). */
static int priority_of(const inst_stage *st)
{
    return st->device && st->priority == 0 ? -1 : (int)st->priority;
}

static int build(cp_instance *in, char err[CP_ERR_MAX])
{
    gr_graph *g = in->g = gr_graph_create();
    if (!g) return cp_fail(err, "out of memory");
    for (int i = 0; i < in->nqueues; i++)
        if ((in->queues[i].id = gr_queue(g, &in->queues[i].desc)) < 0)
            return cp_fail(err, "%s: %s", in->queues[i].sec->where, gr_error(g));
    for (int i = 0; i < in->nstages; i++) {
        inst_stage *st = &in->stages[i];
        const cp_stage_type *t = st->init.type;
        st->id = GR_INVALID;
        if (st->image) continue;      /* run by the program after the graph */
        char found[GR_ORIGIN_MAX];
        const char *origin = cp_stage_origin(cp_graph_registry(in->desc), t);
        if (!origin) {                /* a type from a plugin registry */
            cp_origin_of(t, found);
            origin = found;
        }
        int id = st->id = gr_stage(g, &(gr_stage_desc){.name = st->name, .kind = t->kind,
                                               .main = st->device ? cp_device_stage_main : t->main,
                                               .user = st->device ? (void *)st->device : st->state,
                                               .device = st->device ? "opencl" : NULL,
                                               .placement = st->placement_why[0] ? st->placement_why : NULL,
                                               .batch = st->device ? cp_device_stage_batch : NULL,
                                               .batch_max = st->device ? CP_DEVICE_BATCH : 0,
                                               .set_pushes = st->device ? cp_device_stage_set_pushes(st->device) : NULL,
                                               .instanced = t->instanced != CP_ONE_INSTANCE,
                                               .every_subqueue = t->instanced == CP_PER_EVERY_SUBQUEUE,
                                               .priority = priority_of(st), .fifo = st->fifo,
                                               .low_watermark = (uint32_t)st->low_watermark,
                                               .coalesce_input = st->flow.coalesce_input,
                                               .recirculate = st->flow.recirculate,
                                               .reduce_per_key = st->flow.reduce_per_key,
                                               .ticket_order = st->flow.ticket_order,
                                               .replicated = st->replicated, .origin = origin});
        if (id < 0) return cp_fail(err, "%s: %s", st->sec->where, gr_error(g));
        for (int p = 0; p < t->nports; p++)
            for (uint32_t c = 0; c < st->port_copies[p]; c++)
                if (gr_bind(g, id, t->ports[p].mode, in->queues[copy_of(in, st->port_queue[p], c)].id) < 0)
                    return cp_fail(err, "%s: stage '%s' port '%s': %s",
                                   cp_setting_find(st->sec, t->ports[p].name)->where,
                                   st->name, t->ports[p].name, gr_error(g));
    }
    return 0;
}

cp_instance *cp_instance_new(cp_graph *g, void *frame, const cp_vars *vars, char err[CP_ERR_MAX])
{
    cp_instance *in = calloc(1, sizeof *in);
    if (!in) { cp_fail(err, "out of memory"); return NULL; }
    in->desc = g;
    in->vars = vars;
    in->frame = frame;
    if (read_graph_section(in, err) || expand(in, err) || place_stages(in, err) ||
        make_states(in, err) || bind_device_states(in, err) || link_device_queues(in, err) ||
        link_device_appends(in, err) ||
        list_passes(in, err) ||
        build(in, err)) {
        cp_instance_free(in);
        return NULL;
    }
    return in;
}

void cp_instance_free(cp_instance *in)
{
    if (!in) return;
    /* The workers first: a launch that failed after some of them started leaves them
     * running stage code until they are joined (gr_wait of a graph never launched does
     * nothing). */
    if (in->g) gr_wait(in->g);
    for (int i = 0; i < in->nstages; i++) {
        inst_stage *st = &in->stages[i];
        const cp_stage_type *t = st->init.type;
        if (st->created && t->destroy) t->destroy(st->state);
        cp_device_stage_free(st->device);
        for (int p = 0; st->params && p < t->nparams; p++)
            if (t->params[p].type == CP_STRING) free(st->params[p].s);
        free(st->params);
        free(st->port_queue);
        free(st->port_copies);
    }
    gr_graph_destroy(in->g);
    for (int i = 0; in->queues && i < in->nqueues; i++) {
        cp_device_queue_free(in->queues[i].device);
        cp_device_append_free(in->queues[i].append);
    }
    free(in->passes);
    free(in->stages);
    free(in->queues);
    free(in);
}

gr_graph *cp_instance_graph(const cp_instance *in) { return in->g; }

gr_graph *cp_instance_take_graph(cp_instance *in)
{
    gr_graph *g = in->g;
    in->g = NULL;
    return g;
}

gr_launch_opts cp_instance_launch_opts(const cp_instance *in, const gr_launch_opts *base)
{
    gr_launch_opts o = base ? *base : (gr_launch_opts){0};
    if (in->low_watermark) o.low_watermark = in->low_watermark;
    return o;
}

static const inst_stage *stage_with_id(const cp_instance *in, int id)
{
    for (int i = 0; id != GR_INVALID && i < in->nstages; i++)
        if (in->stages[i].id == id) return &in->stages[i];
    return NULL;
}

static const inst_queue *queue_with_id(const cp_instance *in, int id)
{
    for (int i = 0; id != GR_INVALID && i < in->nqueues; i++)
        if (in->queues[i].id == id) return &in->queues[i];
    return NULL;
}

/* The setting that binds queue q to one of stage st's ports, or NULL. */
static const cp_setting *binding_of(const cp_instance *in, const inst_stage *st, const inst_queue *q)
{
    const cp_stage_type *t = st->init.type;
    for (int p = 0; p < t->nports; p++)
        for (uint32_t c = 0; c < st->port_copies[p]; c++)
            if (&in->queues[copy_of(in, st->port_queue[p], c)] == q)
                return cp_setting_find(st->sec, t->ports[p].name);
    return NULL;
}

/* Where the queue's `ordered` was set, when not in its section's first lines (a later
 * layer, --set or --edit changed it): the edit an ordered-chain error most likely follows. */
static void queue_note(const inst_queue *q, char *note, size_t size)
{
    const cp_setting *o = cp_setting_find(q->sec, "ordered");
    if (o && strcmp(o->where, q->sec->where))
        snprintf(note, size, ", ordered = %s at %s", o->value, o->where);
}

/* The runtime's message for a graph it refused, with the place the user wrote what it is
 * about (gr_error_blame): the stage's binding of the queue, else the stage's or the
 * queue's section. */
static void run_error(const cp_instance *in, char err[CP_ERR_MAX])
{
    int sid, qid;
    gr_error_blame(in->g, &sid, &qid);
    const inst_stage *st = stage_with_id(in, sid);
    const inst_queue *q = queue_with_id(in, qid);
    const cp_setting *bound = st && q ? binding_of(in, st, q) : NULL;
    const char *msg = gr_error(in->g);
    char note[700] = "";
    if (q) queue_note(q, note, sizeof note);
    if (bound)
        cp_fail(err, "%s: [stage %s] %s = %s: %s (queue '%s' is declared at %s%s)", bound->where,
                st->sec->name, bound->key, bound->value, msg, q->base, q->sec->where, note);
    else if (st || q)
        cp_fail(err, "%s: %s%s%s%s", st ? st->sec->where : q->sec->where, msg, *note ? " (queue" : "",
                note, *note ? ")" : "");
    else
        cp_fail(err, "%s", msg);
}

/* The busy time and tasks of each stage type placed by `auto` (its copies summed, on
 * the side they ran), for placement.c's next decision. Not from simulated runs, whose
 * times are virtual. */
static void record_auto_times(const cp_instance *in)
{
    const gr_stats *stats = gr_get_stats(in->g);
    if (!stats || stats->simulated_workers) return;
    for (int i = 0; i < in->nstages; i++) {
        const inst_stage *st = &in->stages[i];
        bool first = true;
        for (int j = 0; j < i && first; j++)
            first = in->stages[j].init.type != st->init.type || in->stages[j].placement != CP_PLACE_AUTO;
        if (st->placement != CP_PLACE_AUTO || st->image || !first) continue;
        double busy = 0;
        uint64_t tasks = 0;
        for (int j = i; j < in->nstages; j++) {
            const inst_stage *o = &in->stages[j];
            if (o->init.type != st->init.type || o->placement != CP_PLACE_AUTO ||
                (o->device != NULL) != (st->device != NULL)) continue;
            busy += stats->stages[o->id].busy_ms;
            tasks += stats->stages[o->id].tasks;
        }
        cp_auto_measured(st->init.type, st->device != NULL, busy, tasks);
    }
}

gr_status cp_instance_run(cp_instance *in, const gr_launch_opts *base, char err[CP_ERR_MAX])
{
    gr_launch_opts o = cp_instance_launch_opts(in, base);
    gr_status st = in->ran ? gr_relaunch(in->g) : gr_launch(in->g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(in->g);
    in->ran = st == GR_OK;
    if (st != GR_OK) {
        run_error(in, err);
        return st;
    }
    for (int i = 0; i < in->nstages; i++) {
        const cp_stage_type *t = in->stages[i].init.type;
        if (t->finish && !in->stages[i].image) t->finish(in->stages[i].state, in->frame);
    }
    record_auto_times(in);
    return GR_OK;
}

bool cp_instance_renewable(const cp_instance *in)
{
    for (int i = 0; i < in->nstages; i++)
        if (in->stages[i].device || in->stages[i].placement == CP_PLACE_AUTO) return false;
    return true;
}

/* The stages' states destroyed and made again by their create hooks, which read the
 * frame as it is now, and handed to the graph's stages for its next run. */
int cp_instance_renew(cp_instance *in, char err[CP_ERR_MAX])
{
    if (!in->ran || !cp_instance_renewable(in))
        return cp_fail(err, "cp_instance_renew: the instance has %s", in->ran ? "stages on a "
                       "device or placed by `auto` (chosen per instance)" : "no finished run to repeat");
    for (int i = 0; i < in->nstages; i++) {
        inst_stage *st = &in->stages[i];
        if (st->created && st->init.type->destroy) st->init.type->destroy(st->state);
        st->created = false;
        st->state = NULL;
    }
    free(in->passes);
    in->passes = NULL;
    in->npasses = 0;
    if (make_states(in, err) || list_passes(in, err)) return -1;
    for (int i = 0; i < in->nstages; i++) {
        const inst_stage *st = &in->stages[i];
        if (st->id != GR_INVALID && gr_stage_set_user(in->g, st->id, st->state) != GR_OK)
            return cp_fail(err, "stage '%s': its state cannot be handed to the graph", st->name);
    }
    return 0;
}

void *cp_instance_state(const cp_instance *in, const char *stage)
{
    for (int i = 0; i < in->nstages; i++)
        if (!strcmp(in->stages[i].name, stage)) return in->stages[i].state;
    return NULL;
}

/* ---- what create reads ------------------------------------------------------------------- */

static const inst_stage *stage_of(const cp_stage_init *i) { return (const inst_stage *)i; }

static const param_value *param(const cp_stage_init *i, const char *name, cp_param_type want)
{
    int idx;
    const cp_param *p = find_param(i->type, name, &idx);
    if (!p || p->type != want) {
        fprintf(stderr, "stage type '%s' reads parameter '%s' it does not declare as that "
                "type\n", i->type->name, name);
        abort();                       /* a programming error in the stage type */
    }
    return &stage_of(i)->params[idx];
}

int64_t cp_int(const cp_stage_init *i, const char *name) { return param(i, name, CP_INT)->i; }
double cp_float(const cp_stage_init *i, const char *name) { return param(i, name, CP_FLOAT)->f; }
bool cp_bool(const cp_stage_init *i, const char *name) { return param(i, name, CP_BOOL)->b; }
const char *cp_string(const cp_stage_init *i, const char *name) { return param(i, name, CP_STRING)->s; }

static const inst_queue *port_q(const cp_stage_init *i, const char *port)
{
    const cp_stage_type *t = i->type;
    for (int p = 0; p < t->nports; p++)
        if (!strcmp(t->ports[p].name, port))
            return &i->instance->queues[stage_of(i)->port_queue[p]];
    fprintf(stderr, "stage type '%s' asks for port '%s' it does not declare\n", t->name, port);
    abort();
}

size_t cp_port_packet_bytes(const cp_stage_init *i, const char *port)
{
    const gr_queue_desc *d = &port_q(i, port)->desc;
    return d->kind == GR_OPAQUE ? d->packet_bytes : d->header_bytes + d->elements * d->element_bytes;
}

uint32_t cp_port_elements(const cp_stage_init *i, const char *port) { return port_q(i, port)->elements; }
uint32_t cp_port_subqueues(const cp_stage_init *i, const char *port) { return port_q(i, port)->desc.subqueues; }

uint32_t cp_port_copies(const cp_stage_init *i, const char *port)
{
    const cp_stage_type *t = i->type;
    for (int p = 0; p < t->nports; p++)
        if (!strcmp(t->ports[p].name, port)) return stage_of(i)->port_copies[p];
    return 1;
}

/* edits.c — the edits a graph file layered over another makes to it (cp_graph_layer):
 * `after = STAGE[.PORT]` and `before = STAGE[.PORT]` insert a new stage into an edge (the
 * one that leaves STAGE's output, or enters its input), `remove = true` takes a stage or
 * queue out. They are applied once the file's sections are in the graph, in the
 * order of the sections, and the edit settings are dropped: what stays is an ordinary
 * description, as if the graph had been written whole. */
#include "compose/internal.h"

#include <stdlib.h>
#include <string.h>

#define NAME_MAX_CP 128

typedef struct edit {
    cp_section_kind kind;
    char name[NAME_MAX_CP];
    bool opened_here;                  /* the layer opened the section */
} edit;

static const char *kind_word(cp_section_kind k) { return k == CP_SEC_STAGE ? "stage" : "queue"; }

static cp_section *section_of(cp_graph *g, const edit *e) { return cp_section_find(g, e->kind, e->name); }

/* A stage section's type, or NULL (with a message when `where` is given). */
static const cp_stage_type *type_of(const cp_graph *g, const cp_section *s, const char *where,
                                    char err[CP_ERR_MAX])
{
    const cp_setting *t = cp_setting_find(s, "type");
    const cp_stage_type *type = t ? cp_find_stage(g->r, t->value) : NULL;
    if (!type && where && !t)
        cp_fail(err, "%s: [stage %s] has no type", where, s->name);
    else if (!type && where)
        cp_fail(err, "%s: [stage %s]: unknown stage type '%s' (--list-stages lists them; a "
                "plugin's type needs the plugin in [graph] plugins or --plugin)", t->where,
                s->name, t->value);
    return type;
}

static bool is_input(const cp_port *p) { return p->mode == GR_BIND_INPUT; }

/* The one port of t with the given direction and format, or NULL (*count: how many). */
static const cp_port *port_of_format(const cp_stage_type *t, bool input, const char *format,
                                     int *count)
{
    const cp_port *found = NULL;
    *count = 0;
    for (int i = 0; i < t->nports; i++)
        if (is_input(&t->ports[i]) == input && !strcmp(t->ports[i].format, format)) {
            found = &t->ports[i];
            (*count)++;
        }
    return *count == 1 ? found : NULL;
}

static int put(cp_graph *g, const char *kind, const char *name, const char *key,
               const char *value, const char *where, char err[CP_ERR_MAX])
{
    char section[2 * NAME_MAX_CP];
    snprintf(section, sizeof section, "%s %s", kind, name);
    return cp_put(g, section, key, value, where, err);
}

/* ---- remove ------------------------------------------------------------------------- */

/* Stage s bound to exactly one input and one output queue of the same format: their
 * names, for splicing it out. */
static bool splicable(const cp_graph *g, const cp_section *s, char in[NAME_MAX_CP],
                      char out[NAME_MAX_CP])
{
    const cp_stage_type *t = type_of(g, s, NULL, NULL);
    int nin = 0, nout = 0;
    for (int i = 0; t && i < t->nports; i++) {
        const cp_setting *b = cp_setting_find(s, t->ports[i].name);
        if (b && is_input(&t->ports[i])) snprintf(in, NAME_MAX_CP, "%s", b->value), nin++;
        else if (b) snprintf(out, NAME_MAX_CP, "%s", b->value), nout++;
    }
    if (nin != 1 || nout != 1 || !strcmp(in, out)) return false;
    const cp_section *a = cp_section_find(g, CP_SEC_QUEUE, in), *b = cp_section_find(g, CP_SEC_QUEUE, out);
    const cp_setting *fa = a ? cp_setting_find(a, "format") : NULL;
    const cp_setting *fb = b ? cp_setting_find(b, "format") : NULL;
    return fa && fb && !strcmp(fa->value, fb->value);
}

/* Every stage that binds queue `from` binds `to` instead (the removed stage was `from`'s
 * one consumer, so these are its producers; a `from[*]` binding is left, and refused
 * later as naming no queue). */
static int rebind(cp_graph *g, const char *from, const char *to, const char *where,
                  char err[CP_ERR_MAX])
{
    for (int i = 0; i < g->n; i++) {
        cp_section *s = &g->sections[i];
        for (int k = 0; s->kind == CP_SEC_STAGE && k < s->n; k++) {
            cp_setting *b = &s->settings[k];
            if (strcmp(b->key, "type") && !strcmp(b->value, from)) {
                char *v = cp_strdup(to), *w = cp_strdup(where);
                if (!v || !w) { free(v); free(w); return cp_fail(err, "out of memory"); }
                free(b->value);
                free(b->where);
                b->value = v;
                b->where = w;
            }
        }
    }
    return 0;
}

static int apply_remove(cp_graph *g, const edit *e, char err[CP_ERR_MAX])
{
    cp_section *s = section_of(g, e);
    const cp_setting *rm = cp_setting_find(s, "remove");
    bool yes;
    if (cp_parse_bool(rm, rm->value, &yes, err)) return -1;
    if (!yes) { cp_unset(s, "remove"); return 0; }
    char where[512], section[NAME_MAX_CP + 8], in[NAME_MAX_CP], out[NAME_MAX_CP];
    snprintf(where, sizeof where, "%s", rm->where);
    snprintf(section, sizeof section, "%s %s", kind_word(e->kind), e->name);
    if (e->opened_here)
        return cp_fail(err, "%s: [%s] remove = true: the graph has no %s '%s' to remove", where,
                       section, kind_word(e->kind), e->name);
    bool splice = e->kind == CP_SEC_STAGE && splicable(g, s, in, out);
    if (cp_remove(g, section, err)) return -1;
    if (!splice) return 0;
    char queue[NAME_MAX_CP + 8];
    snprintf(queue, sizeof queue, "queue %s", in);
    return rebind(g, in, out, where, err) || cp_remove(g, queue, err) ? -1 : 0;
}

/* ---- after and before ---------------------------------------------------------------- */

/* Where an `after` or `before` edit inserts its stage: STAGE's port and the queue it
 * binds (the edge). */
typedef struct edge {
    bool after;                        /* after STAGE's output, else before its input */
    char stage[NAME_MAX_CP], port[NAME_MAX_CP], queue[NAME_MAX_CP];
    const cp_section *queue_sec;       /* valid until a section is added */
    const char *key, *value, *where;   /* the edit as written */
} edge;

static const char *direction(const edge *e) { return e->after ? "output" : "input"; }

/* The one port of the edge's direction that stage s binds, or the message naming those
 * it binds. */
static const cp_port *only_bound_port(const cp_section *s, const cp_stage_type *t, const edge *e,
                                      char err[CP_ERR_MAX])
{
    const cp_port *found = NULL;
    char names[512] = "";
    int n = 0;
    for (int i = 0; i < t->nports; i++) {
        if (is_input(&t->ports[i]) == e->after || !cp_setting_find(s, t->ports[i].name)) continue;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", n++ ? ", " : "", t->ports[i].name);
        found = &t->ports[i];
    }
    if (n == 1) return found;
    cp_fail(err, "%s: %s = %s: stage '%s' binds %d %ss (%s): name one, %s = %s.PORT", e->where,
            e->key, e->value, s->name, n, direction(e), names, e->key, s->name);
    return NULL;
}

static const cp_port *named_port(const cp_stage_type *t, const edge *e, const char *name,
                                 char err[CP_ERR_MAX])
{
    for (int i = 0; i < t->nports; i++)
        if (!strcmp(t->ports[i].name, name) && is_input(&t->ports[i]) != e->after) return &t->ports[i];
    cp_fail(err, "%s: %s = %s: stage '%s' (type %s) has no %s port '%s' (--list-stages %s "
            "shows its ports)", e->where, e->key, e->value, e->stage, t->name, direction(e),
            name, t->name);
    return NULL;
}

static int find_edge(const cp_graph *g, edge *e, char err[CP_ERR_MAX])
{
    const char *dot = strchr(e->value, '.');
    size_t len = dot ? (size_t)(dot - e->value) : strlen(e->value);
    if (len == 0 || len >= NAME_MAX_CP || (dot && !dot[1]))
        return cp_fail(err, "%s: %s = %s: expected STAGE or STAGE.PORT", e->where, e->key, e->value);
    snprintf(e->stage, sizeof e->stage, "%.*s", (int)len, e->value);
    const cp_section *p = cp_section_find(g, CP_SEC_STAGE, e->stage);
    if (!p) return cp_fail(err, "%s: %s = %s: the graph has no stage '%s'", e->where, e->key,
                           e->value, e->stage);
    const cp_stage_type *t = type_of(g, p, e->where, err);
    const cp_port *port = !t ? NULL : dot ? named_port(t, e, dot + 1, err) : only_bound_port(p, t, e, err);
    if (!port) return -1;
    const cp_setting *b = cp_setting_find(p, port->name);
    if (!b) return cp_fail(err, "%s: %s = %s: port '%s' of stage '%s' is bound to no queue",
                           e->where, e->key, e->value, port->name, e->stage);
    snprintf(e->port, sizeof e->port, "%s", port->name);
    snprintf(e->queue, sizeof e->queue, "%s", b->value);
    e->queue_sec = cp_section_find(g, CP_SEC_QUEUE, e->queue);
    if (!e->queue_sec)
        return cp_fail(err, "%s: %s = %s: stage '%s' port '%s' binds '%s', which is no queue "
                       "of the graph (a [*] binding of every copy cannot take a stage)", e->where,
                       e->key, e->value, e->stage, port->name, e->queue);
    return 0;
}

/* The new stage's input and output ports for an edge of `format`. */
static int inserted_ports(const cp_section *s, const cp_stage_type *t, const char *format,
                          const edge *e, const cp_port **in, const cp_port **out,
                          char err[CP_ERR_MAX])
{
    int nin, nout;
    *in = port_of_format(t, true, format, &nin);
    *out = port_of_format(t, false, format, &nout);
    if (!*in || !*out)
        return cp_fail(err, "%s: [stage %s] %s = %s: type '%s' has %d inputs and %d outputs "
                       "of the edge's format '%s'; a stage inserted into an edge needs one of "
                       "each", e->where, s->name, e->key, e->value, t->name, nin, nout, format);
    const cp_port *bound = cp_setting_find(s, (*in)->name) ? *in
                           : cp_setting_find(s, (*out)->name) ? *out : NULL;
    if (bound)
        return cp_fail(err, "%s: [stage %s] port '%s' is bound by `%s`; leave it out",
                       cp_setting_find(s, bound->name)->where, s->name, bound->name, e->key);
    return 0;
}

/* The new queue: the edge queue's settings, less a queue set's when it feeds the new
 * stage (after: the packets keep their keys on the way to the set), all of them when it
 * feeds the edge's consumer in the edge queue's place (before). */
static int add_edge_queue(cp_graph *g, const edge *e, const char *name, char err[CP_ERR_MAX])
{
    static const char *const copied[] = {"format", "capacity", "elements", "ordered", "replicate",
                                         "subqueues", "dynamic_keys", "max_keys"};
    for (int i = 0; i < (e->after ? 5 : 8); i++) {
        /* found again each time: adding the new section may move the others */
        const cp_section *edge_queue = cp_section_find(g, CP_SEC_QUEUE, e->queue);
        const cp_setting *v = cp_setting_find(edge_queue, copied[i]);
        char value[256];
        if (!v) continue;
        snprintf(value, sizeof value, "%s", v->value);
        if (put(g, "queue", name, copied[i], value, e->where, err)) return -1;
    }
    return 0;
}

/* The bindings: after: STAGE -> new queue -> the stage -> edge queue; before: edge queue
 * -> the stage -> new queue -> STAGE. A stage inserted into a replicated edge is
 * replicated as its queue is, unless it says otherwise. */
static int bind_insert(cp_graph *g, const edge *e, const char *stage, const cp_port *in,
                       const cp_port *out, const char *queue, const char *replicate,
                       char err[CP_ERR_MAX])
{
    if (add_edge_queue(g, e, queue, err) || put(g, "stage", e->stage, e->port, queue, e->where, err) ||
        put(g, "stage", stage, in->name, e->after ? queue : e->queue, e->where, err) ||
        put(g, "stage", stage, out->name, e->after ? e->queue : queue, e->where, err))
        return -1;
    return *replicate ? put(g, "stage", stage, "replicate", replicate, e->where, err) : 0;
}

static int apply_insert(cp_graph *g, const edit *ed, const char *key, char err[CP_ERR_MAX])
{
    cp_section *s = section_of(g, ed);
    const cp_setting *a = cp_setting_find(s, key);
    char where[512], value[256], queue[NAME_MAX_CP + 4], stage[NAME_MAX_CP], reps[256] = "";
    snprintf(where, sizeof where, "%s", a->where);
    snprintf(value, sizeof value, "%s", a->value);
    snprintf(stage, sizeof stage, "%s", s->name);
    edge e = {.after = !strcmp(key, "after"), .key = key, .value = value, .where = where};
    if (!ed->opened_here)
        return cp_fail(err, "%s: [stage %s] %s = %s: stage '%s' is already in the graph; "
                       "`%s` places a new stage (remove this one first)", where, stage, key,
                       value, stage, key);
    const cp_stage_type *t;
    const cp_port *in, *out;
    const cp_setting *format;
    if (find_edge(g, &e, err) || !(t = type_of(g, s, where, err))) return -1;
    if (!(format = cp_setting_find(e.queue_sec, "format")))
        return cp_fail(err, "%s: %s = %s: queue '%s' has no format", where, key, value, e.queue);
    if (inserted_ports(s, t, format->value, &e, &in, &out, err)) return -1;
    if (snprintf(queue, sizeof queue, "%s-%s", stage, e.after ? "in" : "out") >= NAME_MAX_CP ||
        cp_section_find(g, CP_SEC_QUEUE, queue))
        return cp_fail(err, "%s: [stage %s] %s: the queue it would add, '%s', is already in "
                       "the graph (or the name is too long)", where, stage, key, queue);
    const cp_setting *r = cp_setting_find(e.queue_sec, "replicate");
    if (r && !cp_setting_find(s, "replicate")) snprintf(reps, sizeof reps, "%s", r->value);
    cp_unset(s, key);                  /* s moves when sections are added below */
    return bind_insert(g, &e, stage, in, out, queue, reps, err);
}

/* ---- the edits of a layer -------------------------------------------------------------- */

static int check_kinds(const cp_section *s, char err[CP_ERR_MAX])
{
    const cp_setting *a = s->kind == CP_SEC_QUEUE ? cp_setting_find(s, "after") : NULL;
    const cp_setting *b = s->kind == CP_SEC_QUEUE ? cp_setting_find(s, "before") : NULL;
    if (a || b) return cp_fail(err, "%s: [queue %s] %s: only a stage is inserted into an edge",
                               (a ? a : b)->where, s->name, a ? "after" : "before");
    const cp_setting *both = cp_setting_find(s, "before");
    if (both && cp_setting_find(s, "after"))
        return cp_fail(err, "%s: [stage %s]: `after` or `before`, not both", both->where, s->name);
    return 0;
}

int cp_apply_edits(cp_graph *g, int first_new, char err[CP_ERR_MAX])
{
    edit *edits = calloc((size_t)g->n + 1, sizeof *edits);
    int n = 0, rc = 0;
    if (!edits) return cp_fail(err, "out of memory");
    for (int i = 0; i < g->n && !rc; i++) {
        const cp_section *s = &g->sections[i];
        if (s->kind == CP_SEC_GRAPH) continue;
        rc = check_kinds(s, err);
        if (!cp_setting_find(s, "remove") && !cp_setting_find(s, "after") &&
            !cp_setting_find(s, "before")) continue;
        edits[n] = (edit){.kind = s->kind, .opened_here = i >= first_new};
        snprintf(edits[n++].name, NAME_MAX_CP, "%s", s->name);
    }
    for (int i = 0; i < n && !rc; i++) {
        cp_section *s = section_of(g, &edits[i]);
        if (s && cp_setting_find(s, "remove")) rc = apply_remove(g, &edits[i], err);
        s = rc ? NULL : section_of(g, &edits[i]);   /* gone when removed or spliced out */
        if (s && cp_setting_find(s, "after")) rc = apply_insert(g, &edits[i], "after", err);
        else if (s && cp_setting_find(s, "before")) rc = apply_insert(g, &edits[i], "before", err);
    }
    free(edits);
    return rc;
}

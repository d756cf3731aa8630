/* resources.c — frame resource types in the registry, the stage types' declarations of
 * what they use, and what a graph's stages may ask the frame for. */
#include "compose/internal.h"

#include <string.h>

const cp_resource_type *cp_find_resource(const cp_registry *r, const char *name)
{
    for (int i = 0; i < r->resources.n; i++) {
        const cp_resource_type *t = r->resources.items[i];
        if (!strcmp(t->name, name)) return t;
    }
    return NULL;
}

static int check_resource(const cp_resource_type *t, char err[CP_ERR_MAX])
{
    if (!t->name || !*t->name) return cp_fail(err, "a frame resource has no name");
    if (!t->create != !t->destroy)
        return cp_fail(err, "resource '%s': create and destroy come as a pair", t->name);
    if (!t->create && (t->element_bytes == 0 || t->extent == CP_PER_SCENE))
        return cp_fail(err, "resource '%s': an array of elements needs element_bytes and a "
                       "per-pixel, per-sample or per-tile extent (else give create)", t->name);
    bool any_size = t->clear_element && t->element_bytes % 4 == 0 && t->element_bytes <= 16;
    if (t->clear == CP_CLEAR_EACH_RUN && (t->create || !(t->element_bytes == 4 || any_size)))
        return cp_fail(err, "resource '%s': only arrays of 4-byte elements, or of up to 16 "
                       "bytes (a multiple of 4) with clear_element, are cleared each run", t->name);
    return 0;
}

int cp_register_resource(cp_registry *r, const cp_resource_type *t, char err[CP_ERR_MAX])
{
    if (check_resource(t, err)) return -1;
    if (cp_find_resource(r, t->name))
        return cp_fail(err, "resource '%s' is registered twice", t->name);
    return cp_list_add(&r->resources, (void *)t) ? cp_fail(err, "out of memory") : 0;
}

int cp_check_resource_uses(const cp_registry *r, const cp_stage_type *t, char err[CP_ERR_MAX])
{
    const unsigned all = CP_READS | CP_WRITES | CP_OVERWRITES;
    for (int i = 0; i < t->nresources; i++) {
        const cp_resource_use *u = &t->resources[i];
        if (!u->name || !cp_find_resource(r, u->name))
            return cp_fail(err, "stage type '%s': resource '%s' is not registered (register "
                           "resources first)", t->name, u->name ? u->name : "(no name)");
        if (!(u->access & all) || (u->access & ~(all | CP_WITH_HDR)))
            return cp_fail(err, "stage type '%s': resource '%s': access must be CP_READS, "
                           "CP_WRITES and/or CP_OVERWRITES (and CP_WITH_HDR)", t->name, u->name);
        for (int k = 0; k < i; k++)
            if (!strcmp(t->resources[k].name, u->name))
                return cp_fail(err, "stage type '%s': resource '%s' declared twice", t->name,
                               u->name);
    }
    return 0;
}

static const cp_resource_use *use_of(const cp_stage_type *t, const char *name)
{
    for (int i = 0; i < t->nresources; i++)
        if (!strcmp(t->resources[i].name, name)) return &t->resources[i];
    return NULL;
}

const cp_resource_type *cp_stage_resource(const cp_stage_init *i, const char *name,
                                          unsigned *access)
{
    const cp_resource_use *u = use_of(i->type, name);
    if (!u) return NULL;
    *access = u->access;
    return cp_find_resource(cp_instance_registry(i->instance), name);
}

/* ---- what a graph needs ---------------------------------------------------------------- */

/* The copies a stage section makes: its `replicate`, 1 without one (or without vars). */
static int copies_of(const cp_graph *g, const cp_vars *vars, const cp_section *sec,
                     unsigned *copies, char err[CP_ERR_MAX])
{
    const cp_setting *s = vars ? cp_setting_find(sec, "replicate") : NULL;
    char buf[256];
    int64_t n = 1;
    if (s && (!cp_resolve(g, vars, s, buf, err) || cp_parse_int(s, buf, &n, err))) return -1;
    *copies = n > 0 ? (unsigned)n : 1;
    return 0;
}

static int add_need(cp_resource_need *needs, int *n, const cp_resource_type *t,
                    unsigned access, unsigned copies, char err[CP_ERR_MAX])
{
    for (int i = 0; i < *n; i++)
        if (needs[i].type == t) {
            /* conditional only while every user's use is */
            unsigned with_hdr = needs[i].access & access & CP_WITH_HDR;
            needs[i].access = ((needs[i].access | access) & ~(unsigned)CP_WITH_HDR) | with_hdr;
            needs[i].copies += copies;
            return 0;
        }
    if (*n == CP_MAX_RESOURCES)
        return cp_fail(err, "the graph's stages use more than %d frame resources", CP_MAX_RESOURCES);
    needs[(*n)++] = (cp_resource_need){t, access, copies};
    return 0;
}

int cp_graph_resources(const cp_graph *g, const cp_vars *vars,
                       cp_resource_need needs[CP_MAX_RESOURCES], char err[CP_ERR_MAX])
{
    int n = 0;
    for (int s = 0; s < g->n; s++) {
        const cp_section *sec = &g->sections[s];
        const cp_setting *type = sec->kind == CP_SEC_STAGE ? cp_setting_find(sec, "type") : NULL;
        if (!type) continue;
        const cp_stage_type *t = cp_find_stage(g->r, type->value);
        unsigned copies;
        if (!t) continue;                 /* cp_instance_new names it */
        if (copies_of(g, vars, sec, &copies, err)) return -1;
        for (int i = 0; i < t->nresources; i++) {
            const cp_resource_use *u = &t->resources[i];
            unsigned makers = u->access & (CP_WRITES | CP_OVERWRITES) ? copies : 0;
            if (add_need(needs, &n, cp_find_resource(g->r, u->name), u->access, makers, err))
                return -1;
        }
    }
    return n;
}

const cp_resource_need *cp_resource_needed(const cp_resource_need *needs, int n,
                                           const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(needs[i].type->name, name)) return &needs[i];
    return NULL;
}

/* ---- listing --------------------------------------------------------------------------- */

static const char *access_name(unsigned a)
{
    static const char *const names[8] = {"?", "reads", "writes", "reads, writes", "overwrites",
                                         "reads, overwrites", "writes, overwrites",
                                         "reads, writes, overwrites"};
    return names[a & 7];
}

void cp_print_resource_uses(const cp_stage_type *t, FILE *out)
{
    for (int i = 0; i < t->nresources; i++)
        fprintf(out, "    uses  %-14s %s%s%s\n", t->resources[i].name,
                access_name(t->resources[i].access), t->resources[i].help ? "  " : "",
                t->resources[i].help ? t->resources[i].help : "");
}

void cp_print_resource(const cp_resource_type *t, FILE *out)
{
    static const char *const extents[] = {"a pixel", "a sample", "a tile", "a scene triangle"};
    fprintf(out, "%s: %s, ", t->name, t->element ? t->element : "?");
    if (t->element_bytes) fprintf(out, "%zu B %s", t->element_bytes, extents[t->extent]);
    else fprintf(out, "no storage of its own");
    fprintf(out, "%s%s%s%s\n", t->per_copy ? ", one per stage copy" : "",
            t->clear == CP_CLEAR_EACH_RUN ? ", cleared each run"
            : t->clear == CP_CLEAR_KEEP  ? ", kept across runs"
                                         : "",
            t->help ? ". " : "",
            t->help ? t->help : "");
}

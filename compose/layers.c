/* layers.c — a graph file loaded over other graphs: its [graph] `base` (a graph the
 * program knows by name, or a file relative to this one) first, with the base's own base
 * before it, then the file's sections over them, its plugins, then its edits (edits.c).
 * A program layers several files in turn (gramps-render's -p and --graph).
 *
 * Each graph is loaded once: a base already under the graph is not loaded again, and a
 * base that is not, over a graph that holds something else, is an error (the file was
 * written over another graph). Bases that lead back to a file being loaded are a cycle. */
#include "compose/internal.h"

#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define CP_MAX_LAYER_DEPTH 16

typedef struct layer {
    char id[PATH_MAX];                 /* the name, or the file's real path */
    const char *origin;                /* as given: for messages */
    const char *text;
    char *file_text;                   /* a file's text (malloc'd), NULL for a named graph */
    cp_graph *own;                     /* the layer alone (its base and plugins; base_dir:
                                          a file's directory) */
} layer;

/* The graphs being loaded, outermost first (to find cycles of bases). */
typedef struct chain {
    const char *ids[CP_MAX_LAYER_DEPTH];
    int n;
} chain;

typedef struct layering {
    cp_graph *g;
    cp_registry *plugins;
    const cp_named_graphs *named;      /* NULL: none */
} layering;

static const char *named_text(const layering *c, const char *name)
{
    return c->named ? c->named->text(c->named->ctx, name) : NULL;
}

static void close_layer(layer *l)
{
    free(l->file_text);
    cp_graph_free(l->own);
}

/* The identity of a graph: its name, or the real path of its file (false: no file). */
static bool identify(const char *name, const char *path, char id[PATH_MAX])
{
    if (path) return realpath(path, id) != NULL;
    snprintf(id, PATH_MAX, "%s", name);
    return true;
}

static int open_layer(const layering *c, const char *name, const char *path, layer *l,
                      char err[CP_ERR_MAX])
{
    *l = (layer){.origin = path ? path : name};
    if (!identify(name, path, l->id)) return cp_fail(err, "%s: cannot open graph file", path);
    l->text = path ? (l->file_text = cp_read_graph_file(path, err))
                   : named_text(c, name);
    if (!l->text) return path ? -1 : cp_fail(err, "no built-in graph '%s'", name);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path ? path : "");
    l->own = cp_graph_new(c->g->r);
    if (!l->own || (path && !(l->own->base_dir = cp_strdup(dirname(dir)))))
        return cp_fail(err, "out of memory");
    return cp_graph_load_text(l->own, l->text, l->origin, err);
}

static bool loaded(const cp_graph *g, const char *id)
{
    for (int i = 0; i < g->layers.n; i++)
        if (!strcmp(g->layers.items[i], id)) return true;
    return false;
}

static bool in_chain(const chain *ch, const char *id)
{
    for (int i = 0; i < ch->n; i++)
        if (!strcmp(ch->ids[i], id)) return true;
    return false;
}

/* A `base` value names a file when it has a '/' or ends in ".graph" (relative to the
 * directory of the file that names it), else a graph the program knows by name. */
static bool names_file(const char *v)
{
    size_t n = strlen(v);
    return strchr(v, '/') || (n > 6 && !strcmp(v + n - 6, ".graph"));
}

static void base_path(const layer *l, const char *v, char out[PATH_MAX])
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", l->id);
    if (v[0] == '/' || !l->file_text) snprintf(out, PATH_MAX, "%s", v);
    else snprintf(out, PATH_MAX, "%s/%s", dirname(dir), v);
}

static int load(const layering *c, const char *name, const char *path, chain *ch,
                char err[CP_ERR_MAX]);

/* Loads l's base under it, unless the graph holds it already. */
static int load_base(const layering *c, const layer *l, chain *ch, char err[CP_ERR_MAX])
{
    const cp_section *gs = cp_section_find(l->own, CP_SEC_GRAPH, NULL);
    const cp_setting *b = gs ? cp_setting_find(gs, "base") : NULL;
    if (!b) return 0;
    char path[PATH_MAX], id[PATH_MAX];
    bool file = names_file(b->value);
    if (file) base_path(l, b->value, path);
    if (file && !realpath(path, id))
        return cp_fail(err, "%s: base = %s: no such graph file (%s)", b->where, b->value, path);
    if (!file && !named_text(c, b->value))
        return cp_fail(err, "%s: base = %s: no built-in graph or file of that name (a file "
                       "is a path with a '/' or ending in .graph)", b->where, b->value);
    if (!file) snprintf(id, sizeof id, "%s", b->value);
    if (in_chain(ch, id))
        return cp_fail(err, "%s: base = %s: the bases lead back to %s (a cycle)", b->where,
                       b->value, file ? path : b->value);
    if (loaded(c->g, id)) return 0;
    if (c->g->layers.n)
        return cp_fail(err, "%s: base = %s, but it is layered over %s, which is neither that "
                       "graph nor built on it", b->where, b->value,
                       (const char *)c->g->layers.items[c->g->layers.n - 1]);
    return load(c, file ? NULL : b->value, file ? path : NULL, ch, err);
}

/* The layer's sections into the graph, then its edits; the file's directory becomes
 * the graph's for later plugin paths. */
static int load_over(const layering *c, const layer *l, const char *path, char err[CP_ERR_MAX])
{
    cp_graph *g = c->g;
    if (c->plugins && cp_graph_load_plugins(l->own, c->plugins, err)) return -1;
    int first_new = g->n;
    if (cp_graph_load_text(g, l->text, l->origin, err) || cp_apply_edits(g, first_new, err))
        return -1;
    if (path) {
        free(g->base_dir);
        g->base_dir = l->own->base_dir ? cp_strdup(l->own->base_dir) : NULL;
    }
    char *id = cp_strdup(l->id);
    if (!id || cp_list_add(&g->layers, id)) { free(id); return cp_fail(err, "out of memory"); }
    return 0;
}

static int load(const layering *c, const char *name, const char *path, chain *ch,
                char err[CP_ERR_MAX])
{
    if (ch->n == CP_MAX_LAYER_DEPTH)
        return cp_fail(err, "%s: bases nested more than %d deep", path ? path : name,
                       CP_MAX_LAYER_DEPTH);
    layer l;
    int rc = open_layer(c, name, path, &l, err);
    if (!rc) {
        ch->ids[ch->n++] = l.id;
        rc = load_base(c, &l, ch, err);
        ch->n--;
    }
    if (!rc) rc = load_over(c, &l, path, err);
    close_layer(&l);
    return rc;
}

int cp_graph_layer(cp_graph *g, cp_registry *plugins, const cp_named_graphs *named,
                   const char *name, const char *path, char err[CP_ERR_MAX])
{
    layering c = {g, plugins, named};
    chain ch = {.n = 0};
    char id[PATH_MAX];
    if (identify(name, path, id) && loaded(g, id))
        return cp_fail(err, "%s: already loaded (as a base of an earlier graph, or given "
                       "twice)", path ? path : name);
    return load(&c, name, path, &ch, err);
}

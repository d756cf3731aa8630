/* render_graph.c — a renderer program's graph from its command line (see the header). */
#include "tools/common/render_graph.h"

#include "pipelines/stages.h"
#include "tools/common/plugin_path.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int load_plugins(rg_setup *s, const rg_options *o, char err[CP_ERR_MAX])
{
    for (int i = 0; i < o->nplugins; i++)
        if (cp_plugin_load(s->registry, o->plugins[i], err)) return 1;
    return 0;
}

/* The bottom layer: -p's built-in graph (raster-parallel for raster with
 * --parallel-rast), raster when neither -p nor --graph is given, else none (and
 * --parallel-rast does not apply: put_flags lists it in s->unused). */
static int load_builtin(rg_setup *s, const rg_options *o, char err[CP_ERR_MAX])
{
    const char *pipeline = o->pipeline ? o->pipeline : o->ngraphs ? NULL : "raster";
    if (!pipeline) return 0;
    bool raster = !strcmp(pipeline, "raster");
    snprintf(s->name, sizeof s->name, "%s", raster && o->parallel_rast ? "raster-parallel" : pipeline);
    if (!pl_builtin_graph(s->name)) {
        snprintf(err, CP_ERR_MAX, "no built-in pipeline '%s'", s->name);
        return 2;
    }
    return pl_graph_load(s->graph, s->registry, s->name, NULL, err) ? 1 : 0;
}

/* A --graph value that is a built-in's name (no '/', no ".graph", no such file here):
 * `--graph raster --graph mine.graph` layers as `-p raster --graph mine.graph` does, as
 * a graph file's `base = raster` names it. */
static bool names_builtin(const char *v)
{
    size_t n = strlen(v);
    return !strchr(v, '/') && !(n > 6 && !strcmp(v + n - 6, ".graph")) && access(v, F_OK) != 0 &&
           pl_builtin_graph(v);
}

/* The built-in, then each --graph file (or built-in) over it, then the --edit lines;
 * each file's plugins are loaded as it is read, for the edits after it. */
static int load_graph(rg_setup *s, const rg_options *o, char err[CP_ERR_MAX])
{
    int rc = load_builtin(s, o, err);
    for (int i = 0; !rc && i < o->ngraphs; i++) {
        const char *g = o->graphs[i];
        snprintf(s->name, sizeof s->name, "%s", g);
        rc = (names_builtin(g) ? pl_graph_load(s->graph, s->registry, g, NULL, err)
                               : pl_graph_load(s->graph, s->registry, NULL, g, err)) ? 1 : 0;
    }
    for (int i = 0; !rc && i < o->nedits; i++)
        rc = cp_graph_edit_line(s->graph, o->edits[i], err) ? 1 : 0;
    return rc;
}

/* A renderer flag's [graph] setting, when the graph declares it (its default is what
 * the flag overrides); else the flag goes to s->unused. 0, or 2 with a message. */
static int put_flag(rg_setup *s, const char *key, const char *value, const char *flag,
                    char err[CP_ERR_MAX])
{
    if (!cp_graph_value(s->graph, key)) {
        if (s->nunused < RG_MAX_UNUSED_FLAGS) s->unused[s->nunused++] = flag;
        return 0;
    }
    char where[64];
    snprintf(where, sizeof where, "command line (%s)", flag);
    return cp_put(s->graph, "graph", key, value, where, err) ? 2 : 0;
}

/* The renderer flags that are [graph] settings, then every --set. */
static int put_flags(rg_setup *s, const rg_options *o, char err[CP_ERR_MAX])
{
    char spp[16], bounces[16];
    snprintf(spp, sizeof spp, "%d", o->spp);
    snprintf(bounces, sizeof bounces, "%d", o->bounces);
    if (o->spp && put_flag(s, "spp", spp, "--spp", err)) return 2;
    if (o->have_bounces && put_flag(s, "bounces", bounces, "--bounces", err)) return 2;
    if (o->no_coarse_z && put_flag(s, "coarse_z", "false", "--no-coarse-z", err)) return 2;
    bool raster = o->pipeline ? !strcmp(o->pipeline, "raster") : o->ngraphs == 0;
    if (o->parallel_rast && !raster) s->unused[s->nunused++] = "--parallel-rast";
    char v[32];
    if (o->msaa && !cp_graph_value(s->graph, "msaa")) {
        snprintf(err, CP_ERR_MAX, "--msaa %d: graph '%s' has no msaa setting (multisampling "
                 "is the raster graphs' and the hybrid's; the ray tracer takes --spp)", o->msaa, s->name);
        return 2;
    }
    if (o->msaa) {
        snprintf(v, sizeof v, "%d", o->msaa);
        if (cp_put(s->graph, "graph", "msaa", v, "command line (--msaa)", err)) return 2;
    }
    bool plugins = false;
    for (int i = 0; i < o->nsets; i++) {
        if (cp_set(s->graph, o->sets[i], err)) return 2;
        plugins |= !strncmp(o->sets[i], "graph.plugins=", 14);
    }
    /* the graph files' plugins are loaded with each file (pl_graph_load) */
    return plugins && cp_graph_load_plugins(s->graph, s->registry, err) ? 1 : 0;
}

int rg_setup_init(rg_setup *s, const rg_options *o, char err[CP_ERR_MAX])
{
    memset(s, 0, sizeof *s);
    s->registry = pl_registry_new(err);
    if (!s->registry || tp_plugin_path_default(s->registry, err)) return 1;
    s->graph = cp_graph_new(s->registry);
    if (!s->graph) { snprintf(err, CP_ERR_MAX, "out of memory"); return 1; }
    int rc = load_plugins(s, o, err);
    if (!rc) rc = load_graph(s, o, err);
    if (!rc) rc = put_flags(s, o, err);
    return rc;
}

void rg_setup_free(rg_setup *s)
{
    cp_graph_free(s->graph);
    cp_registry_free(s->registry);
    memset(s, 0, sizeof *s);
}

bool rg_needs_resource(const rg_setup *s, const char *name)
{
    cp_resource_need needs[CP_MAX_RESOURCES];
    char err[CP_ERR_MAX];
    int n = cp_graph_resources(s->graph, NULL, needs, err);
    return n > 0 && cp_resource_needed(needs, n, name) != NULL;
}

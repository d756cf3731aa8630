/* render_graph.h — the graph a renderer program runs, chosen and changed from its
 * command line: a built-in pipeline (-p) and graph files (--graph) layered over it in
 * order (cp_graph_layer), one-line edits (--edit, cp_graph_edit_line), plugins (--plugin
 * and the graph's own), the renderer flags that are graph settings (--spp, --bounces,
 * --no-coarse-z) and any --set SECTION.KEY=VALUE. Shared by gramps-render and the
 * programs that take its options. */
#ifndef TOOLS_COMMON_RENDER_GRAPH_H
#define TOOLS_COMMON_RENDER_GRAPH_H

#include "compose/compose.h"

#include <stdbool.h>

typedef struct rg_options {
    const char *pipeline;             /* the built-in graph at the bottom (-p); NULL: the first
                                         graph file, else raster */
    const char **graphs;              /* graph files layered over it in order (--graph) */
    int ngraphs;
    bool parallel_rast, no_coarse_z;  /* raster: raster-parallel.graph; graph.coarse_z */
    int spp, bounces;                 /* graph.spp / graph.bounces; 0 spp: the graph's */
    int msaa;                         /* graph.msaa (--msaa); 0: the graph's */
    bool have_bounces;
    const char **edits;               /* one-line edits after the files (--edit) */
    int nedits;
    const char **sets;                /* SECTION.KEY=VALUE, in command-line order */
    int nsets;
    const char **plugins;
    int nplugins;
} rg_options;

/* A renderer flag applies to a graph that declares the [graph] setting it sets (--spp:
 * spp, --bounces: bounces, --no-coarse-z: coarse_z); --parallel-rast to -p raster. */
#define RG_MAX_UNUSED_FLAGS 4

typedef struct rg_setup {
    cp_registry *registry;
    cp_graph *graph;
    char name[256];                   /* the built-in's name or the last file's path */
    const char *unused[RG_MAX_UNUSED_FLAGS];  /* flags given that do not apply to it */
    int nunused;
} rg_setup;

/* Builds the registry (built-ins and plugins) and the graph: -p's built-in, the --graph
 * files layered over it, the --edit lines, then every override; the renderer flags that
 * do not apply to the graph are left out and listed in s->unused. Returns 0, or the exit
 * status with a message in err: 2 for a bad --set (a flag), 1 for a graph, edit or
 * plugin that cannot be loaded. */
int rg_setup_init(rg_setup *s, const rg_options *o, char err[CP_ERR_MAX]);
void rg_setup_free(rg_setup *s);

/* true when a stage type of the graph declares frame resource `name` ("bvh": the
 * scene's BVH is built before the frames are timed; "triangles": a raster front end;
 * "textures": shading that samples the scene's textures). */
bool rg_needs_resource(const rg_setup *s, const char *name);

#endif

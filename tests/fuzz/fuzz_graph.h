/* fuzz_graph.h — what a fuzzed graph file goes through, shared by the libFuzzer target
 * (fuzz_graph.c) and the replay test (tests/render/test_fuzz_corpus.c): loaded as a
 * layer (cp_graph_layer: a `base` among the built-in graphs, then its edits) against the
 * built-in stage library, instantiated for a 16x16 frame of the teapot
 * and run on one worker, with a short deadlock timeout (a graph may legitimately never
 * finish, e.g. a stage waiting on a queue nothing feeds: that must be an error, not a
 * hang). */
#ifndef TESTS_FUZZ_GRAPH_H
#define TESTS_FUZZ_GRAPH_H

#include "pipelines/stages.h"

#include <stdlib.h>
#include <string.h>

/* The fuzzed text (ctx) is the graph named "fuzz.graph"; every other name is a
 * built-in's. */
static inline const char *fuzz_graph_named(void *ctx, const char *name)
{
    return strcmp(name, "fuzz.graph") ? pl_builtin_graph(name) : ctx;
}

/* Graph `top` of `named` (its layers over the built-in graphs) against registry r, run
 * for a 16x16 frame of the teapot on one worker: 0 when it ran, -1 with err set when it
 * was refused or failed. */
static inline int fuzz_render_teapot(cp_registry *r, const cp_named_graphs *named, const char *top,
                                     char err[CP_ERR_MAX])
{
    sc_scene *s = NULL;
    sc_geometry g;
    cp_graph *graph = r ? cp_graph_new(r) : NULL;
    int rc = -1;
    if (graph && sc_load("teapot", &s, err) == 0 && sc_flatten(s, &g, err) == 0) {
        pl_scene_data data;
        pl_frame f;
        pl_scene_data_init(&data, s, &g);
        if (!cp_graph_layer(graph, NULL, named, top, NULL, err) &&
            pl_frame_init(&f, &data, 16, 16, SH_AOV_COLOR, err)) {
            gr_launch_opts o = {.workers = 1, .deadlock_seconds = 2};
            gr_graph *run = pl_render_frame(graph, &f, &o, err);
            rc = run ? 0 : -1;
            gr_graph_destroy(run);
            pl_frame_free(&f);
        }
        pl_scene_data_free(&data);
        sc_geometry_free(&g);
    }
    if (s) sc_free(s);
    cp_graph_free(graph);
    return rc;
}

/* 0 when the graph ran; -1 with err set when it was refused or failed. */
static inline int fuzz_graph_run(const char *text, size_t size, char err[CP_ERR_MAX])
{
    char *copy = malloc(size + 1);
    cp_registry *r = pl_registry_new(err);
    int rc = -1;
    if (copy && r) {
        memcpy(copy, text, size);
        copy[size] = 0;
        cp_named_graphs named = {fuzz_graph_named, copy};
        rc = fuzz_render_teapot(r, &named, "fuzz.graph", err);
    }
    cp_registry_free(r);
    free(copy);
    return rc;
}

#endif

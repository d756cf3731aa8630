/* kept_builtin.c — a built-in graph with a program's settings kept across frames, for
 * the one-call renderers (see kept_graph.h). */
#include "pipelines/kept_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pl_kept_builtin {
    cp_registry *registry;
    cp_graph *graph;
    char name[64];                    /* what graph was made from */
    void *cfg;
    size_t cfg_bytes;
    pl_scene_data data;               /* for scene, geo and bvh below */
    const sc_scene *scene;
    const sc_geometry *geo;
    const rt_bvh *bvh;
    bool has_data;
    pl_kept_graph *kept;
};

pl_kept_builtin *pl_kept_builtin_new(void)
{
    pl_kept_builtin *k = calloc(1, sizeof *k);
    if (k && !(k->kept = pl_kept_graph_new())) {
        free(k);
        return NULL;
    }
    return k;
}

static void drop_graph(pl_kept_builtin *k)
{
    pl_kept_graph_forget(k->kept);
    cp_graph_free(k->graph);
    cp_registry_free(k->registry);
    free(k->cfg);
    k->graph = NULL;
    k->registry = NULL;
    k->cfg = NULL;
}

static void drop_data(pl_kept_builtin *k)
{
    pl_kept_graph_forget(k->kept);
    if (k->has_data) pl_scene_data_free(&k->data);
    k->has_data = false;
}

void pl_kept_builtin_free(pl_kept_builtin *k)
{
    if (!k) return;
    drop_graph(k);
    drop_data(k);
    pl_kept_graph_free(k->kept);
    free(k);
}

void pl_kept_builtin_forget(pl_kept_builtin *k)
{
    if (k) drop_data(k);
}

pl_frame *pl_kept_builtin_frame(pl_kept_builtin *k) { return pl_kept_graph_frame(k->kept); }

/* The graph for b's name and settings, made again when they changed. */
static bool ensure_graph(pl_kept_builtin *k, const pl_builtin_frame *b, char err[CP_ERR_MAX])
{
    if (k->graph && !strcmp(k->name, b->name) && k->cfg_bytes == b->cfg_bytes &&
        !memcmp(k->cfg, b->cfg, b->cfg_bytes))
        return true;
    drop_graph(k);
    snprintf(k->name, sizeof k->name, "%s", b->name);
    k->cfg_bytes = b->cfg_bytes;
    if (!(k->cfg = malloc(b->cfg_bytes ? b->cfg_bytes : 1)) || !(k->registry = pl_registry_new(err)) ||
        !(k->graph = cp_graph_new(k->registry))) {
        if (k->registry && !k->graph) snprintf(err, CP_ERR_MAX, "out of memory");
        if (!k->cfg) snprintf(err, CP_ERR_MAX, "out of memory");
        drop_graph(k);
        return false;
    }
    memcpy(k->cfg, b->cfg, b->cfg_bytes);
    if (!pl_graph_load(k->graph, NULL, b->name, NULL, err) && !b->put(k->graph, b->cfg, err)) return true;
    drop_graph(k);
    return false;
}

static void ensure_data(pl_kept_builtin *k, const pl_builtin_frame *b)
{
    if (k->has_data && k->scene == b->scene && k->geo == b->geo && k->bvh == b->bvh) return;
    drop_data(k);
    pl_scene_data_init(&k->data, b->scene, b->geo);
    if (b->bvh) pl_scene_data_set_bvh(&k->data, b->bvh);
    k->scene = b->scene;
    k->geo = b->geo;
    k->bvh = b->bvh;
    k->has_data = true;
}

const gr_graph *pl_kept_builtin_render(pl_kept_builtin *k, const pl_builtin_frame *b,
                                       const gr_launch_opts *launch, char err[CP_ERR_MAX])
{
    if (!ensure_graph(k, b, err)) return NULL;
    ensure_data(k, b);
    const pl_frame_spec spec = {&k->data, b->width, b->height, b->aov, b->color, NULL, NULL};
    return pl_kept_graph_render(k->kept, k->graph, &spec, launch, err);
}

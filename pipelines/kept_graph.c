/* kept_graph.c — a graph built once and run for frame after frame (see kept_graph.h). */
#include "pipelines/kept_graph.h"

#include "pipelines/frame_internal.h"
#include "pipelines/render_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What shapes the kept graph and frame: built again when any of it changes. */
typedef struct shape {
    const cp_graph *graph;
    char *text;                       /* cp_graph_text of it (malloc'd) */
    pl_frame_spec spec;
    gr_launch_opts launch;            /* its strings point to the copies below */
    char *scheduler, *partition;
} shape;

struct pl_kept_graph {
    shape shape;
    pl_frame frame;
    bool has_frame;
    pl_vars_ctx vars_ctx;
    cp_vars vars;
    cp_instance *in;                  /* the kept instance, or NULL */
    gr_graph *taken;                  /* a frame's graph not kept (not renewable) */
    unsigned builds;
};

pl_kept_graph *pl_kept_graph_new(void) { return calloc(1, sizeof(pl_kept_graph)); }

static void drop(pl_kept_graph *k)
{
    cp_instance_free(k->in);
    k->in = NULL;
    gr_graph_destroy(k->taken);
    k->taken = NULL;
    if (k->has_frame) pl_frame_free(&k->frame);
    k->has_frame = false;
    free(k->shape.text);
    free(k->shape.scheduler);
    free(k->shape.partition);
    k->shape = (shape){0};
}

void pl_kept_graph_forget(pl_kept_graph *k) { drop(k); }

void pl_kept_graph_free(pl_kept_graph *k)
{
    if (!k) return;
    drop(k);
    free(k);
}

pl_frame *pl_kept_graph_frame(pl_kept_graph *k) { return k->has_frame ? &k->frame : NULL; }

unsigned pl_kept_graph_builds(const pl_kept_graph *k) { return k->builds; }

static bool same_string(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static bool same_launch(const gr_launch_opts *a, const gr_launch_opts *b)
{
    return a->workers == b->workers && a->pin == b->pin && a->low_watermark == b->low_watermark &&
           a->stack_bytes == b->stack_bytes && a->deadlock_seconds == b->deadlock_seconds &&
           a->journal == b->journal && same_string(a->scheduler, b->scheduler) &&
           a->profile == b->profile && a->verbose == b->verbose &&
           same_string(a->partition, b->partition) && a->ilp_ms == b->ilp_ms &&
           a->simulate == b->simulate && a->sim_calibration == b->sim_calibration;
}

static bool same_spec(const pl_frame_spec *a, const pl_frame_spec *b)
{
    return a->data == b->data && a->width == b->width && a->height == b->height &&
           a->aov == b->aov && a->color == b->color && a->hdr == b->hdr && a->surface == b->surface;
}

static bool same_shape(const shape *s, const cp_graph *g, const char *text, const pl_frame_spec *spec,
                       const gr_launch_opts *launch)
{
    return s->graph == g && !strcmp(s->text, text) && same_spec(&s->spec, spec) &&
           same_launch(&s->launch, launch);
}

/* The shape of a render, its strings copied; false when out of memory. */
static bool record_shape(shape *s, const cp_graph *g, char *text, const pl_frame_spec *spec,
                         const gr_launch_opts *launch)
{
    *s = (shape){g, text, *spec, *launch, NULL, NULL};
    s->launch.scheduler = s->scheduler = launch->scheduler ? strdup(launch->scheduler) : NULL;
    s->launch.partition = s->partition = launch->partition ? strdup(launch->partition) : NULL;
    return (!launch->scheduler || s->scheduler) && (!launch->partition || s->partition);
}

/* The kept graph's next frame: the frame restarted, the states made for it, a relaunch. */
static const gr_graph *rerun(pl_kept_graph *k, cp_graph *g, const gr_launch_opts *launch,
                             char err[CP_ERR_MAX])
{
    if (!pl_frame_restart(&k->frame)) {
        snprintf(err, CP_ERR_MAX, "out of memory (frame resources)");
        return NULL;
    }
    if (cp_instance_renew(k->in, err) || !pl_instance_render(k->in, g, &k->frame, launch, err))
        return NULL;
    return cp_instance_graph(k->in);
}

static bool make_frame(pl_kept_graph *k, const pl_frame_spec *spec, char err[CP_ERR_MAX])
{
    if (!pl_frame_init(&k->frame, spec->data, spec->width, spec->height, spec->aov, err)) return false;
    k->has_frame = true;
    if (spec->color) pl_frame_use_color(&k->frame, spec->color);
    if (spec->hdr) pl_frame_use_hdr(&k->frame, spec->hdr);
    if (spec->surface) pl_frame_use_surface(&k->frame, spec->surface);
    return true;
}

/* A new frame and instance for the shape just recorded, run once; kept when it is
 * renewable (no stage on a device or placed `auto`). */
static const gr_graph *build(pl_kept_graph *k, cp_graph *g, const gr_launch_opts *launch,
                             char err[CP_ERR_MAX])
{
    const pl_frame_spec *spec = &k->shape.spec;
    if (!make_frame(k, spec, err)) return NULL;
    k->builds++;
    k->vars_ctx = (pl_vars_ctx){g, spec->width, spec->height, pl_launch_workers(launch)};
    k->vars = pl_vars(&k->vars_ctx);
    k->frame.hdr |= pl_graph_reads_hdr(g, &k->vars);
    pl_region asked = {0, 0, 0, 0};          /* the whole image: never widened */
    cp_instance *in = pl_instantiate(g, &k->frame, &k->vars, &asked, err);
    if (!in) return NULL;
    if (!pl_instance_render(in, g, &k->frame, launch, err)) {
        cp_instance_free(in);
        return NULL;
    }
    if (cp_instance_renewable(in)) return cp_instance_graph(k->in = in);
    k->taken = cp_instance_take_graph(in);
    cp_instance_free(in);
    return k->taken;
}

const gr_graph *pl_kept_graph_render(pl_kept_graph *k, cp_graph *g, const pl_frame_spec *spec,
                                     const gr_launch_opts *launch, char err[CP_ERR_MAX])
{
    const gr_launch_opts none = {0};
    if (!launch) launch = &none;
    char *text = cp_graph_text(g);
    if (!text) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        drop(k);
        return NULL;
    }
    const gr_graph *result;
    if (k->in && same_shape(&k->shape, g, text, spec, launch)) {
        free(text);
        result = rerun(k, g, launch, err);
    } else {
        drop(k);
        result = NULL;
        if (record_shape(&k->shape, g, text, spec, launch)) result = build(k, g, launch, err);
        else snprintf(err, CP_ERR_MAX, "out of memory");
    }
    if (!result) drop(k);
    return result;
}

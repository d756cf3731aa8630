/* renderer.c — the viewer's render thread (see renderer.h). */
#include "tools/view/renderer.h"

#include "pipelines/kept_graph.h"
#include "pipelines/stages.h"
#include "tools/common/measure.h"

#include <SDL.h>
#include <stdlib.h>
#include <string.h>

const char *const vw_pipelines[VW_NPIPELINES] = {"raster", "raytrace", "hybrid"};

/* The graph's name for the overlay: its [graph] name, else the built-in's or file's. */
static const char *graph_name(const rg_setup *s)
{
    const char *name = cp_graph_value(s->graph, "name");
    return name ? name : s->name;
}

/* Builds the graph for pipeline p (the command line's -p/--graph for -1, with every
 * --set and --plugin either way) and says so on stdout unless -q. On failure the
 * current graph stays and the message goes to stderr: a --set of one graph may name a
 * stage another lacks. */
static void switch_pipeline(vw_renderer *r, int p)
{
    r->tried_pipeline = p;
    rg_options go = r->opts->r.graph;
    if (p >= 0) {
        go.ngraphs = 0;
        go.pipeline = vw_pipelines[p];
    }
    char err[CP_ERR_MAX];
    rg_setup next;
    if (rg_setup_init(&next, &go, err)) {
        fprintf(stderr, "gramps-view: cannot switch to %s: %s\n", p >= 0 ? vw_pipelines[p] : "the graph", err);
        rg_setup_free(&next);
        return;
    }
    pl_kept_graph_forget(r->kept);   /* its instance holds the old registry's types */
    rg_setup_free(&r->setup);
    r->setup = next;
    gr_profile_free(r->profile);
    r->profile = NULL;
    if (!r->opts->r.quiet) {
        printf("pipeline %s\n", graph_name(&r->setup));
        fflush(stdout);
    }
}

/* One frame of the current graph with settings s into r->back, its statistics into
 * snap; a launch without a journal and with `scheduler` when profiling. 0, or 1 with
 * the message printed. */
static int render_one(vw_renderer *r, const vw_settings *s, const char *scheduler,
                      vw_snapshot *snap, gr_profile **profile_out)
{
    char err[CP_ERR_MAX];
    const ro_options *o = &r->opts->r;
    if (rg_needs_resource(&r->setup, "bvh") && !pl_scene_data_bvh(r->data)) {
        fprintf(stderr, "gramps-view: out of memory building the BVH\n");
        return 1;
    }
    r->scene->camera = s->camera;
    const pl_frame_spec spec = {r->data, o->width, o->height, s->aov, NULL, NULL, NULL};
    gr_launch_opts launch = {.workers = s->threads, .scheduler = scheduler, .journal = !profile_out,
                             .profile = r->profile, .verbose = o->verbose};
    double t0 = io_now_ms();
    const gr_graph *g = pl_kept_graph_render(r->kept, r->setup.graph, &spec, &launch, err);
    double ms = io_now_ms() - t0;
    bool ok = g != NULL;
    pl_frame *f = pl_kept_graph_frame(r->kept);
    if (ok) memcpy(r->back, pl_frame_image(f), (size_t)o->width * o->height * 4);
    if (ok && profile_out) ok = (*profile_out = gr_profile_take(g)) != NULL;
    else if (ok) ok = vw_snapshot_take(snap, g, f, ms, graph_name(&r->setup));
    if (!g) fprintf(stderr, "gramps-view: %s\n", err);
    else if (!ok) fprintf(stderr, "gramps-view: out of memory\n");
    return ok ? 0 : 1;
}

/* Static: one frame under gramps first, whose stage times weigh the partition (as
 * gramps-render does); kept until the graph changes. */
static int ensure_profile(vw_renderer *r, const vw_settings *s)
{
    const char *sched = s->scheduler ? s->scheduler : gr_scheduler_default();
    if (strcmp(sched, "static") || r->profile) return 0;
    return render_one(r, s, "gramps", NULL, &r->profile);
}

static void publish(vw_renderer *r, vw_snapshot *snap)
{
    pthread_mutex_lock(&r->lock);
    uint8_t *t = r->front;
    r->front = r->back;
    r->back = t;
    vw_snapshot_free(&r->front_snap);
    r->front_snap = *snap;
    r->published++;
    pthread_mutex_unlock(&r->lock);
    SDL_Event e = {.type = r->wake_event};
    SDL_PushEvent(&e);
}

/* The settings for the next frame, or false when the window asked to stop. In lockstep
 * (--test-events), first waits until the window took the frame published last. */
static bool next_settings(vw_renderer *r, vw_settings *s)
{
    pthread_mutex_lock(&r->lock);
    while (r->opts->test_events && r->taken != r->published && !r->stop)
        pthread_cond_wait(&r->was_taken, &r->lock);
    bool go = !r->stop;
    *s = r->want;
    pthread_mutex_unlock(&r->lock);
    return go;
}

static void finish(vw_renderer *r, bool failed)
{
    pthread_mutex_lock(&r->lock);
    r->finished = true;
    r->failed = failed;
    pthread_mutex_unlock(&r->lock);
    SDL_Event e = {.type = r->wake_event};
    SDL_PushEvent(&e);
}

static void *render_loop(void *arg)
{
    vw_renderer *r = arg;
    int frames = r->opts->r.frames, rc = 0;
    vw_settings s;
    /* The graph is built once and run again frame after frame while the settings that
     * shape it (pipeline, size, AOV, workers, scheduler) stay; the camera may move. */
    r->kept = pl_kept_graph_new();
    if (!r->kept) {
        fprintf(stderr, "gramps-view: out of memory\n");
        rc = 1;
    }
    for (int n = 0; !rc && (frames == 0 || n < frames) && next_settings(r, &s); n++) {
        if (s.pipeline != r->tried_pipeline) switch_pipeline(r, s.pipeline);
        vw_snapshot snap = {0};
        rc = ensure_profile(r, &s);
        if (!rc) rc = render_one(r, &s, s.scheduler, &snap, NULL);
        if (!rc) publish(r, &snap);
    }
    pl_kept_graph_free(r->kept);
    r->kept = NULL;
    finish(r, rc != 0);
    return NULL;
}

bool vw_renderer_start(vw_renderer *r, const vw_options *o, sc_scene *s, pl_scene_data *d,
                       rg_setup *setup, const vw_settings *initial, uint32_t wake_event)
{
    size_t bytes = (size_t)o->r.width * o->r.height * 4;
    *r = (vw_renderer){.want = *initial, .opts = o, .scene = s, .data = d, .setup = *setup,
                       .tried_pipeline = initial->pipeline,
                       .wake_event = wake_event, .front = calloc(1, bytes), .back = calloc(1, bytes)};
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->was_taken, NULL);
    if (r->front && r->back && pthread_create(&r->thread, NULL, render_loop, r) == 0) return true;
    fprintf(stderr, "gramps-view: cannot start the render thread (out of memory)\n");
    free(r->front);
    free(r->back);
    rg_setup_free(&r->setup);
    pthread_cond_destroy(&r->was_taken);
    pthread_mutex_destroy(&r->lock);
    return false;
}

void vw_renderer_want(vw_renderer *r, const vw_settings *s)
{
    pthread_mutex_lock(&r->lock);
    r->want = *s;
    pthread_mutex_unlock(&r->lock);
}

bool vw_renderer_take(vw_renderer *r, uint8_t **rgba, vw_snapshot *snap, uint64_t *seen)
{
    pthread_mutex_lock(&r->lock);
    bool fresh = r->published != *seen;
    if (fresh) {
        uint8_t *t = *rgba;
        *rgba = r->front;
        r->front = t;
        vw_snapshot_free(snap);
        *snap = r->front_snap;
        r->front_snap = (vw_snapshot){0};
        *seen = r->taken = r->published;
        pthread_cond_signal(&r->was_taken);
    }
    pthread_mutex_unlock(&r->lock);
    return fresh;
}

bool vw_renderer_finished(vw_renderer *r, bool *failed)
{
    pthread_mutex_lock(&r->lock);
    bool done = r->finished;
    *failed = r->failed;
    pthread_mutex_unlock(&r->lock);
    return done;
}

void vw_renderer_stop(vw_renderer *r)
{
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_cond_signal(&r->was_taken);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    vw_snapshot_free(&r->front_snap);
    gr_profile_free(r->profile);
    rg_setup_free(&r->setup);
    free(r->front);
    free(r->back);
    pthread_cond_destroy(&r->was_taken);
    pthread_mutex_destroy(&r->lock);
}

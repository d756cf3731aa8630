/* gramps-view — renders a scene continuously in a window with any GRAMPS renderer graph
 * and shows the graph at work in an overlay (see README "gramps-view").
 *
 *   gramps-view [options] [SCENE]      gramps-render's scene, graph and runtime options
 *
 * Two threads: the render thread (renderer.h) runs frame after frame on the graph's
 * workers; this, the window thread, handles input, takes each finished frame and
 * presents it with the overlay. Exit status: 0; 2 for a bad option; 1 when the graph or
 * scene cannot be loaded, there is no display or font, or a frame fails. */
#include "pipelines/frame_memory.h"
#include "pipelines/stages.h"
#include "tools/common/crash_report.h"
#include "tools/view/input.h"
#include "tools/view/options.h"
#include "tools/view/renderer.h"
#include "tools/view/test_events.h"
#include "tools/view/window.h"

#include <stdlib.h>
#include <string.h>

/* The window thread's state. */
typedef struct viewer {
    const vw_options *opts;
    vw_window win;
    vw_view view;
    vw_renderer ren;
    uint8_t *image;                /* the frame on screen (swapped with the renderer's) */
    vw_snapshot snap;              /* its statistics */
    uint64_t seen;                 /* frames taken from the renderer */
    int shots;                     /* F12 screenshots saved */
} viewer;

/* The index in vw_pipelines of the command line's -p, or -1 for a --graph file. */
static int initial_pipeline(const ro_options *o)
{
    if (o->graph.ngraphs) return -1;
    for (int i = 0; i < VW_NPIPELINES; i++)
        if (!strcmp(vw_pipelines[i], o->graph.pipeline ? o->graph.pipeline : "raster")) return i;
    return -1;
}

static int show(viewer *v, const char *shot)
{
    bool overlay = v->view.overlay && v->seen;
    return vw_window_show(&v->win, v->image, overlay ? &v->snap : NULL, shot);
}

/* F12: gramps-view-N.png in the working directory. */
static int f12_screenshot(viewer *v)
{
    char path[64];
    snprintf(path, sizeof path, "gramps-view-%d.png", ++v->shots);
    v->view.want_screenshot = false;
    int rc = show(v, path);
    if (!rc) printf("saved %s\n", path);
    return rc;
}

/* Every pending event; true when the picture must be drawn again. */
static bool handle_events(viewer *v)
{
    SDL_Event e;
    bool overlay = v->view.overlay;
    if (!SDL_WaitEventTimeout(&e, 100)) return false;
    do {
        if (vw_input(&v->view, &e, v->win.h)) vw_renderer_want(&v->ren, &v->view.s);
    } while (SDL_PollEvent(&e));
    return overlay != v->view.overlay;
}

/* Until quit, a failed frame, or the last of --frames (shown, then saved with
 * --screenshot). The exit status. */
static int window_loop(viewer *v)
{
    int rc = 0;
    bool failed = false;
    uint64_t shown = 0;                   /* frames taken here (the renderer may skip ahead) */
    while (!rc && !v->view.want_quit) {
        bool redraw = handle_events(v);
        bool done = vw_renderer_finished(&v->ren, &failed);
        bool fresh = vw_renderer_take(&v->ren, &v->image, &v->snap, &v->seen);
        if (fresh && v->opts->test_events) vw_test_events_frame(shown++);
        if (v->view.want_screenshot) rc = f12_screenshot(v);
        else if (fresh || redraw) show(v, NULL);
        if (done && !fresh) break;        /* the last frame published is on screen */
    }
    if (!rc && failed) rc = 1;
    if (!rc && !v->view.want_quit && v->opts->screenshot) rc = show(v, v->opts->screenshot);
    return rc;
}

/* Window, then the render thread, then the loop. The scene is loaded. */
static int view_scene(viewer *v, rg_setup *setup, sc_scene *s, pl_scene_data *d)
{
    const ro_options *o = &v->opts->r;
    size_t bytes = (size_t)o->width * o->height * 4;
    v->view = (vw_view){.s = {s->camera, initial_pipeline(o), o->aov, o->threads, o->scheduler},
                        .home = s->camera, .overlay = v->opts->overlay};
    int rc = vw_window_open(&v->win, o->width, o->height);
    uint32_t wake = rc ? 0 : SDL_RegisterEvents(1);
    if (!rc && (wake == (uint32_t)-1 || !(v->image = calloc(1, bytes)))) {
        fprintf(stderr, "gramps-view: out of memory\n");
        rc = 1;
    }
    if (rc) rg_setup_free(setup);
    else if (!vw_renderer_start(&v->ren, v->opts, s, d, setup, &v->view.s, wake)) rc = 1;
    if (!rc) {
        if (v->opts->test_events) vw_test_events_start();
        rc = window_loop(v);
        vw_renderer_stop(&v->ren);
    }
    vw_snapshot_free(&v->snap);
    free(v->image);
    vw_window_close(&v->win);
    return rc;
}

/* The graph first (a bad graph is reported before a large scene loads), then the
 * scene, then the window. */
static int view_main(vw_options *o)
{
    rg_setup setup;
    char err[CP_ERR_MAX];
    int rc = rg_setup_init(&setup, &o->r.graph, err);
    if (rc) fprintf(stderr, "gramps-view: %s\n", err);
    else rc = ro_check_flags_apply(&o->r, &setup);
    if (rc) {
        rg_setup_free(&setup);
        return rc;
    }
    sc_scene *s;
    sc_geometry g;
    if ((rc = ro_load_scene(&o->r, true, &s, &g))) {
        rg_setup_free(&setup);
        return rc;
    }
    pl_scene_data d;
    pl_scene_data_init(&d, s, &g);
    viewer v = {.opts = o};
    rc = view_scene(&v, &setup, s, &d);
    pl_scene_data_free(&d);
    sc_geometry_free(&g);
    sc_free(s);
    return rc;
}

int main(int argc, char **argv)
{
    pl_keep_freed_memory();           /* frames reuse memory, as in gramps-render */
    cr_install("gramps-view");        /* a stage that crashes is named */
    vw_options o;
    int rc = vw_parse_options(argc, argv, &o);
    if (!rc) rc = view_main(&o);
    ro_free(&o.r);
    return rc < 0 ? 0 : rc;
}

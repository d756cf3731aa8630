/* input.c — keys and mouse (see input.h). Mouse moves are in pixels: a drag across the
 * window's height turns the camera half a turn or pans one view height. */
#include "tools/view/input.h"

#include "tools/view/orbit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const schedulers[] = {"gramps", "task-stealing", "breadth-first", "static"};
enum { NSCHED = sizeof schedulers / sizeof *schedulers };

static const float KEY_TURN = 0.1f, KEY_PAN = 0.05f, ZOOM_STEP = 0.9f;

static void next_scheduler(vw_settings *s)
{
    const char *cur = s->scheduler ? s->scheduler : gr_scheduler_default();
    int i = 0;
    while (i < NSCHED && strcmp(schedulers[i], cur)) i++;
    s->scheduler = schedulers[(i + 1) % NSCHED];
}

/* +1 or -1 worker, from the run's count when none was set; 1..GR_MAX_WORKERS. */
static void step_threads(vw_settings *s, int d)
{
    long n = (long)gr_worker_count(s->threads) + d;
    s->threads = (unsigned)(n < 1 ? 1 : n > GR_MAX_WORKERS ? GR_MAX_WORKERS : n);
}

static void print_camera(const sc_camera *c)
{
    char arg[400];
    vw_camera_arg(c, arg, sizeof arg);
    printf("%s\n", arg);
    fflush(stdout);
}

/* Arrows orbit, or pan with shift. */
static bool arrow(vw_view *v, SDL_Keycode k, bool shift)
{
    float dx = k == SDLK_LEFT ? -1 : k == SDLK_RIGHT ? 1 : 0;
    float dy = k == SDLK_DOWN ? -1 : k == SDLK_UP ? 1 : 0;
    if (shift) vw_pan(&v->s.camera, dx * KEY_PAN, dy * KEY_PAN);
    else vw_orbit(&v->s.camera, dx * KEY_TURN, dy * KEY_TURN);
    return true;
}

/* Keys that change what is rendered; true when one did. */
static bool settings_key(vw_view *v, SDL_Keycode k)
{
    vw_settings *s = &v->s;
    switch (k) {
    case SDLK_p: s->pipeline = (s->pipeline + 1) % VW_NPIPELINES; return true;
    case SDLK_a: s->aov = (sh_aov)((s->aov + 1) % SH_AOV_COUNT); return true;
    case SDLK_s: next_scheduler(s); return true;
    case SDLK_PLUS: case SDLK_EQUALS: case SDLK_KP_PLUS: step_threads(s, 1); return true;
    case SDLK_MINUS: case SDLK_KP_MINUS: step_threads(s, -1); return true;
    case SDLK_z: vw_zoom(&s->camera, ZOOM_STEP); return true;
    case SDLK_x: vw_zoom(&s->camera, 1 / ZOOM_STEP); return true;
    case SDLK_r: s->camera = v->home; return true;
    }
    return false;
}

static bool key(vw_view *v, const SDL_KeyboardEvent *e)
{
    SDL_Keycode k = e->keysym.sym;
    switch (k) {
    case SDLK_LEFT: case SDLK_RIGHT: case SDLK_UP: case SDLK_DOWN:
        return arrow(v, k, (e->keysym.mod & KMOD_SHIFT) != 0);
    case SDLK_c: print_camera(&v->s.camera); return false;
    case SDLK_o: v->overlay = !v->overlay; return false;
    case SDLK_F12: v->want_screenshot = true; return false;
    case SDLK_ESCAPE: case SDLK_q: v->want_quit = true; return false;
    }
    return settings_key(v, k);
}

/* Left drag orbits, right or middle drag pans. */
static bool drag(vw_view *v, const SDL_MouseMotionEvent *m, int height)
{
    float dx = (float)m->xrel / (float)height, dy = (float)m->yrel / (float)height;
    if (m->state & SDL_BUTTON_LMASK) vw_orbit(&v->s.camera, -dx * (float)M_PI, dy * (float)M_PI);
    else if (m->state & (SDL_BUTTON_RMASK | SDL_BUTTON_MMASK)) vw_pan(&v->s.camera, -dx, dy);
    else return false;
    return true;
}

bool vw_input(vw_view *v, const SDL_Event *e, int height)
{
    switch (e->type) {
    case SDL_QUIT: v->want_quit = true; return false;
    case SDL_KEYDOWN: return key(v, &e->key);
    case SDL_MOUSEMOTION: return drag(v, &e->motion, height);
    case SDL_MOUSEWHEEL:
        if (!e->wheel.y) return false;
        vw_zoom(&v->s.camera, powf(ZOOM_STEP, (float)e->wheel.y));
        return true;
    }
    return false;
}

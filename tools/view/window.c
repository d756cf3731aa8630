/* window.c — the viewer's window (see window.h). */
#include "tools/view/window.h"

#include "tools/view/overlay.h"
#include "tools/view/screenshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "gramps-view: %s: %s\n", what, why);
    return 1;
}

static int no_video(const char *why)
{
    fprintf(stderr, "gramps-view: cannot start video: %s\n"
            "gramps-view: set DISPLAY (or WAYLAND_DISPLAY), or SDL_VIDEODRIVER=dummy "
            "to render without a display\n", why);
    return 1;
}

static bool env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* SDL's video: no display and no usable driver both end here, with the way out. With
 * no display and no driver named, SDL 2.26 would fall back to its invisible offscreen
 * window (a viewer nobody sees, running on); so that case stops before SDL starts, and
 * an offscreen or dummy driver is used only when SDL_VIDEODRIVER names it. */
static int start_video(void)
{
    bool named = env_set("SDL_VIDEODRIVER");
    if (!named && !env_set("DISPLAY") && !env_set("WAYLAND_DISPLAY"))
        return no_video("no display (DISPLAY and WAYLAND_DISPLAY are not set)");
    if (SDL_Init(SDL_INIT_VIDEO) != 0) return no_video(SDL_GetError());
    const char *driver = SDL_GetCurrentVideoDriver();
    if (!named && driver && (!strcmp(driver, "offscreen") || !strcmp(driver, "dummy"))) {
        SDL_Quit();
        return no_video("no display: SDL found only its invisible offscreen driver");
    }
    return 0;
}

int vw_window_open(vw_window *w, int width, int height)
{
    *w = (vw_window){.w = width, .h = height};
    if (start_video()) return 1;
    if (TTF_Init() != 0) return fail("cannot start SDL2_ttf", TTF_GetError());
    if (!(w->font = vw_font_open(12))) return 1;
    w->win = SDL_CreateWindow("gramps-view", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED,
                              width, height, 0);
    if (!w->win) return fail("cannot open a window", SDL_GetError());
    w->ren = SDL_CreateRenderer(w->win, -1, SDL_RENDERER_SOFTWARE);
    if (!w->ren) return fail("cannot draw in the window", SDL_GetError());
    /* ABGR8888: the renderers' RGBA bytes on a little-endian machine (screenshot.c) */
    w->image = SDL_CreateTexture(w->ren, SDL_BYTEORDER == SDL_LIL_ENDIAN ? SDL_PIXELFORMAT_ABGR8888
                                 : SDL_PIXELFORMAT_RGBA8888, SDL_TEXTUREACCESS_STREAMING, width, height);
    if (!w->image) return fail("cannot make the image texture", SDL_GetError());
    SDL_SetTextureBlendMode(w->image, SDL_BLENDMODE_NONE);   /* copied as is, alpha too */
    return 0;
}

void vw_window_close(vw_window *w)
{
    if (w->image) SDL_DestroyTexture(w->image);
    if (w->ren) SDL_DestroyRenderer(w->ren);
    if (w->win) SDL_DestroyWindow(w->win);
    if (w->font) TTF_CloseFont(w->font);
    if (TTF_WasInit()) TTF_Quit();
    SDL_Quit();
    *w = (vw_window){0};
}

int vw_window_show(vw_window *w, const uint8_t *rgba, const vw_snapshot *snap, const char *shot)
{
    SDL_UpdateTexture(w->image, NULL, rgba, w->w * 4);
    SDL_SetRenderDrawColor(w->ren, 0, 0, 0, 255);
    SDL_RenderClear(w->ren);
    SDL_RenderCopy(w->ren, w->image, NULL, NULL);
    if (snap) vw_overlay_draw(w->ren, w->font, snap, w->w, w->h);
    int rc = shot ? vw_screenshot(w->ren, w->w, w->h, shot) : 0;
    SDL_RenderPresent(w->ren);
    return rc;
}

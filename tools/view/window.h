/* window.h — the viewer's window: an SDL window the image's size with a software
 * renderer (the image is made on the CPU anyway, and software presentation reads back
 * exactly what was drawn, which the screenshot's bit-for-bit promise needs), the
 * image's streaming texture and the overlay's font. */
#ifndef TOOLS_VIEW_WINDOW_H
#define TOOLS_VIEW_WINDOW_H

#include "tools/view/font.h"
#include "tools/view/snapshot.h"

#include <stdint.h>

typedef struct vw_window {
    SDL_Window *win;
    SDL_Renderer *ren;
    SDL_Texture *image;
    TTF_Font *font;
    int w, h;
} vw_window;

/* Starts SDL's video and the font library and opens the window. 0, or 1 with a message
 * (no display, no usable video driver, no font); vw_window_close is safe either way. */
int vw_window_open(vw_window *w, int width, int height);
void vw_window_close(vw_window *w);

/* Draws rgba (w x h) and, when snap is not NULL, the overlay; then writes the window to
 * shot (when not NULL) and presents. 0, or 1 when the screenshot failed. */
int vw_window_show(vw_window *w, const uint8_t *rgba, const vw_snapshot *snap, const char *shot);

#endif

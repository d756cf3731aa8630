/* input.h — what keys and the mouse do to the view: the camera (orbit, pan, zoom,
 * reset), the graph's settings (pipeline, AOV, workers, scheduler), the overlay, and
 * requests the window thread carries out (screenshot, quit). C prints the camera. */
#ifndef TOOLS_VIEW_INPUT_H
#define TOOLS_VIEW_INPUT_H

#include "tools/view/renderer.h"

#include <SDL.h>

typedef struct vw_view {
    vw_settings s;                 /* what the next frames render with */
    sc_camera home;                /* the starting camera, for R */
    bool overlay;
    bool want_screenshot, want_quit;
} vw_view;

/* Applies one event to v; true when v->s changed (the renderer must be told). */
bool vw_input(vw_view *v, const SDL_Event *e, int height);

#endif

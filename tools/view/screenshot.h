/* screenshot.h — the window as drawn (image and overlay) saved as PNG with the project's
 * encoder (io_encode_png) and safe writer, so that without the overlay the file is
 * gramps-render's -o file of the same options, byte for byte. */
#ifndef TOOLS_VIEW_SCREENSHOT_H
#define TOOLS_VIEW_SCREENSHOT_H

#include <SDL.h>

/* Reads the renderer's w x h pixels (call before SDL_RenderPresent) and writes them to
 * path. 0, or 1 with a message. */
int vw_screenshot(SDL_Renderer *r, int w, int h, const char *path);

#endif

/* screenshot.c — saving the window (see screenshot.h). */
#include "tools/view/screenshot.h"

#include "output/image_out.h"
#include "output/safe_file.h"

#include <stdint.h>
#include <stdlib.h>

/* ABGR8888 is R, G, B, A in memory on a little-endian machine and RGBA8888 on a
 * big-endian one: either way the bytes the renderers write (R in the low byte). */
#if SDL_BYTEORDER == SDL_LIL_ENDIAN
#define RGBA_BYTES SDL_PIXELFORMAT_ABGR8888
#else
#define RGBA_BYTES SDL_PIXELFORMAT_RGBA8888
#endif

static int write_png(const uint8_t *rgba, int w, int h, const char *path)
{
    char err[600] = "out of memory encoding the screenshot";
    size_t size = 0;
    uint8_t *png = io_encode_png(w, h, rgba, &size);
    io_file f = {.fd = -1};
    int rc = !png || io_stage(&f, path, png, size, err, sizeof err) || io_commit(&f, err, sizeof err);
    io_discard(&f);
    free(png);
    if (rc) fprintf(stderr, "gramps-view: %s\n", err);
    return rc;
}

int vw_screenshot(SDL_Renderer *r, int w, int h, const char *path)
{
    uint8_t *rgba = malloc((size_t)w * h * 4);
    if (!rgba) {
        fprintf(stderr, "gramps-view: out of memory for the screenshot\n");
        return 1;
    }
    int rc = SDL_RenderReadPixels(r, NULL, RGBA_BYTES, rgba, w * 4);
    if (rc) fprintf(stderr, "gramps-view: cannot read the window: %s\n", SDL_GetError());
    else rc = write_png(rgba, w, h, path);
    free(rgba);
    return rc;
}

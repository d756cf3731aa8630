/* texture.c — albedo textures through stb_image (RGBA8, row 0 at the top). */
#include "scenes/loaders.h"

#include <stdlib.h>
#include <string.h>

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

int sc_read_texture(sc_scene *s, const char *path, const sc_load_opts *o, char err[SC_ERR_MAX])
{
    int w, h, n;
    /* The size from the header first: a small file may declare a huge image. */
    if (stbi_info(path, &w, &h, &n) && (size_t)w * (size_t)h > o->max_texture_pixels) {
        snprintf(err, SC_ERR_MAX, "%s: the texture is %dx%d, more than the %zu-pixel limit",
                 path, w, h, o->max_texture_pixels);
        return -1;
    }
    unsigned char *px = stbi_load(path, &w, &h, &n, 4);
    if (!px) {
        snprintf(err, SC_ERR_MAX, "%s: cannot read the texture: %s", path, stbi_failure_reason());
        return -1;
    }
    sc_texture *t = realloc(s->textures, (s->ntextures + 1) * sizeof *t);
    if (!t) { stbi_image_free(px); snprintf(err, SC_ERR_MAX, "%s: out of memory", path); return -1; }
    s->textures = t;
    t[s->ntextures] = (sc_texture){w, h, px};
    return (int)s->ntextures++;
}

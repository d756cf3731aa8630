/* texture.c — textures: image files through stb_image (RGBA8, row 0 at the top) and the
 * mip chain every texture gets once, at load. */
#include "scenes/loaders.h"

#include <stdlib.h>
#include <string.h>

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

/* Level `to` from level `to - 1`: each texel the rounded mean of the 2x2 block above it
 * (a row or column beyond an odd-sized level's edge is the edge's own). */
static void box_filter(const sc_mip_level *from, sc_mip_level *to)
{
    for (int y = 0; y < to->height; y++)
        for (int x = 0; x < to->width; x++) {
            int x0 = 2 * x, y0 = 2 * y;
            int x1 = x0 + 1 < from->width ? x0 + 1 : x0, y1 = y0 + 1 < from->height ? y0 + 1 : y0;
            const unsigned char *a = from->rgba + 4 * ((size_t)y0 * from->width + x0);
            const unsigned char *b = from->rgba + 4 * ((size_t)y0 * from->width + x1);
            const unsigned char *c = from->rgba + 4 * ((size_t)y1 * from->width + x0);
            const unsigned char *d = from->rgba + 4 * ((size_t)y1 * from->width + x1);
            unsigned char *o = to->rgba + 4 * ((size_t)y * to->width + x);
            for (int k = 0; k < 4; k++) o[k] = (unsigned char)((a[k] + b[k] + c[k] + d[k] + 2) / 4);
        }
}

int sc_texture_build_mips(sc_texture *t)
{
    while (t->nlevels < SC_MAX_MIP_LEVELS) {
        const sc_mip_level *prev = &t->levels[t->nlevels - 1];
        if (prev->width == 1 && prev->height == 1) break;
        sc_mip_level next = {prev->width > 1 ? prev->width / 2 : 1, prev->height > 1 ? prev->height / 2 : 1, NULL};
        next.rgba = malloc((size_t)next.width * next.height * 4);
        if (!next.rgba) return -1;
        box_filter(prev, &next);
        t->levels[t->nlevels++] = next;
    }
    return 0;
}

void sc_texture_free(sc_texture *t)
{
    for (int i = 0; i < t->nlevels; i++) free(t->levels[i].rgba);
    t->nlevels = 0;
}

size_t sc_texture_bytes(const sc_texture *t)
{
    size_t n = 0;
    for (int i = 0; i < t->nlevels; i++) n += (size_t)t->levels[i].width * t->levels[i].height * 4;
    return n;
}

int sc_add_texture(sc_scene *s, const char *name, int width, int height, unsigned char *rgba,
                   char err[SC_ERR_MAX])
{
    sc_texture t = {.nlevels = 1, .levels[0] = {width, height, rgba}};
    snprintf(t.name, sizeof t.name, "%s", name);
    for (size_t i = 0; i < (size_t)width * height; i++)
        if (rgba[4 * i + 3] < 255) { t.has_alpha = true; break; }
    sc_texture *grown = realloc(s->textures, (s->ntextures + 1) * sizeof *grown);
    if (!grown || sc_texture_build_mips(&t) != 0) {
        if (grown) s->textures = grown;
        sc_texture_free(&t);
        snprintf(err, SC_ERR_MAX, "%s: out of memory", name);
        return -1;
    }
    s->textures = grown;
    grown[s->ntextures] = t;
    return (int)s->ntextures++;
}

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
    const char *base = strrchr(path, '/');
    return sc_add_texture(s, base ? base + 1 : path, w, h, px, err);
}

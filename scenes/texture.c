/* texture.c — textures: image files through stb_image (RGBA8, row 0 at the top) and the
 * mip chain every texture gets once, at load. */
#include "scenes/input_file.h"
#include "scenes/loaders.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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

/* The size of the level below one of width x height (each side halved, at least 1). */
static sc_mip_level level_below(const sc_mip_level *l)
{
    return (sc_mip_level){l->width > 1 ? l->width / 2 : 1, l->height > 1 ? l->height / 2 : 1, NULL};
}

int sc_texture_build_mips(sc_texture *t)
{
    if (t->nlevels != 1) return -1;
    sc_mip_level sizes[SC_MAX_MIP_LEVELS] = {t->levels[0]};
    size_t bytes = (size_t)sizes[0].width * sizes[0].height * 4;
    int n = 1;
    for (; n < SC_MAX_MIP_LEVELS && (sizes[n - 1].width > 1 || sizes[n - 1].height > 1); n++) {
        sizes[n] = level_below(&sizes[n - 1]);
        bytes += (size_t)sizes[n].width * sizes[n].height * 4;
    }
    if (n == 1) return 0;
    unsigned char *chain = realloc(t->levels[0].rgba, bytes);    /* level 0 first, kept */
    if (!chain) return -1;
    t->levels[0].rgba = chain;
    t->one_block = true;
    for (size_t at = 0; t->nlevels < n; t->nlevels++) {
        const sc_mip_level *prev = &t->levels[t->nlevels - 1];
        at += (size_t)prev->width * prev->height * 4;
        sc_mip_level next = sizes[t->nlevels];
        next.rgba = chain + at;
        box_filter(prev, &next);
        t->levels[t->nlevels] = next;
    }
    return 0;
}

void sc_texture_free(sc_texture *t)
{
    for (int i = 0; i < (t->one_block ? 1 : t->nlevels); i++) free(t->levels[i].rgba);
    t->nlevels = 0;
    t->one_block = false;
}

size_t sc_texture_bytes(const sc_texture *t)
{
    size_t n = 0;
    for (int i = 0; i < t->nlevels; i++) n += (size_t)t->levels[i].width * t->levels[i].height * 4;
    return n;
}

/* Appends t (s owns its levels from now on, also on failure). */
static int append_texture(sc_scene *s, sc_texture *t, bool mips, char err[SC_ERR_MAX])
{
    sc_texture *grown = realloc(s->textures, (s->ntextures + 1) * sizeof *grown);
    if (!grown || (mips && sc_texture_build_mips(t) != 0)) {
        if (grown) s->textures = grown;
        sc_texture_free(t);
        snprintf(err, SC_ERR_MAX, "%s: out of memory", t->name);
        return -1;
    }
    s->textures = grown;
    grown[s->ntextures] = *t;
    return (int)s->ntextures++;
}

static sc_texture texture_of(const char *name, int width, int height, unsigned char *rgba)
{
    sc_texture t = {.nlevels = 1, .levels[0] = {width, height, rgba}};
    snprintf(t.name, sizeof t.name, "%s", name);
    for (size_t i = 0; i < (size_t)width * height; i++)
        if (rgba[4 * i + 3] < 255) { t.has_alpha = true; break; }
    return t;
}

int sc_add_texture(sc_scene *s, const char *name, int width, int height, unsigned char *rgba,
                   char err[SC_ERR_MAX])
{
    sc_texture t = texture_of(name, width, height, rgba);
    return append_texture(s, &t, true, err);
}

int sc_add_texture_level0(sc_scene *s, const char *name, int width, int height,
                          unsigned char *rgba, char err[SC_ERR_MAX])
{
    sc_texture t = texture_of(name, width, height, rgba);
    return append_texture(s, &t, false, err);
}

const char *sc_texture_size_problem(size_t width, size_t height, const sc_load_opts *o)
{
    static _Thread_local char why[160];
    if (width == 0 || height == 0) return "the image is empty";
    if (width > SC_MAX_TEXTURE_SIDE || height > SC_MAX_TEXTURE_SIDE) {
        snprintf(why, sizeof why, "the texture is %zux%zu, a side beyond "
                 LIMIT_NAMED(SC_MAX_TEXTURE_SIDE), width, height);
        return why;
    }
    if (width * height > o->max_texture_pixels) {
        snprintf(why, sizeof why, "the texture is %zux%zu, more than the %zu-pixel limit",
                 width, height, o->max_texture_pixels);
        return why;
    }
    return NULL;
}

/* The header's size first (a small file may declare a huge image), then the pixels:
 * from memory, or from file (a regular file, opened by the caller). */
static unsigned char *decode(const stbi_uc *mem, size_t n, FILE *file, const char *path,
                             const sc_load_opts *o, int *w, int *h, char err[SC_ERR_MAX])
{
    int c;
    bool known = mem ? stbi_info_from_memory(mem, (int)n, w, h, &c) : stbi_info_from_file(file, w, h, &c);
    const char *why = known ? sc_texture_size_problem((size_t)*w, (size_t)*h, o) : NULL;
    if (why) {
        snprintf(err, SC_ERR_MAX, "%.400s: %s", path, why);
        return NULL;
    }
    unsigned char *px = mem ? stbi_load_from_memory(mem, (int)n, w, h, &c, 4)
                            : stbi_load_from_file(file, w, h, &c, 4);
    if (!px) {
        snprintf(err, SC_ERR_MAX, "%.400s: cannot read the texture: %s", path, stbi_failure_reason());
        return NULL;
    }
    if ((why = sc_texture_size_problem((size_t)*w, (size_t)*h, o))) {
        stbi_image_free(px);
        snprintf(err, SC_ERR_MAX, "%.400s: %s", path, why);
        return NULL;
    }
    return px;
}

unsigned char *sc_decode_texture(const char *path, const sc_load_opts *o, int *w, int *h,
                                 char err[SC_ERR_MAX])
{
    FILE *f = sc_open_input(path, "rb", 0, err);
    if (!f) return NULL;
    unsigned char *px = decode(NULL, 0, f, path, o, w, h, err);
    fclose(f);
    return px;
}

unsigned char *sc_decode_texture_memory(const void *data, size_t n, const char *name,
                                        const sc_load_opts *o, int *w, int *h, char err[SC_ERR_MAX])
{
    if (n == 0 || n > INT_MAX) {
        snprintf(err, SC_ERR_MAX, "%.400s: cannot read the texture: %zu bytes", name, n);
        return NULL;
    }
    return decode(data, n, NULL, name, o, w, h, err);
}

int sc_read_texture(sc_scene *s, const char *path, const sc_load_opts *o, char err[SC_ERR_MAX])
{
    int w, h;
    unsigned char *px = sc_decode_texture(path, o, &w, &h, err);
    if (!px) return -1;
    const char *base = strrchr(path, '/');
    return sc_add_texture(s, base ? base + 1 : path, w, h, px, err);
}

/* ---- finding texture files ----------------------------------------------------------------- */

/* path, or when no file has that name, the entry of its directory whose name matches
 * but for case (files written on case-insensitive systems: 3DS names TEST.PNG for
 * test.png). false when neither exists. */
static bool find_nocase(char path[SC_PATH_MAX])
{
    if (access(path, F_OK) == 0) return true;
    char d[SC_PATH_MAX], want[SC_PATH_MAX];
    const char *last = strrchr(path, '/');
    int dl = last ? (int)(last - path) : 0;
    snprintf(d, sizeof d, "%.*s", last ? dl : 1, last ? path : ".");
    snprintf(want, sizeof want, "%s", last ? last + 1 : path);
    DIR *dh = opendir(d);
    if (!dh) return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(dh));)
        if (!strcasecmp(e->d_name, want)) {
            if (last) snprintf(path, SC_PATH_MAX, "%.700s/%.255s", d, e->d_name);
            else snprintf(path, SC_PATH_MAX, "%.255s", e->d_name);
            found = true;
        }
    closedir(dh);
    return found;
}

void sc_texture_path(const char *dir_of, const char *name, char path[SC_PATH_MAX])
{
    char n[SC_PATH_MAX];
    snprintf(n, sizeof n, "%s", name);
    for (char *c = n; *c; c++)
        if (*c == '\\') *c = '/';             /* paths written on Windows */
    char *p = n;
    if (!strncmp(p, "file://", 7)) p += 7;
    else if (p[0] == '/' && p[1] == '/') p += 2;    /* Blender's "//": beside the file */
    while (p[0] == '.' && p[1] == '/') p += 2;
    const char *slash = strrchr(dir_of, '/');
    int dir = slash ? (int)(slash - dir_of + 1) : 0;
    if (dir > SC_PATH_MAX / 2) dir = SC_PATH_MAX / 2;
    snprintf(path, SC_PATH_MAX, "%.*s%.500s", p[0] == '/' ? 0 : dir, dir_of, p);
    if (find_nocase(path)) return;
    /* A path from the author's machine (C:/Users/.../tex.jpg, /home/...) or a folder
     * that was not shipped: the file of that name beside the model. */
    const char *base = strrchr(p, '/');
    char there[SC_PATH_MAX];
    if (!base) return;
    snprintf(there, sizeof there, "%.*s%.500s", dir, dir_of, base + 1);
    if (find_nocase(there)) memcpy(path, there, SC_PATH_MAX);
}

/* ---- a loader's textures, each file read once ---------------------------------------------- */

int sc_texture_cache_find(const sc_texture_cache *c, const char *key, char why[SC_ERR_MAX])
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->e[i].path, key)) {
            if (c->e[i].index < 0) snprintf(why, SC_ERR_MAX, "%s", c->e[i].why);
            return c->e[i].index;
        }
    return -2;
}

void sc_texture_cache_put(sc_texture_cache *c, const char *key, int index, const char *why)
{
    void *grown = realloc(c->e, (c->n + 1) * sizeof *c->e);
    if (!grown) return;                   /* not remembered: read again if named again */
    c->e = grown;
    snprintf(c->e[c->n].path, sizeof c->e[c->n].path, "%s", key);
    snprintf(c->e[c->n].why, sizeof c->e[c->n].why, "%s", index < 0 ? why : "");
    c->e[c->n++].index = index;
}

int sc_texture_cache_add(sc_texture_cache *c, sc_scene *s, const char *name, int w, int h,
                         unsigned char *px, char why[SC_ERR_MAX])
{
    if (c->n >= SC_MAX_IMPORT_TEXTURES) {
        free(px);
        snprintf(why, SC_ERR_MAX, "%.400s: more than " LIMIT_NAMED(SC_MAX_IMPORT_TEXTURES)
                 " textures", name);
        return -1;
    }
    return c->level0_only ? sc_add_texture_level0(s, name, w, h, px, why)
                          : sc_add_texture(s, name, w, h, px, why);
}

int sc_texture_cache_get(sc_texture_cache *c, sc_scene *s, const char *path, const sc_load_opts *o,
                         char why[SC_ERR_MAX])
{
    int t = sc_texture_cache_find(c, path, why);
    if (t != -2) return t;
    int w, h;
    unsigned char *px = sc_decode_texture(path, o, &w, &h, why);
    const char *base = strrchr(path, '/');
    t = px ? sc_texture_cache_add(c, s, base ? base + 1 : path, w, h, px, why) : -1;
    sc_texture_cache_put(c, path, t, why);
    return t;
}

void sc_texture_cache_free(sc_texture_cache *c)
{
    free(c->e);
    c->e = NULL;
    c->n = 0;
}

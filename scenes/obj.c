/* obj.c — Wavefront OBJ (+ MTL) reader that keeps the primitive-id contract: polygons
 * are fan-triangulated in file order and triangles keep that order whatever their
 * material. (assimp's OBJ importer regroups faces by material, which would renumber
 * them, so OBJ files are read here; every other format goes through assimp.)
 *
 * A mesh vertex is an OBJ `v` line, so vertex counts match the file; a face's `vn`/`vt`
 * references set that position's normal / texture coordinate. Handles negative
 * (relative) indices, `v/t/n`, `v//n`, CRLF and tabs. Errors name file and line. */
#include "scenes/input_file.h"
#include "scenes/build.h"
#include "scenes/decimal.h"
#include "scenes/loaders.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct obj_state {
    const char *path;
    int line;
    sc_scene *s;
    sc_mesh_builder b;
    float *vn, *vt;
    size_t nvn, nvt, cap_vn, cap_vt;
    uint32_t material;
    bool has_normals, has_uv, used_materials;
    const sc_load_opts *opts;             /* texture limits */
    char *err;
} obj_state;

static bool fail(obj_state *o, const char *what)
{
    snprintf(o->err, SC_ERR_MAX, "%.200s:%d: %.290s", o->path, o->line, what);
    return false;
}

static bool parse_floats(char *p, int n, float *out, char **end)
{
    for (int i = 0; i < n; i++) {
        char *e;
        out[i] = sc_strtof(p, &e);
        /* nan, inf and overflow are refused here, where the line is known; denormals
         * (strtof's ERANGE on underflow) are valid numbers. */
        if (e == p || !isfinite(out[i])) return false;
        p = e;
    }
    if (end) *end = p;
    return true;
}

static bool push3(float **arr, size_t *n, size_t *cap, const float *v, int k)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        float *q = realloc(*arr, nc * (size_t)k * sizeof(float));
        if (!q) return false;
        *arr = q;
        *cap = nc;
    }
    memcpy(*arr + *n * (size_t)k, v, (size_t)k * sizeof(float));
    (*n)++;
    return true;
}

/* Resolves a 1-based or negative index against count; -1 when out of range. */
static long resolve(long i, size_t count)
{
    long r = i < 0 ? (long)count + i : i - 1;
    return (i == 0 || r < 0 || (size_t)r >= count) ? -1 : r;
}

/* One face vertex "v", "v/t", "v//n" or "v/t/n": returns the position index. */
static bool face_vertex(obj_state *o, char **pp, uint32_t *out)
{
    char *p = *pp, *e;
    long v = sc_strtol(p, &e), t = 0, n = 0;
    if (e == p) return fail(o, "malformed face (expected a vertex index)");
    p = e;
    if (*p == '/') {
        p++;
        if (*p != '/') { t = sc_strtol(p, &e); if (e == p) return fail(o, "malformed texture index"); p = e; }
        if (*p == '/') { p++; n = sc_strtol(p, &e); if (e == p) return fail(o, "malformed normal index"); p = e; }
    }
    long rv = resolve(v, o->b.nv);
    if (rv < 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "vertex index %ld out of range (%zu vertices so far)", v, o->b.nv);
        return fail(o, msg);
    }
    if (n) {
        long rn = resolve(n, o->nvn);
        if (rn < 0) return fail(o, "normal index out of range");
        sc_mb_normal(&o->b, (uint32_t)rv, o->vn[3 * rn], o->vn[3 * rn + 1], o->vn[3 * rn + 2]);
        o->has_normals = true;
    }
    if (t) {
        long rt = resolve(t, o->nvt);
        if (rt < 0) return fail(o, "texture index out of range");
        sc_mb_uv(&o->b, (uint32_t)rv, o->vt[2 * rt], o->vt[2 * rt + 1]);
        o->has_uv = true;
    }
    *out = (uint32_t)rv;
    *pp = p;
    return true;
}

static bool read_face(obj_state *o, char *p)
{
    uint32_t first = 0, prev = 0, cur;
    int n = 0;
    while (*p) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p || *p == '#') break;
        if (!face_vertex(o, &p, &cur)) return false;
        if (n == 0) first = cur;
        else if (n >= 2) sc_mb_triangle(&o->b, first, prev, cur, o->material);
        prev = cur;
        n++;
    }
    if (n < 3) return fail(o, "a face needs at least 3 vertices");
    return true;
}

static int mtl_material(obj_state *o, const char *name)
{
    int m = sc_scene_find_material(o->s, name);
    if (m < 0) m = sc_scene_add_material(o->s, name, 0.8f, 0.8f, 0.8f, 0.0f, 0.3f, 32.0f);
    return m;
}

/* `name` relative to the directory of `file` (an absolute name as it is). */
static void beside(const char *file, const char *name, char path[1024])
{
    const char *slash = strrchr(file, '/');
    int dir = name[0] == '/' ? 0 : slash ? (int)(slash - file + 1) : 0;
    snprintf(path, 1024, "%.*s%s", dir, file, name);
}

/* What an MTL material says beyond the plain factors, applied once the file is read
 * (map_d may come before or after map_Kd). */
typedef struct mtl_entry {
    int material;
    int kd, d, ke;                /* texture indices, -1 for none */
    bool has_d;                   /* a d or Tr line */
} mtl_entry;

/* A map_ line's file (its last word: options such as -s come before it), read through
 * the cache. A file that cannot be read is a warning naming the MTL line and material,
 * counted in unreadable_textures. -1 when there is none. */
static int map_file(obj_state *o, int material, char *args, const char *mtl, int line,
                    const char *key, sc_texture_cache *cache)
{
    char *name = NULL, *save = NULL;
    for (char *w = strtok_r(args, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save))
        name = w;
    char path[SC_PATH_MAX], why[SC_ERR_MAX], where[300];
    snprintf(where, sizeof where, "%.200s:%d: %s", mtl, line, key);
    if (!name) {
        sc_warn_unreadable_texture(o->s, where, o->s->materials[material].name, "no file named");
        return -1;
    }
    sc_texture_path(mtl, name, path);
    int t = sc_texture_cache_get(cache, o->s, path, o->opts, why);
    if (t < 0) sc_warn_unreadable_texture(o->s, where, o->s->materials[material].name, why);
    return t;
}

/* map_d: the base colour texture's alpha times the opacity map's (its alpha where it has
 * one, else its red channel: a greyscale map), sampled at the nearest texel where the
 * sizes differ. A new texture (map_Kd's stays as it is for other materials); with no
 * map_Kd, white with map_d's opacity. */
static int combine_opacity(sc_scene *s, int kd, int d, char err[SC_ERR_MAX])
{
    const sc_texture *td = &s->textures[d];
    const sc_mip_level *ld = &td->levels[0];
    const sc_mip_level *lk = kd >= 0 ? &s->textures[kd].levels[0] : ld;
    int w = lk->width, h = lk->height;
    unsigned char *px = malloc((size_t)w * h * 4);
    if (!px) { snprintf(err, SC_ERR_MAX, "out of memory"); return -1; }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const unsigned char *a = ld->rgba + 4 * ((size_t)(y * (size_t)ld->height / h) * ld->width +
                                                     (size_t)x * ld->width / w);
            unsigned char *p = px + 4 * ((size_t)y * w + x);
            if (kd >= 0) memcpy(p, lk->rgba + 4 * ((size_t)y * w + x), 4);
            else p[0] = p[1] = p[2] = p[3] = 255;
            unsigned op = td->has_alpha ? a[3] : a[0];
            p[3] = (unsigned char)((p[3] * op + 127) / 255);
        }
    char name[SC_NAME_MAX];
    snprintf(name, sizeof name, "%.30s+%.30s", kd >= 0 ? s->textures[kd].name : "", td->name);
    return sc_add_texture(s, name, w, h, px, err);
}

/* The material's textures and alpha mode from what its MTL lines said. OBJ has no alpha
 * mode: a material blends when its d is below 1 or its base colour texture has a texel
 * whose alpha is below 255. */
static void finish_material(obj_state *o, const mtl_entry *e, const char *mtl)
{
    sc_material *m = &o->s->materials[e->material];
    int kd = e->kd;
    if (e->d >= 0) {
        char err[SC_ERR_MAX];
        int c = combine_opacity(o->s, e->kd, e->d, err);
        m = &o->s->materials[e->material];
        if (c >= 0) kd = c;
        else sc_warn_unreadable_texture(o->s, mtl, m->name, err);
    }
    m->albedo_map.texture = kd;
    m->emissive_map.texture = e->ke;
    if (m->alpha < 1 || (kd >= 0 && o->s->textures[kd].has_alpha)) m->alpha_mode = SC_ALPHA_BLEND;
}

/* An MTL file's entries, one per material it names, with an index from material to
 * entry (a scan of the entries per newmtl was quadratic: 80,000 materials took minutes
 * under ThreadSanitizer). */
typedef struct mtl_entries {
    mtl_entry *list;
    size_t n, cap;
    size_t *of;                           /* [material]: entry index + 1, 0 for none */
    size_t nof;
} mtl_entries;

static mtl_entry *mtl_entry_of(mtl_entries *es, int material)
{
    size_t m = (size_t)material;
    if (m >= es->nof) {
        size_t nof = m + 1 > 2 * es->nof ? m + 1 : 2 * es->nof;
        size_t *of = realloc(es->of, nof * sizeof *of);
        if (!of) return NULL;
        memset(of + es->nof, 0, (nof - es->nof) * sizeof *of);
        es->of = of;
        es->nof = nof;
    }
    if (es->of[m]) return &es->list[es->of[m] - 1];
    if (es->n == es->cap) {
        size_t cap = es->cap ? 2 * es->cap : 16;
        mtl_entry *grown = realloc(es->list, cap * sizeof *grown);
        if (!grown) return NULL;
        es->list = grown;
        es->cap = cap;
    }
    es->list[es->n] = (mtl_entry){material, -1, -1, -1, false};
    es->of[m] = ++es->n;
    return &es->list[es->n - 1];
}

static float clamp01(float v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

/* MTL: newmtl, Kd (albedo), Ns (exponent), Ks (specular weight), d (opacity; Tr = 1 - d),
 * Ke (emissive), map_Kd (albedo texture), map_d (opacity map), map_Ke (emissive texture);
 * files relative to the MTL file. A texture that cannot be read is a warning (the
 * material renders untextured). Missing MTL file: warning-free fallback to grey, since
 * many OBJ files name an MTL that was not shipped. */
static bool read_mtl(obj_state *o, const char *name)
{
    char path[1024];
    beside(o->path, name, path);
    if (access(path, F_OK) != 0) return true;
    char why[SC_ERR_MAX];
    FILE *f = sc_open_input(path, "r", o->opts->max_memory, why);
    if (!f) return fail(o, why);
    char line[1024];
    int cur = -1, at = 0;
    mtl_entries entries = {0};
    mtl_entry *e = NULL;
    sc_texture_cache cache = {0};
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) {
        char *p = line;
        at++;
        while (isspace((unsigned char)*p)) p++;
        float v[3];
        char key[32], arg[256];
        if (sscanf(p, "%31s %255s", key, arg) < 1) continue;
        sc_material *m = cur >= 0 ? &o->s->materials[cur] : NULL;
        if (!strcmp(key, "newmtl")) {
            cur = mtl_material(o, arg);
            e = cur >= 0 ? mtl_entry_of(&entries, cur) : NULL;
            ok = e != NULL || fail(o, "out of memory");
        } else if (!m) {
            continue;
        } else if (!strcmp(key, "map_Kd")) {
            e->kd = map_file(o, cur, p + 6, path, at, "map_Kd", &cache);
        } else if (!strcmp(key, "map_d")) {
            e->d = map_file(o, cur, p + 5, path, at, "map_d", &cache);
        } else if (!strcmp(key, "map_Ke")) {
            e->ke = map_file(o, cur, p + 6, path, at, "map_Ke", &cache);
        } else if (!strcmp(key, "Kd") && parse_floats(p + 2, 3, v, NULL)) {
            memcpy(m->albedo, v, sizeof v);
        } else if (!strcmp(key, "Ns") && parse_floats(p + 2, 1, v, NULL)) {
            m->specular_exponent = v[0] > 1 ? v[0] : 1;
        } else if (!strcmp(key, "Ks") && parse_floats(p + 2, 3, v, NULL)) {
            m->specular = (v[0] + v[1] + v[2]) / 3;
        } else if (!strcmp(key, "Ke") && parse_floats(p + 2, 3, v, NULL)) {
            for (int i = 0; i < 3; i++) m->emissive[i] = v[i] < 0 ? 0 : v[i] > SC_FACTOR_MAX ? SC_FACTOR_MAX : v[i];
        } else if (!strcmp(key, "d") && parse_floats(p + 1, 1, v, NULL)) {
            m->alpha = clamp01(v[0]);
            e->has_d = true;
        } else if (!strcmp(key, "Tr") && parse_floats(p + 2, 1, v, NULL) && !e->has_d) {
            m->alpha = clamp01(1 - v[0]);        /* d wins where a file has both */
        }
    }
    fclose(f);
    for (size_t i = 0; ok && i < entries.n; i++) finish_material(o, &entries.list[i], path);
    free(entries.list);
    free(entries.of);
    sc_texture_cache_free(&cache);
    return ok;
}

static bool read_line(obj_state *o, char *p)
{
    while (isspace((unsigned char)*p)) p++;
    float v[3];
    if (p[0] == 'v' && isspace((unsigned char)p[1])) {
        if (!parse_floats(p + 1, 3, v, NULL)) return fail(o, "malformed vertex (expected x y z, finite numbers)");
        sc_mb_vertex(&o->b, v[0], v[1], v[2]);
    } else if (p[0] == 'v' && p[1] == 'n' && isspace((unsigned char)p[2])) {
        if (!parse_floats(p + 2, 3, v, NULL)) return fail(o, "malformed normal (expected 3 finite numbers)");
        if (!push3(&o->vn, &o->nvn, &o->cap_vn, v, 3)) return fail(o, "out of memory");
    } else if (p[0] == 'v' && p[1] == 't' && isspace((unsigned char)p[2])) {
        if (!parse_floats(p + 2, 2, v, NULL)) return fail(o, "malformed texture coordinate (expected 2 finite numbers)");
        if (!push3(&o->vt, &o->nvt, &o->cap_vt, v, 2)) return fail(o, "out of memory");
    } else if (p[0] == 'f' && isspace((unsigned char)p[1])) {
        return read_face(o, p + 1);
    } else if (!strncmp(p, "usemtl", 6) && isspace((unsigned char)p[6])) {
        char name[256] = "";
        sscanf(p + 6, "%255s", name);
        int m = mtl_material(o, name);
        if (m < 0) return fail(o, "out of memory");
        o->material = (uint32_t)m;
        o->used_materials = true;
    } else if (!strncmp(p, "mtllib", 6) && isspace((unsigned char)p[6])) {
        char name[256] = "";
        sscanf(p + 6, "%255s", name);
        return read_mtl(o, name);
    }
    return sc_mb_ok(&o->b) || fail(o, "out of memory");
}

int sc_read_obj(sc_scene *s, const char *path, const sc_load_opts *opts, char err[SC_ERR_MAX])
{
    FILE *f = sc_open_input(path, "r", opts->max_memory, err);
    if (!f) return -1;
    obj_state o = {.path = path, .s = s, .opts = opts, .err = err};
    o.material = (uint32_t)sc_scene_add_material(s, "default", 0.8f, 0.8f, 0.8f, 0.3f, 0.5f, 32.0f);
    char *line = NULL;
    size_t cap = 0;
    bool ok = true;
    for (ssize_t n; ok && (n = sc_read_line(f, &line, &cap)) != 0;) {
        o.line++;
        ok = n > 0 ? read_line(&o, line)
                   : fail(&o, "a line longer than " LIMIT_NAMED(SC_MAX_LINE) " bytes, or no memory for it");
    }
    free(line);
    fclose(f);
    free(o.vn);
    free(o.vt);
    if (ok && o.b.nt == 0) ok = fail(&o, "no faces: the mesh is empty");
    const char *base = strrchr(path, '/');
    int m = ok ? sc_scene_add_mesh(s, base ? base + 1 : path, &o.b) : -1;
    if (ok && m < 0) snprintf(err, SC_ERR_MAX, "%s: out of memory", path);
    sc_mb_free(&o.b);
    return m;
}

/* scene_file.c — the .scene text format, parsed with libinih (INI sections and keys):
 *
 *   [scene]            name = courtyard-test
 *   [camera]           eye = x,y,z   target = x,y,z   up = x,y,z   fovy = 40
 *   [light.NAME]       position = x,y,z   color = r,g,b
 *   [material.NAME]    albedo = r,g,b   reflectivity = 0.3   specular = 0.5
 *                      exponent = 32    texture = file.png   alpha = 1
 *                      alpha_mode = opaque|mask|blend   alpha_cutoff = 0.5
 *                      double_sided = true|false   model = blinn-phong|metallic-roughness
 *                      metallic = 0   roughness = 1   emissive = r,g,b
 *                      normal_map | emissive_map | metallic_roughness_map |
 *                      occlusion_map = file.png   normal_scale = 1   occlusion_strength = 1
 *                      wrap (or wrap_u, wrap_v) = repeat|clamp|mirror   uv_set = 0
 *                      filter = trilinear|bilinear|nearest|nearest-no-mips|linear-no-mips
 *                      uv_offset = u,v   uv_scale = u,v   uv_rotation = radians
 *   [mesh.NAME]        file = mesh.obj (or builtin = teapot)   material = NAME
 *                      transform = 16 numbers, column-major  |  translate = x,y,z
 *                      scale = s or x,y,z   rotate = ax,ay,az,degrees
 *
 * Paths are relative to the .scene file. Unknown sections or keys, malformed numbers,
 * values out of range and missing mesh files are errors naming the file and line; a
 * texture that cannot be read is a warning naming them and the material. Meshes load after the whole file
 * is read (so sections may come in any order); their errors name the mesh's section. */
#include "scenes/input_file.h"
#include "scenes/build.h"
#include "scenes/builtin.h"
#include "scenes/loaders.h"
#include "scenes/validate.h"

#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct mesh_entry {
    char name[SC_NAME_MAX];
    char file[512], builtin[32], material[SC_NAME_MAX];
    float transform[16];
    int line;                     /* where the section's first key is, for later errors */
} mesh_entry;

typedef struct parse_state {
    const char *path;
    const sc_load_opts *opts;
    FILE *file;
    int line;                     /* the line being parsed (counted by read_line) */
    int camera_line;              /* the line of the last [camera] key, 0 if none */
    bool too_long;                /* stopped at a line longer than libinih's buffer, or
                                     holding a NUL byte (p->err says which) */
    char dir[512];
    sc_scene *s;
    mesh_entry meshes[SC_MAX_FILE_MESHES];
    int nmeshes;
    char err[SC_ERR_MAX];
    char last_section[128];
    sc_texture_cache textures;    /* each texture file read once */
} parse_state;

static int fail(parse_state *p, const char *fmt, const char *a, const char *b)
{
    char msg[SC_ERR_MAX - 64];
    snprintf(msg, sizeof msg, fmt, a, b);
    snprintf(p->err, sizeof p->err, "%s", msg);
    return 0;
}

static bool floats(const char *v, int n, float *out)
{
    for (int i = 0; i < n; i++) {
        char *e;
        out[i] = strtof(v, &e);
        if (e == v || !isfinite(out[i])) return false;
        while (*e == ' ' || *e == '\t') e++;
        if (i + 1 < n && *e++ != ',') return false;
        v = e;
    }
    while (*v == ' ' || *v == '\t') v++;
    return *v == 0;
}

static bool all_finite(const float *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

static void mat_mul(const float a[16], const float b[16], float out[16])
{
    float r[16];
    for (int c = 0; c < 4; c++)
        for (int row = 0; row < 4; row++) {
            float x = 0;
            for (int k = 0; k < 4; k++) x += a[k * 4 + row] * b[c * 4 + k];
            r[c * 4 + row] = x;
        }
    memcpy(out, r, sizeof r);
}

/* translate/scale/rotate compose onto the transform in the order they appear. */
static bool mesh_transform_key(mesh_entry *m, const char *key, const char *v)
{
    float t[16], x[4];
    sc_identity(t);
    if (!strcmp(key, "transform")) return floats(v, 16, m->transform) && all_finite(m->transform, 16);
    if (!strcmp(key, "translate")) {
        if (!floats(v, 3, x)) return false;
        t[12] = x[0]; t[13] = x[1]; t[14] = x[2];
    } else if (!strcmp(key, "scale")) {
        if (floats(v, 1, x)) x[1] = x[2] = x[0];
        else if (!floats(v, 3, x)) return false;
        t[0] = x[0]; t[5] = x[1]; t[10] = x[2];
    } else if (!strcmp(key, "rotate")) {
        if (!floats(v, 4, x)) return false;
        float l = sqrtf(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        if (l == 0) return false;
        float ax = x[0] / l, ay = x[1] / l, az = x[2] / l, a = x[3] * (float)M_PI / 180.0f;
        float c = cosf(a), s = sinf(a), k = 1 - c;
        float r[16] = {k * ax * ax + c, k * ax * ay + s * az, k * ax * az - s * ay, 0,
                       k * ax * ay - s * az, k * ay * ay + c, k * ay * az + s * ax, 0,
                       k * ax * az + s * ay, k * ay * az - s * ax, k * az * az + c, 0, 0, 0, 0, 1};
        memcpy(t, r, sizeof t);
    } else {
        return false;
    }
    mat_mul(t, m->transform, m->transform);
    return all_finite(m->transform, 16);     /* composing can overflow: scale = 1e20, twice */
}

static int camera_key(parse_state *p, const char *key, const char *v)
{
    sc_camera *c = &p->s->camera;
    bool ok;
    p->camera_line = p->line;
    if (!strcmp(key, "eye")) ok = floats(v, 3, c->eye);
    else if (!strcmp(key, "target")) ok = floats(v, 3, c->target);
    else if (!strcmp(key, "up")) ok = floats(v, 3, c->up);
    else if (!strcmp(key, "fovy")) ok = floats(v, 1, &c->fovy_deg) && c->fovy_deg > 0 && c->fovy_deg < 180;
    else return fail(p, "[camera]: unknown key '%s'%s", key, "");
    return ok ? 1 : fail(p, "[camera]: bad value for '%s': '%s'", key, v);
}

static sc_light *current_light(parse_state *p, const char *section)
{
    if (strcmp(p->last_section, section)) {
        snprintf(p->last_section, sizeof p->last_section, "%s", section);
        if (sc_scene_add_light(p->s, 0, 0, 0, 1, 1, 1) < 0) return NULL;
    }
    return &p->s->lights[p->s->nlights - 1];
}

static int light_key(parse_state *p, const char *section, const char *key, const char *v)
{
    sc_light *l = current_light(p, section);
    if (!l) return fail(p, "out of memory%s%s", "", "");
    bool ok;
    if (!strcmp(key, "position")) ok = floats(v, 3, l->position);
    else if (!strcmp(key, "color")) ok = floats(v, 3, l->color);
    else return fail(p, "[%s]: unknown key '%s'", section, key);
    const char *why = ok ? sc_light_problem(l) : "expected three numbers";
    return why ? fail(p, "[%s]: %s", section, why) : 1;
}

static bool word_is(const char *v, const char *const *words, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, words[i])) { *out = i; return true; }
    return false;
}

static const char *const wrap_words[] = {"repeat", "clamp", "mirror"};
static const char *const filter_words[] = {"trilinear", "bilinear", "nearest", "nearest-no-mips",
                                           "linear-no-mips"};
static const char *const alpha_words[] = {"opaque", "mask", "blend"};
static const char *const model_words[] = {"blinn-phong", "metallic-roughness"};
static const char *const bool_words[] = {"false", "true", "no", "yes", "0", "1"};

/* The material's texture references, in sc_material order. */
static sc_texture_ref *material_refs(sc_material *m, int i)
{
    sc_texture_ref *r[] = {&m->albedo_map, &m->metallic_roughness_map, &m->emissive_map,
                           &m->normal_map, &m->occlusion_map};
    return r[i];
}

/* A texture key's file: its index through the cache, or -1 after a warning naming the
 * file, the line and the material (the material renders without it). */
static int texture_file(parse_state *p, const char *section, const char *key, const char *v)
{
    char path[SC_PATH_MAX], why[SC_ERR_MAX], where[SC_PATH_MAX + 64];
    snprintf(path, sizeof path, "%.511s%.500s", v[0] == '/' ? "" : p->dir, v);
    int t = sc_texture_cache_get(&p->textures, p->s, path, p->opts, why);
    snprintf(where, sizeof where, "%.400s:%d: %s", p->path, p->line, key);
    if (t < 0) sc_warn_unreadable_texture(p->s, where, section + strlen("material."), why);
    return t;
}

/* [material.NAME] keys: the factors, alpha, sides, shading model, textures (base colour
 * `texture`, `normal_map`, `emissive_map`, `metallic_roughness_map`, `occlusion_map`)
 * and the sampler and uv transform every texture of the material uses. */
static int material_key(parse_state *p, const char *section, const char *key, const char *v)
{
    static const char *const maps[] = {"texture", "metallic_roughness_map", "emissive_map",
                                       "normal_map", "occlusion_map"};
    const char *name = section + strlen("material.");
    int i = sc_scene_find_material(p->s, name);
    if (i < 0) i = sc_scene_add_material(p->s, name, 0.8f, 0.8f, 0.8f, 0, 0.5f, 32);
    if (i < 0) return fail(p, "out of memory%s%s", "", "");
    sc_material *m = &p->s->materials[i];
    float x[3];
    int w;
    bool ok = true;
    if (!strcmp(key, "albedo")) ok = floats(v, 3, m->albedo);
    else if (!strcmp(key, "reflectivity")) ok = floats(v, 1, &m->reflectivity);
    else if (!strcmp(key, "specular")) ok = floats(v, 1, &m->specular);
    else if (!strcmp(key, "exponent")) ok = floats(v, 1, &m->specular_exponent) && m->specular_exponent >= 1;
    else if (!strcmp(key, "alpha")) ok = floats(v, 1, &m->alpha);
    else if (!strcmp(key, "alpha_cutoff")) ok = floats(v, 1, &m->alpha_cutoff);
    else if (!strcmp(key, "metallic")) ok = floats(v, 1, &m->metallic);
    else if (!strcmp(key, "roughness")) ok = floats(v, 1, &m->roughness);
    else if (!strcmp(key, "emissive")) ok = floats(v, 3, m->emissive);
    else if (!strcmp(key, "normal_scale")) ok = floats(v, 1, &m->normal_scale);
    else if (!strcmp(key, "occlusion_strength")) ok = floats(v, 1, &m->occlusion_strength);
    else if (!strcmp(key, "alpha_mode")) ok = word_is(v, alpha_words, 3, &w) && ((m->alpha_mode = (sc_alpha_mode)w), 1);
    else if (!strcmp(key, "model")) ok = word_is(v, model_words, 2, &w) && ((m->model = (sc_shading_model)w), 1);
    else if (!strcmp(key, "double_sided")) ok = word_is(v, bool_words, 6, &w) && ((m->double_sided = w & 1), 1);
    else if (!strcmp(key, "wrap") || !strcmp(key, "wrap_u") || !strcmp(key, "wrap_v")) {
        ok = word_is(v, wrap_words, 3, &w);
        char only = key[4] ? key[5] : 0;          /* wrap_u, wrap_v: one direction */
        for (int k = 0; ok && k < 5; k++) {
            if (only != 'v') material_refs(m, k)->sampler.wrap_u = (sc_wrap)w;
            if (only != 'u') material_refs(m, k)->sampler.wrap_v = (sc_wrap)w;
        }
    } else if (!strcmp(key, "filter")) {
        ok = word_is(v, filter_words, 5, &w);
        for (int k = 0; ok && k < 5; k++) material_refs(m, k)->sampler.filter = (sc_filter)w;
    } else if (!strcmp(key, "uv_offset") || !strcmp(key, "uv_scale") || !strcmp(key, "uv_rotation")) {
        bool rot = key[3] == 'r';
        ok = floats(v, rot ? 1 : 2, x);
        for (int k = 0; ok && k < 5; k++) {
            sc_texture_ref *r = material_refs(m, k);
            if (rot) r->rotation = x[0];
            else memcpy(key[3] == 'o' ? r->offset : r->scale, x, 2 * sizeof(float));
        }
    } else if (!strcmp(key, "uv_set")) {
        ok = floats(v, 1, x) && x[0] >= 0 && x[0] <= 7 && x[0] == (int)x[0];
        for (int k = 0; ok && k < 5; k++) material_refs(m, k)->uv_set = (int)x[0];
    } else {
        for (w = 0; w < 5 && strcmp(key, maps[w]); w++) {}
        if (w == 5) return fail(p, "[%s]: unknown key '%s'", section, key);
        int t = texture_file(p, section, key, v);
        m = &p->s->materials[i];
        material_refs(m, w)->texture = t;
        return 1;
    }
    if (!ok) return fail(p, "[%s]: bad value '%s'", section, v);
    const char *why = sc_material_problem(p->s, m);
    if (why) {
        char msg[200];
        snprintf(msg, sizeof msg, "%.60s: %.130s", key, why);
        return fail(p, "[%s]: %s", section, msg);
    }
    return 1;
}

static mesh_entry *current_mesh(parse_state *p, const char *section)
{
    const char *name = section + strlen("mesh.");
    for (int i = 0; i < p->nmeshes; i++)
        if (!strcmp(p->meshes[i].name, name)) return &p->meshes[i];
    if (p->nmeshes == SC_MAX_FILE_MESHES) return NULL;
    mesh_entry *m = &p->meshes[p->nmeshes++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    sc_identity(m->transform);
    m->line = p->line;
    return m;
}

static int mesh_key(parse_state *p, const char *section, const char *key, const char *v)
{
    mesh_entry *m = current_mesh(p, section);
    if (!m) return fail(p, "[%s]: too many meshes (at most %s)", section, LIMIT_NAMED(SC_MAX_FILE_MESHES));
    if (!strcmp(key, "file")) snprintf(m->file, sizeof m->file, "%s%s", v[0] == '/' ? "" : p->dir, v);
    else if (!strcmp(key, "builtin")) snprintf(m->builtin, sizeof m->builtin, "%s", v);
    else if (!strcmp(key, "material")) snprintf(m->material, sizeof m->material, "%s", v);
    else if (!mesh_transform_key(m, key, v)) {
        bool known = !strcmp(key, "transform") || !strcmp(key, "translate") ||
                     !strcmp(key, "scale") || !strcmp(key, "rotate");
        return fail(p, known ? "[%s]: bad value for '%s'" : "[%s]: unknown key '%s'", section, key);
    }
    return 1;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
    parse_state *p = user;
    if (!strcmp(section, "scene") && !strcmp(key, "name")) {
        snprintf(p->s->name, sizeof p->s->name, "%s", value);
        return 1;
    }
    if (!strcmp(section, "camera")) return camera_key(p, key, value);
    if (!strncmp(section, "light.", 6) && section[6]) return light_key(p, section, key, value);
    if (!strncmp(section, "material.", 9) && section[9]) return material_key(p, section, key, value);
    if (!strncmp(section, "mesh.", 5) && section[5]) return mesh_key(p, section, key, value);
    return fail(p, "unknown section [%s] or key '%s'", section, key);
}

/* Loads one [mesh.*] entry: its geometry, material override and instance. */
static bool load_mesh(parse_state *p, mesh_entry *m)
{
    char err[SC_ERR_MAX];
    int idx;
    if (m->builtin[0]) {
        sc_scene *b = sc_builtin(m->builtin, err);
        if (!b) { fail(p, "[mesh.%s]: unknown builtin '%s'", m->name, m->builtin); return false; }
        idx = (int)p->s->nmeshes;
        sc_mesh_builder mb = {0};
        const sc_mesh *src = &b->meshes[0];
        for (size_t v = 0; v < src->nvertices; v++) sc_mb_vertex(&mb, src->positions[3 * v], src->positions[3 * v + 1], src->positions[3 * v + 2]);
        for (size_t t = 0; t < src->ntriangles; t++) sc_mb_triangle(&mb, src->indices[3 * t], src->indices[3 * t + 1], src->indices[3 * t + 2], 0);
        sc_free(b);
        idx = sc_scene_add_mesh(p->s, m->name, &mb);
        sc_mb_free(&mb);
    } else if (m->file[0]) {
        idx = sc_read_mesh(p->s, m->file, p->opts, err);
        if (idx < 0) { snprintf(p->err, sizeof p->err, "[mesh.%.60s]: %.400s", m->name, err); return false; }
    } else {
        fail(p, "[mesh.%s]: needs file = ... or builtin = ...%s", m->name, "");
        return false;
    }
    if (idx < 0) { fail(p, "[mesh.%s]: out of memory%s", m->name, ""); return false; }
    if (m->material[0] || p->s->meshes[idx].ntriangles) {
        int mat = m->material[0] ? sc_scene_find_material(p->s, m->material) : -1;
        if (m->material[0] && mat < 0) { fail(p, "[mesh.%s]: unknown material '%s'", m->name, m->material); return false; }
        if (mat < 0 && m->builtin[0]) mat = sc_scene_find_material(p->s, "default");
        if (mat < 0 && m->builtin[0]) mat = sc_scene_add_material(p->s, "default", 0.8f, 0.8f, 0.8f, 0.3f, 0.5f, 32);
        for (size_t t = 0; mat >= 0 && t < p->s->meshes[idx].ntriangles; t++) p->s->meshes[idx].materials[t] = (uint32_t)mat;
    }
    size_t bad = sc_first_bad_vertex(&p->s->meshes[idx], m->transform);
    if (bad < p->s->meshes[idx].nvertices) {
        snprintf(p->err, sizeof p->err, "[mesh.%.60s]: the transform takes vertex %zu beyond "
                 "+-1e11 (SC_COORD_MAX) or to infinity", m->name, bad + 1);
        return false;
    }
    if (sc_scene_add_instance(p->s, (uint32_t)idx, m->transform) < 0) {
        fail(p, "[mesh.%s]: out of memory%s", m->name, "");
        return false;
    }
    return true;
}

/* libinih's line reader, counting lines and refusing a line longer than its buffer
 * (num - 1 characters): libinih would parse the rest as a new line, giving a bogus
 * syntax error on the wrong line. A NUL byte is refused too: it would end the value
 * there in silence. Returning NULL ends the parse; too_long says why. */
static char *read_line(char *str, int num, void *stream)
{
    parse_state *p = stream;
    int c = 0, n0 = 0;
    while (n0 < num - 1 && (c = getc(p->file)) != EOF) {
        str[n0++] = (char)c;
        if (c == '\n' || c == 0) break;
    }
    str[n0] = 0;
    if (n0 == 0) return NULL;
    p->line++;
    if (c == 0) {
        p->too_long = true;
        snprintf(p->err, sizeof p->err, "a NUL byte in the line (a .scene file is text)");
        return NULL;
    }
    size_t n = strlen(str);
    if (n + 1 < (size_t)num || str[n - 1] == '\n') return str;
    int next = getc(p->file);
    if (next == EOF) return str;
    if (next != '\n') {
        p->too_long = true;
        snprintf(p->err, sizeof p->err, "line longer than %d characters (the .scene limit)", num - 2);
        return NULL;
    }
    return str;                   /* exactly num - 1 characters, then the newline */
}

/* Parses the file; returns 0, or the line of the first error (-1: cannot open). */
static int parse_file(parse_state *p)
{
    p->file = sc_open_input(p->path, "r", 0, p->err);
    if (!p->file) return -1;
    int rc = ini_parse_stream(read_line, p, handler, p);
    fclose(p->file);
    if (rc == 0 && p->too_long) rc = p->line;
    if (rc == 0 && p->camera_line) {
        const char *why = sc_camera_problem(&p->s->camera);
        if (why) { fail(p, "[camera]: %s%s", why, ""); rc = p->camera_line; }
    }
    return rc;
}

sc_scene *sc_load_scene_file(const char *path, const sc_load_opts *o, char err[SC_ERR_MAX])
{
    parse_state *p = calloc(1, sizeof *p);
    sc_scene *s = sc_scene_new("scene");
    if (!p || !s) { free(p); sc_free(s); snprintf(err, SC_ERR_MAX, "%s: out of memory", path); return NULL; }
    p->path = path;
    p->opts = o;
    p->s = s;
    const char *slash = strrchr(path, '/');
    snprintf(p->dir, sizeof p->dir, "%.*s", slash ? (int)(slash - path + 1) : 0, path);
    const char *base = slash ? slash + 1 : path;
    snprintf(s->name, sizeof s->name, "%.*s", (int)(strlen(base) - strlen(".scene")), base);
    int rc = parse_file(p);
    bool ok = rc == 0;
    if (rc < 0) snprintf(err, SC_ERR_MAX, "%s", p->err);
    else if (rc > 0) snprintf(err, SC_ERR_MAX, "%.100s:%d: %.380s", path, rc,
                             p->err[0] ? p->err : "syntax error (expected [section] or key = value)");
    int i = 0;
    for (; ok && i < p->nmeshes; i++) ok = load_mesh(p, &p->meshes[i]);
    if (ok && p->nmeshes == 0) { snprintf(err, SC_ERR_MAX, "%s: no [mesh.*] section", path); ok = false; }
    else if (!ok && rc == 0)
        snprintf(err, SC_ERR_MAX, "%.100s:%d: %.380s", path, p->meshes[i - 1].line, p->err);
    sc_texture_cache_free(&p->textures);
    free(p);
    if (!ok) { sc_free(s); return NULL; }
    return s;
}

/* ---- writing ----------------------------------------------------------------------------- */

static int write_obj(const sc_mesh *m, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (size_t v = 0; v < m->nvertices; v++)
        fprintf(f, "v %.9g %.9g %.9g\n", m->positions[3 * v], m->positions[3 * v + 1], m->positions[3 * v + 2]);
    for (size_t v = 0; v < m->nvertices; v++)
        fprintf(f, "vn %.9g %.9g %.9g\n", m->normals[3 * v], m->normals[3 * v + 1], m->normals[3 * v + 2]);
    for (size_t v = 0; m->texcoords && v < m->nvertices; v++)
        fprintf(f, "vt %.9g %.9g\n", m->texcoords[2 * v], m->texcoords[2 * v + 1]);
    for (size_t t = 0; t < m->ntriangles; t++) {
        const uint32_t *i = m->indices + 3 * t;
        if (m->texcoords)
            fprintf(f, "f %u/%u/%u %u/%u/%u %u/%u/%u\n", i[0] + 1, i[0] + 1, i[0] + 1, i[1] + 1,
                    i[1] + 1, i[1] + 1, i[2] + 1, i[2] + 1, i[2] + 1);
        else
            fprintf(f, "f %u//%u %u//%u %u//%u\n", i[0] + 1, i[0] + 1, i[1] + 1, i[1] + 1, i[2] + 1, i[2] + 1);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* Level 0 of t as an uncompressed 32-bit TGA (what stb_image reads back), rows top first. */
static int write_tga(const sc_texture *t, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    const sc_mip_level *l = &t->levels[0];
    unsigned char h[18] = {0, 0, 2};
    h[12] = (unsigned char)(l->width & 255); h[13] = (unsigned char)(l->width >> 8);
    h[14] = (unsigned char)(l->height & 255); h[15] = (unsigned char)(l->height >> 8);
    h[16] = 32;
    h[17] = 0x28;                     /* 8 alpha bits, origin at the top left */
    bool ok = fwrite(h, 1, sizeof h, f) == sizeof h && l->width < 65536 && l->height < 65536;
    unsigned char *row = malloc((size_t)l->width * 4);
    for (int y = 0; ok && row && y < l->height; y++) {
        const unsigned char *src = l->rgba + (size_t)y * l->width * 4;
        for (int x = 0; x < l->width; x++) {
            row[4 * x] = src[4 * x + 2]; row[4 * x + 1] = src[4 * x + 1];
            row[4 * x + 2] = src[4 * x]; row[4 * x + 3] = src[4 * x + 3];
        }
        ok = fwrite(row, 4, (size_t)l->width, f) == (size_t)l->width;
    }
    ok = ok && row;
    free(row);
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* One material's keys; its textures written beside path as PATH.texN.tga. */
static int write_material(FILE *f, const sc_scene *s, const sc_material *m, const char *path,
                          const char *slash, char err[SC_ERR_MAX])
{
    static const char *const maps[] = {"texture", "metallic_roughness_map", "emissive_map",
                                       "normal_map", "occlusion_map"};
    fprintf(f, "\n[material.%s]\nalbedo = %.9g,%.9g,%.9g\nreflectivity = %.9g\nspecular = %.9g\n"
            "exponent = %.9g\n", m->name, m->albedo[0], m->albedo[1], m->albedo[2],
            m->reflectivity, m->specular, m->specular_exponent);
    fprintf(f, "alpha = %.9g\nalpha_mode = %s\nalpha_cutoff = %.9g\ndouble_sided = %s\nmodel = %s\n"
            "metallic = %.9g\nroughness = %.9g\nemissive = %.9g,%.9g,%.9g\nnormal_scale = %.9g\n"
            "occlusion_strength = %.9g\n", m->alpha, alpha_words[m->alpha_mode], m->alpha_cutoff,
            m->double_sided ? "true" : "false", model_words[m->model], m->metallic, m->roughness,
            m->emissive[0], m->emissive[1], m->emissive[2], m->normal_scale, m->occlusion_strength);
    /* one sampler and transform per material in .scene files: the base colour texture's */
    const sc_texture_ref *r = &m->albedo_map;
    fprintf(f, "wrap_u = %s\nwrap_v = %s\nfilter = %s\nuv_set = %d\nuv_offset = %.9g,%.9g\n"
            "uv_scale = %.9g,%.9g\nuv_rotation = %.9g\n", wrap_words[r->sampler.wrap_u],
            wrap_words[r->sampler.wrap_v], filter_words[r->sampler.filter], r->uv_set,
            r->offset[0], r->offset[1], r->scale[0], r->scale[1], r->rotation);
    sc_material copy = *m;
    for (int k = 0; k < 5; k++) {
        const sc_texture_ref *t = material_refs(&copy, k);
        if (t->texture < 0 || (size_t)t->texture >= s->ntextures) continue;
        char tga[1100];
        snprintf(tga, sizeof tga, "%s.tex%d.tga", path, t->texture);
        if (write_tga(&s->textures[t->texture], tga) != 0) {
            snprintf(err, SC_ERR_MAX, "%.400s: cannot write", tga);
            return -1;
        }
        fprintf(f, "%s = %s\n", maps[k], slash ? tga + (slash - path + 1) : tga);
    }
    return 0;
}

int sc_save_scene(const sc_scene *s, const char *path, char err[SC_ERR_MAX])
{
    FILE *f = fopen(path, "w");
    if (!f) { snprintf(err, SC_ERR_MAX, "%s: cannot write", path); return -1; }
    const sc_camera *c = &s->camera;
    fprintf(f, "[scene]\nname = %s\n\n[camera]\neye = %.9g,%.9g,%.9g\ntarget = %.9g,%.9g,%.9g\n"
            "up = %.9g,%.9g,%.9g\nfovy = %.9g\n", s->name, c->eye[0], c->eye[1], c->eye[2],
            c->target[0], c->target[1], c->target[2], c->up[0], c->up[1], c->up[2], c->fovy_deg);
    for (size_t i = 0; i < s->nlights; i++)
        fprintf(f, "\n[light.l%zu]\nposition = %.9g,%.9g,%.9g\ncolor = %.9g,%.9g,%.9g\n", i,
                s->lights[i].position[0], s->lights[i].position[1], s->lights[i].position[2],
                s->lights[i].color[0], s->lights[i].color[1], s->lights[i].color[2]);
    const char *slash = strrchr(path, '/');
    for (size_t i = 0; i < s->nmaterials; i++)
        if (write_material(f, s, &s->materials[i], path, slash, err) != 0) {
            fclose(f);
            return -1;
        }
    for (size_t k = 0; k < s->ninstances; k++) {
        const sc_instance *in = &s->instances[k];
        char obj[1100];
        snprintf(obj, sizeof obj, "%s.mesh%zu.obj", path, k);
        if (write_obj(&s->meshes[in->mesh], obj) != 0) {
            fclose(f);
            snprintf(err, SC_ERR_MAX, "%.400s: cannot write", obj);
            return -1;
        }
        fprintf(f, "\n[mesh.m%zu]\nfile = %s\nmaterial = %s\ntransform = ", k,
                slash ? obj + (slash - path + 1) : obj,
                s->materials[s->meshes[in->mesh].materials[0]].name);
        for (int i = 0; i < 16; i++) fprintf(f, "%s%.9g", i ? "," : "", in->transform[i]);
        fprintf(f, "\n");
    }
    if (fclose(f) != 0) { snprintf(err, SC_ERR_MAX, "%s: cannot write", path); return -1; }
    return 0;
}

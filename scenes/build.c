/* build.c — assembling scenes: mesh builders, materials, lights, instances, normals and
 * the fitted default camera. Allocation failures are sticky in the builder and reported
 * by the caller as "out of memory". */
#include "scenes/build.h"
#include "scenes/name_index.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

static bool grow_vertex_arrays(sc_mesh_builder *b)
{
    size_t cap = b->vcap, c2 = b->vcap, c3 = b->vcap, c4 = b->vcap;
    if (!grow((void **)&b->pos, &cap, b->nv + 1, 3 * sizeof(float))) return false;
    if (b->nrm && !grow((void **)&b->nrm, &c2, b->nv + 1, 3 * sizeof(float))) return false;
    if (b->uv && !grow((void **)&b->uv, &c3, b->nv + 1, 2 * sizeof(float))) return false;
    if (b->uv1 && !grow((void **)&b->uv1, &c4, b->nv + 1, 2 * sizeof(float))) return false;
    b->vcap = cap;
    return true;
}

uint32_t sc_mb_vertex(sc_mesh_builder *b, float x, float y, float z)
{
    if (b->nv == SIZE_MAX || !grow_vertex_arrays(b)) { b->nv = SIZE_MAX; return 0; }
    float *p = b->pos + 3 * b->nv;
    p[0] = x; p[1] = y; p[2] = z;
    if (b->nrm) memset(b->nrm + 3 * b->nv, 0, 3 * sizeof(float));
    if (b->uv) memset(b->uv + 2 * b->nv, 0, 2 * sizeof(float));
    if (b->uv1) memset(b->uv1 + 2 * b->nv, 0, 2 * sizeof(float));
    return (uint32_t)b->nv++;
}

void sc_mb_normal(sc_mesh_builder *b, uint32_t v, float x, float y, float z)
{
    if (b->nv == SIZE_MAX) return;
    if (!b->nrm && !(b->nrm = calloc(b->vcap ? b->vcap : 1, 3 * sizeof(float)))) { b->nv = SIZE_MAX; return; }
    float *n = b->nrm + 3 * v;
    n[0] = x; n[1] = y; n[2] = z;
}

static void set_uv(sc_mesh_builder *b, float **set, uint32_t v, float u, float w)
{
    if (b->nv == SIZE_MAX) return;
    if (!*set && !(*set = calloc(b->vcap ? b->vcap : 1, 2 * sizeof(float)))) { b->nv = SIZE_MAX; return; }
    (*set)[2 * v] = u;
    (*set)[2 * v + 1] = w;
}

void sc_mb_uv(sc_mesh_builder *b, uint32_t v, float u, float w) { set_uv(b, &b->uv, v, u, w); }
void sc_mb_uv1(sc_mesh_builder *b, uint32_t v, float u, float w) { set_uv(b, &b->uv1, v, u, w); }

void sc_mb_triangle(sc_mesh_builder *b, uint32_t a, uint32_t c, uint32_t d, uint32_t material)
{
    if (b->nv == SIZE_MAX) return;
    size_t cap = b->tcap, c2 = b->tcap;
    if (!grow((void **)&b->idx, &cap, b->nt + 1, 3 * sizeof(uint32_t)) ||
        !grow((void **)&b->mat, &c2, b->nt + 1, sizeof(uint32_t))) { b->nv = SIZE_MAX; return; }
    b->tcap = cap;
    uint32_t *t = b->idx + 3 * b->nt;
    t[0] = a; t[1] = c; t[2] = d;
    b->mat[b->nt++] = material;
}

bool sc_mb_ok(const sc_mesh_builder *b) { return b->nv != SIZE_MAX; }

void sc_mb_free(sc_mesh_builder *b)
{
    free(b->pos); free(b->nrm); free(b->uv); free(b->uv1); free(b->idx); free(b->mat);
    memset(b, 0, sizeof *b);
}

sc_scene *sc_scene_new(const char *name)
{
    sc_scene *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->camera = (sc_camera){{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 40};
    return s;
}

/* Room for element n of an array whose capacity is implicit: the next power of two at
 * or above its count. Growing by one element at a time copied the whole array on every
 * append where realloc cannot grow in place (ASan: 80k materials took minutes). */
static bool room_for(void **arr, size_t n, size_t elem)
{
    if (n & (n - 1)) return true;                 /* n is not 0 nor a power of two */
    void *q = realloc(*arr, (n ? 2 * n : 1) * elem);
    if (!q) return false;
    *arr = q;
    return true;
}

#define APPEND(arr, n, item) do { \
    void *a_ = (arr); \
    if (!room_for(&a_, (n), sizeof *(arr))) return -1; \
    (arr) = a_; (arr)[(n)] = (item); return (int)(n)++; } while (0)

int sc_scene_add_mesh(sc_scene *s, const char *name, sc_mesh_builder *b)
{
    if (!sc_mb_ok(b)) return -1;
    sc_mesh m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "%s", name);
    m.nvertices = b->nv;
    m.ntriangles = b->nt;
    m.positions = b->pos;
    m.indices = b->idx;
    m.materials = b->mat;
    m.texcoords = b->uv;
    m.texcoords1 = b->uv1;
    m.normals = b->nrm;
    size_t degenerate = 0;
    if (!m.normals) {
        m.normals = calloc(b->nv ? b->nv : 1, 3 * sizeof(float));
        if (!m.normals) return -1;
        sc_smooth_normals(m.positions, m.nvertices, m.indices, m.ntriangles, m.normals, &degenerate);
    } else {
        sc_smooth_normals(m.positions, m.nvertices, m.indices, m.ntriangles, NULL, &degenerate);
    }
    s->degenerate_triangles += degenerate;
    memset(b, 0, sizeof *b);
    APPEND(s->meshes, s->nmeshes, m);
}

int sc_scene_add_material(sc_scene *s, const char *name, float r, float g, float b,
                          float reflectivity, float specular, float exponent)
{
    sc_material m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "%s", name);
    m.albedo[0] = r; m.albedo[1] = g; m.albedo[2] = b;
    m.alpha = 1;
    m.albedo_map = m.metallic_roughness_map = m.emissive_map = sc_texture_ref_none();
    m.normal_map = m.occlusion_map = sc_texture_ref_none();
    m.alpha_mode = SC_ALPHA_OPAQUE;
    m.alpha_cutoff = 0.5f;
    m.double_sided = true;
    m.model = SC_SHADING_BLINN_PHONG;
    m.roughness = 1;
    m.normal_scale = 1;
    m.occlusion_strength = 1;
    m.reflectivity = reflectivity;
    m.specular = specular;
    m.specular_exponent = exponent;
    if (!s->material_names && !(s->material_names = calloc(1, sizeof *s->material_names))) return -1;
    void *arr = s->materials;
    if (!room_for(&arr, s->nmaterials, sizeof *s->materials)) return -1;
    sc_material *grown = s->materials = arr;
    grown[s->nmaterials] = m;
    if (!sc_name_index_add(s->material_names, grown, sizeof *grown, (uint32_t)s->nmaterials)) return -1;
    return (int)s->nmaterials++;
}

int sc_scene_find_material(const sc_scene *s, const char *name)
{
    if (!s->material_names) return -1;
    char key[SC_NAME_MAX];
    snprintf(key, sizeof key, "%s", name);          /* names are stored truncated */
    return (int)sc_name_index_find(s->material_names, s->materials, sizeof *s->materials, key);
}

void sc_scene_warn(sc_scene *s, const char *fmt, ...)
{
    static const char cut[] = "(further warnings left out)\n";
    char line[SC_ERR_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t len = strlen(line);
    line[len++] = '\n';
    line[len] = 0;
    size_t have = s->warnings ? strlen(s->warnings) : 0;
    if (have >= sizeof cut - 1 && !strcmp(s->warnings + have - (sizeof cut - 1), cut)) return;
    if (have + len + sizeof cut > SC_WARNINGS_MAX) { memcpy(line, cut, sizeof cut); len = sizeof cut - 1; }
    char *w = realloc(s->warnings, have + len + 1);
    if (!w) return;
    memcpy(w + have, line, len + 1);
    s->warnings = w;
}

void sc_warn_unreadable_texture(sc_scene *s, const char *where, const char *material,
                                const char *why)
{
    s->unreadable_textures++;
    sc_scene_warn(s, "%.200s: material '%.63s': %.300s; the material renders untextured", where,
                  material, why);
}

int sc_scene_add_instance(sc_scene *s, uint32_t mesh, const float transform[16])
{
    sc_instance in;
    in.mesh = mesh;
    memcpy(in.transform, transform, sizeof in.transform);
    APPEND(s->instances, s->ninstances, in);
}

int sc_scene_add_light(sc_scene *s, float x, float y, float z, float r, float g, float b)
{
    sc_light l = {{x, y, z}, {r, g, b}};
    APPEND(s->lights, s->nlights, l);
}

void sc_identity(float m[16])
{
    memset(m, 0, 16 * sizeof(float));
    m[0] = m[5] = m[10] = m[15] = 1.0f;
}

/* nrm may be NULL to only count degenerate triangles. */
void sc_smooth_normals(const float *pos, size_t nv, const uint32_t *idx, size_t nt,
                       float *nrm, size_t *degenerate)
{
    for (size_t t = 0; t < nt; t++) {
        const float *a = pos + 3 * idx[3 * t], *b = pos + 3 * idx[3 * t + 1], *c = pos + 3 * idx[3 * t + 2];
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                      e1[0] * e2[1] - e1[1] * e2[0]};
        if (n[0] == 0 && n[1] == 0 && n[2] == 0) (*degenerate)++;
        if (!nrm) continue;
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 3; i++) nrm[3 * idx[3 * t + k] + i] += n[i];
    }
    for (size_t v = 0; nrm && v < nv; v++) {
        float *n = nrm + 3 * v;
        if (!sc_normalize3(n)) { n[0] = 0; n[1] = 1; n[2] = 0; }
    }
}

bool sc_normalize3(float v[3])
{
    float l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if (!(l2 > 0x1p-100f && l2 < 0x1p100f)) {
        float m = fmaxf(fabsf(v[0]), fmaxf(fabsf(v[1]), fabsf(v[2])));
        if (!(m > 0 && isfinite(m))) return false;
        for (int i = 0; i < 3; i++) v[i] /= m;
        l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    }
    float l = sqrtf(l2);
    if (!(l > 0 && isfinite(l))) return false;   /* a NaN component */
    v[0] /= l; v[1] /= l; v[2] /= l;
    return true;
}

void sc_transform_point(const float m[16], const float p[3], float out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = m[i] * p[0] + m[4 + i] * p[1] + m[8 + i] * p[2] + m[12 + i];
}

void sc_scene_bounds(const sc_scene *s, float lo[3], float hi[3])
{
    for (int i = 0; i < 3; i++) { lo[i] = INFINITY; hi[i] = -INFINITY; }
    for (size_t k = 0; k < s->ninstances; k++) {
        const sc_mesh *m = &s->meshes[s->instances[k].mesh];
        for (size_t v = 0; v < m->nvertices; v++) {
            float p[3];
            sc_transform_point(s->instances[k].transform, m->positions + 3 * v, p);
            for (int i = 0; i < 3; i++) {
                if (p[i] < lo[i]) lo[i] = p[i];
                if (p[i] > hi[i]) hi[i] = p[i];
            }
        }
    }
}

void sc_fit_camera(sc_scene *s, const float up[3])
{
    float lo[3], hi[3], c[3], r = 0;
    sc_scene_bounds(s, lo, hi);
    if (!(lo[0] <= hi[0])) return;
    for (int i = 0; i < 3; i++) {
        c[i] = 0.5f * (lo[i] + hi[i]);
        r += (hi[i] - lo[i]) * (hi[i] - lo[i]);
    }
    r = 0.5f * sqrtf(r);
    if (r == 0) r = 1;
    /* three-quarter view: mostly along +Z (or +X for Z-up), raised along up */
    float side[3] = {up[2] != 0 ? 1.0f : 0.45f, 0, up[2] != 0 ? 0.35f : 1.0f};
    float dir[3];
    for (int i = 0; i < 3; i++) dir[i] = side[i] + 0.5f * up[i];
    float l = sqrtf(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    float dist = r / sinf(20.0f * (float)M_PI / 180.0f) / 0.9f;
    for (int i = 0; i < 3; i++) {
        s->camera.eye[i] = c[i] + dir[i] / l * dist;
        s->camera.target[i] = c[i];
        s->camera.up[i] = up[i];
    }
    s->camera.fovy_deg = 40;
    if (s->nlights == 0) {
        float lp[3];
        for (int i = 0; i < 3; i++) lp[i] = s->camera.eye[i] + up[i] * dist * 0.5f;
        lp[0] += dist * 0.3f;
        sc_scene_add_light(s, lp[0], lp[1], lp[2], 1, 1, 1);
    }
}

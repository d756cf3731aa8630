/* builtin.c — the built-in scenes (no files needed). The teapot is tessellated from
 * Newell's 32 Bezier patches; courtyard and fairy are generated with a fixed seed to the
 * shape of the thesis' Table 4.1 at 1024x1024 (courtyard: ~31K triangles, large walls
 * and floor plus props; fairy: ~174K small triangles); cornell is a closed box with a
 * mirror and a diffuse sphere for reflections. Every run gives identical geometry. */
#include "scenes/build.h"
#include "scenes/builtin.h"

#include <math.h>
#include <string.h>

typedef struct rng { uint64_t s; } rng;

static float rnd(rng *r)                /* xorshift64*, uniform in [0,1) */
{
    r->s ^= r->s >> 12; r->s ^= r->s << 25; r->s ^= r->s >> 27;
    return (float)((r->s * 2685821657736338717ull) >> 40) / 16777216.0f;
}

/* ---- primitives ------------------------------------------------------------------------- */

/* A quad corner + u*a + v*b, split into nu x nv cells. */
static void grid(sc_mesh_builder *b, const float o[3], const float a[3], const float c[3],
                 int nu, int nv, uint32_t mat)
{
    uint32_t base = (uint32_t)b->nv;
    for (int j = 0; j <= nv; j++)
        for (int i = 0; i <= nu; i++) {
            float u = (float)i / nu, v = (float)j / nv;
            sc_mb_vertex(b, o[0] + u * a[0] + v * c[0], o[1] + u * a[1] + v * c[1], o[2] + u * a[2] + v * c[2]);
        }
    for (int j = 0; j < nv; j++)
        for (int i = 0; i < nu; i++) {
            uint32_t k = base + (uint32_t)(j * (nu + 1) + i);
            sc_mb_triangle(b, k, k + 1, k + (uint32_t)nu + 2, mat);
            sc_mb_triangle(b, k, k + (uint32_t)nu + 2, k + (uint32_t)nu + 1, mat);
        }
}

static void box(sc_mesh_builder *b, const float lo[3], const float hi[3], int n, uint32_t mat)
{
    float dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
    grid(b, (float[3]){lo[0], lo[1], hi[2]}, (float[3]){dx, 0, 0}, (float[3]){0, dy, 0}, n, n, mat);
    grid(b, (float[3]){hi[0], lo[1], lo[2]}, (float[3]){-dx, 0, 0}, (float[3]){0, dy, 0}, n, n, mat);
    grid(b, (float[3]){lo[0], lo[1], lo[2]}, (float[3]){0, 0, dz}, (float[3]){0, dy, 0}, n, n, mat);
    grid(b, (float[3]){hi[0], lo[1], hi[2]}, (float[3]){0, 0, -dz}, (float[3]){0, dy, 0}, n, n, mat);
    grid(b, (float[3]){lo[0], hi[1], hi[2]}, (float[3]){dx, 0, 0}, (float[3]){0, 0, -dz}, n, n, mat);
    grid(b, (float[3]){lo[0], lo[1], lo[2]}, (float[3]){dx, 0, 0}, (float[3]){0, 0, dz}, n, n, mat);
}

static void sphere(sc_mesh_builder *b, const float c[3], float r, int slices, int stacks, uint32_t mat)
{
    uint32_t base = (uint32_t)b->nv;
    for (int j = 0; j <= stacks; j++) {
        float th = (float)M_PI * (float)j / stacks;
        for (int i = 0; i <= slices; i++) {
            float ph = 2.0f * (float)M_PI * (float)i / slices;
            float n[3] = {sinf(th) * cosf(ph), cosf(th), sinf(th) * sinf(ph)};
            uint32_t v = sc_mb_vertex(b, c[0] + r * n[0], c[1] + r * n[1], c[2] + r * n[2]);
            sc_mb_normal(b, v, n[0], n[1], n[2]);
        }
    }
    for (int j = 0; j < stacks; j++)
        for (int i = 0; i < slices; i++) {
            uint32_t k = base + (uint32_t)(j * (slices + 1) + i), w = (uint32_t)slices + 1;
            if (j > 0) sc_mb_triangle(b, k, k + 1, k + w, mat);
            if (j + 1 < stacks) sc_mb_triangle(b, k + 1, k + w + 1, k + w, mat);
        }
}

static void cylinder(sc_mesh_builder *b, const float c[3], float r, float h, int slices, int rings, uint32_t mat)
{
    uint32_t base = (uint32_t)b->nv;
    for (int j = 0; j <= rings; j++)
        for (int i = 0; i <= slices; i++) {
            float ph = 2.0f * (float)M_PI * (float)i / slices;
            uint32_t v = sc_mb_vertex(b, c[0] + r * cosf(ph), c[1] + h * (float)j / rings, c[2] + r * sinf(ph));
            sc_mb_normal(b, v, cosf(ph), 0, sinf(ph));
        }
    for (int j = 0; j < rings; j++)
        for (int i = 0; i < slices; i++) {
            uint32_t k = base + (uint32_t)(j * (slices + 1) + i), w = (uint32_t)slices + 1;
            sc_mb_triangle(b, k, k + w, k + 1, mat);
            sc_mb_triangle(b, k + 1, k + w, k + w + 1, mat);
        }
}

/* Normals default to smooth ones when a generator set none; mixed builders (spheres
 * with normals next to grids without) get the grids' from their face. */
static void fill_missing_normals(sc_mesh_builder *b)
{
    if (!b->nrm) return;
    for (size_t t = 0; t < b->nt; t++) {
        const uint32_t *i = b->idx + 3 * t;
        const float *p0 = b->pos + 3 * i[0], *p1 = b->pos + 3 * i[1], *p2 = b->pos + 3 * i[2];
        float e1[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
        float e2[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (l == 0) continue;
        for (int k = 0; k < 3; k++) {
            float *d = b->nrm + 3 * i[k];
            if (d[0] == 0 && d[1] == 0 && d[2] == 0) { d[0] = n[0] / l; d[1] = n[1] / l; d[2] = n[2] / l; }
        }
    }
}

static sc_scene *finish(sc_scene *s, sc_mesh_builder *b, const char *mesh)
{
    fill_missing_normals(b);
    float id[16];
    sc_identity(id);
    int m = s ? sc_scene_add_mesh(s, mesh, b) : -1;
    sc_mb_free(b);
    if (m < 0 || sc_scene_add_instance(s, (uint32_t)m, id) < 0) { sc_free(s); return NULL; }
    return s;
}

/* ---- teapot ------------------------------------------------------------------------------ */

static float bern(int i, float t)
{
    float s = 1 - t;
    return i == 0 ? s * s * s : i == 1 ? 3 * t * s * s : i == 2 ? 3 * t * t * s : t * t * t;
}

static float dbern(int i, float t)
{
    float s = 1 - t;
    return i == 0 ? -3 * s * s : i == 1 ? 3 * s * s - 6 * t * s : i == 2 ? 6 * t * s - 3 * t * t : 3 * t * t;
}

/* Point and derivatives of patch p at (u, v), rotated from the file's Z-up to Y-up. */
static void patch_eval(int p, float u, float v, float pos[3], float du[3], float dv[3])
{
    float q[3] = {0, 0, 0}, qu[3] = {0, 0, 0}, qv[3] = {0, 0, 0};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            const float *c = sc_teapot_patches[p][i * 4 + j];
            float w = bern(i, u) * bern(j, v), wu = dbern(i, u) * bern(j, v), wv = bern(i, u) * dbern(j, v);
            for (int k = 0; k < 3; k++) { q[k] += w * c[k]; qu[k] += wu * c[k]; qv[k] += wv * c[k]; }
        }
    pos[0] = q[0]; pos[1] = q[2]; pos[2] = -q[1];
    du[0] = qu[0]; du[1] = qu[2]; du[2] = -qu[1];
    dv[0] = qv[0]; dv[1] = qv[2]; dv[2] = -qv[1];
}

sc_scene *sc_builtin_teapot(void)
{
    sc_scene *s = sc_scene_new("teapot");
    sc_mesh_builder b = {0};
    const int L = SC_TEAPOT_LEVEL;
    for (int p = 0; p < SC_TEAPOT_PATCHES; p++) {
        uint32_t base = (uint32_t)b.nv;
        for (int i = 0; i <= L; i++)
            for (int j = 0; j <= L; j++) {
                float pos[3], du[3], dv[3];
                patch_eval(p, (float)i / L, (float)j / L, pos, du, dv);
                uint32_t v = sc_mb_vertex(&b, pos[0], pos[1], pos[2]);
                float n[3] = {du[1] * dv[2] - du[2] * dv[1], du[2] * dv[0] - du[0] * dv[2], du[0] * dv[1] - du[1] * dv[0]};
                float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
                if (l > 1e-6f) sc_mb_normal(&b, v, n[0] / l, n[1] / l, n[2] / l);
                else sc_mb_normal(&b, v, 0, 0, 0);        /* pole: filled from faces */
            }
        for (int i = 0; i < L; i++)
            for (int j = 0; j < L; j++) {
                uint32_t k = base + (uint32_t)(i * (L + 1) + j), w = (uint32_t)L + 1;
                sc_mb_triangle(&b, k, k + w, k + w + 1, 0);
                sc_mb_triangle(&b, k, k + w + 1, k + 1, 0);
            }
    }
    if (!s || sc_scene_add_material(s, "porcelain", 0.85f, 0.35f, 0.25f, 0.2f, 0.6f, 48.0f) < 0) { sc_mb_free(&b); sc_free(s); return NULL; }
    s->camera = (sc_camera){{4.269f, 6.784f, 11.58f}, {0.217f, 1.575f, 0.0f}, {0, 1, 0}, 40};
    sc_scene_add_light(s, 7.445f, 12.2f, 3.537f, 1, 1, 1);
    return finish(s, &b, "teapot");
}

/* ---- courtyard ----------------------------------------------------------------------------- */

sc_scene *sc_builtin_courtyard(void)
{
    sc_scene *s = sc_scene_new("courtyard");
    sc_mesh_builder b = {0};
    rng r = {0x5eed0001u};
    if (!s) return NULL;
    uint32_t stone = (uint32_t)sc_scene_add_material(s, "stone", 0.7f, 0.65f, 0.55f, 0.0f, 0.2f, 16);
    uint32_t grass = (uint32_t)sc_scene_add_material(s, "grass", 0.3f, 0.55f, 0.25f, 0.0f, 0.1f, 8);
    uint32_t water = (uint32_t)sc_scene_add_material(s, "water", 0.2f, 0.3f, 0.45f, 0.6f, 0.9f, 128);
    uint32_t wood = (uint32_t)sc_scene_add_material(s, "wood", 0.5f, 0.33f, 0.2f, 0.0f, 0.3f, 24);
    /* floor and four walls: large, finely tessellated surfaces */
    grid(&b, (float[3]){-20, 0, 20}, (float[3]){40, 0, 0}, (float[3]){0, 0, -40}, 60, 60, grass);
    grid(&b, (float[3]){-20, 0, -20}, (float[3]){40, 0, 0}, (float[3]){0, 10, 0}, 60, 24, stone);
    grid(&b, (float[3]){-20, 0, 20}, (float[3]){0, 0, -40}, (float[3]){0, 10, 0}, 60, 24, stone);
    grid(&b, (float[3]){20, 0, -20}, (float[3]){0, 0, 40}, (float[3]){0, 10, 0}, 60, 24, stone);
    /* columns along the walls, a fountain, benches */
    for (int i = 0; i < 8; i++) {
        float x = -17.5f + 5.0f * i;
        cylinder(&b, (float[3]){x, 0, -18}, 0.6f, 9, 20, 11, stone);
        cylinder(&b, (float[3]){-18, 0, x}, 0.6f, 9, 20, 11, stone);
        cylinder(&b, (float[3]){18, 0, x}, 0.6f, 9, 20, 11, stone);
    }
    cylinder(&b, (float[3]){0, 0, 0}, 4.0f, 1.0f, 64, 4, stone);
    grid(&b, (float[3]){-3.5f, 0.8f, 3.5f}, (float[3]){7, 0, 0}, (float[3]){0, 0, -7}, 24, 24, water);
    sphere(&b, (float[3]){0, 2.5f, 0}, 1.2f, 32, 16, stone);
    for (int i = 0; i < 12; i++) {           /* benches on a ring: never overlapping */
        float a = (float)i * (float)M_PI / 6.0f + rnd(&r) * 0.2f, rad = 9.0f + rnd(&r) * 4.0f;
        float x = rad * cosf(a), z = rad * sinf(a);
        box(&b, (float[3]){x - 1.5f, 0, z - 0.4f}, (float[3]){x + 1.5f, 0.8f, z + 0.4f}, 4, wood);
    }
    s->camera = (sc_camera){{-13, 8, 16}, {4, 1.5f, -4}, {0, 1, 0}, 62};
    sc_scene_add_light(s, 5, 30, 10, 1, 0.95f, 0.85f);
    return finish(s, &b, "courtyard");
}

/* ---- fairy --------------------------------------------------------------------------------- */

sc_scene *sc_builtin_fairy(void)
{
    sc_scene *s = sc_scene_new("fairy");
    sc_mesh_builder b = {0};
    rng r = {0xfa1e7001u};
    if (!s) return NULL;
    uint32_t ground = (uint32_t)sc_scene_add_material(s, "ground", 0.35f, 0.45f, 0.2f, 0.0f, 0.1f, 8);
    uint32_t leaf = (uint32_t)sc_scene_add_material(s, "leaf", 0.2f, 0.6f, 0.25f, 0.0f, 0.3f, 16);
    uint32_t bark = (uint32_t)sc_scene_add_material(s, "bark", 0.4f, 0.28f, 0.18f, 0.0f, 0.1f, 8);
    uint32_t flower = (uint32_t)sc_scene_add_material(s, "flower", 0.9f, 0.5f, 0.7f, 0.1f, 0.5f, 32);
    grid(&b, (float[3]){-10, 0, 10}, (float[3]){20, 0, 0}, (float[3]){0, 0, -20}, 100, 100, ground);
    for (int t = 0; t < 40; t++) {                  /* trees: trunk + leafy crown */
        float x = -9 + rnd(&r) * 18, z = -9 + rnd(&r) * 18, h = 2 + rnd(&r) * 2;
        cylinder(&b, (float[3]){x, 0, z}, 0.15f, h, 12, 6, bark);
        for (int k = 0; k < 20; k++) {
            float c[3] = {x + (rnd(&r) - 0.5f) * 1.6f, h + (rnd(&r) - 0.3f) * 1.4f, z + (rnd(&r) - 0.5f) * 1.6f};
            sphere(&b, c, 0.18f + rnd(&r) * 0.2f, 10, 6, leaf);
        }
    }
    for (int f = 0; f < 850; f++) {                /* flowers in the grass */
        float c[3] = {-9.5f + rnd(&r) * 19, 0.1f + rnd(&r) * 0.2f, -9.5f + rnd(&r) * 19};
        sphere(&b, c, 0.06f + rnd(&r) * 0.05f, 8, 6, flower);
    }
    s->camera = (sc_camera){{0, 6, 11}, {0, 1.2f, -1}, {0, 1, 0}, 55};
    sc_scene_add_light(s, -6, 15, 8, 1, 1, 0.95f);
    return finish(s, &b, "fairy");
}

/* ---- cornell ------------------------------------------------------------------------------- */

sc_scene *sc_builtin_cornell(void)
{
    sc_scene *s = sc_scene_new("cornell");
    sc_mesh_builder b = {0};
    if (!s) return NULL;
    uint32_t white = (uint32_t)sc_scene_add_material(s, "white", 0.75f, 0.75f, 0.75f, 0.0f, 0.1f, 8);
    uint32_t red = (uint32_t)sc_scene_add_material(s, "red", 0.7f, 0.12f, 0.1f, 0.0f, 0.1f, 8);
    uint32_t green = (uint32_t)sc_scene_add_material(s, "green", 0.15f, 0.6f, 0.12f, 0.0f, 0.1f, 8);
    uint32_t mirror = (uint32_t)sc_scene_add_material(s, "mirror", 0.9f, 0.9f, 0.9f, 0.8f, 1.0f, 256);
    uint32_t plaster = (uint32_t)sc_scene_add_material(s, "diffuse", 0.6f, 0.6f, 0.8f, 0.0f, 0.4f, 32);
    /* a closed 2x2x2 box, faces pointing inward; the camera is inside, near the front */
    grid(&b, (float[3]){-1, 0, 1}, (float[3]){2, 0, 0}, (float[3]){0, 0, -2}, 8, 8, white);    /* floor */
    grid(&b, (float[3]){-1, 2, -1}, (float[3]){2, 0, 0}, (float[3]){0, 0, 2}, 8, 8, white);    /* ceiling */
    grid(&b, (float[3]){-1, 0, -1}, (float[3]){2, 0, 0}, (float[3]){0, 2, 0}, 8, 8, white);    /* back */
    grid(&b, (float[3]){1, 0, 1}, (float[3]){-2, 0, 0}, (float[3]){0, 2, 0}, 8, 8, white);     /* front */
    grid(&b, (float[3]){-1, 0, 1}, (float[3]){0, 0, -2}, (float[3]){0, 2, 0}, 8, 8, red);      /* left */
    grid(&b, (float[3]){1, 0, -1}, (float[3]){0, 0, 2}, (float[3]){0, 2, 0}, 8, 8, green);     /* right */
    box(&b, (float[3]){-0.75f, 0, -0.7f}, (float[3]){-0.15f, 1.3f, -0.5f}, 2, mirror);           /* mirror slab */
    /* the sphere stands far enough back, and the camera looks down enough, that it and
     * the slab are seen whole, down to the floor, at any aspect up to square */
    sphere(&b, (float[3]){0.4f, 0.45f, -0.4f}, 0.45f, 48, 24, plaster);
    s->camera = (sc_camera){{0, 1, 0.95f}, {0, 0.7f, -1}, {0, 1, 0}, 70};
    sc_scene_add_light(s, 0, 1.9f, 0, 1, 0.95f, 0.9f);
    return finish(s, &b, "cornell");
}

static const struct { const char *name; sc_scene *(*make)(void); } builtins[] = {
    {"teapot", sc_builtin_teapot}, {"courtyard", sc_builtin_courtyard},
    {"fairy", sc_builtin_fairy}, {"cornell", sc_builtin_cornell}};

bool sc_builtin_known(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(name, builtins[i].name)) return true;
    return false;
}

sc_scene *sc_builtin(const char *name, char err[SC_ERR_MAX])
{
    const size_t n = sizeof builtins / sizeof builtins[0];
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, builtins[i].name)) {
            sc_scene *s = builtins[i].make();
            if (!s) snprintf(err, SC_ERR_MAX, "built-in scene %s: out of memory", name);
            return s;
        }
    return NULL;
}

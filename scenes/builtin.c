/* builtin.c — the built-in scenes (no files needed). The teapot is tessellated from
 * Newell's 32 Bezier patches; courtyard and fairy are generated with a fixed seed to the
 * shape of the thesis' Table 4.1 at 1024x1024 (courtyard: ~31K triangles, large walls
 * and floor plus props; fairy: ~174K small triangles); cornell is a closed box with a
 * mirror and a diffuse sphere for reflections. Every run gives identical geometry. */
#include "scenes/build.h"
#include "scenes/builtin.h"
#include "scenes/primitives.h"

#include <math.h>
#include <string.h>

typedef struct rng { uint64_t s; } rng;

static float rnd(rng *r)                /* xorshift64*, uniform in [0,1) */
{
    r->s ^= r->s >> 12; r->s ^= r->s << 25; r->s ^= r->s >> 27;
    return (float)((r->s * 2685821657736338717ull) >> 40) / 16777216.0f;
}

static sc_scene *finish(sc_scene *s, sc_mesh_builder *b, const char *mesh)
{
    sc_prim_fill_missing_normals(b);
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
    sc_prim_grid(&b, (float[3]){-20, 0, 20}, (float[3]){40, 0, 0}, (float[3]){0, 0, -40}, 60, 60, NULL, grass);
    sc_prim_grid(&b, (float[3]){-20, 0, -20}, (float[3]){40, 0, 0}, (float[3]){0, 10, 0}, 60, 24, NULL, stone);
    sc_prim_grid(&b, (float[3]){-20, 0, 20}, (float[3]){0, 0, -40}, (float[3]){0, 10, 0}, 60, 24, NULL, stone);
    sc_prim_grid(&b, (float[3]){20, 0, -20}, (float[3]){0, 0, 40}, (float[3]){0, 10, 0}, 60, 24, NULL, stone);
    /* columns along the walls, a fountain, benches */
    for (int i = 0; i < 8; i++) {
        float x = -17.5f + 5.0f * i;
        sc_prim_cylinder(&b, (float[3]){x, 0, -18}, 0.6f, 9, 20, 11, NULL, stone);
        sc_prim_cylinder(&b, (float[3]){-18, 0, x}, 0.6f, 9, 20, 11, NULL, stone);
        sc_prim_cylinder(&b, (float[3]){18, 0, x}, 0.6f, 9, 20, 11, NULL, stone);
    }
    sc_prim_cylinder(&b, (float[3]){0, 0, 0}, 4.0f, 1.0f, 64, 4, NULL, stone);
    sc_prim_grid(&b, (float[3]){-3.5f, 0.8f, 3.5f}, (float[3]){7, 0, 0}, (float[3]){0, 0, -7}, 24, 24, NULL, water);
    sc_prim_sphere(&b, (float[3]){0, 2.5f, 0}, 1.2f, 32, 16, NULL, stone);
    for (int i = 0; i < 12; i++) {           /* benches on a ring: never overlapping */
        float a = (float)i * (float)M_PI / 6.0f + rnd(&r) * 0.2f, rad = 9.0f + rnd(&r) * 4.0f;
        float x = rad * cosf(a), z = rad * sinf(a);
        sc_prim_box(&b, (float[3]){x - 1.5f, 0, z - 0.4f}, (float[3]){x + 1.5f, 0.8f, z + 0.4f}, 4, NULL, wood);
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
    sc_prim_grid(&b, (float[3]){-10, 0, 10}, (float[3]){20, 0, 0}, (float[3]){0, 0, -20}, 100, 100, NULL, ground);
    for (int t = 0; t < 40; t++) {                  /* trees: trunk + leafy crown */
        float x = -9 + rnd(&r) * 18, z = -9 + rnd(&r) * 18, h = 2 + rnd(&r) * 2;
        sc_prim_cylinder(&b, (float[3]){x, 0, z}, 0.15f, h, 12, 6, NULL, bark);
        for (int k = 0; k < 20; k++) {
            float c[3] = {x + (rnd(&r) - 0.5f) * 1.6f, h + (rnd(&r) - 0.3f) * 1.4f, z + (rnd(&r) - 0.5f) * 1.6f};
            sc_prim_sphere(&b, c, 0.18f + rnd(&r) * 0.2f, 10, 6, NULL, leaf);
        }
    }
    for (int f = 0; f < 850; f++) {                /* flowers in the grass */
        float c[3] = {-9.5f + rnd(&r) * 19, 0.1f + rnd(&r) * 0.2f, -9.5f + rnd(&r) * 19};
        sc_prim_sphere(&b, c, 0.06f + rnd(&r) * 0.05f, 8, 6, NULL, flower);
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
    sc_prim_grid(&b, (float[3]){-1, 0, 1}, (float[3]){2, 0, 0}, (float[3]){0, 0, -2}, 8, 8, NULL, white);    /* floor */
    sc_prim_grid(&b, (float[3]){-1, 2, -1}, (float[3]){2, 0, 0}, (float[3]){0, 0, 2}, 8, 8, NULL, white);    /* ceiling */
    sc_prim_grid(&b, (float[3]){-1, 0, -1}, (float[3]){2, 0, 0}, (float[3]){0, 2, 0}, 8, 8, NULL, white);    /* back */
    sc_prim_grid(&b, (float[3]){1, 0, 1}, (float[3]){-2, 0, 0}, (float[3]){0, 2, 0}, 8, 8, NULL, white);     /* front */
    sc_prim_grid(&b, (float[3]){-1, 0, 1}, (float[3]){0, 0, -2}, (float[3]){0, 2, 0}, 8, 8, NULL, red);      /* left */
    sc_prim_grid(&b, (float[3]){1, 0, -1}, (float[3]){0, 0, 2}, (float[3]){0, 2, 0}, 8, 8, NULL, green);     /* right */
    sc_prim_box(&b, (float[3]){-0.75f, 0, -0.7f}, (float[3]){-0.15f, 1.3f, -0.5f}, 2, NULL, mirror);           /* mirror slab */
    /* the sphere stands far enough back, and the camera looks down enough, that it and
     * the slab are seen whole, down to the floor, at any aspect up to square */
    sc_prim_sphere(&b, (float[3]){0.4f, 0.45f, -0.4f}, 0.45f, 48, 24, NULL, plaster);
    s->camera = (sc_camera){{0, 1, 0.95f}, {0, 0.7f, -1}, {0, 1, 0}, 70};
    sc_scene_add_light(s, 0, 1.9f, 0, 1, 0.95f, 0.9f);
    return finish(s, &b, "cornell");
}

static const struct { const char *name; sc_scene *(*make)(void); } builtins[] = {
    {"teapot", sc_builtin_teapot}, {"courtyard", sc_builtin_courtyard},
    {"fairy", sc_builtin_fairy}, {"cornell", sc_builtin_cornell},
    {"showcase", sc_builtin_showcase}};

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

/* showcase.c — the built-in scene `showcase`: what the renderers' materials can do, in
 * one view that every pipeline renders. Everything is generated here, textures included
 * (scenes/patterns.c), so it needs no files:
 *
 * - a tiled floor receding 130 units to a sky backdrop: minification down the whole mip
 *   chain (trilinear filtering turns the far checker grey instead of into moire);
 * - textured opaque objects: a brick wall, two wooden crates;
 * - alpha-tested (MASK) cut-outs: a picket fence and crossed foliage cards, double-sided;
 * - two overlapping stained-glass panes (BLEND) over the crate, drawn far pane first:
 *   their draw order is also their depth order from the camera, so the raster graphs
 *   (draw order) and the ray tracer (depth order along the ray) composite them alike;
 * - metallic-roughness materials: a gold sphere, a red ceramic one, and the sky, an
 *   emissive gradient (emission is the one term every pipeline adds unlit);
 * - a warm key light and a cool fill light, both in front of the objects, so the ray
 *   tracer's shadows fall behind them, onto the floor and through the fence's gaps.
 *
 * Triangles are in draw order: opaque surfaces, then the cut-outs, then the panes. */
#include "scenes/builtin.h"
#include "scenes/loaders.h"
#include "scenes/patterns.h"
#include "scenes/primitives.h"

#include <math.h>

enum { TEX_SIDE = 256, CUTOUT_SIDE = 128, SKY_W = 4, SKY_H = 128 };

/* Appends the procedural texture `make` of w x h texels: its index, or -1. */
static int add_pattern(sc_scene *s, const char *name, unsigned char *(*make)(int, int), int w, int h)
{
    char err[SC_ERR_MAX];
    unsigned char *px = make(w, h);
    return px ? sc_add_texture(s, name, w, h, px, err) : -1;
}

/* A Blinn-Phong material with base colour texture `texture` (white factor): its index or -1. */
static int textured(sc_scene *s, const char *name, int texture, float specular, float exponent,
                    float reflectivity)
{
    int m = texture < 0 ? -1 : sc_scene_add_material(s, name, 1, 1, 1, reflectivity, specular, exponent);
    if (m >= 0) s->materials[m].albedo_map.texture = texture;
    return m;
}

/* A cut-out or glass material: `mode` with its texture's alpha, both sides drawn; the
 * texture clamped in v (a card's top row must not wrap onto its bottom). */
static int see_through(sc_scene *s, const char *name, int texture, sc_alpha_mode mode, float specular)
{
    int m = textured(s, name, texture, specular, 64, 0);
    if (m < 0) return -1;
    s->materials[m].alpha_mode = mode;
    s->materials[m].double_sided = true;
    s->materials[m].albedo_map.sampler.wrap_v = SC_WRAP_CLAMP;
    return m;
}

static int metal_rough(sc_scene *s, const char *name, const float base[3], float metallic, float roughness)
{
    int m = sc_scene_add_material(s, name, base[0], base[1], base[2], 0, 0, 1);
    if (m < 0) return -1;
    s->materials[m].model = SC_SHADING_METALLIC_ROUGHNESS;
    s->materials[m].metallic = metallic;
    s->materials[m].roughness = roughness;
    return m;
}

typedef struct showcase_materials {
    int floor, bricks, crate, fence, leaves, glass, gold, ceramic, sky;
} showcase_materials;

static bool add_materials(sc_scene *s, showcase_materials *m)
{
    int floor_tex = add_pattern(s, "showcase:floor-tiles", sc_pattern_floor_tiles, TEX_SIDE, TEX_SIDE);
    int brick_tex = add_pattern(s, "showcase:bricks", sc_pattern_bricks, TEX_SIDE, TEX_SIDE);
    int crate_tex = add_pattern(s, "showcase:crate", sc_pattern_crate, TEX_SIDE, TEX_SIDE);
    int fence_tex = add_pattern(s, "showcase:fence", sc_pattern_fence, CUTOUT_SIDE, CUTOUT_SIDE);
    int leaf_tex = add_pattern(s, "showcase:leaves", sc_pattern_leaves, CUTOUT_SIDE, CUTOUT_SIDE);
    int glass_tex = add_pattern(s, "showcase:stained-glass", sc_pattern_stained_glass, TEX_SIDE, TEX_SIDE);
    int sky_tex = add_pattern(s, "showcase:sky", sc_pattern_sky, SKY_W, SKY_H);
    m->floor = textured(s, "floor", floor_tex, 0.25f, 48, 0.12f);
    m->bricks = textured(s, "bricks", brick_tex, 0.05f, 8, 0);
    m->crate = textured(s, "crate", crate_tex, 0.15f, 24, 0);
    m->fence = see_through(s, "fence", fence_tex, SC_ALPHA_MASK, 0.1f);
    m->leaves = see_through(s, "leaves", leaf_tex, SC_ALPHA_MASK, 0.15f);
    m->glass = see_through(s, "stained-glass", glass_tex, SC_ALPHA_BLEND, 0.6f);
    m->gold = metal_rough(s, "gold", (float[3]){1.0f, 0.77f, 0.34f}, 1, 0.5f);
    m->ceramic = metal_rough(s, "ceramic", (float[3]){0.72f, 0.09f, 0.07f}, 0, 0.35f);
    m->sky = metal_rough(s, "sky", (float[3]){0, 0, 0}, 0, 1);
    if (m->floor < 0 || m->bricks < 0 || m->crate < 0 || m->fence < 0 || m->leaves < 0 ||
        m->glass < 0 || m->gold < 0 || m->ceramic < 0 || m->sky < 0)
        return false;
    sc_material *sky = &s->materials[m->sky];
    sky->emissive[0] = sky->emissive[1] = sky->emissive[2] = 1;
    sky->emissive_map = sc_texture_ref_none();
    sky->emissive_map.texture = sky_tex;
    sky->emissive_map.sampler.wrap_u = sky->emissive_map.sampler.wrap_v = SC_WRAP_CLAMP;
    return sky_tex >= 0;
}

/* A foliage clump standing on (x, 0, z): `cards` vertical cards of w x h crossing at its
 * axis, evenly turned. */
static void bush(sc_mesh_builder *b, float x, float z, float w, float h, int cards, uint32_t m)
{
    for (int i = 0; i < cards; i++) {
        float a = (float)M_PI * (float)i / (float)cards + 0.3f, dx = 0.5f * w * cosf(a), dz = 0.5f * w * sinf(a);
        sc_prim_grid(b, (float[3]){x - dx, 0, z - dz}, (float[3]){2 * dx, 0, 2 * dz}, (float[3]){0, h, 0}, 1, 1,
                     (float[2]){1, 1}, m);
    }
}

static void add_geometry(sc_mesh_builder *b, const showcase_materials *m)
{
    /* the floor: 0.5 x 0.5 tiles (the texture holds 2 x 2), out to the sky at z = -118 */
    sc_prim_grid(b, (float[3]){-150, 0, 12}, (float[3]){300, 0, 0}, (float[3]){0, 0, -130}, 30, 26,
                 (float[2]){300, 130}, (uint32_t)m->floor);
    sc_prim_grid(b, (float[3]){-220, 0, -118}, (float[3]){440, 0, 0}, (float[3]){0, 110, 0}, 1, 1,
                 (float[2]){1, 1}, (uint32_t)m->sky);
    /* a brick garden wall on the left (courses 0.15 high, bricks 0.45 long) */
    sc_prim_box(b, (float[3]){-7.6f, 0, -3.6f}, (float[3]){-2.2f, 1.8f, -3.2f}, 1, (float[2]){6, 3},
                (uint32_t)m->bricks);
    /* two crates, the larger one partly behind the glass */
    sc_prim_box(b, (float[3]){1.2f, 0, -1.7f}, (float[3]){2.4f, 1.2f, -0.5f}, 1, (float[2]){1, 1}, (uint32_t)m->crate);
    sc_prim_box(b, (float[3]){3.0f, 0, -2.7f}, (float[3]){3.8f, 0.8f, -1.9f}, 1, (float[2]){1, 1}, (uint32_t)m->crate);
    sc_prim_sphere(b, (float[3]){-1.3f, 0.7f, -0.9f}, 0.7f, 64, 32, NULL, (uint32_t)m->gold);
    sc_prim_sphere(b, (float[3]){-0.1f, 0.35f, 0.7f}, 0.35f, 48, 24, NULL, (uint32_t)m->ceramic);
    /* cut-outs: a picket fence from the wall's end (a texture repeat is 0.6 wide), bushes
     * behind it and one before the wall */
    sc_prim_grid(b, (float[3]){-2.2f, 0, -3.4f}, (float[3]){12, 0, 0}, (float[3]){0, 1.2f, 0}, 1, 1,
                 (float[2]){20, 1}, (uint32_t)m->fence);
    bush(b, -0.6f, -4.6f, 1.8f, 1.7f, 4, (uint32_t)m->leaves);
    bush(b, 3.0f, -4.8f, 2.2f, 2.0f, 4, (uint32_t)m->leaves);
    bush(b, 6.2f, -4.4f, 1.6f, 1.5f, 4, (uint32_t)m->leaves);
    bush(b, -4.6f, -2.6f, 1.4f, 1.1f, 3, (uint32_t)m->leaves);
    /* stained glass standing on the floor, the far pane first (draw order = depth order) */
    sc_prim_grid(b, (float[3]){0.2f, 0, -0.1f}, (float[3]){0.9f, 0, 0}, (float[3]){0, 1.3f, 0}, 1, 1,
                 (float[2]){1, 1}, (uint32_t)m->glass);
    sc_prim_grid(b, (float[3]){0.75f, 0, 0.4f}, (float[3]){0.9f, 0, 0}, (float[3]){0, 1.3f, 0}, 1, 1,
                 (float[2]){1, 1}, (uint32_t)m->glass);
}

sc_scene *sc_builtin_showcase(void)
{
    sc_scene *s = sc_scene_new("showcase");
    showcase_materials m;
    if (!s || !add_materials(s, &m)) { sc_free(s); return NULL; }
    sc_mesh_builder b = {0};
    add_geometry(&b, &m);
    sc_prim_fill_missing_normals(&b);
    float id[16];
    sc_identity(id);
    int mesh = sc_scene_add_mesh(s, "showcase", &b);
    sc_mb_free(&b);
    if (mesh < 0 || sc_scene_add_instance(s, (uint32_t)mesh, id) < 0) { sc_free(s); return NULL; }
    s->camera = (sc_camera){{0.6f, 2.3f, 6.0f}, {0.6f, 0.7f, -2.0f}, {0, 1, 0}, 48};
    sc_scene_add_light(s, 6, 10, 8, 1.0f, 0.93f, 0.82f);
    sc_scene_add_light(s, -8, 6, 6, 0.25f, 0.3f, 0.4f);
    return s;
}

/* Texture coordinate set 1 (glTF TEXCOORD_1), end to end: generated glTF files whose
 * set 1 mirrors set 0 in u, over a 2x1 texture (red | blue, nearest), load with both sets
 * and render the mirror image when the material reads set 1, in every graph: the albedo
 * AOV (the raster PS's and the ray tracer's base colour sampling), the lit colour (the
 * metallic-roughness gather), the alpha test (the raster visibility and the ray
 * tracer's hit filter), and on a floor the near plane clips (set 1 at corners clipping
 * made). A scene without set 1 keeps sc_geometry.texcoords1 NULL: no memory for it; a
 * material on set 1 in a file without one is warned about and reads set 0. */
#include "pipelines/stages.h"
#include "scenes/loaders.h"
#include "tests/check.h"
#include "tests/scene_data.h"
#include "tests/scratch_dir.h"

#include <stdlib.h>
#include <string.h>

#define S 64

static char dir[64];

static void base64(const uint8_t *in, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        *out++ = a[v >> 18 & 63];
        *out++ = a[v >> 12 & 63];
        *out++ = i + 1 < n ? a[v >> 6 & 63] : '=';
        *out++ = i + 2 < n ? a[v & 63] : '=';
    }
    *out = 0;
}

/* A 2x1 TGA: left texel red, right texel blue; alpha of the left one `left_alpha`. */
static void write_texture(const char *name, uint8_t left_alpha)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const uint8_t tga[18 + 8] = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 32, 0x28,
                                 0, 0, 255, left_alpha, 255, 0, 0, 255};     /* BGRA */
    FILE *f = fopen(path, "wb");
    if (f) fwrite(tga, 1, sizeof tga, f), fclose(f);
}

/* A quad with corners p (counter-clockwise seen from its front), set 0 u = 0, 1, 1, 0 and
 * set 1 its mirror, its base colour texture reading set `set`, alpha mode `mode`. */
static void write_quad_with(const char *name, const float p[4][3], int set, const char *mode,
                            const char *texture, bool has_set1)
{
    struct {
        float pos[4][3], uv0[4][2], uv1[4][2];
        uint16_t idx[6];
    } __attribute__((packed)) b = {.uv0 = {{0, 0}, {1, 0}, {1, 1}, {0, 1}},
                                   .uv1 = {{1, 0}, {0, 0}, {0, 1}, {1, 1}}, .idx = {0, 1, 2, 0, 2, 3}};
    memcpy(b.pos, p, sizeof b.pos);
    float lo[3], hi[3];
    for (int i = 0; i < 3; i++) {
        lo[i] = hi[i] = p[0][i];
        for (int k = 1; k < 4; k++) lo[i] = p[k][i] < lo[i] ? p[k][i] : lo[i], hi[i] = p[k][i] > hi[i] ? p[k][i] : hi[i];
    }
    char data[256], path[160];
    base64((const uint8_t *)&b, sizeof b, data);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f,
        "{\"asset\": {\"version\": \"2.0\"}, \"scene\": 0, \"scenes\": [{\"nodes\": [0]}], \"nodes\": [{\"mesh\": 0}],\n"
        "\"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0, \"TEXCOORD_0\": 1%s},"
        " \"indices\": 3, \"material\": 0}]}],\n"
        "\"materials\": [{\"doubleSided\": true, \"alphaMode\": \"%s\", \"pbrMetallicRoughness\":"
        " {\"baseColorTexture\": {\"index\": 0, \"texCoord\": %d}, \"metallicFactor\": 0, \"roughnessFactor\": 1}}],\n"
        "\"textures\": [{\"source\": 0, \"sampler\": 0}], \"images\": [{\"uri\": \"%s\"}],\n"
        "\"samplers\": [{\"magFilter\": 9728, \"minFilter\": 9728}],\n"
        "\"buffers\": [{\"byteLength\": %zu, \"uri\": \"data:application/octet-stream;base64,%s\"}],\n"
        "\"bufferViews\": [{\"buffer\": 0, \"byteOffset\": 0, \"byteLength\": 112},"
        " {\"buffer\": 0, \"byteOffset\": 112, \"byteLength\": 12}],\n"
        "\"accessors\": [{\"bufferView\": 0, \"byteOffset\": 0, \"componentType\": 5126, \"count\": 4, \"type\": \"VEC3\","
        " \"min\": [%g, %g, %g], \"max\": [%g, %g, %g]},\n"
        " {\"bufferView\": 0, \"byteOffset\": 48, \"componentType\": 5126, \"count\": 4, \"type\": \"VEC2\"},\n"
        " {\"bufferView\": 0, \"byteOffset\": 80, \"componentType\": 5126, \"count\": 4, \"type\": \"VEC2\"},\n"
        " {\"bufferView\": 1, \"byteOffset\": 0, \"componentType\": 5123, \"count\": 6, \"type\": \"SCALAR\"}]}\n",
        has_set1 ? ", \"TEXCOORD_1\": 2" : "", mode, set, texture, sizeof b, data, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
    fclose(f);
}

static void write_quad(const char *name, const float p[4][3], int set, const char *mode, const char *texture)
{
    write_quad_with(name, p, set, mode, texture, true);
}

static const float facing[4][3] = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}};
/* a floor from behind the camera (z = 4) to far before it: the near plane clips it */
static const float floor_quad[4][3] = {{-2, 0, 4}, {2, 0, 4}, {2, 0, -6}, {-2, 0, -6}};

static void write_scenes(void)
{
    write_texture("rb.tga", 255);
    write_texture("cut.tga", 0);
    write_quad("set0.gltf", facing, 0, "OPAQUE", "rb.tga");
    write_quad("set1.gltf", facing, 1, "OPAQUE", "rb.tga");
    write_quad("mask0.gltf", facing, 0, "MASK", "cut.tga");
    write_quad("mask1.gltf", facing, 1, "MASK", "cut.tga");
    write_quad("floor0.gltf", floor_quad, 0, "OPAQUE", "rb.tga");
    write_quad("floor1.gltf", floor_quad, 1, "OPAQUE", "rb.tga");
    write_quad_with("noset1.gltf", facing, 1, "OPAQUE", "rb.tga", false);
}

static bool load(const char *file, bool is_floor, loaded *l)
{
    char path[160], err[SC_ERR_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (sc_load(path, &l->s, err) != 0) { fprintf(stderr, "  %s\n", err); return false; }
    l->s->camera = is_floor ? (sc_camera){{0, 1, 3}, {0, 0, -1}, {0, 1, 0}, 70}
                            : (sc_camera){{0, 0, 3}, {0, 0, 0}, {0, 1, 0}, 50};
    l->s->lights[0] = (sc_light){{l->s->camera.eye[0], l->s->camera.eye[1], l->s->camera.eye[2]}, {1, 1, 1}};
    l->s->nlights = 1;
    return loaded_ready(l);
}

static bool render(const char *file, const char *graph, sh_aov aov, uint8_t *rgba)
{
    loaded l;
    if (!load(file, !strncmp(file, "floor", 5), &l)) { CHECK_MSG(0, "%s", file); return false; }
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = cp_graph_new(r);
    bool ok = !cp_graph_load_text(g, pl_builtin_graph(graph), graph, err);
    pl_frame f;
    if (ok && (ok = pl_frame_init(&f, &l.data, S, S, aov, err))) {
        gr_launch_opts o = {.workers = 2};
        gr_graph *run = pl_render_frame(g, &f, &o, err);
        if ((ok = run != NULL)) memcpy(rgba, pl_frame_image(&f), (size_t)S * S * 4);
        gr_graph_destroy(run);
        pl_frame_free(&f);
    }
    CHECK_MSG(ok, "%s %s: %s", file, graph, err);
    cp_graph_free(g);
    cp_registry_free(r);
    unload(&l);
    return ok;
}

/* 'r' red, 'b' blue, '0' black (nothing), '?' anything else, at pixel (x, y). */
static char colour_at(const uint8_t *img, int x, int y)
{
    const uint8_t *p = img + 4 * (y * S + x);
    if (p[0] < 8 && p[1] < 8 && p[2] < 8) return '0';
    if (p[0] > 2 * p[2] + 20 && p[0] > 2 * p[1]) return 'r';
    if (p[2] > 2 * p[0] + 20 && p[2] > 2 * p[1]) return 'b';
    return '?';
}

static const char *const graphs[] = {"raster", "raster-ordered", "raytrace", "hybrid"};

/* In every graph, `file` shows `left` at pixel (xl, y) and `right` at (xr, y). */
static void shows(const char *file, sh_aov aov, int xl, int xr, int y, char left, char right)
{
    static uint8_t img[S * S * 4];
    for (size_t k = 0; k < sizeof graphs / sizeof graphs[0]; k++) {
        if (!render(file, graphs[k], aov, img)) continue;
        char l = colour_at(img, xl, y), r = colour_at(img, xr, y);
        CHECK_MSG(l == left && r == right, "%s, %s, %s AOV: left '%c' right '%c', expected '%c' '%c'", file,
                  graphs[k], aov == SH_AOV_ALBEDO ? "albedo" : "color", l, r, left, right);
    }
}

static void test_loads_both_sets(void)
{
    loaded l;
    if (!load("set1.gltf", false, &l)) { CHECK(0); return; }
    CHECK(l.s->meshes[0].texcoords1 && l.g.texcoords1 && !l.s->warnings);
    CHECK(l.g.materials[0] < l.s->nmaterials && l.s->materials[l.g.materials[0]].albedo_map.uv_set == 1);
    const sc_mesh *m = &l.s->meshes[0];
    for (size_t v = 0; m->texcoords1 && v < m->nvertices; v++)      /* set 1 = set 0 mirrored in u */
        CHECK(m->texcoords1[2 * v] == 1 - m->texcoords[2 * v] && m->texcoords1[2 * v + 1] == m->texcoords[2 * v + 1]);
    unload(&l);
}

static void test_no_set1_no_memory(void)
{
    char err[SC_ERR_MAX];
    sc_scene *s;
    sc_geometry g;
    if (sc_load("showcase", &s, err) || sc_flatten(s, &g, err)) { CHECK_MSG(0, "%s", err); return; }
    CHECK(!s->meshes[0].texcoords1 && !g.texcoords1);
    sc_geometry_free(&g);
    sc_free(s);
}

/* A material on set 1 of a file whose meshes have none: a warning naming file and
 * material, and set 0 read (no memory for a set 1). */
static void test_missing_set1_warned(void)
{
    loaded l;
    if (!load("noset1.gltf", false, &l)) { CHECK(0); return; }
    CHECK_MSG(l.s->warnings && strstr(l.s->warnings, "noset1.gltf: material") &&
              strstr(l.s->warnings, "reads texture coordinate set 1, which the file's meshes do not have"),
              "warnings: %s", l.s->warnings ? l.s->warnings : "(none)");
    CHECK(!l.g.texcoords1);
    unload(&l);
    shows("noset1.gltf", SH_AOV_ALBEDO, 16, 48, 32, 'r', 'b');
}

/* Quad from x = 8 to 56 of the 64 pixels: u = 0 at the left. */
static void test_albedo(void)
{
    shows("set0.gltf", SH_AOV_ALBEDO, 16, 48, 32, 'r', 'b');
    shows("set1.gltf", SH_AOV_ALBEDO, 16, 48, 32, 'b', 'r');
}

static void test_lit_metallic_roughness(void)
{
    shows("set0.gltf", SH_AOV_COLOR, 16, 48, 32, 'r', 'b');
    shows("set1.gltf", SH_AOV_COLOR, 16, 48, 32, 'b', 'r');
}

/* The left texel is cut out: set 0 shows the quad's right half, set 1 its left half. */
static void test_alpha_test(void)
{
    shows("mask0.gltf", SH_AOV_ALBEDO, 16, 48, 32, '0', 'b');
    shows("mask1.gltf", SH_AOV_ALBEDO, 16, 48, 32, 'b', '0');
}

/* Near the bottom of the image the floor's triangles are clipped by the near plane. */
static void test_clipped_corners(void)
{
    shows("floor0.gltf", SH_AOV_ALBEDO, 12, 52, 60, 'r', 'b');
    shows("floor1.gltf", SH_AOV_ALBEDO, 12, 52, 60, 'b', 'r');
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_uv_sets.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    write_scenes();
    RUN(test_loads_both_sets);
    RUN(test_no_set1_no_memory);
    RUN(test_albedo);
    RUN(test_lit_metallic_roughness);
    RUN(test_alpha_test);
    RUN(test_clipped_corners);
    RUN(test_missing_set1_warned);
    scratch_dir_remove(dir);
    return check_finish();
}

/* Materials from the files a user brings (issue 30, item 1, loading): a glTF written here
 * (.gltf + .bin + PNG, the same with data URIs, and as GLB) loads its base colour factor
 * and alpha, texture, alphaMode MASK and cutoff, doubleSided false, sampler CLAMP /
 * NEAREST, metallic-roughness factors, emissive and KHR_texture_transform (converted to
 * our v-up uv); Debian's BoxTextured in each flavour and the 3DS cube load with their
 * texture; a texture that is missing, corrupt or beyond the limit is a warning naming
 * file and material, counted, and the model still loads and renders; the import pipe
 * refuses a forged texture size or index; OBJ d / Tr / map_d / Ke and texture alpha; the
 * .scene keys, their checks and sc_save_scene's round trip; --info lists materials and
 * textures. */
#include "output/png_encode.h"
#include "scenes/build.h"
#include "scenes/loaders.h"
#include "scenes/validate.h"
#include "shaders/texture_sample.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <math.h>
#include <unistd.h>

static char dir[64];

static const char *in_dir(const char *name)
{
    static char path[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static void write_bytes(const char *name, const void *p, size_t n)
{
    FILE *f = fopen(in_dir(name), "wb");
    if (f) fwrite(p, 1, n, f), fclose(f);
}

static void write_text(const char *name, const char *text) { write_bytes(name, text, strlen(text)); }

/* ---- a glTF quad ---------------------------------------------------------------------------- */

/* A 4x2 image: the top row red, the bottom row blue, alpha 255 except texel (3, 1). */
static uint8_t *quad_png(size_t *n)
{
    uint8_t px[4 * 2 * 4];
    for (int i = 0; i < 8; i++) {
        bool top = i < 4;
        px[4 * i] = top ? 255 : 0; px[4 * i + 1] = 0; px[4 * i + 2] = top ? 0 : 255; px[4 * i + 3] = 255;
    }
    px[4 * 7 + 3] = 64;
    return io_encode_png(4, 2, px, n);
}

/* Positions, normals, uvs (glTF's: v down) and indices of a quad over [-1, 1]^2 at z 0. */
static size_t quad_bin(uint8_t bin[140])
{
    const float pos[12] = {-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1, 0};
    const float nrm[12] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    const float uv[8] = {0, 1, 1, 1, 1, 0, 0, 0};
    const uint16_t idx[6] = {0, 1, 2, 0, 2, 3};
    memcpy(bin, pos, 48);
    memcpy(bin + 48, nrm, 48);
    memcpy(bin + 96, uv, 32);
    memcpy(bin + 128, idx, 12);
    return 140;
}

/* The glTF JSON: buffer (a "uri": ... member or empty for GLB), image (its members). */
static char *quad_json(const char *buffer, const char *image, int buffer_length, const char *extra_view)
{
    static char json[8192];
    snprintf(json, sizeof json,
        "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"mesh\":0}],"
        "\"extensionsUsed\":[\"KHR_texture_transform\"],"
        "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"NORMAL\":1,\"TEXCOORD_0\":2},"
        "\"indices\":3,\"material\":0}]}],"
        "\"materials\":[{\"name\":\"decal\",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.5,0.25,1,0.75],"
        "\"baseColorTexture\":{\"index\":0,\"extensions\":{\"KHR_texture_transform\":"
        "{\"offset\":[0.1,0.2],\"rotation\":0.5,\"scale\":[1.5,0.5]}}},"
        "\"metallicFactor\":0.2,\"roughnessFactor\":0.7},\"emissiveFactor\":[0.1,0.2,0.3],"
        "\"alphaMode\":\"MASK\",\"alphaCutoff\":0.3,\"doubleSided\":false}],"
        "\"textures\":[{\"source\":0,\"sampler\":0}],\"images\":[{%s}],"
        "\"samplers\":[{\"magFilter\":9728,\"minFilter\":9728,\"wrapS\":33071,\"wrapT\":33071}],"
        "\"buffers\":[{%s%s\"byteLength\":%d}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":48},"
        "{\"buffer\":0,\"byteOffset\":48,\"byteLength\":48},{\"buffer\":0,\"byteOffset\":96,\"byteLength\":32},"
        "{\"buffer\":0,\"byteOffset\":128,\"byteLength\":12}%s],"
        "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\","
        "\"min\":[-1,-1,0],\"max\":[1,1,0]},{\"bufferView\":1,\"componentType\":5126,\"count\":4,"
        "\"type\":\"VEC3\"},{\"bufferView\":2,\"componentType\":5126,\"count\":4,\"type\":\"VEC2\"},"
        "{\"bufferView\":3,\"componentType\":5123,\"count\":6,\"type\":\"SCALAR\"}]}",
        image, buffer, buffer[0] ? "," : "", buffer_length, extra_view);
    return json;
}

static char *base64(const uint8_t *p, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(4 * (n + 2) / 3 + 4), *q = o;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *q++ = a[v >> 18 & 63]; *q++ = a[v >> 12 & 63];
        *q++ = i + 1 < n ? a[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? a[v & 63] : '=';
    }
    *q = 0;
    return o;
}

/* quad.gltf + quad.bin + the image named `image` (written when png). */
static void write_gltf_files(const char *image, bool png)
{
    uint8_t bin[140];
    write_bytes("quad.bin", bin, quad_bin(bin));
    if (png) {
        size_t n;
        uint8_t *p = quad_png(&n);
        write_bytes(image, p, n);
        free(p);
    }
    char img[300];
    snprintf(img, sizeof img, "\"uri\":\"%s\"", image);
    write_text("quad.gltf", quad_json("\"uri\":\"quad.bin\"", img, 140, ""));
}

/* The same with data URIs. */
static void write_gltf_embedded(void)
{
    uint8_t bin[140];
    size_t n, nb = quad_bin(bin);
    uint8_t *p = quad_png(&n);
    char *b = base64(bin, nb), *i = base64(p, n);
    char buf[1024], img[1024];
    snprintf(buf, sizeof buf, "\"uri\":\"data:application/octet-stream;base64,%s\"", b);
    snprintf(img, sizeof img, "\"uri\":\"data:image/png;base64,%s\"", i);
    write_text("embedded.gltf", quad_json(buf, img, (int)nb, ""));
    free(b); free(i); free(p);
}

/* GLB: the JSON chunk and one BIN chunk holding the arrays and the PNG. */
static void write_glb(void)
{
    uint8_t bin[4096];
    size_t n, nb = quad_bin(bin);
    uint8_t *p = quad_png(&n);
    memcpy(bin + nb, p, n);
    size_t total = (nb + n + 3) & ~(size_t)3;
    memset(bin + nb + n, 0, total - nb - n);
    char view[128];
    snprintf(view, sizeof view, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu}", nb, n);
    char *json = quad_json("", "\"bufferView\":4,\"mimeType\":\"image/png\"", (int)total, view);
    size_t nj = (strlen(json) + 3) & ~(size_t)3;
    uint8_t glb[16384];
    uint32_t h[5] = {0x46546C67, 2, (uint32_t)(12 + 8 + nj + 8 + total), (uint32_t)nj, 0x4E4F534A};
    memcpy(glb, h, 20);
    memset(glb + 20, ' ', nj);
    memcpy(glb + 20, json, strlen(json));
    uint32_t c[2] = {(uint32_t)total, 0x004E4942};
    memcpy(glb + 20 + nj, c, 8);
    memcpy(glb + 28 + nj, bin, total);
    write_bytes("quad.glb", glb, 28 + nj + total);
    free(p);
}

static sc_scene *load(const char *path, const sc_load_opts *o)
{
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load_with(path, o, &s, err) == 0, "%s", err);
    return s;
}

/* KHR_texture_transform as the extension applies it to glTF's uv (v down), in the
 * direction Khronos' TextureTransformTest model checks. */
static void khr_transform(const float uv[2], float res[2])
{
    const float o[2] = {0.1f, 0.2f}, s[2] = {1.5f, 0.5f}, r = 0.5f;
    float x = s[0] * uv[0], y = s[1] * uv[1];
    res[0] = o[0] + cosf(r) * x + sinf(r) * y;
    res[1] = o[1] - sinf(r) * x + cosf(r) * y;
}

static void check_quad_material(const sc_scene *s, const char *what)
{
    int k = sc_scene_find_material(s, "decal");
    CHECK_MSG(k >= 0, "%s: no material 'decal'", what);
    if (k < 0) return;
    const sc_material *m = &s->materials[k];
    CHECK_MSG(m->albedo[0] == 0.5f && m->albedo[1] == 0.25f && m->albedo[2] == 1 && m->alpha == 0.75f,
              "%s: base colour %g %g %g alpha %g", what, m->albedo[0], m->albedo[1], m->albedo[2], m->alpha);
    CHECK_MSG(m->alpha_mode == SC_ALPHA_MASK && fabsf(m->alpha_cutoff - 0.3f) < 1e-6f && !m->double_sided,
              "%s: alpha mode %d cutoff %g double-sided %d", what, m->alpha_mode, m->alpha_cutoff, m->double_sided);
    CHECK(m->model == SC_SHADING_METALLIC_ROUGHNESS);
    CHECK(fabsf(m->metallic - 0.2f) < 1e-6f && fabsf(m->roughness - 0.7f) < 1e-6f);
    CHECK(fabsf(m->emissive[0] - 0.1f) < 1e-6f && fabsf(m->emissive[2] - 0.3f) < 1e-6f);
    const sc_texture_ref *r = &m->albedo_map;
    CHECK_MSG(r->texture >= 0 && (size_t)r->texture < s->ntextures, "%s: no texture", what);
    if (r->texture < 0) return;
    const sc_texture *t = &s->textures[r->texture];
    CHECK_MSG(t->levels[0].width == 4 && t->levels[0].height == 2 && t->nlevels == 3 && t->has_alpha,
              "%s: texture %dx%d, %d levels", what, t->levels[0].width, t->levels[0].height, t->nlevels);
    /* row 0 (the image's top) red, as stored */
    CHECK(t->levels[0].rgba[0] == 255 && t->levels[0].rgba[2] == 0 && t->levels[0].rgba[4 * 4 + 2] == 255);
    CHECK(r->sampler.wrap_u == SC_WRAP_CLAMP && r->sampler.wrap_v == SC_WRAP_CLAMP &&
          r->sampler.filter == SC_FILTER_NEAREST_NO_MIPS && r->uv_set == 0);
    /* the transform, applied to our uv (v up), lands where glTF's lands on glTF's uv */
    const float pts[4][2] = {{0, 0}, {1, 0}, {0.25f, 0.75f}, {1, 1}};
    for (int i = 0; i < 4; i++) {
        float g[2], u = pts[i][0], v = 1 - pts[i][1];
        khr_transform(pts[i], g);
        sh_texture_transform(r, &u, &v);
        CHECK_MSG(fabsf(u - g[0]) < 1e-5f && fabsf(v - (1 - g[1])) < 1e-5f,
                  "%s: (%g, %g) -> ours (%g, %g), glTF's (%g, %g)", what, pts[i][0], pts[i][1], u,
                  1 - v, g[0], g[1]);
    }
    /* the mesh's uv: glTF v 0 (the image's top) at the quad's top edge, v 1 here */
    const sc_mesh *mesh = &s->meshes[0];
    CHECK(mesh->texcoords != NULL);
    for (size_t i = 0; mesh->texcoords && i < mesh->nvertices; i++)
        CHECK_MSG(mesh->texcoords[2 * i + 1] == (mesh->positions[3 * i + 1] > 0 ? 1.0f : 0.0f),
                  "%s: vertex %zu at y %g has v %g", what, i, mesh->positions[3 * i + 1], mesh->texcoords[2 * i + 1]);
    CHECK(s->unreadable_textures == 0 && !s->warnings);
}

static void test_gltf_files(void)
{
    sc_load_opts o = sc_load_opts_default();
    write_gltf_files("quad.png", true);
    sc_scene *s = load(in_dir("quad.gltf"), &o);
    if (s) check_quad_material(s, "quad.gltf");
    sc_free(s);
    write_gltf_embedded();
    s = load(in_dir("embedded.gltf"), &o);
    if (s) check_quad_material(s, "embedded.gltf");
    if (s && s->ntextures) CHECK_MSG(strstr(s->textures[0].name, "embedded.gltf#0"), "%s", s->textures[0].name);
    sc_free(s);
    write_glb();
    s = load(in_dir("quad.glb"), &o);
    if (s) check_quad_material(s, "quad.glb");
    sc_free(s);
}

/* Missing, corrupt and over-the-limit textures: a warning naming the file and the
 * material, counted; the model loads untextured and renders. */
static void test_unreadable_textures(void)
{
    sc_load_opts o = sc_load_opts_default();
    write_gltf_files("missing.png", false);
    sc_scene *s = load(in_dir("quad.gltf"), &o);
    if (s) {
        CHECK(s->unreadable_textures == 1 && s->ntextures == 0);
        CHECK(s->materials[sc_scene_find_material(s, "decal")].albedo_map.texture == -1);
        CHECK_MSG(s->warnings && strstr(s->warnings, "quad.gltf: material 'decal'") &&
                  strstr(s->warnings, "missing.png") && strstr(s->warnings, "renders untextured"),
                  "%s", s->warnings ? s->warnings : "no warning");
    }
    sc_free(s);
    char args[512];
    snprintf(args, sizeof args, "-q -t 2 --size 16x16 --stats %s -o %s %s", in_dir("s.json"),
             in_dir("q.png"), in_dir("quad.gltf"));
    CHECK_MSG(run(args) == 0 && strstr(out, "gramps-render: warning: ") && strstr(out, "missing.png"), "%s", out);
    char *json = slurp(in_dir("s.json"), NULL);
    CHECK_MSG(json && strstr(json, "\"unreadable_textures\": 1"), "%s", json ? json : "no stats");
    free(json);

    write_text("corrupt.png", "\x89PNG\r\n\x1a\nnot a png at all");
    write_gltf_files("corrupt.png", false);
    s = load(in_dir("quad.gltf"), &o);
    if (s) CHECK_MSG(s->unreadable_textures == 1 && s->warnings && strstr(s->warnings, "corrupt.png: cannot read"),
                     "%s", s->warnings ? s->warnings : "no warning");
    sc_free(s);

    /* a path from the author's machine: the file of that name beside the model */
    write_gltf_files("quad.png", true);
    write_gltf_files("C:\\\\Users\\\\someone\\\\QUAD.PNG", false);
    s = load(in_dir("quad.gltf"), &o);
    if (s) CHECK_MSG(s->unreadable_textures == 0 && s->ntextures == 1, "%s", s->warnings ? s->warnings : "");
    sc_free(s);

    write_gltf_files("quad.png", true);
    o.max_texture_pixels = 7;                 /* the 4x2 image is one pixel over */
    s = load(in_dir("quad.gltf"), &o);
    if (s) CHECK_MSG(s->unreadable_textures == 1 && s->warnings && strstr(s->warnings, "4x2, more than the 7-pixel limit"),
                     "%s", s->warnings ? s->warnings : "no warning");
    sc_free(s);
    write_gltf_embedded();
    s = load(in_dir("embedded.gltf"), &o);
    if (s) CHECK_MSG(s->unreadable_textures == 1 && s->warnings && strstr(s->warnings, "embedded.gltf#0: the texture is 4x2"),
                     "%s", s->warnings ? s->warnings : "no warning");
    sc_free(s);
}

/* ---- the import pipe refuses what the limits refuse ------------------------------------------ */

static int forged_size(sc_scene *s, const char *path, const sc_load_opts *o, char *err)
{
    (void)o;
    sc_mesh_builder b = {0};
    sc_mb_vertex(&b, 0, 0, 0); sc_mb_vertex(&b, 1, 0, 0); sc_mb_vertex(&b, 0, 1, 0);
    sc_mb_triangle(&b, 0, 1, 2, 0);
    sc_scene_add_material(s, "m", 1, 1, 1, 0, 0, 1);
    unsigned char *px = calloc(4, 4);
    sc_add_texture_level0(s, "forged", 1, 1, px, err);
    s->textures[0].levels[0].width = 70000;     /* a header the texels do not back */
    s->materials[0].albedo_map.texture = 0;
    int m = sc_scene_add_mesh(s, path, &b);
    sc_mb_free(&b);
    return m;
}

static int forged_index(sc_scene *s, const char *path, const sc_load_opts *o, char *err)
{
    (void)o; (void)err;
    sc_mesh_builder b = {0};
    sc_mb_vertex(&b, 0, 0, 0); sc_mb_vertex(&b, 1, 0, 0); sc_mb_vertex(&b, 0, 1, 0);
    sc_mb_triangle(&b, 0, 1, 2, 0);
    sc_scene_add_material(s, "m", 1, 1, 1, 0, 0, 1);
    s->materials[0].albedo_map.texture = 3;    /* no texture 3 is sent */
    int m = sc_scene_add_mesh(s, path, &b);
    sc_mb_free(&b);
    return m;
}

static void test_pipe_checks(void)
{
    sc_load_opts o = sc_load_opts_default();
    sc_scene *s = sc_scene_new("x");
    char err[SC_ERR_MAX];
    CHECK(sc_import_isolated(s, "f.glb", &o, forged_size, err) == -1);
    CHECK_MSG(strstr(err, "f.glb: the importer sent texture 1: the texture is 70000x1, a side beyond 32768"),
              "%s", err);
    CHECK(sc_import_isolated(s, "g.glb", &o, forged_index, err) == -1);
    CHECK_MSG(strstr(err, "g.glb: the importer sent material 1 with a texture index"), "%s", err);
    CHECK(s->nmeshes == 0 && s->ntextures == 0);
    sc_free(s);
}

/* ---- Debian's test models -------------------------------------------------------------------- */

#define MODELS "/usr/share/assimp/models/"

static void test_debian_models(void)
{
    static const char *const files[] = {
        MODELS "glTF2/BoxTextured-glTF/BoxTextured.gltf", MODELS "glTF2/BoxTextured-glTF-Binary/BoxTextured.glb",
        MODELS "glTF2/BoxTextured-glTF-Embedded/BoxTextured.gltf", MODELS "3DS/cube_with_diffuse_texture.3DS"};
    if (access(files[0], R_OK) != 0) SKIP("Debian's assimp-testmodels are not installed (%s)", files[0]);
    sc_load_opts o = sc_load_opts_default();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        sc_scene *s = load(files[i], &o);
        if (!s) continue;
        const sc_material *m = &s->materials[0];
        CHECK_MSG(s->ntextures == 1 && m->albedo_map.texture == 0 && s->unreadable_textures == 0,
                  "%s: %zu textures, material 0's %d", files[i], s->ntextures, m->albedo_map.texture);
        const sc_mip_level *l = &s->textures[0].levels[0];
        bool gltf = i < 3;
        CHECK_MSG(gltf ? l->width == 211 && l->height == 211 : l->width == 512 && l->height == 512,
                  "%s: %dx%d", files[i], l->width, l->height);
        CHECK(m->model == (gltf ? SC_SHADING_METALLIC_ROUGHNESS : SC_SHADING_BLINN_PHONG));
        if (gltf) CHECK(!m->double_sided && m->alpha_mode == SC_ALPHA_OPAQUE);
        /* BoxTextured.gltf's sampler: MIRRORED_REPEAT x CLAMP_TO_EDGE, LINEAR / NEAREST_MIPMAP_LINEAR */
        if (i == 0) CHECK(m->albedo_map.sampler.wrap_u == SC_WRAP_MIRROR && m->albedo_map.sampler.wrap_v == SC_WRAP_CLAMP &&
                          m->albedo_map.sampler.filter == SC_FILTER_TRILINEAR);
        sc_free(s);
    }
}

/* A format without alpha modes (Collada here) whose material says opacity 0: taken as
 * opaque, with a warning (exporters write 0 for opaque); 0.5 blends. */
static void test_collada_opacity(void)
{
    static const char dae[] =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
        "<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n"
        "<asset><up_axis>Y_UP</up_axis></asset>\n"
        "<library_effects><effect id=\"fx\"><profile_COMMON><technique sid=\"t\"><phong>"
        "<diffuse><color>0.5 0.5 0.5 1</color></diffuse><transparency><float>%s</float></transparency>"
        "</phong></technique></profile_COMMON></effect></library_effects>\n"
        "<library_materials><material id=\"mat\" name=\"ghost\"><instance_effect url=\"#fx\"/></material></library_materials>\n"
        "<library_geometries><geometry id=\"g\"><mesh><source id=\"p\"><float_array id=\"pa\" count=\"9\">0 0 0 1 0 0 0 1 0</float_array>"
        "<technique_common><accessor source=\"#pa\" count=\"3\" stride=\"3\"><param name=\"X\" type=\"float\"/>"
        "<param name=\"Y\" type=\"float\"/><param name=\"Z\" type=\"float\"/></accessor></technique_common></source>"
        "<vertices id=\"v\"><input semantic=\"POSITION\" source=\"#p\"/></vertices>"
        "<triangles material=\"m\" count=\"1\"><input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>0 1 2</p></triangles>"
        "</mesh></geometry></library_geometries>\n"
        "<library_visual_scenes><visual_scene id=\"s\"><node id=\"n\"><instance_geometry url=\"#g\"><bind_material>"
        "<technique_common><instance_material symbol=\"m\" target=\"#mat\"/></technique_common></bind_material>"
        "</instance_geometry></node></visual_scene></library_visual_scenes>\n"
        "<scene><instance_visual_scene url=\"#s\"/></scene></COLLADA>\n";
    char text[4096];
    sc_load_opts o = sc_load_opts_default();
    for (int half = 0; half < 2; half++) {
        snprintf(text, sizeof text, dae, half ? "0.5" : "0");
        write_text("t.dae", text);
        sc_scene *s = load(in_dir("t.dae"), &o);
        if (!s) continue;
        const sc_material *m = &s->materials[sc_scene_find_material(s, "ghost")];
        if (half) {
            CHECK_MSG(m->alpha == 0.5f && m->alpha_mode == SC_ALPHA_BLEND && !s->warnings, "alpha %g", m->alpha);
        } else {
            CHECK_MSG(m->alpha == 1 && m->alpha_mode == SC_ALPHA_OPAQUE && m->model == SC_SHADING_BLINN_PHONG,
                      "alpha %g mode %d", m->alpha, m->alpha_mode);
            CHECK_MSG(s->warnings && strstr(s->warnings, "t.dae: material 'ghost': opacity 0 taken as opaque"),
                      "%s", s->warnings ? s->warnings : "no warning");
        }
        sc_free(s);
    }
}

/* ---- OBJ ------------------------------------------------------------------------------------- */

static void test_obj_alpha(void)
{
    uint8_t ga[4 * 4] = {255, 255, 255, 255, 128, 128, 128, 255, 0, 0, 0, 255, 255, 255, 255, 255};
    size_t n;
    uint8_t *p = io_encode_png(2, 2, ga, &n);       /* an opacity map: white, grey, black, white */
    write_bytes("d.png", p, n);
    free(p);
    uint8_t red[4 * 4] = {255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 100};
    p = io_encode_png(2, 2, red, &n);
    write_bytes("alpha.png", p, n);
    free(p);
    write_text("a.obj", "mtllib a.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\n"
                        "usemtl glass\nf 1/1 2/2 3/3\nusemtl tr\nf 1/1 2/2 3/3\nusemtl cut\nf 1/1 2/2 3/3\n"
                        "usemtl solid\nf 1/1 2/2 3/3\nusemtl lamp\nf 1/1 2/2 3/3\nusemtl cutd\nf 1/1 2/2 3/3\n");
    write_text("a.mtl", "newmtl glass\nKd 1 1 1\nd 0.25\n"
                        "newmtl tr\nTr 0.75\n"
                        "newmtl cut\nmap_Kd alpha.png\n"
                        "newmtl solid\nd 1\nmap_Kd d.png\n"
                        "newmtl lamp\nKe 2 1 0.5\nmap_Ke d.png\n"
                        "newmtl cutd\nmap_d d.png\nmap_Kd alpha.png\n");
    sc_load_opts o = sc_load_opts_default();
    sc_scene *s = load(in_dir("a.obj"), &o);
    if (!s) return;
    const sc_material *m = &s->materials[sc_scene_find_material(s, "glass")];
    CHECK(m->alpha == 0.25f && m->alpha_mode == SC_ALPHA_BLEND && m->model == SC_SHADING_BLINN_PHONG);
    m = &s->materials[sc_scene_find_material(s, "tr")];
    CHECK(fabsf(m->alpha - 0.25f) < 1e-6f && m->alpha_mode == SC_ALPHA_BLEND);
    m = &s->materials[sc_scene_find_material(s, "cut")];
    CHECK(m->alpha == 1 && m->alpha_mode == SC_ALPHA_BLEND && m->albedo_map.texture >= 0);
    m = &s->materials[sc_scene_find_material(s, "solid")];
    CHECK(m->alpha == 1 && m->alpha_mode == SC_ALPHA_OPAQUE && m->albedo_map.texture >= 0);
    m = &s->materials[sc_scene_find_material(s, "lamp")];
    CHECK(m->emissive[0] == 2 && m->emissive[2] == 0.5f && m->emissive_map.texture >= 0);
    m = &s->materials[sc_scene_find_material(s, "cutd")];
    CHECK(m->alpha_mode == SC_ALPHA_BLEND && m->albedo_map.texture >= 0);
    if (m->albedo_map.texture >= 0) {
        /* map_Kd's red and alpha times map_d's grey: 255, 128, 0, 100 * 255 / 255 */
        const uint8_t *t = s->textures[m->albedo_map.texture].levels[0].rgba;
        CHECK_MSG(t[0] == 255 && t[3] == 255 && t[7] == 128 && t[11] == 0 && t[15] == 100,
                  "alpha %u %u %u %u", t[3], t[7], t[11], t[15]);
    }
    CHECK(s->ntextures == 3);                   /* d.png and alpha.png once each, + the combination */
    sc_free(s);
}

/* ---- .scene files ----------------------------------------------------------------------------- */

static void expect_scene_error(const char *text, const char *fragment)
{
    write_text("e.scene", text);
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load(in_dir("e.scene"), &s, err) != 0 && strstr(err, fragment), "'%s' lacks '%s'", err, fragment);
    sc_free(s);
}

static void test_scene_keys(void)
{
    size_t n;
    uint8_t px[4] = {10, 20, 30, 40};
    uint8_t *p = io_encode_png(1, 1, px, &n);
    write_bytes("one.png", p, n);
    free(p);
    write_text("m.scene", "[material.leaf]\nalbedo = 0.2,0.8,0.1\ntexture = one.png\nalpha = 0.9\n"
                          "alpha_mode = mask\nalpha_cutoff = 0.4\ndouble_sided = false\nwrap = clamp\n"
                          "wrap_v = mirror\nfilter = nearest\nmodel = metallic-roughness\nmetallic = 0.1\n"
                          "roughness = 0.6\nemissive = 0.5,0.25,0\nnormal_map = one.png\nnormal_scale = 0.5\n"
                          "uv_offset = 0.5,0.25\nuv_scale = 2,3\nuv_rotation = 0.1\n"
                          "[mesh.a]\nbuiltin = teapot\nmaterial = leaf\n");
    sc_load_opts o = sc_load_opts_default();
    for (int pass = 0; pass < 2; pass++) {
        const char *path = in_dir(pass ? "saved.scene" : "m.scene");
        sc_scene *s = load(path, &o);
        if (!s) return;
        const sc_material *m = &s->materials[sc_scene_find_material(s, "leaf")];
        CHECK_MSG(m->alpha == 0.9f && m->alpha_mode == SC_ALPHA_MASK && m->alpha_cutoff == 0.4f && !m->double_sided &&
                  m->model == SC_SHADING_METALLIC_ROUGHNESS && m->metallic == 0.1f && m->roughness == 0.6f &&
                  m->emissive[0] == 0.5f && m->normal_scale == 0.5f, "pass %d", pass);
        const sc_texture_ref *r = &m->albedo_map;
        CHECK_MSG(r->texture >= 0 && m->normal_map.texture >= 0 && r->sampler.wrap_u == SC_WRAP_CLAMP &&
                  r->sampler.wrap_v == SC_WRAP_MIRROR && r->sampler.filter == SC_FILTER_NEAREST &&
                  m->normal_map.sampler.wrap_u == SC_WRAP_CLAMP && r->offset[0] == 0.5f &&
                  r->scale[1] == 3 && r->rotation == 0.1f, "pass %d", pass);
        if (r->texture >= 0)
            CHECK(!memcmp(s->textures[r->texture].levels[0].rgba, px, 4) && s->textures[r->texture].has_alpha);
        if (pass == 0) {
            CHECK(m->albedo_map.texture == m->normal_map.texture && s->ntextures == 1);   /* read once */
            char err[SC_ERR_MAX];
            CHECK_MSG(sc_save_scene(s, in_dir("saved.scene"), err) == 0, "%s", err);
        }
        sc_free(s);
    }
    expect_scene_error("[material.m]\nalpha = 1.5\n", "e.scene:2: [material.m]: alpha: alpha and alpha_cutoff must be in [0, 1]");
    expect_scene_error("[material.m]\nalpha_cutoff = -0.1\n", "e.scene:2: [material.m]: alpha_cutoff:");
    expect_scene_error("[material.m]\nalpha_mode = see-through\n", "e.scene:2: [material.m]: bad value 'see-through'");
    expect_scene_error("[material.m]\nwrap = tile\n", "e.scene:2: [material.m]: bad value 'tile'");
    expect_scene_error("[material.m]\nfilter = anisotropic\n", "e.scene:2:");
    expect_scene_error("[material.m]\nmetallic = nan\n", "e.scene:2: [material.m]: bad value 'nan'");
    expect_scene_error("[material.m]\nroughness = 2\n", "e.scene:2: [material.m]: roughness: metallic, roughness");
    expect_scene_error("[material.m]\nemissive = 1,1\n", "e.scene:2: [material.m]: bad value '1,1'");
    expect_scene_error("[material.m]\nuv_scale = inf,1\n", "e.scene:2:");
}

/* ---- --info ---------------------------------------------------------------------------------- */

static void test_info(void)
{
    write_gltf_files("quad.png", true);
    char args[256];
    snprintf(args, sizeof args, "--info %s", in_dir("quad.gltf"));
    CHECK_MSG(run(args) == 0 && strstr(out, "decal: metallic-roughness, base colour (0.5, 0.25, 1) alpha 0.75, mask (cutoff 0.3), single-sided") &&
              strstr(out, "base colour: texture 0 quad.png 4x2, 3 levels; uv set 0, wrap clamp/clamp, nearest-no-mips; transform") &&
              strstr(out, "textures 1 (0 unreadable):") && strstr(out, "0 quad.png: 4x2, 3 levels"), "%s", out);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    snprintf(dir, sizeof dir, "/tmp/gramps-materials-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(test_gltf_files);
    RUN(test_unreadable_textures);
    RUN(test_pipe_checks);
    RUN(test_debian_models);
    RUN(test_collada_opacity);
    RUN(test_obj_alpha);
    RUN(test_scene_keys);
    RUN(test_info);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}

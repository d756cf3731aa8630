/* Textures, ray cones and blending in the ray tracer and the hybrid (issue 30).
 *
 * On generated OBJ + MTL scenes (textures written as PPM files, or added in memory where
 * they carry alpha):
 *  - the ray tracer draws the albedo texture: raster against ray tracer with --bounces 0
 *    and the light at the eye (so no shadow the raster graph lacks is seen), a textured
 *    box and floor seen at magnification (both read level 0): at least 98% of pixels
 *    within 4/255, in colour and in the albedo AOV; the hybrid the ray tracer's picture;
 *    the same on a floor receding to the horizon (minification: quad derivatives
 *    against cones);
 *    the same with glTF metallic-roughness materials (shaders/pbr.h);
 *  - the level of detail comes from the ray cone: a texel-sized black and white checker
 *    on a floor receding to the horizon is grey in the distance (its mip average), not
 *    aliased black and white as level 0 would give;
 *  - blended (SC_ALPHA_BLEND) surfaces composite front to back along the ray: albedo =
 *    a c_front + (1 - a) (behind), with the texture's alpha, through two layers (the
 *    hybrid: in draw order, as the raster graphs blend, test_hybrid_blend), a stack
 *    of fully transparent layers ends (PLRT_MAX_LAYERS), colour too; a shadow through a
 *    blended surface lets (1 - a) of the light through;
 *  - images bit-identical for 1, 2, 3 and 8 workers and every scheduler, textures and
 *    blending on, in both graphs. */
#include "pipelines/stages.h"
#include "pipelines/raytrace/packets.h"
#include "scenes/loaders.h"
#include "tests/box_scene.h"
#include "tests/check.h"
#include "tests/image_agreement.h"
#include "tests/scene_data.h"
#include "tests/scratch_dir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W 192
#define H 144

static char dir[64];

/* A side x side PPM: 4x4-texel blocks of two colours and a slow gradient (smooth enough
 * that bilinear filtering on either side agrees within a few levels). */
static void write_blocks(const char *name, int side)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fprintf(f, "P6\n%d %d\n255\n", side, side);
    for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++) {
            int odd = (x / 4 + y / 4) & 1;
            unsigned char c[3] = {(unsigned char)(odd ? 220 : 40), (unsigned char)(60 + 150 * x / side),
                                  (unsigned char)(odd ? 50 : 200)};
            fwrite(c, 1, 3, f);
        }
    fclose(f);
}

/* A cube of edge 2 at the origin, turned 0.6 radians about y, with uv 0..1 and its own
 * four vertices per face (the OBJ reader keeps one uv per `v` line: no seams), flat
 * normals, and a floor at y = -1 over [-6, 6]^2 with uv 0..3 (material floor). */
static void write_box_scene(void)
{
    write_blocks("blocks.ppm", 16);
    scratch_write_text(dir, "box.mtl", "newmtl box\nKd 1 1 1\nmap_Kd blocks.ppm\n"
                          "newmtl floor\nKd 0.9 0.9 0.9\nmap_Kd blocks.ppm\n");
    char obj[8192];
    box_scene_obj(obj, sizeof obj);
    scratch_write_text(dir, "box.obj", obj);
}

static bool load(loaded *l, const char *name)
{
    char err[SC_ERR_MAX], path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (sc_load(path, &l->s, err) || sc_flatten(l->s, &l->g, err)) {
        fprintf(stderr, "  %s: %s\n", path, err);
        return false;
    }
    pl_scene_data_init(&l->data, l->s, &l->g);
    return true;
}

typedef struct view { float eye[3], target[3], fovy; } view;

/* Renders built-in graph `name` into rgba (W x H), eye light, `bounces`; true if it ran. */
static bool render(loaded *l, const char *name, sh_aov aov, int bounces, const view *v,
                   const gr_launch_opts *lo, uint8_t *rgba, gr_profile **prof)
{
    char err[CP_ERR_MAX], b[16];
    sc_camera cam = l->s->camera;
    memcpy(cam.eye, v->eye, sizeof cam.eye);
    memcpy(cam.target, v->target, sizeof cam.target);
    cam.up[0] = 0, cam.up[1] = 1, cam.up[2] = 0;
    cam.fovy_deg = v->fovy;
    l->s->camera = cam;
    sc_light light = {{v->eye[0], v->eye[1], v->eye[2]}, {1, 1, 1}};
    sc_light *old = l->s->lights;
    size_t nold = l->s->nlights;
    l->s->lights = &light;
    l->s->nlights = 1;
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = cp_graph_new(r);
    snprintf(b, sizeof b, "%d", bounces);
    bool ok = !cp_graph_load_text(g, pl_builtin_graph(name), name, err);
    if (ok && strcmp(name, "raster")) ok = !cp_put(g, "graph", "bounces", b, "test", err);
    pl_frame f;
    ok = ok && pl_frame_init(&f, &l->data, W, H, aov, err);
    gr_graph *run = ok ? pl_render_frame(g, &f, lo, err) : NULL;
    if (run) {
        memcpy(rgba, pl_frame_image(&f), (size_t)W * H * 4);
        if (prof) *prof = gr_profile_take(run);
    }
    if (!run) fprintf(stderr, "  %s: %s\n", name, err);
    gr_graph_destroy(run);
    if (ok) pl_frame_free(&f);
    cp_graph_free(g);
    cp_registry_free(r);
    l->s->lights = old;
    l->s->nlights = nold;
    return run != NULL;
}

static bool render2(loaded *l, const char *name, sh_aov aov, int bounces, const view *v, uint8_t *rgba)
{
    gr_launch_opts lo = {.workers = 2};
    return render(l, name, aov, bounces, v, &lo, rgba, NULL);
}

static const view box_view = {{0.5f, 1.5f, 6.5f}, {0, -0.3f, 0}, 45};

static void test_raster_vs_ray_tracer(void)
{
    write_box_scene();
    loaded l;
    if (!load(&l, "box.obj")) { CHECK(0); return; }
    CHECK(l.s->ntextures == 1);
    uint8_t *ra = malloc((size_t)W * H * 4), *rt = malloc((size_t)W * H * 4),
            *hy = malloc((size_t)W * H * 4), *plain = malloc((size_t)W * H * 4);
    CHECK(render2(&l, "raster", SH_AOV_COLOR, 0, &box_view, ra));
    CHECK(render2(&l, "raytrace", SH_AOV_COLOR, 0, &box_view, rt));
    CHECK(render2(&l, "hybrid", SH_AOV_COLOR, 0, &box_view, hy));
    double a = agreement_within(ra, rt, W * H, 4), h = agreement_within(hy, rt, W * H, 2);
    printf("    colour: raster vs ray tracer %.4f within 4/255, hybrid vs ray tracer %.4f within 2/255\n", a, h);
    CHECK_MSG(a >= 0.98, "raster vs ray tracer: %.4f of pixels within 4/255", a);
    CHECK_MSG(h >= 0.99, "hybrid vs ray tracer: %.4f of pixels within 2/255", h);
    /* the texture is what they agree on: without it the ray tracer's image is another */
    l.s->materials[0].albedo_map.texture = l.s->materials[1].albedo_map.texture = -1;
    CHECK(render2(&l, "raytrace", SH_AOV_COLOR, 0, &box_view, plain));
    double u = agreement_within(ra, plain, W * H, 4);
    CHECK_MSG(u < 0.9, "the untextured ray tracer matches the textured raster image (%.4f)", u);
    l.s->materials[0].albedo_map.texture = l.s->materials[1].albedo_map.texture = 0;
    CHECK(render2(&l, "raster", SH_AOV_ALBEDO, 0, &box_view, ra));
    CHECK(render2(&l, "raytrace", SH_AOV_ALBEDO, 0, &box_view, rt));
    CHECK(render2(&l, "hybrid", SH_AOV_ALBEDO, 0, &box_view, hy));
    a = agreement_within(ra, rt, W * H, 4);
    h = agreement_within(hy, rt, W * H, 0);
    printf("    albedo: raster vs ray tracer %.4f within 4/255, hybrid vs ray tracer %.4f equal\n", a, h);
    CHECK_MSG(a >= 0.98, "albedo, raster vs ray tracer: %.4f of pixels within 4/255", a);
    CHECK_MSG(h >= 0.99, "albedo, hybrid vs ray tracer: %.4f of pixels equal", h);
    /* background black, the box's texels unlit: a pixel of the box's block colours */
    CHECK(rt[0] == 0 && rt[1] == 0 && rt[2] == 0);
    free(ra), free(rt), free(hy), free(plain);
    unload(&l);
}

/* Minification: the blocks texture on a floor receding to the horizon (uv 0..20 across,
 * 0..40 deep), raster graph (quad derivatives, trilinear) against ray tracer (cones):
 * the two levels of detail differ a little, at most 2% of the pixels by more than 4/255. */
static void test_receding_floor(void)
{
    write_blocks("blocks.ppm", 16);
    scratch_write_text(dir, "floor.mtl", "newmtl floor\nKd 0.9 0.9 0.9\nKs 0\nmap_Kd blocks.ppm\n");
    scratch_write_text(dir, "floor.obj", "mtllib floor.mtl\nv -50 0 -200\nv 50 0 -200\nv 50 0 10\nv -50 0 10\n"
                            "vt 0 40\nvt 20 40\nvt 20 0\nvt 0 0\nvn 0 1 0\n"
                            "usemtl floor\nf 1/1/1 4/4/1 3/3/1 2/2/1\n");
    loaded l;
    if (!load(&l, "floor.obj")) { CHECK(0); return; }
    uint8_t *ra = malloc((size_t)W * H * 4), *rt = malloc((size_t)W * H * 4);
    const view v = {{0, 1.5f, 8}, {0, 0.5f, 0}, 45};
    for (int k = 0; k < 2; k++) {
        sh_aov aov = k ? SH_AOV_ALBEDO : SH_AOV_COLOR;
        CHECK(render2(&l, "raster", aov, 0, &v, ra));
        CHECK(render2(&l, "raytrace", aov, 0, &v, rt));
        double a = agreement_within(ra, rt, W * H, 4);
        printf("    receding floor, %s: raster vs ray tracer %.4f within 4/255\n", k ? "albedo" : "colour", a);
        CHECK_MSG(a >= 0.98, "receding floor, %s: %.4f of pixels within 4/255", k ? "albedo" : "colour", a);
    }
    free(ra), free(rt);
    unload(&l);
}

/* The textured box and floor as glTF metallic-roughness materials (shaders/pbr.h):
 * metallic 0.2 / roughness 0.6 (floor) and metallic 1 / roughness 0.3 (box). */
static void make_metallic_roughness(loaded *l)
{
    for (size_t m = 0; m < l->s->nmaterials; m++) {
        l->s->materials[m].model = SC_SHADING_METALLIC_ROUGHNESS;
        l->s->materials[m].metallic = strcmp(l->s->materials[m].name, "box") ? 0.2f : 1.0f;
        l->s->materials[m].roughness = strcmp(l->s->materials[m].name, "box") ? 0.6f : 0.3f;
    }
}

/* The ray tracer shades them through pbr.h as the raster graphs do (--bounces 0, light at
 * the eye: at least 98% of pixels within 4/255), not as Blinn-Phong; the hybrid alike. */
static void test_metallic_roughness(void)
{
    write_box_scene();
    loaded l;
    if (!load(&l, "box.obj")) { CHECK(0); return; }
    make_metallic_roughness(&l);
    uint8_t *hy = malloc((size_t)W * H * 4), *rt = malloc((size_t)W * H * 4),
            *bp = malloc((size_t)W * H * 4);
    CHECK(render2(&l, "raster", SH_AOV_COLOR, 0, &box_view, hy));
    CHECK(render2(&l, "raytrace", SH_AOV_COLOR, 0, &box_view, rt));
    double a = agreement_within(hy, rt, W * H, 4);
    printf("    metallic-roughness: raster vs ray tracer %.4f within 4/255\n", a);
    CHECK_MSG(a >= 0.98, "metallic-roughness, raster vs ray tracer: %.4f of pixels within 4/255", a);
    CHECK(render2(&l, "raytrace", SH_AOV_COLOR, 1, &box_view, rt));
    CHECK(render2(&l, "hybrid", SH_AOV_COLOR, 1, &box_view, hy));
    double h = agreement_within(hy, rt, W * H, 2);
    CHECK_MSG(h >= 0.99, "metallic-roughness, hybrid vs ray tracer: %.4f of pixels within 2/255", h);
    for (size_t m = 0; m < l.s->nmaterials; m++) l.s->materials[m].model = SC_SHADING_BLINN_PHONG;
    CHECK(render2(&l, "raytrace", SH_AOV_COLOR, 1, &box_view, bp));
    const double as_blinn_phong = agreement_within(bp, rt, W * H, 4);   /* -1: an image missing */
    CHECK_MSG(as_blinn_phong >= 0 && as_blinn_phong < 0.9, "the ray tracer shades metallic-roughness as Blinn-Phong");
    free(hy), free(rt), free(bp);
    unload(&l);
}

/* A 64 x 64 checker of single black and white texels on a floor to the horizon: in the
 * distance the ray cone reads the top of the mip chain (grey); level 0 would alias. */
static void test_cone_level_of_detail(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/texels.ppm", dir);
    FILE *f = fopen(path, "wb");
    if (f) {
        fprintf(f, "P6\n64 64\n255\n");
        for (int i = 0; i < 64 * 64; i++) {
            unsigned char v = ((i & 63) + i / 64) & 1 ? 255 : 0, c[3] = {v, v, v};
            fwrite(c, 1, 3, f);
        }
        fclose(f);
    }
    scratch_write_text(dir, "far.mtl", "newmtl floor\nKd 1 1 1\nmap_Kd texels.ppm\n");
    scratch_write_text(dir, "far.obj", "mtllib far.mtl\nv -100 0 -400\nv 100 0 -400\nv 100 0 10\nv -100 0 10\n"
                          "vt 0 40\nvt 20 40\nvt 20 0\nvt 0 0\nusemtl floor\nf 1/1 4/4 3/3 2/2\n");
    loaded l;
    if (!load(&l, "far.obj")) { CHECK(0); return; }
    uint8_t *rt = malloc((size_t)W * H * 4), *hy = malloc((size_t)W * H * 4);
    const view v = {{0, 1, 8}, {0, 0.6f, 0}, 50};
    CHECK(render2(&l, "raytrace", SH_AOV_ALBEDO, 0, &v, rt));
    CHECK(render2(&l, "hybrid", SH_AOV_ALBEDO, 0, &v, hy));
    /* rows just below the horizon (row H/2 - 2 .. ): grey within 40 of 128 everywhere */
    int far_row = -1;
    for (int y = 0; y < H && far_row < 0; y++)
        if (rt[((size_t)y * W + W / 2) * 4] != 0 || rt[((size_t)y * W + W / 2) * 4 + 1] != 0) far_row = y;
    CHECK(far_row > 0 && far_row < H / 2 + 4);
    int extreme = 0, n = 0;
    for (int y = far_row + 1; y < far_row + 6 && y < H; y++)
        for (int x = 0; x < W; x++, n++) {
            int g = rt[((size_t)y * W + x) * 4];
            extreme += g < 88 || g > 168;
        }
    printf("    far rows from %d: %d of %d pixels far from grey\n", far_row + 1, extreme, n);
    CHECK_MSG(extreme * 20 < n, "%d of %d distant pixels are not grey: level 0 read far away", extreme, n);
    CHECK_MSG(agreement_within(rt, hy, W * H, 0) >= 0.99, "hybrid's albedo differs from the ray tracer's");
    free(rt), free(hy);
    unload(&l);
}

/* Two quads facing the camera at z = 0 (back, material back) and z = 1, 2 (front,
 * materials a and b), all filling the middle of the view. */
static void write_layers(void)
{
    scratch_write_text(dir, "layers.mtl",
                       "newmtl back\nKd 0.2 0.4 1\nnewmtl a\nKd 1 0.2 0.2\nnewmtl b\nKd 0.1 1 0.1\n");
    scratch_write_text(dir, "layers.obj", "mtllib layers.mtl\n"
                            "v -2 -2 0\nv 2 -2 0\nv 2 2 0\nv -2 2 0\n"
                            "v -1.5 -1.5 1\nv 1.5 -1.5 1\nv 1.5 1.5 1\nv -1.5 1.5 1\n"
                            "v -1 -1 2\nv 1 -1 2\nv 1 1 2\nv -1 1 2\n"
                            "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 0 1\n"
                            "usemtl back\nf 1/1/1 2/2/1 3/3/1 4/4/1\n"
                            "usemtl b\nf 9/1/1 10/2/1 11/3/1 12/4/1\n"
                            "usemtl a\nf 5/1/1 6/2/1 7/3/1 8/4/1\n");
}

static int find_material(const sc_scene *s, const char *name)
{
    for (size_t i = 0; i < s->nmaterials; i++)
        if (!strcmp(s->materials[i].name, name)) return (int)i;
    return -1;
}

static const view layers_view = {{0, 0, 8}, {0, 0, 0}, 40};

static void pixel(const uint8_t *img, int x, int y, float c[3])
{
    for (int ch = 0; ch < 3; ch++) c[ch] = img[((size_t)y * W + x) * 4 + ch] / 255.0f;
}

static bool near3(const float a[3], const float b[3], float tol)
{
    return fabsf(a[0] - b[0]) <= tol && fabsf(a[1] - b[1]) <= tol && fabsf(a[2] - b[2]) <= tol;
}

static void test_blend_front_to_back(void)
{
    write_layers();
    loaded l;
    if (!load(&l, "layers.obj")) { CHECK(0); return; }
    int back = find_material(l.s, "back"), ma = find_material(l.s, "a"), mb = find_material(l.s, "b");
    CHECK(back >= 0 && ma >= 0 && mb >= 0);
    if (back < 0 || ma < 0 || mb < 0) { unload(&l); return; }
    sc_material *A = &l.s->materials[ma], *B = &l.s->materials[mb];
    A->alpha_mode = B->alpha_mode = SC_ALPHA_BLEND;
    B->alpha = 0.5f;
    /* A's alpha from its texture: 2 x 2 texels of white, alpha 0.25 */
    char err[SC_ERR_MAX];
    unsigned char *t = malloc(16);
    for (int i = 0; i < 16; i++) t[i] = i % 4 == 3 ? 64 : 255;
    int tex = sc_add_texture(l.s, "alpha", 2, 2, t, err);
    CHECK_MSG(tex >= 0, "%s", err);
    A->albedo_map.texture = tex;
    A->albedo_map.sampler.filter = SC_FILTER_NEAREST;
    float a = 64 / 255.0f, b = 0.5f;
    uint8_t *img = malloc((size_t)W * H * 4), *hy = malloc((size_t)W * H * 4);
    for (int k = 0; k < 2; k++) {
        CHECK(render2(&l, k ? "hybrid" : "raytrace", SH_AOV_ALBEDO, 1, &layers_view, k ? hy : img));
        const uint8_t *im = k ? hy : img;
        float got[3], want[3];
        /* the centre: b over a over back along the ray; the hybrid blends in draw order,
           as the raster graphs do, and b (nearer) comes first in the file: a over b over
           back */
        pixel(im, W / 2, H / 2, got);
        const float *bk = l.s->materials[back].albedo;
        for (int ch = 0; ch < 3; ch++)
            want[ch] = k ? a * A->albedo[ch] + (1 - a) * (b * B->albedo[ch] + (1 - b) * bk[ch])
                         : b * B->albedo[ch] + (1 - b) * (a * A->albedo[ch] + (1 - a) * bk[ch]);
        CHECK_MSG(near3(got, want, 1.5f / 255), "%s centre %g,%g,%g, want %g,%g,%g",
                  k ? "hybrid" : "raytrace", got[0], got[1], got[2], want[0], want[1], want[2]);
        /* beside b, inside a: a over back */
        pixel(im, W / 2 + (int)(H * 0.26f), H / 2, got);
        for (int ch = 0; ch < 3; ch++)
            want[ch] = a * A->albedo[ch] + (1 - a) * l.s->materials[back].albedo[ch];
        CHECK_MSG(near3(got, want, 1.5f / 255), "%s beside: %g,%g,%g, want %g,%g,%g",
                  k ? "hybrid" : "raytrace", got[0], got[1], got[2], want[0], want[1], want[2]);
    }
    /* the colour too: the green front quad weighs half, the blue back quad shows */
    CHECK(render2(&l, "raytrace", SH_AOV_COLOR, 1, &layers_view, img));
    float blended[3], opaque[3];
    pixel(img, W / 2, H / 2, blended);
    A->alpha_mode = B->alpha_mode = SC_ALPHA_OPAQUE;
    CHECK(render2(&l, "raytrace", SH_AOV_COLOR, 1, &layers_view, img));
    pixel(img, W / 2, H / 2, opaque);
    CHECK_MSG(blended[1] < opaque[1] - 0.05f && blended[2] > opaque[2] + 0.02f,
              "blended centre %g,%g,%g against opaque %g,%g,%g", blended[0], blended[1], blended[2],
              opaque[0], opaque[1], opaque[2]);
    /* fully transparent layers show what is behind them, exactly */
    A->alpha_mode = B->alpha_mode = SC_ALPHA_BLEND;
    A->albedo_map.texture = -1;
    A->alpha = B->alpha = 0.0f;
    CHECK(render2(&l, "raytrace", SH_AOV_ALBEDO, 1, &layers_view, img));
    float got[3];
    pixel(img, W / 2, H / 2, got);
    CHECK_MSG(near3(got, l.s->materials[back].albedo, 0.5f / 255), "through alpha 0: %g,%g,%g",
              got[0], got[1], got[2]);
    free(img), free(hy);
    unload(&l);
}

/* Depth order against draw order (docs/renderers.md): the albedo of the layers scene,
 * raster graph against ray tracer, at the centre (b at z = 2 over a at z = 1 over the
 * back). Listed back to front (back, a, b) the two agree; listed b before a, the raster
 * graphs blend a last, on top, while the ray tracer still composites b in front. */
static void test_depth_order_vs_draw_order(void)
{
    static const char *const orders[2] = {"usemtl a\nf 5/1/1 6/2/1 7/3/1 8/4/1\nusemtl b\nf 9/1/1 10/2/1 11/3/1 12/4/1\n",
                                          "usemtl b\nf 9/1/1 10/2/1 11/3/1 12/4/1\nusemtl a\nf 5/1/1 6/2/1 7/3/1 8/4/1\n"};
    uint8_t *ra = malloc((size_t)W * H * 4), *rt = malloc((size_t)W * H * 4);
    for (int k = 0; k < 2; k++) {
        char obj[1024];
        snprintf(obj, sizeof obj, "mtllib layers.mtl\n"
                 "v -2 -2 0\nv 2 -2 0\nv 2 2 0\nv -2 2 0\n"
                 "v -1.5 -1.5 1\nv 1.5 -1.5 1\nv 1.5 1.5 1\nv -1.5 1.5 1\n"
                 "v -1 -1 2\nv 1 -1 2\nv 1 1 2\nv -1 1 2\n"
                 "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 0 1\n"
                 "usemtl back\nf 1/1/1 2/2/1 3/3/1 4/4/1\n%s", orders[k]);
        write_layers();
        scratch_write_text(dir, "order.obj", obj);
        loaded l;
        if (!load(&l, "order.obj")) { CHECK(0); continue; }
        int back = find_material(l.s, "back"), ma = find_material(l.s, "a"), mb = find_material(l.s, "b");
        if (back < 0 || ma < 0 || mb < 0) { CHECK(0); unload(&l); continue; }
        sc_material *A = &l.s->materials[ma], *B = &l.s->materials[mb];
        A->alpha_mode = B->alpha_mode = SC_ALPHA_BLEND;
        A->alpha = 0.5f, B->alpha = 0.5f;
        CHECK(render2(&l, "raster", SH_AOV_ALBEDO, 0, &layers_view, ra));
        CHECK(render2(&l, "raytrace", SH_AOV_ALBEDO, 0, &layers_view, rt));
        float r[3], t[3], want_rt[3], want_ra[3];
        pixel(ra, W / 2, H / 2, r);
        pixel(rt, W / 2, H / 2, t);
        const float *bk = l.s->materials[back].albedo;
        for (int ch = 0; ch < 3; ch++) {
            want_rt[ch] = 0.5f * B->albedo[ch] + 0.5f * (0.5f * A->albedo[ch] + 0.5f * bk[ch]);
            want_ra[ch] = k ? 0.5f * A->albedo[ch] + 0.5f * (0.5f * B->albedo[ch] + 0.5f * bk[ch]) : want_rt[ch];
        }
        CHECK_MSG(near3(t, want_rt, 1.5f / 255), "order %d: ray tracer %g,%g,%g, want %g,%g,%g", k, t[0],
                  t[1], t[2], want_rt[0], want_rt[1], want_rt[2]);
        CHECK_MSG(near3(r, want_ra, 1.5f / 255), "order %d: raster %g,%g,%g, want %g,%g,%g", k, r[0],
                  r[1], r[2], want_ra[0], want_ra[1], want_ra[2]);
        unload(&l);
    }
    free(ra), free(rt);
}

/* A shadow through a blended quad lets (1 - a) of the light through: a floor lit from
 * straight above through a horizontal quad of alpha 0 (all), 0.5 (half) and 1 (none),
 * seen from the side below the quad. In linear light, half = (all + none) / 2. */
static void test_shadow_through_blend(void)
{
    scratch_write_text(dir, "shade.mtl", "newmtl floor\nKd 0.8 0.8 0.8\nKs 0\nnewmtl glass\nKd 1 1 1\n");
    scratch_write_text(dir, "shade.obj", "mtllib shade.mtl\nv -3 0 -3\nv 3 0 -3\nv 3 0 3\nv -3 0 3\n"
                            "v -1 1 -1\nv 1 1 -1\nv 1 1 1\nv -1 1 1\nvn 0 1 0\n"
                            "usemtl floor\nf 1//1 4//1 3//1 2//1\nusemtl glass\nf 5//1 8//1 7//1 6//1\n");
    loaded l;
    if (!load(&l, "shade.obj")) { CHECK(0); return; }
    int glass = find_material(l.s, "glass");
    CHECK(glass >= 0);
    if (glass < 0) { unload(&l); return; }
    l.s->materials[glass].alpha_mode = SC_ALPHA_BLEND;
    sc_light light = {{0, 5, 0}, {1, 1, 1}}, *own = l.s->lights;
    size_t nown = l.s->nlights;
    l.s->lights = &light, l.s->nlights = 1;
    uint8_t *img = malloc((size_t)W * H * 4);
    const float alphas[3] = {0.0f, 0.5f, 1.0f};
    float lin[3];
    for (int k = 0; k < 3; k++) {
        l.s->materials[glass].alpha = alphas[k];
        char err[CP_ERR_MAX];
        cp_registry *r = pl_registry_new(err);
        cp_graph *g = cp_graph_new(r);
        CHECK(!cp_graph_load_text(g, pl_builtin_graph("raytrace"), "raytrace", err));
        sc_camera cam = {{0, 1, 6}, {0, 0, 0}, {0, 1, 0}, 30};
        l.s->camera = cam;
        pl_frame f;
        CHECK(pl_frame_init(&f, &l.data, W, H, SH_AOV_COLOR, err));
        gr_launch_opts lo = {.workers = 2};
        gr_graph *run = pl_render_frame(g, &f, &lo, err);
        CHECK_MSG(run, "%s", err);
        if (run) memcpy(img, pl_frame_image(&f), (size_t)W * H * 4);
        gr_graph_destroy(run);
        pl_frame_free(&f);
        cp_graph_free(g);
        cp_registry_free(r);
        float c = img[((size_t)(H / 2) * W + W / 2) * 4] / 255.0f;   /* sRGB -> linear */
        lin[k] = c <= 0.04045f ? c / 12.92f : powf((c + 0.055f) / 1.055f, 2.4f);
    }
    l.s->lights = own, l.s->nlights = nown;
    printf("    floor under glass, linear: alpha 0 %.4f, 0.5 %.4f, 1 %.4f\n", lin[0], lin[1], lin[2]);
    CHECK_MSG(lin[0] > lin[1] + 0.05f && lin[1] > lin[2] + 0.05f, "no partial shadow: %g %g %g",
              lin[0], lin[1], lin[2]);
    CHECK_MSG(fabsf(lin[1] - 0.5f * (lin[0] + lin[2])) < 0.02f, "half the light: %g, want %g", lin[1],
              0.5f * (lin[0] + lin[2]));
    free(img);
    unload(&l);
}

/* `glass` fully transparent quads at z = 0, -1, ... before an opaque wall: the albedo at
 * the centre. */
static bool stack_centre(int glass_quads, float got[3])
{
    char obj[16384];
    size_t n = (size_t)snprintf(obj, sizeof obj, "mtllib stack.mtl\n");
    for (int k = 0; k <= glass_quads; k++)
        n += (size_t)snprintf(obj + n, sizeof obj - n, "v -1 -1 %d\nv 1 -1 %d\nv 1 1 %d\nv -1 1 %d\n",
                              -k, -k, -k, -k);
    n += (size_t)snprintf(obj + n, sizeof obj - n, "usemtl glass\n");
    for (int k = 0; k <= glass_quads; k++) {
        if (k == glass_quads) n += (size_t)snprintf(obj + n, sizeof obj - n, "usemtl wall\n");
        n += (size_t)snprintf(obj + n, sizeof obj - n, "f %d %d %d %d\n", 4 * k + 1, 4 * k + 2,
                              4 * k + 3, 4 * k + 4);
    }
    scratch_write_text(dir, "stack.obj", obj);
    scratch_write_text(dir, "stack.mtl", "newmtl glass\nKd 1 1 1\nnewmtl wall\nKd 1 0.5 0.25\n");
    loaded l;
    if (!load(&l, "stack.obj")) return false;
    int glass = find_material(l.s, "glass");
    if (glass >= 0) {
        l.s->materials[glass].alpha_mode = SC_ALPHA_BLEND;
        l.s->materials[glass].alpha = 0.0f;
    }
    uint8_t *img = malloc((size_t)W * H * 4);
    const view v = {{0, 0, 5}, {0, 0, 0}, 10};
    bool ok = glass >= 0 && img && render2(&l, "raytrace", SH_AOV_ALBEDO, 1, &v, img);
    if (ok) pixel(img, W / 2, H / 2, got);
    free(img);
    unload(&l);
    return ok;
}

/* PLRT_MAX_LAYERS: the ray goes on through 31 blended surfaces, and stops at the 32nd
 * (nothing beyond is added), so a pile of transparent layers ends. */
static void test_layers_bounded(void)
{
    float got[3], wall[3] = {1, 0.5f, 0.25f}, black[3] = {0, 0, 0};
    CHECK(stack_centre(PLRT_MAX_LAYERS - 1, got));
    CHECK_MSG(near3(got, wall, 1.0f / 255), "through %d layers: %g,%g,%g", PLRT_MAX_LAYERS - 1,
              got[0], got[1], got[2]);
    CHECK(stack_centre(40, got));
    CHECK_MSG(near3(got, black, 0), "the wall behind 40 layers was reached: %g,%g,%g", got[0], got[1],
              got[2]);
}

/* Textures and blending on, both graphs: the same bytes at 1, 2, 3 and 8 workers under
 * every scheduler (Static with a profile from a GRAMPS frame, as gramps-render runs it). */
static void test_deterministic(void)
{
    static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first", "static"};
    static const unsigned workers[] = {1, 2, 3, 8};
    write_box_scene();
    write_layers();
    const char *const scenes[] = {"box.obj", "layers.obj"};
    uint8_t *ref = malloc((size_t)W * H * 4), *img = malloc((size_t)W * H * 4);
    for (int sc = 0; sc < 2; sc++) {
        loaded l;
        if (!load(&l, scenes[sc])) { CHECK(0); continue; }
        for (size_t m = 0; m < l.s->nmaterials; m++)
            if (strcmp(l.s->materials[m].name, "back") && strcmp(l.s->materials[m].name, "floor")) {
                l.s->materials[m].alpha_mode = SC_ALPHA_BLEND;
                l.s->materials[m].alpha = 0.6f;
                l.s->materials[m].reflectivity = 0.3f;
                l.s->materials[m].albedo_map.texture = 0 < (int)l.s->ntextures ? 0 : -1;
            }
        const view *v = sc ? &layers_view : &box_view;
        for (int g = 0; g < 2; g++) {
            const char *graph = g ? "hybrid" : "raytrace";
            gr_profile *prof = NULL;
            gr_launch_opts base = {.workers = 1, .scheduler = "gramps"};
            CHECK(render(&l, graph, SH_AOV_COLOR, 2, v, &base, ref, &prof));
            for (int k = 0; k < 4; k++)
                for (int w = 0; w < 4; w++) {
                    memset(img, 0xcd, (size_t)W * H * 4);
                    gr_launch_opts lo = {.workers = workers[w], .scheduler = scheds[k], .profile = prof};
                    CHECK(render(&l, graph, SH_AOV_COLOR, 2, v, &lo, img, NULL));
                    CHECK_MSG(!memcmp(ref, img, (size_t)W * H * 4), "%s %s: %s at %u workers differs",
                              scenes[sc], graph, scheds[k], workers[w]);
                }
            gr_profile_free(prof);
        }
        unload(&l);
    }
    free(ref), free(img);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_rt_textures.XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    RUN(test_raster_vs_ray_tracer);
    RUN(test_receding_floor);
    RUN(test_metallic_roughness);
    RUN(test_cone_level_of_detail);
    RUN(test_blend_front_to_back);
    RUN(test_layers_bounded);
    RUN(test_depth_order_vs_draw_order);
    RUN(test_shadow_through_blend);
    RUN(test_deterministic);
    scratch_dir_remove(dir);
    return check_finish();
}

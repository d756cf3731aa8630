/* Transparency (issue 30 item 3), on OBJ + MTL scenes the test writes into a temporary
 * directory, their materials' alpha mode, alpha and double-sidedness set through the C
 * API (OBJ has no alpha mode):
 *
 * - blending in draw order: two overlapping quads with alpha 0.5 over an opaque one give,
 *   in every raster graph, src * a + dst * (1 - a) of the quads' own colours (rendered
 *   alone) in FILE order, whatever their depth order: swapping the file order changes
 *   the pixel; a blended quad behind the opaque one changes nothing there;
 * - the alpha test: a quad whose albedo texture has alpha 0 on its left half shows the
 *   quad behind it there and its own colour on the right, in the raster graphs, the
 *   hybrid and the ray tracer (shadow rays too);
 * - single-sided materials: a quad seen from behind is culled (raster, hybrid) and
 *   ignored (ray tracer); seen from the front, or double-sided, it is drawn;
 * - determinism: every raster graph, 1, 2, 3 and 8 workers and every scheduler give the
 *   same bytes on a scene with all of it (textured blended and masked quads). */
#include "pipelines/stages.h"
#include "scenes/loaders.h"
#include "tests/check.h"
#include "tests/scene_data.h"
#include "tests/scratch_dir.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W 64
#define H 64

static char dir[64];

/* An axis-aligned quad at depth z over [x0,x1] x [y0,y1], uv over [0,1]^2, facing +z (or
 * -z when `back`), material m, appended to obj (vertex numbers from *v). */
static void quad(char *obj, size_t cap, int *v, const char *m, double x0, double y0, double x1,
                 double y1, double z, bool back)
{
    size_t n = strlen(obj);
    int a = *v, b = *v + 1, c = *v + 2, d = *v + 3;
    if (back) { int t = b; b = d; d = t; }
    snprintf(obj + n, cap - n,
             "v %g %g %g\nv %g %g %g\nv %g %g %g\nv %g %g %g\n"
             "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nusemtl %s\n"
             "f %d/%d %d/%d %d/%d\nf %d/%d %d/%d %d/%d\n",
             x0, y0, z, x1, y0, z, x1, y1, z, x0, y1, z, m, a, a, b, b, c, c, a, a, c, c, d, d);
    *v += 4;
}

static const char mtl[] =
    "newmtl opaque\nKd 0.8 0.25 0.2\n"
    "newmtl behind\nKd 0.9 0.9 0.1\nd 0.5\n"
    "newmtl a\nKd 0.2 0.8 0.25\nd 0.5\n"
    "newmtl b\nKd 0.2 0.3 0.9\nd 0.5\n"
    "newmtl cut\nKd 0.9 0.9 0.9\n"
    "newmtl tinted\nKd 0.9 0.5 0.9\n"
    "newmtl oneside\nKd 0.3 0.9 0.9\n"
    "newmtl fine\nKd 0.9 0.6 0.2\n"
    "newmtl fineblend\nKd 0.2 0.6 0.9\n";

/* Scene files: blend_ab.obj (a before b in the file), blend_ba.obj, mask.obj (the
 * cut-out quad over the opaque one), oneside.obj / front.obj (a single-sided quad seen
 * from behind / the front), all.obj (everything, for the determinism check). */
static void write_scenes(void)
{
    scratch_write_text(dir, "t.mtl", mtl);
    static char obj[8192];
    int v;
#define BEGIN() (obj[0] = 0, v = 1, strcat(obj, "mtllib t.mtl\n"))
    BEGIN();
    quad(obj, sizeof obj, &v, "behind", -1.5, -1.5, 1.5, 1.5, -0.3, false);
    quad(obj, sizeof obj, &v, "opaque", -1, -1, 1, 1, 0, false);
    quad(obj, sizeof obj, &v, "a", -0.8, -0.8, 0.4, 0.4, 0.3, false);
    quad(obj, sizeof obj, &v, "b", -0.4, -0.4, 0.8, 0.8, 0.6, false);
    scratch_write_text(dir, "blend_ab.obj", obj);
    BEGIN();
    quad(obj, sizeof obj, &v, "behind", -1.5, -1.5, 1.5, 1.5, -0.3, false);
    quad(obj, sizeof obj, &v, "opaque", -1, -1, 1, 1, 0, false);
    quad(obj, sizeof obj, &v, "b", -0.4, -0.4, 0.8, 0.8, 0.6, false);
    quad(obj, sizeof obj, &v, "a", -0.8, -0.8, 0.4, 0.4, 0.3, false);
    scratch_write_text(dir, "blend_ba.obj", obj);
    BEGIN();
    quad(obj, sizeof obj, &v, "opaque", -1, -1, 1, 1, 0, false);
    quad(obj, sizeof obj, &v, "cut", -1, -1, 1, 1, 0.3, false);
    scratch_write_text(dir, "mask.obj", obj);
    /* the cut-out quad first, then a floor of small triangles (32 x 32 quads), which the
     * ordered graphs' coarse depth test would skip behind a quad taken as solid */
    BEGIN();
    quad(obj, sizeof obj, &v, "cut", -1, -1, 1, 1, 0.3, false);
    scratch_write_text(dir, "mask_grid.obj", obj);
    {
        FILE *f = NULL;
        char path[160];
        snprintf(path, sizeof path, "%s/mask_grid.obj", dir);
        if ((f = fopen(path, "a"))) {
            fputs("usemtl opaque\n", f);
            for (int y = 0; y <= 32; y++)
                for (int x = 0; x <= 32; x++) fprintf(f, "v %g %g 0\n", -1 + x / 16.0, -1 + y / 16.0);
            for (int y = 0; y < 32; y++)
                for (int x = 0; x < 32; x++) {
                    int a = v + y * 33 + x, b = a + 1, c = a + 34, d = a + 33;
                    fprintf(f, "f %d %d %d\nf %d %d %d\n", a, b, c, a, c, d);
                }
            fclose(f);
        }
    }
    BEGIN();
    quad(obj, sizeof obj, &v, "opaque", -1, -1, 1, 1, 0, false);
    scratch_write_text(dir, "floor.obj", obj);
    BEGIN();
    quad(obj, sizeof obj, &v, "opaque", -1, -1, 1, 1, 0, false);
    quad(obj, sizeof obj, &v, "oneside", -0.5, -0.5, 0.5, 0.5, 0.3, true);
    scratch_write_text(dir, "oneside.obj", obj);
    BEGIN();
    quad(obj, sizeof obj, &v, "opaque", -1, -1, 1, 1, 0, false);
    quad(obj, sizeof obj, &v, "oneside", -0.5, -0.5, 0.5, 0.5, 0.3, false);
    scratch_write_text(dir, "front.obj", obj);
    BEGIN();
    quad(obj, sizeof obj, &v, "behind", -1.5, -1.5, 1.5, 1.5, -0.3, false);
    quad(obj, sizeof obj, &v, "opaque", -1, -1, 1, 1, 0, false);
    quad(obj, sizeof obj, &v, "tinted", -0.9, 0.1, 0.9, 0.9, 0.45, false);
    quad(obj, sizeof obj, &v, "a", -0.8, -0.8, 0.4, 0.4, 0.3, false);
    quad(obj, sizeof obj, &v, "cut", -0.7, -0.9, 0.7, 0.2, 0.2, false);
    quad(obj, sizeof obj, &v, "b", -0.4, -0.4, 0.8, 0.8, 0.6, false);
    quad(obj, sizeof obj, &v, "oneside", -0.3, -0.3, 0.3, 0.3, 0.7, true);
    /* small quads with a 64x64 texture: minified, so alpha comes from a level above 0 */
    quad(obj, sizeof obj, &v, "fine", 0.5, -0.9, 0.9, -0.5, 0.5, false);
    quad(obj, sizeof obj, &v, "fineblend", -0.9, 0.5, -0.5, 0.9, 0.5, false);
    scratch_write_text(dir, "all.obj", obj);
#undef BEGIN
}

/* A texture of w x h texels (alpha[i] per texel, colour white) as material m's albedo
 * map, clamped. */
static bool give_texture(sc_scene *s, sc_material *m, int w, int h, const uint8_t *alpha)
{
    unsigned char *rgba = malloc((size_t)w * h * 4);
    if (!rgba) return false;
    for (int i = 0; i < w * h; i++) {
        memset(rgba + 4 * i, 255, 3);
        rgba[4 * i + 3] = alpha[i];
    }
    char err[SC_ERR_MAX];
    int t = sc_add_texture(s, "alpha", w, h, rgba, err);
    if (t < 0) { fprintf(stderr, "  %s\n", err); return false; }
    m->albedo_map = sc_texture_ref_none();
    m->albedo_map.texture = t;
    m->albedo_map.sampler.wrap_u = m->albedo_map.sampler.wrap_v = SC_WRAP_CLAMP;
    return true;
}

/* What each test changes of the materials after loading. */
typedef struct setup {
    sc_alpha_mode a, b, behind;
    float alpha_a, alpha_b;
    sc_alpha_mode cut;                    /* the cut-out quad: MASK, or OPAQUE */
    bool oneside_double;
    bool side_light;                      /* the light far to the side, not above */
} setup;

static const setup blended = {SC_ALPHA_BLEND, SC_ALPHA_BLEND, SC_ALPHA_BLEND, 0.5f, 0.5f,
                              SC_ALPHA_MASK, false, false};

static bool load_scene(const char *file, const setup *u, loaded *l)
{
    char path[160], err[SC_ERR_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (sc_load(path, &l->s, err) != 0) { fprintf(stderr, "  %s\n", err); return false; }
    sc_scene *s = l->s;
    s->camera = (sc_camera){{0, 0, 3}, {0, 0, 0}, {0, 1, 0}, 60};
    /* one light, the same in every scene (a file without lights gets one fitted to it) */
    free(s->lights);
    if (!(s->lights = malloc(sizeof *s->lights))) return false;
    s->lights[0] = u->side_light ? (sc_light){{6, 0, 1}, {1, 1, 1}} : (sc_light){{0.5f, 1, 4}, {1, 1, 1}};
    s->nlights = 1;
    sc_material *m;
    if ((m = material(s, "a"))) m->alpha_mode = u->a, m->alpha = u->alpha_a;
    if ((m = material(s, "b"))) m->alpha_mode = u->b, m->alpha = u->alpha_b;
    if ((m = material(s, "behind"))) m->alpha_mode = u->behind, m->alpha = 0.5f;
    if ((m = material(s, "opaque"))) m->alpha_mode = SC_ALPHA_OPAQUE, m->alpha = 1;
    if ((m = material(s, "oneside"))) m->double_sided = u->oneside_double;
    /* left half alpha 0, right half 1: bilinear at level 0 crosses 0.5 at u = 0.5 */
    if ((m = material(s, "cut"))) {
        m->alpha_mode = u->cut;
        m->alpha = 1;
        m->alpha_cutoff = 0.5f;
        if (!give_texture(s, m, 2, 1, (const uint8_t[]){0, 255})) return false;
    }
    /* a blended quad whose texture's alpha varies (texture alpha x material alpha) */
    if ((m = material(s, "tinted"))) {
        m->alpha_mode = SC_ALPHA_BLEND;
        m->alpha = 0.8f;
        if (!give_texture(s, m, 4, 2, (const uint8_t[]){0, 60, 120, 250, 255, 200, 90, 30}))
            return false;
    }
    /* a 64x64 alpha checker of 3x5 texels, minified on the small quads */
    static uint8_t checker[64 * 64];
    for (int i = 0; i < 64 * 64; i++) checker[i] = (uint8_t)((i % 64 / 3 + i / 64 / 5) % 2 ? 255 : 0);
    if ((m = material(s, "fine"))) {
        m->alpha_mode = SC_ALPHA_MASK;
        m->alpha = 1;
        m->alpha_cutoff = 0.4f;
        if (!give_texture(s, m, 64, 64, checker)) return false;
    }
    if ((m = material(s, "fineblend"))) {
        m->alpha_mode = SC_ALPHA_BLEND;
        m->alpha = 0.9f;
        if (!give_texture(s, m, 64, 64, checker)) return false;
    }
    return loaded_ready(l);
}

/* One frame of built-in graph `name` (bounces 0 where the graph has them) into rgba; the
 * finished run (the caller destroys it), or NULL. */
static gr_graph *render_sized(loaded *l, const char *name, const gr_launch_opts *o, sh_aov aov,
                              int width, int height, uint8_t *rgba);

static gr_graph *render(loaded *l, const char *name, const gr_launch_opts *o, sh_aov aov,
                        uint8_t *rgba)
{
    return render_sized(l, name, o, aov, W, H, rgba);
}

static gr_graph *render_sized(loaded *l, const char *name, const gr_launch_opts *o, sh_aov aov,
                              int width, int height, uint8_t *rgba)
{
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = cp_graph_new(r);
    CHECK_MSG(!cp_graph_load_text(g, pl_builtin_graph(name), name, err), "%s", err);
    if (strncmp(name, "raster", 6)) CHECK(!cp_put(g, "graph", "bounces", "0", "test", err));
    pl_frame f;
    gr_graph *run = NULL;
    if (pl_frame_init(&f, &l->data, width, height, aov, err)) {
        run = pl_render_frame(g, &f, o, err);
        CHECK_MSG(run, "%s: %s", name, err);
        if (run) memcpy(rgba, pl_frame_image(&f), (size_t)width * height * 4);
        pl_frame_free(&f);
    } else {
        CHECK_MSG(0, "%s", err);
    }
    cp_graph_free(g);
    cp_registry_free(r);
    return run;
}

/* Scene `file` with setup u through graph `name` at 2 workers. */
static bool image(const char *file, const setup *u, const char *name, uint8_t *rgba)
{
    loaded l;
    if (!load_scene(file, u, &l)) return false;
    gr_launch_opts o = {.workers = 2};
    gr_graph *run = render(&l, name, &o, SH_AOV_COLOR, rgba);
    gr_graph_destroy(run);
    unload(&l);
    return run != NULL;
}

static uint32_t px(const uint8_t *img, int x, int y)
{
    uint32_t v;
    memcpy(&v, img + 4 * ((size_t)y * W + x), 4);
    return v;
}

/* src over dst with coverage a, per 8-bit channel, rounded: the rule, written out. */
static uint32_t over(uint32_t dst, uint32_t src, unsigned a)
{
    uint32_t out = dst & 0xff000000u;
    for (int k = 0; k < 3; k++) {
        unsigned s = (src >> 8 * k) & 255, d = (dst >> 8 * k) & 255;
        double v = (s * (double)a + d * (255.0 - a)) / 255.0;
        out |= (uint32_t)(v + 0.5) << 8 * k;
    }
    return out;
}

static const char *const raster_graphs[] = {"raster", "raster-ordered", "raster-parallel"};

/* Pixels: (32, 32) under the opaque quad, a and b; (16, 32) under a only; (47, 32) under
 * b only; (8, 8) outside the opaque quad, under `behind` only. */
static void test_blend_draw_order(void)
{
    static uint8_t only_o[W * H * 4], only_a[W * H * 4], only_b[W * H * 4], ab[W * H * 4],
        ba[W * H * 4], no_behind[W * H * 4], first[W * H * 4];
    for (int k = 0; k < 3; k++) {
        const char *name = raster_graphs[k];
        /* the quads' own colours: the others blended with alpha 0 (no change) */
        setup u = blended;
        u.alpha_a = u.alpha_b = 0;
        CHECK(image("blend_ab.obj", &u, name, only_o));
        u.a = SC_ALPHA_OPAQUE, u.alpha_a = 1;
        CHECK(image("blend_ab.obj", &u, name, only_a));
        u = blended;
        u.alpha_a = 0, u.b = SC_ALPHA_OPAQUE, u.alpha_b = 1;
        CHECK(image("blend_ab.obj", &u, name, only_b));
        u = blended;
        u.alpha_a = u.alpha_b = 0, u.behind = SC_ALPHA_OPAQUE;
        CHECK(image("blend_ab.obj", &u, name, no_behind));
        CHECK(image("blend_ab.obj", &blended, name, ab));
        CHECK(image("blend_ba.obj", &blended, name, ba));
        const uint32_t o = px(only_o, 32, 32), a = px(only_a, 32, 32), b = px(only_b, 32, 32);
        CHECK_MSG(o != a && o != b && a != b, "%s: %08x %08x %08x", name, o, a, b);
        const uint32_t want_ab = over(over(o, a, 128), b, 128), want_ba = over(over(o, b, 128), a, 128);
        CHECK_MSG(px(ab, 32, 32) == want_ab, "%s: a then b: %08x, want %08x", name,
                  px(ab, 32, 32), want_ab);
        CHECK_MSG(px(ba, 32, 32) == want_ba, "%s: b then a: %08x, want %08x", name,
                  px(ba, 32, 32), want_ba);
        CHECK(want_ab != want_ba);
        CHECK_MSG(px(ab, 16, 32) == over(px(only_o, 16, 32), px(only_a, 16, 32), 128), "%s", name);
        CHECK_MSG(px(ab, 47, 32) == over(px(only_o, 47, 32), px(only_b, 47, 32), 128), "%s", name);
        /* `behind` lies under the opaque quad: no change there, and a blend outside it,
         * over the background, where the opaque `behind` would cover it all */
        CHECK_MSG(px(only_o, 8, 8) != px(no_behind, 8, 8), "%s", name);
        CHECK_MSG(px(only_o, 32, 32) == px(no_behind, 32, 32), "%s", name);
        if (k == 0) memcpy(first, ab, sizeof first);
        else CHECK_MSG(!memcmp(first, ab, sizeof first), "%s differs from raster", name);
    }
}

/* The cut-out quad's left half (pixel 17, 32) lets the floor through; its right half
 * (46, 32) is drawn. `graphs`: the pipelines to check. */
static void check_mask(const char *const *graphs, int n)
{
    static uint8_t floor_only[W * H * 4], cut[W * H * 4], solid[W * H * 4];
    setup u = blended;
    for (int k = 0; k < n; k++) {
        const char *name = graphs[k];
        CHECK(image("floor.obj", &u, name, floor_only));
        u.cut = SC_ALPHA_MASK;
        CHECK(image("mask.obj", &u, name, cut));
        u.cut = SC_ALPHA_OPAQUE;
        CHECK(image("mask.obj", &u, name, solid));
        CHECK_MSG(px(solid, 17, 32) != px(floor_only, 17, 32), "%s", name);
        CHECK_MSG(px(cut, 17, 32) == px(floor_only, 17, 32), "%s: %08x, the floor's %08x", name,
                  px(cut, 17, 32), px(floor_only, 17, 32));
        CHECK_MSG(px(cut, 46, 32) == px(solid, 46, 32), "%s: %08x, the quad's %08x", name,
                  px(cut, 46, 32), px(solid, 46, 32));
    }
}

static void test_mask_raster(void) { check_mask(raster_graphs, 3); }

/* Coarse depth (ordered graphs): small floor triangles drawn after the cut-out quad
 * still show through its holes, in every raster graph alike. */
static void test_mask_coarse_z(void)
{
    static uint8_t ref[W * H * 4], img[W * H * 4];
    setup u = blended;
    CHECK(image("mask_grid.obj", &u, "raster", ref));
    uint32_t left = px(ref, 17, 32), right = px(ref, 46, 32);
    CHECK(left != right);
    for (int k = 1; k < 3; k++) {
        CHECK(image("mask_grid.obj", &u, raster_graphs[k], img));
        CHECK_MSG(!memcmp(ref, img, sizeof img), "%s differs from raster", raster_graphs[k]);
    }
    u.cut = SC_ALPHA_OPAQUE;
    CHECK(image("mask_grid.obj", &u, "raster-ordered", img));
    CHECK(px(img, 17, 32) != left);       /* solid: the quad on the left too */
}

/* A single-sided quad seen from behind is not drawn; double-sided, or seen from the
 * front, it is (the quad covers the centre pixel). The light is to the side: from the
 * floor the quad's front faces the light above, so the ray tracer's shadow rays would
 * meet it (a back face for the camera is a front face for them). */
static void check_single_sided(const char *const *graphs, int n)
{
    static uint8_t floor_only[W * H * 4], back[W * H * 4], back_double[W * H * 4], front[W * H * 4];
    for (int k = 0; k < n; k++) {
        const char *name = graphs[k];
        setup u = blended;
        u.side_light = true;
        CHECK(image("floor.obj", &u, name, floor_only));
        CHECK(image("oneside.obj", &u, name, back));
        CHECK(image("front.obj", &u, name, front));
        u.oneside_double = true;
        CHECK(image("oneside.obj", &u, name, back_double));
        CHECK_MSG(px(back, 32, 32) == px(floor_only, 32, 32), "%s: back face drawn", name);
        CHECK_MSG(px(front, 32, 32) != px(floor_only, 32, 32), "%s: front face culled", name);
        CHECK_MSG(px(back_double, 32, 32) != px(floor_only, 32, 32), "%s: double-sided culled", name);
    }
}

static void test_single_sided_raster(void) { check_single_sided(raster_graphs, 3); }

/* The ray tracer (any-hit filter in traversal, shadow rays too) and the hybrid (its
 * depth pass, then rays). */
static const char *const ray_graphs[] = {"raytrace", "hybrid"};
static void test_mask_rays(void) { check_mask(ray_graphs, 2); }
static void test_single_sided_rays(void) { check_single_sided(ray_graphs, 2); }

/* Everything at once (textured blended and cut-out quads, a back face): every raster
 * graph, worker count and scheduler gives the raster graph's bytes at 1 worker. */
static void test_deterministic(void)
{
    static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first", "static"};
    static const unsigned workers[] = {1, 2, 3, 8};
    static uint8_t ref[W * H * 4], img[W * H * 4];
    loaded l;
    if (!load_scene("all.obj", &blended, &l)) { CHECK(0); return; }
    for (int aov = 0; aov < 2; aov++) {
        sh_aov which = aov ? SH_AOV_ALBEDO : SH_AOV_COLOR;
        gr_launch_opts o = {.workers = 1, .scheduler = "gramps"};
        gr_graph_destroy(render(&l, "raster", &o, which, ref));
        for (int g = 0; g < 3; g++) {
            gr_launch_opts base = {.workers = 1, .scheduler = "gramps"};
            gr_graph *run = render(&l, raster_graphs[g], &base, which, img);
            gr_profile *prof = run ? gr_profile_take(run) : NULL;
            gr_graph_destroy(run);
            for (int s = 0; s < 4; s++)
                for (int w = 0; w < 4; w++) {
                    memset(img, 0xcd, sizeof img);
                    gr_launch_opts lo = {.workers = workers[w], .scheduler = scheds[s], .profile = prof};
                    gr_graph_destroy(render(&l, raster_graphs[g], &lo, which, img));
                    CHECK_MSG(!memcmp(ref, img, sizeof img), "%s, %s, %u workers, aov %d differs",
                              raster_graphs[g], scheds[s], workers[w], (int)which);
                }
            gr_profile_free(prof);
        }
    }
    unload(&l);
}

/* A 4x1 TGA (stb_image reads it) with alpha 0 0 255 255, uncompressed: with the default
 * repeat and bilinear filtering, alpha is exactly 0 for u in [1/8, 3/8] and 1 for u in
 * [5/8, 7/8]. */
static void write_cutout_tga(const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    static const unsigned char tga[] = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 32, 8,
                                        255, 255, 255, 0, 255, 255, 255, 0,
                                        255, 255, 255, 255, 255, 255, 255, 255};   /* BGRA */
    FILE *f = fopen(path, "wb");
    if (f) fwrite(tga, 1, sizeof tga, f), fclose(f);
}

/* From the files alone: an OBJ quad whose MTL map_Kd carries alpha is a blended material
 * (the OBJ loader's rule: d < 1 or texture alpha), so where the texture's alpha is 0 the
 * floor shows unchanged and where it is 255 the quad's own colour: through every raster
 * graph, the same bytes. */
static void test_obj_map_kd_alpha(void)
{
    write_cutout_tga("cut.tga");
    /* not named "cut": load_scene leaves this material as the loader made it */
    scratch_write_text(dir, "cut.mtl", "newmtl opaque\nKd 0.8 0.25 0.2\nnewmtl cutfile\nKd 0.9 0.9 0.9\n"
                                       "map_Kd cut.tga\n");
    static char obj[2048];
    int v = 1;
    strcpy(obj, "mtllib cut.mtl\n");
    quad(obj, sizeof obj, &v, "opaque", -1, -1, 1, 1, 0, false);
    quad(obj, sizeof obj, &v, "cutfile", -1, -1, 1, 1, 0.3, false);
    scratch_write_text(dir, "cut.obj", obj);
    static uint8_t floor_only[W * H * 4], img[W * H * 4], first[W * H * 4];
    loaded l;
    char path[160], err[SC_ERR_MAX];
    snprintf(path, sizeof path, "%s/cut.obj", dir);
    if (sc_load(path, &l.s, err) != 0) { CHECK_MSG(0, "%s", err); return; }
    const sc_material *m = material(l.s, "cutfile");
    CHECK(m && m->alpha_mode == SC_ALPHA_BLEND && m->albedo_map.texture >= 0);
    sc_free(l.s);
    for (int k = 0; k < 3; k++) {
        setup u = blended;
        CHECK(image("floor.obj", &u, raster_graphs[k], floor_only));
        CHECK(image("cut.obj", &u, raster_graphs[k], img));
        CHECK_MSG(px(img, 17, 32) == px(floor_only, 17, 32), "%s: %08x, the floor's %08x",
                  raster_graphs[k], px(img, 17, 32), px(floor_only, 17, 32));
        CHECK_MSG(px(img, 46, 32) != px(floor_only, 46, 32), "%s", raster_graphs[k]);
        if (k == 0) memcpy(first, img, sizeof first);
        else CHECK_MSG(!memcmp(first, img, sizeof img), "%s differs", raster_graphs[k]);
    }
}

/* 512 x 512: tiles that hold only blended triangles (the sort-middle graph's tiles
 * blend without an opaque or alpha-tested triangle there), the same image in every
 * raster graph. */
static void test_tiles_only_blended(void)
{
    enum { S = 512 };
    static uint8_t ref[S * S * 4], img[S * S * 4];
    loaded l;
    setup u = blended;
    u.behind = SC_ALPHA_BLEND;
    if (!load_scene("blend_ab.obj", &u, &l)) { CHECK(0); return; }
    gr_launch_opts o = {.workers = 2};
    gr_graph_destroy(render_sized(&l, "raster-ordered", &o, SH_AOV_COLOR, S, S, ref));
    gr_graph_destroy(render_sized(&l, "raster", &o, SH_AOV_COLOR, S, S, img));
    CHECK(!memcmp(ref, img, sizeof img));
    /* tile (0, 1) holds only the blended `behind` quad: the background blended there */
    uint8_t bg[4] = {0};
    memcpy(bg, ref, 4);
    CHECK(memcmp(ref + 4 * (100 * S + 60), bg, 4) != 0);
    unload(&l);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_transparency.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    write_scenes();
    RUN(test_blend_draw_order);
    RUN(test_mask_raster);
    RUN(test_mask_coarse_z);
    RUN(test_single_sided_raster);
    RUN(test_deterministic);
    RUN(test_tiles_only_blended);
    RUN(test_obj_map_kd_alpha);
    RUN(test_mask_rays);
    RUN(test_single_sided_rays);
    scratch_dir_remove(dir);
    return check_finish();
}

/* Hostile values in scene data are refused where they enter, with a message naming the
 * file (and line for OBJ and .scene files): NaN/inf normals and texture coordinates,
 * transforms that overflow, coordinates beyond +-1e11, degenerate cameras, light colours
 * outside [0, 1e6], lines longer than libinih's buffer. Valid oddities load: denormal
 * coordinates, absolute texture paths, a scene without lights (rendered by both shading
 * environments without reading a NULL light array), 80k material names. */
#include "scenes/build.h"
#include "shaders/raster_shading.h"
#include "shaders/ray_shading.h"
#include "tests/check.h"
#include "tests/scene_load_error.h"
#include "tests/scratch_dir.h"

#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];

#define TRI "v 0 0 0\nv 1 0 0\nv 0 1 0\n"

static void test_obj_nonfinite(void)
{
    expect_load_error(scratch_file(tmpdir, "n.obj", TRI "vn nan 0 1\nf 1//1 2//1 3//1\n"), "n.obj:4: malformed normal");
    expect_load_error(scratch_file(tmpdir, "i.obj", TRI "vn 0 inf 1\nf 1//1 2//1 3//1\n"), "i.obj:4:");
    expect_load_error(scratch_file(tmpdir, "t.obj", TRI "vt nan 0\nf 1/1 2/1 3/1\n"), "t.obj:4: malformed texture");
    expect_load_error(scratch_file(tmpdir, "v.obj", "v 0 0 0\nv 1e39 0 0\nv 0 1 0\nf 1 2 3\n"), "v.obj:2:");
    expect_load_error(scratch_file(tmpdir, "b.obj", "v 0 0 0\nv 1e38 0 0\nv 0 1 0\nf 1 2 3\n"), "beyond +-1e11");
}

static void test_denormal_loads(void)
{
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load(scratch_file(tmpdir, "d.obj", "v 0 0 0\nv 1 1e-40 0\nv 0 1 0\nf 1 2 3\n"), &s, err) == 0,
              "%s", err);
    if (s) CHECK(s->meshes[0].positions[4] > 0 && s->meshes[0].positions[4] < 1e-38f);
    sc_free(s);
}

static void test_scene_transforms(void)
{
    scratch_file(tmpdir, "tri.obj", TRI "f 1 2 3\n");
    expect_load_error(scratch_file(tmpdir, "a.scene", "[mesh.a]\nfile = tri.obj\nscale = 1e20\n"),
                 "a.scene:2: [mesh.a]: the transform takes vertex 2 beyond");
    expect_load_error(scratch_file(tmpdir, "b.scene", "[mesh.a]\nfile = tri.obj\nscale = 1e30\nscale = 1e30\n"),
                 "b.scene:4: [mesh.a]: bad value for 'scale'");
    expect_load_error(scratch_file(tmpdir, "c.scene", "[mesh.a]\nfile = tri.obj\ntranslate = 3e38,0,0\n"
                              "translate = 3e38,0,0\n"), "c.scene:4:");
    /* A tiny scale keeps finite normals (the normal matrix is scaled, not flushed). */
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    sc_geometry g;
    CHECK_MSG(sc_load(scratch_file(tmpdir, "d.scene", "[mesh.a]\nfile = tri.obj\nscale = 1e-20\n"), &s, err) == 0,
              "%s", err);
    if (s && sc_flatten(s, &g, err) == 0) {
        CHECK(g.normals[2] == 1.0f || g.normals[2] == -1.0f);
        sc_geometry_free(&g);
    }
    sc_free(s);
}

static void test_scene_camera_and_lights(void)
{
    expect_load_error(scratch_file(tmpdir, "e.scene", "[camera]\neye = 1,1,1\ntarget = 1,1,1\n[mesh.a]\nbuiltin = teapot\n"),
                 "e.scene:3: [camera]: eye and target are the same point");
    expect_load_error(scratch_file(tmpdir, "u.scene", "[camera]\neye = 0,5,0\ntarget = 0,0,0\nup = 0,1,0\n"
                              "[mesh.a]\nbuiltin = teapot\n"), "u.scene:4: [camera]: up is parallel");
    expect_load_error(scratch_file(tmpdir, "l.scene", "[mesh.a]\nbuiltin = teapot\n[light.k]\ncolor = 1e38,1,1\n"),
                 "l.scene:4: [light.k]: color");
    expect_load_error(scratch_file(tmpdir, "p.scene", "[mesh.a]\nbuiltin = teapot\n[light.k]\nposition = 1e30,0,0\n"),
                 "p.scene:4: [light.k]: position");
    expect_load_error(scratch_file(tmpdir, "m.scene", "[material.m]\nalbedo = -1,0,0\n[mesh.a]\nbuiltin = teapot\n"),
                 "m.scene:2: [material.m]: albedo: albedo and specular must be in [0, 1e3]");
}

static void test_long_line(void)
{
    char text[600];
    snprintf(text, sizeof text, "[mesh.a]\nbuiltin = teapot\n# %0300d\nscale = 2\n", 0);
    expect_load_error(scratch_file(tmpdir, "long.scene", text), "long.scene:3: line longer than");
    snprintf(text, sizeof text, "[mesh.a]\nbuiltin = teapot\n# %0190d\n", 0);  /* fits */
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load(scratch_file(tmpdir, "ok.scene", text), &s, err) == 0, "%s", err);
    sc_free(s);
}

static void test_absolute_texture_path(void)
{
    /* A 1x1 PPM as the texture, named by its absolute path. */
    char tex[300], text[700];
    snprintf(tex, sizeof tex, "%s/sub", tmpdir);
    mkdir(tex, 0700);
    snprintf(tex, sizeof tex, "%s/px.ppm", tmpdir);
    FILE *f = fopen(tex, "wb");
    fputs("P6\n1 1\n255\n\x80\x40\x20", f);
    fclose(f);
    snprintf(text, sizeof text, "[material.m]\ntexture = %s\n[mesh.a]\nbuiltin = teapot\nmaterial = m\n", tex);
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load(scratch_file(tmpdir, "sub/abs.scene", text), &s, err) == 0, "%s", err);
    if (s) CHECK(s->ntextures == 1 && s->textures[0].levels[0].rgba[0] == 0x80);
    sc_free(s);
}

/* A texture whose header declares more than 8192 x 8192 pixels is refused before it is
 * decoded (a 16384^2 texture took 1.3 GB with no word). */
/* A texture beyond the limit is not decoded: a warning naming the file, line and
 * material, counted; the scene loads and the material has no texture. */
static void test_texture_cap(void)
{
    scratch_file(tmpdir, "big.ppm", "P6\n9000 9000\n255\n\x80\x40\x20");
    const char *path = scratch_file(tmpdir, "tex.scene", "[material.m]\ntexture = big.ppm\n[mesh.a]\nbuiltin = teapot\nmaterial = m\n");
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load(path, &s, err) == 0, "%s", err);
    if (!s) return;
    CHECK(s->unreadable_textures == 1 && s->ntextures == 0);
    CHECK(s->materials[sc_scene_find_material(s, "m")].albedo_map.texture == -1);
    CHECK_MSG(s->warnings && strstr(s->warnings, "tex.scene:2: texture") && strstr(s->warnings, "material 'm'") &&
              strstr(s->warnings, "9000x9000, more than the"), "%s", s->warnings ? s->warnings : "no warning");
    sc_free(s);
}

static void test_no_lights(void)
{
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    sc_geometry g;
    CHECK(sc_load(scratch_file(tmpdir, "nl.scene", "[mesh.a]\nbuiltin = teapot\n"), &s, err) == 0);
    if (!s) return;
    CHECK(s->nlights == 0 && s->lights == NULL);
    CHECK(sc_flatten(s, &g, err) == 0);
    sh_raster_env re;
    sh_raster_env_init(&re, s, &g, 16, 16, SH_AOV_COLOR);
    CHECK(re.nlights == 1);
    sc_camera_frame fr;
    sc_camera_frame_init(&fr, &s->camera, 16, 16);
    sh_ray_env ye;
    sh_ray_env_init(&ye, s, &g, &fr);
    CHECK(ye.nlights == 1);
    sc_geometry_free(&g);
    sc_free(s);
}

/* 80k material names (the lookup is a hash now, not a scan: this took 10 s): every
 * triangle gets the material its usemtl named. */
static void test_many_materials(void)
{
    enum { N = 80000 };
    char path[256];
    snprintf(path, sizeof path, "%s/many.mtl", tmpdir);
    FILE *mtl = fopen(path, "w");
    snprintf(path, sizeof path, "%s/many.obj", tmpdir);
    FILE *obj = fopen(path, "w");
    fprintf(obj, "mtllib many.mtl\n" TRI);
    for (int i = 0; i < N; i++) {
        fprintf(mtl, "newmtl m%d\nKd %d 0 0\n", i, i % 2);
        fprintf(obj, "usemtl m%d\nf 1 2 3\n", N - 1 - i);
    }
    fclose(mtl);
    fclose(obj);
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load(path, &s, err) == 0, "%s", err);
    if (!s) return;
    const sc_mesh *m = &s->meshes[0];
    CHECK(m->ntriangles == N);
    int wrong = 0;
    for (int t = 0; t < N; t++) {
        char want[16];
        snprintf(want, sizeof want, "m%d", N - 1 - t);
        wrong += strcmp(s->materials[m->materials[t]].name, want) != 0;
    }
    CHECK(wrong == 0);
    sc_free(s);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gramps-validate-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_obj_nonfinite);
    RUN(test_denormal_loads);
    RUN(test_scene_transforms);
    RUN(test_scene_camera_and_lights);
    RUN(test_long_line);
    RUN(test_absolute_texture_path);
    RUN(test_texture_cap);
    RUN(test_no_lights);
    RUN(test_many_materials);
    if (!scratch_dir_remove(tmpdir)) return 1;
    return check_finish();
}

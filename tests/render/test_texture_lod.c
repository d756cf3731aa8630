/* Texturing in the raster graphs (issue 30): trilinear filtering at the level of detail
 * of each 2x2 quad, and the albedo AOV. A ground plane with a one-texel black-and-white
 * checker, receding to the horizon: far away each pixel covers many texels, and the
 * filtered colour is the checker's mean (grey), where level-0 sampling gives black or
 * white noise. The albedo AOV is the base colour times the texel, 8-bit linear, unlit,
 * on a black background. The images are the same bits for 1, 2, 3 and 8 workers, every
 * scheduler and both raster graphs. */
#include "scenes/loaders.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <unistd.h>

static char dir[64];

/* checker.ppm: 64x64 single texels of black and white. */
static void write_checker(void)
{
    static char ppm[32 + 64 * 64 * 3];
    int n = snprintf(ppm, 32, "P6\n64 64\n255\n");
    for (int i = 0; i < 64 * 64; i++) {
        char c = (char)((i % 64 + i / 64) % 2 ? 255 : 0);
        ppm[n++] = c, ppm[n++] = c, ppm[n++] = c;
    }
    scratch_write(dir, "checker.ppm", ppm, (size_t)n);
}

/* A floor 200 units square at y = 0, uv 0..100 (the checker repeated 100 times), and a
 * 2x2 texture of one colour for the albedo test. */
static void write_scenes(void)
{
    write_checker();
    static const char floor_obj[] =
        "mtllib floor.mtl\nv -100 0 100\nv 100 0 100\nv 100 0 -100\nv -100 0 -100\n"
        "vt 0 0\nvt 100 0\nvt 100 100\nvt 0 100\nvn 0 1 0\nusemtl m\n"
        "f 1/1/1 2/2/1 3/3/1\nf 1/1/1 3/3/1 4/4/1\n";
    scratch_write(dir, "floor.obj", floor_obj, sizeof floor_obj - 1);
    static const char floor_mtl[] = "newmtl m\nKd 1 1 1\nmap_Kd checker.ppm\n";
    scratch_write(dir, "floor.mtl", floor_mtl, sizeof floor_mtl - 1);
    static const char color[] = "P6\n2 2\n255\n\xc8\x64\x32\xc8\x64\x32\xc8\x64\x32\xc8\x64\x32";
    scratch_write(dir, "color.ppm", color, sizeof color - 1);
    static const char quad_obj[] =
        "mtllib quad.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\n"
        "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 0 1\nusemtl m\n"
        "f 1/1/1 2/2/1 3/3/1\nf 1/1/1 3/3/1 4/4/1\n";
    scratch_write(dir, "quad.obj", quad_obj, sizeof quad_obj - 1);
}

#define FLOOR_CAMERA "--camera 0,1,0,0,0.6,-10,0,1,0,60"

/* Renders `args` (plus the output file) at 64x64 to out.png and reads it back: the
 * pixels (row 0 at the top, RGBA) or NULL. */
static unsigned char *render(const char *args, const char *png_name)
{
    char cmd[768], png[128], err[SC_ERR_MAX];
    snprintf(png, sizeof png, "%s/%s", dir, png_name);
    snprintf(cmd, sizeof cmd, "-q --size 64x64 -o %s %s", png, args);
    if (run(cmd) != 0) return NULL;
    sc_scene s = {0};
    sc_load_opts o = sc_load_opts_default();
    if (sc_read_texture(&s, png, &o, err) != 0) return NULL;
    unsigned char *px = s.textures[0].levels[0].rgba;
    s.textures[0].levels[0].rgba = NULL;
    sc_texture_free(&s.textures[0]);
    free(s.textures);
    return px;
}

/* Rows 30..37 are the floor's far part (the horizon is near row 20): filtered, nearly
 * every pixel is grey; sampled at level 0 they would be black or white. */
static void test_far_floor_is_filtered(void)
{
    char args[256];
    snprintf(args, sizeof args, "-t 2 --aov albedo " FLOOR_CAMERA " %s/floor.obj", dir);
    unsigned char *px = render(args, "floor.png");
    CHECK_MSG(px, "%s", out);
    if (!px) return;
    int grey = 0, n = 0, black_sky = 1;
    for (int y = 30; y < 38; y++)
        for (int x = 0; x < 64; x++, n++) {
            const unsigned char *p = px + 4 * (y * 64 + x);
            grey += p[0] >= 100 && p[0] <= 155 && p[0] == p[1] && p[1] == p[2];
        }
    for (int x = 0; x < 64; x++) black_sky &= px[4 * x] == 0 && px[4 * x + 1] == 0 && px[4 * x + 2] == 0;
    CHECK_MSG(grey >= n * 95 / 100, "%d of %d far floor pixels grey", grey, n);
    CHECK_MSG(black_sky, "the albedo AOV's background is not black");
    free(px);
}

/* Unlit and linear: a quad filling the view in texture colour (200, 100, 50) is that
 * colour in the albedo AOV, times Kd; the colour AOV (lit, sRGB) is not. */
static void test_albedo_is_base_colour(void)
{
    const char *cam = "--camera 0,0,1,0,0,0,0,1,0,60 --light 0,0,3";
    char args[256];
    scratch_write(dir, "quad.mtl", "newmtl m\nKd 1 1 1\nmap_Kd color.ppm\n", 35);
    snprintf(args, sizeof args, "--aov albedo %s %s/quad.obj", cam, dir);
    unsigned char *a = render(args, "quad.png");
    CHECK_MSG(a, "%s", out);
    if (a) CHECK_MSG(a[4 * (32 * 64 + 32)] == 200 && a[4 * (32 * 64 + 32) + 1] == 100 &&
                         a[4 * (32 * 64 + 32) + 2] == 50, "albedo %u,%u,%u", a[4 * (32 * 64 + 32)],
                     a[4 * (32 * 64 + 32) + 1], a[4 * (32 * 64 + 32) + 2]);
    free(a);
    scratch_write(dir, "quad.mtl", "newmtl m\nKd 0.5 0.5 1\nmap_Kd color.ppm\n", 39);
    a = render(args, "quad.png");
    if (a) CHECK_MSG(a[4 * (32 * 64 + 32)] == 100 && a[4 * (32 * 64 + 32) + 1] == 50 &&
                         a[4 * (32 * 64 + 32) + 2] == 50, "albedo x Kd %u,%u,%u", a[4 * (32 * 64 + 32)],
                     a[4 * (32 * 64 + 32) + 1], a[4 * (32 * 64 + 32) + 2]);
    free(a);
    snprintf(args, sizeof args, "%s %s/quad.obj", cam, dir);
    unsigned char *c = render(args, "quad.png");
    if (c) CHECK(c[4 * (32 * 64 + 32)] != 100 || c[4 * (32 * 64 + 32) + 1] != 50);
    free(c);
}

/* The textured floor (filtered, clipped by the near plane) in both raster graphs, at
 * several worker counts and every scheduler: the same bits. */
static void test_deterministic(void)
{
    const char *runs[] = {"-t 1", "-t 2", "-t 3", "-t 8", "-t 3 --scheduler task-stealing",
                          "-t 3 --scheduler breadth-first", "-t 3 --scheduler static",
                          "-t 3 -p raster-ordered", "-t 8 -p raster-ordered", "-t 3 --parallel-rast"};
    const char *aovs[] = {"color", "albedo"};
    for (int a = 0; a < 2; a++) {
        unsigned char *first = NULL;
        for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
            char args[256];
            snprintf(args, sizeof args, "%s --aov %s " FLOOR_CAMERA " %s/floor.obj", runs[r], aovs[a], dir);
            unsigned char *px = render(args, "det.png");
            CHECK_MSG(px, "%s: %s", runs[r], out);
            if (!px) continue;
            if (!first) first = px;
            else {
                CHECK_MSG(!memcmp(first, px, 64 * 64 * 4), "%s --aov %s differs from -t 1", runs[r], aovs[a]);
                free(px);
            }
        }
        free(first);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    snprintf(dir, sizeof dir, "/tmp/test_texture_lod_XXXXXX");
    if (!mkdtemp(dir)) return 1;
    write_scenes();
    RUN(test_far_floor_is_filtered);
    RUN(test_albedo_is_base_colour);
    RUN(test_deterministic);
    scratch_dir_remove(dir);
    return check_finish();
}

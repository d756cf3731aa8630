/* OBJ materials with an albedo texture (MTL map_Kd) load it, relative to the MTL file,
 * and the raster graph draws it: a quad filling the view comes out in the texture's
 * colour, not the grey of a material without one. A map_Kd that names a file that
 * cannot be read is a warning naming the MTL file and line and the material (counted in
 * the statistics), and the material renders untextured: never silence, never a lost
 * render. */
#include "scenes/loaders.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <unistd.h>

static char dir[64];

/* A quad at z = 0 over [-1, 1]^2 with texture coordinates, material m from quad.mtl. */
static void write_quad(const char *mtl)
{
    scratch_write_text(dir, "quad.obj", "mtllib quad.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\n"
                                        "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 0 1\nusemtl m\n"
                                        "f 1/1/1 2/2/1 3/3/1\nf 1/1/1 3/3/1 4/4/1\n");
    scratch_write_text(dir, "quad.mtl", mtl);
}

/* The centre pixel of `args`' raster image of the quad: 0 with rgb set, or -1. */
static int centre_pixel(uint8_t rgb[3])
{
    char args[512], png[128], err[SC_ERR_MAX];
    snprintf(png, sizeof png, "%s/out.png", dir);
    snprintf(args, sizeof args, "-q -t 2 --size 16x16 --camera 0,0,1.5,0,0,0,0,1,0,60 "
             "--light 0,0,3 -o %s %s/quad.obj", png, dir);
    if (run(args) != 0) return -1;
    sc_scene s = {0};
    sc_load_opts o = sc_load_opts_default();
    if (sc_read_texture(&s, png, &o, err) != 0) return -1;
    memcpy(rgb, s.textures[0].levels[0].rgba + (8 * 16 + 8) * 4, 3);
    sc_texture_free(&s.textures[0]);
    free(s.textures);
    return 0;
}

static void test_map_kd_drawn(void)
{
    static const char red[] = "P6\n2 2\n255\n\xff\0\0\xff\0\0\xff\0\0\xff\0\0";
    char path[128];
    snprintf(path, sizeof path, "%s/red.ppm", dir);
    FILE *f = fopen(path, "wb");
    if (f) fwrite(red, 1, sizeof red - 1, f), fclose(f);
    write_quad("newmtl m\nKd 1 1 1\nmap_Kd red.ppm\n");
    uint8_t textured[3] = {0}, plain[3] = {0}, windows[3] = {0};
    CHECK_MSG(centre_pixel(textured) == 0, "%s", out);
    /* a path written on Windows (Debian's assimp-testmodels spider.mtl: .\tex.jpg) */
    write_quad("newmtl m\nKd 1 1 1\nmap_Kd .\\red.ppm\n");
    CHECK_MSG(centre_pixel(windows) == 0 && !memcmp(windows, textured, 3), "%s", out);
    write_quad("newmtl m\nKd 1 1 1\n");
    CHECK_MSG(centre_pixel(plain) == 0, "%s", out);
    CHECK_MSG(textured[0] > textured[1] + 60 && textured[1] == textured[2],
              "textured centre %u,%u,%u is not red", textured[0], textured[1], textured[2]);
    CHECK_MSG(plain[0] == plain[1] && plain[1] == plain[2] && plain[0] > 20,
              "untextured centre %u,%u,%u is not grey", plain[0], plain[1], plain[2]);
}

static void test_map_kd_missing_named(void)
{
    write_quad("newmtl m\nKd 1 1 1\n\nmap_Kd -s 1 1 1 nowhere.png\n");
    char args[256], stats[128];
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    snprintf(args, sizeof args, "-q --size 8x8 --stats %s %s/quad.obj", stats, dir);
    CHECK_MSG(run(args) == 0 && strstr(out, "warning") && strstr(out, "quad.mtl:4: map_Kd") &&
              strstr(out, "nowhere.png") && strstr(out, "material 'm'"), "%s", out);
    FILE *f = fopen(stats, "r");
    char json[1 << 16] = "";
    if (f) json[fread(json, 1, sizeof json - 1, f)] = 0, fclose(f);
    CHECK_MSG(strstr(json, "\"unreadable_textures\": 1"), "stats: %.300s", json);
    /* untextured: the grey of the plain material */
    uint8_t missing[3] = {0};
    CHECK_MSG(centre_pixel(missing) == 0, "%s", out);
    CHECK_MSG(missing[0] == missing[1] && missing[1] == missing[2] && missing[0] > 20,
              "centre %u,%u,%u is not grey", missing[0], missing[1], missing[2]);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    snprintf(dir, sizeof dir, "/tmp/gramps-objtex-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(test_map_kd_drawn);
    RUN(test_map_kd_missing_named);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}

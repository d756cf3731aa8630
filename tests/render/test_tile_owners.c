/* Tile-Shade's 16-bit pixel owners (pipelines/raster/tile_shade.c): a 256x256 image of
 * a grid whose every pixel centre lies in a triangle of its own, 65,536 visible
 * triangles. With --tile 256 one tile would hold all of them at once, one more than its
 * owners can name: gramps-render fails with a message that says so and what to do
 * (never a wrong image with exit 0); with --tile 128 (and 64) it renders, and both
 * images are the same. */
#include "tests/check.h"
#include "tests/cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIDE 256                          /* pixels and grid cells a side */

/* The grid over the camera's view of the plane z = 0 ([-1,1] square at fovy 90 from
 * z = 1), shifted by a quarter pixel in x and -0.2 of one in y, so that each pixel
 * centre lies inside one cell, off its diagonal: in exactly one triangle. */
static bool write_grid(const char *obj)
{
    FILE *f = fopen(obj, "w");
    if (!f) return false;
    const double p = 2.0 / SIDE;
    for (int j = 0; j <= SIDE; j++)
        for (int i = 0; i <= SIDE; i++)
            fprintf(f, "v %.9f %.9f 0\n", -1 + (i + 0.25) * p, -1 + (j - 0.2) * p);
    for (int j = 0; j < SIDE; j++)
        for (int i = 0; i < SIDE; i++) {
            int a = j * (SIDE + 1) + i + 1, b = a + 1, c = a + SIDE + 1, d = c + 1;
            fprintf(f, "f %d %d %d\nf %d %d %d\n", a, b, d, a, d, c);
        }
    return fclose(f) == 0;
}

static bool write_scene(const char *scene, const char *obj)
{
    FILE *f = fopen(scene, "w");
    if (!f) return false;
    fprintf(f, "[scene]\nname = grid\n\n[camera]\neye = 0, 0, 1\ntarget = 0, 0, 0\nup = 0, 1, 0\n"
               "fovy = 90\n\n[light.l0]\nposition = 0, 0, 2\ncolor = 1, 1, 1\n\n"
               "[material.m]\nalbedo = 0.8, 0.8, 0.8\n\n[mesh.grid]\nfile = %s\nmaterial = m\n",
            obj);
    return fclose(f) == 0;
}

static void grid_needs_more_owners_than_a_256_tile_has(void)
{
    char dir[] = "/tmp/gramps-owners-XXXXXX", obj[300], scene[300], png[3][300], args[1400];
    if (!mkdtemp(dir)) { CHECK(0); return; }
    snprintf(obj, sizeof obj, "%s/grid.obj", dir);
    snprintf(scene, sizeof scene, "%s/grid.scene", dir);
    CHECK(write_grid(obj) && write_scene(scene, obj));
    const int tiles[3] = {256, 128, 64};
    for (int t = 0; t < 3; t++) {
        snprintf(png[t], sizeof png[t], "%s/tile%d.png", dir, tiles[t]);
        snprintf(args, sizeof args, "-q -t 2 --size %dx%d --set graph.tile=%d -o %s %s", SIDE, SIDE,
                 tiles[t], png[t], scene);
        int rc = run(args);
        if (tiles[t] == 256)
            CHECK_MSG(rc != 0 && strstr(out, "16-bit pixel owners") && strstr(out, "tile edge below"),
                      "tile 256: exit %d, output: %s", rc, out);
        else
            CHECK_MSG(rc == 0, "tile %d: exit %d, output: %s", tiles[t], rc, out);
    }
    long n1 = 0, n2 = 0;
    char *a = slurp(png[1], &n1), *b = slurp(png[2], &n2);
    CHECK_MSG(a && b && n1 == n2 && !memcmp(a, b, (size_t)n1), "tile 128 and tile 64 images differ");
    free(a);
    free(b);
    for (int t = 0; t < 3; t++) unlink(png[t]);
    unlink(obj);
    unlink(scene);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    RUN(grid_needs_more_owners_than_a_256_tile_has);
    return check_finish();
}

/* gramps-render -o FILE.exr: an OpenEXR file (read back here with a parser of the format's
 * uncompressed scanline layout, not with the library that wrote it) holding R, G, B, A
 * (the sinks' linear colour: each encodes to the PNG's byte, values above 1 kept), Z (view-axis
 * depth, +infinity where nothing is hit) and N.X, N.Y, N.Z (unit normals, 0 where
 * nothing is hit), all 32-bit float; the same for any worker count. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <math.h>
#include <stb/stb_image.h>                /* compiled into librender */
#include <stdint.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-exr-XXXXXX";

/* The channels, in the file's (sorted) order: A, B, G, N.X, N.Y, N.Z, R, Z. */
enum { W = 40, H = 30, NCH = 8 };

typedef struct exr_image { float ch[NCH][H][W]; bool ok; } exr_image;

static uint32_t u32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

/* The header's attributes, skipped, then the chunk offsets, then each line's channels. */
static void parse(const uint8_t *f, long n, exr_image *img)
{
    img->ok = false;
    if (n < 8 || u32(f) != 20000630u) return;
    long at = 8;
    while (at < n && f[at]) {                     /* name\0 type\0 size data */
        at += (long)strlen((const char *)f + at) + 1;
        at += (long)strlen((const char *)f + at) + 1;
        at += 4 + (long)u32(f + at);
    }
    at += 1 + 8 * H;                              /* the end byte, the offset table */
    for (int y = 0; y < H; y++) {
        if (at + 8 + (long)NCH * W * 4 > n || (int)u32(f + at) != y) return;
        at += 8;
        for (int c = 0; c < NCH; c++, at += W * 4) memcpy(img->ch[c][y], f + at, W * 4);
    }
    img->ok = at == n;
}

static bool load(const char *name, const char *args, exr_image *img)
{
    char cmd[600], path[128];
    snprintf(path, sizeof path, "%s/%s.exr", dir, name);
    snprintf(cmd, sizeof cmd, "-q --size %dx%d -o %s %s", W, H, path, args);
    if (run(cmd) != 0) return false;
    long n = 0;
    uint8_t *f = (uint8_t *)slurp(path, &n);
    if (f) parse(f, n, img);
    free(f);
    return f && img->ok;
}

/* sRGB encode of a linear value, as a byte (the formula: enough to within 1). */
static int srgb_byte(float v)
{
    float s = v <= 0.0031308f ? v * 12.92f : 1.055f * powf(v, 1.0f / 2.4f) - 0.055f;
    return (int)lroundf(s * 255.0f);
}

static void test_channels(void)
{
    static exr_image img, again;
    CHECK_MSG(load("teapot", "-t 2 teapot", &img), "%s", out);
    if (!img.ok) return;
    char png[128];
    snprintf(png, sizeof png, "%s/teapot.png", dir);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "-q -t 2 --size %dx%d -o %s teapot", W, H, png);
    CHECK(run(cmd) == 0);
    int w, h, c;
    uint8_t *rgb = stbi_load(png, &w, &h, &c, 3);
    CHECK(rgb && w == W && h == H);
    int hits = 0, colour_off = 0;
    for (int y = 0; rgb && y < H; y++)
        for (int x = 0; x < W; x++) {
            float z = img.ch[7][y][x], nx = img.ch[3][y][x], ny = img.ch[4][y][x], nz = img.ch[5][y][x];
            if (isfinite(z)) {
                hits++;
                CHECK(z > 0 && fabsf(nx * nx + ny * ny + nz * nz - 1) < 1e-3f);
            } else {
                CHECK(isinf(z) && z > 0 && nx == 0 && ny == 0 && nz == 0);
            }
            const float *rgbf[3] = {&img.ch[6][y][x], &img.ch[2][y][x], &img.ch[1][y][x]};
            for (int k = 0; k < 3; k++)
                colour_off += abs(srgb_byte(*rgbf[k]) - rgb[3 * (y * W + x) + k]) > 1;
            CHECK(img.ch[0][y][x] == 1.0f);
        }
    CHECK_MSG(hits > W * H / 10 && hits < W * H, "%d of %d pixels hit", hits, W * H);
    CHECK_MSG(colour_off == 0, "%d channels decode to another byte", colour_off);
    stbi_image_free(rgb);
    CHECK(load("teapot1", "-t 1 teapot", &again) && !memcmp(&img, &again, sizeof img));
}

/* A bright scene (lights x 4): the colour channels keep values above 1, and each
 * encodes to the PNG's byte within 1. */
static void test_bright_colour(void)
{
    char scene[128], png[128], cmd[400];
    snprintf(scene, sizeof scene, "%s/bright.scene", dir);
    FILE *f = fopen(scene, "w");
    if (!f) { CHECK(0); return; }
    fputs("[camera]\neye = 0,3,9\ntarget = 0,1,0\nfovy = 40\n[light.key]\nposition = 4,8,6\n"
          "color = 4,4,4\n[mesh.pot]\nbuiltin = teapot\n", f);
    fclose(f);
    /* the last: a plugin stage between the PS and the OM changes the colour, and the
     * OM decodes the changed byte instead of the PS's linear colour */
    static const char *const pipes[] = {"raster", "raster-ordered", "raytrace", "hybrid",
                                        "raster-ordered --plugin fog.so --edit 'fog after ps'"};
    for (int p = 0; p < 5; p++) {
        static exr_image img;
        snprintf(cmd, sizeof cmd, "-t 2 -p %s %s", pipes[p], scene);
        CHECK_MSG(load("bright", cmd, &img), "%s: %s", pipes[p], out);
        snprintf(png, sizeof png, "%s/bright.png", dir);
        snprintf(cmd, sizeof cmd, "-q -t 2 --size %dx%d -p %s -o %s %s", W, H, pipes[p], png, scene);
        CHECK(run(cmd) == 0);
        int w, h, c;
        uint8_t *rgb = stbi_load(png, &w, &h, &c, 3);
        CHECK(rgb && w == W && h == H);
        int above = 0, off = 0;
        for (int y = 0; rgb && img.ok && y < H; y++)
            for (int x = 0; x < W; x++) {
                const float v[3] = {img.ch[6][y][x], img.ch[2][y][x], img.ch[1][y][x]};
                for (int k = 0; k < 3; k++) {
                    above += v[k] > 1.0f;
                    off += abs(srgb_byte(v[k] < 1.0f ? v[k] : 1.0f) - rgb[3 * (y * W + x) + k]) > 1;
                }
            }
        CHECK_MSG(p == 4 ? above == 0 : above > W * H / 20, "%s: %d channels above 1", pipes[p], above);
        CHECK_MSG(off == 0, "%s: %d channels encode to another byte than the PNG's", pipes[p], off);
        stbi_image_free(rgb);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_channels);
    RUN(test_bright_colour);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}

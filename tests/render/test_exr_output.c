/* gramps-render -o FILE.exr: an OpenEXR file (read back here with a parser of the format's
 * uncompressed scanline layout, not with the library that wrote it) holding R, G, B, A
 * (the image's bytes decoded to linear: each encodes back to the PNG's byte), Z (view-axis
 * depth, +infinity where nothing is hit) and N.X, N.Y, N.Z (unit normals, 0 where
 * nothing is hit), all 32-bit float; the same for any worker count. */
#include "tests/check.h"
#include "tests/cli.h"

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

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_channels);
    char rm[96];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) return 1;
    return check_finish();
}

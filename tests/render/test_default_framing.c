/* The default views show their scenes whole, and fog reaches the sky:
 *  - the built-in cornell: the mirror slab and the sphere (every triangle after the six
 *    8x8-quad walls) touch no edge of the image at the default square aspect;
 *  - scenes/teapots.scene: both teapots inside the frame (the border is background);
 *  - raster-fog.graph: what no geometry covers is the fog colour, not the scene's
 *    background (no hard horizon).
 * Read from --aov primid images (primitive id + 1 in RGB, 0 = background). */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <stb/stb_image.h>                /* compiled into librender */
#include <stdint.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-framing-XXXXXX";

/* Renders args into dir/name.png and loads it as RGB (w x h); NULL on failure. */
static uint8_t *render(const char *name, const char *args, int *w, int *h)
{
    char cmd[1200], png[128];
    snprintf(png, sizeof png, "%s/%s.png", dir, name);
    snprintf(cmd, sizeof cmd, "-q -t 2 -o %s %s", png, args);
    if (run(cmd) != 0) return NULL;
    int c;
    return stbi_load(png, w, h, &c, 3);
}

static uint32_t primid_at(const uint8_t *p, int w, int x, int y)
{
    const uint8_t *q = p + 3 * ((size_t)y * w + x);
    return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16;
}

/* The largest primitive id + 1 on the image's border. */
static uint32_t border_max(const uint8_t *p, int w, int h)
{
    uint32_t m = 0;
    for (int i = 0; i < w; i++) {
        uint32_t a = primid_at(p, w, i, 0), b = primid_at(p, w, i, h - 1);
        m = a > m ? a : m;
        m = b > m ? b : m;
    }
    for (int j = 0; j < h; j++) {
        uint32_t a = primid_at(p, w, 0, j), b = primid_at(p, w, w - 1, j);
        m = a > m ? a : m;
        m = b > m ? b : m;
    }
    return m;
}

static void test_cornell_whole(void)
{
    int w, h;
    uint8_t *p = render("cornell", "--size 96x96 --aov primid cornell", &w, &h);
    CHECK(p);
    if (p) CHECK_MSG(border_max(p, w, h) <= 6 * 128, "id %u on the border", border_max(p, w, h) - 1);
    stbi_image_free(p);
}

static void test_teapots_whole(void)
{
    int w, h;
    uint8_t *p = render("teapots", "--size 96x96 --aov primid scenes/teapots.scene", &w, &h);
    CHECK(p);
    if (p) CHECK_MSG(border_max(p, w, h) == 0, "a teapot touches the border");
    stbi_image_free(p);
}

static void test_fog_sky(void)
{
    int w, h;
    uint8_t *p = render("fog", "--size 64x64 --graph examples/graphs/raster-fog.graph "
                        "--set fog.color=0.5,0.25,0.75 courtyard", &w, &h);
    CHECK(p);
    /* the top-left corner is sky: sRGB bytes of linear 0.5, 0.25, 0.75 */
    if (p) CHECK_MSG(p[0] == 188 && p[1] == 137 && p[2] == 225, "sky %u,%u,%u", p[0], p[1], p[2]);
    stbi_image_free(p);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_cornell_whole);
    RUN(test_teapots_whole);
    RUN(test_fog_sky);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}

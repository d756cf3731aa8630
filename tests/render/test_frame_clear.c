/* A frame's buffers are cleared before each run by pl_frame_prepare, in row bands at
 * once, as the stages asked: a buffer asked for cleared gets its region cleared every
 * run and, when new, the pixels outside the region too; the color buffer of a graph
 * whose stages overwrite the whole region (rt.blend) is cleared only outside it; pixels
 * outside the region keep what they hold from run to run. Every case runs with 1 to 7
 * bands, and the buffers hold garbage before each prepare, so a pixel that was skipped
 * shows. */
#include "pipelines/frame.h"
#include "pipelines/stages.h"
#include "tests/check.h"
#include "tests/loaded_scene.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define W 37
#define H 23
#define GARBAGE 0xabababab

static const pl_region region = {5, 3, 30, 17};

static bool inside(int x, int y)
{
    return x >= region.x0 && x < region.x1 && y >= region.y0 && y < region.y1;
}

static uint32_t far_bits(void)
{
    float far = FLT_MAX;
    uint32_t bits;
    memcpy(&bits, &far, sizeof bits);
    return bits;
}

/* Pixels of buf (W x H) that differ from what they should hold: `in` inside the region,
 * `out` outside it. */
static int wrong_pixels(const uint32_t *buf, uint32_t in, uint32_t out)
{
    int wrong = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) wrong += buf[y * W + x] != (inside(x, y) ? in : out);
    return wrong;
}

/* The built-in resource `name` asked for as a stage that `access`es it would. */
static uint32_t *ask(pl_frame *f, const char *name, unsigned access)
{
    static cp_registry *r;
    char err[CP_ERR_MAX];
    if (!r && !(r = pl_registry_new(err))) return NULL;
    const cp_resource_type *t = cp_find_resource(r, name);
    return t ? pl_frame_resource(f, t, access, "") : NULL;
}

static void scribble(void *buf) { memset(buf, 0xab, (size_t)W * H * 4); }

static bool new_frame(pl_frame *f, pl_scene_data *d, loaded *l)
{
    char err[SC_ERR_MAX];
    pl_scene_data_init(d, l->s, &l->g);
    return pl_frame_init(f, d, W, H, SH_AOV_COLOR, err) && pl_frame_set_region(f, region, err);
}

static void test_cleared_buffers(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    for (unsigned parts = 1; parts <= 7; parts++) {
        pl_frame f;
        pl_scene_data d;
        CHECK(new_frame(&f, &d, &l));
        uint32_t *color = pl_frame_color(&f), *vis = ask(&f, "visibility", CP_WRITES);
        uint32_t *depth = ask(&f, "depth", CP_READS);
        CHECK(color && vis && depth);
        if (!color || !vis || !depth) break;
        const uint32_t bg = sh_background(pl_frame_raster_env(&f));
        scribble(color), scribble(vis), scribble(depth);
        pl_frame_prepare(&f, parts);               /* new buffers: every pixel */
        CHECK_MSG(wrong_pixels(color, bg, bg) == 0, "%u bands: color", parts);
        CHECK_MSG(wrong_pixels(vis, 0, 0) == 0, "%u bands: visibility", parts);
        CHECK_MSG(wrong_pixels(depth, far_bits(), far_bits()) == 0, "%u bands: depth", parts);
        /* The next run: only the region; what lies outside stays. */
        scribble(color), scribble(vis), scribble(depth);
        CHECK(pl_frame_color(&f) == color && ask(&f, "visibility", CP_WRITES) == vis);
        CHECK(ask(&f, "depth", CP_READS | CP_WRITES) == depth);
        pl_frame_prepare(&f, parts);
        CHECK_MSG(wrong_pixels(color, bg, GARBAGE) == 0, "%u bands: color, run 2", parts);
        CHECK_MSG(wrong_pixels(vis, 0, GARBAGE) == 0, "%u bands: visibility, run 2", parts);
        CHECK_MSG(wrong_pixels(depth, far_bits(), GARBAGE) == 0, "%u bands: depth, run 2", parts);
        /* A run whose stages asked for nothing clears nothing. */
        scribble(color);
        pl_frame_prepare(&f, parts);
        CHECK(wrong_pixels(color, GARBAGE, GARBAGE) == 0);
        pl_frame_free(&f);
    }
    unload(&l);
}

/* rt.blend's request (CP_OVERWRITES): the region is the stages' to write, the rest is background; a
 * stage that asks for the cleared buffer as well gets it cleared. */
static void test_overwritten_color(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    for (unsigned parts = 1; parts <= 7; parts++) {
        pl_frame f;
        pl_scene_data d;
        CHECK(new_frame(&f, &d, &l));
        uint32_t *color = ask(&f, "color", CP_OVERWRITES);
        if (!color) { CHECK(0); break; }
        const uint32_t bg = sh_background(pl_frame_raster_env(&f));
        scribble(color);
        pl_frame_prepare(&f, parts);
        CHECK_MSG(wrong_pixels(color, GARBAGE, bg) == 0, "%u bands", parts);
        CHECK(ask(&f, "color", CP_OVERWRITES) == color && pl_frame_color(&f) == color);
        scribble(color);
        pl_frame_prepare(&f, parts);
        CHECK_MSG(wrong_pixels(color, bg, GARBAGE) == 0, "%u bands, asked for cleared", parts);
        pl_frame_free(&f);
    }
    unload(&l);
}

/* The caller's pixels: drawn into, cleared like the frame's own, and not freed with it
 * (AddressSanitizer reports a free of memory the frame does not own). */
static void test_caller_pixels(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    uint32_t *mine = malloc((size_t)W * H * 4);
    pl_frame f;
    pl_scene_data d;
    CHECK(mine && new_frame(&f, &d, &l));
    if (mine) {
        scribble(mine);
        pl_frame_use_color(&f, mine);
        CHECK(pl_frame_color(&f) == mine);
        pl_frame_prepare(&f, 3);
        const uint32_t bg = sh_background(pl_frame_raster_env(&f));
        CHECK(wrong_pixels(mine, bg, bg) == 0);
        CHECK(pl_frame_image(&f) == (const uint8_t *)mine);
        pl_frame_free(&f);
        CHECK(wrong_pixels(mine, bg, bg) == 0);    /* still the caller's, still there */
    }
    free(mine);
    unload(&l);
}

/* A frame no graph ran on is all background. */
static void test_image_without_run(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    pl_frame f;
    pl_scene_data d;
    CHECK(new_frame(&f, &d, &l));
    const uint32_t *img = (const uint32_t *)pl_frame_image(&f);
    const uint32_t bg = sh_background(pl_frame_raster_env(&f));
    CHECK(img && wrong_pixels(img, bg, bg) == 0);
    pl_frame_free(&f);
    unload(&l);
}

int main(void)
{
    RUN(test_cleared_buffers);
    RUN(test_overwritten_color);
    RUN(test_caller_pixels);
    RUN(test_image_without_run);
    return check_finish();
}

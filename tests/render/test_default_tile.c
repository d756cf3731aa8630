/* The sort-middle raster graph's $default_tile from the application's side: 128 while
 * the image has 16 such tiles per worker, else 64, wherever the graph's tile is read (the
 * stages, the tile count, the image-space stages); a tile that names a variable which
 * itself depends on the tile is an error, not a loop; and the image does not depend on
 * the tile or batch the defaults pick (1x and 4x, with 1 and 3 workers). */
#include "pipelines/raster/raster.h"
#include "pipelines/stages.h"
#include "tests/check.h"

#include <stdlib.h>
#include <string.h>

/* The raster graph with `override` ("KEY=VALUE" in [graph], or NULL) set. */
static cp_graph *raster_graph(cp_registry *r, const char *override)
{
    char err[CP_ERR_MAX];
    cp_graph *g = cp_graph_new(r);
    CHECK_MSG(g && !cp_graph_load_text(g, pl_builtin_graph("raster"), "raster", err), "%s", err);
    if (g && override) {
        char key[64];
        const char *eq = strchr(override, '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - override), override);
        CHECK_MSG(!cp_put(g, "graph", key, eq + 1, "test", err), "%s", err);
    }
    return g;
}

static long tile_at(cp_registry *r, const char *override, int width, int height, unsigned workers)
{
    cp_graph *g = raster_graph(r, override);
    pl_vars_ctx vc = {g, width, height, workers};
    long tile = g ? pl_graph_tile(&vc) : -1;
    cp_graph_free(g);
    return tile;
}

static void test_default_follows_workers_and_size(void)
{
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    CHECK_MSG(r, "%s", err);
    CHECK(tile_at(r, NULL, 1024, 1024, 1) == PLR_LARGE_TILE);
    CHECK(tile_at(r, NULL, 1024, 1024, 4) == PLR_LARGE_TILE);   /* 64 tiles: 16 a worker */
    CHECK(tile_at(r, NULL, 1024, 1024, 5) == PLR_SMALL_TILE);
    CHECK(tile_at(r, NULL, 1024, 1024, 16) == PLR_SMALL_TILE);
    CHECK(tile_at(r, NULL, 512, 512, 1) == PLR_LARGE_TILE);
    CHECK(tile_at(r, NULL, 512, 512, 2) == PLR_SMALL_TILE);
    CHECK(tile_at(r, NULL, 1920, 1080, 8) == PLR_LARGE_TILE);     /* 15 x 9 tiles */
    CHECK(tile_at(r, NULL, 1920, 1080, 9) == PLR_SMALL_TILE);
    CHECK(tile_at(r, "tile=32", 1024, 1024, 1) == 32);            /* a setting wins */
    CHECK(tile_at(r, "tile=$width", 96, 96, 1) == 96);            /* through a variable */
    CHECK(tile_at(r, "tile=$tiles", 1024, 1024, 1) == 0);         /* depends on itself */
    cp_registry_free(r);
}

/* The tile count the queue set is made with follows the default tile: the run's
 * Tile-Shade copies are the tiles the image has. */
static void test_tiles_variable_uses_default(void)
{
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = r ? raster_graph(r, NULL) : NULL;
    const unsigned workers[] = {1, 8};
    const char *want[] = {"64", "256"};                           /* 8x8 tiles of 128, 16x16 of 64 */
    for (int k = 0; g && k < 2; k++) {
        pl_vars_ctx vc = {g, 1024, 1024, workers[k]};
        cp_vars vars = pl_vars(&vc);
        char buf[64];
        const char *tiles = vars.get(vars.ctx, "tiles", buf);
        CHECK_MSG(tiles && !strcmp(tiles, want[k]), "%u workers: tiles %s", workers[k], tiles ? tiles : "(none)");
    }
    cp_graph_free(g);
    cp_registry_free(r);
}

/* A graph whose tile names $tiles has no tile count (the graph is then refused naming
 * the setting that reads $tiles), where resolving it would go round forever. */
static void test_self_reference_refused(void)
{
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = r ? raster_graph(r, "tile=$tiles") : NULL;
    pl_vars_ctx vc = {g, 256, 256, 1};
    cp_vars vars = pl_vars(&vc);
    char buf[64];
    CHECK(g && vars.get(vars.ctx, "tiles", buf) == NULL && vars.get(vars.ctx, "default_bands", buf) == NULL);
    cp_graph_free(g);
    cp_registry_free(r);
}

static uint8_t *render(const sc_scene *s, const sc_geometry *geo, int tile, int batch, int msaa,
                       unsigned workers)
{
    plr_config c;
    plr_config_default(&c);
    c.width = c.height = 512;
    c.tile = tile;
    c.batch = batch;
    c.msaa = msaa;
    c.workers = workers;
    char err[SC_ERR_MAX];
    uint8_t *img = malloc(512 * 512 * 4);
    gr_graph *g = plr_render(s, geo, &c, img, NULL, err);
    CHECK_MSG(g, "%s", err);
    gr_graph_destroy(g);
    return img;
}

/* At 512x512 one worker gets 128-pixel tiles and batches of 128; the image is the one
 * the former defaults (64, 64) and other tiles give. */
static void test_image_independent_of_defaults(void)
{
    sc_scene *s;
    sc_geometry geo;
    char err[SC_ERR_MAX];
    if (sc_load("../shared/scenes/bunny.obj", &s, err) || sc_flatten(s, &geo, err)) {
        CHECK_MSG(0, "%s", err);
        return;
    }
    const int msaa[] = {1, 4};
    for (int m = 0; m < 2; m++) {
        uint8_t *ref = render(s, &geo, 0, 0, msaa[m], 1);
        const int tiles[][2] = {{64, 64}, {32, 16}, {128, 1}};
        for (int k = 0; k < 3; k++) {
            uint8_t *img = render(s, &geo, tiles[k][0], tiles[k][1], msaa[m], 3);
            CHECK_MSG(!memcmp(ref, img, 512 * 512 * 4), "msaa %d: tile %d, batch %d differs from the defaults'",
                      msaa[m], tiles[k][0], tiles[k][1]);
            free(img);
        }
        free(ref);
    }
    sc_geometry_free(&geo);
    sc_free(s);
}

int main(void)
{
    RUN(test_default_follows_workers_and_size);
    RUN(test_tiles_variable_uses_default);
    RUN(test_self_reference_refused);
    RUN(test_image_independent_of_defaults);
    return check_finish();
}

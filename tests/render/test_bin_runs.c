/* The sort-middle Bin sends a tile's full packets in runs (pipelines/raster/tile_stager.h):
 * on the built-in teapot at 512x512 (64 tiles of 64 pixels, 18 of them drawn, with
 * 461 bin packets: the stager's pool of 128 runs out again and again), one worker's
 * Tile-Shade takes at least three packets per activation on average (5.2 with the runs;
 * 1.9 without: 239 activations, most tiles then got each packet as it filled), the bins
 * stay within their capacity, and the image is the ordered graph's, byte for byte, at
 * 1, 2 and 3 workers. */
#include "pipelines/raster/raster.h"
#include "tests/check.h"
#include "tests/loaded_scene.h"

#include <stdlib.h>
#include <string.h>

#define SIZE 512

static gr_graph *render(const loaded *l, plr_graph graph, unsigned workers, uint8_t *img)
{
    plr_config c;
    plr_config_default(&c);
    c.width = c.height = SIZE;
    c.graph = graph;
    c.workers = workers;
    char err[SC_ERR_MAX];
    gr_graph *g = plr_render(l->s, &l->g, &c, img, NULL, err);
    CHECK_MSG(g != NULL, "%s", err);
    return g;
}

static const gr_stage_stats *stage_named(const gr_stats *s, const char *name)
{
    for (int i = 0; i < s->nstages; i++)
        if (!strcmp(s->stages[i].name, name)) return &s->stages[i];
    return NULL;
}

static const gr_queue_stats *queue_named(const gr_stats *s, const char *name)
{
    for (int i = 0; i < s->nqueues; i++)
        if (!strcmp(s->queues[i].name, name)) return &s->queues[i];
    return NULL;
}

static void one_worker_takes_runs(const loaded *l, uint8_t *img)
{
    gr_graph *g = render(l, PLR_TILED, 1, img);
    if (!g) return;
    const gr_stats *s = gr_get_stats(g);
    const gr_stage_stats *shade = stage_named(s, "tile-shade");
    const gr_queue_stats *bins = queue_named(s, "bins");
    CHECK(shade && bins);
    if (shade && bins) {
        CHECK_MSG(3 * shade->tasks <= bins->packets, "Tile-Shade ran %llu activations for "
                  "%llu bin packets: the packets did not come in runs",
                  (unsigned long long)shade->tasks, (unsigned long long)bins->packets);
        CHECK_MSG(bins->peak_subqueue_packets <= bins->capacity, "a tile's bins held %u "
                  "packets, capacity %u", bins->peak_subqueue_packets, bins->capacity);
    }
    gr_graph_destroy(g);
}

static void same_image_as_ordered(const loaded *l, const uint8_t *ordered, uint8_t *img)
{
    for (unsigned w = 1; w <= 3; w++) {
        gr_graph *g = render(l, PLR_TILED, w, img);
        if (!g) continue;
        CHECK_MSG(!memcmp(img, ordered, (size_t)SIZE * SIZE * 4), "%u workers: the sort-middle "
                  "image differs from the ordered graph's", w);
        gr_graph_destroy(g);
    }
}

static void test_teapot_runs(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    uint8_t *ordered = malloc((size_t)SIZE * SIZE * 4), *img = malloc((size_t)SIZE * SIZE * 4);
    gr_graph *g = ordered && img ? render(&l, PLR_ORDERED, 1, ordered) : NULL;
    if (g) {
        gr_graph_destroy(g);
        one_worker_takes_runs(&l, img);
        same_image_as_ordered(&l, ordered, img);
    }
    free(ordered);
    free(img);
    unload(&l);
}

int main(void)
{
    RUN(test_teapot_runs);
    return check_finish();
}

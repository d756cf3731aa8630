/* The ray-tracing graph: bit-identical images for any worker count and any packet size,
 * the primid output equal to a serial closest-hit loop for every pixel, ray counts, and
 * the Tiler -> Primary capacity honoured, light colours past the fixed point saturate,
 * no singleton stage but the Tiler; Blend's bands cover each region's pixels once. */
#include "pipelines/raytrace/raytrace.h"
#include "pipelines/raytrace/packets.h"
#include "pipelines/raytrace/sums.h"
#include "raytracer/bvh_traverse.h"
#include "tests/check.h"
#include "tests/loaded_scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *render(loaded *l, plrt_config *c, plrt_counts *counts, gr_graph **graph)
{
    char err[SC_ERR_MAX];
    uint8_t *img = malloc((size_t)c->width * c->height * 4);
    gr_graph *g = plrt_render(l->s, &l->g, l->bvh, c, img, counts, err);
    CHECK_MSG(g != NULL, "%s", err);
    if (graph) *graph = g;
    else gr_graph_destroy(g);
    return img;
}

static void check_deterministic(const char *scene, int bounces, int spp)
{
    loaded l;
    CHECK(load(scene, &l));
    plrt_config c;
    plrt_config_default(&c);
    c.width = c.height = 128;
    c.bounces = bounces;
    c.spp = spp;
    c.workers = 1;
    uint8_t *ref = render(&l, &c, NULL, NULL);
    unsigned workers[] = {2, 3, 8, 2};
    for (int i = 0; i < 4; i++) {
        c.workers = workers[i];
        uint8_t *img = render(&l, &c, NULL, NULL);
        CHECK_MSG(memcmp(ref, img, (size_t)c.width * c.height * 4) == 0,
                  "%s differs with %u workers", scene, workers[i]);
        free(img);
    }
    free(ref);
    unload(&l);
}

static void test_bit_identical(void)
{
    check_deterministic("../shared/scenes/bunny.obj", 1, 1);
    check_deterministic("cornell", 3, 2);
    check_deterministic("teapot", 1, 1);
}

/* Packet size changes how samples, rays and contributions are grouped (packets that
 * end inside an 8x8 block, partial pushes), never a pixel: Blend's sums do not depend
 * on grouping. Odd image and tile sizes leave partial blocks at the edges. */
static void test_packet_size_invariant(void)
{
    loaded l;
    CHECK(load("cornell", &l));
    plrt_config c;
    plrt_config_default(&c);
    c.width = 75;
    c.height = 53;
    c.tile = 20;
    c.spp = 3;
    c.bounces = 2;
    c.workers = 2;
    uint8_t *ref = render(&l, &c, NULL, NULL);
    int sizes[] = {1, 7, 63};
    for (int i = 0; i < 3; i++) {
        c.packet_rays = sizes[i];
        uint8_t *img = render(&l, &c, NULL, NULL);
        CHECK_MSG(memcmp(ref, img, (size_t)c.width * c.height * 4) == 0,
                  "image differs with %d-ray packets", sizes[i]);
        free(img);
    }
    free(ref);
    unload(&l);
}

/* primid from the graph equals a serial loop of single-ray closest hits. */
static void test_primid_matches_serial(void)
{
    loaded l;
    CHECK(load("../shared/scenes/bunny.obj", &l));
    plrt_config c;
    plrt_config_default(&c);
    c.width = c.height = 96;
    c.aov = SH_AOV_PRIMID;
    c.workers = 2;
    plrt_counts counts;
    uint8_t *img = render(&l, &c, &counts, NULL);
    sc_camera_frame f;
    sc_camera_frame_init(&f, &l.s->camera, c.width, c.height);
    int bad = 0, hits = 0;
    for (int y = 0; y < c.height; y++)
        for (int x = 0; x < c.width; x++) {
            rt_ray r = {{f.eye[0], f.eye[1], f.eye[2]}, 0.0f, {0, 0, 0}, INFINITY};
            sc_camera_ray(&f, c.width, c.height, x + 0.5f, y + 0.5f, r.dir);
            rt_hit h;
            uint32_t want = rt_intersect1(l.bvh, &r, &h) ? h.prim + 1 : 0;
            hits += want != 0;
            if (sh_decode_primid(img + 4 * (y * c.width + x)) != want) bad++;
        }
    CHECK_MSG(bad == 0, "%d pixels differ", bad);
    CHECK(hits > c.width * c.height / 10);
    CHECK(counts.primary == (uint64_t)c.width * c.height);
    free(img);
    unload(&l);
}

static void test_counts_and_capacity(void)
{
    loaded l;
    CHECK(load("cornell", &l));
    plrt_config c;
    plrt_config_default(&c);
    c.width = c.height = 64;
    c.spp = 2;
    c.runs_capacity = 16;   /* the Tiler reserves 16 runs at once (PLRT_RUN_BATCH) */
    c.workers = 2;
    plrt_counts counts;
    gr_graph *g;
    uint8_t *img = render(&l, &c, &counts, &g);
    CHECK(counts.primary == 64u * 64u * 2u);
    CHECK(counts.shadow > 0 && counts.secondary > 0);   /* cornell has a mirror */
    const gr_stats *st = g ? gr_get_stats(g) : NULL;
    for (int i = 0; st && i < st->nqueues; i++)
        if (!strcmp(st->queues[i].name, "runs"))
            CHECK_MSG(st->queues[i].peak_packets <= 16, "runs peak %llu",
                      (unsigned long long)st->queues[i].peak_packets);
    gr_graph_destroy(g);
    free(img);
    unload(&l);
}

/* No stage touches every sample, ray or pixel alone: the Tiler runs a copy per group
 * (each cutting its own pixel bands, and every copy gets some), Primary (which samples)
 * is a Shader and Blend runs one instance per subqueue of the contributions set, also
 * for a band of background only, which gets no contribution (Primary sums its misses);
 * so nothing is a singleton and the serial share is zero. */
static void test_no_serial_stage(void)
{
    loaded l;
    CHECK(load("teapot", &l));
    plrt_config c;
    plrt_config_default(&c);
    c.width = c.height = 128;
    c.workers = 2;
    gr_graph *g = NULL;
    free(render(&l, &c, NULL, &g));
    const gr_stats *st = g ? gr_get_stats(g) : NULL;
    CHECK(st != NULL);
    int fed = 0;          /* Primary copies that got runs */
    for (int i = 0; st && i < st->nstages; i++) {
        const gr_stage_stats *s = &st->stages[i];
        CHECK_MSG(!s->singleton, "stage '%s' is a singleton", s->name);
        if (!strncmp(s->name, "primary-", 8)) fed += s->replicated && s->tasks > 0;
        if (!strcmp(s->name, "blend"))   /* 128 x 128 pixels: 4 rows of tiles, 4 bands */
            CHECK_MSG(s->instances == 4, "blend: %llu instances", (unsigned long long)s->instances);
        if (!strncmp(s->name, "primary", 7)) CHECK(s->kind == GR_SHADER);
    }
    CHECK_MSG(fed == 2, "%d of 2 copies got runs", fed);   /* two of the 4 bands each */
    if (st) CHECK(st->serial_share == 0);
    gr_graph_destroy(g);
    unload(&l);
}

static void test_bad_config(void)
{
    loaded l;
    CHECK(load("teapot", &l));
    plrt_config c;
    plrt_config_default(&c);
    c.packet_rays = 0;
    char err[SC_ERR_MAX];
    uint8_t px[4];
    CHECK(plrt_render(l.s, &l.g, l.bvh, &c, px, NULL, err) == NULL && strstr(err, "packet"));
    unload(&l);
}

/* A light far brighter than the loaders accept (a scene built in code skips them):
 * Blend's fixed-point sums must saturate to white, not overflow (UBSan) or wrap black. */
static void test_blinding_light(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    for (size_t i = 0; i < l.s->nlights; i++)
        l.s->lights[i].color[0] = l.s->lights[i].color[1] = l.s->lights[i].color[2] = 1e38f;
    plrt_config c;
    plrt_config_default(&c);
    c.width = c.height = 32;
    c.workers = 2;
    uint8_t *img = render(&l, &c, NULL, NULL);
    const uint8_t *centre = img + (16 * 32 + 16) * 4;      /* the teapot's lit body */
    CHECK_MSG(centre[0] == 255 && centre[1] == 255 && centre[2] == 255, "centre %u %u %u",
              centre[0], centre[1], centre[2]);
    free(img);
    unload(&l);
}

/* Every pixel index of a region goes to the band (plrt_blend_band) of its key
 * (plrt_blend_key): the bands are contiguous, ascending and cover the region's span
 * exactly once, and none is empty when the span has a pixel per band. */
static void test_blend_bands(void)
{
    static const struct { int w, h; pl_region r; uint32_t subqueues; } cases[] = {
        {1024, 1024, {0, 0, 1024, 1024}, 16}, {1000, 1000, {0, 0, 1000, 1000}, 16},
        {1920, 1080, {0, 0, 1920, 1080}, 16}, {333, 200, {17, 5, 300, 9}, 8},
        {7, 5, {0, 0, 7, 5}, 16}, {64, 64, {3, 60, 4, 61}, 16}, {100, 37, {0, 0, 100, 37}, 1},
        {96, 64, {0, 0, 96, 64}, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        pl_frame f = {.width = cases[c].w, .height = cases[c].h, .region = cases[c].r};
        plrt_blend_keys k;
        CHECK(plrt_blend_keys_of(&f, cases[c].subqueues, &k));
        uint64_t next = k.first, bad = 0, empty = 0;
        for (uint32_t key = 0; key <= k.mask; key++) {
            uint64_t lo, hi;
            plrt_blend_band(&k, key, &lo, &hi);
            bad += lo != next || hi < lo;
            empty += hi == lo;
            for (uint64_t p = lo; p < hi; p++) bad += plrt_blend_key((uint32_t)p, &k) != key;
            next = hi;
        }
        CHECK_MSG(!bad && next == (uint64_t)k.first + k.span, "case %zu: %llu pixels misplaced",
                  c, (unsigned long long)bad);
        CHECK_MSG(k.span < k.mask + 1 || !empty, "case %zu: %llu empty bands", c,
                  (unsigned long long)empty);
    }
    pl_frame f = {.width = 8, .height = 8, .region = {0, 0, 8, 8}};
    plrt_blend_keys k;
    CHECK(!plrt_blend_keys_of(&f, 12, &k));   /* not a power of two */
}

int main(void)
{
    RUN(test_blend_bands);
    RUN(test_bit_identical);
    RUN(test_packet_size_invariant);
    RUN(test_primid_matches_serial);
    RUN(test_counts_and_capacity);
    RUN(test_no_serial_stage);
    RUN(test_bad_config);
    RUN(test_blinding_light);
    return check_finish();
}

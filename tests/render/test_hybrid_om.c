/* hybrid.om, the Extended Direct3D graph's Output Merger (pipelines/hybrid/om.c), on
 * crafted contributions from a test stage, one instance per 8x8 framebuffer tile of a
 * 20x12 image:
 *
 * - each pixel is its base layer's exact sum encoded, with its blended layers blended
 *   over it in primitive order (plr_blend per 8-bit channel) whatever order their
 *   contributions arrive in (here the higher primitive first, each layer in two parts),
 *   at 1 and 2 workers;
 * - a contribution keyed to another tile's instance, or with an alpha byte past 255,
 *   fails the run with a message saying so, instead of a wrong image. */
#include "pipelines/hybrid/internal.h"
#include "pipelines/raster/alpha.h"
#include "pipelines/raytrace/sums.h"
#include "pipelines/stages.h"
#include "shaders/color.h"
#include "tests/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 20
#define H 12

typedef enum fault { FAULT_NONE, FAULT_TILE, FAULT_ALPHA } fault;
static fault injected;
static pl_scene_data data;                /* cornell's: the frame needs a scene */

/* Pixel p's base value per channel (sent in two halves, a packet each) and its layers,
 * the higher primitive first: p % 3 of them, primitive 7 (alpha 128, red) and primitive
 * 3 (alpha 64, green). */
static void base_of(int p, float rgb[3])
{
    rgb[0] = 0.05f + 0.04f * (float)(p % 7);
    rgb[1] = 0.3f;
    rgb[2] = 0.9f - 0.05f * (float)(p % 5);
}

static const plh_contrib layer_of[2] = {{0, 8, {0.9f, 0.1f, 0.1f}, 128}, {0, 4, {0.1f, 0.8f, 0.2f}, 64}};

typedef struct source_state { plh_tile_keys keys; } source_state;

static void *source_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    source_state *s = malloc(sizeof *s);
    if (s && plh_tile_keys_of(i, "out", &s->keys, err)) return s;
    free(s);
    return NULL;
}

static void send(gr_ctx *c, const source_state *s, plh_contrib k)
{
    uint64_t key = plh_tile_key(k.index, &s->keys);
    if (injected == FAULT_TILE && k.index == W * H - 1) key = 0;   /* the last tile's pixel to tile 0 */
    if (injected == FAULT_ALPHA && k.index == 5 && k.layer) k.alpha8 = 300;
    gr_window w;
    gr_reserve_out_key(c, 0, 1, key, &w);
    *(plh_contrib *)plrt_elems(w.mem) = k;
    gr_set_count(w.mem, 1);
    gr_commit_out(c, 0, 1);
}

static void source_main(gr_ctx *c)
{
    const source_state *s = gr_user(c);
    for (uint32_t p = 0; p < W * H; p++) {
        float rgb[3], half[3];
        base_of((int)p, rgb);
        for (int ch = 0; ch < 3; ch++) half[ch] = rgb[ch] * 0.5f;
        for (int part = 0; part < 2; part++) send(c, s, (plh_contrib){p, 0, {half[0], half[1], half[2]}, 255});
        for (uint32_t l = 0; l < p % 3; l++)
            for (int part = 0; part < 2; part++) {
                plh_contrib k = layer_of[l];
                k.index = p;
                for (int ch = 0; ch < 3; ch++) k.v[ch] *= 0.5f;
                send(c, s, k);
            }
    }
}

static const cp_port source_ports[] = {{"out", GR_BIND_OUTPUT, "hybrid.contributions", NULL}};
static const cp_param source_params[] = {
    {"tile", CP_INT, "8", 1, 64, NULL}, {"msaa", CP_INT, "1", 1, 8, NULL}};
static const cp_stage_type source_type = {"test.layers", "crafted layered contributions", GR_THREAD,
                                          false, source_ports, 1, source_params, 2, source_main,
                                          source_create, NULL, free, NULL, 0};

static const char graph[] =
    "[graph]\nname = om-test\n"
    "[queue contributions]\nformat = hybrid.contributions\nelements = 64\ncapacity = 4\nsubqueues = 6\n"
    "[stage source]\ntype = test.layers\ntile = 8\nout = contributions\n"
    "[stage om]\ntype = hybrid.om\ntile = 8\nin = contributions\n";

/* The bytes of pixel p: the base's sum encoded, its layers blended in primitive order. */
static uint32_t expected(int p)
{
    float rgb[3];
    base_of(p, rgb);
    uint32_t dst = 0;
    for (int ch = 0; ch < 3; ch++) {
        const int64_t sum = 2 * plrt_to_fixed(rgb[ch] * 0.5f);
        dst |= (uint32_t)sh_srgb8_lookup((float)((double)sum / PL_FIXED_ONE)) << (8 * ch);
    }
    for (int l = p % 3 - 1; l >= 0; l--) {
        uint32_t src = 0;
        for (int ch = 0; ch < 3; ch++) {
            const int64_t sum = 2 * plrt_to_fixed(layer_of[l].v[ch] * 0.5f);
            src |= (uint32_t)sh_srgb8_lookup((float)((double)sum / PL_FIXED_ONE)) << (8 * ch);
        }
        dst = plr_blend(dst, src, layer_of[l].alpha8);
    }
    return dst;
}

/* Runs the graph at `workers`; the image into img (W x H RGBA) and true, or false with
 * the run's message in err. */
static bool render(unsigned workers, uint8_t *img, char err[CP_ERR_MAX])
{
    cp_registry *r = pl_registry_new(err);
    bool ok = r && !cp_register_stage(r, &source_type, err);
    cp_graph *g = ok ? cp_graph_new(r) : NULL;
    ok = g && !cp_graph_load_text(g, graph, "om-test", err);
    pl_frame f;
    ok = ok && pl_frame_init(&f, &data, W, H, SH_AOV_COLOR, err);
    gr_graph *run = NULL;
    if (ok) {
        gr_launch_opts o = {.workers = workers};
        run = pl_render_frame(g, &f, &o, err);
        if (run) memcpy(img, pl_frame_image(&f), (size_t)W * H * 4);
        gr_graph_destroy(run);
        pl_frame_free(&f);
    }
    cp_graph_free(g);
    cp_registry_free(r);
    return run != NULL;
}

static void test_layers_in_primitive_order(void)
{
    uint8_t img[W * H * 4];
    char err[CP_ERR_MAX];
    injected = FAULT_NONE;
    for (unsigned workers = 1; workers <= 2; workers++) {
        CHECK_MSG(render(workers, img, err), "%s", err);
        int wrong = 0;
        for (int p = 0; p < W * H; p++) {
            const uint32_t want = expected(p);
            for (int ch = 0; ch < 3; ch++) wrong += img[p * 4 + ch] != (uint8_t)(want >> (8 * ch));
        }
        CHECK_MSG(wrong == 0, "%u workers: %d channels differ", workers, wrong);
    }
}

static void test_bad_contributions_refused(void)
{
    uint8_t img[W * H * 4];
    char err[CP_ERR_MAX];
    injected = FAULT_TILE;
    CHECK_MSG(!render(2, img, err) && strstr(err, "outside this Output Merger's"),
              "wrong tile: %s", err);
    injected = FAULT_ALPHA;
    CHECK_MSG(!render(2, img, err) && strstr(err, "alpha byte 300"), "alpha 300: %s", err);
    injected = FAULT_NONE;
}

int main(void)
{
    char err[CP_ERR_MAX];
    sc_scene *scene;
    sc_geometry geo;
    if (sc_load("cornell", &scene, err) || sc_flatten(scene, &geo, err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    pl_scene_data_init(&data, scene, &geo);
    sh_srgb_init();
    RUN(test_layers_in_primitive_order);
    RUN(test_bad_contributions_refused);
    pl_scene_data_free(&data);
    sc_geometry_free(&geo);
    sc_free(scene);
    return check_finish();
}

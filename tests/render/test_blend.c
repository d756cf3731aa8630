/* rt.blend's sums: exact whatever the values and the order. A test stage sends every
 * pixel contributions of every kind (single ones beyond 2^32 in fixed point, one beyond
 * the clamp, running sums past 256, negative ones and negative totals, ordinary ones),
 * in a different order per pixel, and the image must be the encoding of each pixel's
 * exact sum (plrt_to_fixed per contribution, summed in 64 bits), at 1 and 2 workers and
 * with 1 or 4 Blend bands. */
#include "pipelines/raytrace/packets.h"
#include "pipelines/raytrace/sums.h"
#include "pipelines/stages.h"
#include "shaders/color.h"
#include "tests/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 24
#define H 10
#define MAX_TERMS 220

/* Pixel p's contributions (one channel value each; the three channels get v, v / 2 and
 * -v / 4 + 0.125 so each channel sees another mix of signs), in the order sent. */
static int terms_of(int p, float *v)
{
    int n = 0;
    switch (p % 6) {
    case 0: v[n++] = 300.25f; v[n++] = -300.0f; break;             /* each beyond 2^32 */
    case 1:
        for (int i = 0; i < 200; i++) v[n++] = 2.0f;                /* the sum passes 256 */
        v[n++] = -399.5f;
        break;
    case 2: v[n++] = 0.1f; v[n++] = 0.2f; v[n++] = 0.3f; break;    /* ordinary */
    case 3: v[n++] = -5.0f; v[n++] = 1.0f; break;                  /* a negative total */
    case 4: v[n++] = 1000.0f; v[n++] = 70000.0f; break;            /* bright; one clamped */
    default: v[n++] = 0.75f; break;
    }
    for (int i = n - 1; i > 0; i--) {                              /* an order of its own */
        int j = (p * 7 + i * 13) % (i + 1);
        float t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    return n;
}

static void channels_of(float v, float rgb[3])
{
    rgb[0] = v;
    rgb[1] = v * 0.5f;
    rgb[2] = -v * 0.25f + 0.125f;
}

typedef struct source_state { plrt_blend_keys keys; } source_state;

static void *source_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    source_state *s = malloc(sizeof *s);
    if (!s || !plrt_blend_keys_of(i->frame, cp_port_subqueues(i, "out"), &s->keys)) {
        free(s);
        snprintf(err, CP_ERR_MAX, "no keys");
        return NULL;
    }
    return s;
}

/* Every pixel's contributions, in packets of at most `elements`, each to its key. */
static void source_main(gr_ctx *c)
{
    const source_state *s = gr_user(c);
    float v[MAX_TERMS];
    for (int p = 0; p < W * H; p++) {
        int n = terms_of(p, v);
        for (int at = 0; at < n;) {
            gr_window w;
            gr_reserve_out_key(c, 0, 1, plrt_blend_key((uint32_t)p, &s->keys), &w);
            plrt_contrib *k = plrt_elems(w.mem);
            int m = 0;
            for (; at < n && m < 64; at++, m++) {
                float rgb[3];
                channels_of(v[at], rgb);
                plrt_set_contrib(&k[m], (uint32_t)p, rgb);
            }
            gr_set_count(w.mem, (uint32_t)m);
            gr_commit_out(c, 0, 1);
        }
    }
}

static const cp_port source_ports[] = {{"out", GR_BIND_OUTPUT, "rt.contributions", NULL}};
static const cp_stage_type source_type = {"test.contributions", "crafted contributions",
                                          GR_THREAD, false, source_ports, 1, NULL, 0,
                                          source_main, source_create, NULL, free, NULL, 0};

static const char *graph_text(int bands)
{
    static char text[512];
    snprintf(text, sizeof text,
             "[graph]\nname = blend-test\n"
             "[queue contributions]\nformat = rt.contributions\nelements = 64\ncapacity = 4\n"
             "subqueues = %d\n"
             "[stage source]\ntype = test.contributions\nout = contributions\n"
             "[stage blend]\ntype = rt.blend\nin = contributions\n", bands);
    return text;
}

/* The byte rt.blend must write for channel ch of pixel p: its exact sum, encoded. */
static uint8_t expected(int p, int ch)
{
    float v[MAX_TERMS];
    int n = terms_of(p, v);
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        float rgb[3];
        channels_of(v[i], rgb);
        sum += plrt_to_fixed(rgb[ch]);
    }
    return sh_srgb8_lookup((float)((double)sum / PL_FIXED_ONE));
}

static void test_sums_exact(void)
{
    char err[CP_ERR_MAX];
    sc_scene *scene;
    sc_geometry geo;
    if (sc_load("cornell", &scene, err) || sc_flatten(scene, &geo, err)) { CHECK_MSG(0, "%s", err); return; }
    pl_scene_data data;
    pl_scene_data_init(&data, scene, &geo);
    sh_srgb_init();
    int wrong = 0, checked = 0;
    for (int bands = 1; bands <= 4; bands *= 4)
        for (unsigned workers = 1; workers <= 2; workers++) {
            cp_registry *r = pl_registry_new(err);
            CHECK_MSG(r && !cp_register_stage(r, &source_type, err), "%s", err);
            cp_graph *g = cp_graph_new(r);
            CHECK_MSG(!cp_graph_load_text(g, graph_text(bands), "blend-test", err), "%s", err);
            pl_frame f;
            CHECK(pl_frame_init(&f, &data, W, H, SH_AOV_COLOR, err));
            gr_launch_opts o = {.workers = workers};
            gr_graph *run = pl_render_frame(g, &f, &o, err);
            CHECK_MSG(run, "%s", err);
            const uint8_t *img = run ? pl_frame_image(&f) : NULL;
            for (int p = 0; img && p < W * H; p++)
                for (int ch = 0; ch < 3; ch++, checked++)
                    wrong += img[p * 4 + ch] != expected(p, ch);
            gr_graph_destroy(run);
            pl_frame_free(&f);
            cp_graph_free(g);
            cp_registry_free(r);
        }
    CHECK_MSG(wrong == 0 && checked == 4 * W * H * 3, "%d of %d channels differ", wrong, checked);
    pl_scene_data_free(&data);
    sc_geometry_free(&geo);
    sc_free(scene);
}

int main(void)
{
    RUN(test_sums_exact);
    return check_finish();
}

/* The hybrid graphs (pipelines/graphs/hybrid.graph, the Extended Direct3D, and
 * hybrid-visibility.graph): the same picture as the ray tracer (at least 99% of pixels
 * within 2/255 on every channel, on built-in scenes and ../shared/scenes meshes and
 * awkward scenes (no light, a light inside the mesh, the camera inside it), with 0 and 1
 * bounces), bit-identical images at 1, 2, 3 and 8 workers, and the ray tracer's shadow
 * ray counts; no singleton stage (nor in the default raster graph). */
#include "pipelines/stages.h"
#include "tests/check.h"
#include "tests/image_agreement.h"
#include "tests/scene_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W 160
#define H 120

static bool load(loaded *l, const char *path)
{
    char err[SC_ERR_MAX];
    if (sc_load(path, &l->s, err) || sc_flatten(l->s, &l->g, err)) {
        fprintf(stderr, "  %s: %s\n", path, err);
        return false;
    }
    pl_scene_data_init(&l->data, l->s, &l->g);
    return true;
}

/* Renders graph `name` with `bounces` into rgba; returns the frame's counter `ctr`. */
static uint64_t render(loaded *l, const char *name, int bounces, unsigned workers, uint8_t *rgba,
                       const char *ctr)
{
    char err[CP_ERR_MAX], v[16];
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = cp_graph_new(r);
    snprintf(v, sizeof v, "%d", bounces);
    CHECK_MSG(!cp_graph_load_text(g, pl_builtin_graph(name), name, err), "%s", err);
    CHECK(!cp_put(g, "graph", "bounces", v, "test", err));
    pl_frame f;
    uint64_t count = 0;
    CHECK(pl_frame_init(&f, &l->data, W, H, SH_AOV_COLOR, err));
    gr_launch_opts o = {.workers = workers};
    gr_graph *run = pl_render_frame(g, &f, &o, err);
    CHECK_MSG(run, "%s: %s", name, err);
    if (run) {
        memcpy(rgba, pl_frame_image(&f), (size_t)W * H * 4);
        count = pl_frame_count(&f, ctr);
    }
    gr_graph_destroy(run);
    pl_frame_free(&f);
    cp_graph_free(g);
    cp_registry_free(r);
    return count;
}

/* Awkward scenes, written to a temporary directory: no light in the file, a light inside
 * the geometry beside one outside, the camera inside the mesh (most of the view is its
 * inside, some triangles cross the near plane), seven lights around the mesh (a PS task's
 * surfaces face from one to seven of them, so their shadow rays overrun the runs a
 * pixel shader gathers them in, 64 rays, at every count: hit_out.c's add_shadows). */
static const char *const awkward[][2] = {
    {"no-light.scene", "[scene]\nname = no-light\n[camera]\neye = 0,6,14\ntarget = 0,1.5,0\n"
                       "up = 0,1,0\nfovy = 45\n[mesh.pot]\nbuiltin = teapot\n"},
    {"inside.scene", "[scene]\nname = inside\n[camera]\neye = 0,1.5,0\ntarget = 5,1.5,0\n"
                     "up = 0,1,0\nfovy = 70\n[light.in]\nposition = 0.2,1.4,0.1\n"
                     "color = 1,1,1\n[light.out]\nposition = 6,12,8\ncolor = 1,1,1\n"
                     "[mesh.pot]\nbuiltin = teapot\n"},
    {"lights.scene", "[scene]\nname = lights\n[camera]\neye = 0,6,14\ntarget = 0,1.5,0\n"
                     "up = 0,1,0\nfovy = 45\n[mesh.pot]\nbuiltin = teapot\n"
                     "[light.a]\nposition = 8,6,0\ncolor = 0.3,0.2,0.1\n"
                     "[light.b]\nposition = -8,6,0\ncolor = 0.1,0.3,0.2\n"
                     "[light.c]\nposition = 0,6,8\ncolor = 0.2,0.1,0.3\n"
                     "[light.d]\nposition = 0,6,-8\ncolor = 0.2,0.2,0.2\n"
                     "[light.e]\nposition = 0,12,0\ncolor = 0.3,0.3,0.1\n"
                     "[light.f]\nposition = 5,-4,5\ncolor = 0.1,0.1,0.3\n"
                     "[light.g]\nposition = -5,2,-5\ncolor = 0.3,0.1,0.1\n"},
};

static bool write_awkward(char dir[64], int k, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, awkward[k][0]);
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fputs(awkward[k][1], f);
    return fclose(f) == 0;
}

static const char *const hybrids[] = {"hybrid", "hybrid-visibility"};

static void test_same_picture_as_ray_tracer(void)
{
    char dir[64] = "/tmp/test_hybrid.XXXXXX", inside[128], no_light[128], lights[128];
    CHECK(mkdtemp(dir) != NULL);
    CHECK(write_awkward(dir, 0, no_light, sizeof no_light) && write_awkward(dir, 1, inside, sizeof inside) &&
          write_awkward(dir, 2, lights, sizeof lights));
    const char *const scenes[] = {"teapot", "courtyard", "fairy", "cornell",
                                  "../shared/scenes/bunny.obj",
                                  "../shared/scenes/CornellBox-Original.obj", no_light, inside, lights};
    uint8_t *rt = malloc((size_t)W * H * 4), *hy = malloc((size_t)W * H * 4);
    for (size_t i = 0; rt && hy && i < sizeof scenes / sizeof *scenes; i++) {
        loaded l;
        if (!load(&l, scenes[i])) { CHECK(0); continue; }
        for (int bounces = 0; bounces <= 1; bounces++) {
            uint64_t rt_shadow = render(&l, "raytrace", bounces, 2, rt, "rays.shadow");
            for (int k = 0; k < 2; k++) {
                uint64_t hy_shadow = render(&l, hybrids[k], bounces, 2, hy, "rays.shadow");
                double a = agreement_within(rt, hy, W * H, 2);
                printf("    %s, %s, %d bounce(s): %.4f of pixels within 2/255, shadow rays %llu vs %llu\n",
                       hybrids[k], scenes[i], bounces, a, (unsigned long long)hy_shadow,
                       (unsigned long long)rt_shadow);
                CHECK_MSG(a >= 0.99, "%s, %s bounces %d: agreement %.4f", hybrids[k], scenes[i], bounces, a);
                /* shadow rays differ only where primary visibility does: a few per mille */
                CHECK(hy_shadow > rt_shadow * 0.98 && hy_shadow < rt_shadow * 1.02 + 10);
            }
        }
        unload(&l);
    }
    free(rt);
    free(hy);
    remove(inside);
    remove(no_light);
    remove(lights);
    rmdir(dir);
}

static void test_deterministic(void)
{
    loaded l;
    if (!load(&l, "courtyard")) { CHECK(0); return; }
    uint8_t *ref = malloc((size_t)W * H * 4), *img = malloc((size_t)W * H * 4);
    static const unsigned workers[] = {2, 3, 8};
    for (int h = 0; ref && img && h < 2; h++) {
        render(&l, hybrids[h], 1, 1, ref, "rays.shadow");
        for (int k = 0; k < 3; k++) {
            render(&l, hybrids[h], 1, workers[k], img, "rays.shadow");
            CHECK_MSG(!memcmp(ref, img, (size_t)W * H * 4), "%s at %u workers differs from 1",
                      hybrids[h], workers[k]);
        }
    }
    free(ref);
    free(img);
    unload(&l);
}

/* Neither hybrid graph nor the default raster graph has a singleton: their raster
 * stages are copies per group (ia-N, vs-N, zraster-N / bin-N) or instances per tile, the
 * ray-tracing half's stages are Shaders and its Blend (the Output Merger, om) an
 * instance per subqueue (both subqueues get pixels here: one band per row of tiles). */
static void test_no_singleton(void)
{
    loaded l;
    if (!load(&l, "teapot")) { CHECK(0); return; }
    static const char *const graphs[] = {"hybrid", "hybrid-visibility", "raster"};
    for (int k = 0; k < 3; k++) {
        char err[CP_ERR_MAX];
        cp_registry *r = pl_registry_new(err);
        cp_graph *g = cp_graph_new(r);
        CHECK_MSG(!cp_graph_load_text(g, pl_builtin_graph(graphs[k]), graphs[k], err), "%s", err);
        pl_frame f;
        CHECK(pl_frame_init(&f, &l.data, W, H, SH_AOV_COLOR, err));
        gr_launch_opts o = {.workers = 2};
        gr_graph *run = pl_render_frame(g, &f, &o, err);
        const gr_stats *st = run ? gr_get_stats(run) : NULL;
        CHECK_MSG(st, "%s", err);
        for (int i = 0; st && i < st->nstages; i++) {
            const gr_stage_stats *s = &st->stages[i];
            CHECK_MSG(!s->singleton, "%s: stage '%s' is a singleton", graphs[k], s->name);
            if (!strcmp(s->name, "sampler")) CHECK(s->kind == GR_SHADER);
            if (!strcmp(s->name, "blend"))   /* 120 rows: 2 rows of 64-pixel tiles, 2 bands */
                CHECK_MSG(s->instances == 2, "blend: %llu instances", (unsigned long long)s->instances);
            if (!strcmp(s->name, "om"))      /* one per 64-pixel tile of 160x120: 3 x 2 */
                CHECK_MSG(s->instances == 6, "om: %llu instances", (unsigned long long)s->instances);
        }
        CHECK(st && st->serial_share == 0);
        gr_graph_destroy(run);
        pl_frame_free(&f);
        cp_graph_free(g);
        cp_registry_free(r);
    }
    unload(&l);
}

int main(void)
{
    RUN(test_same_picture_as_ray_tracer);
    RUN(test_deterministic);
    RUN(test_no_singleton);
    return check_finish();
}

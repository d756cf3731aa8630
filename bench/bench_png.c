/* PNG encoding benchmark: the renderers' encoder (output/png_encode.c) against
 * stb_image_write's, which it replaced, on 1024x1024 ray-traced frames of teapot, fairy
 * and ../shared/scenes/bunny.obj. Prints "name value unit": each one's encode time
 * (median of 5) and file size, ours at 1, 2, 4 ... threads up to the hardware's, and
 * ours / stb's time at each. */
#include "output/png_encode.h"
#include "pipelines/frame_memory.h"
#include "pipelines/raytrace/raytrace.h"
#include "raytracer/bvh.h"
#include "tools/common/measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

#define RUNS 5

/* A 1024x1024 ray-traced frame of the scene at `path`, or NULL. */
static uint8_t *render(const char *path, plrt_config *c)
{
    sc_scene *s;
    sc_geometry g;
    char err[SC_ERR_MAX];
    if (sc_load(path, &s, err) || sc_flatten(s, &g, err)) {
        printf("# %s: %s\n", path, err);
        return NULL;
    }
    rt_bvh *bvh = rt_bvh_build(g.positions, g.indices, g.ntriangles, NULL);
    plrt_counts n;
    uint8_t *img = malloc((size_t)c->width * c->height * 4);
    gr_graph *done = img && bvh ? plrt_render(s, &g, bvh, c, img, &n, err) : NULL;
    if (!done) {
        printf("# %s: %s\n", path, img && bvh ? err : "out of memory");
        free(img);
        img = NULL;
    }
    gr_graph_destroy(done);
    rt_bvh_free(bvh);
    sc_geometry_free(&g);
    sc_free(s);
    return img;
}

/* Median time of RUNS encodes by ours (threads > 0) or stb's (threads 0); its size. */
static double encode_ms(const uint8_t *img, int w, int h, unsigned threads, size_t *bytes)
{
    double t[RUNS];
    for (int i = 0; i < RUNS; i++) {
        double t0 = io_now_ms();
        int len = 0;
        uint8_t *png = threads ? io_encode_png_on(w, h, img, threads, bytes)
                               : stbi_write_png_to_mem(img, w * 4, w, h, 4, &len);
        t[i] = io_now_ms() - t0;
        if (!threads) *bytes = (size_t)len;
        if (!png) { fprintf(stderr, "bench_png: encoding failed\n"); exit(1); }
        free(png);
    }
    qsort(t, RUNS, sizeof *t, io_cmp_double);
    return io_median_sorted(t, RUNS);
}

static void bench_scene(const char *label, const char *path, unsigned maxw)
{
    plrt_config c;
    plrt_config_default(&c);
    uint8_t *img = render(path, &c);
    if (!img) return;
    size_t bytes;
    double stb = encode_ms(img, c.width, c.height, 0, &bytes);
    printf("stb_png_encode_ms_%s %.2f ms\n", label, stb);
    printf("stb_png_bytes_%s %zu bytes\n", label, bytes);
    for (unsigned t = 1; t <= maxw; t *= 2) {
        double ours = encode_ms(img, c.width, c.height, t, &bytes);
        printf("png_encode_ms_%s_%ut %.2f ms\n", label, t, ours);
        printf("png_encode_vs_stb_%s_%ut %.3f ratio\n", label, t, ours / stb);
    }
    printf("png_bytes_%s %zu bytes\n", label, bytes);
    free(img);
}

int main(void)
{
    pl_keep_freed_memory();
    long hw = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned maxw = hw > 0 ? (unsigned)hw : 1;
    bench_scene("teapot", "teapot", maxw);
    bench_scene("fairy", "fairy", maxw);
    bench_scene("bunny", "../shared/scenes/bunny.obj", maxw);
    return 0;
}

/* sharpen.c — a plugin image-space stage: unsharp masking, after the graph has made the
 * image (docs/image-space.md).
 *
 * Stage type "sharpen": each pixel moves away from the mean of the (2 radius + 1)^2
 * pixels around it, in linear colour:
 *
 *   out = in + amount * (in - box_mean(in, radius)),   clamped at 0
 *
 * The halo is its `radius` (cp_image_stage_type.halo_of reads it from the state), so
 * the runner gives every tile `radius` pixels of its neighbours, final, and a second
 * buffer to write into; under gramps-render-mpi each chunk is rendered `radius` rows
 * wider. The sum runs in a fixed order per pixel: the image is the same for any worker
 * count, scheduler or tiling. examples/graphs/raster-sharpen.graph adds it to the
 * raster graph:
 *
 *   build/bin/gramps-render --graph examples/graphs/raster-sharpen.graph -o s.png ../shared/scenes/bunny.obj
 *   ... --set sharpen.radius=2 --set sharpen.amount=1.5
 *
 * Build, in the source tree or against an installed copy:
 *   cc -shared -fPIC $(pkg-config --cflags gramps-render) sharpen.c -o sharpen.so */
#include "compose/compose.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct sharpen_state { int radius; float amount; } sharpen_state;

static void *sharpen_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    sharpen_state *s = malloc(sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    *s = (sharpen_state){(int)cp_int(i, "radius"), (float)cp_float(i, "amount")};
    return s;
}

static int sharpen_halo(const void *state) { return ((const sharpen_state *)state)->radius; }

static void sharpen_pixel(const sharpen_state *s, const cp_image_tile *t, int x, int y)
{
    float sum[3] = {0, 0, 0};
    for (int dy = -s->radius; dy <= s->radius; dy++)
        for (int dx = -s->radius; dx <= s->radius; dx++) {
            const float *p = cp_image_src(t, x + dx, y + dy);   /* clamped to the image */
            for (int ch = 0; ch < 3; ch++) sum[ch] += p[ch];
        }
    float n = (float)((2 * s->radius + 1) * (2 * s->radius + 1));
    const float *in = cp_image_src(t, x, y);
    float *o = cp_image_dst(t, x, y);
    for (int ch = 0; ch < 3; ch++) {
        float v = in[ch] + s->amount * (in[ch] - sum[ch] / n);
        o[ch] = v > 0.0f ? v : 0.0f;
    }
    o[3] = in[3];
}

static void sharpen_tile(void *state, const cp_image_tile *t)
{
    for (int y = t->y0; y < t->y1; y++)
        for (int x = t->x0; x < t->x1; x++) sharpen_pixel(state, t, x, y);
}

static const cp_param params[] = {
    {"radius", CP_INT, "1", 1, 64, "the box's half-width in pixels, which is the halo"},
    {"amount", CP_FLOAT, "1", 0, 100, "how far each pixel moves away from its box's mean"},
};

static const cp_resource_use uses[] = {
    {"post", CP_READS | CP_WRITES, "the linear image (input or output, as they swap)"},
    {"post-swap", CP_READS | CP_WRITES, "the second image a stage with a halo writes into"},
    {"hdr-color", CP_READS, "the sinks' linear colour, the first stage's input"},
};

static const cp_image_stage_type sharpen_type = {
    {.name = "sharpen", .help = "unsharp masking: each pixel away from its box's mean; "
     "halo radius", .create = sharpen_create, .destroy = free, .params = params, .nparams = 2,
     .resources = uses, .nresources = 3},
    1, sharpen_halo, sharpen_tile};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_image_stage(r, &sharpen_type, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "sharpen", register_stages};

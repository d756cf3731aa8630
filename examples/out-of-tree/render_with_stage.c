/* render_with_stage.c — built against an installed gramps (Makefile beside it): the
 * thesis' ordered raster graph (its fragments flow from PS to OM) plus its own Shader, inverting each shaded fragment's colour between the pixel
 * shader and the output merger; one frame of the teapot as a PNG. [OUT.png [SIZE]] */
#include "pipelines/raster/packets.h"
#include "pipelines/stages.h"
#include "output/image_out.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* In place, so the packet keeps its tile key and its place in primitive order. Fragments
 * the PS killed by early-Z (z = INFINITY) are skipped by the OM and left alone here. */
static void invert_main(gr_ctx *c)
{
    frag_pkt *p = gr_input(c, NULL);
    for (uint32_t i = 0; i < p->count; i++)
        if (p->out.z[i] != INFINITY) p->out.rgba[i] ^= 0x00ffffffu;   /* RGB, not alpha */
}

static const cp_port invert_ports[] = {{"in", GR_BIND_INPUT, "raster.fragments", NULL},
                                       {"out", GR_BIND_INPLACE, "raster.fragments", NULL}};
static const cp_stage_type invert = {.name = "example.invert", .kind = GR_SHADER,
    .ports = invert_ports, .nports = 2, .main = invert_main};

/* rast -> fragments -> ps -> shaded -> invert -> tiles -> om: one ordered chain, two
 * Shaders; shaded holds one fragment packet per ps task like fragments does. */
static const char *const edits[][3] = {
    {"queue shaded", "format", "raster.fragments"}, {"queue shaded", "capacity", "64"},
    {"queue shaded", "ordered", "true"}, {"stage ps", "out", "shaded"},
    {"stage invert", "type", "example.invert"}, {"stage invert", "in", "shaded"},
    {"stage invert", "out", "tiles"}};

static int fail(const char *msg) { fprintf(stderr, "render_with_stage: %s\n", msg); return 1; }
int main(int argc, char **argv)
{
    const char *png = argc > 1 ? argv[1] : "inverted.png";
    int size = argc > 2 ? atoi(argv[2]) : 256;
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    if (!r || cp_register_stage(r, &invert, err)) return fail(err);
    cp_graph *g = cp_graph_new(r);
    if (cp_graph_load_text(g, pl_builtin_graph("raster-ordered"), "raster-ordered", err))
        return fail(err);
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++)
        if (cp_put(g, edits[i][0], edits[i][1], edits[i][2], "main", err)) return fail(err);
    sc_scene *s;                      /* the scene, its triangles, the frame's buffers */
    sc_geometry geo; pl_scene_data d; pl_frame f;
    if (sc_load("teapot", &s, err) || sc_flatten(s, &geo, err)) return fail(err);
    pl_scene_data_init(&d, s, &geo);
    if (!pl_frame_init(&f, &d, size, size, SH_AOV_COLOR, err)) return fail(err);
    gr_graph *done = pl_render_frame(g, &f, &(gr_launch_opts){0}, err);
    if (!done) return fail(err);
    size_t n; uint8_t *bytes = io_encode_png(size, size, pl_frame_image(&f), &n);
    FILE *out = bytes ? fopen(png, "wb") : NULL;
    if (!out || fwrite(bytes, 1, n, out) != n || fclose(out)) return fail("cannot write the PNG");
    free(bytes), gr_graph_destroy(done);
    pl_frame_free(&f), pl_scene_data_free(&d), sc_geometry_free(&geo), sc_free(s);
    cp_graph_free(g), cp_registry_free(r);
    return 0;
}

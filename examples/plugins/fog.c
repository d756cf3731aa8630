/* fog.c — a plugin stage for the raster graph: depth fog between the PS and the OM.
 *
 *   rast -> fragments (ordered) -> ps -> shaded (ordered) -> fog -> tiles (ordered set) -> om
 *
 * Stage type "fog" (Shader): input raster.fragments after the PS, output the same packet
 * in place (GR_BIND_INPLACE). The PS forwards each packet in place with the tile key Rast
 * gave it; fog forwards it again, inheriting that key, into the per-tile set, so the OM
 * still sees every tile's fragments in primitive order (the chain rast -> ... -> om stays
 * ordered: both queues after rast are `ordered = true`). examples/graphs/raster-fog.graph
 * wires it.
 *
 * Each live fragment (out.z finite; INFINITY means early-Z killed it and the OM skips it)
 * is blended toward the fog colour by its distance along the view axis, as a fraction t
 * of the scene's depth range (0: the near plane, 1: the far plane, both from the frame's
 * raster environment):
 *   linear (density = 0):  fog = (t - start) / (end - start), clamped to [0, 1]
 *   exponential:           fog = 1 - exp(-density * (t - start)) beyond start
 * What no geometry covers is infinitely far, so all fog: the stage makes the fog colour
 * the frame's background (pl_frame_set_background), and the horizon fades into the sky
 * instead of ending at a hard edge.
 * The amount is rounded to 1/256 and blended in integers on the sRGB-encoded bytes, so a
 * fragment's colour is a function of its own depth and colour only: the image is the same
 * for any worker count. Other outputs than colour (--aov) pass through unchanged.
 *
 * Build, in the source tree or against an installed copy:
 *   cc -shared -fPIC $(pkg-config --cflags gramps-render) fog.c -o fog.so
 * (no libraries: gramps-render provides the symbols). */
#include "compose/compose.h"
#include "pipelines/frame.h"
#include "pipelines/raster/packets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct fog_state {
    bool active;                          /* colour output: false passes packets through */
    float near, far;                      /* the frame's clip planes along the view axis */
    float start, end, density;
    uint32_t rgb[3];                      /* the fog colour, sRGB-encoded bytes */
    float linear[3];                      /* the same, linear: the background's */
} fog_state;

/* "r,g,b" with each in [0, 1]; false when it is not. */
static bool parse_color(const char *text, float rgb[3])
{
    char tail;
    return sscanf(text, "%f , %f , %f %c", &rgb[0], &rgb[1], &rgb[2], &tail) == 3 &&
           rgb[0] >= 0 && rgb[0] <= 1 && rgb[1] >= 0 && rgb[1] <= 1 && rgb[2] >= 0 && rgb[2] <= 1;
}

/* Checks what the parameter table cannot (a colour's text, start < end) and that the
 * program runs renderer graphs (a frame with a raster environment). */
static bool fog_init(fog_state *s, const cp_stage_init *i, char err[CP_ERR_MAX])
{
    float rgb[3];
    if (!i->frame) {
        snprintf(err, CP_ERR_MAX, "stage '%s': fog needs a renderer frame (run it with "
                 "gramps-render)", i->name);
        return false;
    }
    if (!parse_color(cp_string(i, "color"), rgb)) {
        snprintf(err, CP_ERR_MAX, "stage '%s': color '%s' is not three numbers in [0, 1] "
                 "(r,g,b)", i->name, cp_string(i, "color"));
        return false;
    }
    s->start = (float)cp_float(i, "start");
    s->end = (float)cp_float(i, "end");
    s->density = (float)cp_float(i, "density");
    if (s->density == 0 && !(s->start < s->end)) {
        snprintf(err, CP_ERR_MAX, "stage '%s': linear fog needs start < end (start %g, "
                 "end %g)", i->name, s->start, s->end);
        return false;
    }
    for (int ch = 0; ch < 3; ch++) {
        s->rgb[ch] = sh_to_srgb8(rgb[ch]);
        s->linear[ch] = rgb[ch];
    }
    return true;
}

static void *fog_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    fog_state *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    if (!fog_init(s, i, err)) { free(s); return NULL; }
    pl_frame *f = i->frame;
    const sh_raster_env *env = pl_frame_raster_env(f);
    if (!env) { free(s); snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    s->active = f->aov == SH_AOV_COLOR;
    if (s->active) pl_frame_set_background(f, s->linear);
    s->near = env->near;
    s->far = env->far;
    return s;
}

/* Window depth (0 near .. 1 far, what the PS writes) back to the distance along the view
 * axis, as a fraction of [near, far]: the inverse of the VS's OpenGL projection
 * (shaders/raster_shading.c), z_ndc = A + B / d. */
static float view_fraction(const fog_state *s, float z)
{
    float n = s->near, f = s->far;
    float a = (f + n) / (f - n), b = -2.0f * f * n / (f - n);
    float d = b / ((2.0f * z - 1.0f) - a);
    return (d - n) / (f - n);
}

/* The fog's share of a fragment at window depth z, in 1/256ths (0..256). */
static uint32_t fog_amount(const fog_state *s, float z)
{
    float t = view_fraction(s, z), k;
    if (s->density > 0) k = t <= s->start ? 0.0f : 1.0f - expf(-s->density * (t - s->start));
    else k = (t - s->start) / (s->end - s->start);
    k = k < 0 ? 0 : k > 1 ? 1 : k;
    return (uint32_t)(k * 256.0f + 0.5f);
}

/* RGBA8 (R in the low byte) moved w/256 of the way to the fog colour; alpha kept. */
static uint32_t blend(const fog_state *s, uint32_t rgba, uint32_t w)
{
    uint32_t out = rgba & 0xff000000u;
    for (int ch = 0; ch < 3; ch++) {
        uint32_t c = (rgba >> (8 * ch)) & 0xff;
        out |= ((c * (256 - w) + s->rgb[ch] * w + 128) >> 8) << (8 * ch);
    }
    return out;
}

/* The packet goes on in place (the INPLACE output): nothing to reserve or copy. */
static void fog_main(gr_ctx *c)
{
    const fog_state *s = gr_user(c);
    frag_pkt *p = gr_input(c, NULL);
    if (!s->active) return;
    for (uint32_t i = 0; i < p->count; i++)
        if (isfinite(p->out.z[i])) p->out.rgba[i] = blend(s, p->out.rgba[i], fog_amount(s, p->out.z[i]));
}

static const cp_port fog_ports[] = {
    {"in", GR_BIND_INPUT, "raster.fragments", "after the PS: out.z and out.rgba"},
    {"out", GR_BIND_INPLACE, "raster.fragments", "the same packet, fogged"}};

static const cp_param fog_params[] = {
    {"color", CP_STRING, "0.6,0.65,0.7", 0, 0, "fog colour r,g,b (linear, each 0..1)"},
    {"start", CP_FLOAT, "0.2", 0, 1, "depth where fog begins (0 near plane .. 1 far plane)"},
    {"end", CP_FLOAT, "1", 0, 1, "linear fog: depth where the fog is complete"},
    {"density", CP_FLOAT, "0", 0, 1000, "exponential fog beyond start (0: linear)"}};

static const cp_stage_type fog_type = {
    "fog", "depth fog on shaded fragments, between raster.ps and raster.om", GR_SHADER, false,
    fog_ports, 2, fog_params, 4, fog_main, fog_create, NULL, free, NULL, 0};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_stage(r, &fog_type, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "fog", register_stages};

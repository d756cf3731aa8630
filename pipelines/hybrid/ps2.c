/* ps2.c — hybrid.ps2, the Extended Direct3D graph's second pixel shader (a Shader):
 * what Trace found for the pixel shaders' mirror and through rays (hybrid.shadow sends
 * the lit shadow rays' terms to the Output Merger itself). A hit is shaded as the ray tracer's
 * Shade shades it (sh_ray_shade_cone: textures at the ray cone's footprint), or, seen
 * through blended surfaces in draw order, as PS shades it (at its pixel's quad:
 * plh_out_hit), into its draw-order layer (packets.h) and, like the PS's surfaces,
 * sends its ambient term on, pushes its shadow rays to hybrid.shadow and its own mirror
 * and through rays back to Trace (the loop, bounded by `bounces`, the rays' weight and PLRT_MAX_LAYERS); a ray
 * that hits nothing adds the background. */
#include "pipelines/hybrid/internal.h"
#include "pipelines/hybrid/primary_hits.h"

#include <stdlib.h>

typedef struct ps2_state {
    plh_shader shader;
    plh_primary camera;                   /* msaa > 1: the camera and BVH for the rays on
                                             through a blended surface seen by one sample */
    plh_behind behind;
    plh_tally hits;
} ps2_state;

static void *ps2_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (!plh_agree_layout(i, err)) return NULL;
    ps2_state *s = malloc(sizeof *s);
    if (!s) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return NULL;
    }
    pl_frame *f = i->frame;
    const bool counted = plh_tally_init(&s->hits, f, "hybrid.ps2_hits");
    if (!counted) snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    if (counted && plh_shader_init(&s->shader, i, "ps2", err)) {
        s->camera = (plh_primary){f, NULL, f->data->geo, NULL, 1, 1.0f, plrt_camera_spread(f), 0,
                                   {NULL, NULL}, {NULL, NULL}};
        s->behind = (plh_behind){&s->camera, false};
        if (s->shader.msaa == 1 || (s->camera.bvh = pl_frame_use(i, "bvh", err))) return s;
        plh_shader_free(&s->shader);
    }
    plh_tally_free(&s->hits);
    free(s);
    return NULL;
}

/* The counters into the frame's, after a run. */
static void ps2_finish(void *state, void *frame)
{
    (void)frame;
    ps2_state *s = state;
    plh_tally_fold(&s->hits);
    plh_shader_fold(&s->shader);
}

static void ps2_destroy(void *state)
{
    ps2_state *s = state;
    plh_tally_free(&s->hits);
    plh_shader_free(&s->shader);
    free(s);
}

/* One mirror, through or behind ray, of layer `in`; returns 1 when it hit a surface. */
static uint32_t ps2_hit(gr_ctx *c, const ps2_state *st, const plrt_ray *h, plh_layer in, plh_out *o)
{
    const plh_shader *s = &st->shader;
    const plh_behind *behind = s->msaa > 1 ? &st->behind : NULL;
    if (h->hit.prim != RT_NO_HIT && h->hit.prim >= s->env->geo->ntriangles) {
        gr_assert_at(c, false, "a ray came with a primitive outside the mesh (is the input "
                     "hybrid.trace's output?)", __FILE__, __LINE__);
        return 0;
    }
    if (s->aov != SH_AOV_COLOR) {
        plh_out_aov(c, s, o, h, in, behind);
    } else if (h->hit.prim == RT_NO_HIT) {
        float bg[3];
        for (int ch = 0; ch < 3; ch++) bg[ch] = h->weight[ch] * s->env->background[ch];
        plh_out_contrib(c, s, o, h->pixel, plh_layer_of(s, h, in), bg);
    } else {
        /* a ray that begins a layer meets what the raster graphs rasterize at its pixel */
        plh_out_hit(c, s, o, h, in, in.begins, behind);
    }
    return h->hit.prim != RT_NO_HIT;
}

static void ps2_main(gr_ctx *c)
{
    const ps2_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in), hits = 0;
    const plh_ray *r = plrt_elems(in);
    plh_out o;
    plh_out_start(&o, &s->shader);
    gr_assert(c, n <= RT_PACKET_MAX);
    for (uint32_t i = 0; i < n && i < RT_PACKET_MAX; i++) {
        /* shadow rays go to hybrid.shadow, never through Trace */
        if (plh_ray_kind_of(&r[i]) == PLH_SHADOW) {
            gr_assert_at(c, false, "a shadow ray came (is the input hybrid.trace's output?)", __FILE__, __LINE__);
            continue;
        }
        const plrt_ray h = plh_ray_unpack(&r[i]);
        hits += ps2_hit(c, s, &h, plh_ray_layer_of(&r[i]), &o);
    }
    plh_out_flush(c, &s->shader, &o);
    gr_push_flush(c, PLH_OUT_RAYS);
    gr_push_flush(c, PLH_OUT_SHADOWS);
    plh_tally_add(&s->hits, c, hits);
}

static const cp_port ps2_ports[] = {
    {"in", GR_BIND_INPUT, "hybrid.rays", "hybrid.trace's output"},
    {"rays", GR_BIND_PUSH, "hybrid.rays", "the hits' mirror and through rays: back to hybrid.trace "
     "(the loop)"},
    {"shadow_rays", GR_BIND_PUSH, "hybrid.shadow-rays", "the hits' shadow rays: to hybrid.shadow"},
    {"out", GR_BIND_PUSH, "hybrid.contributions", "the hits' ambient terms (and, without shadows, their "
     "lights'), background, into their draw-order layers: to the Output Merger (hybrid.om), keyed by "
     "slot (plh_tile_key)"}};
static const cp_param ps2_params[] = {PLH_SHADER_PARAMS};
static const cp_resource_use ps2_uses[] = {
    {"textures", CP_READS, "the hits' textures at the ray cones' footprint"},
    {"bvh", CP_READS, "with msaa > 1: what one sample sees behind a blended surface"},
    PL_AGREED_USE("msaa and tile")};

const cp_stage_type plh_ps2_type = {
    "hybrid.ps2", "Extended Direct3D second pixel shader: shaded mirror and through hits to the Output "
    "Merger, their shadow rays to hybrid.shadow, their other rays back to Trace", GR_SHADER, false, ps2_ports, 4,
    ps2_params, 5, ps2_main, ps2_create, ps2_finish, ps2_destroy, ps2_uses, 3};

/* hybrid_stages.c — the hybrid graphs' stage types and format, and hybrid.visible, the
 * stage that joins the raster front end to the ray tracer in hybrid-visibility.graph:
 *
 *   hybrid.visible (Shader): runs of samples -> rays with their primary hits, taken from
 *   the visibility buffer the depth-only raster pass wrote instead of traversing the BVH
 *   (primary_hits.h), for rt.shade: wherever rasterization and ray casting agree on
 *   visibility, the hit, and hence every contribution, are the ray tracer's exactly.
 *
 * The Extended Direct3D graph's stages (hybrid.graph): ps.c, trace.c, shadow.c, ps2.c, om.c. */
#include "pipelines/hybrid/internal.h"
#include "pipelines/hybrid/primary_hits.h"

#include <stdlib.h>

typedef struct visible_state {
    plh_primary primary;
    plh_miss_sums misses;
} visible_state;

static void *visible_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    visible_state *s = malloc(sizeof *s);
    if (!s) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return NULL;
    }
    if (plh_primary_init(&s->primary, i, "out", 1, err) &&
        plh_miss_sums_init(&s->misses, i, &s->primary, cp_bool(i, "background"), err))
        return s;
    plh_primary_free(&s->primary);
    free(s);
    return NULL;
}

/* The counters into the frame's, after a run. */
static void visible_finish(void *state, void *frame)
{
    (void)frame;
    plh_primary_fold(&((visible_state *)state)->primary);
}

static void visible_destroy(void *state)
{
    plh_primary_free(&((visible_state *)state)->primary);
    free(state);
}

static void visible_main(gr_ctx *c)
{
    visible_state *s = gr_user(c);
    void *out = gr_output(c, 0);
    plrt_ray *rays = plrt_elems(out);
    const uint32_t n = plh_primary_hits(c, &s->primary, gr_input(c, NULL), &s->misses, rays);
    if (n) gr_set_count(out, n);
    else gr_discard(c, 0);               /* all background, summed: no Shade task */
}

static const cp_port visible_ports[] = {
    {"in", GR_BIND_INPUT, "rt.sample-runs", "runs of samples (raster.ztile's, once a tile is final)"},
    {"out", GR_BIND_OUTPUT, "rt.rays", "primary rays with their hits, ready to shade"}};
static const cp_param visible_params[] = {
    {"spp", CP_INT, "1", 1, PL_MAX_SPP, "samples per pixel (the sampler's)"},
    {"background", CP_BOOL, "false", 0, 0, "with spp 1, after raster.ztile (which clears the sums): add each miss's "
     "background to its pixel's sums here, as rt.shade would, instead of sending it on (out must go to rt.shade); "
     "otherwise misses go on as without it"}};

static const cp_resource_use visible_uses[] = {
    {"visibility", CP_READS, "raster.ztile's visible primitives"},
    {"bvh", CP_READS, "traces where the raster pass missed"},
    {"sums", CP_WRITES, "with `background`: adds its misses' background"},
    PL_AGREED_USE("spp")};

const cp_stage_type plh_visible_type = {
    "hybrid.visible", "primary hits from the visibility buffer of a depth-only raster pass "
    "(traced where it misses)", GR_SHADER, false, visible_ports, 2, visible_params, 2,
    visible_main, visible_create, visible_finish, visible_destroy, visible_uses, 4};

static const cp_format formats[] = {
    {"hybrid.rays", "the Extended Direct3D graph's mirror, through and behind rays with pixel, "
     "weight, draw-order layer and (after hybrid.trace) hit", GR_COLLECTION, 0, PLRT_HDR, sizeof(plh_ray),
     64, RT_PACKET_MAX},
    {"hybrid.shadow-rays", "the Extended Direct3D graph's shadow rays: origin, draw-order layer, direction, "
     "tmax, the light's term and the slot", GR_COLLECTION, 0, PLRT_HDR, sizeof(plh_shadow), 64, RT_PACKET_MAX},
    {"hybrid.contributions", "(slot, draw-order layer and its alpha, RGB as floats) to add to the image",
     GR_COLLECTION, 0, PLRT_HDR, sizeof(plh_contrib), 64, 1024}};

int pl_register_hybrid_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    const cp_stage_type *const stages[] = {&plh_visible_type, &plh_ps_type, &plh_ps2_type, &plh_om_type};
    const cp_kernel_stage_type *const kernel_stages[] = {&plh_trace_type, &plh_shadow_type};
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (cp_register_format(r, &formats[i], err)) return -1;
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++)
        if (cp_register_stage(r, stages[i], err)) return -1;
    for (size_t i = 0; i < sizeof kernel_stages / sizeof *kernel_stages; i++)
        if (cp_register_kernel_stage(r, kernel_stages[i], err)) return -1;
    return 0;
}

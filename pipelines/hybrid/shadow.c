/* shadow.c — hybrid.shadow, the Extended Direct3D graph's shadow rays (a Shader): the
 * occlusion test of every shadow ray PS and PS2 pushed (hybrid.shadow-rays, packets.h),
 * run by the ray tracer's packet kernel where the rays lie in the input packet
 * (rt_occluded_strided: no copy into a ray array); in a scene with blended materials,
 * what of the light gets through (plrt_transmittance). A ray that reaches its light is
 * resolved here: its term goes straight to the Output Merger, into its surface's
 * draw-order layer, and nothing goes on: no PS2 task to pass on a term PS already
 * computed. */
#include "pipelines/hybrid/internal.h"
#include "pipelines/raytrace/trace_opencl.h"
#include "pipelines/raytrace/transmittance.h"
#include "raytracer/packet.h"
#include "rasterizer/samples.h"

#include <stdlib.h>

typedef struct shadow_state {
    const rt_bvh *bvh;
    const sh_ray_env *env;                /* in a scene with blended materials, else NULL */
    plh_tally packets, shadow, contributions;
    plh_tile_keys keys;                   /* of the contributions set (om's instances) */
    const struct plrt_device_bvh *device; /* placed on the OpenCL device: the BVH's copy */
} shadow_state;

static void shadow_destroy(void *state)
{
    shadow_state *s = state;
    plh_tally *const tallies[] = {&s->packets, &s->shadow, &s->contributions};
    for (size_t k = 0; k < sizeof tallies / sizeof *tallies; k++) plh_tally_free(tallies[k]);
    free(s);
}

static void *shadow_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (!plh_agree_layout(i, err)) return NULL;
    pl_frame *f = i->frame;
    shadow_state *s = malloc(sizeof *s);
    if (!s) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return NULL;
    }
    *s = (shadow_state){pl_frame_use(i, "bvh", err),
                        f->data->scene && sh_ray_scene_blends(f->data->scene) ? pl_frame_ray_env(f) : NULL,
                        {NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {0, 0, 0, 0, -1}, NULL};
    const int msaa = (int)cp_int(i, "msaa");
    if (!s->bvh) {
        free(s);
        return NULL;
    }
    bool counted = plh_tally_init(&s->packets, f, "hybrid.shadow_packets");
    counted = plh_tally_init(&s->shadow, f, "rays.shadow") && counted;
    counted = plh_tally_init(&s->contributions, f, "hybrid.om_contributions") && counted;
    if (i->on_device && !(s->device = pl_frame_use(i, "bvh.opencl", err)))
        snprintf(err, CP_ERR_MAX, "the scene's BVH is not on the OpenCL device: %s",
                 plrt_device_bvh_error());
    else if (!counted)
        snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    else if (!rs_sample_pattern(msaa))
        snprintf(err, CP_ERR_MAX, "msaa %d: expected 1, 4 or 8 samples per pixel", msaa);
    else if (plh_tile_keys_of(i, "out", &s->keys, err))
        return s;
    shadow_destroy(s);
    return NULL;
}

/* The counters into the frame's, after a run. */
static void shadow_finish(void *state, void *frame)
{
    (void)frame;
    shadow_state *s = state;
    plh_tally *const tallies[] = {&s->packets, &s->shadow, &s->contributions};
    for (size_t k = 0; k < sizeof tallies / sizeof *tallies; k++) plh_tally_fold(tallies[k]);
}

/* The terms of the rays r[0..n) whose light is seen (not occluded[i]; scaled by
 * through[i] where through is not NULL) to the Output Merger, into their surfaces'
 * draw-order layers (the alpha byte comes with the surface's own term). */
static void send_lit(gr_ctx *c, const shadow_state *s, const plh_shadow *r, uint32_t n,
                     const uint8_t *occluded, const float *through)
{
    plh_contribs lit;
    plh_contribs_start(&lit, &s->keys);
    for (uint32_t i = 0; i < n; i++) {
        if (occluded[i]) continue;
        const plh_layer layer = {r[i].layer, PLH_ALPHA_LATER, 0};
        if (!through) {
            plh_add_contrib(&lit, r[i].slot, layer, r[i].weight);
            continue;
        }
        const float w[3] = {r[i].weight[0] * through[i], r[i].weight[1] * through[i], r[i].weight[2] * through[i]};
        plh_add_contrib(&lit, r[i].slot, layer, w);
    }
    plh_tally_add(&s->contributions, c, lit.n);
    plh_push_contribs(c, 0, &lit);
}

static void count(gr_ctx *c, const shadow_state *s, uint32_t n)
{
    plh_tally_add(&s->packets, c, 1);
    plh_tally_add(&s->shadow, c, n);
}

static void shadow_main(gr_ctx *c)
{
    const shadow_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    const uint32_t n = gr_count(in);
    const plh_shadow *r = plrt_elems(in);
    uint8_t occluded[RT_PACKET_MAX];
    float through[RT_PACKET_MAX];
    gr_assert(c, n <= RT_PACKET_MAX);
    const uint32_t m = n <= RT_PACKET_MAX ? n : RT_PACKET_MAX;
    if (s->env) {
        for (uint32_t i = 0; i < m; i++) {
            through[i] = plrt_transmittance(s->bvh, s->env, plh_shadow_ray(&r[i]));
            occluded[i] = !(through[i] > 0.0f);
        }
    } else {
        rt_occluded_strided(s->bvh, r, sizeof *r, PLH_SHADOW_TMIN, (int)m, occluded, NULL);
    }
    send_lit(c, s, r, m, occluded, s->env ? through : NULL);
    count(c, s, m);
}

/* On the device: hybrid_occluded (pipelines/raytrace/opencl/trace.cl) wrote each ray's
 * occlusion into results; the host sends on as shadow_main. */
static void shadow_emit(gr_ctx *c, void *state, void *packet, const void *results, uint32_t n)
{
    const shadow_state *s = state;
    send_lit(c, s, plrt_elems(packet), n, results, NULL);
    count(c, s, n);
}

/* For a batch (cp_kernel.set_pushes): the om tiles the packet's lit terms go to, one term
 * per ray at most (send_lit). */
static uint32_t shadow_set_pushes(void *state, const void *packet, int output, gr_set_push *pushes)
{
    const shadow_state *s = state;
    (void)output;                         /* its one output: contributions */
    const plh_shadow *r = plrt_elems((void *)packet);
    uint32_t nkeys = 0;
    for (uint32_t i = 0, n = gr_count(packet); i < n; i++)
        if (!gr_set_push_add(pushes, &nkeys, plh_tile_key(r[i].slot, &s->keys))) return GR_SET_PUSHES_UNKNOWN;
    return nkeys;
}

/* What the kernel does not do: any-hit filters and shadow transmittance. */
static const char *shadow_unsupported(void *state)
{
    const shadow_state *s = state;
    if (s->env) return "the scene has blended materials (shadow transmittance), which the "
                       "OpenCL kernel does not compute";
    return s->bvh->filter ? "the scene has alpha-tested or single-sided materials (a hit "
                            "filter), which the OpenCL kernel does not apply" : NULL;
}

static int shadow_buffers(void *state, const struct ac_buffer *out[CP_KERNEL_BUFFERS])
{
    const shadow_state *s = state;
    return plrt_device_bvh_buffers(s->device, out);
}

static const cp_port shadow_ports[] = {
    {"in", GR_BIND_INPUT, "hybrid.shadow-rays", "the pixel shaders' shadow rays"},
    {"out", GR_BIND_PUSH, "hybrid.contributions", "the terms of the shadow rays that reach their lights, "
     "into their surfaces' draw-order layers: to the Output Merger (hybrid.om), keyed by slot "
     "(plh_tile_key)"}};
static const cp_param shadow_params[] = {
    {"msaa", CP_INT, "1", 1, PL_MAX_MSAA, "the depth pass's samples per pixel: a ray's slot is its "
     "fragment's (fragments.h)"},
    PLH_TILE_PARAM};
static const cp_resource_use shadow_uses[] = {
    {"bvh", CP_READS, NULL}, {"bvh.opencl", CP_READS, "placed on the OpenCL device"},
    PL_AGREED_USE("msaa and tile")};

/* emit reads a ray's layer, weight and slot: the kernel's results are the occlusion bytes */
const cp_kernel_stage_type plh_shadow_type = {
    {"hybrid.shadow", "Extended Direct3D shadow rays: occlusion tests (the ray tracer's packet kernel, "
     "in place); lit shadow rays' terms to the Output Merger", GR_SHADER,
     false, shadow_ports, 2, shadow_params, 2, shadow_main, shadow_create, shadow_finish, shadow_destroy,
     shadow_uses, 3},
    {.file = PLRT_TRACE_CL, .source = cl_pipelines_raytrace_opencl_trace, .name = "hybrid_occluded",
     .result_bytes = 1, .inplace = false, .buffers = shadow_buffers, .unsupported = shadow_unsupported,
     .emit = shadow_emit, .set_pushes = shadow_set_pushes}};

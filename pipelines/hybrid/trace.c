/* trace.c — hybrid.trace, the Extended Direct3D graph's ray casting (a Shader): the ray
 * tracer's packet kernels over the rays the pixel shaders pushed, whatever their kind.
 * A packet's shadow rays get an occlusion test (rt_occluded_packet; in a scene with
 * blended materials, what of the light gets through: plrt_transmittance), its mirror
 * and through rays their closest hits (rt_intersect_packet). A shadow ray that reaches
 * its light is resolved here: its term goes straight to the Output Merger (`lit`), and
 * the packet, left with the mirror and through rays and their hits, goes on to PS2 in
 * place (not at all when only shadow rays came): no PS2 task, and no copy of the 80-byte
 * ray through a queue, to pass on a term PS already computed. */
#include "pipelines/hybrid/internal.h"
#include "pipelines/raytrace/trace_opencl.h"
#include "pipelines/raytrace/transmittance.h"
#include "raytracer/packet.h"
#include "rasterizer/samples.h"

#include <stdlib.h>

typedef struct trace_state {
    const rt_bvh *bvh;
    const sh_ray_env *env;                /* in a scene with blended materials, else NULL */
    plh_tally packets, rays, shadow, secondary, contributions;
    plh_tile_keys keys;                   /* of `lit`'s contributions set (om's instances) */
    const struct plrt_device_bvh *device; /* placed on the OpenCL device: the BVH's copy */
} trace_state;

/* Output slots, as in the port table. */
enum { TRACE_OUT_HITS, TRACE_OUT_LIT };

static void trace_destroy(void *state)
{
    trace_state *s = state;
    plh_tally *const tallies[] = {&s->packets, &s->rays, &s->shadow, &s->secondary, &s->contributions};
    for (size_t k = 0; k < sizeof tallies / sizeof *tallies; k++) plh_tally_free(tallies[k]);
    free(s);
}

static void *trace_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    trace_state *s = malloc(sizeof *s);
    if (!s) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return NULL;
    }
    *s = (trace_state){pl_frame_use(i, "bvh", err),
                       f->data->scene && sh_ray_scene_blends(f->data->scene) ? pl_frame_ray_env(f) : NULL,
                       {NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL},
                       {0, 0, 0, 0, -1}, NULL};
    const int msaa = (int)cp_int(i, "msaa");
    if (!s->bvh) {
        free(s);
        return NULL;
    }
    bool counted = plh_tally_init(&s->packets, f, "hybrid.trace_packets");
    counted = plh_tally_init(&s->rays, f, "hybrid.trace_rays") && counted;
    counted = plh_tally_init(&s->shadow, f, "rays.shadow") && counted;
    counted = plh_tally_init(&s->secondary, f, "rays.secondary") && counted;
    counted = plh_tally_init(&s->contributions, f, "hybrid.om_contributions") && counted;
    if (i->on_device && !(s->device = pl_frame_use(i, "bvh.opencl", err)))
        snprintf(err, CP_ERR_MAX, "the scene's BVH is not on the OpenCL device: %s",
                 plrt_device_bvh_error());
    else if (!counted)
        snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    else if (!rs_sample_pattern(msaa))
        snprintf(err, CP_ERR_MAX, "msaa %d: expected 1, 4 or 8 samples per pixel", msaa);
    else if (plh_tile_keys_of(i, "lit", &s->keys, err))
        return s;
    trace_destroy(s);
    return NULL;
}

/* The counters into the frame's, after a run. */
static void trace_finish(void *state, void *frame)
{
    (void)frame;
    trace_state *s = state;
    plh_tally *const tallies[] = {&s->packets, &s->rays, &s->shadow, &s->secondary, &s->contributions};
    for (size_t k = 0; k < sizeof tallies / sizeof *tallies; k++) plh_tally_fold(tallies[k]);
}

/* A packet's rays by kind: positions of its shadow rays and of the others, ascending,
 * and the shadow rays' geometry, gathered for the occlusion kernel in the same pass. */
typedef struct ray_kinds {
    uint32_t shadows[RT_PACKET_MAX], others[RT_PACKET_MAX], ns, no;
    rt_ray shadow_rays[RT_PACKET_MAX];
} ray_kinds;

static void sort_kinds(const plh_ray *r, uint32_t n, ray_kinds *k)
{
    k->ns = k->no = 0;
    for (uint32_t i = 0; i < n && i < RT_PACKET_MAX; i++) {
        /* PS and PS2 push each task's shadow rays in runs: the branch is predictable */
        if (plh_ray_kind_of(&r[i]) == PLH_SHADOW) {
            k->shadow_rays[k->ns] = r[i].ray;
            k->shadows[k->ns++] = i;
        } else {
            k->others[k->no++] = i;
        }
    }
}

/* The shadow rays of k: occluded[i] and, in a scene with blended materials, what of the
 * light gets through (through[i]). */
static void occlusion(const trace_state *s, const ray_kinds *k, uint8_t *occluded, float *through)
{
    if (s->env) {
        for (uint32_t i = 0; i < k->ns; i++) {
            through[i] = plrt_transmittance(s->bvh, s->env, k->shadow_rays[i]);
            occluded[i] = !(through[i] > 0.0f);
        }
    } else {
        rt_occluded_packet(s->bvh, k->shadow_rays, (int)k->ns, occluded, NULL);
    }
}

/* The terms of the shadow rays r[at[0..n)] whose light is seen (scaled by `through`
 * where it is not NULL) to the Output Merger, into their surfaces' draw-order layers. */
static void send_lit(gr_ctx *c, const trace_state *s, const plh_ray *r, const uint32_t *at,
                     uint32_t n, const uint8_t *occluded, const float *through)
{
    plh_contribs lit;
    plh_contribs_start(&lit, &s->keys);
    for (uint32_t i = 0; i < n; i++) {
        if (occluded[i]) continue;
        const plh_ray *sh = &r[at[i]];
        if (!through) {
            plh_add_contrib(&lit, sh->pixel, plh_ray_layer_of(sh), sh->weight);
            continue;
        }
        const float w[3] = {sh->weight[0] * through[i], sh->weight[1] * through[i], sh->weight[2] * through[i]};
        plh_add_contrib(&lit, sh->pixel, plh_ray_layer_of(sh), w);
    }
    plh_tally_add(&s->contributions, c, lit.n);
    plh_push_contribs(c, TRACE_OUT_LIT, &lit);
}

/* Mirror, through and behind rays r[at[0..n)]: the closest hits of the first two kinds
 * (a behind ray comes with its hit). */
static void find_hits(const trace_state *s, plh_ray *r, const uint32_t *at, uint32_t n)
{
    rt_ray rays[RT_PACKET_MAX];
    rt_hit hits[RT_PACKET_MAX];
    uint32_t traced[RT_PACKET_MAX], nt = 0;
    for (uint32_t i = 0; i < n; i++)
        if (plh_ray_kind_of(&r[at[i]]) != PLH_BEHIND) {
            traced[nt] = at[i];
            rays[nt++] = r[at[i]].ray;
        }
    if (nt) rt_intersect_packet(s->bvh, rays, (int)nt, hits, NULL);
    for (uint32_t j = 0; j < nt; j++) r[traced[j]].hit = hits[j];
}

/* The rays with hits moved to r[0..no) (others ascends, so each moves down or stays),
 * the packet cut to them (none left: no packet for PS2), and the counters. */
static void finish(gr_ctx *c, const trace_state *s, void *in, const ray_kinds *k)
{
    plh_ray *r = plrt_elems(in);
    for (uint32_t i = 0; i < k->no; i++)
        if (k->others[i] != i) r[i] = r[k->others[i]];
    gr_set_count(in, k->no);
    plh_tally_add(&s->packets, c, 1);
    plh_tally_add(&s->rays, c, k->ns + k->no);
    plh_tally_add(&s->shadow, c, k->ns);
    plh_tally_add(&s->secondary, c, k->no);
}

static void trace_main(gr_ctx *c)
{
    const trace_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in);
    plh_ray *r = plrt_elems(in);
    ray_kinds k;
    gr_assert(c, n <= RT_PACKET_MAX);
    sort_kinds(r, n, &k);
    if (k.ns) {
        uint8_t occluded[RT_PACKET_MAX];
        float through[RT_PACKET_MAX];
        occlusion(s, &k, occluded, through);
        send_lit(c, s, r, k.shadows, k.ns, occluded, s->env ? through : NULL);
    }
    if (k.no) find_hits(s, r, k.others, k.no);
    finish(c, s, in, &k);
}

/* On the device: hybrid_trace (pipelines/raytrace/opencl/trace.cl) wrote the hits into
 * the elements and each ray's occlusion into results; the host sends on as trace_main. */
static void trace_emit(gr_ctx *c, void *state, void *packet, const void *results, uint32_t n)
{
    const trace_state *s = state;
    const uint8_t *blocked = results;
    plh_ray *r = plrt_elems(packet);
    ray_kinds k;
    sort_kinds(r, n, &k);
    if (k.ns) {
        uint8_t occluded[RT_PACKET_MAX];
        for (uint32_t i = 0; i < k.ns; i++) occluded[i] = blocked[k.shadows[i]];
        send_lit(c, s, r, k.shadows, k.ns, occluded, NULL);
    }
    finish(c, s, packet, &k);
}

/* What the kernel does not do: any-hit filters and shadow transmittance. */
static const char *trace_unsupported(void *state)
{
    const trace_state *s = state;
    if (s->env) return "the scene has blended materials (shadow transmittance), which the "
                       "OpenCL kernel does not compute";
    return s->bvh->filter ? "the scene has alpha-tested or single-sided materials (a hit "
                            "filter), which the OpenCL kernel does not apply" : NULL;
}

static int trace_buffers(void *state, const struct ac_buffer *out[CP_KERNEL_BUFFERS])
{
    const trace_state *s = state;
    return plrt_device_bvh_buffers(s->device, out);
}

static const cp_port trace_ports[] = {
    {"in", GR_BIND_INPUT, "hybrid.rays", "the pixel shaders' rays, of every kind"},
    {"out", GR_BIND_INPLACE, "hybrid.rays", "the input's mirror and through rays with their closest "
     "hits, and its behind rays, for PS2"},
    {"lit", GR_BIND_PUSH, "hybrid.contributions", "the terms of the shadow rays that reach their lights, "
     "into their surfaces' draw-order layers: to the Output Merger (hybrid.om), keyed by slot "
     "(plh_tile_key)"}};
static const cp_param trace_params[] = {
    {"msaa", CP_INT, "1", 1, PL_MAX_MSAA, "the depth pass's samples per pixel: a ray's pixel is its "
     "fragment's slot (fragments.h)"},
    PLH_TILE_PARAM};
static const cp_resource_use trace_uses[] = {
    {"bvh", CP_READS, NULL}, {"bvh.opencl", CP_READS, "placed on the OpenCL device"}};

const cp_kernel_stage_type plh_trace_type = {
    {"hybrid.trace", "Extended Direct3D ray casting: occlusion tests for shadow rays, closest hits for "
     "the others (the ray tracer's packet kernels); lit shadow rays' terms to the Output Merger", GR_SHADER,
     false, trace_ports, 3, trace_params, 2, trace_main, trace_create, trace_finish, trace_destroy, trace_uses, 2},
    {.file = PLRT_TRACE_CL, .source = cl_pipelines_raytrace_opencl_trace, .name = "hybrid_trace",
     .result_bytes = 1, .inplace = true, .buffers = trace_buffers, .unsupported = trace_unsupported,
     .emit = trace_emit}};

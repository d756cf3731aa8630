/* trace.c — hybrid.trace, the Extended Direct3D graph's ray casting (a Shader): the ray
 * tracer's packet kernels over the rays the pixel shaders pushed, whatever their kind.
 * A packet's shadow rays get an occlusion test (rt_occluded_packet; in a scene with
 * blended materials, what of the light gets through: plrt_transmittance), its mirror
 * and through rays their closest hits (rt_intersect_packet). A shadow ray that reaches
 * its light is resolved here: its term goes straight to the Output Merger (`lit`), and
 * the packet, left with the mirror and through rays and their hits, goes on to PS2 in
 * place (not at all when only shadow rays came): no PS2 task, and no copy of the 96-byte
 * ray through a queue, to pass on a term PS already computed. */
#include "pipelines/hybrid/internal.h"
#include "pipelines/raytrace/transmittance.h"
#include "raytracer/packet.h"
#include "rasterizer/samples.h"

#include <stdlib.h>

typedef struct trace_state {
    const rt_bvh *bvh;
    const sh_ray_env *env;                /* in a scene with blended materials, else NULL */
    _Atomic(uint64_t) *packets, *rays, *shadow, *secondary, *contributions;
    plrt_blend_keys keys;                 /* of `lit`'s contributions set (om's instances) */
} trace_state;

/* Output slots, as in the port table. */
enum { TRACE_OUT_HITS, TRACE_OUT_LIT };

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
                       pl_frame_counter(f, "hybrid.trace_packets"), pl_frame_counter(f, "hybrid.trace_rays"),
                       pl_frame_counter(f, "rays.shadow"), pl_frame_counter(f, "rays.secondary"),
                       pl_frame_counter(f, "hybrid.om_contributions"), {0, 0, 0, 0, 0}};
    const int msaa = (int)cp_int(i, "msaa");
    if (!s->bvh) {
        free(s);
        return NULL;
    }
    if (!(s->packets && s->rays && s->shadow && s->secondary && s->contributions))
        snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    else if (!rs_sample_pattern(msaa))
        snprintf(err, CP_ERR_MAX, "msaa %d: expected 1, 4 or 8 samples per pixel", msaa);
    else if (!plrt_blend_keys_of(f, cp_port_subqueues(i, "lit"), &s->keys))
        snprintf(err, CP_ERR_MAX, "port 'lit': the contributions queue set needs a power of two "
                 "of subqueues (one om instance each), not %u", cp_port_subqueues(i, "lit"));
    else {
        s->keys.shift = (uint32_t)__builtin_ctz((unsigned)msaa);
        return s;
    }
    free(s);
    return NULL;
}

/* Shadow rays r[at[0..n)]: the terms of those whose light is seen (scaled by what gets
 * through blended surfaces) to the Output Merger. */
static void test_shadows(gr_ctx *c, const trace_state *s, const plh_ray *r, const uint32_t *at,
                         uint32_t n)
{
    float through[RT_PACKET_MAX];         /* 1 without blended materials: x * 1 is x */
    rt_ray rays[RT_PACKET_MAX];
    uint8_t occluded[RT_PACKET_MAX];
    if (s->env) {
        for (uint32_t i = 0; i < n; i++) {
            through[i] = plrt_transmittance(s->bvh, s->env, r[at[i]].r.ray);
            occluded[i] = !(through[i] > 0.0f);
        }
    } else {
        for (uint32_t i = 0; i < n; i++) {
            rays[i] = r[at[i]].r.ray;
            through[i] = 1.0f;
        }
        rt_occluded_packet(s->bvh, rays, (int)n, occluded, NULL);
    }
    plrt_contribs lit;
    plrt_contribs_start(&lit, &s->keys);
    for (uint32_t i = 0; i < n; i++) {
        if (occluded[i]) continue;
        const plrt_ray *sh = &r[at[i]].r;
        const float w[3] = {sh->weight[0] * through[i], sh->weight[1] * through[i], sh->weight[2] * through[i]};
        plrt_add_contrib(&lit, sh->pixel, w);
    }
    atomic_fetch_add_explicit(s->contributions, lit.n, memory_order_relaxed);
    plrt_push_contribs(c, TRACE_OUT_LIT, &lit);
}

/* Mirror and through rays r[at[0..n)]: their closest hits, the rays moved to r[0..n)
 * (at[] ascends, so each moves down or stays). */
static void find_hits(const trace_state *s, plh_ray *r, const uint32_t *at, uint32_t n)
{
    rt_ray rays[RT_PACKET_MAX];
    rt_hit hits[RT_PACKET_MAX];
    for (uint32_t i = 0; i < n; i++) rays[i] = r[at[i]].r.ray;
    rt_intersect_packet(s->bvh, rays, (int)n, hits, NULL);
    for (uint32_t i = 0; i < n; i++) {
        if (at[i] != i) r[i] = r[at[i]];
        r[i].r.hit = hits[i];
    }
}

static void trace_main(gr_ctx *c)
{
    const trace_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in);
    plh_ray *r = plrt_elems(in);
    uint32_t shadows[RT_PACKET_MAX], others[RT_PACKET_MAX], ns = 0, no = 0;
    gr_assert(c, n <= RT_PACKET_MAX);
    for (uint32_t i = 0; i < n && i < RT_PACKET_MAX; i++) {   /* without branches: kinds mix */
        const uint32_t shadow = r[i].kind == PLH_SHADOW;
        shadows[ns] = i;
        others[no] = i;
        ns += shadow;
        no += 1 - shadow;
    }
    if (ns) test_shadows(c, s, r, shadows, ns);
    if (no) find_hits(s, r, others, no);
    gr_set_count(in, no);                 /* none left: no packet for PS2 */
    atomic_fetch_add_explicit(s->packets, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(s->rays, n, memory_order_relaxed);
    atomic_fetch_add_explicit(s->shadow, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(s->secondary, no, memory_order_relaxed);
}

static const cp_port trace_ports[] = {
    {"in", GR_BIND_INPUT, "hybrid.rays", "the pixel shaders' rays, of every kind"},
    {"out", GR_BIND_INPLACE, "hybrid.rays", "the input's mirror and through rays with their closest "
     "hits, for PS2"},
    {"lit", GR_BIND_PUSH, "rt.contributions", "the terms of the shadow rays that reach their lights: to "
     "the Output Merger (rt.blend), keyed by pixel (plrt_blend_key)"}};
static const cp_param trace_params[] = {
    {"msaa", CP_INT, "1", 1, PL_MAX_MSAA, "the depth pass's samples per pixel: a ray's pixel is its "
     "fragment's slot (fragments.h)"}};
static const cp_resource_use trace_uses[] = {{"bvh", CP_READS, NULL}};

const cp_stage_type plh_trace_type = {
    "hybrid.trace", "Extended Direct3D ray casting: occlusion tests for shadow rays, closest hits for "
    "the others (the ray tracer's packet kernels); lit shadow rays' terms to the Output Merger", GR_SHADER,
    false, trace_ports, 3, trace_params, 1,
    trace_main, trace_create, NULL, free, trace_uses, 1};

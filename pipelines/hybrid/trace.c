/* trace.c — hybrid.trace, the Extended Direct3D graph's ray casting (a Shader): the ray
 * tracer's packet kernels over the rays the pixel shaders pushed, whatever their kind.
 * A packet's shadow rays get an occlusion test (rt_occluded_packet; in a scene with
 * blended materials, what of the light gets through: plrt_transmittance), its mirror
 * and through rays their closest hits (rt_intersect_packet). The results are written
 * into the packet, which goes on to PS2 in place (packets.h). */
#include "pipelines/hybrid/internal.h"
#include "pipelines/raytrace/transmittance.h"
#include "raytracer/packet.h"

#include <stdlib.h>

typedef struct trace_state {
    const rt_bvh *bvh;
    const sh_ray_env *env;                /* in a scene with blended materials, else NULL */
    _Atomic(uint64_t) *packets, *rays, *shadow, *secondary;
} trace_state;

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
                       pl_frame_counter(f, "rays.shadow"), pl_frame_counter(f, "rays.secondary")};
    if (s->bvh && s->packets && s->rays && s->shadow && s->secondary) return s;
    if (s->bvh) snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    free(s);
    return NULL;
}

/* Shadow rays r[at[0..n)]: hit.prim RT_NO_HIT where the light is seen (its term scaled
 * by what gets through), 0 where it is not. */
static void test_shadows(const trace_state *s, plh_ray *r, const uint32_t *at, uint32_t n)
{
    rt_ray rays[RT_PACKET_MAX];
    uint8_t occluded[RT_PACKET_MAX];
    if (s->env) {
        for (uint32_t i = 0; i < n; i++) {
            plrt_ray *sh = &r[at[i]].r;
            float t = plrt_transmittance(s->bvh, s->env, sh->ray);
            for (int ch = 0; ch < 3; ch++) sh->weight[ch] *= t;
            occluded[i] = !(t > 0.0f);
        }
    } else {
        for (uint32_t i = 0; i < n; i++) rays[i] = r[at[i]].r.ray;
        rt_occluded_packet(s->bvh, rays, (int)n, occluded, NULL);
    }
    for (uint32_t i = 0; i < n; i++) r[at[i]].r.hit = (rt_hit){0, 0, 0, occluded[i] ? 0 : RT_NO_HIT};
}

/* Mirror and through rays r[at[0..n)]: their closest hits. */
static void find_hits(const trace_state *s, plh_ray *r, const uint32_t *at, uint32_t n)
{
    rt_ray rays[RT_PACKET_MAX];
    rt_hit hits[RT_PACKET_MAX];
    for (uint32_t i = 0; i < n; i++) rays[i] = r[at[i]].r.ray;
    rt_intersect_packet(s->bvh, rays, (int)n, hits, NULL);
    for (uint32_t i = 0; i < n; i++) r[at[i]].r.hit = hits[i];
}

static void trace_main(gr_ctx *c)
{
    const trace_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in);
    plh_ray *r = plrt_elems(in);
    uint32_t shadows[RT_PACKET_MAX], others[RT_PACKET_MAX], ns = 0, no = 0;
    gr_assert(c, n <= RT_PACKET_MAX);
    for (uint32_t i = 0; i < n && i < RT_PACKET_MAX; i++) {
        if (r[i].kind == PLH_SHADOW) shadows[ns++] = i;
        else others[no++] = i;
    }
    if (ns) test_shadows(s, r, shadows, ns);
    if (no) find_hits(s, r, others, no);
    atomic_fetch_add_explicit(s->packets, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(s->rays, n, memory_order_relaxed);
    atomic_fetch_add_explicit(s->shadow, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(s->secondary, no, memory_order_relaxed);
}

static const cp_port trace_ports[] = {
    {"in", GR_BIND_INPUT, "hybrid.rays", "the pixel shaders' rays, of every kind"},
    {"out", GR_BIND_INPLACE, "hybrid.rays", "the input with its results: shadow rays' visibility, the "
     "others' closest hits"}};
static const cp_resource_use trace_uses[] = {{"bvh", CP_READS, NULL}};

const cp_stage_type plh_trace_type = {
    "hybrid.trace", "Extended Direct3D ray casting: occlusion tests for shadow rays, closest hits for "
    "the others (the ray tracer's packet kernels)", GR_SHADER, false, trace_ports, 2, NULL, 0,
    trace_main, trace_create, NULL, free, trace_uses, 1};

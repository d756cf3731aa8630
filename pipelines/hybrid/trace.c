/* trace.c — hybrid.trace, the Extended Direct3D graph's ray casting for the pixel
 * shaders' mirror and through rays (a Shader): the ray tracer's packet kernel
 * (rt_intersect_packet) fills in their closest hits, in place, and the packet goes on to
 * PS2; a behind ray comes with its hit and passes untouched. Shadow rays go to
 * hybrid.shadow (shadow.c) instead. */
#include "pipelines/hybrid/internal.h"
#include "pipelines/raytrace/trace_opencl.h"
#include "raytracer/packet.h"

#include <stdlib.h>

typedef struct trace_state {
    const rt_bvh *bvh;
    plh_tally packets, rays, secondary;
    const struct plrt_device_bvh *device; /* placed on the OpenCL device: the BVH's copy */
} trace_state;

static void trace_destroy(void *state)
{
    trace_state *s = state;
    plh_tally *const tallies[] = {&s->packets, &s->rays, &s->secondary};
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
    *s = (trace_state){pl_frame_use(i, "bvh", err), {NULL, NULL}, {NULL, NULL}, {NULL, NULL}, NULL};
    if (!s->bvh) {
        free(s);
        return NULL;
    }
    bool counted = plh_tally_init(&s->packets, f, "hybrid.trace_packets");
    counted = plh_tally_init(&s->rays, f, "hybrid.trace_rays") && counted;
    counted = plh_tally_init(&s->secondary, f, "rays.secondary") && counted;
    if (i->on_device && !(s->device = pl_frame_use(i, "bvh.opencl", err)))
        snprintf(err, CP_ERR_MAX, "the scene's BVH is not on the OpenCL device: %s",
                 plrt_device_bvh_error());
    else if (!counted)
        snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    else
        return s;
    trace_destroy(s);
    return NULL;
}

/* The counters into the frame's, after a run. */
static void trace_finish(void *state, void *frame)
{
    (void)frame;
    trace_state *s = state;
    plh_tally *const tallies[] = {&s->packets, &s->rays, &s->secondary};
    for (size_t k = 0; k < sizeof tallies / sizeof *tallies; k++) plh_tally_fold(tallies[k]);
}

/* The closest hits of r[0..n)'s mirror and through rays (a behind ray comes with its
 * hit), written into their elements. */
static void find_hits(const trace_state *s, plh_ray *r, uint32_t n)
{
    rt_ray rays[RT_PACKET_MAX];
    rt_hit hits[RT_PACKET_MAX];
    uint32_t traced[RT_PACKET_MAX], nt = 0;
    for (uint32_t i = 0; i < n; i++)
        if (plh_ray_kind_of(&r[i]) != PLH_BEHIND) {
            traced[nt] = i;
            rays[nt++] = r[i].ray;
        }
    if (nt) rt_intersect_packet(s->bvh, rays, (int)nt, hits, NULL);
    for (uint32_t j = 0; j < nt; j++) r[traced[j]].hit = hits[j];
}

static void count(gr_ctx *c, const trace_state *s, uint32_t n)
{
    plh_tally_add(&s->packets, c, 1);
    plh_tally_add(&s->rays, c, n);
    plh_tally_add(&s->secondary, c, n);
}

static void trace_main(gr_ctx *c)
{
    const trace_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    const uint32_t n = gr_count(in);
    gr_assert(c, n <= RT_PACKET_MAX);
    find_hits(s, plrt_elems(in), n <= RT_PACKET_MAX ? n : RT_PACKET_MAX);
    count(c, s, n);
}

/* On the device: hybrid_trace (pipelines/raytrace/opencl/trace.cl) wrote the hits into
 * the elements; the packet goes on in place. */
static void trace_emit(gr_ctx *c, void *state, void *packet, const void *results, uint32_t n)
{
    (void)packet;
    (void)results;
    count(c, state, n);
}

/* What the kernel does not do: any-hit filters. */
static const char *trace_unsupported(void *state)
{
    const trace_state *s = state;
    return s->bvh->filter ? "the scene has alpha-tested or single-sided materials (a hit "
                            "filter), which the OpenCL kernel does not apply" : NULL;
}

static int trace_buffers(void *state, const struct ac_buffer *out[CP_KERNEL_BUFFERS])
{
    const trace_state *s = state;
    return plrt_device_bvh_buffers(s->device, out);
}

static const cp_port trace_ports[] = {
    {"in", GR_BIND_INPUT, "hybrid.rays", "the pixel shaders' mirror, through and behind rays"},
    {"out", GR_BIND_INPLACE, "hybrid.rays", "the input's mirror and through rays with their closest "
     "hits, and its behind rays, for PS2"}};
static const cp_resource_use trace_uses[] = {
    {"bvh", CP_READS, NULL}, {"bvh.opencl", CP_READS, "placed on the OpenCL device"}};

const cp_kernel_stage_type plh_trace_type = {
    {"hybrid.trace", "Extended Direct3D ray casting: closest hits for the pixel shaders' mirror and "
     "through rays (the ray tracer's packet kernel), in place for PS2", GR_SHADER,
     false, trace_ports, 2, NULL, 0, trace_main, trace_create, trace_finish, trace_destroy, trace_uses, 2},
    {.file = PLRT_TRACE_CL, .source = cl_pipelines_raytrace_opencl_trace, .name = "hybrid_trace",
     .result_bytes = 0, .inplace = true, .buffers = trace_buffers, .unsupported = trace_unsupported,
     .emit = trace_emit}};

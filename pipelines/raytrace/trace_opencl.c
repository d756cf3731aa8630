/* trace_opencl.c — the host side of rt.intersect's and rt.shadow's OpenCL kernels (see
 * trace_opencl.h): the BVH's device copy (kept by the scene data), the kernels' buffers, and what each launch
 * sends on. */
#include "pipelines/raytrace/trace_opencl.h"

#include "pipelines/raytrace/device_copy.h"
#include "raytracer/bvh.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

/* The layouts trace.cl reads. */
_Static_assert(sizeof(rt_node4) == 128, "trace.cl's node4 is 128 bytes");
_Static_assert(sizeof(rt_tri4) == 160, "trace.cl's tri4 is 160 bytes");
_Static_assert(offsetof(plrt_ray, hit) == 52, "trace.cl's rt_ray_elem has its hit at 52");
_Static_assert(sizeof(plrt_shadow) == 48, "trace.cl's shadow_elem is 48 bytes");

/* trace.cl's bvh_info. */
typedef struct plrt_device_bvh_info { uint32_t root, nnodes, nblocks, pad; } plrt_device_bvh_info;

/* The nodes, the triangle blocks and the bvh_info, as trace.cl takes them. */
typedef struct plrt_device_bvh { plrt_device_copy copy; } plrt_device_bvh;

static void device_bvh_free(void *data)
{
    plrt_device_bvh *d = data;
    if (d) plrt_copy_free(&d->copy);
    free(d);
}

/* Why the last upload on this thread failed (the resource hook has no message). */
static _Thread_local char upload_err[AC_ERR_MAX];

const char *plrt_device_bvh_error(void) { return upload_err; }

/* The 4-wide nodes and triangle blocks, copied as they are. */
static plrt_device_bvh *upload(const rt_bvh *b)
{
    char *err = upload_err;
    snprintf(err, AC_ERR_MAX, "no BVH");
    ac_device *dev = b ? ac_open(err) : NULL;
    plrt_device_bvh *d = dev ? calloc(1, sizeof *d) : NULL;
    if (!d) {
        if (dev) snprintf(err, AC_ERR_MAX, "out of memory");
        return NULL;
    }
    const plrt_device_bvh_info info = {b->root, (uint32_t)b->nnodes, (uint32_t)b->nblocks, 0};
    const plrt_host_range parts[] = {{b->nodes, b->nnodes * sizeof *b->nodes},
                                     {b->tris, b->nblocks * sizeof *b->tris},
                                     {&info, sizeof info}};
    if (plrt_copy_upload(&d->copy, dev, parts, 3, err) == 0) return d;
    free(d);
    return NULL;
}

/* The scene data's copy, made on the first frame that asks: once per scene. */
static void *device_bvh_create(void *frame, const char *owner)
{
    (void)owner;
    pl_scene_data *data = ((pl_frame *)frame)->data;
    if (!data->device_bvh && (data->device_bvh = upload(pl_scene_data_bvh(data))))
        data->device_bvh_free = device_bvh_free;
    return data->device_bvh;
}

/* Owned by the scene data. */
static void scene_owned(void *data) { (void)data; }

const cp_resource_type plrt_device_bvh_resource = {
    "bvh.opencl", "the scene's BVH copied to the OpenCL device (its 4-wide nodes and triangle "
    "blocks) once per scene, for the stages placed there; device memory, not counted in the "
    "host estimate", "rt_node4 + rt_tri4", 0, CP_PER_SCENE, false, CP_CLEAR_NONE, NULL,
    device_bvh_create, scene_owned, NULL};

int plrt_device_bvh_buffers(const plrt_device_bvh *d, const ac_buffer *out[CP_KERNEL_BUFFERS])
{
    return d ? plrt_copy_buffers(&d->copy, out, 0) : -1;
}

int plrt_trace_buffers(void *state, const ac_buffer *out[CP_KERNEL_BUFFERS])
{
    const plrt_trace_state *s = state;
    return plrt_device_bvh_buffers(s->device, out);
}

/* What the kernels do not do: any-hit filters (alpha-tested or single-sided materials)
 * and, for shadows, transmittance through blended surfaces. */
const char *plrt_intersect_unsupported(void *state)
{
    const plrt_trace_state *s = state;
    return s->bvh->filter ? "the scene has alpha-tested or single-sided materials (a hit "
                            "filter), which the OpenCL kernel does not apply" : NULL;
}

const char *plrt_shadow_unsupported(void *state)
{
    const plrt_trace_state *s = state;
    if (s->env) return "the scene has blended materials (shadow transmittance), which the "
                       "OpenCL kernel does not compute";
    return plrt_intersect_unsupported(state);
}

/* The hits are in the packet already; count its rays as rt.intersect's C function does. */
void plrt_intersect_emit(gr_ctx *c, void *state, void *packet, const void *results, uint32_t n)
{
    (void)results;
    const plrt_trace_state *s = state;
    const plrt_ray *r = plrt_elems(packet);
    bool primary = n && r[0].depth == 0 && r[0].layers == 0;
    (void)c;
    atomic_fetch_add_explicit(primary ? s->primary : s->secondary, n, memory_order_relaxed);
}

/* Unoccluded rays add their light's term, in element order, as rt.shadow's C function. */
void plrt_shadow_emit(gr_ctx *c, void *state, void *packet, const void *results, uint32_t n)
{
    const plrt_trace_state *s = state;
    const plrt_shadow *sh = plrt_elems(packet);
    const uint8_t *occluded = results;
    plrt_contribs out;
    plrt_contribs_start(&out, &s->keys);
    for (uint32_t i = 0; i < n; i++)
        if (!occluded[i]) plrt_add_contrib(&out, sh[i].pixel, sh[i].color);
    plrt_push_contribs(c, 0, &out);
    atomic_fetch_add_explicit(s->shadow, n, memory_order_relaxed);
}

uint32_t plrt_shadow_set_pushes(void *state, const void *packet, int output, gr_set_push *pushes)
{
    const plrt_trace_state *s = state;
    (void)output;                         /* its one output: contributions */
    return plrt_contrib_pushes(&s->keys, plrt_elems((void *)packet), sizeof(plrt_shadow),
                               offsetof(plrt_shadow, pixel), gr_count(packet), pushes);
}

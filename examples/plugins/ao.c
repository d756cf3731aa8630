/* ao.c — a plugin stage for the ray tracer: ambient occlusion between Intersect and Shade.
 *
 *   camera -> intersect -> hits -> ao -> ao-hits -> shade (ambient = false)
 *                                   \-> contributions -> blend
 *
 * Stage type "ao" (Shader): input rt.rays with their hits; output `out`, the same packet
 * in place (GR_BIND_INPLACE) for Shade; output `contrib`, at most one contribution per
 * ray, pushed to its pixel's subqueue of the contributions set (plrt_push_contribs). Shade runs with `ambient = false`, so this stage adds
 * the ambient term instead, exactly as Shade computes it
 *   weight * (1 - reflectivity) * ambient * albedo
 * times, for primary hits (depth 0), the unoccluded fraction of `samples` rays cast in a
 * cosine-weighted hemisphere around the shading normal, at most `radius` long (a fraction
 * of the scene's bounding-box diagonal). Secondary hits (reflections) keep the plain term
 * (fraction 1), so the image differs from raytrace.graph's only by occlusion, and no pixel
 * is brighter. examples/graphs/raytrace-ao.graph wires it.
 *
 * Deterministic for any worker count: ray directions come from a fixed hash of the pixel,
 * the sample index and the primary ray's direction, each hit is computed alone, and
 * rt.blend sums contributions (plrt_set_contrib) as integers in fixed point. The
 * frame counter "rays.ao" counts the occlusion rays. Other outputs than colour (--aov) get
 * nothing from this stage (Shade writes them).
 *
 * Build, in the source tree or against an installed copy:
 *   cc -shared -fPIC $(pkg-config --cflags gramps-render) ao.c -o ao.so
 * (no libraries: gramps-render provides the symbols). */
#include "compose/compose.h"
#include "pipelines/frame.h"
#include "pipelines/raytrace/packets.h"
#include "raytracer/trace.h"
#include "shaders/ray_shading.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { AO_OUT, AO_CONTRIB };              /* output slots, in port order */

typedef struct ao_state {
    bool active;                          /* colour output */
    const sh_ray_env *env;
    const rt_bvh *bvh;
    _Atomic(uint64_t) *rays;              /* the frame's "rays.ao" */
    uint32_t samples;
    float radius;                         /* in scene units */
    plrt_blend_keys keys;                  /* of the contributions set */
} ao_state;

/* The contributions set needs a power of two of subqueues (plrt_blend_key). */
static bool check_ports(const cp_stage_init *i, plrt_blend_keys *keys, char err[CP_ERR_MAX])
{
    if (plrt_blend_keys_of(i->frame, cp_port_subqueues(i, "contrib"), keys)) return true;
    snprintf(err, CP_ERR_MAX, "stage '%s': its contrib queue set has %u subqueues, not a "
             "power of two", i->name, cp_port_subqueues(i, "contrib"));
    return false;
}

static void *ao_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    if (!f) {
        snprintf(err, CP_ERR_MAX, "stage '%s': ao needs a renderer frame (run it with "
                 "gramps-render)", i->name);
        return NULL;
    }
    plrt_blend_keys keys;
    if (!check_ports(i, &keys, err)) return NULL;
    ao_state *s = malloc(sizeof *s);
    if (s) *s = (ao_state){f->aov == SH_AOV_COLOR, pl_frame_ray_env(f), pl_frame_use(i, "bvh", err),
                           pl_frame_counter(f, "rays.ao"), (uint32_t)cp_int(i, "samples"), 0, keys};
    if (!s || !s->env || !s->bvh || !s->rays) {
        if (!s || s->bvh) snprintf(err, CP_ERR_MAX, "out of memory (counters)");
        free(s);
        return NULL;
    }
    /* sh_ray_env_init makes eps 1e-4 of the bounding-box diagonal */
    s->radius = (float)cp_float(i, "radius") * (s->env->eps * 1e4f);
    return s;
}

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16;
    return x;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Sample k's direction for a hit seen along `dir` from `pixel`: cosine-weighted around n
 * (Malley: a uniform disc point lifted to the hemisphere), in the orthonormal basis of
 * Duff et al. 2017 (no branch on n's largest component). */
static void hemisphere_dir(const float n[3], uint32_t pixel, const float dir[3], uint32_t k,
                           float d[3])
{
    uint32_t h = hash32(hash32(pixel * 2654435761u ^ float_bits(dir[0])) ^
                        float_bits(dir[1]) ^ (k + 1) * 0x9e3779b9u);
    float u1 = (float)(h & 0xffff) / 65536.0f, u2 = (float)(h >> 16) / 65536.0f;
    float r = sqrtf(u1), phi = 6.28318531f * u2;
    float x = r * cosf(phi), y = r * sinf(phi), z = sqrtf(1.0f - u1);
    float sign = copysignf(1.0f, n[2]), a = -1.0f / (sign + n[2]), b = n[0] * n[1] * a;
    float t[3] = {1.0f + sign * n[0] * n[0] * a, sign * b, -sign * n[0]};
    float bt[3] = {b, sign + n[1] * n[1] * a, -n[1]};
    for (int i = 0; i < 3; i++) d[i] = x * t[i] + y * bt[i] + z * n[i];
}

/* The unoccluded fraction of s->samples rays from the primary hit h. */
static float unoccluded(const ao_state *s, const plrt_ray *h)
{
    float n[3];
    sh_ray_hit_normal(s->env, &h->ray, &h->hit, n);
    rt_ray r = {.tmin = 0.0f, .tmax = s->radius};
    for (int i = 0; i < 3; i++) r.org[i] = h->ray.org[i] + h->hit.t * h->ray.dir[i] + n[i] * s->env->eps;
    uint32_t open = 0;
    for (uint32_t k = 0; k < s->samples; k++) {
        hemisphere_dir(n, h->pixel, h->ray.dir, k, r.dir);
        open += !rt_occluded1(s->bvh, &r);
    }
    return (float)open / (float)s->samples;
}

/* The ambient term Shade leaves out, in the same float operations as sh_ray_shade's
 * direct term (the textured base colour at the ray cone's level of detail, weighted by
 * alpha on a blended surface), scaled by the unoccluded fraction (1: the same bits as
 * Shade's). */
static void ambient_term(const ao_state *s, const plrt_ray *h, float fraction, plrt_contribs *out)
{
    const sc_material *m = sh_ray_hit_material(s->env, &h->hit);
    float base[4], a = 1.0f;
    sh_ray_surface(s->env, &h->ray, &h->hit, h->cone, base);
    bool blended = sh_ray_blended(s->env, &h->hit, base, &a);
    float local = 1.0f - m->reflectivity, rgb[3];
    for (int ch = 0; ch < 3; ch++) {
        float w = blended ? h->weight[ch] * a : h->weight[ch];
        float scale = w * local;
        rgb[ch] = scale * s->env->ambient * base[ch] * fraction;
    }
    plrt_add_contrib(out, h->pixel, rgb);
}

/* The rays go on to Shade in place; each hit adds one contribution. */
static void ao_main(gr_ctx *c)
{
    const ao_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in), cast = 0;
    const plrt_ray *h = plrt_elems(in);
    plrt_contribs out;
    plrt_contribs_start(&out, &s->keys);
    gr_assert(c, n <= RT_PACKET_MAX);
    for (uint32_t i = 0; i < n && s->active; i++) {
        if (h[i].hit.prim == RT_NO_HIT) continue;
        bool primary = h[i].depth == 0;
        ambient_term(s, &h[i], primary ? unoccluded(s, &h[i]) : 1.0f, &out);
        cast += primary ? s->samples : 0;
    }
    plrt_push_contribs(c, AO_CONTRIB, &out);
    atomic_fetch_add_explicit(s->rays, cast, memory_order_relaxed);
}

static const cp_port ao_ports[] = {
    {"in", GR_BIND_INPUT, "rt.rays", "rays with their hits (after rt.intersect)"},
    {"out", GR_BIND_INPLACE, "rt.rays", "the same packet, on to rt.shade"},
    {"contrib", GR_BIND_PUSH, "rt.contributions", "the ambient term, occluded, keyed by pixel"}};

static const cp_param ao_params[] = {
    {"samples", CP_INT, "8", 1, 1024, "occlusion rays per primary hit"},
    {"radius", CP_FLOAT, "0.1", 1e-6, 10, "occlusion ray length, a fraction of the scene's diagonal"}};

/* The frame resources it asks for, as every stage type declares them. */
static const cp_resource_use ao_uses[] = {{"bvh", CP_READS, "occlusion rays"}};

static const cp_stage_type ao_type = {
    "ao", "ambient occlusion: adds the ambient term of each hit times its unoccluded fraction "
    "(rt.shade with ambient = false)", GR_SHADER, false, ao_ports, 3, ao_params, 2, ao_main,
    ao_create, NULL, free, ao_uses, 1};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_stage(r, &ao_type, err);
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "ao", register_stages};

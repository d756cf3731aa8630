/* hit_out.c — what the Extended Direct3D graph's pixel shaders (hybrid.ps, hybrid.ps2)
 * send on for a shaded hit: contributions to the Output Merger (hybrid.om's sums, in
 * fixed point: the image does not depend on the order they arrive in), each into its
 * draw-order layer (packets.h), and rays to Trace, through the one push-coalesced
 * hybrid.rays queue (see internal.h). */
#include "pipelines/hybrid/internal.h"

#include "pipelines/hybrid/fragments.h"
#include "raytracer/bvh_traverse.h"
#include "rasterizer/samples.h"

#include <math.h>

static const char *const kind_names[PLH_KINDS] = {"shadow", "reflection", "through", "behind"};

/* Whether m samples any texture (else its quad's derivatives are not needed). */
static bool textured(const sc_material *m)
{
    return m->albedo_map.texture >= 0 || m->metallic_roughness_map.texture >= 0 ||
           m->emissive_map.texture >= 0 || m->normal_map.texture >= 0 ||
           m->occlusion_map.texture >= 0;
}

/* Whether a material of the scene samples a texture at texture coordinates it has. */
static bool any_textured(const sh_ray_env *env)
{
    if (!env->geo->texcoords || !env->scene) return false;
    for (size_t m = 0; m < env->scene->nmaterials; m++)
        if (textured(&env->scene->materials[m])) return true;
    return false;
}

bool plh_shader_init(plh_shader *s, const cp_stage_init *i, const char *who, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    *s = (plh_shader){pl_frame_ray_env(f), pl_frame_raster_env(f), f->aov, (int)cp_int(i, "bounces"),
                      (float)cp_float(i, "min_weight"), cp_bool(i, "shadows"), (int)cp_int(i, "msaa"),
                      false, false, {0, 0, 0, 0, -1}, NULL, {{NULL, NULL}}, {NULL, NULL}};
    s->quads = any_textured(s->env);
    bool counted = plh_tally_init(&s->contributions, f, "hybrid.om_contributions");
    for (int k = 0; k < PLH_KINDS; k++) {
        char name[64];
        snprintf(name, sizeof name, "hybrid.%s_rays_%s", who, kind_names[k]);
        counted = plh_tally_init(&s->rays[k], f, name) && counted;
    }
    if (!counted) snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    else if (!rs_sample_pattern(s->msaa))
        snprintf(err, CP_ERR_MAX, "msaa %d: expected 1, 4 or 8 samples per pixel", s->msaa);
    else if (plh_tile_keys_of(i, "out", &s->keys, err))
        return true;
    plh_shader_free(s);
    return false;
}

void plh_shader_fold(plh_shader *s)
{
    plh_tally_fold(&s->contributions);
    for (int k = 0; k < PLH_KINDS; k++) plh_tally_fold(&s->rays[k]);
}

void plh_shader_free(plh_shader *s)
{
    plh_tally_free(&s->contributions);
    for (int k = 0; k < PLH_KINDS; k++) plh_tally_free(&s->rays[k]);
}

void plh_out_start(plh_out *o, const plh_shader *s)
{
    plh_contribs_start(&o->contribs, &s->keys);
    o->nshadows = o->nhits = 0;
    for (int k = 0; k < PLH_KINDS; k++) o->pushed[k] = 0;
}

static void push_contribs(gr_ctx *c, const plh_shader *s, plh_out *o)
{
    plh_tally_add(&s->contributions, c, o->contribs.n);
    plh_push_contribs(c, PLH_OUT_CONTRIB, &o->contribs);
}

void plh_out_contrib_queued(gr_ctx *c, const plh_shader *s, plh_out *o, uint32_t index,
                            plh_layer layer, const float rgb[3])
{
    if (o->contribs.n == RT_PACKET_MAX) push_contribs(c, s, o);
    plh_add_contrib(&o->contribs, index, layer, rgb);
}

static void push_shadows(gr_ctx *c, plh_out *o)
{
    if (o->nshadows) gr_push_n(c, PLH_OUT_SHADOWS, o->shadows, o->nshadows);
    o->nshadows = 0;
}

static void push_hits(gr_ctx *c, plh_out *o)
{
    if (o->nhits) gr_push_n(c, PLH_OUT_RAYS, o->hits, o->nhits);
    o->nhits = 0;
}

void plh_out_flush(gr_ctx *c, const plh_shader *s, plh_out *o)
{
    push_shadows(c, o);
    push_hits(c, o);
    push_contribs(c, s, o);
    for (int k = 0; k < PLH_KINDS; k++)
        if (o->pushed[k]) plh_tally_add(&s->rays[k], c, o->pushed[k]);
}

/* Adds r, a mirror, through or behind ray carrying `layer`, to the task's run of them
 * (the run pushed first when full). */
static void add_ray(gr_ctx *c, plh_out *o, plh_ray_kind kind, plh_layer layer, const plrt_ray *r)
{
    if (o->nhits == RT_PACKET_MAX) push_hits(c, o);
    o->hits[o->nhits++] = plh_ray_pack(r, kind, layer);
    o->pushed[kind]++;
}

/* A ray from h's hit, if its weight is worth tracing, with h's cone carried on from the
 * hit (rt_cone_at_hit), as rt.shade makes them. */
static void add_secondary(gr_ctx *c, const plh_shader *s, plh_out *o, const plrt_ray *h,
                          const rt_ray *ray, const float weight[3], uint32_t depth,
                          uint32_t layers, plh_ray_kind kind, plh_layer layer)
{
    float wmax = fmaxf(weight[0], fmaxf(weight[1], weight[2]));
    if (!(wmax >= s->min_weight)) return;
    const plrt_ray r = {*ray, {weight[0], weight[1], weight[2]}, h->pixel, depth, {0, 0, 0, RT_NO_HIT},
                        rt_cone_at_hit(h->cone, &h->ray, h->hit.t, ray->dir), layers};
    add_ray(c, o, kind, layer, &r);
}

/* The ray on through h's blended surface: where that surface is its layer's own
 * (`own`), the ray begins the next layer; else it carries h's `layer` on. */
static void add_through(gr_ctx *c, const plh_shader *s, plh_out *o, const plrt_ray *h,
                        const rt_ray *passed, const float weight[3], plh_layer layer, bool own)
{
    const plh_layer next = own ? (plh_layer){0, 255, 1} : layer;
    if (h->layers + 1 < PLRT_MAX_LAYERS)
        add_secondary(c, s, o, h, passed, weight, h->depth, h->layers + 1, PLH_THROUGH, next);
}

/* The texture coordinates' derivatives over the 2x2 quad of h's pixel, from the
 * triangle's corners (the raster PS's), or zeros for an untextured surface. */
static void quad_of(const plh_shader *s, const plrt_ray *h, float d[4])
{
    const sh_ray_env *env = s->env;
    d[0] = d[1] = d[2] = d[3] = 0.0f;
    if (!s->quads || !textured(sh_ray_hit_material(env, &h->hit))) return;
    const uint32_t *idx = env->geo->indices + 3 * (size_t)h->hit.prim;
    sh_ps_tri t = {.prim = h->hit.prim};
    for (int k = 0; k < 3; k++) sh_vertex_of(env->geo, idx[k], t.attr[k]);
    const uint32_t width = s->keys.width, pixel = h->pixel >> s->keys.shift;
    sh_ps_quad_derivatives(s->raster, &t, (int)(pixel % width), (int)(pixel / width), d);
}

/* With msaa > 1, blended surface h (its layer's own, at slot h->pixel): what each
 * sample it covers (a PS fragment's covered samples, else its slot's sample) sees behind
 * it (the sample's ray on through the surface, traced here) goes to PS2 as a PLH_BEHIND
 * ray in the sample's own slot, which hybrid.om uses as that sample's base, so that an
 * edge behind glass is resolved per sample as the raster graphs resolve it. A sample
 * whose ray misses the surface takes the centre's ray on through it. */
static void add_behind_samples(gr_ctx *c, const plh_shader *s, plh_out *o, const plrt_ray *h,
                               const plh_behind *behind, const rt_ray *centre_passed,
                               const float weight[3])
{
    const plh_primary *split = behind->primary;
    const uint32_t m = (uint32_t)s->msaa, pixel = h->pixel >> s->keys.shift;
    const int first = (int)(h->pixel & (m - 1));
    for (uint32_t mask = behind->fragment ? plh_fragment_samples(split, s->msaa, pixel, first) : 1u << first; mask;
         mask &= mask - 1) {
        const int k = __builtin_ctz(mask);
        plrt_ray at;
        plh_camera_hit(split, s->msaa, pixel, k, h->hit.prim, &at);
        if (at.hit.prim != h->hit.prim) {
            at = *h;
            at.pixel = pixel * m + (uint32_t)k;
            add_through(c, s, o, &at, centre_passed, weight, PLH_BASE_LAYER, true);
            continue;
        }
        rt_ray passed;
        rt_cone next;
        rt_hit seen = {0, 0, 0, RT_NO_HIT};
        sh_ray_pass(s->env, &at.ray, &at.hit, at.cone, &passed, &next);
        rt_intersect1(split->bvh, &passed, &seen);
        plrt_ray r;
        if (seen.prim == RT_NO_HIT) r = at, r.hit = seen;
        else plh_camera_hit(split, s->msaa, pixel, -1, seen.prim, &r);
        r.pixel = pixel * m + (uint32_t)k;
        for (int ch = 0; ch < 3; ch++) r.weight[ch] = weight[ch];
        r.layers = h->layers + 1;
        add_ray(c, o, PLH_BEHIND, (plh_layer){0, 255, 1}, &r);
    }
}

/* h's shadow rays, one per light its surface faces, each carrying the light's term to
 * `layer` (whose alpha byte the surface's own term brings): written in place at the
 * end of the task's staged ones (pushed first when they would not fit). */
static void add_shadows(gr_ctx *c, plh_out *o, const plrt_ray *h, plh_layer layer, const sh_ray_result *res)
{
    const uint32_t n = (uint32_t)res->nshadow;
    if (o->nshadows + n > PLH_SHADOW_STAGED) push_shadows(c, o);
    plh_shadow *r = &o->shadows[o->nshadows];
    o->nshadows += n;
    o->pushed[PLH_SHADOW] += n;
    for (uint32_t l = 0; l < n; l++) {
        if (res->shadow[l].tmin != PLH_SHADOW_TMIN)   /* the element keeps no tmin */
            gr_assert_at(c, false, "a shadow ray not starting at its surface", __FILE__, __LINE__);
        r[l] = plh_shadow_of(&res->shadow[l], res->shadow_color[l], h->pixel, layer.layer);
    }
}

static void out_shaded(gr_ctx *c, const plh_shader *s, plh_out *o, const plrt_ray *h, plh_layer layer,
                       const plh_behind *behind, const sh_ray_result *res)
{
    const plh_layer carried = {layer.layer, layer.alpha8, 0};
    plh_out_first_contrib(c, s, o, h->pixel, carried, res->direct);
    if (s->shadows) add_shadows(c, o, h, carried, res);
    else
        for (int l = 0; l < res->nshadow; l++) plh_out_contrib(c, s, o, h->pixel, carried, res->shadow_color[l]);
    if (res->reflect && (int)h->depth < s->bounces)
        add_secondary(c, s, o, h, &res->reflected, res->reflect_weight, h->depth + 1, 0,
                      PLH_REFLECTION, carried);
    if (!res->pass) return;
    if (behind && layer.begins && s->msaa > 1) add_behind_samples(c, s, o, h, behind, &res->passed, res->pass_weight);
    else add_through(c, s, o, h, &res->passed, res->pass_weight, carried, layer.begins);
}

void plh_out_hit(gr_ctx *c, const plh_shader *s, plh_out *o, const plrt_ray *h, plh_layer in,
                 bool rasterized, const plh_behind *behind)
{
    sh_ray_result res;
    float quad[4];
    plh_layer layer = plh_layer_of(s, h, in);
    if (rasterized) quad_of(s, h, quad);
    if (layer.begins) {
        const rt_cone cone = rasterized ? (rt_cone){0.0f, 0.0f} : h->cone;
        sh_ray_shade_layer(s->env, &h->ray, &h->hit, h->weight, cone, rasterized ? quad : NULL, &res);
        layer.alpha8 = sh_to_linear8(res.alpha);
    } else if (rasterized) {
        sh_ray_shade_quad(s->env, &h->ray, &h->hit, h->weight, quad, &res);
    } else {
        sh_ray_shade_cone(s->env, &h->ray, &h->hit, h->weight, (int)h->depth, h->cone, &res);
    }
    out_shaded(c, s, o, h, layer, behind, &res);
}

void plh_out_aov(gr_ctx *c, const plh_shader *s, plh_out *o, const plrt_ray *h, plh_layer in,
                 const plh_behind *behind)
{
    float v[3];
    if (h->hit.prim == RT_NO_HIT) return;          /* AOVs of a miss have none */
    plh_layer layer = plh_layer_of(s, h, in);
    if (s->aov != SH_AOV_ALBEDO) {
        sh_ray_aov(s->env, s->aov, &h->ray, &h->hit, v);
        plh_out_first_contrib(c, s, o, h->pixel, layer, v);
        return;
    }
    float base[4], a = 1.0f, w[3];
    sh_ray_surface(s->env, &h->ray, &h->hit, h->cone, base);
    bool blended = sh_ray_blended(s->env, &h->hit, base, &a);
    /* a layer of its own is blended by om with its alpha; within one, composited here */
    const bool own = layer.begins;
    if (own) layer.alpha8 = sh_to_linear8(a);
    for (int ch = 0; ch < 3; ch++) v[ch] = h->weight[ch] * (blended && !own ? a * base[ch] : base[ch]);
    plh_out_first_contrib(c, s, o, h->pixel, layer, v);
    if (!blended) return;
    rt_ray passed;
    rt_cone next;
    sh_ray_pass(s->env, &h->ray, &h->hit, h->cone, &passed, &next);
    for (int i = 0; i < 3; i++) w[i] = own ? h->weight[i] : h->weight[i] * (1.0f - a);
    if (behind && own && s->msaa > 1) add_behind_samples(c, s, o, h, behind, &passed, w);
    else add_through(c, s, o, h, &passed, w, layer, own);
}

/* ps.c — hybrid.ps, the Pixel Shader of the Extended Direct3D graph
 * (pipelines/graphs/hybrid.graph; thesis 4.3.3, Fig. 4.1): for each run of samples of a
 * tile the depth pass has finished, the visible surface of each sample
 * (primary_hits.h), shaded with the renderers' shared functions: its textures filtered
 * at the footprint of the pixel's 2x2 quad from the triangle's corners, as the raster
 * pixel shader filters them (sh_ps_quad_derivatives), the lighting as the ray tracer's
 * Shade computes it (sh_ray_shade_quad). Its ambient and emissive terms go to the Output
 * Merger at once; each light it faces becomes a shadow ray carrying the light's term,
 * pushed to hybrid.shadow, a reflective material a mirror ray and a blended one the ray
 * on through it, pushed to Trace. Samples that see nothing send the background to the Output Merger.
 * With `sums` (one sample per pixel, after raster.ztile, which clears the sums) whatever
 * goes to a slot's base layer, the background and a surface's own terms, is added to the
 * slot's sums here instead, as hybrid.visible adds its misses: only this task adds to the
 * slot before it pushes the slot's rays, so what those rays bring is added after it (in
 * om, ordered by the queues), and om encodes the sums once its input has ended.
 * With msaa > 1 the runs are of pixels, and each pixel's fragments (one per triangle its
 * samples see, fragments.h) are shaded once each and push their rays once each. */
#include "pipelines/hybrid/internal.h"
#include "pipelines/hybrid/fragments.h"
#include "pipelines/hybrid/primary_hits.h"
#include "pipelines/raytrace/sample_runs.h"
#include "pipelines/surface.h"

#include <stdlib.h>

typedef struct ps_state {
    plh_primary primary;
    plh_behind behind;                    /* its fragments' samples (msaa > 1) */
    plh_shader shader;
    plh_miss_sums misses;                 /* with `sums`: the frame's (also shader.sums) */
    plh_tally fragments;
    pl_surface *surface;                  /* the frame's, when a float output wants it */
} ps_state;

/* Multisampling's limits: one sample per pixel for the camera (the samples are the
 * depth pass's), averageable values. Then the frame's per-sample resources get their
 * slots. */
static bool msaa_allowed(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    const int msaa = (int)cp_int(i, "msaa");
    if (msaa == 1) return true;
    if (pl_samples_per_pixel(i) > 1) {
        snprintf(err, CP_ERR_MAX, "stage '%s': msaa %d with spp %d: multisampling takes its samples "
                 "from the depth pass (use one or the other)", i->name, msaa, pl_samples_per_pixel(i));
        return false;
    }
    if (((const pl_frame *)i->frame)->aov == SH_AOV_PRIMID) {
        snprintf(err, CP_ERR_MAX, "stage '%s': msaa %d with the primid AOV: primitive ids cannot "
                 "be averaged (use msaa 1)", i->name, msaa);
        return false;
    }
    return pl_frame_set_samples(i->frame, msaa, err);
}

static void *ps_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (!plh_agree_layout(i, err) || !msaa_allowed(i, err)) return NULL;
    ps_state *s = malloc(sizeof *s);
    if (!s) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return NULL;
    }
    const bool counted = plh_tally_init(&s->fragments, i->frame, "fragments_shaded");
    if (!counted) snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    s->primary = (plh_primary){0};
    bool shader = false;
    if (counted && plh_primary_init(&s->primary, i, "rays", (int)cp_int(i, "msaa"), err) &&
        pl_frame_stage_surface(i, &s->surface, err) &&
        (shader = plh_shader_init(&s->shader, i, "ps", err)) &&
        plh_miss_sums_init(&s->misses, i, &s->primary, cp_bool(i, "sums"), err)) {
        s->shader.sums = s->misses.sums;
        s->behind = (plh_behind){&s->primary, true};
        /* per-sample layers cannot be summed per pixel: with more samples, blended
           surfaces are composited along the ray */
        const sc_scene *scene = ((const pl_frame *)i->frame)->data->scene;
        s->shader.draw_order = s->primary.spp == 1 && scene && sh_ray_scene_blends(scene) &&
                               (s->shader.aov == SH_AOV_COLOR || s->shader.aov == SH_AOV_ALBEDO);
        return s;
    }
    if (shader) plh_shader_free(&s->shader);
    plh_primary_free(&s->primary);
    plh_tally_free(&s->fragments);
    free(s);
    return NULL;
}

/* The counters into the frame's, after a run. */
static void ps_finish(void *state, void *frame)
{
    (void)frame;
    ps_state *s = state;
    plh_tally_fold(&s->fragments);
    plh_primary_fold(&s->primary);
    plh_shader_fold(&s->shader);
}

static void ps_destroy(void *state)
{
    ps_state *s = state;
    plh_tally_free(&s->fragments);
    plh_primary_free(&s->primary);
    plh_shader_free(&s->shader);
    free(s);
}

/* The pixel's surface (pipelines/surface.h) from h, its first sample's primary hit. */
static void put_surface(const ps_state *s, uint32_t pixel, const plrt_ray *h)
{
    if (h->hit.prim != RT_NO_HIT)
        s->surface[pixel] = pl_surface_of_hit(s->shader.env, s->primary.frame->camera.eye, &h->ray,
                                              &h->hit);
}

/* One sample: its surface shaded, or the background; returns 1 for a shaded fragment. */
static inline uint32_t ps_sample(gr_ctx *c, const ps_state *s, const plrt_ray *h, plh_out *o)
{
    const plh_shader *sh = &s->shader;
    if (h->hit.prim != RT_NO_HIT && h->hit.prim >= sh->env->geo->ntriangles) {
        gr_assert_at(c, false, "a primary hit outside the mesh", __FILE__, __LINE__);
        return 0;
    }
    const plh_layer camera = {0, 255, sh->draw_order};
    if (sh->aov != SH_AOV_COLOR) {
        plh_out_aov(c, sh, o, h, camera, &s->behind);
        return h->hit.prim != RT_NO_HIT;
    }
    if (h->hit.prim == RT_NO_HIT) {
        float bg[3];
        for (int ch = 0; ch < 3; ch++) bg[ch] = h->weight[ch] * sh->env->background[ch];
        if (sh->sums) plh_sum_first(sh->sums, h->pixel, bg);
        else plh_out_contrib(c, sh, o, h->pixel, PLH_BASE_LAYER, bg);
        return 0;
    }
    plh_out_hit(c, sh, o, h, camera, true, &s->behind);
    return 1;
}

/* With msaa > 1: a run of pixels, each pixel's fragments shaded in turn. */
static uint32_t ps_fragments(gr_ctx *c, const ps_state *s, const plrt_sample_run *run, plh_out *o)
{
    plrt_sample px[RT_PACKET_MAX];
    const pl_frame *f = s->primary.frame;
    const uint32_t n = plrt_run_samples_checked(c, run, RT_PACKET_MAX, f->width, f->height, 1, px);
    uint32_t shaded = 0;
    for (uint32_t i = 0; i < n; i++) {
        plrt_ray frags[RS_MAX_SAMPLES];
        const uint32_t m = (uint32_t)plh_pixel_fragments(c, &s->primary, s->shader.msaa, px[i].pixel, frags);
        if (s->surface) put_surface(s, px[i].pixel, &frags[0]);   /* sample 0's fragment */
        for (uint32_t k = 0; k < m; k++) shaded += ps_sample(c, s, &frags[k], o);
    }
    return shaded;
}

/* Without multisampling: a run of samples (spp per pixel). */
static uint32_t ps_samples(gr_ctx *c, const ps_state *s, const plrt_sample_run *run, plh_out *o)
{
    plrt_ray rays[RT_PACKET_MAX];
    const uint32_t n = plh_primary_hits(c, &s->primary, run, &s->misses, rays);
    for (uint32_t i = 0; s->surface && i < n; i++)
        if (plrt_surface_ray(s->primary.frame, &rays[i])) put_surface(s, rays[i].pixel, &rays[i]);
    uint32_t shaded = 0;
    for (uint32_t i = 0; i < n; i++) shaded += ps_sample(c, s, &rays[i], o);
    return shaded;
}

static void ps_main(gr_ctx *c)
{
    const ps_state *s = gr_user(c);
    const plrt_sample_run *run = gr_input(c, NULL);
    plh_out o;
    plh_out_start(&o, &s->shader);
    uint32_t shaded = s->shader.msaa > 1 ? ps_fragments(c, s, run, &o) : ps_samples(c, s, run, &o);
    plh_out_flush(c, &s->shader, &o);
    gr_push_flush(c, PLH_OUT_RAYS);
    gr_push_flush(c, PLH_OUT_SHADOWS);
    plh_tally_add(&s->fragments, c, shaded);
}

static const cp_port ps_ports[] = {
    {"in", GR_BIND_INPUT, "rt.sample-runs", "runs of samples (raster.ztile's, once a tile is final)"},
    {"rays", GR_BIND_PUSH, "hybrid.rays", "mirror rays, rays on through blended surfaces: to hybrid.trace"},
    {"shadow_rays", GR_BIND_PUSH, "hybrid.shadow-rays", "shadow rays, one per light the surface faces: to "
     "hybrid.shadow"},
    {"out", GR_BIND_PUSH, "hybrid.contributions", "ambient and emissive terms, background, into their "
     "draw-order layers (without `sums`, the base layer's too): to the Output Merger (hybrid.om), keyed "
     "by slot (plh_tile_key)"}};

static const cp_param ps_params[] = {
    {"spp", CP_INT, "1", 1, PL_MAX_SPP, "samples per pixel (Z-Tile's)"},
    {"sums", CP_BOOL, "false", 0, 0, "with spp 1, after raster.ztile (which clears the sums): add what "
     "goes to a slot's base layer (the background, a surface's ambient and emissive terms, its lights' "
     "without shadows) to its sums here instead of sending it to the Output Merger"},
    PLH_SHADER_PARAMS};

static const cp_resource_use ps_uses[] = {
    {"visibility", CP_READS, "raster.ztile's visible primitives"},
    {"sample-visibility", CP_READS, "with msaa > 1: raster.ztile's, per sample"},
    {"bvh", CP_READS, "traces where the raster pass missed"},
    {"sums", CP_WRITES, "with `sums`: adds its base-layer terms"},
    {"sample-sums", CP_WRITES, "with `sums` and msaa > 1"},
    {"textures", CP_READS, "filtered at each pixel quad's footprint"},
    {"surface", CP_WRITES, "the primary hit of each pixel's first sample, when a float output "
     "reads it"},
    PL_AGREED_USE("spp, msaa and tile")};

const cp_stage_type plh_ps_type = {
    "hybrid.ps", "Extended Direct3D pixel shader: shades the surfaces the depth pass found (textures "
    "from quad derivatives), pushes mirror and through rays to Trace, shadow rays to hybrid.shadow and the "
    "rest to the Output Merger", GR_SHADER, false, ps_ports, 4, ps_params, 7, ps_main, ps_create, ps_finish, ps_destroy, ps_uses, 8};

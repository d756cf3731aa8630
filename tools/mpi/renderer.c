/* renderer.c — one rank's graph, scene and chunks (see renderer.h). */
#include "tools/mpi/renderer.h"

#include "pipelines/stages.h"
#include "tools/common/measure.h"

#include <string.h>

int mp_renderer_init(mp_renderer *r, mp_options *o, char err[CP_ERR_MAX])
{
    *r = (mp_renderer){.o = o};
    int rc = rg_setup_init(&r->setup, &o->c.graph, err);
    if (rc) return rc;
    r->have_setup = true;
    char msg[SC_ERR_MAX];
    if (ro_load_scene_msg(&o->c, true, &r->scene, &r->geo, msg)) {
        snprintf(err, CP_ERR_MAX, "%s", msg);
        return 1;
    }
    r->have_scene = true;
    pl_scene_data_init(&r->data, r->scene, &r->geo);
    r->data.build_threads = o->c.threads;
    /* the BVH is the scene's: built once per rank, before any chunk */
    if (rg_needs_resource(&r->setup, "bvh") && !pl_scene_data_bvh(&r->data)) {
        snprintf(err, CP_ERR_MAX, "out of memory building the BVH of %s", o->c.scene);
        return 1;
    }
    return 0;
}

void mp_renderer_end_frame(mp_renderer *r)
{
    if (!r->have_frame) return;
    mp_counters_add_frame(&r->counters, &r->frame);
    pl_frame_free(&r->frame);
    r->have_frame = false;
}

/* The frame for chunks of frame `index`, opened when it is not the open one. */
static pl_frame *frame_for(mp_renderer *r, int index, char err[CP_ERR_MAX])
{
    if (r->have_frame && r->frame_index == index) return &r->frame;
    mp_renderer_end_frame(r);
    const ro_options *o = &r->o->c;
    if (!pl_frame_init(&r->frame, &r->data, o->width, o->height, o->aov, err)) return NULL;
    r->have_frame = true;
    r->frame_index = index;
    return &r->frame;
}

void mp_renderer_free(mp_renderer *r)
{
    mp_renderer_end_frame(r);
    if (r->have_scene) {
        pl_scene_data_free(&r->data);
        sc_geometry_free(&r->geo);
        sc_free(r->scene);
    }
    if (r->have_setup) rg_setup_free(&r->setup);
    r->have_scene = r->have_setup = false;
}

bool mp_renderer_rasterizes(const mp_renderer *r) { return rg_needs_resource(&r->setup, "triangles"); }

const char *mp_renderer_graph_name(const mp_renderer *r)
{
    const char *name = cp_graph_value(r->setup.graph, "name");
    return name ? name : r->setup.name;
}

static void copy_region(pl_frame *f, const pl_region *reg, uint8_t *pixels)
{
    const uint8_t *img = pl_frame_image(f);
    size_t row = (size_t)(reg->x1 - reg->x0) * 4;
    for (int y = reg->y0; y < reg->y1; y++)
        memcpy(pixels + (size_t)(y - reg->y0) * row, img + ((size_t)y * f->width + reg->x0) * 4, row);
}

int mp_render_chunk(mp_renderer *r, const mp_chunk *c, uint8_t *pixels, mp_work *w,
                    char err[CP_ERR_MAX])
{
    const ro_options *o = &r->o->c;
    double t0 = io_now_ms();
    pl_frame *f = frame_for(r, c->frame, err);
    if (!f || !pl_frame_set_region(f, c->region, err)) return 1;
    gr_launch_opts launch = {.scheduler = o->scheduler, .workers = o->threads, .verbose = o->verbose};
    gr_graph *g = pl_render_frame(r->setup.graph, f, &launch, err);
    if (!g) return 1;
    copy_region(f, &c->region, pixels);
    const gr_stats *st = gr_get_stats(g);
    if (st && st->peak_footprint_bytes > w->peak_footprint) w->peak_footprint = (double)st->peak_footprint_bytes;
    gr_graph_destroy(g);
    w->chunks++;
    w->busy_ms += io_now_ms() - t0;
    return 0;
}

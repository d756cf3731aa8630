/* raster.c — clipping, triangle setup and coverage (see raster.h); the depth-testing
 * kernels are in depth_rect.c.
 *
 * Everything a fragment gets is computed from the triangle and the pixel alone (exact
 * integer edge values at the pixel centre, which stepping along a row reproduces
 * exactly), so the result does not depend on how the image is split into tiles or
 * packets. */
#include "rasterizer/raster.h"

#include "rasterizer/edges.h"
#include "rasterizer/setup_projected.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* ---- clipping ---------------------------------------------------------------------------- */

/* Signed distance to the plane (positive inside): near z >= -w, far z <= w, and the guard
 * band |x|, |y| <= RS_GUARD * w. */
static float plane_dist(const rs_vertex *v, int plane)
{
    const float *c = v->clip;
    switch (plane) {
    case 0: return c[2] + c[3];
    case 1: return c[3] - c[2];
    case 2: return RS_GUARD * c[3] - c[0];
    case 3: return RS_GUARD * c[3] + c[0];
    case 4: return RS_GUARD * c[3] - c[1];
    default: return RS_GUARD * c[3] + c[1];
    }
}

static rs_vertex lerp_vertex(const rs_vertex *a, const rs_vertex *b, float t)
{
    rs_vertex r;
    for (int i = 0; i < 4; i++) r.clip[i] = a->clip[i] + t * (b->clip[i] - a->clip[i]);
    for (int i = 0; i < RS_ATTRS; i++) r.attr[i] = a->attr[i] + t * (b->attr[i] - a->attr[i]);
    return r;
}

/* Sutherland-Hodgman against one plane; polygons have at most 3 + 6 vertices. */
static int clip_polygon(const rs_vertex *in, int n, rs_vertex *out, int plane)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        const rs_vertex *a = &in[i], *b = &in[(i + 1) % n];
        float da = plane_dist(a, plane), db = plane_dist(b, plane);
        if (da >= 0) out[m++] = *a;
        if ((da >= 0) != (db >= 0)) out[m++] = lerp_vertex(a, b, da / (da - db));
    }
    return m;
}

unsigned rs_outcode(const rs_vertex *v)
{
    return rs_outcode_of(v->clip[0], v->clip[1], v->clip[2], v->clip[3]);
}

rs_clip_kind rs_clip_classify_codes(unsigned c0, unsigned c1, unsigned c2)
{
    if (c0 & c1 & c2) return RS_CLIP_CULLED;   /* entirely outside one plane */
    return (c0 | c1 | c2) ? RS_CLIP_CUT : RS_CLIP_INSIDE;
}

int rs_clip(const rs_triangle *in, rs_triangle out[RS_MAX_CLIPPED])
{
    unsigned c0 = rs_outcode(&in->v[0]), c1 = rs_outcode(&in->v[1]), c2 = rs_outcode(&in->v[2]);
    unsigned outside_all = c0 & c1 & c2, any_outside = c0 | c1 | c2;
    if (outside_all) return 0;                 /* entirely outside one plane */
    if (!any_outside) { out[0] = *in; return 1; }
    rs_vertex poly[2][12];
    memcpy(poly[0], in->v, sizeof in->v);
    int n = 3, cur = 0;
    for (int p = 0; p < 6 && n >= 3; p++) {
        if (!(any_outside & (1u << p))) continue;
        n = clip_polygon(poly[cur], n, poly[1 - cur], p);
        cur = 1 - cur;
    }
    int m = 0;
    for (int i = 1; i + 1 < n && m < RS_MAX_CLIPPED; i++, m++) {   /* fan, in order */
        out[m] = *in;
        out[m].v[0] = poly[cur][0];
        out[m].v[1] = poly[cur][i];
        out[m].v[2] = poly[cur][i + 1];
    }
    return m;
}

/* ---- setup ----------------------------------------------------------------------------- */

void rs_project_vertex(const rs_vertex *v, int width, int height, rs_screen_vertex *out)
{
    const float *c = v->clip;
    out->ok = c[3] > 0;
    if (!out->ok) return;
    float sx, sy;
    rs_project(c[0], c[1], c[2], c[3], width, height, &out->inv_w, &out->z, &sx, &sy);
    out->x = llrintf(rs_subpixels(sx));
    out->y = llrintf(rs_subpixels(sy));
}

bool rs_setup_triangle(const rs_triangle *t, int width, int height, rs_setup *s)
{
    return rs_setup_triangle_reach(t, width, height, &rs_centre_reach, s);
}


/* Pixel centres only: a point half a pixel in from the pixel's corner on each axis. */
const rs_reach rs_centre_reach = {1 << (RS_SUBPIXEL_BITS - 1), 1 << (RS_SUBPIXEL_BITS - 1),
                                  1 << (RS_SUBPIXEL_BITS - 1), 1 << (RS_SUBPIXEL_BITS - 1)};

bool rs_setup_triangle_reach(const rs_triangle *t, int width, int height, const rs_reach *r,
                             rs_setup *s)
{
    rs_screen_vertex sv[3];
    for (int k = 0; k < 3; k++) {
        rs_project_vertex(&t->v[k], width, height, &sv[k]);
        if (!sv[k].ok) return false;
    }
    return rs_setup_projected_reach((const rs_screen_vertex *const[3]){&sv[0], &sv[1], &sv[2]},
                                    width, height, r, s);
}

bool rs_setup_projected(const rs_screen_vertex *const v[3], int width, int height, rs_setup *s)
{
    return rs_setup_projected_body(v, width, height, &rs_centre_reach, s);
}

bool rs_setup_projected_reach(const rs_screen_vertex *const v[3], int width, int height,
                              const rs_reach *r, rs_setup *s)
{
    return rs_setup_projected_body(v, width, height, r, s);
}

/* ---- rasterization ----------------------------------------------------------------------- */

int rs_raster_rect(const rs_setup *s, int x0, int y0, int x1, int y1, rs_cover *out)
{
    clamp_to_bounds(s, &x0, &y0, &x1, &y1);
    const edge_walk w = edge_walk_from(s, x0);
    int n = 0;
    for (int y = y0; y < y1; y++) {
        int64_t e[3];
        edge_row(s, &w, y, e);
        int64_t e0 = e[0], e1 = e[1], e2 = e[2];
        bool in_span = false;
        for (int x = x0; x < x1; x++, e0 += w.step[0], e1 += w.step[1], e2 += w.step[2]) {
            if ((e0 | e1 | e2) >= 0) {
                out[n++] = (rs_cover){(uint16_t)x, (uint16_t)y, e0 - s->bias[0], e1 - s->bias[1]};
                in_span = true;
            } else if (in_span) {
                break;                    /* a row meets a triangle in one span */
            }
        }
    }
    return n;
}

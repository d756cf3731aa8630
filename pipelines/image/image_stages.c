/* image_stages.c — the built-in image-space stage types (see image.h; each tile of the
 * frame's region, after the graph, in linear colour):
 *
 *   image.tonemap  exposure, then a curve (ACES filmic as Narkowicz fits it, Reinhard, or
 *                  a clamp); halo 0, in place. The sRGB encode is the runner's last step.
 *   image.fxaa     FXAA in the manner of Lottes' console version: an edge direction from
 *                  the luma of the four diagonal neighbours, two or four bilinear taps
 *                  along it; halo (span + 1) / 2 + 1 (the farthest tap, and its bilinear
 *                  footprint). An early exit leaves pixels of low contrast as they are.
 *   image.outline  a Sobel filter of luma at `width` pixels' distance; where the
 *                  gradient exceeds `threshold` the pixel becomes the line colour; halo
 *                  `width`.
 *
 * Every pixel is a function of the input image alone, in a fixed order of float
 * operations, so images are the same for any worker count, scheduler or tiling. */
#include "pipelines/image/image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool image_frame(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (i->frame) return true;
    snprintf(err, CP_ERR_MAX, "stage '%s': an image-space stage needs a renderer frame "
             "(run it with gramps-render)", i->name);
    return false;
}

/* "r,g,b" with each in [0, 1]. */
static bool parse_rgb(const char *text, float rgb[3])
{
    char tail;
    return sscanf(text, "%f , %f , %f %c", &rgb[0], &rgb[1], &rgb[2], &tail) == 3 &&
           rgb[0] >= 0 && rgb[0] <= 1 && rgb[1] >= 0 && rgb[1] <= 1 && rgb[2] >= 0 && rgb[2] <= 1;
}

/* Linear luma (Rec. 709 weights). */
static inline float luma(const float *p) { return 0.2126f * p[0] + 0.7152f * p[1] + 0.0722f * p[2]; }

/* The luma of the tile and its halo, read once (clamped at the valid area's edges):
 * the filter then reads each of its eight neighbours from here. NULL when out of memory. */
static float *luma_plane(const cp_image_tile *t, int w, int *pw)
{
    *pw = t->x1 - t->x0 + 2 * w;
    int ph = t->y1 - t->y0 + 2 * w;
    float *l = malloc((size_t)*pw * (size_t)ph * sizeof *l);
    for (int y = 0; l && y < ph; y++)
        for (int x = 0; x < *pw; x++)
            l[(size_t)y * (size_t)*pw + (size_t)x] = luma(cp_image_src(t, t->x0 - w + x, t->y0 - w + y));
    return l;
}

/* ---- image.tonemap ---------------------------------------------------------------------- */

typedef enum tm_curve { TM_ACES, TM_REINHARD, TM_CLAMP } tm_curve;

typedef struct tonemap_state { float exposure; tm_curve curve; } tonemap_state;

static void *tonemap_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    const char *c = cp_string(i, "curve");
    tm_curve curve = !strcmp(c, "aces") ? TM_ACES : !strcmp(c, "reinhard") ? TM_REINHARD
                   : !strcmp(c, "clamp") ? TM_CLAMP : (tm_curve)-1;
    if ((int)curve < 0) {
        snprintf(err, CP_ERR_MAX, "stage '%s': curve '%s' is not aces, reinhard or clamp", i->name, c);
        return NULL;
    }
    if (!image_frame(i, err)) return NULL;
    tonemap_state *s = malloc(sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    *s = (tonemap_state){(float)cp_float(i, "exposure"), curve};
    return s;
}

static inline float tm_apply(tm_curve c, float x)
{
    if (!(x > 0.0f)) return 0.0f;      /* also NaN */
    if (c == TM_REINHARD) return x / (1.0f + x);
    if (c == TM_ACES) x = (x * (2.51f * x + 0.03f)) / (x * (2.43f * x + 0.59f) + 0.14f);
    return x < 1.0f ? x : 1.0f;
}

static void tonemap_tile(void *state, const cp_image_tile *t)
{
    const tonemap_state *s = state;
    for (int y = t->y0; y < t->y1; y++)
        for (int x = t->x0; x < t->x1; x++) {
            float *o = cp_image_dst(t, x, y);
            for (int ch = 0; ch < 3; ch++) o[ch] = tm_apply(s->curve, s->exposure * o[ch]);
        }
}

static const cp_param tonemap_params[] = {
    {"exposure", CP_FLOAT, "1", 0, 65536, "linear colour is multiplied by this before the curve"},
    {"curve", CP_STRING, "aces", 0, 0, "aces (Narkowicz's fit of the ACES filmic curve), "
     "reinhard (x / (1 + x)) or clamp (to 1)"},
};

static const cp_resource_use tonemap_uses[] = {
    {"post", CP_READS | CP_WRITES, "in place: each pixel from itself"},
    {"hdr-color", CP_READS, "the sinks' linear colour, the first stage's input"},
};


/* ---- image.fxaa --------------------------------------------------------------------------- */

typedef struct fxaa_state { float span, reduce_min, reduce_mul; } fxaa_state;

static void *fxaa_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (!image_frame(i, err)) return NULL;
    fxaa_state *s = malloc(sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    *s = (fxaa_state){(float)cp_int(i, "span"), 1.0f / 128.0f, 1.0f / 8.0f};
    return s;
}

/* The farthest tap is span / 2 pixels from the pixel's centre; its bilinear footprint
 * one more. */
static int fxaa_halo(const void *state)
{
    const fxaa_state *s = state;
    return ((int)s->span + 1) / 2 + 1;
}

static inline float min2(float a, float b) { return a < b ? a : b; }
static inline float max2(float a, float b) { return a > b ? a : b; }

/* floor for the small coordinates of a tap (no library call without SSE4.1). */
static inline int floor_int(float f)
{
    int i = (int)f;
    return (float)i > f ? i - 1 : i;
}

/* A bilinear tap at image position (u, v) (pixel centres at k + 0.5). */
static void fxaa_tap(const cp_image_tile *t, float u, float v, float out[3])
{
    float fu = u - 0.5f, fv = v - 0.5f;
    int x0 = floor_int(fu), y0 = floor_int(fv);
    float ax = fu - (float)x0, ay = fv - (float)y0;
    const float *a = cp_image_src(t, x0, y0), *b = cp_image_src(t, x0 + 1, y0);
    const float *c = cp_image_src(t, x0, y0 + 1), *d = cp_image_src(t, x0 + 1, y0 + 1);
    for (int ch = 0; ch < 3; ch++) {
        float top = a[ch] + (b[ch] - a[ch]) * ax, bottom = c[ch] + (d[ch] - c[ch]) * ax;
        out[ch] = top + (bottom - top) * ay;
    }
}

/* Perceptual luma for edge finding: sqrt of linear luma (close to gamma 2). */
static inline float fxaa_luma(const float *p)
{
    float l = luma(p);
    return l > 0.0f ? sqrtf(l) : 0.0f;
}

/* FXAA 3.11's defaults for its early exit: a pixel whose neighbourhood's luma range is
 * below max(EDGE_MIN, EDGE x the brightest) is no edge and stays as it is. */
#define FXAA_EDGE 0.125f
#define FXAA_EDGE_MIN 0.0312f

static inline float root(float l) { return l > 0.0f ? sqrtf(l) : 0.0f; }

/* Pixel (x, y), given the linear lumas of its four diagonal neighbours and itself. */
static void fxaa_pixel(const fxaa_state *s, const cp_image_tile *t, int x, int y, float lnw,
                       float lne, float lsw, float lse, float lm)
{
    /* the range from linear lumas, rooted at the ends only: the root is monotonic, so
     * this is the range of the rooted lumas, bit for bit, at two roots instead of five */
    const float *m = cp_image_src(t, x, y);
    float lmin = root(min2(lm, min2(min2(lnw, lne), min2(lsw, lse))));
    float lmax = root(max2(lm, max2(max2(lnw, lne), max2(lsw, lse))));
    float *o = cp_image_dst(t, x, y);
    if (lmax - lmin < max2(FXAA_EDGE_MIN, lmax * FXAA_EDGE)) {
        memcpy(o, m, 4 * sizeof *o);
        return;
    }
    float nw = root(lnw), ne = root(lne), sw = root(lsw), se = root(lse);
    float dx = -((nw + ne) - (sw + se)), dy = (nw + sw) - (ne + se);
    float reduce = max2((nw + ne + sw + se) * (0.25f * s->reduce_mul), s->reduce_min);
    float rcp = 1.0f / (min2(fabsf(dx), fabsf(dy)) + reduce);
    dx = min2(s->span, max2(-s->span, dx * rcp));
    dy = min2(s->span, max2(-s->span, dy * rcp));
    float u = (float)x + 0.5f, v = (float)y + 0.5f, p1[3], p2[3], p3[3], p4[3], a[3], b[3];
    fxaa_tap(t, u + dx * (1.0f / 3.0f - 0.5f), v + dy * (1.0f / 3.0f - 0.5f), p1);
    fxaa_tap(t, u + dx * (2.0f / 3.0f - 0.5f), v + dy * (2.0f / 3.0f - 0.5f), p2);
    fxaa_tap(t, u - dx * 0.5f, v - dy * 0.5f, p3);
    fxaa_tap(t, u + dx * 0.5f, v + dy * 0.5f, p4);
    for (int ch = 0; ch < 3; ch++) {
        a[ch] = 0.5f * (p1[ch] + p2[ch]);
        b[ch] = a[ch] * 0.5f + 0.25f * (p3[ch] + p4[ch]);
    }
    float lb = fxaa_luma(b);
    const float *pick = lb < lmin || lb > lmax ? a : b;
    memcpy(o, pick, 3 * sizeof *o);
    o[3] = m[3];
}

static void fxaa_tile(void *state, const cp_image_tile *t)
{
    int pw;
    float *l = luma_plane(t, 1, &pw);  /* NULL (out of memory): lumas read directly */
    for (int y = t->y0; y < t->y1; y++) {
        const float *up = l ? l + (size_t)(y - t->y0) * (size_t)pw + 1 : NULL;
        const float *mid = up ? up + pw : NULL, *down = up ? up + 2 * (size_t)pw : NULL;
        for (int x = t->x0; x < t->x1; x++) {
            int c = x - t->x0;
            if (l)
                fxaa_pixel(state, t, x, y, up[c - 1], up[c + 1], down[c - 1], down[c + 1], mid[c]);
            else
                fxaa_pixel(state, t, x, y, luma(cp_image_src(t, x - 1, y - 1)),
                           luma(cp_image_src(t, x + 1, y - 1)), luma(cp_image_src(t, x - 1, y + 1)),
                           luma(cp_image_src(t, x + 1, y + 1)), luma(cp_image_src(t, x, y)));
        }
    }
    free(l);
}

static const cp_param fxaa_params[] = {
    {"span", CP_INT, "8", 2, 32, "the longest edge step, pixels (halo (span + 1) / 2 + 1)"},
};

static const cp_resource_use halo_uses[] = {
    {"post", CP_READS | CP_WRITES, "the input (or output, as they swap)"},
    {"post-swap", CP_READS | CP_WRITES, "the output (or input)"},
    {"hdr-color", CP_READS, "the sinks' linear colour, the first stage's input"},
};


/* ---- image.outline -------------------------------------------------------------------------- */

typedef struct outline_state { int width; float threshold; float rgb[3]; } outline_state;

static void *outline_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    float rgb[3];
    if (!parse_rgb(cp_string(i, "color"), rgb)) {
        snprintf(err, CP_ERR_MAX, "stage '%s': color '%s' is not three numbers in [0, 1] "
                 "(r,g,b, linear)", i->name, cp_string(i, "color"));
        return NULL;
    }
    if (!image_frame(i, err)) return NULL;
    outline_state *s = malloc(sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    *s = (outline_state){(int)cp_int(i, "width"), (float)cp_float(i, "threshold"), {rgb[0], rgb[1], rgb[2]}};
    return s;
}

static int outline_halo(const void *state) { return ((const outline_state *)state)->width; }

static inline float lum_at(const cp_image_tile *t, int x, int y) { return luma(cp_image_src(t, x, y)); }

/* The same filter reading the input directly (when the plane cannot be had): the same
 * values in the same order, so the same bits, only slower. */
static void outline_direct(const outline_state *s, const cp_image_tile *t)
{
    const int w = s->width;
    for (int y = t->y0; y < t->y1; y++)
        for (int x = t->x0; x < t->x1; x++) {
            float gx = (lum_at(t, x + w, y - w) + 2.0f * lum_at(t, x + w, y) + lum_at(t, x + w, y + w)) -
                       (lum_at(t, x - w, y - w) + 2.0f * lum_at(t, x - w, y) + lum_at(t, x - w, y + w));
            float gy = (lum_at(t, x - w, y + w) + 2.0f * lum_at(t, x, y + w) + lum_at(t, x + w, y + w)) -
                       (lum_at(t, x - w, y - w) + 2.0f * lum_at(t, x, y - w) + lum_at(t, x + w, y - w));
            const float *in = cp_image_src(t, x, y);
            float *o = cp_image_dst(t, x, y);
            bool edge = sqrtf(gx * gx + gy * gy) > s->threshold;
            for (int ch = 0; ch < 3; ch++) o[ch] = edge ? s->rgb[ch] : in[ch];
            o[3] = in[3];
        }
}

static void outline_tile(void *state, const cp_image_tile *t)
{
    const outline_state *s = state;
    const int w = s->width;
    int pw;
    float *l = luma_plane(t, w, &pw);
    if (!l) {
        outline_direct(s, t);
        return;
    }
    for (int y = t->y0; y < t->y1; y++) {
        /* rows above, at and below the pixel, at its column in the plane */
        const float *up = l + (size_t)(y - t->y0) * (size_t)pw + w;
        const float *mid = up + (size_t)w * (size_t)pw, *down = mid + (size_t)w * (size_t)pw;
        for (int x = t->x0; x < t->x1; x++) {
            int c = x - t->x0;
            float gx = (up[c + w] + 2.0f * mid[c + w] + down[c + w]) -
                       (up[c - w] + 2.0f * mid[c - w] + down[c - w]);
            float gy = (down[c - w] + 2.0f * down[c] + down[c + w]) -
                       (up[c - w] + 2.0f * up[c] + up[c + w]);
            const float *in = cp_image_src(t, x, y);
            float *o = cp_image_dst(t, x, y);
            bool edge = sqrtf(gx * gx + gy * gy) > s->threshold;
            for (int ch = 0; ch < 3; ch++) o[ch] = edge ? s->rgb[ch] : in[ch];
            o[3] = in[3];
        }
    }
    free(l);
}

static const cp_param outline_params[] = {
    {"width", CP_INT, "1", 1, 16, "the filter's reach in pixels, which is its halo"},
    {"threshold", CP_FLOAT, "0.25", 0, 1000, "the luma gradient above which a pixel is an edge"},
    {"color", CP_STRING, "0,0,0", 0, 0, "the line colour, linear r,g,b in [0, 1]"},
};


/* ---- the table -------------------------------------------------------------------------------- */

#define N(a) (int)(sizeof(a) / sizeof *(a))

static const cp_image_stage_type types[] = {
    {{.name = "image.tonemap", .help = "exposure and a tone curve (aces, reinhard, clamp) "
      "before the final sRGB encode; halo 0", .create = tonemap_create, .destroy = free,
      .params = tonemap_params, .nparams = N(tonemap_params), .resources = tonemap_uses,
      .nresources = N(tonemap_uses)}, 0, NULL, tonemap_tile},
    {{.name = "image.fxaa", .help = "fast approximate anti-aliasing (Lottes' console FXAA) "
      "on linear colour; halo (span + 1) / 2 + 1", .create = fxaa_create, .destroy = free,
      .params = fxaa_params, .nparams = N(fxaa_params), .resources = halo_uses,
      .nresources = N(halo_uses)}, 5, fxaa_halo, fxaa_tile},
    {{.name = "image.outline", .help = "lines where the luma's Sobel gradient exceeds a "
      "threshold; halo width", .create = outline_create, .destroy = free,
      .params = outline_params, .nparams = N(outline_params), .resources = halo_uses,
      .nresources = N(halo_uses)}, 1, outline_halo, outline_tile},
};

int pli_register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    for (int i = 0; i < N(types); i++)
        if (cp_register_image_stage(r, &types[i], err)) return -1;
    return 0;
}

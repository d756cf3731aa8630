/* image_run.c — the runner of the image-space stages (see image.h): their frame
 * resources, the phases, and the sRGB decode and encode around them. */
#include "pipelines/image/image.h"

#include "raytracer/isa.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resources ---------------------------------------------------------------------- */

static const cp_resource_type post = {
    "post", "the image-space stages' image: linear colour of the frame's region, decoded "
    "from the image after the graph and encoded back after the last stage",
    "rgba f32", 16, CP_PER_PIXEL, false, CP_CLEAR_NONE, NULL, NULL, NULL, NULL};

static const cp_resource_type post_swap = {
    "post-swap", "the second image of the image-space stages: a stage with a halo writes "
    "here while its neighbours' tiles still read the first", "rgba f32", 16, CP_PER_PIXEL,
    false, CP_CLEAR_NONE, NULL, NULL, NULL, NULL};

int pli_register_resources(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_resource(r, &post, err) || cp_register_resource(r, &post_swap, err) ? -1 : 0;
}

/* ---- the sRGB decode ------------------------------------------------------------------ */

static float decode_table[256];
static pthread_once_t decode_once = PTHREAD_ONCE_INIT;

/* The formula's value, unless it does not encode back to its byte: then the smallest
 * float that does (sh_srgb_threshold). Either way encode(decode(b)) == b, so a graph
 * whose stages change nothing gives the image it had without them. */
static void build_decode(void)
{
    sh_srgb_init();
    for (int b = 0; b < 256; b++) {
        float s = (float)b / 255.0f;
        float v = s <= 0.04045f ? s / 12.92f : powf((s + 0.055f) / 1.055f, 2.4f);
        if (b == 0) v = 0.0f;
        if (sh_srgb8_lookup(v) != b) v = sh_srgb_threshold[b];
        decode_table[b] = v;
    }
}

float pli_decode_srgb8(uint8_t byte)
{
    pthread_once(&decode_once, build_decode);
    return decode_table[byte];
}

/* ---- tiles and phases ----------------------------------------------------------------- */

int pli_graph_tile(const cp_graph *g, const cp_vars *vars)
{
    char buf[256];
    const char *t = cp_graph_resolved(g, vars, "tile", buf);
    char *end;
    long tile = t ? strtol(t, &end, 10) : 0;
    if (!t || *end || tile < PLI_MIN_TILE || tile > PLI_MAX_TILE) return PLI_DEFAULT_TILE;
    return (int)tile;
}

int pli_total_halo(const pl_frame *f, const cp_image_pass *p, int n, int tile,
                   char err[CP_ERR_MAX])
{
    int total = 0;
    for (int i = 0; i < n; i++) {
        if (p[i].halo > tile) {
            snprintf(err, CP_ERR_MAX, "image-space stage '%s' (type %s) reads a halo of %d "
                     "pixels around each tile, more than the graph's %d-pixel tile: a tile "
                     "may read only its neighbour tiles (raise [graph] tile, up to %d, or "
                     "lower the stage's halo)", p[i].name, p[i].type->stage.name, p[i].halo, tile,
                     PLI_MAX_TILE);
            return -1;
        }
        total += p[i].halo;
    }
    return f->aov == SH_AOV_COLOR ? total : 0;
}

typedef struct run_job {
    pl_frame *f;
    const float *hdr;                  /* the sinks' linear colour (pl_frame_hdr), or NULL:
                                          the image is decoded */
    uint32_t *color;                   /* the frame's image, looked up once before the
                                          tiles run: a lookup per tile raced on the
                                          resource table (ThreadSanitizer) */
    const cp_image_pass *p;
    int npasses;
    int first, last;                   /* the phase's passes [first, last) */
    bool decode, encode;               /* the phase starts from the image / ends in it */
    float *bufs[2];
    int src;                           /* bufs[src] is the phase's first input */
    int tile, tiles_x, ntiles;
    _Atomic(int) next;                 /* the next tile to take */
    _Atomic(bool) failed;              /* a part could not get its scratch tile */
    bool avx2;
} run_job;

/* The sinks' linear colour of the tile into buf, as it is (values above 1 kept). */
static void copy_tile(const run_job *j, const cp_image_tile *t, float *buf)
{
    for (int y = t->y0; y < t->y1; y++) {
        const float *in = j->hdr + 4 * ((size_t)y * (size_t)t->width + (size_t)t->x0);
        float *o = buf + 4 * ((size_t)(y - t->oy) * t->stride + (size_t)(t->x0 - t->ox));
        memcpy(o, in, 4 * sizeof *o * (size_t)(t->x1 - t->x0));
    }
}

/* The tile's input: the sinks' linear colour, or the image decoded when no sink wrote
 * it (a graph whose sink is a plugin's). */
static void decode_tile(const run_job *j, const cp_image_tile *t, float *buf)
{
    if (j->hdr) {
        copy_tile(j, t, buf);
        return;
    }
    const uint32_t *color = j->color;
    for (int y = t->y0; y < t->y1; y++) {
        const uint32_t *row = color + (size_t)y * (size_t)t->width;
        for (int x = t->x0; x < t->x1; x++) {
            uint32_t c = row[x];
            float *o = buf + 4 * ((size_t)(y - t->oy) * t->stride + (size_t)(x - t->ox));
            for (int ch = 0; ch < 3; ch++) o[ch] = decode_table[(c >> (8 * ch)) & 0xff];
            o[3] = (float)(c >> 24) / 255.0f;
        }
    }
}

static uint8_t alpha8(float a)
{
    return !(a > 0.0f) ? 0 : a >= 1.0f ? 255 : (uint8_t)(a * 255.0f + 0.5f);
}

/* The final encode: sRGB for colour, alpha as it came (a / 255 decodes back exactly).
 * The table search runs on the four channels and alpha is then written over: gathering
 * the colour channels first cost more than the search it saved (perf). */
static void encode_tile(const run_job *j, const float *buf, const cp_image_tile *t)
{
    uint8_t *color = (uint8_t *)j->color;
    int w = t->x1 - t->x0;
    for (int y = t->y0; y < t->y1; y++) {
        const float *in = buf + 4 * ((size_t)(y - t->oy) * t->stride + (size_t)(t->x0 - t->ox));
        uint8_t *row = color + 4 * ((size_t)y * (size_t)t->width + (size_t)t->x0);
        sh_srgb8_encode_n(in, row, 4 * w, j->avx2);
        for (int x = 0; x < w; x++) row[4 * x + 3] = alpha8(in[4 * x + 3]);
    }
}

/* Tile k of the region through the phase: its first pass from bufs[src] (into the other
 * buffer when it has a halo), the passes without a halo in place after it. With no halo
 * anywhere, the tile goes from decode to encode in `scratch`, a buffer of its own. */
static void phase_tile(run_job *j, int k, float *scratch)
{
    const pl_region *r = &j->f->region;
    int tx = k % j->tiles_x, ty = k / j->tiles_x;
    cp_image_tile t = {.stride = (size_t)j->f->width, .width = j->f->width, .height = j->f->height,
                       .x0 = r->x0 + tx * j->tile, .y0 = r->y0 + ty * j->tile,
                       .vx0 = r->x0, .vy0 = r->y0, .vx1 = r->x1, .vy1 = r->y1};
    t.x1 = t.x0 + j->tile < r->x1 ? t.x0 + j->tile : r->x1;
    t.y1 = t.y0 + j->tile < r->y1 ? t.y0 + j->tile : r->y1;
    float *bufs[2] = {j->bufs[0], j->bufs[1]};
    if (scratch) {
        bufs[0] = scratch;
        t.stride = (size_t)j->tile;
        t.ox = t.x0;
        t.oy = t.y0;
    }
    int cur = j->src;
    if (j->decode) decode_tile(j, &t, bufs[cur]);
    for (int i = j->first; i < j->last; i++) {
        int out = j->p[i].halo ? 1 - cur : cur;
        t.src = bufs[cur];
        t.dst = bufs[out];
        j->p[i].type->tile(j->p[i].state, &t);
        cur = out;
    }
    if (j->encode) encode_tile(j, bufs[cur], &t);
}

static void phase_part(void *arg, unsigned part, unsigned parts)
{
    (void)part, (void)parts;
    run_job *j = arg;
    float *scratch = NULL;
    if (!j->bufs[0]) {
        scratch = malloc((size_t)j->tile * (size_t)j->tile * 4 * sizeof *scratch);
        if (!scratch) { atomic_store(&j->failed, true); return; }
    }
    for (;;) {
        int k = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (k >= j->ntiles) break;
        phase_tile(j, k, scratch);
    }
    free(scratch);
}

/* Passes [first, last) over every tile; first == last == 0: the decode alone. */
static void run_phase(run_job *j, int first, int last, unsigned parts)
{
    j->first = first;
    j->last = last;
    j->decode = first == 0 && (last == 0 || j->p[0].halo == 0);
    j->encode = last == j->npasses;
    atomic_store_explicit(&j->next, 0, memory_order_relaxed);
    gr_parallel(parts, phase_part, j);
    for (int i = first; i < last; i++) j->src = j->p[i].halo ? 1 - j->src : j->src;
}

/* The buffers: none when no pass has a halo (each tile goes through them in a buffer of
 * its own), else "post" and "post-swap". */
static bool get_buffers(run_job *j, const cp_image_pass *p, int n, char err[CP_ERR_MAX])
{
    bool halo = false;
    for (int i = 0; i < n; i++) halo |= p[i].halo > 0;
    if (!halo) return true;
    j->bufs[0] = pl_frame_resource(j->f, &post, CP_READS | CP_WRITES, "");
    j->bufs[1] = pl_frame_resource(j->f, &post_swap, CP_READS | CP_WRITES, "");
    if (!j->bufs[0] || !j->bufs[1]) {
        snprintf(err, CP_ERR_MAX, "out of memory (the image-space stages' %dx%d linear image)",
                 j->f->width, j->f->height);
        return false;
    }
    return true;
}

bool pli_run(pl_frame *f, const cp_image_pass *p, int n, int tile, unsigned workers,
             char err[CP_ERR_MAX])
{
    if (n == 0 || f->aov != SH_AOV_COLOR) return true;
    pthread_once(&decode_once, build_decode);
    run_job j = {.f = f, .color = pl_frame_color(f), .hdr = pl_frame_hdr(f), .p = p, .npasses = n, .tile = tile,
                 .avx2 = rt_isa_best() == RT_ISA_AVX2};
    if (!j.color) {
        snprintf(err, CP_ERR_MAX, "out of memory (the frame's image)");
        return false;
    }
    if (!get_buffers(&j, p, n, err)) return false;
    const pl_region *r = &f->region;
    j.tiles_x = (r->x1 - r->x0 + tile - 1) / tile;
    j.ntiles = j.tiles_x * ((r->y1 - r->y0 + tile - 1) / tile);
    unsigned parts = gr_parallel_parts(workers);
    if (parts > (unsigned)j.ntiles) parts = (unsigned)j.ntiles;
    /* a phase per pass with a halo (it needs every tile of its input final), each with
     * the passes without one that follow it; a decode of its own before a first pass
     * with a halo */
    if (p[0].halo) run_phase(&j, 0, 0, parts);
    for (int first = 0; first < n;) {
        int last = first + 1;
        while (last < n && p[last].halo == 0) last++;
        run_phase(&j, first, last, parts);
        first = last;
    }
    if (atomic_load(&j.failed)) {
        snprintf(err, CP_ERR_MAX, "out of memory (an image-space tile)");
        return false;
    }
    for (int i = 0; i < n; i++)
        if (p[i].type->stage.finish) p[i].type->stage.finish(p[i].state, f);
    return true;
}

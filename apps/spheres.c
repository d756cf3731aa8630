/* spheres.c — the thesis' rigid-body spheres (ch. 5, Table 5.1; Fig. 5.1's graph):
 *
 *   step -> cells (dynamic queue set, a subqueue per voxel) -> collide[voxel] -> contacts -> step
 *
 * `spheres` spheres of radius r move in the unit box for `steps` steps. Each step, step
 * (Thread) finds the voxels of a grid of cells at least 2r wide that each sphere's
 * bounding box overlaps and sends each voxel that holds one a packet of its spheres,
 * keyed by the voxel (x, y, z): the set is a sparse grid, only occupied voxels get a
 * subqueue, and each gets its own instance of collide (an instanced Thread stage,
 * thousands of instances, as in the thesis). collide tests every pair of its voxel and
 * returns the pairs that touch; step reads one contacts packet per voxel packet it sent
 * (the cycle), then resolves the contacts and moves every sphere.
 *
 * What the thesis leaves open, assumed here: equal masses, perfectly elastic collisions
 * (the two velocities exchange their components along the line of centres, for pairs
 * that approach), resolved one after another in (i, j) order; walls reflect; no gravity;
 * explicit Euler steps of dt = 1/steps_per_unit. A pair is found in every voxel both
 * spheres overlap; step keeps it once. The serial reference tests all pairs directly,
 * with the same arithmetic, so the result is bit for bit the same. */
#include "apps/apps.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_SPHERES, P_STEPS, P_RADIUS, P_SEED };
#define SP_VOXEL_MAX 32                   /* spheres one voxel packet holds */
#define SP_PAIRS_MAX (SP_VOXEL_MAX * (SP_VOXEL_MAX - 1) / 2)
#define SP_DT 0.01
/* Voxels a sphere's widened bounding box may overlap: 3 a side where it is a hair wider
 * than a cell. */
#define SP_SPHERE_VOXELS 27

typedef struct sp_vec { double x, y, z; } sp_vec;
typedef struct sp_voxel { uint32_t count, pad; uint32_t sphere[SP_VOXEL_MAX]; } sp_voxel;
typedef struct sp_pair { uint32_t i, j; } sp_pair;
typedef struct sp_pairs { uint32_t count, pad; sp_pair p[SP_PAIRS_MAX]; } sp_pairs;

typedef struct sp_state {
    uint32_t n, steps, grid;
    double r, cell;
    uint64_t seed;
    sp_vec *pos, *vel;                    /* the graph's; step writes, collide reads */
    sp_pair *contacts;                    /* step's scratch: one step's pairs, grown */
    size_t contacts_cap;
    uint64_t contacts_total, voxels_total;
} sp_state;

static double unit(uint64_t seed, uint64_t i) { return ap_hash(seed, i) / 4294967296.0; }

/* Spheres start on a jittered lattice (no two touch), with random velocities. */
static void sp_init(const sp_state *s, sp_vec *pos, sp_vec *vel)
{
    uint32_t side = (uint32_t)ceil(cbrt((double)s->n));
    double step = 1.0 / side;
    for (uint32_t k = 0; k < s->n; k++) {
        double j = (step - 2 * s->r) * 0.5;
        pos[k] = (sp_vec){(k % side + 0.5) * step + j * (unit(s->seed, 6ull * k) - 0.5),
                          (k / side % side + 0.5) * step + j * (unit(s->seed, 6ull * k + 1) - 0.5),
                          (k / side / side + 0.5) * step + j * (unit(s->seed, 6ull * k + 2) - 0.5)};
        vel[k] = (sp_vec){unit(s->seed, 6ull * k + 3) - 0.5, unit(s->seed, 6ull * k + 4) - 0.5,
                          unit(s->seed, 6ull * k + 5) - 0.5};
    }
}

static bool touch(const sp_state *s, const sp_vec *pos, uint32_t i, uint32_t j)
{
    double dx = pos[j].x - pos[i].x, dy = pos[j].y - pos[i].y, dz = pos[j].z - pos[i].z;
    return dx * dx + dy * dy + dz * dz < 4 * s->r * s->r;
}

/* Elastic, equal masses: the velocities exchange their components along the centres. */
static void resolve(const sp_state *s, sp_vec *pos, sp_vec *vel, sp_pair c)
{
    (void)s;
    sp_vec d = {pos[c.j].x - pos[c.i].x, pos[c.j].y - pos[c.i].y, pos[c.j].z - pos[c.i].z};
    double len = sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
    if (len == 0) return;
    sp_vec u = {d.x / len, d.y / len, d.z / len};
    double rel = (vel[c.j].x - vel[c.i].x) * u.x + (vel[c.j].y - vel[c.i].y) * u.y +
                 (vel[c.j].z - vel[c.i].z) * u.z;
    if (rel >= 0) return;                 /* separating already */
    vel[c.i] = (sp_vec){vel[c.i].x + rel * u.x, vel[c.i].y + rel * u.y, vel[c.i].z + rel * u.z};
    vel[c.j] = (sp_vec){vel[c.j].x - rel * u.x, vel[c.j].y - rel * u.y, vel[c.j].z - rel * u.z};
}

static void move_axis(double r, double *p, double *v)
{
    *p += *v * SP_DT;
    if (*p < r) { *p = 2 * r - *p; *v = -*v; }
    if (*p > 1 - r) { *p = 2 * (1 - r) - *p; *v = -*v; }
}

static void move_all(const sp_state *s, sp_vec *pos, sp_vec *vel)
{
    for (uint32_t k = 0; k < s->n; k++) {
        move_axis(s->r, &pos[k].x, &vel[k].x);
        move_axis(s->r, &pos[k].y, &vel[k].y);
        move_axis(s->r, &pos[k].z, &vel[k].z);
    }
}

/* Appends n pairs to *list (of *cap, grown as needed); false when out of memory. */
static bool append_pairs(sp_pair **list, size_t *cap, uint32_t *len, const sp_pair *p, uint32_t n)
{
    if (*len + (size_t)n > *cap) {
        size_t want = (*len + (size_t)n) * 2;
        sp_pair *grown = realloc(*list, want * sizeof *grown);
        if (!grown) return false;
        *list = grown;
        *cap = want;
    }
    if (n) memcpy(*list + *len, p, n * sizeof *p);   /* n = 0: both may be NULL */
    *len += n;
    return true;
}

static int by_pair(const void *a, const void *b)
{
    const sp_pair *x = a, *y = b;
    if (x->i != y->i) return (x->i > y->i) - (x->i < y->i);
    return (x->j > y->j) - (x->j < y->j);
}

/* Sorts the pairs, keeps each once, resolves them in that order; returns how many. */
static uint32_t resolve_all(const sp_state *s, sp_vec *pos, sp_vec *vel, sp_pair *c, uint32_t n)
{
    if (n) qsort(c, n, sizeof *c, by_pair);   /* no contacts: c may be NULL */
    uint32_t kept = 0;
    for (uint32_t k = 0; k < n; k++)
        if (!kept || by_pair(&c[kept - 1], &c[k])) c[kept++] = c[k];
    for (uint32_t k = 0; k < kept; k++) resolve(s, pos, vel, c[k]);
    return kept;
}

/* ---- the graph ---------------------------------------------------------------------- */

/* The voxel range a sphere's bounding box overlaps on one axis, widened a little so
 * that rounding never leaves out a voxel the sphere touches. */
static void voxel_range(const sp_state *s, double p, uint32_t *lo, uint32_t *hi)
{
    double a = floor((p - s->r * 1.01) / s->cell), b = floor((p + s->r * 1.01) / s->cell);
    *lo = a < 0 ? 0 : (uint32_t)a;
    *hi = b >= s->grid ? s->grid - 1 : (uint32_t)b;
}

/* The occupied voxels, each with its spheres, appended to bins (key-sorted). */
typedef struct sp_bin { uint64_t key; uint32_t sphere; } sp_bin;

static int by_key(const void *a, const void *b)
{
    const sp_bin *x = a, *y = b;
    if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
    return (x->sphere > y->sphere) - (x->sphere < y->sphere);
}

static uint32_t bin_spheres(const sp_state *s, sp_bin *bins)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        uint32_t x0, x1, y0, y1, z0, z1;
        voxel_range(s, s->pos[k].x, &x0, &x1);
        voxel_range(s, s->pos[k].y, &y0, &y1);
        voxel_range(s, s->pos[k].z, &z0, &z1);
        for (uint32_t x = x0; x <= x1; x++)
            for (uint32_t y = y0; y <= y1; y++)
                for (uint32_t z = z0; z <= z1; z++)
                    bins[n++] = (sp_bin){((uint64_t)x << 42) | ((uint64_t)y << 21) | z, k};
    }
    qsort(bins, n, sizeof *bins, by_key);
    return n;
}

/* Sends one packet per occupied voxel; returns how many, or UINT32_MAX after failing
 * the run for a voxel with more spheres than a packet holds. */
static uint32_t send_voxels(gr_ctx *c, const sp_bin *bins, uint32_t n)
{
    uint32_t packets = 0;
    for (uint32_t a = 0, b; a < n; a = b) {
        for (b = a; b < n && bins[b].key == bins[a].key; b++) {}
        if (b - a > SP_VOXEL_MAX) {
            gr_fail(c, GR_ERR_INVALID, "spheres: %u spheres overlap one voxel, more than %d: "
                    "use fewer spheres or a smaller radius", b - a, SP_VOXEL_MAX);
            return UINT32_MAX;
        }
        if (b - a < 2) continue;          /* one sphere collides with nothing there */
        gr_window w;
        gr_reserve_out_key(c, 0, 1, bins[a].key, &w);
        sp_voxel *v = w.mem;
        v->count = b - a;
        for (uint32_t k = a; k < b; k++) v->sphere[k - a] = bins[k].sphere;
        gr_commit_out(c, 0, 1);
        packets++;
    }
    return packets;
}

static void step_main(gr_ctx *c)
{
    sp_state *s = gr_user(c);
    sp_bin *bins = malloc((size_t)s->n * SP_SPHERE_VOXELS * sizeof *bins);
    if (!bins) { gr_fail(c, GR_ERR_NOMEM, "spheres: out of memory binning"); return; }
    for (uint32_t t = 0; t < s->steps; t++) {
        uint32_t sent = send_voxels(c, bins, bin_spheres(s, bins));
        if (sent == UINT32_MAX) break;
        s->voxels_total += sent;
        uint32_t n = 0;
        for (uint32_t k = 0; k < sent; k++) {
            gr_window w;
            if (gr_reserve(c, 0, 1, &w) != GR_OK) break;
            const sp_pairs *p = w.mem;
            bool ok = append_pairs(&s->contacts, &s->contacts_cap, &n, p->p, p->count);
            gr_commit(c, 0, 1);
            if (!ok) { gr_fail(c, GR_ERR_NOMEM, "spheres: out of memory for contacts"); break; }
        }
        s->contacts_total += resolve_all(s, s->pos, s->vel, s->contacts, n);
        move_all(s, s->pos, s->vel);
    }
    free(bins);
}

/* One instance per occupied voxel: every packet's touching pairs, as (lower, higher). */
static void collide_main(gr_ctx *c)
{
    const sp_state *s = gr_user(c);
    gr_window in, out;
    while (gr_reserve(c, 0, 1, &in) == GR_OK) {
        const sp_voxel *v = in.mem;
        gr_reserve_out(c, 0, 1, &out);
        sp_pairs *p = out.mem;
        p->count = 0;
        for (uint32_t a = 0; a < v->count; a++)
            for (uint32_t b = a + 1; b < v->count; b++) {
                uint32_t i = v->sphere[a], j = v->sphere[b];
                if (touch(s, s->pos, i, j)) p->p[p->count++] = (sp_pair){i, j};
            }
        gr_commit_out(c, 0, 1);
        gr_commit(c, 0, 1);
    }
}

static void sp_destroy(void *p)
{
    sp_state *s = p;
    if (s) { free(s->pos); free(s->vel); free(s->contacts); }
    free(s);
}

static void add_stages(gr_graph *g, sp_state *s)
{
    uint64_t voxels = (uint64_t)s->grid * s->grid * s->grid;
    int cells = gr_queue(g, &(gr_queue_desc){.name = "cells", .packet_bytes = sizeof(sp_voxel),
                                             .capacity = 2, .dynamic_keys = true,
                                             .max_keys = (uint32_t)voxels});
    int contacts = gr_queue(g, &(gr_queue_desc){.name = "contacts", .packet_bytes = sizeof(sp_pairs),
                                                .capacity = 64});
    int step = gr_stage(g, &(gr_stage_desc){.name = "step", .kind = GR_THREAD, .main = step_main, .user = s});
    int collide = gr_stage(g, &(gr_stage_desc){.name = "collide", .kind = GR_THREAD, .main = collide_main,
                                               .user = s, .instanced = true});
    gr_bind(g, step, GR_BIND_OUTPUT, cells);
    gr_bind(g, collide, GR_BIND_INPUT, cells);
    gr_bind(g, collide, GR_BIND_OUTPUT, contacts);
    gr_bind(g, step, GR_BIND_INPUT, contacts);
}

static void *sp_build(gr_graph *g, const int64_t *v, char err[AP_MSG_MAX])
{
    sp_state *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, AP_MSG_MAX, "spheres: out of memory"); return NULL; }
    s->n = (uint32_t)v[P_SPHERES];
    s->steps = (uint32_t)v[P_STEPS];
    s->r = (double)v[P_RADIUS] / 1000.0;
    s->seed = (uint64_t)v[P_SEED];
    s->grid = (uint32_t)floor(1.0 / (2 * s->r));
    s->cell = 1.0 / s->grid;
    uint32_t side = (uint32_t)ceil(cbrt((double)s->n));
    if (2 * s->r * side >= 1.0) {
        snprintf(err, AP_MSG_MAX, "spheres: %" PRIu32 " spheres of radius %.3f do not fit apart "
                 "in the unit box (a lattice of %" PRIu32 " a side): lower graph.spheres or "
                 "graph.radius", s->n, s->r, side);
        sp_destroy(s);
        return NULL;
    }
    s->pos = malloc(s->n * sizeof *s->pos);
    s->vel = malloc(s->n * sizeof *s->vel);
    if (!s->pos || !s->vel) {
        snprintf(err, AP_MSG_MAX, "spheres: out of memory for %" PRIu32 " spheres", s->n);
        sp_destroy(s);
        return NULL;
    }
    sp_init(s, s->pos, s->vel);
    add_stages(g, s);
    if (*gr_error(g)) {
        snprintf(err, AP_MSG_MAX, "spheres: %s", gr_error(g));
        sp_destroy(s);
        return NULL;
    }
    return s;
}

/* The serial simulation: all pairs tested directly, the same resolution and moves. */
static int sp_check(void *p, gr_graph *g, char line[AP_MSG_MAX])
{
    (void)g;
    const sp_state *s = p;
    sp_vec *pos = malloc(s->n * sizeof *pos), *vel = malloc(s->n * sizeof *vel);
    sp_pair *c = NULL;
    size_t cap = 0;
    bool ok = pos && vel;
    if (!ok) {
        free(pos); free(vel);
        snprintf(line, AP_MSG_MAX, "spheres: out of memory for the check");
        return -1;
    }
    sp_init(s, pos, vel);
    uint64_t contacts = 0;
    for (uint32_t t = 0; t < s->steps; t++) {
        uint32_t n = 0;
        for (uint32_t i = 0; ok && i < s->n; i++)
            for (uint32_t j = i + 1; ok && j < s->n; j++)
                if (touch(s, pos, i, j)) ok = append_pairs(&c, &cap, &n, &(sp_pair){i, j}, 1);
        if (!ok) break;
        contacts += resolve_all(s, pos, vel, c, n);
        move_all(s, pos, vel);
    }
    if (!ok) {
        free(pos); free(vel); free(c);
        snprintf(line, AP_MSG_MAX, "spheres: out of memory for the check");
        return -1;
    }
    uint32_t bad = s->n;
    for (uint32_t k = 0; k < s->n && bad == s->n; k++)
        if (memcmp(&pos[k], &s->pos[k], sizeof *pos) || memcmp(&vel[k], &s->vel[k], sizeof *vel)) bad = k;
    if (bad < s->n)
        snprintf(line, AP_MSG_MAX, "spheres: sphere %" PRIu32 " ends at (%.9f, %.9f, %.9f), the "
                 "serial simulation's at (%.9f, %.9f, %.9f)", bad, s->pos[bad].x, s->pos[bad].y,
                 s->pos[bad].z, pos[bad].x, pos[bad].y, pos[bad].z);
    else if (contacts != s->contacts_total)
        snprintf(line, AP_MSG_MAX, "spheres: %" PRIu64 " contacts resolved, the serial "
                 "simulation %" PRIu64, s->contacts_total, contacts);
    else
        snprintf(line, AP_MSG_MAX, "spheres: %" PRIu32 " spheres of radius %.3f, %" PRIu32
                 " steps on a %" PRIu32 "^3 grid: %" PRIu64 " voxel packets, %" PRIu64
                 " contacts resolved; equal to the serial simulation", s->n, s->r, s->steps,
                 s->grid, s->voxels_total, contacts);
    bool same = bad == s->n && contacts == s->contacts_total;
    free(pos); free(vel); free(c);
    return same ? 0 : -1;
}

static const ap_param sp_params[] = {
    [P_SPHERES] = {"spheres", 1000, 2, 20000, "spheres in the unit box"},
    [P_STEPS] = {"steps", 50, 1, 100000, "time steps of 0.01"},
    [P_RADIUS] = {"radius", 20, 10, 100, "sphere radius in thousandths of the box (the grid's cells are at least 2 radii wide)"},
    [P_SEED] = {"seed", 1, 0, INT32_MAX, "the initial positions' and velocities' hash seed"},
};

const ap_app ap_spheres = {
    "spheres", "rigid-body spheres in a box: step bins them into a sparse voxel grid (a dynamic queue set), "
    "an instance of collide per voxel finds the touching pairs, step resolves them and moves",
    sp_params, 4, sp_build, sp_check, sp_destroy};

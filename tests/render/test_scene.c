/* Scenes: the shared meshes load with the counts of ../shared/scenes/README.md and in
 * file order (checked against a plain reading of each file), built-ins have their
 * triangle counts and are identical on every run, the teapot is closed once welded,
 * transforms apply, .scene files round-trip, and bad inputs give errors naming the file
 * (and line), never a crash. */
#include "scenes/build.h"
#include "scenes/loaders.h"
#include "tests/check.h"
#include "tests/scene_load_error.h"
#include "tests/scratch_dir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/gramps-scene-test-XXXXXX";

/* A plain OBJ reading: v lines, f lines fan-triangulated in order (first index only). */
typedef struct plain { size_t nv, nt; long first[3], last[3]; } plain;

static plain read_plain(const char *path)
{
    plain p = {0};
    FILE *f = fopen(path, "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == 'v' && (line[1] == ' ' || line[1] == '\t')) p.nv++;
        if (line[0] != 'f' || (line[1] != ' ' && line[1] != '\t')) continue;
        long idx[64];
        int n = 0;
        for (char *t = strtok(line + 2, " \t\r\n"); t && n < 64; t = strtok(NULL, " \t\r\n")) {
            long v = atol(t);
            idx[n++] = v < 0 ? (long)p.nv + v : v - 1;
        }
        for (int k = 1; k + 1 < n; k++) {
            long tri[3] = {idx[0], idx[k], idx[k + 1]};
            if (p.nt == 0) memcpy(p.first, tri, sizeof tri);
            memcpy(p.last, tri, sizeof tri);
            p.nt++;
        }
    }
    if (f) fclose(f);
    return p;
}

static void check_mesh(const char *file, size_t tris, size_t verts, const float lo[3], const float hi[3])
{
    char path[256], err[SC_ERR_MAX];
    snprintf(path, sizeof path, "../shared/scenes/%s", file);
    sc_scene *s;
    CHECK_MSG(sc_load(path, &s, err) == 0, "%s", err);
    if (!s) return;
    sc_geometry g;
    CHECK(sc_flatten(s, &g, err) == 0);
    CHECK_MSG(g.ntriangles == tris && g.nvertices == verts, "%s: %zu triangles, %zu vertices",
              file, g.ntriangles, g.nvertices);
    for (int i = 0; i < 3; i++)
        CHECK_MSG(fabsf(g.bbox_min[i] - lo[i]) < 1e-3f * (1 + fabsf(lo[i])) &&
                  fabsf(g.bbox_max[i] - hi[i]) < 1e-3f * (1 + fabsf(hi[i])), "%s bbox axis %d", file, i);
    plain p = read_plain(path);
    CHECK(p.nt == g.ntriangles);
    for (int k = 0; k < 3; k++) {
        CHECK(g.indices[k] == (uint32_t)p.first[k]);
        CHECK(g.indices[3 * (g.ntriangles - 1) + k] == (uint32_t)p.last[k]);
    }
    sc_geometry_free(&g);
    sc_free(s);
}

static void test_shared_meshes(void)
{
    check_mesh("teapot.obj", 6320, 3644, (float[3]){-3, 0, -2}, (float[3]){3.434f, 3.15f, 2});
    check_mesh("bunny.obj", 69451, 35947, (float[3]){-0.09469f, 0.03299f, -0.06187f}, (float[3]){0.06101f, 0.1873f, 0.0588f});
    check_mesh("dragon.obj", 100000, 50000, (float[3]){-7.047f, 0, -3.151f}, (float[3]){7.047f, 9.94f, 3.151f});
    check_mesh("horse.obj", 96966, 48485, (float[3]){-0.042f, -0.09167f, -0.07642f}, (float[3]){0.042f, 0.09167f, 0.07642f});
    check_mesh("CornellBox-Original.obj", 36, 72, (float[3]){-1.02f, 0, -1.04f}, (float[3]){1, 1.99f, 0.99f});
}

/* Materials follow usemtl, even though the file's g lines come after the faces. */
static void test_cornell_materials(void)
{
    char err[SC_ERR_MAX];
    sc_scene *s;
    CHECK(sc_load("../shared/scenes/CornellBox-Original.obj", &s, err) == 0);
    if (!s) return;
    int red = sc_scene_find_material(s, "leftWall");
    CHECK(red >= 0 && s->materials[red].albedo[0] > 0.6f && s->materials[red].albedo[1] < 0.1f);
    const sc_mesh *m = &s->meshes[0];
    int on_red = 0;
    for (size_t t = 0; t < m->ntriangles; t++) on_red += (int)m->materials[t] == red;
    CHECK(on_red == 2);                          /* the left wall quad */
    sc_free(s);
}

static uint64_t hash_geometry(const sc_geometry *g)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)g->positions;
    for (size_t i = 0; i < g->nvertices * 3 * sizeof(float); i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void test_builtins(void)
{
    struct { const char *name; size_t lo, hi; } want[] = {
        {"teapot", 6400, 6400}, {"courtyard", 30000, 32500}, {"fairy", 170000, 178000}, {"cornell", 1000, 10000}};
    for (int i = 0; i < 4; i++) {
        char err[SC_ERR_MAX];
        sc_scene *a, *b;
        CHECK(sc_load(want[i].name, &a, err) == 0 && sc_load(want[i].name, &b, err) == 0);
        sc_geometry ga, gb;
        sc_flatten(a, &ga, err);
        sc_flatten(b, &gb, err);
        CHECK_MSG(ga.ntriangles >= want[i].lo && ga.ntriangles <= want[i].hi, "%s: %zu triangles",
                  want[i].name, ga.ntriangles);
        CHECK(hash_geometry(&ga) == hash_geometry(&gb));          /* fixed seed */
        CHECK(a->nlights > 0 && a->nmaterials > 0);
        sc_geometry_free(&ga);
        sc_geometry_free(&gb);
        sc_free(a);
        sc_free(b);
    }
}

/* Welded by position, every edge of the teapot is shared by two triangles except at
 * the known openings of Newell's patches: the gap between lid and rim (y = 2.4), the
 * two ends of the spout and of the handle, where they meet the body or end. Degenerate
 * triangles at the poles are skipped. */
typedef struct edge { uint32_t a, b; } edge;

static int cmp_edge(const void *x, const void *y)
{
    const edge *e = x, *f = y;
    return e->a != f->a ? (e->a < f->a ? -1 : 1) : (e->b < f->b ? -1 : e->b > f->b);
}

static bool known_opening(const float *p)
{
    return fabsf(p[1] - 2.4f) < 1e-3f || p[0] > 2.5f || fabsf(p[0] - 1.7f) < 1e-3f || p[0] < -1.45f;
}

static void test_teapot_closed(void)
{
    char err[SC_ERR_MAX];
    sc_scene *s;
    CHECK(sc_load("teapot", &s, err) == 0);
    sc_geometry g;
    sc_flatten(s, &g, err);
    uint32_t *canon = malloc(g.nvertices * sizeof *canon);
    for (size_t v = 0; v < g.nvertices; v++) {       /* quadratic but small: 3,872 vertices */
        canon[v] = (uint32_t)v;
        for (size_t u = 0; u < v; u++) {
            const float *p = g.positions + 3 * v, *q = g.positions + 3 * u;
            if (fabsf(p[0] - q[0]) < 1e-4f && fabsf(p[1] - q[1]) < 1e-4f && fabsf(p[2] - q[2]) < 1e-4f) {
                canon[v] = canon[u];
                break;
            }
        }
    }
    edge *e = malloc(g.ntriangles * 3 * sizeof *e);
    size_t ne = 0;
    for (size_t t = 0; t < g.ntriangles; t++) {
        uint32_t c[3];
        for (int k = 0; k < 3; k++) c[k] = canon[g.indices[3 * t + k]];
        if (c[0] == c[1] || c[1] == c[2] || c[0] == c[2]) continue;
        for (int k = 0; k < 3; k++) {
            uint32_t a = c[k], b = c[(k + 1) % 3];
            e[ne++] = (edge){a < b ? a : b, a < b ? b : a};
        }
    }
    qsort(e, ne, sizeof *e, cmp_edge);
    size_t boundary = 0, unexpected = 0, nonmanifold = 0;
    for (size_t i = 0; i < ne;) {
        size_t j = i;
        while (j < ne && !cmp_edge(&e[i], &e[j])) j++;
        if (j - i == 1) {
            boundary++;
            if (!known_opening(g.positions + 3 * e[i].a) || !known_opening(g.positions + 3 * e[i].b)) unexpected++;
        }
        if (j - i > 2) nonmanifold++;
        i = j;
    }
    CHECK_MSG(unexpected == 0 && nonmanifold == 0, "%zu boundary edges outside the known openings, "
              "%zu non-manifold", unexpected, nonmanifold);
    CHECK(boundary > 0 && boundary < 200);
    free(e);
    free(canon);
    sc_geometry_free(&g);
    sc_free(s);
}

/* Formats other than OBJ go through assimp: an ASCII PLY quad becomes two triangles. */
static void test_assimp_ply(void)
{
    const char *path = scratch_file(tmpdir, "quad.ply",
        "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"
        "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
        "0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 0 1 2 3\n");
    char err[SC_ERR_MAX];
    sc_scene *s;
    CHECK_MSG(sc_load(path, &s, err) == 0, "%s", err);
    if (!s) return;
    sc_geometry g;
    CHECK(sc_flatten(s, &g, err) == 0);
    CHECK(g.ntriangles == 2 && g.bbox_max[0] == 1 && g.bbox_max[1] == 1);
    CHECK(s->materials[g.materials[0]].reflectivity == 0.3f);   /* the default material */
    sc_geometry_free(&g);
    sc_free(s);
}

static void test_scene_file_transforms(void)
{
    scratch_file(tmpdir, "tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    const char *path = scratch_file(tmpdir, "t.scene",
        "[camera]\neye = 0,0,5\ntarget = 0,0,0\n\n[material.m]\nalbedo = 1,0,0\nreflectivity = 0.5\n\n"
        "[mesh.a]\nfile = tri.obj\nmaterial = m\nscale = 2\ntranslate = 10, 0, 0\n");
    char err[SC_ERR_MAX];
    sc_scene *s;
    CHECK_MSG(sc_load(path, &s, err) == 0, "%s", err);
    if (!s) return;
    sc_geometry g;
    sc_flatten(s, &g, err);
    CHECK(g.bbox_min[0] == 10 && g.bbox_max[0] == 12 && g.bbox_max[1] == 2);
    CHECK(s->materials[g.materials[0]].reflectivity == 0.5f);
    sc_geometry_free(&g);
    sc_free(s);
}

static void test_round_trip(void)
{
    char err[SC_ERR_MAX], path[256];
    sc_scene *a, *b;
    CHECK(sc_load("teapot", &a, err) == 0);
    snprintf(path, sizeof path, "%s/saved.scene", tmpdir);
    CHECK_MSG(sc_save_scene(a, path, err) == 0, "%s", err);
    CHECK_MSG(sc_load(path, &b, err) == 0, "%s", err);
    if (!b) { sc_free(a); return; }
    sc_geometry ga, gb;
    sc_flatten(a, &ga, err);
    sc_flatten(b, &gb, err);
    CHECK(ga.ntriangles == gb.ntriangles && ga.nvertices == gb.nvertices);
    CHECK(memcmp(ga.positions, gb.positions, ga.nvertices * 3 * sizeof(float)) == 0);
    CHECK(memcmp(ga.indices, gb.indices, ga.ntriangles * 3 * sizeof(uint32_t)) == 0);
    CHECK(memcmp(&a->camera, &b->camera, sizeof a->camera) == 0);
    CHECK(a->nlights == b->nlights && a->lights[0].position[0] == b->lights[0].position[0]);
    sc_geometry_free(&ga);
    sc_geometry_free(&gb);
    sc_free(a);
    sc_free(b);
}

static void test_bad_inputs(void)
{
    expect_load_error("/nonexistent/mesh.obj", "/nonexistent/mesh.obj");
    expect_load_error(scratch_file(tmpdir, "bad1.obj", "v 0 0 0\nv 1 0\nv 0 1 0\nf 1 2 3\n"), "bad1.obj:2:");
    expect_load_error(scratch_file(tmpdir, "bad2.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n"), "bad2.obj:4: vertex index 7");
    expect_load_error(scratch_file(tmpdir, "bad3.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n"), "bad3.obj:2: malformed vertex");      /* refused where the line is known */
    expect_load_error(scratch_file(tmpdir, "bad4.obj", "v 0 0 0\n"), "empty");
    expect_load_error(scratch_file(tmpdir, "bad5.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n"), "at least 3");
    expect_load_error(scratch_file(tmpdir, "bad6.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3"
                              "\nf 1 x 3\n"), "bad6.obj:5:");
    expect_load_error(scratch_file(tmpdir, "k.scene", "[camera]\neye = 0,0,1\nzoom = 3\n"), "k.scene:3: [camera]: unknown key 'zoom'");
    expect_load_error(scratch_file(tmpdir, "s.scene", "[bogus]\nx = 1\n"), "s.scene:2: unknown section");
    expect_load_error(scratch_file(tmpdir, "v.scene", "[camera]\neye = 0,zero,1\n"), "v.scene:2:");
    expect_load_error(scratch_file(tmpdir, "m.scene", "[mesh.a]\nfile = missing.obj\n"), "missing.obj");
    expect_load_error(scratch_file(tmpdir, "n.scene", "[camera]\neye = 0,0,1\n"), "no [mesh.*]");
    expect_load_error(scratch_file(tmpdir, "u.scene", "[mesh.a]\nbuiltin = teapot\nmaterial = nope\n"), "unknown material 'nope'");
    expect_load_error(scratch_file(tmpdir, "garbage.ply", "this is not a mesh\n"), "garbage.ply");
    /* degenerate triangles are kept and counted, not fatal */
    char err[SC_ERR_MAX];
    sc_scene *s;
    CHECK(sc_load(scratch_file(tmpdir, "deg.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 4\n"), &s, err) == 0);
    if (s) { CHECK(s->degenerate_triangles == 1); sc_free(s); }
}

int main(void)
{
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_shared_meshes);
    RUN(test_cornell_materials);
    RUN(test_builtins);
    RUN(test_teapot_closed);
    RUN(test_assimp_ply);
    RUN(test_scene_file_transforms);
    RUN(test_round_trip);
    RUN(test_bad_inputs);
    if (!scratch_dir_remove(tmpdir)) return 1;
    return check_finish();
}

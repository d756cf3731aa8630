/* Malformed PLY files through the guarded assimp import (header check, isolated child
 * with memory and time limits, ValidateDataStructure, index checks): each of issue 14's
 * reproducers fails with a message naming the file, quickly, and never takes the test
 * process down; a valid PLY still loads, and gramps-render exits 1 on a bad one. */
#include "scenes/build.h"
#include "scenes/loaders.h"
#include "scenes/scene.h"
#include "tests/check.h"
#include "tests/scratch_dir.h"

#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[64];

static const char *write_file(const char *name, const void *data, size_t n)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
    return path;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Loads path with a short import deadline; it must fail naming the file. */
static void expect_refused(const char *path, const char *fragment)
{
    sc_load_opts o = sc_load_opts_default();
    o.import_seconds = 10;
    char err[SC_ERR_MAX] = "";
    sc_scene *s = NULL;
    double t0 = now_s();
    CHECK_MSG(sc_load_with(path, &o, &s, err) != 0 && s == NULL, "%s loaded", path);
    CHECK_MSG(strstr(err, path) && strstr(err, fragment), "'%s' lacks the path or '%s'", err, fragment);
    CHECK_MSG(now_s() - t0 < 9, "%s took %.1f s", path, now_s() - t0);
    sc_free(s);
}

#define ASCII_HEAD "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n" \
                   "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
#define BIN_HEAD "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n" \
                 "property float y\nproperty float z\nelement face 1\n" \
                 "property list uchar int vertex_indices\nend_header\n"

static void test_ascii_truncated(void)
{
    /* assimp 5.2.5 loops forever on any header cut short */
    const char head[] = ASCII_HEAD;
    for (size_t cut = 4; cut < sizeof head - 1; cut += 17)
        expect_refused(write_file("cut-header.ply", head, cut), "PLY header");
    const char data[] = ASCII_HEAD "0 0 0\n1 0 0\n";           /* ai_assert aborts */
    expect_refused(write_file("cut-data.ply", data, sizeof data - 1), "");
    const char range[] = ASCII_HEAD "0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n";
    expect_refused(write_file("range.ply", range, sizeof range - 1), "");
}

/* A binary PLY: three vertices, then one face list as given. */
static const char *binary_ply(const char *name, unsigned char count, const int *idx, int n)
{
    unsigned char buf[512];
    size_t k = sizeof BIN_HEAD - 1;
    memcpy(buf, BIN_HEAD, k);
    const float v[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    memcpy(buf + k, v, sizeof v);
    k += sizeof v;
    buf[k++] = count;
    memcpy(buf + k, idx, (size_t)n * sizeof *idx);
    return write_file(name, buf, k + (size_t)n * sizeof *idx);
}

static void test_binary_faces(void)
{
    const int out_of_range[3] = {0, 1, 70000}, negative[3] = {0, -1, 2}, ok[3] = {0, 1, 2};
    expect_refused(binary_ply("range.ply", 3, out_of_range, 3), "");
    expect_refused(binary_ply("negative.ply", 3, negative, 3), "");
    expect_refused(binary_ply("count255.ply", 255, ok, 3), "");
    expect_refused(binary_ply("short.ply", 3, ok, 2), "");
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load(binary_ply("good.ply", 3, ok, 3), &s, err) == 0, "%s", err);
    if (s) CHECK(s->nmeshes == 1 && s->meshes[0].ntriangles == 1 && s->meshes[0].nvertices == 3);
    sc_free(s);
}

/* A header line with no PLY keyword is skipped, as assimp skips it: Debian's
 * assimp-testmodels' Wuson.ply has "Created by Blender3D 247 - www.blender.org". */
static void test_bare_header_line(void)
{
    const char text[] = "ply\nformat ascii 1.0\nCreated by Blender3D 247 - www.blender.org, "
                        "source file: \nelement vertex 3\nproperty float x\nproperty float y\n"
                        "property float z\nelement face 1\nproperty list uchar int "
                        "vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load(write_file("bare.ply", text, sizeof text - 1), &s, err) == 0, "%s", err);
    if (s) CHECK(s->nmeshes == 1 && s->meshes[0].ntriangles == 1);
    sc_free(s);
    const char *wuson = "/usr/share/assimp/models/PLY/Wuson.ply";
    if (access(wuson, R_OK) != 0) SKIP("no %s (assimp-testmodels)", wuson);
    s = NULL;
    CHECK_MSG(sc_load(wuson, &s, err) == 0, "%s", err);
    if (s) CHECK(s->nmeshes >= 1 && s->meshes[0].ntriangles >= 3732);
    sc_free(s);
    /* a keyword line that is malformed is still refused */
    const char bad[] = "ply\nformat ascii 1.0\nelement vertex\nend_header\n";
    expect_refused(write_file("bad-element.ply", bad, sizeof bad - 1), "malformed PLY header");
}

static void test_huge_counts(void)
{
    /* 198 bytes declaring 2e9 vertices: assimp would allocate ~22 GB */
    const char head[] = "ply\nformat binary_little_endian 1.0\nelement vertex 2000000000\n"
                        "property float x\nproperty float y\nproperty float z\nelement face 0\n"
                        "property list uchar int vertex_indices\nend_header\n";
    expect_refused(write_file("huge.ply", head, sizeof head - 1), "declares");
}

/* The child's memory limit alone is an error (1 MiB makes any import fail). Sanitizer
 * builds run the child without an address-space limit (their shadow memory needs more). */
static void test_memory_limit(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return;
#endif
    const int ok[3] = {0, 1, 2};
    const char *path = binary_ply("limited.ply", 3, ok, 3);
    sc_load_opts o = sc_load_opts_default();
    o.max_memory = 1 << 20;
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK(sc_load_with(path, &o, &s, err) != 0 && strstr(err, path));
    sc_free(s);
}

static int aborts(sc_scene *s, const char *path, const sc_load_opts *o, char *err)
{
    (void)s; (void)path; (void)o; (void)err;
    abort();
}
static int hangs(sc_scene *s, const char *path, const sc_load_opts *o, char *err)
{
    (void)s; (void)path; (void)o; (void)err;
    while (pause() != 0 || 1) {}          /* until the parent's SIGKILL */
    return -1;
}
static int fails(sc_scene *s, const char *path, const sc_load_opts *o, char *err)
{
    (void)s; (void)o;
    snprintf(err, SC_ERR_MAX, "%s: nope", path);
    return -1;
}

/* What the child does, reported: an abort, a hang past the deadline, an error. Only the
 * hang gets a short deadline: the child that aborts or fails at once must be reported as
 * such however long the fork takes under load (a sanitized process on a busy machine can
 * take more than half a second to fork and start), and a real hang would still fail the
 * test, after the default deadline. */
static void test_isolation(void)
{
    sc_load_opts o = sc_load_opts_default();
    sc_scene *s = sc_scene_new("x");
    char err[SC_ERR_MAX];
    CHECK_MSG(sc_import_isolated(s, "a.ply", &o, aborts, err) == -1 &&
              strstr(err, "a.ply: the mesh importer crashed"), "%s", err);
    CHECK_MSG(sc_import_isolated(s, "f.ply", &o, fails, err) == -1 && !strcmp(err, "f.ply: nope"), "%s", err);
    o.import_seconds = 0.5;
    double t0 = now_s();
    CHECK_MSG(sc_import_isolated(s, "h.ply", &o, hangs, err) == -1 &&
              strstr(err, "h.ply: the mesh importer did not finish"), "%s", err);
    CHECK(now_s() - t0 < 5);
    CHECK(s->nmeshes == 0 && s->nmaterials == 0);
    sc_free(s);
}

static char tool[512];

static void test_cli_exit(void)
{
    const char head[] = ASCII_HEAD;
    const char *path = write_file("cli.ply", head, 40);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -q --size 8x8 %s 2>/dev/null", tool, path);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[512];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(tool, sizeof tool, "%s/../../bin/gramps-render", dirname(self));
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gramps-import-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_ascii_truncated);
    RUN(test_binary_faces);
    RUN(test_bare_header_line);
    RUN(test_huge_counts);
    RUN(test_memory_limit);
    RUN(test_isolation);
    RUN(test_cli_exit);
    if (!scratch_dir_remove(tmpdir)) return 1;
    return check_finish();
}

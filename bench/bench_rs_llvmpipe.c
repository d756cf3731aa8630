/* Rasterization against Mesa's llvmpipe (through OSMesa): the same triangles, the same
 * camera and projection, per-pixel Blinn-Phong in GLSL with the same light, at 1024x1024,
 * for each scene given (one material, one light; default scenes/bunny.scene and the
 * held-out scenes/horse.scene, whose mesh is ../shared/scenes/horse.obj). llvmpipe runs in a child process per thread count because it
 * reads LP_NUM_THREADS when its screen is created; its frames and ours are timed in turn
 * (bench/paired_frames.h). Prints "name value unit": median frame times of both and the
 * ratio ours / llvmpipe (below 1 = we are faster: the median of the per-pair ratios; _min:
 * the fastest frames'), at each thread count of --threads (default 1,2), and with 1 among
 * them each one's speedup.
 *
 * Built against OSMesa when Debian's libosmesa6-dev is installed (`make osmesa`);
 * otherwise it prints a note. */
#if __has_include(<GL/osmesa.h>)

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>
#include <GL/osmesa.h>

#include "bench/gl_raster.h"

#include "bench/line_round_trip.h"
#include "bench/paired_frames.h"
#include "bench/thread_list.h"
#include "pipelines/frame_memory.h"
#include "pipelines/kept_graph.h"
#include "pipelines/raster/raster.h"
#include "shaders/raster_shading.h"
#include "tools/common/measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIZE 1024
#define PAIRS 20                          /* timed frames of each, in turn */
#define WARM 2                            /* untimed pairs first */

static const char *vs_src =
    "uniform mat4 proj;\n"
    "varying vec3 wpos; varying vec3 wnrm;\n"
    "void main() { wpos = gl_Vertex.xyz; wnrm = gl_Normal; gl_Position = proj * gl_Vertex; }\n";

static const char *fs_src =
    "uniform vec3 eye; uniform vec3 light; uniform vec3 albedo; uniform float spec; uniform float expo;\n"
    "varying vec3 wpos; varying vec3 wnrm;\n"
    "void main() {\n"
    "  vec3 n = normalize(wnrm); vec3 v = normalize(eye - wpos);\n"
    "  if (dot(n, v) < 0.0) n = -n;\n"
    "  vec3 c = 0.1 * albedo; vec3 l = normalize(light - wpos); float nl = dot(n, l);\n"
    "  if (nl > 0.0) { vec3 h = normalize(l + v); c += albedo * nl + spec * pow(max(dot(n, h), 0.0), expo); }\n"
    "  gl_FragColor = vec4(pow(clamp(c, 0.0, 1.0), vec3(1.0 / 2.2)), 1.0);\n"
    "}\n";

/* One llvmpipe frame of geometry arg (bench_peer_serve's frame). */
static bool llvmpipe_frame(void *arg)
{
    const sc_geometry *g = arg;
    glClearColor(0.05f, 0.05f, 0.05f, 1);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glDrawElements(GL_TRIANGLES, (GLsizei)(g->ntriangles * 3), GL_UNSIGNED_INT, 0);
    glFinish();
    return true;
}

/* --llvmpipe-child SCENE: llvmpipe (LP_NUM_THREADS from the parent) serving frames to
 * the parent, one per line it reads (paired_frames.h). */
static int llvmpipe_child(const sc_scene *s, const sc_geometry *g)
{
    OSMesaContext ctx = OSMesaCreateContextExt(OSMESA_RGBA, 24, 0, 0, NULL);
    unsigned char *buf = malloc(SIZE * SIZE * 4);
    if (!ctx || !OSMesaMakeCurrent(ctx, buf, GL_UNSIGNED_BYTE, SIZE, SIZE)) {
        fprintf(stderr, "# llvmpipe: no OSMesa context\n");
        return 1;
    }
    sh_raster_env e;
    sh_raster_env_init(&e, s, g, SIZE, SIZE, SH_AOV_COLOR);
    GLuint prog = glCreateProgram();
    glAttachShader(prog, gl_compile(GL_VERTEX_SHADER, vs_src, 1));
    glAttachShader(prog, gl_compile(GL_FRAGMENT_SHADER, fs_src, 1));
    glLinkProgram(prog);
    glUseProgram(prog);
    float proj[16];
    gl_projection(&e, proj);
    const sc_material *m = &s->materials[g->materials[0]];
    glUniformMatrix4fv(glGetUniformLocation(prog, "proj"), 1, GL_FALSE, proj);
    glUniform3fv(glGetUniformLocation(prog, "eye"), 1, e.frame.eye);
    glUniform3fv(glGetUniformLocation(prog, "light"), 1, e.lights[0].position);
    glUniform3fv(glGetUniformLocation(prog, "albedo"), 1, m->albedo);
    glUniform1f(glGetUniformLocation(prog, "spec"), m->specular);
    glUniform1f(glGetUniformLocation(prog, "expo"), m->specular_exponent);
    GLuint vbo[3];
    glGenBuffers(3, vbo);
    glBindBuffer(GL_ARRAY_BUFFER, vbo[0]);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(g->nvertices * 12), g->positions, GL_STATIC_DRAW);
    glVertexPointer(3, GL_FLOAT, 0, 0);
    glBindBuffer(GL_ARRAY_BUFFER, vbo[1]);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(g->nvertices * 12), g->normals, GL_STATIC_DRAW);
    glNormalPointer(GL_FLOAT, 0, 0);
    glEnableClientState(GL_VERTEX_ARRAY);
    glEnableClientState(GL_NORMAL_ARRAY);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, vbo[2]);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(g->ntriangles * 12), g->indices, GL_STATIC_DRAW);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glViewport(0, 0, SIZE, SIZE);
    const int rc = bench_peer_serve(llvmpipe_frame, (void *)g);
    size_t covered = 0;                   /* a sanity check that it drew the model */
    for (size_t i = 0; i < (size_t)SIZE * SIZE; i++) covered += buf[4 * i] != buf[0] || buf[4 * i + 1] != buf[1];
    fprintf(stderr, "# llvmpipe covered %zu pixels\n", covered);
    OSMesaDestroyContext(ctx);
    free(buf);
    return rc;
}

/* Ours against llvmpipe (a child with LP_NUM_THREADS = threads, on scene path) at one
 * thread count, their frames in turn; false when a frame failed. */
static bool pairs_at(const char *self, const char *path, const sc_scene *s, const sc_geometry *g,
                     int threads, bench_pairs *m)
{
    char *argv[] = {(char *)self, "--llvmpipe-child", (char *)path, NULL};
    bench_raster_frames o = {pl_kept_builtin_new(), s, g, {0}, malloc(SIZE * SIZE * 4)};
    plr_config_default(&o.c);
    o.c.workers = (unsigned)threads;
    bench_peer peer = {-1, NULL, NULL};
    const bool ok = o.kept && o.img && bench_peer_start(&peer, argv, "LP_NUM_THREADS", threads) &&
                    bench_pairs_run(&peer, bench_raster_frame, &o, WARM, PAIRS, m);
    bench_peer_stop(&peer);
    pl_kept_builtin_free(o.kept);
    free(o.img);
    return ok;
}

/* The scene's name in the output: its file name without directory and extension. */
static void label_of(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    snprintf(out, size, "%s", base ? base + 1 : path);
    char *dot = strrchr(out, '.');
    if (dot) *dot = 0;
}

/* Both renderers' median frames at one thread count, printed with their ratio; lp and
 * us are -1 when a frame failed. */
static void compare_at(const char *self, const char *path, const char *name, const sc_scene *s,
                       const sc_geometry *g, int threads, double *lp, double *us)
{
    bench_pairs m;
    const double trip_before = threads > 1 ? bench_line_round_trip_ns() : 0;
    *lp = *us = -1;
    if (!pairs_at(self, path, s, g, threads, &m)) {
        printf("# %s %dt: a frame failed (ours or llvmpipe's)\n", name, threads);
        return;
    }
    *lp = m.peer_ms, *us = m.ours_ms;
    if (threads > 1)
        printf("# %s %dt: cache-line round trip between two threads %.0f ns before, %.0f ns "
               "after (bench/line_round_trip.h)\n", name, threads, trip_before,
               bench_line_round_trip_ns());
    printf("llvmpipe_frame_ms_%s_%dt %.1f ms\n", name, threads, m.peer_ms);
    printf("raster_frame_ms_%s_%dt %.1f ms\n", name, threads, m.ours_ms);
    printf("raster_vs_llvmpipe_%s_%dt %.3f ratio\n", name, threads, m.ratio);
    printf("raster_vs_llvmpipe_min_%s_%dt %.3f ratio\n", name, threads, m.ratio_min);
}

/* Both renderers on one scene at every thread count; 1 when it does not load. */
static int compare(const char *self, const char *path, const bench_threads *t)
{
    sc_scene *s;
    sc_geometry g;
    char err[SC_ERR_MAX], name[128];
    if (sc_load(path, &s, err) || sc_flatten(s, &g, err)) { printf("# %s\n", err); return 1; }
    label_of(path, name, sizeof name);
    double lp[BENCH_MAX_COUNTS], us[BENCH_MAX_COUNTS];
    for (int i = 0; i < t->n; i++) compare_at(self, path, name, s, &g, t->count[i], &lp[i], &us[i]);
    const int one = bench_threads_one(t);
    for (int i = 0; one >= 0 && i < t->n; i++) {
        printf("llvmpipe_speedup_%s_%dt %.2f x\n", name, t->count[i], lp[i] > 0 && lp[one] > 0 ? lp[one] / lp[i] : -1);
        printf("raster_speedup_%s_%dt %.2f x\n", name, t->count[i], us[one] > 0 && us[i] > 0 ? us[one] / us[i] : -1);
    }
    sc_geometry_free(&g);
    sc_free(s);
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: bench_rs_llvmpipe [--threads LIST] [SCENE...]\n"
                 "  SCENE           default scenes/bunny.scene scenes/horse.scene\n"
                 "  --threads LIST  thread counts, e.g. 1,2,4,8,16 (default 1,2); llvmpipe gets\n"
                 "                  LP_NUM_THREADS, ours as many workers\n");
}

int main(int argc, char **argv)
{
    pl_keep_freed_memory();           /* frames reuse memory, as a renderer would */
    if (argc == 3 && !strcmp(argv[1], "--llvmpipe-child")) {
        sc_scene *s;
        sc_geometry g;
        char err[SC_ERR_MAX];
        if (sc_load(argv[2], &s, err) || sc_flatten(s, &g, err)) { fprintf(stderr, "# %s\n", err); return 1; }
        return llvmpipe_child(s, &g);
    }
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    bench_threads threads = bench_threads_default;
    const char *scenes[64];
    int nscenes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            if (bench_threads_parse("bench_rs_llvmpipe", argv[++i], &threads)) return 2;
        } else if (argv[i][0] != '-' && nscenes < 64) {
            scenes[nscenes++] = argv[i];
        } else {
            fprintf(stderr, "bench_rs_llvmpipe: bad argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    static const char *const defaults[] = {"scenes/bunny.scene", "scenes/horse.scene"};
    if (nscenes == 0)
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++) scenes[nscenes++] = defaults[i];
    int rc = 0;
    for (int i = 0; i < nscenes; i++) rc |= compare(self, scenes[i], &threads);
    return rc;
}

#else

#include <stdio.h>

int main(void)
{
    printf("# osmesa not installed (make osmesa)\n");
    return 0;
}

#endif

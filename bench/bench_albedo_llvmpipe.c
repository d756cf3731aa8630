/* The albedo AOV against Mesa's llvmpipe (through OSMesa), an independent check of
 * texturing (issue 30): generated OBJ + MTL scenes with PNG textures are rendered by the
 * raster graph with --aov albedo at 512x512 and by llvmpipe unlit (the base colour times
 * the texture, GL_LINEAR_MIPMAP_LINEAR with glGenerateMipmap, GL_REPEAT; opaque
 * triangles first, then blended ones in primitive order, depth-tested against the opaque
 * depth, writing no depth; black background), and the share of pixels whose channels all
 * agree within 4/255 is printed per scene ("name value unit"). The target is 99%: the
 * program exits 1 when a scene it checks is below it (a test can run it).
 *
 * Scenes (written to a temporary directory, OBJ v = 0 at the image's bottom row):
 *   floor    a ground plane receding to the horizon, a 1-texel checker repeated 40 times
 *            (mip selection decides every pixel past the first metres)
 *   object   the floor and an opaque textured sphere
 *   blend    the object behind three overlapping quads of MTL d 0.5 in file order
 *   cutout   the floor behind a quad whose map_Kd PNG has alpha 0 outside a disc
 * OBJ has no alpha mode: a material blends when its d < 1 or its map_Kd has a texel with
 * alpha below 255 (alpha = texture alpha x d). --opaque checks only floor and object
 * (transparency in the raster graphs is separate work; blend and cutout are reported).
 * --msaa 4: both renderers multisample (ours at Direct3D's standard positions; llvmpipe,
 * which uses the same 4x pattern, into a 4-sample framebuffer object resolved by
 * glBlitFramebuffer), the figures named "..._msaa4". Mesa's OSMesa offers at most 4
 * samples (GL_MAX_SAMPLES), so --msaa 8 says so and fails.
 *
 * Then the lit comparison (reported, not checked): the textured bunny below shaded by the
 * raster graph's Blinn-Phong and by llvmpipe with the same formula and the exact sRGB
 * encode at 512x512, "lit_within_4_bunny_textured".
 *
 * --speed: a textured, trilinear bunny (../shared/scenes/bunny.obj with spherical
 * texture coordinates and a 512x512 checker), lit (Blinn-Phong, as bench_rs_llvmpipe)
 * at 1024x1024, at 1 and 2 threads: llvmpipe in a child per thread count (it reads
 * LP_NUM_THREADS once), its frames and ours timed in turn (bench/paired_frames.h); the
 * ratio is the median of the per-pair ratios, _min the fastest frames'.
 *
 * Built against OSMesa when Debian's libosmesa6-dev is installed (`make osmesa`);
 * otherwise it prints a note. */
#if __has_include(<GL/osmesa.h>)

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>
#include <GL/osmesa.h>

#include "bench/gl_raster.h"
#include "bench/paired_frames.h"

#include "output/png_encode.h"
#include "pipelines/frame_memory.h"
#include "pipelines/kept_graph.h"
#include "pipelines/raster/raster.h"
#include "scenes/loaders.h"
#include "shaders/blinn_phong.h"
#include "shaders/raster_shading.h"
#include "shaders/texture_sample.h"
#include "tools/common/measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SIZE 512
#define TOLERANCE 4
#define TARGET 0.99

/* ---- the scenes ------------------------------------------------------------------------ */

static char dir[256];

static int write_png(const char *name, int w, int h, const uint8_t *rgba)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t n;
    uint8_t *png = io_encode_png(w, h, rgba, &n);
    FILE *f = png ? fopen(path, "wb") : NULL;
    int ok = f && fwrite(png, 1, n, f) == n;
    if (f) fclose(f);
    free(png);
    return ok ? 0 : -1;
}

/* A 256x256 checker of single texels (two colours), a 128x128 colour grid for the
 * sphere, and a 64x64 cutout: stripes inside a disc of alpha 255, alpha 0 outside. */
static int write_textures(void)
{
    enum { C = 256, G = 128, D = 64 };
    uint8_t *c = malloc(C * C * 4), *g = malloc(G * G * 4), *d = malloc(D * D * 4);
    for (int y = 0; y < C; y++)
        for (int x = 0; x < C; x++) {
            uint8_t *p = c + 4 * (y * C + x);
            bool odd = (x + y) & 1;
            p[0] = odd ? 235 : 30;
            p[1] = odd ? 200 : 60;
            p[2] = odd ? 60 : 150;
            p[3] = 255;
        }
    for (int y = 0; y < G; y++)
        for (int x = 0; x < G; x++) {
            uint8_t *p = g + 4 * (y * G + x);
            bool line = x % 16 == 0 || y % 16 == 0;
            p[0] = line ? 255 : (uint8_t)(2 * x);
            p[1] = line ? 255 : (uint8_t)(2 * y);
            p[2] = line ? 255 : (uint8_t)(255 - 2 * x);
            p[3] = 255;
        }
    for (int y = 0; y < D; y++)
        for (int x = 0; x < D; x++) {
            uint8_t *p = d + 4 * (y * D + x);
            float dx = x + 0.5f - D / 2, dy = y + 0.5f - D / 2;
            bool in = dx * dx + dy * dy < (D / 2 - 2) * (D / 2 - 2);
            p[0] = (x / 8) % 2 ? 250 : 40;
            p[1] = 180;
            p[2] = (y / 8) % 2 ? 40 : 220;
            p[3] = in ? 255 : 0;
        }
    int r = write_png("checker.png", C, C, c) | write_png("grid.png", G, G, g) |
            write_png("cutout.png", D, D, d);
    free(c);
    free(g);
    free(d);
    return r;
}

static const char *mtl =
    "newmtl floor\nKd 1 1 1\nmap_Kd checker.png\n"
    "newmtl sphere\nKd 1 1 1\nmap_Kd grid.png\n"
    "newmtl red\nKd 0.9 0.1 0.1\nd 0.5\n"
    "newmtl green\nKd 0.1 0.8 0.2\nd 0.5\n"
    "newmtl blue\nKd 0.2 0.3 0.95\nd 0.5\n"
    "newmtl cutout\nKd 1 1 1\nmap_Kd cutout.png\n";

/* OBJ vertex, texture and normal indices count from 1 across the file: each part
 * appends its own and remembers the bases. */
typedef struct obj_out { FILE *f; int v, vt, vn; } obj_out;

static void floor_part(obj_out *o)
{
    const float s = 50.0f, r = 40.0f;
    fprintf(o->f, "usemtl floor\nv %g 0 %g\nv %g 0 %g\nv %g 0 %g\nv %g 0 %g\n", -s, s, s, s, s, -s, -s, -s);
    fprintf(o->f, "vt 0 0\nvt %g 0\nvt %g %g\nvt 0 %g\nvn 0 1 0\n", r, r, r, r);
    int v = o->v, t = o->vt, n = o->vn;
    fprintf(o->f, "f %d/%d/%d %d/%d/%d %d/%d/%d\n", v + 1, t + 1, n + 1, v + 2, t + 2, n + 1, v + 3, t + 3, n + 1);
    fprintf(o->f, "f %d/%d/%d %d/%d/%d %d/%d/%d\n", v + 1, t + 1, n + 1, v + 3, t + 3, n + 1, v + 4, t + 4, n + 1);
    o->v += 4, o->vt += 4, o->vn += 1;
}

/* A UV sphere of radius 1 at (0, 1, 0). */
static void sphere_part(obj_out *o)
{
    enum { SEG = 32, RINGS = 16 };
    fprintf(o->f, "usemtl sphere\n");
    for (int j = 0; j <= RINGS; j++)
        for (int i = 0; i <= SEG; i++) {
            double th = M_PI * j / RINGS, ph = 2 * M_PI * i / SEG;
            double x = sin(th) * cos(ph), y = cos(th), z = sin(th) * sin(ph);
            fprintf(o->f, "v %.6f %.6f %.6f\nvn %.6f %.6f %.6f\nvt %.6f %.6f\n", x, y + 1, z, x, y, z,
                    2.0 * i / SEG, 1.0 - (double)j / RINGS);
        }
    for (int j = 0; j < RINGS; j++)
        for (int i = 0; i < SEG; i++) {
            int a = j * (SEG + 1) + i + 1, b = a + 1, c = a + SEG + 1, d = c + 1;
            int q[2][3] = {{a, c, b}, {b, c, d}};
            for (int k = 0; k < 2; k++)
                fprintf(o->f, "f %d/%d/%d %d/%d/%d %d/%d/%d\n", o->v + q[k][0], o->vt + q[k][0],
                        o->vn + q[k][0], o->v + q[k][1], o->vt + q[k][1], o->vn + q[k][1],
                        o->v + q[k][2], o->vt + q[k][2], o->vn + q[k][2]);
        }
    int n = (RINGS + 1) * (SEG + 1);
    o->v += n, o->vt += n, o->vn += n;
}

/* An upright quad facing +z: centre (cx, cy, cz), half sizes hw, hh, uv 0..1. */
static void quad_part(obj_out *o, const char *m, float cx, float cy, float cz, float hw, float hh)
{
    fprintf(o->f, "usemtl %s\nv %g %g %g\nv %g %g %g\nv %g %g %g\nv %g %g %g\n", m, cx - hw, cy - hh, cz,
            cx + hw, cy - hh, cz, cx + hw, cy + hh, cz, cx - hw, cy + hh, cz);
    fprintf(o->f, "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 0 1\n");
    int v = o->v, t = o->vt, n = o->vn;
    fprintf(o->f, "f %d/%d/%d %d/%d/%d %d/%d/%d\n", v + 1, t + 1, n + 1, v + 2, t + 2, n + 1, v + 3, t + 3, n + 1);
    fprintf(o->f, "f %d/%d/%d %d/%d/%d %d/%d/%d\n", v + 1, t + 1, n + 1, v + 3, t + 3, n + 1, v + 4, t + 4, n + 1);
    o->v += 4, o->vt += 4, o->vn += 1;
}

enum { SCENE_FLOOR, SCENE_OBJECT, SCENE_BLEND, SCENE_CUTOUT, NSCENES };
static const char *scene_names[NSCENES] = {"floor", "object", "blend", "cutout"};

static int write_scene(int which, char *path, size_t size)
{
    snprintf(path, size, "%s/%s.obj", dir, scene_names[which]);
    obj_out o = {fopen(path, "w"), 0, 0, 0};
    if (!o.f) return -1;
    fprintf(o.f, "mtllib scenes.mtl\n");
    floor_part(&o);
    if (which == SCENE_OBJECT || which == SCENE_BLEND) sphere_part(&o);
    if (which == SCENE_BLEND) {                  /* in file order: red, green, blue */
        quad_part(&o, "red", -0.6f, 1.0f, 2.0f, 0.8f, 0.6f);
        quad_part(&o, "green", 0.0f, 1.4f, 2.3f, 0.8f, 0.6f);
        quad_part(&o, "blue", 0.6f, 1.0f, 1.7f, 0.8f, 0.6f);
    }
    if (which == SCENE_CUTOUT) quad_part(&o, "cutout", 0.0f, 1.2f, 0.0f, 1.2f, 1.2f);
    return fclose(o.f);
}

static int write_mtl(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/scenes.mtl", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(mtl, f);
    return fclose(f);
}

static const sc_camera camera = {{0.0f, 1.3f, 6.0f}, {0.0f, 0.9f, 0.0f}, {0, 1, 0}, 50.0f};

/* ---- llvmpipe -------------------------------------------------------------------------- */

static const char *vs_src =
    "uniform mat4 proj;\n"
    "varying vec3 wpos; varying vec3 wnrm; varying vec2 uv;\n"
    "void main() { wpos = gl_Vertex.xyz; wnrm = gl_Normal; uv = gl_MultiTexCoord0.xy;\n"
    "  gl_Position = proj * gl_Vertex; }\n";

/* Unlit: the base colour times the texture; opaque writes alpha 1. */
static const char *fs_albedo =
    "uniform sampler2D tex; uniform int textured; uniform vec4 base; uniform int blended;\n"
    "varying vec3 wpos; varying vec3 wnrm; varying vec2 uv;\n"
    "void main() {\n"
    "  vec4 c = base; if (textured != 0) c *= texture2D(tex, uv);\n"
    "  gl_FragColor = vec4(clamp(c.rgb, 0.0, 1.0), blended != 0 ? c.a : 1.0);\n"
    "}\n";

/* Lit, as bench_rs_llvmpipe's (Blinn-Phong, one light), times the texture. */
static const char *fs_lit =
    "uniform sampler2D tex; uniform int textured; uniform vec4 base; uniform int blended;\n"
    "uniform vec3 eye; uniform vec3 light; uniform float spec; uniform float expo;\n"
    "uniform float ambient; uniform vec3 light_color; uniform int exact_srgb;\n"
    "varying vec3 wpos; varying vec3 wnrm; varying vec2 uv;\n"
    "void main() {\n"
    "  vec3 albedo = base.rgb; if (textured != 0) albedo *= texture2D(tex, uv).rgb;\n"
    "  vec3 n = normalize(wnrm); vec3 v = normalize(eye - wpos);\n"
    "  if (dot(n, v) < 0.0) n = -n;\n"
    "  vec3 c = ambient * albedo; vec3 l = normalize(light - wpos); float nl = dot(n, l);\n"
    "  if (nl > 0.0) { vec3 h = normalize(l + v);\n"
    "    c += (albedo * nl + spec * pow(max(dot(n, h), 0.0), expo)) * light_color; }\n"
    "  c = clamp(c, 0.0, 1.0);\n"
    "  if (exact_srgb != 0) c = mix(12.92 * c, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, c));\n"
    "  else c = pow(c, vec3(1.0 / 2.2));\n"
    "  gl_FragColor = vec4(c, 1.0);\n"
    "}\n";

/* OBJ's rule: a material blends when d < 1 or its texture has alpha below 255. */
static bool blends(const sc_scene *s, uint32_t mi)
{
    const sc_material *m = mi < s->nmaterials ? &s->materials[mi] : NULL;
    if (!m) return false;
    const sc_texture *t = sh_texture_of(s, &m->albedo_map);
    return m->alpha < 1.0f || (t && t->has_alpha);
}

typedef struct gl_scene {
    OSMesaContext ctx;
    uint8_t *buf;
    int size;
    GLuint prog, *tex;
    GLuint fbo, rb[2];                    /* msaa > 1: the multisample framebuffer */
} gl_scene;

/* --msaa: both renderers' samples per pixel (ours: plr_config.msaa; llvmpipe: a
 * multisample framebuffer object resolved by glBlitFramebuffer into OSMesa's buffer). */
static int msaa = 1;

/* Draws into a framebuffer object of msaa samples (colour RGBA8, depth 24) instead of
 * OSMesa's buffer; false, said, when Mesa offers none. */
static bool gl_multisample(gl_scene *gs, int samples)
{
    GLint max = 0;
    glGetIntegerv(GL_MAX_SAMPLES, &max);
    glGenFramebuffers(1, &gs->fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, gs->fbo);
    glGenRenderbuffers(2, gs->rb);
    glBindRenderbuffer(GL_RENDERBUFFER, gs->rb[0]);
    glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples, GL_RGBA8, gs->size, gs->size);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, gs->rb[0]);
    glBindRenderbuffer(GL_RENDERBUFFER, gs->rb[1]);
    glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples, GL_DEPTH_COMPONENT24, gs->size, gs->size);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, gs->rb[1]);
    GLint got = 0;
    glGetRenderbufferParameteriv(GL_RENDERBUFFER, GL_RENDERBUFFER_SAMPLES, &got);
    bool ok = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE && got == samples;
    if (!ok)
        printf("# OSMesa: no %d-sample framebuffer (GL_MAX_SAMPLES %d, got %d samples)\n", samples,
               (int)max, (int)got);
    return ok;
}

/* A context of size x size, the program (fs) and the scene's textures uploaded (rows
 * bottom first, so t = v; mips by glGenerateMipmap). */
static bool gl_open(gl_scene *gs, const sc_scene *s, const sc_geometry *g, int size, const char *fs,
                    int samples)
{
    memset(gs, 0, sizeof *gs);
    gs->size = size;
    gs->ctx = OSMesaCreateContextExt(OSMESA_RGBA, 24, 0, 0, NULL);
    gs->buf = malloc((size_t)size * size * 4);
    if (!gs->ctx || !gs->buf || !OSMesaMakeCurrent(gs->ctx, gs->buf, GL_UNSIGNED_BYTE, size, size))
        return false;
    gs->prog = glCreateProgram();
    glAttachShader(gs->prog, gl_compile(GL_VERTEX_SHADER, vs_src, 2));
    glAttachShader(gs->prog, gl_compile(GL_FRAGMENT_SHADER, fs, 2));
    glLinkProgram(gs->prog);
    glUseProgram(gs->prog);
    gs->tex = calloc(s->ntextures + 1, sizeof *gs->tex);
    glGenTextures((GLsizei)s->ntextures, gs->tex);
    for (size_t i = 0; i < s->ntextures; i++) {
        const sc_mip_level *l = &s->textures[i].levels[0];
        uint8_t *flip = malloc((size_t)l->width * l->height * 4);
        for (int y = 0; y < l->height; y++)
            memcpy(flip + (size_t)y * l->width * 4, l->rgba + (size_t)(l->height - 1 - y) * l->width * 4,
                   (size_t)l->width * 4);
        glBindTexture(GL_TEXTURE_2D, gs->tex[i]);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, l->width, l->height, 0, GL_RGBA, GL_UNSIGNED_BYTE, flip);
        glGenerateMipmap(GL_TEXTURE_2D);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_REPEAT);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_REPEAT);
        free(flip);
    }
    glUniform1i(glGetUniformLocation(gs->prog, "tex"), 0);
    GLuint vbo[3];
    glGenBuffers(3, vbo);
    glBindBuffer(GL_ARRAY_BUFFER, vbo[0]);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(g->nvertices * 12), g->positions, GL_STATIC_DRAW);
    glVertexPointer(3, GL_FLOAT, 0, 0);
    glBindBuffer(GL_ARRAY_BUFFER, vbo[1]);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(g->nvertices * 12), g->normals, GL_STATIC_DRAW);
    glNormalPointer(GL_FLOAT, 0, 0);
    glBindBuffer(GL_ARRAY_BUFFER, vbo[2]);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(g->nvertices * 8), g->texcoords, GL_STATIC_DRAW);
    glTexCoordPointer(2, GL_FLOAT, 0, 0);
    glEnableClientState(GL_VERTEX_ARRAY);
    glEnableClientState(GL_NORMAL_ARRAY);
    glEnableClientState(GL_TEXTURE_COORD_ARRAY);
    GLuint ibo;
    glGenBuffers(1, &ibo);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ibo);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(g->ntriangles * 12), g->indices, GL_STATIC_DRAW);
    glViewport(0, 0, size, size);
    return samples == 1 || gl_multisample(gs, samples);
}

static void gl_close(gl_scene *gs)
{
    if (gs->ctx) OSMesaDestroyContext(gs->ctx);
    free(gs->buf);
    free(gs->tex);
}

/* The triangles of one pass (opaque or blended) in primitive order, a draw call per run
 * of one material. */
static void gl_pass(const gl_scene *gs, const sc_scene *s, const sc_geometry *g, bool blended)
{
    glUniform1i(glGetUniformLocation(gs->prog, "blended"), blended);
    for (size_t i = 0; i < g->ntriangles;) {
        uint32_t m = g->materials[i];
        size_t j = i;
        while (j < g->ntriangles && g->materials[j] == m) j++;
        if (blends(s, m) == blended) {
            const sc_material *mt = m < s->nmaterials ? &s->materials[m] : &sh_default_material;
            const sc_texture *t = sh_texture_of(s, &mt->albedo_map);
            float base[4] = {mt->albedo[0], mt->albedo[1], mt->albedo[2], mt->alpha};
            glUniform4fv(glGetUniformLocation(gs->prog, "base"), 1, base);
            glUniform1i(glGetUniformLocation(gs->prog, "textured"), t != NULL);
            if (t) glBindTexture(GL_TEXTURE_2D, gs->tex[t - s->textures]);
            glDrawElements(GL_TRIANGLES, (GLsizei)((j - i) * 3), GL_UNSIGNED_INT,
                           (const void *)(i * 3 * sizeof(uint32_t)));
        }
        i = j;
    }
}

/* One frame: opaque with depth writes, then blended in primitive order without; with
 * multisampling resolved (a box filter) into OSMesa's buffer. */
static void gl_frame(const gl_scene *gs, const sc_scene *s, const sc_geometry *g, const float bg[3])
{
    if (gs->fbo) glBindFramebuffer(GL_FRAMEBUFFER, gs->fbo);
    glClearColor(bg[0], bg[1], bg[2], 1);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
    gl_pass(gs, s, g, false);
    glDepthMask(GL_FALSE);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    gl_pass(gs, s, g, true);
    if (gs->fbo) {
        glBindFramebuffer(GL_READ_FRAMEBUFFER, gs->fbo);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
        glBlitFramebuffer(0, 0, gs->size, gs->size, 0, 0, gs->size, gs->size, GL_COLOR_BUFFER_BIT,
                          GL_NEAREST);
    }
    glFinish();
}

/* ---- the comparison -------------------------------------------------------------------- */

/* "_msaa4" after a figure's name with --msaa 4, nothing without. */
static const char *msaa_suffix(void)
{
    static char suffix[16];
    snprintf(suffix, sizeof suffix, msaa > 1 ? "_msaa%d" : "", msaa);
    return suffix;
}

/* Pixels of ours (row 0 at the top) and llvmpipe's (row 0 at the bottom) within
 * TOLERANCE in every channel, as a share; a difference image to diff (|d| x 16). */
static double agreement(const uint8_t *ours, const uint8_t *gl, int size, uint8_t *diff, int *worst)
{
    size_t ok = 0;
    *worst = 0;
    for (int y = 0; y < size; y++)
        for (int x = 0; x < size; x++) {
            const uint8_t *a = ours + 4 * ((size_t)y * size + x);
            const uint8_t *b = gl + 4 * ((size_t)(size - 1 - y) * size + x);
            int d = 0;
            for (int k = 0; k < 3; k++) {
                int e = abs(a[k] - b[k]);
                d = e > d ? e : d;
                diff[4 * ((size_t)y * size + x) + k] = (uint8_t)(e * 16 > 255 ? 255 : e * 16);
            }
            diff[4 * ((size_t)y * size + x) + 3] = 255;
            ok += d <= TOLERANCE;
            *worst = d > *worst ? d : *worst;
        }
    return (double)ok / ((double)size * size);
}

static void flip_rows(const uint8_t *in, uint8_t *out, int size)
{
    for (int y = 0; y < size; y++)
        memcpy(out + (size_t)y * size * 4, in + (size_t)(size - 1 - y) * size * 4, (size_t)size * 4);
}

/* One scene: both images, their agreement printed; 1 when below the target. */
static int check_scene(int which, bool checked, const char *keep)
{
    char path[512], err[SC_ERR_MAX];
    sc_scene *s;
    sc_geometry g;
    if (write_scene(which, path, sizeof path) || sc_load(path, &s, err) || sc_flatten(s, &g, err)) {
        printf("# %s: %s\n", scene_names[which], err);
        return 1;
    }
    s->camera = camera;
    size_t nblend = 0;
    for (size_t i = 0; i < g.ntriangles; i++) nblend += blends(s, g.materials[i]);
    for (size_t m = 0; m < s->nmaterials; m++)
        if ((s->materials[m].alpha_mode == SC_ALPHA_BLEND) != blends(s, (uint32_t)m))
            printf("# %s: material %s: the loader's alpha mode %d, OBJ's rule says %s\n",
                   scene_names[which], s->materials[m].name, (int)s->materials[m].alpha_mode,
                   blends(s, (uint32_t)m) ? "blend" : "opaque");
    plr_config c;
    plr_config_default(&c);
    c.width = c.height = SIZE;
    c.aov = SH_AOV_ALBEDO;
    c.workers = 2;
    c.msaa = msaa;
    uint8_t *ours = malloc(SIZE * SIZE * 4), *diff = malloc(SIZE * SIZE * 4), *up = malloc(SIZE * SIZE * 4);
    gr_graph *gg = plr_render(s, &g, &c, ours, NULL, err);
    if (!gg) printf("# %s: raster: %s\n", scene_names[which], err);
    gr_graph_destroy(gg);
    gl_scene gs;
    int rc = 1;
    if (gl_open(&gs, s, &g, SIZE, fs_albedo, msaa)) {
        sh_raster_env e;
        sh_raster_env_init(&e, s, &g, SIZE, SIZE, SH_AOV_ALBEDO);
        float proj[16];
        gl_projection(&e, proj);
        glUniformMatrix4fv(glGetUniformLocation(gs.prog, "proj"), 1, GL_FALSE, proj);
        gl_frame(&gs, s, &g, (const float[3]){0, 0, 0});
        int worst;
        double share = agreement(ours, gs.buf, SIZE, diff, &worst);
        printf("albedo_within_4_%s%s %.4f share\n", scene_names[which], msaa_suffix(), share);
        printf("# %s: %zu of %zu triangles blended; largest difference %d/255%s\n", scene_names[which],
               nblend, g.ntriangles, worst, checked ? "" : " (not checked: --opaque)");
        rc = checked && share < TARGET;
        if (keep) {
            char name[300];
            snprintf(name, sizeof name, "%s-ours.png", scene_names[which]);
            write_png(name, SIZE, SIZE, ours);
            flip_rows(gs.buf, up, SIZE);
            snprintf(name, sizeof name, "%s-llvmpipe.png", scene_names[which]);
            write_png(name, SIZE, SIZE, up);
            snprintf(name, sizeof name, "%s-diff.png", scene_names[which]);
            write_png(name, SIZE, SIZE, diff);
        }
    } else {
        printf("# %s: no OSMesa context\n", scene_names[which]);
    }
    gl_close(&gs);
    free(ours);
    free(diff);
    free(up);
    sc_geometry_free(&g);
    sc_free(s);
    return rc;
}

/* ---- speed: a textured bunny ------------------------------------------------------------ */

#define SPEED_SIZE 1024
#define SPEED_PAIRS 30                    /* timed frames of each, in turn */
#define SPEED_WARM 2                      /* untimed pairs first */

static bool keep_speed_scene;             /* --keep with --speed: write it as files too */

/* The textured bunny as files in dir, for gramps-render: bunny_textured.obj (positions,
 * normals, texture coordinates), bunny_checker.png and bunny_textured.scene (the bunny
 * scene's camera, light and material with the texture). */
static void write_speed_scene(const sc_scene *s, const sc_geometry *g)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bunny_textured.obj", dir);
    FILE *f = fopen(path, "w");
    if (!f) return;
    for (size_t i = 0; i < g->nvertices; i++) {
        const float *p = g->positions + 3 * i, *n = g->normals + 3 * i, *t = g->texcoords + 2 * i;
        fprintf(f, "v %.9g %.9g %.9g\nvn %.9g %.9g %.9g\nvt %.9g %.9g\n", p[0], p[1], p[2], n[0], n[1],
                n[2], t[0], t[1]);
    }
    for (size_t i = 0; i < g->ntriangles; i++) {
        const uint32_t *v = g->indices + 3 * i;
        fprintf(f, "f %u/%u/%u %u/%u/%u %u/%u/%u\n", v[0] + 1, v[0] + 1, v[0] + 1, v[1] + 1, v[1] + 1,
                v[1] + 1, v[2] + 1, v[2] + 1, v[2] + 1);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/bunny_textured.scene", dir);
    f = fopen(path, "w");
    if (!f) return;
    const sc_camera *c = &s->camera;
    const sc_material *m = &s->materials[g->materials[0]];
    fprintf(f, "[scene]\nname = bunny_textured\n\n[camera]\neye = %.9g, %.9g, %.9g\n"
               "target = %.9g, %.9g, %.9g\nup = %.9g, %.9g, %.9g\nfovy = %.9g\n\n",
            c->eye[0], c->eye[1], c->eye[2], c->target[0], c->target[1], c->target[2], c->up[0],
            c->up[1], c->up[2], c->fovy_deg);
    for (size_t i = 0; i < s->nlights; i++)
        fprintf(f, "[light.l%zu]\nposition = %.9g, %.9g, %.9g\ncolor = %.9g, %.9g, %.9g\n\n", i,
                s->lights[i].position[0], s->lights[i].position[1], s->lights[i].position[2],
                s->lights[i].color[0], s->lights[i].color[1], s->lights[i].color[2]);
    fprintf(f, "[material.clay]\nalbedo = %.9g, %.9g, %.9g\nreflectivity = %.9g\nspecular = %.9g\n"
               "exponent = %.9g\ntexture = bunny_checker.png\n\n[mesh.bunny]\nfile = bunny_textured.obj\n"
               "material = clay\n", m->albedo[0], m->albedo[1], m->albedo[2], m->reflectivity,
            m->specular, m->specular_exponent);
    fclose(f);
}

/* The bunny with spherical texture coordinates (around its centre, 4 x 2 repeats) and
 * a 512x512 checker of 4-texel squares on its material. */
static int textured_bunny(sc_scene **out, sc_geometry *g, char err[SC_ERR_MAX])
{
    sc_scene *s;
    if (sc_load("scenes/bunny.scene", &s, err) || sc_flatten(s, g, err)) return -1;
    float c[3];
    for (int k = 0; k < 3; k++) c[k] = 0.5f * (g->bbox_min[k] + g->bbox_max[k]);
    for (size_t i = 0; i < g->nvertices; i++) {
        const float *p = g->positions + 3 * i;
        float d[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
        float r = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        g->texcoords[2 * i] = 4.0f * (atan2f(d[2], d[0]) / (2.0f * (float)M_PI) + 0.5f);
        g->texcoords[2 * i + 1] = 2.0f * (r > 0 ? acosf(d[1] / r) / (float)M_PI : 0.0f);
    }
    enum { T = 512 };
    uint8_t *px = malloc(T * T * 4);
    for (int y = 0; y < T; y++)
        for (int x = 0; x < T; x++) {
            uint8_t *p = px + 4 * (y * T + x);
            bool odd = ((x / 4) + (y / 4)) & 1;
            p[0] = odd ? 240 : 40;
            p[1] = odd ? 220 : 90;
            p[2] = odd ? 120 : 200;
            p[3] = 255;
        }
    if (keep_speed_scene) write_png("bunny_checker.png", T, T, px);
    int t = sc_add_texture(s, "checker", T, T, px, err);
    if (t < 0) return -1;
    for (size_t m = 0; m < s->nmaterials; m++) s->materials[m].albedo_map.texture = t;
    if (keep_speed_scene) write_speed_scene(s, g);
    *out = s;
    return 0;
}

/* The lit program's uniforms for s (its first light, as bench_rs_llvmpipe). */
static void gl_lit_uniforms(const gl_scene *gs, const sc_scene *s, const sc_geometry *g, int size,
                            bool exact_srgb, sh_raster_env *e)
{
    sh_raster_env_init(e, s, g, size, size, SH_AOV_COLOR);
    float proj[16];
    gl_projection(e, proj);
    const sc_material *m = &s->materials[g->materials[0]];
    glUniformMatrix4fv(glGetUniformLocation(gs->prog, "proj"), 1, GL_FALSE, proj);
    glUniform3fv(glGetUniformLocation(gs->prog, "eye"), 1, e->frame.eye);
    glUniform3fv(glGetUniformLocation(gs->prog, "light"), 1, e->lights[0].position);
    glUniform3fv(glGetUniformLocation(gs->prog, "light_color"), 1, e->lights[0].color);
    glUniform1f(glGetUniformLocation(gs->prog, "spec"), m->specular);
    glUniform1f(glGetUniformLocation(gs->prog, "expo"), m->specular_exponent);
    glUniform1f(glGetUniformLocation(gs->prog, "ambient"), e->ambient);
    glUniform1i(glGetUniformLocation(gs->prog, "exact_srgb"), exact_srgb);
}

/* The lit comparison: the textured bunny (one material, one light) shaded by our raster
 * graph and by llvmpipe with the same Blinn-Phong formula and the exact sRGB encode, at
 * 512x512; the share within 4/255 printed (reported, not checked: the specular powf and
 * normalisations differ in the last bits, edges by the rasterizers' rules). */
static void lit_check(const char *keep)
{
    sc_scene *s;
    sc_geometry g;
    char err[SC_ERR_MAX];
    if (textured_bunny(&s, &g, err)) { printf("# lit: %s\n", err); return; }
    uint8_t *ours = malloc(SIZE * SIZE * 4), *diff = malloc(SIZE * SIZE * 4), *up = malloc(SIZE * SIZE * 4);
    plr_config c;
    plr_config_default(&c);
    c.width = c.height = SIZE;
    c.workers = 2;
    c.msaa = msaa;
    gr_graph_destroy(plr_render(s, &g, &c, ours, NULL, err));
    gl_scene gs;
    if (gl_open(&gs, s, &g, SIZE, fs_lit, msaa)) {
        sh_raster_env e;
        gl_lit_uniforms(&gs, s, &g, SIZE, true, &e);
        float bg[3];                             /* the clear colour as our image stores it */
        for (int k = 0; k < 3; k++) bg[k] = sh_to_srgb8(e.background[k]) / 255.0f;
        gl_frame(&gs, s, &g, bg);
        int worst;
        double share = agreement(ours, gs.buf, SIZE, diff, &worst);
        printf("lit_within_4_bunny_textured%s %.4f share\n", msaa_suffix(), share);
        printf("# lit bunny_textured: largest difference %d/255 (Blinn-Phong, one light, sRGB)\n", worst);
        if (keep) {
            write_png("lit-ours.png", SIZE, SIZE, ours);
            flip_rows(gs.buf, up, SIZE);
            write_png("lit-llvmpipe.png", SIZE, SIZE, up);
            write_png("lit-diff.png", SIZE, SIZE, diff);
        }
    }
    gl_close(&gs);
    free(ours);
    free(diff);
    free(up);
    sc_geometry_free(&g);
    sc_free(s);
}

/* One llvmpipe frame of the speed scene (bench_peer_serve's frame). */
typedef struct lp_speed {
    gl_scene gs;
    const sc_scene *s;
    const sc_geometry *g;
    sh_raster_env e;
} lp_speed;

static bool lp_speed_frame(void *arg)
{
    const lp_speed *l = arg;
    gl_frame(&l->gs, l->s, l->g, l->e.background);
    return true;
}

/* --speed-child: llvmpipe (LP_NUM_THREADS from the parent) serving frames of the speed
 * scene to the parent, one per line it reads (paired_frames.h). */
static int speed_child(void)
{
    sc_scene *s;
    sc_geometry g;
    char err[SC_ERR_MAX];
    if (textured_bunny(&s, &g, err)) { fprintf(stderr, "# speed child: %s\n", err); return 1; }
    lp_speed l = {.s = s, .g = &g};
    int rc = 1;
    if (gl_open(&l.gs, s, &g, SPEED_SIZE, fs_lit, 1)) {
        gl_lit_uniforms(&l.gs, s, &g, SPEED_SIZE, false, &l.e);
        rc = bench_peer_serve(lp_speed_frame, &l);
        gl_close(&l.gs);
    }
    sc_geometry_free(&g);
    sc_free(s);
    return rc;
}

/* Ours against llvmpipe at one thread count, their frames in turn (paired_frames.h). */
static bool speed_at(const char *self, bench_raster_frames *o, int threads)
{
    char *argv[] = {(char *)self, "--speed-child", NULL};
    bench_peer peer;
    bench_pairs m;
    o->c.workers = (unsigned)threads;
    const bool ok = bench_peer_start(&peer, argv, "LP_NUM_THREADS", threads) &&
                    bench_pairs_run(&peer, bench_raster_frame, o, SPEED_WARM, SPEED_PAIRS, &m);
    bench_peer_stop(&peer);
    if (!ok) {
        printf("# speed at %d threads: a frame failed (ours or llvmpipe's)\n", threads);
        return false;
    }
    printf("llvmpipe_frame_ms_bunny_textured_%dt %.1f ms\n", threads, m.peer_ms);
    printf("raster_frame_ms_bunny_textured_%dt %.1f ms\n", threads, m.ours_ms);
    printf("raster_vs_llvmpipe_bunny_textured_%dt %.3f ratio\n", threads, m.ratio);
    printf("raster_vs_llvmpipe_min_bunny_textured_%dt %.3f ratio\n", threads, m.ratio_min);
    printf("llvmpipe_frame_cpu_ms_bunny_textured_%dt %.1f ms\n", threads, m.peer_cpu_ms);
    printf("raster_frame_cpu_ms_bunny_textured_%dt %.1f ms\n", threads, m.ours_cpu_ms);
    printf("raster_vs_llvmpipe_cpu_bunny_textured_%dt %.3f ratio\n", threads, m.ours_cpu_ms / m.peer_cpu_ms);
    return true;
}

/* --speed: the textured bunny, ours against llvmpipe at 1 and 2 threads. */
static int speed(const char *self, const char *keep)
{
    sc_scene *s;
    sc_geometry g;
    char err[SC_ERR_MAX];
    keep_speed_scene = keep != NULL;
    if (textured_bunny(&s, &g, err)) { printf("# speed: %s\n", err); return 1; }
    keep_speed_scene = false;
    bench_raster_frames o = {pl_kept_builtin_new(), s, &g, {0}, malloc(SPEED_SIZE * SPEED_SIZE * 4)};
    plr_config_default(&o.c);
    o.c.width = o.c.height = SPEED_SIZE;
    int failed = !o.kept || !o.img;
    for (int threads = 1; threads <= 2 && !failed; threads++) failed |= !speed_at(self, &o, threads);
    pl_kept_builtin_free(o.kept);
    free(o.img);
    sc_geometry_free(&g);
    sc_free(s);
    return failed;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: bench_albedo_llvmpipe [--opaque] [--msaa N] [--keep DIR] [--speed]\n"
                 "  --opaque    check only the opaque scenes (floor, object); report the others\n"
                 "  --msaa N    both at N samples per pixel (4 or 8; llvmpipe: a multisample FBO)\n"
                 "  --keep DIR  write the scenes, both images and a difference image (x16) to DIR\n"
                 "              (with --speed also bunny_textured.scene, for gramps-render)\n"
                 "  --speed     also time a textured, lit bunny against llvmpipe at 1 and 2 threads\n"
                 "Exit status 1 when a checked scene agrees on fewer than 99%% of its pixels\n"
                 "within 4/255.\n");
}

int main(int argc, char **argv)
{
    pl_keep_freed_memory();
    if (argc == 2 && !strcmp(argv[1], "--speed-child")) return speed_child();
    bool opaque = false, with_speed = false;
    const char *keep = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--opaque")) opaque = true;
        else if (!strcmp(argv[i], "--speed")) with_speed = true;
        else if (!strcmp(argv[i], "--keep") && i + 1 < argc) keep = argv[++i];
        else if (!strcmp(argv[i], "--msaa") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "1") || !strcmp(argv[i + 1], "4") || !strcmp(argv[i + 1], "8")))
            msaa = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
        else { usage(stderr); return 2; }
    }
    if (keep) {
        mkdir(keep, 0777);
        snprintf(dir, sizeof dir, "%s", keep);
    } else {
        snprintf(dir, sizeof dir, "/tmp/bench_albedo_XXXXXX");
        if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    }
    if (write_textures() || write_mtl()) { fprintf(stderr, "bench_albedo_llvmpipe: cannot write %s\n", dir); return 2; }
    int failed = 0;
    for (int k = 0; k < NSCENES; k++) failed |= check_scene(k, !opaque || k <= SCENE_OBJECT, keep);
    lit_check(keep);
    if (with_speed) failed |= speed(argv[0], keep);
    if (!keep) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "bench_albedo_llvmpipe: could not remove %s\n", dir);
    }
    return failed;
}

#else

#include <stdio.h>

int main(void)
{
    printf("# bench_albedo_llvmpipe: OSMesa headers not installed (make osmesa)\n");
    return 0;
}

#endif

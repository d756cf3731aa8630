/* isolated_import.c — runs a mesh importer we cannot trust with malformed files (assimp:
 * it loops forever on a truncated PLY header, aborts on truncated data, allocates what a
 * header declares) in a forked child with an address-space limit and a deadline. The
 * child loads into a scratch scene and writes the mesh and its materials back through a
 * pipe; the parent rebuilds them in its own scene. A hang, abort, crash or exhausted
 * memory in the child becomes an error naming the file; the parent never runs the
 * importer's code.
 *
 * Wire format (host byte order, same binary both ends): wire_header, then ntex textures
 * (wire_texture and its width x height RGBA8 texels: level 0, decoded in the child, so
 * that image decoders never run on untrusted files in the parent), nmat sc_material
 * (texture references are indices into the textures sent), the warnings' text (nwarn
 * bytes), then positions (3 nv floats), normals (3 nv), texcoords (2 nv, when has_uv), set 1
 * (2 nv, when has_uv1),
 * indices (3 nt uint32) and per-triangle materials (nt uint32, indices into the
 * materials sent). The parent checks every size, index and enum it receives before use
 * (a texture's size against the same limits the child applied). */
#include "scenes/build.h"
#include "scenes/loaders.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Sanitizer runtimes reserve terabytes of shadow address space at start-up, so an
 * RLIMIT_AS in their child would fail every allocation: their builds keep only the
 * deadline. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LIMIT_ADDRESS_SPACE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define LIMIT_ADDRESS_SPACE 0
#endif
#endif
#ifndef LIMIT_ADDRESS_SPACE
#define LIMIT_ADDRESS_SPACE 1
#endif

typedef struct wire_header {
    int32_t status;               /* 0: a mesh follows; -1: err holds the importer's error */
    uint32_t nmat, has_uv, ntex, nwarn, has_uv1;
    uint64_t nv, nt, unreadable_textures;
    char err[SC_ERR_MAX];
} wire_header;

typedef struct wire_texture {
    char name[SC_NAME_MAX];
    uint32_t width, height;
} wire_texture;

static bool write_all(int fd, const void *p, size_t n)
{
    for (const char *c = p; n > 0;) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k;
        n -= (size_t)k;
    }
    return true;
}

static bool send_mesh(int fd, const sc_scene *s, const sc_mesh *m)
{
    size_t nwarn = s->warnings ? strlen(s->warnings) : 0;
    wire_header h = {.nmat = (uint32_t)s->nmaterials, .has_uv = m->texcoords != NULL,
                     .has_uv1 = m->texcoords1 != NULL,
                     .ntex = (uint32_t)s->ntextures, .nwarn = (uint32_t)nwarn,
                     .nv = m->nvertices, .nt = m->ntriangles,
                     .unreadable_textures = s->unreadable_textures};
    bool ok = write_all(fd, &h, sizeof h);
    for (size_t i = 0; ok && i < s->ntextures; i++) {
        const sc_mip_level *l = &s->textures[i].levels[0];
        wire_texture w = {.width = (uint32_t)l->width, .height = (uint32_t)l->height};
        memcpy(w.name, s->textures[i].name, sizeof w.name);
        ok = write_all(fd, &w, sizeof w) && write_all(fd, l->rgba, (size_t)l->width * l->height * 4);
    }
    for (size_t i = 0; ok && i < s->nmaterials; i++) ok = write_all(fd, &s->materials[i], sizeof(sc_material));
    return ok && write_all(fd, s->warnings ? s->warnings : "", nwarn) &&
           write_all(fd, m->positions, 3 * m->nvertices * sizeof(float)) &&
           write_all(fd, m->normals, 3 * m->nvertices * sizeof(float)) &&
           (!m->texcoords || write_all(fd, m->texcoords, 2 * m->nvertices * sizeof(float))) &&
           (!m->texcoords1 || write_all(fd, m->texcoords1, 2 * m->nvertices * sizeof(float))) &&
           write_all(fd, m->indices, 3 * m->ntriangles * sizeof(uint32_t)) &&
           write_all(fd, m->materials, m->ntriangles * sizeof(uint32_t));
}

/* Set by sanitizer runtimes (libFuzzer registers a callback that saves the input as a
 * crash); weak, so it is NULL in other builds. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/* A crash in the child is a plain death the parent reports: the handlers it inherited
 * (a fuzzer's, a sanitizer's) must not treat it as the parent's own crash. */
static void plain_deaths(void)
{
    static const int deadly[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGTRAP};
    for (size_t i = 0; i < sizeof deadly / sizeof deadly[0]; i++) signal(deadly[i], SIG_DFL);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(NULL);
}

/* The child: limits, import, reply, _exit (no atexit handlers of the parent's). */
static void child_main(int fd, const char *path, const sc_load_opts *o, sc_mesh_loader load)
{
    plain_deaths();
    int null = open("/dev/null", O_WRONLY);      /* assimp's assertion chatter: we report */
    if (null >= 0) dup2(null, STDERR_FILENO);
    if (LIMIT_ADDRESS_SPACE) {
        struct rlimit r = {o->max_memory, o->max_memory};
        setrlimit(RLIMIT_AS, &r);
    }
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);            /* a crash is reported, not dumped */
    wire_header h = {.status = -1};
    sc_scene *s = sc_scene_new("import");
    int m = s ? load(s, path, o, h.err) : -1;
    if (!s) snprintf(h.err, sizeof h.err, "%s: out of memory", path);
    bool ok = m >= 0 ? send_mesh(fd, s, &s->meshes[m]) : write_all(fd, &h, sizeof h);
    _exit(ok ? 0 : 1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Reads n bytes before the deadline; false on EOF, error or timeout (*late set). */
static bool read_all(int fd, void *p, size_t n, double deadline, bool *late)
{
    for (char *c = p; n > 0;) {
        double left = deadline - now_s();
        if (left <= 0) { *late = true; return false; }
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { *late = r == 0; return false; }
        ssize_t k = read(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k;
        n -= (size_t)k;
    }
    return true;
}

/* The child's textures join s (their mip chains built here); -1 when one is beyond
 * the limits (err set) or the reply is cut short, else the index of the first. */
static int receive_textures(sc_scene *s, int fd, uint32_t n, const char *path,
                            const sc_load_opts *o, double deadline, bool *late, char err[SC_ERR_MAX])
{
    int first = (int)s->ntextures;
    if (n > SC_MAX_IMPORT_TEXTURES) {
        snprintf(err, SC_ERR_MAX, "%s: the importer sent %u textures, more than "
                 LIMIT_NAMED(SC_MAX_IMPORT_TEXTURES), path, n);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        wire_texture w;
        if (!read_all(fd, &w, sizeof w, deadline, late)) return -1;
        w.name[SC_NAME_MAX - 1] = 0;
        const char *why = sc_texture_size_problem(w.width, w.height, o);
        if (why) {
            snprintf(err, SC_ERR_MAX, "%s: the importer sent texture %u: %s", path, i + 1, why);
            return -1;
        }
        size_t bytes = (size_t)w.width * w.height * 4;
        unsigned char *px = malloc(bytes);
        if (!px) { snprintf(err, SC_ERR_MAX, "%s: out of memory", path); return -1; }
        if (!read_all(fd, px, bytes, deadline, late)) { free(px); return -1; }
        if (sc_add_texture(s, w.name, (int)w.width, (int)w.height, px, err) < 0) return -1;
    }
    return first;
}

/* A reference the child sent: an index among its ntex textures (or -1), known enums. */
static bool ref_ok(sc_texture_ref *r, uint32_t ntex, int first_tex)
{
    if (r->texture < -1 || (r->texture >= 0 && (uint32_t)r->texture >= ntex)) return false;
    if (r->texture >= 0) r->texture += first_tex;
    return r->uv_set >= 0 && r->uv_set < 8 && (unsigned)r->sampler.wrap_u <= SC_WRAP_MIRROR &&
           (unsigned)r->sampler.wrap_v <= SC_WRAP_MIRROR &&
           (unsigned)r->sampler.filter <= SC_FILTER_LINEAR_NO_MIPS;
}

/* The child's materials join s (sc_validate checks their factors later); returns the
 * index of the first, or -1. */
static int receive_materials(sc_scene *s, int fd, uint32_t n, uint32_t ntex, int first_tex,
                             const char *path, double deadline, bool *late, char err[SC_ERR_MAX])
{
    int first = (int)s->nmaterials;
    for (uint32_t i = 0; i < n; i++) {
        sc_material w;
        if (!read_all(fd, &w, sizeof w, deadline, late)) return -1;
        w.name[SC_NAME_MAX - 1] = 0;
        unsigned char two;                    /* a bool's byte as sent: 0 or 1 */
        memcpy(&two, &w.double_sided, 1);
        if (two > 1 || (unsigned)w.alpha_mode > SC_ALPHA_BLEND ||
            (unsigned)w.model > SC_SHADING_METALLIC_ROUGHNESS ||
            !ref_ok(&w.albedo_map, ntex, first_tex) || !ref_ok(&w.metallic_roughness_map, ntex, first_tex) ||
            !ref_ok(&w.emissive_map, ntex, first_tex) || !ref_ok(&w.normal_map, ntex, first_tex) ||
            !ref_ok(&w.occlusion_map, ntex, first_tex)) {
            snprintf(err, SC_ERR_MAX, "%s: the importer sent material %u with a texture index or "
                     "mode out of range", path, i + 1);
            return -1;
        }
        int k = sc_scene_add_material(s, w.name, 0, 0, 0, 0, 0, 0);
        if (k < 0) { snprintf(err, SC_ERR_MAX, "%s: out of memory", path); return -1; }
        s->materials[k] = w;
    }
    return first;
}

/* The child's warnings, line by line, into s's. */
static bool receive_warnings(sc_scene *s, int fd, uint32_t n, double deadline, bool *late)
{
    if (n == 0) return true;
    char *text = malloc((size_t)n + 1);
    if (!text || !read_all(fd, text, n, deadline, late)) { free(text); return false; }
    text[n] = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        sc_scene_warn(s, "%s", line);
    free(text);
    return true;
}

static bool receive_arrays(sc_mesh_builder *b, const wire_header *h, int fd, double deadline,
                           bool *late)
{
    size_t nv = (size_t)h->nv, nt = (size_t)h->nt;
    b->pos = malloc(3 * nv * sizeof(float) + 1);
    b->nrm = malloc(3 * nv * sizeof(float) + 1);
    b->uv = h->has_uv ? malloc(2 * nv * sizeof(float) + 1) : NULL;
    b->uv1 = h->has_uv1 ? malloc(2 * nv * sizeof(float) + 1) : NULL;
    b->idx = malloc(3 * nt * sizeof(uint32_t) + 1);
    b->mat = malloc(nt * sizeof(uint32_t) + 1);
    b->nv = b->vcap = nv;
    b->nt = b->tcap = nt;
    if (!b->pos || !b->nrm || (h->has_uv && !b->uv) || (h->has_uv1 && !b->uv1) || !b->idx || !b->mat)
        return false;
    return read_all(fd, b->pos, 3 * nv * sizeof(float), deadline, late) &&
           read_all(fd, b->nrm, 3 * nv * sizeof(float), deadline, late) &&
           (!b->uv || read_all(fd, b->uv, 2 * nv * sizeof(float), deadline, late)) &&
           (!b->uv1 || read_all(fd, b->uv1, 2 * nv * sizeof(float), deadline, late)) &&
           read_all(fd, b->idx, 3 * nt * sizeof(uint32_t), deadline, late) &&
           read_all(fd, b->mat, nt * sizeof(uint32_t), deadline, late);
}

/* Parent side: the reply into s. Returns the mesh index, -1 with err set, or -2 when the
 * reply was cut short (the child's fate then explains why). */
static int receive(sc_scene *s, int fd, const char *path, const sc_load_opts *o,
                   double deadline, bool *late, char err[SC_ERR_MAX])
{
    wire_header h;
    if (!read_all(fd, &h, sizeof h, deadline, late)) return -2;
    if (h.status != 0) {
        h.err[SC_ERR_MAX - 1] = 0;
        snprintf(err, SC_ERR_MAX, "%s", h.err);
        return -1;
    }
    if (h.nv > UINT32_MAX || h.nt > o->max_memory / 16 || h.nv > o->max_memory / 32) {
        snprintf(err, SC_ERR_MAX, "%s: the mesh is larger than the memory limit", path);
        return -1;
    }
    if (h.nmat > SC_MAX_IMPORT_MATERIALS || h.nwarn > SC_WARNINGS_MAX ||
        h.unreadable_textures > (uint64_t)SC_MAX_IMPORT_MATERIALS * 5) {
        snprintf(err, SC_ERR_MAX, "%s: the importer's reply is beyond the limits (%u materials, "
                 "%u bytes of warnings)", path, h.nmat, h.nwarn);
        return -1;
    }
    err[0] = 0;
    int first_tex = receive_textures(s, fd, h.ntex, path, o, deadline, late, err);
    int first = first_tex < 0 ? -1 : receive_materials(s, fd, h.nmat, h.ntex, first_tex, path,
                                                        deadline, late, err);
    if (first < 0) return err[0] ? -1 : -2;
    if (!receive_warnings(s, fd, h.nwarn, deadline, late)) return -2;
    s->unreadable_textures += (size_t)h.unreadable_textures;
    sc_mesh_builder b = {0};
    bool ok = receive_arrays(&b, &h, fd, deadline, late);
    for (size_t t = 0; ok && t < b.nt; t++) {
        ok = b.idx[3 * t] < b.nv && b.idx[3 * t + 1] < b.nv && b.idx[3 * t + 2] < b.nv &&
             b.mat[t] < h.nmat;
        b.mat[t] += (uint32_t)first;
    }
    const char *base = strrchr(path, '/');
    int m = ok ? sc_scene_add_mesh(s, base ? base + 1 : path, &b) : -2;
    sc_mb_free(&b);
    if (m == -1) snprintf(err, SC_ERR_MAX, "%s: out of memory", path);
    return m;
}

/* Why the child ended without a complete reply. */
static void child_fate(int status, bool late, const char *path, const sc_load_opts *o,
                       char err[SC_ERR_MAX])
{
    if (late)
        snprintf(err, SC_ERR_MAX, "%s: the mesh importer did not finish within %.0f s "
                 "(malformed file?)", path, o->import_seconds);
    else if (WIFSIGNALED(status))
        snprintf(err, SC_ERR_MAX, "%s: the mesh importer crashed (signal %d: %s) or ran out of "
                 "its %zu MiB memory limit: malformed file?", path, WTERMSIG(status),
                 strsignal(WTERMSIG(status)), o->max_memory >> 20);
    else
        snprintf(err, SC_ERR_MAX, "%s: the mesh importer failed (exit %d; out of its %zu MiB "
                 "memory limit?)", path, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                 o->max_memory >> 20);
}

int sc_import_isolated(sc_scene *s, const char *path, const sc_load_opts *o,
                       sc_mesh_loader load, char err[SC_ERR_MAX])
{
    int fds[2];
    if (pipe(fds) != 0) { snprintf(err, SC_ERR_MAX, "%s: pipe: %s", path, strerror(errno)); return -1; }
    fflush(NULL);                 /* the child must not flush the parent's buffers again */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]); close(fds[1]);
        snprintf(err, SC_ERR_MAX, "%s: fork: %s", path, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(fds[1], path, o, load);
    }
    close(fds[1]);
    bool late = false;
    int m = receive(s, fds[0], path, o, now_s() + o->import_seconds, &late, err);
    close(fds[0]);
    if (m < 0) kill(pid, SIGKILL);            /* done with it whatever it is doing */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (m == -2) child_fate(status, late, path, o, err);
    return m < 0 ? -1 : m;
}

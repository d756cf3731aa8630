/* fuzz_plugin.h — a hostile plugin stage, driven by fuzz input, between two built-in
 * stages; shared by the libFuzzer target (fuzz_plugin.c) and the replay test
 * (tests/render/test_fuzz_corpus.c).
 *
 * Input: byte 0 picks one of the rendering graphs, byte 1 one of its edges (a built-in
 * stage's bound input port); the rest drives the mutations. A registered in-place Shader
 * type, `fuzz.mutate`, of that edge's format is inserted before the port (`before =
 * STAGE.PORT`, as a user's plugin would be), and each of its tasks takes three bytes
 * of the input and corrupts its packet with them: a byte flipped anywhere, the element
 * count (the first 32-bit word) set, or a 32-bit word set to a hostile value (-1,
 * INT_MIN, NaN, infinity). The graph runs on one worker for a 16x16 teapot, as the graph
 * fuzzer's does. What the built-in stages downstream read from such packets must be
 * checked: the run renders or fails with a message; a crash, a sanitizer report or a
 * hang is a bug. */
#ifndef TESTS_FUZZ_PLUGIN_H
#define TESTS_FUZZ_PLUGIN_H

#include "tests/fuzz/fuzz_graph.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)                 /* gcc */
#define FUZZ_PLUGIN_ASAN 1
#elif defined(__has_feature)                       /* clang */
#if __has_feature(address_sanitizer)
#define FUZZ_PLUGIN_ASAN 1
#endif
#endif
#ifdef FUZZ_PLUGIN_ASAN
/* A run that fails abandons its Thread stages where they stand (gr_fail does not
 * return), and what their own code had allocated is not freed: the runtime cannot unwind
 * a stage's code. These inputs fail runs on purpose, so LeakSanitizer is told not to
 * count the buffers of the built-in Thread stages they stop (in the fuzz target and in
 * test_fuzz_corpus, the programs that include this header). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:plr_reorder_main\nleak:plr_stager_init\nleak:rast_local_init\n"
           "leak:plr_depth_tile_init\nleak:slot_take\nleak:tile_init\nleak:tile_open\n"
           "leak:batch_reserve\n";
}
#endif

static const char *const fuzz_plugin_graphs[] = {"raster",   "raster-ordered", "raster-parallel",
                                                 "raytrace", "hybrid",         "hybrid-visibility"};
enum { FUZZ_PLUGIN_GRAPHS = sizeof fuzz_plugin_graphs / sizeof *fuzz_plugin_graphs };

/* The mutation bytes left; one cursor, since the graph runs on one worker. */
typedef struct fuzz_mutations {
    const uint8_t *data;
    size_t size, pos;
} fuzz_mutations;

static fuzz_mutations fuzz_plugin_input;

static inline void *fuzz_mutate_create(const cp_stage_init *init, char err[CP_ERR_MAX])
{
    (void)init, (void)err;
    return &fuzz_plugin_input;
}

static inline void fuzz_put_word(uint8_t *p, size_t bytes, size_t at, uint32_t v)
{
    if (bytes >= 4) memcpy(p + (at % (bytes / 4)) * 4, &v, 4);
}

static inline void fuzz_mutate_main(gr_ctx *c)
{
    static const uint32_t hostile[] = {0xffffffffu, 0x80000000u, 0x7fc00000u, 0x7f800000u,
                                       0xff800000u, 0x7fffffffu, 0x00010000u, 0x4e6e6b28u};
    fuzz_mutations *m = gr_user(c);
    size_t bytes = 0;
    uint8_t *p = gr_input(c, &bytes);
    if (!p || !bytes || m->pos + 3 > m->size) return;
    const uint8_t *b = m->data + m->pos;
    m->pos += 3;
    size_t at = (size_t)b[1] | (size_t)b[2] << 8;
    switch (b[0] & 3) {
    case 0: break;                                             /* this packet passes */
    case 1: p[at % bytes] ^= (uint8_t)(b[0] | 1); break;
    case 2: fuzz_put_word(p, bytes, 0, (uint32_t)at << (b[0] >> 4)); break;
    default: fuzz_put_word(p, bytes, at, hostile[(b[0] >> 2) & 7]); break;
    }
}

/* One line of a graph file, its comment cut: a section's name in `section` ("stage ps"),
 * or a setting's key and value; both empty for a blank line. Returns the next line. */
static inline const char *fuzz_graph_line(const char *t, char section[64], char key[64], char value[64])
{
    const char *end = strchr(t, '\n');
    size_t len = end ? (size_t)(end - t) : strlen(t);
    char line[256] = "";
    memcpy(line, t, len < sizeof line - 1 ? len : sizeof line - 1);
    line[strcspn(line, ";#")] = 0;
    section[0] = key[0] = value[0] = 0;
    if (sscanf(line, " [%63[^]]", section) != 1) sscanf(line, " %63[^= \t] = %63s", key, value);
    return end ? end + 1 : t + len;
}

/* The edge-th bound input port among the stages of built-in graph `name` (an INPUT port
 * of the stage's type that its section binds): 0 with "STAGE.PORT" in `where` and the
 * port's format; -1 when there are fewer edges. */
static inline int fuzz_plugin_edge(const cp_registry *r, const char *name, unsigned edge, char where[160],
                            const char **format)
{
    const char *t = pl_builtin_graph(name);
    char stage[64] = "", type[64] = "", bound[16][64];
    int nbound = 0;
    unsigned seen = 0;
    for (;;) {
        char section[64], key[64], value[64];
        const char *next = *t ? fuzz_graph_line(t, section, key, value) : t;
        bool ends = !*t || section[0];
        const cp_stage_type *st = ends && stage[0] ? cp_find_stage(r, type) : NULL;
        for (int p = 0; st && p < st->nports; p++)
            for (int k = 0; k < nbound && st->ports[p].mode == GR_BIND_INPUT; k++)
                if (!strcmp(bound[k], st->ports[p].name) && seen++ == edge) {
                    snprintf(where, 160, "%s.%s", stage, st->ports[p].name);
                    *format = st->ports[p].format;
                    return 0;
                }
        if (!*t) return -1;
        if (ends) {
            stage[0] = type[0] = 0;
            nbound = 0;
            if (!strncmp(section, "stage ", 6)) snprintf(stage, sizeof stage, "%s", section + 6);
        } else if (!strcmp(key, "type")) {
            snprintf(type, sizeof type, "%s", value);
        } else if (key[0] && nbound < 16) {
            snprintf(bound[nbound++], 64, "%s", key);
        }
        t = next;
    }
}

/* The number of edges fuzz_plugin_edge can pick in graph `name`. */
static inline unsigned fuzz_plugin_edges(const cp_registry *r, const char *name)
{
    char where[160];
    const char *format;
    unsigned n = 0;
    while (!fuzz_plugin_edge(r, name, n, where, &format)) n++;
    return n;
}

/* The inserted layer (ctx) is "fuzz-plugin.graph"; every other name is a built-in's. */
static inline const char *fuzz_plugin_graph_named(void *ctx, const char *name)
{
    return strcmp(name, "fuzz-plugin.graph") ? pl_builtin_graph(name) : ctx;
}

/* 0 when the graph ran; -1 with err set when it was refused or failed. */
static inline int fuzz_plugin_run(const uint8_t *data, size_t size, char err[CP_ERR_MAX])
{
    if (size < 2) return 0;
    const char *name = fuzz_plugin_graphs[data[0] % FUZZ_PLUGIN_GRAPHS];
    cp_registry *r = pl_registry_new(err);
    unsigned edges = r ? fuzz_plugin_edges(r, name) : 0;
    char where[160], text[512];
    const char *format = NULL;
    if (!r || !edges || fuzz_plugin_edge(r, name, data[1] % edges, where, &format)) {
        if (r && !err[0]) snprintf(err, CP_ERR_MAX, "graph '%s' has no edge to fuzz", name);
        cp_registry_free(r);
        return -1;
    }
    const cp_port ports[] = {{"in", GR_BIND_INPUT, format, NULL}, {"out", GR_BIND_INPLACE, format, NULL}};
    const cp_stage_type mutate = {.name = "fuzz.mutate", .help = "corrupts packets", .kind = GR_SHADER,
                                  .ports = ports, .nports = 2, .main = fuzz_mutate_main,
                                  .create = fuzz_mutate_create};
    fuzz_plugin_input = (fuzz_mutations){data + 2, size - 2, 0};
    snprintf(text, sizeof text, "[graph]\nbase = %s\n\n[stage mutate]\ntype = fuzz.mutate\nbefore = %s\n",
             name, where);
    cp_named_graphs named = {fuzz_plugin_graph_named, text};
    int rc = cp_register_stage(r, &mutate, err) ? -1 : fuzz_render_teapot(r, &named, "fuzz-plugin.graph", err);
    cp_registry_free(r);
    return rc;
}

#endif

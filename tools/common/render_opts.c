/* render_opts.c — the options renderer programs share (see render_opts.h). */
#include "tools/common/render_opts.h"

#include "gramps/gramps.h"
#include "pipelines/stages.h"
#include "rasterizer/samples.h"
#include "scenes/camera.h"
#include "scenes/validate.h"
#include "tools/common/cli_args.h"
#include "tools/common/memory_estimate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ro_bad_flag(const ro_options *o, const char *flag, const char *value, const char *why)
{
    return io_bad_flag(o->prog, flag, value, why);
}

int ro_init(ro_options *o, const char *prog, int argc)
{
    *o = (ro_options){.prog = prog, .scene = "teapot", .pipeline = "raster", .width = 1024,
                      .height = 1024, .frames = 1};
    o->graph = (rg_options){.sets = calloc((size_t)argc, sizeof(char *)),
                            .plugins = calloc((size_t)argc, sizeof(char *)),
                            .graphs = calloc((size_t)argc, sizeof(char *)),
                            .edits = calloc((size_t)argc, sizeof(char *))};
    if (!o->graph.sets || !o->graph.plugins || !o->graph.graphs || !o->graph.edits) return ro_bad_flag(o, "memory", "", "out of memory");
    return 0;
}

void ro_free(ro_options *o)
{
    free(o->graph.sets);
    free(o->graph.plugins);
    free(o->graph.graphs);
    free(o->graph.edits);
    o->graph.sets = o->graph.plugins = o->graph.graphs = o->graph.edits = NULL;
}

void ro_usage(FILE *out)
{
    fprintf(out,
        "  -p, --pipeline NAME   raster (default), raytrace or hybrid: a built-in graph\n"
        "                        (also raster-ordered, raster-parallel: the thesis' graph;\n"
        "                        hybrid-visibility: the ray tracer after a depth pass;\n"
        "                        raster-tonemap, raster-fxaa, raytrace-tonemap: with\n"
        "                        image-space stages, --set graph.exposure=X)\n"
        "      --graph FILE      run a graph file (pipelines/graphs/, examples/graphs/); given\n"
        "                        again, or with -p, each file is layered over the graph\n"
        "                        before it (docs/graph-files.md)\n"
        "      --edit 'LINE'     edit the graph: 'TYPE [after|before STAGE[.PORT]] [K=V]...'\n"
        "                        adds a stage (e.g. 'fog after ps'), 'remove NAME' removes one\n"
        "      --set S.K=V       set graph setting K of section S (graph, a stage or a queue)\n"
        "      --plugin FILE.so  load plugin stages (a bare name: GRAMPS_PLUGIN_PATH, then\n"
        "                        plugins/ beside bin/)\n"
        "      --size WxH        image size (default 1024x1024)\n"
        "  -t, --threads N       worker threads (default: GRAMPS_NUM_THREADS, else all hardware\n"
        "                        threads)\n"
        "      --camera ex,ey,ez,tx,ty,tz,ux,uy,uz,fovy   override the scene's camera\n"
        "      --light x,y,z     replace the scene's lights with one white point light\n"
        "      --aov KIND        color | primid | depth | normal | albedo (default color;\n"
        "                        albedo: unlit base colour, 8-bit linear, black background)\n"
        "      --spp N           samples per pixel, jittered from a fixed seed (raytrace)\n"
        "      --bounces N       reflection depth (raytrace, default 1)\n"
        "      --msaa N          raster graphs and hybrid: 1 (default), 4 or 8 samples per\n"
        "                        pixel at Direct3D's standard positions, shaded once per pixel\n"
        "      --parallel-rast   raster: Setup/Bin singleton + a Rast instance per tile\n"
        "      --no-coarse-z     raster: no per-block depth culling before rasterizing\n"
        "      --scheduler NAME  gramps (default), task-stealing, breadth-first, static, qes\n"
        "                        or pss\n"
        "                        (static: profiles one frame under gramps first)\n"
        "  -v, --verbose         gramps-render: the per-queue footprint table; static: the\n"
        "                        partition of stages over workers\n"
        "      --max-memory SIZE memory the render and mesh import may use, e.g. 4G\n"
        "                        (default: half the physical memory)\n"
        "  -q, --quiet           no summary\n"
        "      --strict          a flag that does not apply to the graph (--spp with\n"
        "                        raster...) is an error, not a warning\n");
}

int ro_check_flags_apply(const ro_options *o, const rg_setup *s)
{
    const char *graph = cp_graph_value(s->graph, "name");
    if (!graph) graph = s->name;
    for (int i = 0; i < s->nunused; i++) {
        bool rast = !strcmp(s->unused[i], "--parallel-rast");
        fprintf(stderr, "%s: %s: %s does not apply to graph '%s' (%s)%s\n", o->prog,
                o->strict ? "error" : "warning", s->unused[i], graph,
                rast ? "it applies to -p raster only" : "the graph has no [graph] setting for it",
                o->strict ? "" : "; ignored (--strict makes this an error)");
    }
    return o->strict && s->nunused ? 2 : 0;
}

static bool parse_floats(const char *s, int n, float *out)
{
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        float v = strtof(s, &end);
        if (errno || end == s || !isfinite(v)) return false;
        out[i] = v;
        if (i + 1 < n) {
            if (*end != ',') return false;
            s = end + 1;
        } else if (*end) {
            return false;
        }
    }
    return true;
}

static bool parse_aov(const char *s, sh_aov *out)
{
    static const char *names[] = SH_AOV_NAMES;
    for (int i = 0; i < SH_AOV_COUNT; i++)
        if (!strcmp(s, names[i])) { *out = (sh_aov)i; return true; }
    return false;
}

int ro_parse_camera(ro_options *o, const char *arg, const char *flag)
{
    if (!parse_floats(arg, 10, o->camera))
        return ro_bad_flag(o, flag, arg, "expected 10 numbers ex,ey,ez,tx,ty,tz,ux,uy,uz,fovy");
    sc_camera c;
    memcpy(c.eye, o->camera, sizeof c.eye);
    memcpy(c.target, o->camera + 3, sizeof c.target);
    memcpy(c.up, o->camera + 6, sizeof c.up);
    c.fovy_deg = o->camera[9];
    const char *why = sc_camera_problem(&c);
    if (why) return ro_bad_flag(o, flag, arg, why);
    o->have_camera = true;
    return 0;
}

/* Flags that choose or change the graph (tools/common/render_graph.h). */
static int parse_graph_flag(ro_options *o, int c, const char *arg, const char *flag)
{
    rg_options *g = &o->graph;
    switch (c) {
    case 'p':
        if (!pl_builtin_graph(arg))
            return ro_bad_flag(o, flag, arg, "unknown pipeline (raster, raster-ordered, "
                               "raster-parallel, raytrace, hybrid, hybrid-visibility, raster-tonemap, raster-fxaa, "
                               "raytrace-tonemap)");
        if (g->pipeline)
            return ro_bad_flag(o, flag, arg, "a second -p: one built-in graph is the bottom "
                               "layer; layer files over it with --graph");
        o->pipeline = g->pipeline = arg;
        return 0;
    case RO_OPT_GRAPH: g->graphs[g->ngraphs++] = arg; return 0;
    case RO_OPT_EDIT: g->edits[g->nedits++] = arg; return 0;
    case RO_OPT_SET:
        if (!strchr(arg, '=') || !strchr(arg, '.'))
            return ro_bad_flag(o, flag, arg, "expected SECTION.KEY=VALUE");
        g->sets[g->nsets++] = arg;
        return 0;
    case RO_OPT_PLUGIN: g->plugins[g->nplugins++] = arg; return 0;
    case RO_OPT_SPP:
        if (!io_parse_int(arg, 1, PL_MAX_SPP, &g->spp))
            return ro_bad_flag(o, flag, arg, "expected " LIMIT_RANGE(1, PL_MAX_SPP));
        return 0;
    case RO_OPT_BOUNCES:
        if (!io_parse_int(arg, 0, PL_MAX_BOUNCES, &g->bounces))
            return ro_bad_flag(o, flag, arg, "expected " LIMIT_RANGE(0, PL_MAX_BOUNCES));
        g->have_bounces = true;
        return 0;
    case RO_OPT_MSAA:
        if (!io_parse_int(arg, 1, 8, &g->msaa) || !rs_sample_pattern(g->msaa))
            return ro_bad_flag(o, flag, arg, "expected 1, 4 or 8 samples per pixel");
        return 0;
    case RO_OPT_PARALLEL_RAST: g->parallel_rast = true; return 0;
    case RO_OPT_NO_COARSE_Z: g->no_coarse_z = true; return 0;
    }
    return RO_NOT_MINE;
}

/* Flags for the runtime rather than the renderer: workers, scheduler. */
static int parse_runtime_flag(ro_options *o, int c, const char *arg, const char *flag)
{
    int n;
    switch (c) {
    case 't':
        if (!io_parse_int(arg, 1, GR_MAX_WORKERS, &n))
            return ro_bad_flag(o, flag, arg, "expected " LIMIT_RANGE(1, GR_MAX_WORKERS));
        o->threads = (unsigned)n;
        return 0;
    case RO_OPT_SCHEDULER:
        if (!gr_scheduler_known(arg)) {
            char why[160];
            snprintf(why, sizeof why, "unknown scheduler (%s)", gr_scheduler_names());
            return ro_bad_flag(o, flag, arg, why);
        }
        o->scheduler = arg;
        return 0;
    case 'v': o->verbose = true; return 0;
    case 'q': o->quiet = true; return 0;
    case RO_OPT_STRICT: o->strict = true; return 0;
    }
    return RO_NOT_MINE;
}

/* Flags for the image and the scene: size, camera, light, AOV, frames, memory. */
static int parse_image_flag(ro_options *o, int c, const char *arg, const char *flag)
{
    switch (c) {
    case RO_OPT_SIZE:
        if (!io_parse_size(arg, &o->width, &o->height))
            return ro_bad_flag(o, flag, arg, "expected WxH, each " LIMIT_RANGE(1, PL_MAX_IMAGE_SIDE));
        return 0;
    case RO_OPT_CAMERA: return ro_parse_camera(o, arg, flag);
    case RO_OPT_LIGHT:
        if (!parse_floats(arg, 3, o->light) || !(fabsf(o->light[0]) <= SC_VIEW_COORD_MAX &&
            fabsf(o->light[1]) <= SC_VIEW_COORD_MAX && fabsf(o->light[2]) <= SC_VIEW_COORD_MAX))
            return ro_bad_flag(o, flag, arg, "expected x,y,z within +-1e12 (SC_VIEW_COORD_MAX)");
        o->have_light = true;
        return 0;
    case RO_OPT_AOV:
        if (!parse_aov(arg, &o->aov))
            return ro_bad_flag(o, flag, arg, "expected color, primid, depth or normal");
        return 0;
    case RO_OPT_FRAMES:
        if (!io_parse_int(arg, 1, PL_MAX_FRAMES, &o->frames))
            return ro_bad_flag(o, flag, arg, "expected " LIMIT_RANGE(1, PL_MAX_FRAMES));
        return 0;
    case RO_OPT_MAX_MEMORY:
        if (!io_parse_bytes(arg, &o->max_memory))
            return ro_bad_flag(o, flag, arg, "expected bytes, e.g. 512M or 4G");
        return 0;
    }
    return RO_NOT_MINE;
}

int ro_parse_one(ro_options *o, int c, const char *arg, const char *flag)
{
    int rc = parse_graph_flag(o, c, arg, flag);
    if (rc == RO_NOT_MINE) rc = parse_runtime_flag(o, c, arg, flag);
    if (rc == RO_NOT_MINE) rc = parse_image_flag(o, c, arg, flag);
    return rc;
}

static void apply_overrides(const ro_options *o, sc_scene *s)
{
    if (o->have_camera) {
        memcpy(s->camera.eye, o->camera, 3 * sizeof(float));
        memcpy(s->camera.target, o->camera + 3, 3 * sizeof(float));
        memcpy(s->camera.up, o->camera + 6, 3 * sizeof(float));
        s->camera.fovy_deg = o->camera[9];
    }
    if (o->have_light) {
        sc_light *l = realloc(s->lights, sizeof *l);
        if (!l) return;
        memcpy(l->position, o->light, sizeof l->position);
        l->color[0] = l->color[1] = l->color[2] = 1.0f;
        s->lights = l;
        s->nlights = 1;
    }
}

int ro_load_scene_msg(ro_options *o, bool flatten, sc_scene **s, sc_geometry *g,
                      char err[SC_ERR_MAX])
{
    sc_load_opts lo = sc_load_opts_default();
    if (o->max_memory) lo.max_memory = o->max_memory;
    o->max_memory = lo.max_memory;
    if (sc_load_with(o->scene, &lo, s, err) != 0) return 1;
    /* what loading warned about (unreadable textures), once, whatever -q says */
    for (const char *w = (*s)->warnings; w && *w;) {
        size_t n = strcspn(w, "\n");
        fprintf(stderr, "%s: warning: %.*s\n", o->prog, (int)n, w);
        w += n + (w[n] != 0);
    }
    apply_overrides(o, *s);
    if (flatten && sc_flatten(*s, g, err) != 0) {
        sc_free(*s);
        return 1;
    }
    return 0;
}

int ro_load_scene(ro_options *o, bool flatten, sc_scene **s, sc_geometry *g)
{
    char err[SC_ERR_MAX];
    int rc = ro_load_scene_msg(o, flatten, s, g, err);
    if (rc) fprintf(stderr, "%s: %s\n", o->prog, err);
    return rc;
}

int ro_parse_args(ro_options *o, int argc, char **argv, const ro_program *p)
{
    char shorts[64];
    snprintf(shorts, sizeof shorts, ":" RO_SHORT_OPTIONS "%s", p->shorts);
    io_program q = {o->prog, shorts, p->longs, p->version_code, p->usage, p->flag, p->ctx};
    int rc = io_parse_flags(argc, argv, &q);
    if (rc) return rc;
    if (optind < argc) {
        o->scene = argv[optind++];
        o->scene_given = true;
    }
    if (optind < argc) return ro_bad_flag(o, "argument", argv[optind], "only one SCENE may be given");
    return 0;
}

/* Graph files layered over other graphs (docs/graph-files.md, "Layers"): an overlay that
 * adds, inserts or removes a stage renders the same bytes as the equivalent whole graph
 * file, at any worker count; -p, --graph (a file, or a built-in's name) and --edit
 * layer in command-line order, the later winning; a bad base, a cycle of bases, an edit naming an unknown stage, port or
 * type, and a broken graph left by an edit each stop with exit 1 naming the file and
 * line (or the --edit) and the element written there. Runs gramps-render beside this
 * test's build dir; uses the example plugins fog.so and ao.so. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-graph-layers-XXXXXX";

/* Writes `text` to dir/name; the path in `path`. */
static const char *write_graph(const char *name, const char *text, char path[300])
{
    snprintf(path, 300, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) { fputs(text, f); fclose(f); }
    return path;
}

/* A built-in graph file with `extra` appended: a whole graph, as one wrote it before
 * layering. */
static const char *whole_graph(const char *builtin, const char *extra, const char *name, char path[300])
{
    char src[300];
    snprintf(src, sizeof src, "pipelines/graphs/%s.graph", builtin);
    char *text = slurp(src, NULL);
    char *all = text ? malloc(strlen(text) + strlen(extra) + 2) : NULL;
    if (!all) { free(text); CHECK(0); return ""; }
    sprintf(all, "%s\n%s", text, extra);
    write_graph(name, all, path);
    free(all);
    free(text);
    return path;
}

/* Renders `args` into dir/png; CHECKs exit 0. */
static void render(const char *args, const char *png)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "-q --size 96x64 %s -o %s/%s", args, dir, png);
    CHECK_MSG(run(cmd) == 0, "%s: %s", cmd, out);
}

static bool same_png(const char *a, const char *b)
{
    char pa[300], pb[300];
    snprintf(pa, sizeof pa, "%s/%s", dir, a);
    snprintf(pb, sizeof pb, "%s/%s", dir, b);
    return same_files(pa, pb);
}

static const char fog_whole[] =
    "[graph]\nname = raster-fog\nplugins = fog.so\n"
    "[queue shaded]\nformat = raster.fragments\ncapacity = 8\nordered = true\n"
    "[stage ps]\nout = shaded\n"
    "[stage fog]\ntype = fog\ncolor = 0.35,0.45,0.6\nstart = 0\nend = 0.8\nin = shaded\nout = tiles\n";

static const char ao_whole[] =
    "[graph]\nname = raytrace-ao\nplugins = ao.so\n"
    "[queue ao-hits]\nformat = rt.rays\nelements = $rays\ncapacity = 32\nreplicate = $groups\n"
    "[stage ao]\ntype = ao\nreplicate = $groups\nsamples = 8\nradius = 0.1\nin = hits\n"
    "out = ao-hits\ncontrib = contributions\n"
    "[stage shade]\nin = ao-hits\nambient = false\n";

/* The examples' overlays (after = ps, before = shade), the same overlays under -p, and
 * the same edits as --edit lines: the whole graph's bytes at 1 and 3 workers. */
static void test_overlays_equal_whole_graphs(void)
{
    char fog[300], ao[300], args[1200];
    whole_graph("raster-ordered", fog_whole, "fog-whole.graph", fog);
    whole_graph("raytrace", ao_whole, "ao-whole.graph", ao);
    for (int t = 1; t <= 3; t += 2) {
        snprintf(args, sizeof args, "-t %d --graph %s teapot", t, fog);
        render(args, "fog-whole.png");
        snprintf(args, sizeof args, "-t %d --graph examples/graphs/raster-fog.graph teapot", t);
        render(args, "fog-overlay.png");
        CHECK_MSG(same_png("fog-whole.png", "fog-overlay.png"), "raster-fog.graph at %d workers", t);
        snprintf(args, sizeof args, "-t %d -p raster-ordered --graph examples/graphs/raster-fog.graph teapot", t);
        render(args, "fog-p.png");
        CHECK_MSG(same_png("fog-whole.png", "fog-p.png"), "-p raster-ordered --graph raster-fog.graph");
        snprintf(args, sizeof args, "-t %d -p raster-ordered --plugin fog.so --edit 'fog after "
                 "ps.out color=0.35,0.45,0.6 start=0 end=0.8' teapot", t);
        render(args, "fog-edit.png");
        CHECK_MSG(same_png("fog-whole.png", "fog-edit.png"), "--edit 'fog after ps.out'");
        snprintf(args, sizeof args, "-t %d --graph %s cornell", t, ao);
        render(args, "ao-whole.png");
        snprintf(args, sizeof args, "-t %d --graph examples/graphs/raytrace-ao.graph cornell", t);
        render(args, "ao-overlay.png");
        CHECK_MSG(same_png("ao-whole.png", "ao-overlay.png"), "raytrace-ao.graph at %d workers", t);
    }
    /* the fog changes the image; removing it again (spliced out) gives the base's */
    render("-p raster-ordered teapot", "ordered.png");
    CHECK(!same_png("ordered.png", "fog-overlay.png"));
    render("--graph examples/graphs/raster-fog.graph --edit 'remove fog' teapot", "unfogged.png");
    CHECK_MSG(same_png("ordered.png", "unfogged.png"), "remove fog: not raster-ordered's image");
    char path[300];
    write_graph("unfog.graph", "[stage fog]\nremove = true\n", path);
    snprintf(args, sizeof args, "--graph examples/graphs/raster-fog.graph --graph %s teapot", path);
    render(args, "unfogged-file.png");
    CHECK_MSG(same_png("ordered.png", "unfogged-file.png"), "[stage fog] remove = true");
    /* image-space stages by --edit: the built-in raster-fxaa */
    render("-p raster-fxaa teapot", "fxaa.png");
    render("--edit 'image.fxaa span=8' --edit 'image.tonemap curve=clamp' teapot", "fxaa-edit.png");
    CHECK_MSG(same_png("fxaa.png", "fxaa-edit.png"), "raster + --edit fxaa, tonemap");
}

/* Later layers win; a base given by path, relative to the file, loads under it; -p and
 * a file's own base of the same graph load it once. */
static void test_layering_order(void)
{
    char a[300], b[300], c[300], args[1200];
    write_graph("a.graph", "[graph]\nbase = raster\n[stage tonemap]\ntype = image.tonemap\n"
                "exposure = 2\n", a);
    write_graph("b.graph", "[stage tonemap]\nexposure = 0.5\n", b);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(sub, 0755) == 0);
    write_graph("sub/c.graph", "[graph]\nbase = ../a.graph\n[stage tonemap]\nexposure = 0.5\n", c);
    snprintf(args, sizeof args, "--graph %s teapot", a);
    render(args, "a.png");
    snprintf(args, sizeof args, "-p raster --graph %s teapot", a);
    render(args, "pa.png");
    CHECK_MSG(same_png("a.png", "pa.png"), "-p raster under a file whose base is raster");
    snprintf(args, sizeof args, "--graph raster --graph %s teapot", a);
    render(args, "ga.png");
    CHECK_MSG(same_png("a.png", "ga.png"), "--graph raster (a built-in's name) under a file");
    snprintf(args, sizeof args, "--graph %s --set tonemap.exposure=0.5 teapot", a);
    render(args, "a-set.png");
    CHECK(!same_png("a.png", "a-set.png"));
    snprintf(args, sizeof args, "--graph %s --graph %s teapot", a, b);
    render(args, "ab.png");
    CHECK_MSG(same_png("a-set.png", "ab.png"), "--graph a --graph b: b's exposure must win");
    snprintf(args, sizeof args, "--graph %s teapot", c);
    render(args, "c.png");
    CHECK_MSG(same_png("a-set.png", "c.png"), "base = ../a.graph: c's exposure over a's");
    snprintf(args, sizeof args, "--graph %s --edit 'remove tonemap' teapot", c);
    render(args, "c-removed.png");
    render("teapot", "raster.png");
    CHECK_MSG(same_png("raster.png", "c-removed.png"), "remove tonemap: not raster's image");
}

/* Runs args expecting exit `status` and every string of the NULL-terminated list. */
static void expect(const char *args, int status, ...)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "-q --size 32x32 -o %s/expect.png %s teapot", dir, args);
    int rc = run(cmd);
    CHECK_MSG(rc == status, "%s: exit %d, not %d: %s", args, rc, status, out);
    va_list ap;
    va_start(ap, status);
    for (const char *w; (w = va_arg(ap, const char *));)
        CHECK_MSG(strstr(out, w), "%s: no '%s' in: %s", args, w, out);
    va_end(ap);
}

/* A one-section overlay over raster-ordered with fog.so, and the expected error. */
static void expect_overlay_error(const char *body, const char *line, const char *want)
{
    char path[300], text[1200], args[600], where[320];
    snprintf(text, sizeof text, "[graph]\nbase = raster-ordered\nplugins = fog.so\n%s", body);
    write_graph("bad.graph", text, path);
    snprintf(args, sizeof args, "--graph %s", path);
    snprintf(where, sizeof where, "bad.graph:%s", line);
    expect(args, 1, where, want, NULL);
}

static void test_layer_errors(void)
{
    char x[300], y[300], args[700];
    write_graph("x.graph", "[graph]\nbase = y.graph\n", x);
    write_graph("y.graph", "# y\n[graph]\nbase = x.graph\n", y);
    snprintf(args, sizeof args, "--graph %s", x);
    expect(args, 1, "y.graph:3: base = x.graph", "cycle", NULL);
    expect_overlay_error("[graph]\nbase = nothere.graph\n", "5", "no such graph file");
    expect_overlay_error("[graph]\nbase = rastr\n", "5", "base = rastr: no built-in graph");
    snprintf(args, sizeof args, "-p raytrace --graph examples/graphs/raster-fog.graph");
    expect(args, 1, "raster-fog.graph:21: base = raster-ordered, but it is layered over raytrace", NULL);
    expect("--graph examples/graphs/raster-fog.graph --graph examples/graphs/raster-fog.graph", 1,
           "raster-fog.graph: already loaded", NULL);
    expect("-p raster -p raytrace", 2, "-p 'raytrace'", "second -p", NULL);
    /* --parallel-rast chooses a built-in: with files alone it does not apply, and says so */
    expect("--graph examples/graphs/raster-fog.graph --parallel-rast", 0,
           "--parallel-rast does not apply", NULL);
    expect("--graph examples/graphs/raster-fog.graph --parallel-rast --strict", 2,
           "--parallel-rast does not apply", NULL);
    expect_overlay_error("[stage fog]\ntype = fog\nafter = nosuch\n", "6", "the graph has no stage 'nosuch'");
    expect_overlay_error("[stage fog]\ntype = fog\nafter = ps.in\n", "6", "has no output port 'in'");
    expect_overlay_error("[stage fog]\ntype = fog\nbefore = om.out\n", "6", "has no input port 'out'");
    expect_overlay_error("[stage fog]\ntype = fogg\nafter = ps\n", "5", "unknown stage type 'fogg'");
    expect_overlay_error("[stage fog]\ntype = image.fxaa\nafter = ps\n", "6",
                         "has 0 inputs and 0 outputs of the edge's format 'raster.fragments'");
    expect_overlay_error("[stage fog]\ntype = fog\nafter = ps\nin = fragments\n", "7",
                         "port 'in' is bound by `after`");
    expect_overlay_error("[stage om]\nafter = ps\n", "5", "stage 'om' is already in the graph");
    expect_overlay_error("[stage nosuch]\nremove = true\n", "5", "no stage 'nosuch' to remove");
    expect_overlay_error("[queue fragments]\nafter = ps\n", "5", "only a stage is inserted");
    expect("--edit 'remove nosuch'", 1, "--edit 'remove nosuch'", "no stage or queue 'nosuch'", NULL);
    expect("--edit 'fog after'", 1, "after what?", NULL);
    expect("--edit 'image.fxaa spam'", 1, "'spam': expected after STAGE", NULL);
    /* --list-stages TYPE: one type, with its ports' formats */
    CHECK_MSG(run("--list-stages raster.ps") == 0 && strstr(out, "raster.ps (Shader)") &&
              strstr(out, "raster.fragments: opaque") && !strstr(out, "raster.om"), "%s", out);
    CHECK_MSG(run("--list-stages raster.nothing") == 2 && strstr(out, "'raster.nothing'"), "%s", out);
}

/* Validation errors of a graph an edit broke name the file, line and element written
 * there (the ordered chain: the unordered queue the user inserted, not the chain's head). */
static void test_validation_errors_have_place(void)
{
    expect_overlay_error("[queue extra]\nformat = raster.fragments\n", "5",
                         "queue 'extra' has no consumer");
    expect_overlay_error("[queue extra]\nformat = raster.fragments\n[stage fog]\ntype = fog\n"
                         "in = extra\nout = tiles\n", "5", "queue 'extra' has no producer");
    expect_overlay_error("[queue shaded]\nformat = raster.fragments\n[stage ps]\nout = shaded\n"
                         "[stage fog]\ntype = fog\nin = shaded\nout = tiles\n", "7",
                         "[stage ps] out = shaded: Shader stage 'ps' continues the ordered chain "
                         "of queue 'fragments', but its output queue 'shaded' is not ordered");
    expect_overlay_error("[queue fragments]\ncapacity = 0\n", "5",
                         "queue 'fragments': capacity = 0 is out of range");
    expect("-p raster-ordered --plugin fog.so --edit 'fog after ps' --set ps.out=tiles", 1,
           "command line (--edit 'fog after ps'): queue 'fog-in' has no producer", NULL);
    expect("-p raster-ordered --plugin fog.so --edit 'fog after ps' --set fog-in.ordered=false", 1,
           "command line (--edit 'fog after ps'): [stage ps] out = fog-in",
           "output queue 'fog-in' is not ordered", NULL);
    /* a queue removed under a binding: the binding's place (the `after` that made it) */
    expect("--graph examples/graphs/raster-fog.graph --edit 'remove fog-in'", 1,
           "raster-fog.graph:27: stage 'ps': port 'out' names queue 'fog-in', which the graph "
           "does not declare", NULL);
    /* the queue whose `ordered` was edited is named, and where it was edited */
    expect("-p raster-ordered --set fragments.ordered=false", 1, "[stage ps] in = fragments",
           "input queue 'fragments' is not ordered", "ordered = false at command line (--set)", NULL);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_overlays_equal_whole_graphs);
    RUN(test_layering_order);
    RUN(test_layer_errors);
    RUN(test_validation_errors_have_place);
    scratch_dir_remove(dir);
    return check_finish();
}

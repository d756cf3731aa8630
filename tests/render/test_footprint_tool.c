/* gramps-footprint: bad flags exit 2 naming the flag; a tiny matrix (teapot, 64x64, the
 * ray tracer, gramps and breadth-first, 1 worker) writes a CSV whose rows have every
 * column and numbers where numbers belong, a Markdown table with the papers' figures
 * beside ours, and SVG plots that are well-formed XML with an <svg> root; and its
 * footprints agree with gramps-render --stats for the same run shape: breadth-first's
 * ray-tracer peak is many times gramps' in both (the papers' finding), and each tool's
 * peak is within a factor of two of the other's (both are sampled every 100 us). No
 * check reads a time. --apps runs the gramps-run apps instead and writes apps.csv and
 * apps.md. Finds the tools beside this test's build dir. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"
#include "tests/xml_check.h"

#include <stdbool.h>
#include <unistd.h>

#define CSV_COLUMNS 21
#define MAX_ROWS 8

static char dir[] = "/tmp/gramps-footprint-XXXXXX";
static char render_tool[512], footprint_tool[512];

static void use_tool(const char *path) { snprintf(tool, sizeof tool, "%s", path); }

static void test_bad_flags(void)
{
    use_tool(footprint_tool);
    static const char *const bad[][2] = {
        {"--workers 0", "--workers"}, {"--workers 1,,2", "--workers"},
        {"--schedulers gramps,fifo", "breadth-first"}, {"--pipelines raster,nope", "--pipelines"},
        {"--size 64", "--size"}, {"--repeats 0", "--repeats"}, {"--frobnicate", "unknown option"},
        {"--repeats", "needs a value"}, {"stray", "takes no arguments"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_MSG(run(bad[i][0]) == 2 && strstr(out, bad[i][1]), "%s: %s", bad[i][0], out);
    CHECK(run("--help") == 0 && strstr(out, "--schedulers"));
    CHECK(run("-q --scenes no-such-scene.obj --pipelines raster --schedulers gramps --workers 1 "
              "--repeats 1 --size 8x8 --out /tmp") == 1);
    /* every scene is checked before the matrix starts: no configuration runs */
    CHECK_MSG(run("--scenes teapot,bunny --pipelines raster --schedulers gramps --workers 1 "
                  "--repeats 1 --size 8x8 --out /tmp") == 1 && strstr(out, "'bunny'") &&
              strstr(out, "no built-in scene") && !strstr(out, "[  1/"), "%s", out);
}

/* METIS' complaints on stdout (too few stages per part) become one line on stderr, and
 * never more than one. Whether METIS complains depends on the stage costs the static
 * scheduler measures (it passed two runs in three at load 16), so the line is not
 * required; METIS' own "***" lines never reach the output. */
static void test_metis_one_line(void)
{
    char args[1024];
    snprintf(args, sizeof args, "--size 32x32 --scenes teapot --pipelines raytrace --schedulers "
             "static --workers 16 --repeats 1 --out %s", dir);
    use_tool(footprint_tool);
    const char *said = NULL;
    CHECK_MSG(run(args) == 0 && !strstr(out, "***"), "%s", out);
    said = strstr(out, "METIS printed");
    CHECK_MSG(!said || !strstr(said + 1, "METIS printed"), "%s", out);
}

/* One CSV row split at commas (the tiny matrix' names hold none). */
typedef struct row { char *field[CSV_COLUMNS + 1]; int n; } row;

static row split_row(char *line)
{
    row r = {{0}, 0};
    for (char *s = line, *comma; s && r.n <= CSV_COLUMNS; s = comma ? comma + 1 : NULL) {
        comma = strchr(s, ',');
        if (comma) *comma = 0;
        r.field[r.n++] = s;
    }
    return r;
}

static bool is_number(const char *s)
{
    char *end;
    strtod(s, &end);
    return end != s && *end == 0;
}

/* The rows of footprint.csv (text is cut up in place); the header checked. */
static int read_csv(char *text, row *rows)
{
    int n = 0;
    char *line = strtok(text, "\n");
    row header = split_row(line ? line : "");
    CHECK_MSG(header.n == CSV_COLUMNS && !strcmp(header.field[0], "scene") &&
              !strcmp(header.field[10], "peak_bytes_median"), "header: %d columns", header.n);
    while ((line = strtok(NULL, "\n")) && n < MAX_ROWS) {
        rows[n] = split_row(line);
        CHECK_MSG(rows[n].n == CSV_COLUMNS, "row %d: %d columns", n, rows[n].n);
        for (int c = 3; c < rows[n].n; c++)
            CHECK_MSG(is_number(rows[n].field[c]), "row %d column %d: '%s'", n, c, rows[n].field[c]);
        n++;
    }
    return n;
}

static double field(const row *rows, int n, const char *scheduler, int column)
{
    for (int i = 0; i < n; i++)
        if (rows[i].n == CSV_COLUMNS && !strcmp(rows[i].field[2], scheduler))
            return atof(rows[i].field[column]);
    return -1;
}

/* The time shares of every row add up to 1 and occupancy is a fraction. */
static void check_shares(const row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        if (rows[i].n != CSV_COLUMNS) continue;
        double sum = 0, occupancy = atof(rows[i].field[16]);
        for (int c = 17; c < 21; c++) sum += atof(rows[i].field[c]);
        CHECK_MSG(sum > 0.99 && sum < 1.01, "row %d: shares add up to %.3f", i, sum);
        CHECK(occupancy >= 0 && occupancy <= 1);
    }
}

static void check_svg(const char *name)
{
    char path[600], root[32] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = slurp(path, NULL);
    CHECK_MSG(text && xml_wellformed(text, root, sizeof root) && !strcmp(root, "svg"),
              "%s: %s (root '%s')", name, text ? "not well-formed" : "missing", root);
    free(text);
}

/* gramps-render's median peak footprint for the same shape, from its --stats file. */
static double render_peak(const char *scheduler)
{
    char json[600], args[1024];
    snprintf(json, sizeof json, "%s/stats-%s.json", dir, scheduler);
    snprintf(args, sizeof args, "-q -t 1 --size 64x64 -p raytrace --frames 3 --scheduler %s "
             "--stats %s teapot", scheduler, json);
    use_tool(render_tool);
    CHECK_MSG(run(args) == 0, "gramps-render: %s", out);
    char *text = slurp(json, NULL);
    const char *p = text ? strstr(text, "\"footprint_over_frames\": {\"peak_bytes\": {") : NULL;
    p = p ? strstr(p, "\"median\": ") : NULL;
    double peak = p ? atof(p + strlen("\"median\": ")) : -1;
    free(text);
    return peak;
}

static void check_against_render(const row *rows, int n)
{
    double mine[2] = {field(rows, n, "gramps", 10), field(rows, n, "breadth-first", 10)};
    double theirs[2] = {render_peak("gramps"), render_peak("breadth-first")};
    /* 3.8x here: at 64x64, 87% of teapot's camera rays miss and stop in Primary
     * (rt.primary's `background`), so neither policy holds their packets; 5x and more
     * when they went on to Shade and Blend */
    CHECK_MSG(mine[0] > 0 && mine[1] >= 3 * mine[0], "gramps-footprint: breadth-first peak %.0f, "
              "gramps %.0f", mine[1], mine[0]);
    CHECK_MSG(theirs[0] > 0 && theirs[1] >= 3 * theirs[0], "gramps-render: breadth-first peak "
              "%.0f, gramps %.0f", theirs[1], theirs[0]);
    for (int i = 0; i < 2; i++)
        CHECK_MSG(mine[i] <= 2 * theirs[i] && theirs[i] <= 2 * mine[i], "%s: peak %.0f in "
                  "gramps-footprint, %.0f in gramps-render", i ? "breadth-first" : "gramps",
                  mine[i], theirs[i]);
}

static void check_markdown(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/footprint.md", dir);
    char *md = slurp(path, NULL);
    CHECK_MSG(md && strstr(md, "| teapot | raytrace | gramps | 1 |") &&
              strstr(md, "| teapot | raytrace | breadth-first | 1 |"), "measured rows");
    CHECK_MSG(md && strstr(md, "Table III") && strstr(md, "31257.1 / 78706.5") &&
              strstr(md, "Table 4.2") && strstr(md, "| teapot | Ray Tracer | raytrace | 99.8% | 156 |"),
              "the papers' figures");
    CHECK_MSG(md && strstr(md, "![peak-raytrace-1w.svg](peak-raytrace-1w.svg)"), "plot links");
    free(md);
}

static void test_tiny_matrix(void)
{
    char args[1024], path[600];
    snprintf(args, sizeof args, "--size 64x64 --scenes teapot --pipelines raytrace --schedulers "
             "gramps,breadth-first --workers 1 --repeats 3 --out %s", dir);
    use_tool(footprint_tool);
    CHECK_MSG(run(args) == 0, "%s", out);
    CHECK_MSG(strstr(out, "[  2/2] teapot raytrace breadth-first 1w:"), "progress: %s", out);
    snprintf(path, sizeof path, "%s/footprint.csv", dir);
    char *csv = slurp(path, NULL);
    row rows[MAX_ROWS];
    int n = csv ? read_csv(csv, rows) : 0;
    CHECK_MSG(n == 2, "%d rows", n);
    check_shares(rows, n);
    check_against_render(rows, n);
    free(csv);
    check_markdown();
    /* each configuration's per-queue table */
    snprintf(path, sizeof path, "%s/queues.txt", dir);
    char *queues = slurp(path, NULL);
    CHECK_MSG(queues && strstr(queues, "\nteapot raytrace breadth-first 1w\nqueue ") &&
              strstr(queues, "\nrays-0 ") && strstr(queues, "all (at once)"), "%s", queues ? queues : "(none)");
    free(queues);
    static const char *const svgs[] = {"peak-raytrace-1w.svg", "avg-raytrace-1w.svg",
        "time-raytrace-1w.svg", "depth-teapot-raytrace-gramps-1w.svg",
        "depth-teapot-raytrace-breadth-first-1w.svg"};
    for (size_t i = 0; i < sizeof svgs / sizeof *svgs; i++) check_svg(svgs[i]);
}

/* --apps: the apps study instead of the scenes; an unknown app exits 2 naming the known
 * ones; srad under two schedulers (DANBI's qes among them) and 2 virtual workers writes
 * a CSV row each and a Markdown table. */
static void test_apps_study(void)
{
    use_tool(footprint_tool);
    CHECK_MSG(run("--apps histo --out /tmp") == 2 && strstr(out, "'histo'") &&
              strstr(out, "mergesort"), "%s", out);
    char args[1024], path[600];
    snprintf(args, sizeof args, "--apps srad --schedulers gramps,qes --simulate 2 --repeats 1 "
             "--out %s", dir);
    CHECK_MSG(run(args) == 0 && strstr(out, "wrote") && strstr(out, "apps.md"), "%s", out);
    snprintf(path, sizeof path, "%s/apps.csv", dir);
    char *csv = slurp(path, NULL);
    CHECK_MSG(csv && !strncmp(csv, "app,scheduler,workers,simulated,wall_ms,peak_kib,avg_kib\n", 57) &&
              strstr(csv, "\nsrad,gramps,2,1,") && strstr(csv, "\nsrad,qes,2,1,"), "%s", csv ? csv : "(none)");
    free(csv);
    snprintf(path, sizeof path, "%s/apps.md", dir);
    char *md = slurp(path, NULL);
    CHECK_MSG(md && strstr(md, "| srad | qes |") && strstr(md, "2 virtual w"), "%s", md ? md : "(none)");
    free(md);
}

/* The checker itself tells malformed XML apart. */
static void test_xml_check(void)
{
    char root[16];
    CHECK(xml_wellformed("<?xml version=\"1.0\"?>\n<!-- c -->\n<svg a=\"1\"><g/><t>a &amp; b</t></svg>\n",
                         root, sizeof root) && !strcmp(root, "svg"));
    CHECK(!xml_wellformed("<svg><g></svg>", root, sizeof root));
    CHECK(!xml_wellformed("<svg></svg><svg/>", root, sizeof root));
    CHECK(!xml_wellformed("<svg>a & b</svg>", root, sizeof root));
    CHECK(!xml_wellformed("<svg a=\"<\"/>", root, sizeof root));
    CHECK(!xml_wellformed("<svg>", root, sizeof root));
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    snprintf(render_tool, sizeof render_tool, "%s", tool);
    find_tool(argv[0], "gramps-footprint");
    snprintf(footprint_tool, sizeof footprint_tool, "%s", tool);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    RUN(test_xml_check);
    RUN(test_bad_flags);
    RUN(test_tiny_matrix);
    RUN(test_metis_one_line);
    RUN(test_apps_study);
    scratch_dir_remove(dir);
    return check_finish();
}

/* gramps-render's runtime flags: --scheduler (every policy renders and the statistics
 * name it; an unknown one exits 2 naming the flag and the known ones; static -v prints
 * its partition), --trace (strict JSON, worker thread names, and counter tracks whose
 * peaks are the statistics' peaks) and --dot. Finds the tool beside this test's build
 * dir. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/json_check.h"
#include "tests/scratch_dir.h"

#include <stdbool.h>
#include <unistd.h>


static void test_scheduler_flag(void)
{
    CHECK(run("--scheduler fifo") == 2 && strstr(out, "--scheduler") && strstr(out, "breadth-first") &&
          strstr(out, "pss"));
    CHECK(run("--scheduler") == 2);
    static const char *names[] = {"gramps", "task-stealing", "breadth-first", "static", "qes", "pss"};
    char json[] = "/tmp/gramps-cli-sched-XXXXXX", args[1024], want[64];
    int fd = mkstemp(json);
    if (fd < 0) { CHECK(0); return; }
    close(fd);
    for (int k = 0; k < 6; k++) {
        snprintf(args, sizeof args, "-q -v -t 2 --size 64x48 --scheduler %s --stats %s teapot",
                 names[k], json);
        CHECK_MSG(run(args) == 0, "%s: %s", names[k], out);
        bool partition = strstr(out, "static:   worker 1:") != NULL;
        CHECK_MSG(partition == (k == 3), "%s -v: %s", names[k], out);
        char *text = slurp(json, NULL);
        snprintf(want, sizeof want, "\n\"scheduler\": \"%s\",", names[k]);
        CHECK_MSG(text && json_valid(text) && strstr(text, want), "%s: stats name %s",
                  names[k], text && strstr(text, "scheduler") ? strstr(text, "scheduler") : "nothing");
        free(text);
    }
    unlink(json);
}

/* Each counter track's largest value, by name, from the trace's one-event lines. */
typedef struct track { char name[128]; unsigned long long peak; } track;

static int trace_peaks(const char *text, track *t, int max)
{
    int n = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        char name[128];
        double ts;
        unsigned long long bytes;
        if (sscanf(l, "{\"name\": \"%127[^\"]\", \"ph\": \"C\", \"pid\": 1, \"ts\": %lf, \"args\": "
                   "{\"bytes\": %llu}}", name, &ts, &bytes) != 3) continue;
        int i = 0;
        while (i < n && strcmp(t[i].name, name)) i++;
        if (i == n && n < max) snprintf(t[n++].name, sizeof t->name, "%s", name);
        if (i < n && bytes > t[i].peak) t[i].peak = bytes;
    }
    return n;
}

static unsigned long long peak_of(const track *t, int n, const char *name)
{
    for (int i = 0; i < n; i++) if (!strcmp(t[i].name, name)) return t[i].peak;
    return 0;
}

/* The statistics' runtime queues: each one's peak_bytes matches its track's peak. */
static void check_queue_peaks(const char *stats, const track *t, int n, const char *pipeline)
{
    const char *q = strstr(stats, "\"runtime\": ");
    int checked = 0;
    for (q = q ? strstr(q, "{\"name\": \"") : NULL; q; q = strstr(q + 1, "\n    {\"name\": \"")) {
        char name[128];
        unsigned long long peak;
        const char *pb = strstr(q, "\"peak_bytes\": ");
        if (sscanf(strchr(q, '{'), "{\"name\": \"%127[^\"]\"", name) != 1 || !pb ||
            sscanf(pb, "\"peak_bytes\": %llu", &peak) != 1)
            break;
        CHECK_MSG(peak_of(t, n, name) == peak, "%s queue %s: track peak %llu, stats %llu",
                  pipeline, name, peak_of(t, n, name), peak);
        checked++;
    }
    CHECK_MSG(checked >= 3, "%s: %d queues checked", pipeline, checked);
}

static void test_trace_and_dot(void)
{
    char dir[] = "/tmp/gramps-cli-trace-XXXXXX", args[1024], tr[300], st[300], dot[300];
    if (!mkdtemp(dir)) { CHECK(0); return; }
    snprintf(tr, sizeof tr, "%s/t.json", dir);
    snprintf(st, sizeof st, "%s/s.json", dir);
    snprintf(dot, sizeof dot, "%s/g.dot", dir);
    const char *pipelines[] = {"raster", "raytrace"};
    for (int p = 0; p < 2; p++) {
        snprintf(args, sizeof args, "-q -t 2 -p %s --size 96x64 --trace %s --stats %s --dot %s "
                 "teapot", pipelines[p], tr, st, dot);
        CHECK_MSG(run(args) == 0, "%s", out);
        char *trace = slurp(tr, NULL), *stats = slurp(st, NULL), *graph = slurp(dot, NULL);
        CHECK(trace && json_valid(trace) && stats && json_valid(stats));
        CHECK(trace && strstr(trace, "\"args\": {\"name\": \"worker 0\"}") &&
              strstr(trace, "\"args\": {\"name\": \"worker 1\"}") && strstr(trace, "\"ph\": \"X\""));
        track t[64] = {{{0}, 0}};
        int n = trace ? trace_peaks(trace, t, 64) : 0;
        const char *rt = stats ? strstr(stats, "\"runtime\": ") : NULL;
        const char *pf = rt ? strstr(rt, "\"peak_footprint_bytes\": ") : NULL;
        unsigned long long total = 0;
        CHECK(pf && sscanf(pf, "\"peak_footprint_bytes\": %llu", &total) == 1 && total > 0);
        CHECK_MSG(peak_of(t, n, "total footprint") == total, "%s: total track peak %llu, stats %llu",
                  pipelines[p], peak_of(t, n, "total footprint"), total);
        if (stats) check_queue_peaks(stats, t, n, pipelines[p]);
        CHECK(graph && strstr(graph, "digraph") && strstr(graph, "peak ") && strstr(graph, "avg "));
        free(trace); free(stats); free(graph);
    }
    CHECK(scratch_dir_remove(dir));
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    RUN(test_scheduler_flag);
    RUN(test_trace_and_dot);
    return check_finish();
}

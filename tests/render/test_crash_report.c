/* A stage that crashes is named (tools/common/crash_report.h): gramps-render and
 * gramps-run (which install the same handler) print the stage, its type, the plugin file
 * and the signal, and exit 1 rather than die by the signal; for a Shader and a Thread stage (on a fiber), SIGSEGV
 * and SIGFPE. With GRAMPS_CORE=1 the signal's default action follows the message. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <unistd.h>

static char plugin[1024], dir[] = "/tmp/gramps-crash-XXXXXX", graph[1200];

/* A graph: test.emit's one packet into stage `victim` of type `victim_type`, or a
 * Thread victim that emits (to a test.fpe sink that never gets a packet). */
static void write_graph(const char *victim_type, bool thread)
{
    snprintf(graph, sizeof graph, "%s/%s.graph", dir, victim_type);
    FILE *f = fopen(graph, "w");
    if (!f) return;
    fprintf(f, "[graph]\nname = crash\nplugins = %s\n[queue frags]\nformat = raster.fragments\n"
            "capacity = 4\n", plugin);
    if (thread)
        fprintf(f, "[stage victim]\ntype = %s\nout = frags\n[stage sink]\ntype = test.fpe\n"
                "in = frags\n", victim_type);
    else
        fprintf(f, "[stage emit]\ntype = test.emit\nout = frags\n[stage victim]\ntype = %s\n"
                "in = frags\n", victim_type);
    fclose(f);
}

/* gramps-render runs the graph: exit 1, naming the stage, type, plugin and signal. */
static void check_named(const char *type, bool thread, const char *signal)
{
    write_graph(type, thread);
    char args[1400], want[96];
    snprintf(args, sizeof args, "-q --size 16x16 -t 2 -o /dev/null --graph %s", graph);
    int rc = run(args);
    snprintf(want, sizeof want, "(type %s, plugin ", type);
    CHECK_MSG(rc == 1 && strstr(out, "stage 'victim'") && strstr(out, want) &&
              strstr(out, "crash.so") && strstr(out, signal), "%s: exit %d: %s", type, rc, out);
}

static void test_shader_segv(void) { check_named("test.segv", false, "SIGSEGV"); }
static void test_thread_segv(void) { check_named("test.segv-thread", true, "SIGSEGV"); }
static void test_shader_fpe(void) { check_named("test.fpe", false, "SIGFPE"); }

/* GRAMPS_CORE=1: the message, then death by the signal (no core file: ulimit -c 0). */
static void test_core_when_asked(void)
{
    write_graph("test.segv", false);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "ulimit -c 0; GRAMPS_CORE=1 %s -q --size 16x16 -o /dev/null "
             "--graph %s 2>&1; echo \"status $?\"", tool, graph);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    if (p) pclose(p);
    CHECK_MSG(strstr(out, "stage 'victim'") && strstr(out, "GRAMPS_CORE=1") &&
              strstr(out, "status 139"), "%s", out);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    char self[400], cwd[400];
    snprintf(self, sizeof self, "%s", argv[0]);
    bool relative = self[0] != '/' && getcwd(cwd, sizeof cwd);
    snprintf(plugin, sizeof plugin, "%s%s%s/../plugins/crash.so", relative ? cwd : "",
             relative ? "/" : "", dirname(self));
    if (!mkdtemp(dir)) return 1;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("skip all: the sanitizer's own SIGSEGV handler reports crashes in this build\n");
    (void)test_shader_segv, (void)test_thread_segv, (void)test_shader_fpe, (void)test_core_when_asked;
#else
    RUN(test_shader_segv);
    RUN(test_thread_segv);
    RUN(test_shader_fpe);
    RUN(test_core_when_asked);
#endif
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}

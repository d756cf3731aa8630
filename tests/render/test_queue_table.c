/* The per-queue footprint table: gramps-render --stats-table (and -v) prints every queue
 * of the last frame with its subqueues, capacity, packet size, peak and average held in
 * packets and bytes and the bytes its capacity allows, and a total; bytes in the unit
 * that fits. The --dot graph gives each queue's figures once, on its first producer's
 * edge, with the subqueues a queue set made. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tools/common/queue_table.h"

#include <unistd.h>

static void test_units(void)
{
    char b[32];
    qt_bytes(512, b, sizeof b);
    CHECK_MSG(!strcmp(b, "512 B"), "%s", b);
    qt_bytes(1536, b, sizeof b);
    CHECK_MSG(!strcmp(b, "1.50 KiB"), "%s", b);
    qt_bytes(40.5 * 1024, b, sizeof b);
    CHECK_MSG(!strcmp(b, "40.5 KiB"), "%s", b);
    qt_bytes(3.0 * 1048576, b, sizeof b);
    CHECK_MSG(!strcmp(b, "3.00 MiB"), "%s", b);
    qt_bytes(300.0 * 1073741824, b, sizeof b);
    CHECK_MSG(!strcmp(b, "300 GiB"), "%s", b);
}

/* The row of queue `name` in out, or NULL. */
static const char *row(const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s ", name);
    return strstr(out, key);
}

static void test_table(void)
{
    CHECK(run("-q --size 64x64 -t 2 --stats-table -o /dev/null") == 0);
    CHECK_MSG(strstr(out, "queue") && strstr(out, "subqueues") && strstr(out, "capacity") &&
              strstr(out, "peak") && strstr(out, "average") && row("bins") && row("ia-0") &&
              strstr(out, "all (at once)") && strstr(out, "KiB"), "%s", out);
    const char *bins = row("bins");
    unsigned subqueues = 0, capacity = 0;
    CHECK(bins && sscanf(bins, " bins %u %u", &subqueues, &capacity) == 2 && subqueues == 1 &&
          capacity == 8);                   /* 64x64: one 64-pixel tile */
    CHECK(run("-q --size 64x64 -t 2 -v -p raytrace -o /dev/null cornell") == 0 && row("rays-0") &&
          strstr(out, "(cycle)"));
    CHECK(run("-q --size 64x64 -t 2 -o /dev/null") == 0 && !strstr(out, "subqueues"));
}

/* How many times needle occurs in hay. */
static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *s = hay; (s = strstr(s, needle)); s++) n++;
    return n;
}

static void test_dot_figures_once(void)
{
    char path[] = "/tmp/gramps-dot-XXXXXX.dot", args[256];
    int fd = mkstemps(path, 4);
    if (fd >= 0) close(fd);
    /* 256x256: 16 tiles, two IA/VS groups both producing `bins` */
    snprintf(args, sizeof args, "-q --size 256x256 -t 2 --set graph.groups=2 -o /dev/null --dot %s", path);
    CHECK(run(args) == 0);
    char *dot = slurp(path, NULL);
    CHECK_MSG(dot && count(dot, "label=\"bins") == 2 && count(dot, "label=\"bins\\n16 subqueues x\\ncap 8") == 1,
              "%s", dot ? dot : "(no file)");
    free(dot);
    unlink(path);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    RUN(test_units);
    RUN(test_table);
    RUN(test_dot_figures_once);
    return check_finish();
}

/* gramps-render's output files (-o, --stats) written safely: a full disk (/dev/full for
 * a direct write, RLIMIT_FSIZE for the temporary-file path) exits 1 and keeps the old
 * file; -o and --stats succeed or fail together; a symlink's target is replaced and the
 * link kept; a FIFO is written, not replaced; the file's mode is kept; a 250-character
 * file name works; no temporary file is left behind. */
#include "tests/check.h"

#include <dirent.h>
#include <libgen.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tool[512], dir[64], out[4096];

/* Runs a shell command with TOOL replaced by the tool's path; returns the exit status. */
static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[2600], body[1800];
    snprintf(body, sizeof body, fmt, a, b);
    snprintf(cmd, sizeof cmd, "cd %s && T=%s && %s 2>&1", dir, tool, body);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int st = p ? pclose(p) : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static long size_of(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* No ".gr-*" temporary left in the directory. */
static bool no_temporaries(void)
{
    DIR *d = opendir(dir);
    bool clean = true;
    for (struct dirent *e; d && (e = readdir(d));) clean &= strncmp(e->d_name, ".gr-", 4) != 0;
    if (d) closedir(d);
    return clean;
}

static void test_full_disk_keeps_old_file(void)
{
    CHECK(sh("$T -q --size 16x16 -o old.png", "", "") == 0);
    long before = size_of("old.png");
    /* A file-size limit of one 512-byte block: the 256x256 PNG cannot be written. */
    CHECK(sh("ulimit -f 1 && $T -q --size 256x256 -o old.png", "", "") == 1 && strstr(out, "old.png"));
    CHECK(size_of("old.png") == before && no_temporaries());
    /* /dev/full through a link of our own: a regressed tool that replaces the file it
     * names then replaces the link, never the system's device. */
    CHECK(sh("ln -s /dev/full full && $T -q --size 16x16 -o full", "", "") == 1 && strstr(out, "/dev/full"));
    CHECK(sh("$T -q --size 16x16 --stats full", "", "") == 1);
}

static void test_outputs_fail_together(void)
{
    CHECK(sh("$T -q --size 16x16 -o pair.png --stats pair.json", "", "") == 0);
    long png = size_of("pair.png"), json = size_of("pair.json");
    CHECK(sh("$T -q --size 40x40 -o pair.png --stats missing/pair.json", "", "") == 1 &&
          strstr(out, "missing/pair.json"));
    CHECK(size_of("pair.png") == png);                  /* the image was not replaced */
    CHECK(sh("$T -q --size 40x40 -o pair.png --stats full", "", "") == 1);
    CHECK(size_of("pair.png") == png && size_of("pair.json") == json && no_temporaries());
}

static void test_links_fifos_modes_names(void)
{
    CHECK(sh("$T -q --size 16x16 -o real.png && chmod 640 real.png && ln -s real.png link.png", "", "") == 0);
    CHECK(sh("$T -q --size 40x40 -o link.png", "", "") == 0);
    struct stat st;
    char path[300];
    snprintf(path, sizeof path, "%s/link.png", dir);
    CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));         /* still a link */
    snprintf(path, sizeof path, "%s/real.png", dir);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);  /* mode kept */
    CHECK(size_of("real.png") > 0 && size_of("link.png") == size_of("real.png"));
    CHECK(sh("mkfifo fifo && (timeout 10 cat fifo > copy.png 2>/dev/null &) && $T -q --size 16x16 -o fifo && sleep 0.2", "", "") == 0);
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode) && size_of("copy.png") > 0);
    char name[251];
    memset(name, 'n', 246);
    memcpy(name + 246, ".png", 5);
    CHECK(sh("$T -q --size 16x16 -o %s", name, "") == 0 && size_of(name) > 0);
    CHECK(no_temporaries());
}

/* -o /dev/stdout into a pipe: the PNG comes through it (its signature and IEND). */
static void test_stdout_pipe(void)
{
    CHECK(sh("$T -q --size 16x16 -o /dev/stdout | od -An -c | tr -d ' \\n' | grep -c 'PNG.*IEND'", "", "") == 0);
    CHECK_MSG(atoi(out) == 1, "output: %s", out);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[512];
    snprintf(self, sizeof self, "%s", argv[0]);
    char *d = dirname(self);
    snprintf(tool, sizeof tool, "%s%s/../../bin/gramps-render", d[0] == '/' ? "" : "$OLDPWD/", d);
    snprintf(dir, sizeof dir, "/tmp/gramps-out-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(test_full_disk_keeps_old_file);
    RUN(test_outputs_fail_together);
    RUN(test_links_fifos_modes_names);
    RUN(test_stdout_pipe);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) return 1;
    return check_finish();
}

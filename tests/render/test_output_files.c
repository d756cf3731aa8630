/* gramps-render's output files (-o, --stats) written safely: a full disk (/dev/full for
 * a direct write, RLIMIT_FSIZE for the temporary-file path) exits 1 and keeps the old
 * file; -o and --stats succeed or fail together; a symlink's target is replaced and the
 * link kept; a FIFO is written, not replaced; the file's mode is kept; a 250-character
 * file name works; no temporary file is left behind. */
#include "output/interrupt.h"
#include "output/safe_file.h"
#include "tests/check.h"
#include "tests/scratch_dir.h"

#include <dirent.h>
#include <signal.h>
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
    /* the reader is waited for (not given a fixed time: under load it may not run for a while) */
    CHECK(sh("mkfifo fifo && { timeout 10 cat fifo > copy.png 2>/dev/null & } && $T -q --size 16x16 -o fifo && wait $!",
             "", "") == 0);
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode) && size_of("copy.png") > 0);
    char name[251];
    memset(name, 'n', 246);
    memcpy(name + 246, ".png", 5);
    CHECK(sh("$T -q --size 16x16 -o %s", name, "") == 0 && size_of(name) > 0);
    CHECK(no_temporaries());
}

/* --trace and --dot are staged with -o and --stats: one that cannot be written leaves
 * every old file (the PNG and JSON were replaced before, then the trace failed); the
 * same file named for two outputs is refused before anything is written. */
static void test_all_outputs_or_none(void)
{
    CHECK(sh("$T -q --size 16x16 -o all.png --stats all.json", "", "") == 0);
    long png = size_of("all.png"), json = size_of("all.json");
    CHECK(sh("$T -q --size 40x40 -o all.png --stats all.json --trace missing/t.json", "", "") == 1 &&
          strstr(out, "missing/t.json"));
    CHECK(sh("$T -q --size 40x40 -o all.png --stats all.json --dot missing/g.dot", "", "") == 1 &&
          strstr(out, "missing/g.dot"));
    CHECK(size_of("all.png") == png && size_of("all.json") == json);
    CHECK(sh("$T -q --size 40x40 -o all.png --stats all.png", "", "") == 1 &&
          strstr(out, "named for two outputs"));
    CHECK(sh("$T -q --size 40x40 -o all.png --trace ./all.png", "", "") == 1 &&
          strstr(out, "named for two outputs"));
    CHECK(size_of("all.png") == png && no_temporaries());
    CHECK(sh("$T -q --size 40x40 -o all.png --stats all.json --trace t.json --dot g.dot", "", "") == 0);
    CHECK(size_of("all.png") != png && size_of("t.json") > 0 && size_of("g.dot") > 0);
}

/* SIGINT and SIGTERM stop a render: exit 130 / 143, the old outputs kept, no temporary
 * left. (A render of a few seconds at 1 worker, signalled after 0.3 s.) */
static void test_signals_keep_old_outputs(void)
{
    CHECK(sh("$T -q --size 16x16 -o sig.png --stats sig.json", "", "") == 0);
    long png = size_of("sig.png"), json = size_of("sig.json");
    static const char *const sigs[] = {"INT", "TERM"};
    static const int codes[] = {130, 143};
    for (int i = 0; i < 2; i++) {
        CHECK(sh("{ $T -q -t 1 -p raytrace --spp 256 --size 512x512 -o sig.png --stats sig.json & "
                 "sleep 0.3; kill -%s $!; wait $!; echo status $?; } 2>&1", sigs[i], "") == 0);
        char want[32];
        snprintf(want, sizeof want, "status %d", codes[i]);
        CHECK_MSG(strstr(out, want) != NULL && strstr(out, i ? "terminated (SIGTERM)" :
                  "interrupted (SIGINT)"), "SIG%s: %s", sigs[i], out);
        CHECK(size_of("sig.png") == png && size_of("sig.json") == json && no_temporaries());
    }
}

/* A signal while outputs are staged (their temporaries written, not yet renamed): the
 * temporaries are removed and the target kept. In a child process, which stages a file
 * over an old one and then signals itself. */
static void test_signal_removes_staged_temporaries(void)
{
    CHECK(sh("echo old > staged.txt", "", "") == 0);
    char target[300];
    snprintf(target, sizeof target, "%s/staged.txt", dir);
    pid_t pid = fork();
    if (pid == 0) {
        io_interrupt_install("test");
        io_file f;
        char err[300];
        if (io_stage(&f, target, "new contents\n", 13, err, sizeof err) != 0) _exit(3);
        raise(SIGTERM);
        _exit(4);                                   /* the handler exits first */
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 143, "status %d", st);
    CHECK(size_of("staged.txt") == 4 && no_temporaries());
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
    RUN(test_all_outputs_or_none);
    RUN(test_signals_keep_old_outputs);
    RUN(test_signal_removes_staged_temporaries);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}

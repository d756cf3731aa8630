/* Reading what a scene names is bounded (issue 36, class 2): a FIFO or a device as the
 * scene, an mtllib or a texture is refused as "not a regular file" (opening a FIFO
 * waited for a writer; /dev/zero never ended), and a line longer than SC_MAX_LINE is
 * refused with its line number (an endless line grew past 4 GB and then said "line 0:
 * no faces"); a NUL byte in a .scene line is refused. Each load runs in a child under alarm(10): a regression fails the test
 * instead of hanging it. */
#include "scenes/input_file.h"
#include "scenes/scene.h"
#include "tests/check.h"
#include "tests/scratch_dir.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-input-XXXXXX";

static void path_of(const char *name, char out[256]) { snprintf(out, 256, "%s/%s", dir, name); }

static void write_file(const char *name, const char *text)
{
    char p[256];
    path_of(name, p);
    FILE *f = fopen(p, "w");
    if (f) { fputs(text, f); fclose(f); }
}

/* Loads `name` in a child: 0 loaded, 1 refused with `want` in the message (or loaded
 * with a warning containing it when warning is set), 2 other, 3 timed out or crashed. */
static int load_in_child(const char *name, const char *want, bool warning)
{
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        char p[256], err[SC_ERR_MAX] = "";
        path_of(name, p);
        sc_scene *s = NULL;
        int rc = sc_load(p, &s, err);
        if (rc == 0 && warning) {
            _exit(s->warnings && strstr(s->warnings, want) ? 1 : 0);
        }
        if (rc != 0) fprintf(stderr, "    %s\n", err);
        _exit(rc == 0 ? 0 : strstr(err, want) ? 1 : 2);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return 3;
    return WEXITSTATUS(st);
}

static const char *const triangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";

static void test_fifos_and_devices(void)
{
    char p[256];
    path_of("fifo.obj", p);
    CHECK(mkfifo(p, 0600) == 0);
    CHECK(load_in_child("fifo.obj", "not a regular file", false) == 1);
    path_of("fifo.scene", p);
    CHECK(mkfifo(p, 0600) == 0);
    CHECK(load_in_child("fifo.scene", "not a regular file", false) == 1);
    char text[256];
    snprintf(text, sizeof text, "mtllib /dev/zero\n%s", triangle);
    write_file("devmtl.obj", text);
    CHECK(load_in_child("devmtl.obj", "devmtl.obj:1: /dev/zero: not a regular file", false) == 1);
    path_of("fifo.png", p);
    CHECK(mkfifo(p, 0600) == 0);
    write_file("tex.mtl", "newmtl m\nmap_Kd fifo.png\n");
    snprintf(text, sizeof text, "mtllib tex.mtl\nusemtl m\n%s", triangle);
    write_file("tex.obj", text);
    CHECK(load_in_child("tex.obj", "not a regular file", true) == 1);   /* a warning */
}

static void test_long_line(void)
{
    char p[256];
    path_of("long.obj", p);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(triangle, f);
    for (int i = 0; i < SC_MAX_LINE + 10; i++) fputc('v', f);
    fputc('\n', f);
    fclose(f);
    CHECK(load_in_child("long.obj", "long.obj:5: a line longer than 1048576", false) == 1);
}

/* A NUL byte in a .scene value is refused at its line (it ended the value in silence:
 * "fovy = 4<NUL>0" read as 4). */
static void test_nul_byte(void)
{
    char p[256];
    path_of("nul.scene", p);
    FILE *f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs("[mesh.a]\nbuiltin = teapot\n[camera]\nfovy = 4", f);
    fputc(0, f);
    fputs("0\n", f);
    fclose(f);
    CHECK(load_in_child("nul.scene", "nul.scene:4: a NUL byte", false) == 1);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    RUN(test_fifos_and_devices);
    RUN(test_long_line);
    RUN(test_nul_byte);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}

/* device_test.h — for the tests that run gramps-render with stages on the OpenCL device
 * (test_opencl.c, test_device_*.c; PoCL on the CPU in CI): the start every such program
 * makes, its scratch files under the build directory, a render with printf-style
 * options, a device render compared with the CPU's, and a stage's figures read back
 * from a --stats file. Include once per test program, after tests/check.h and
 * tests/cli.h. */
#ifndef TESTS_RENDER_DEVICE_TEST_H
#define TESTS_RENDER_DEVICE_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/file.h>

static char build_dir[512];
static const char *scratch_prefix = "device";

/* Finds gramps-render and the build directory, and keeps PoCL's compiled kernels in
 * <build>/pocl-cache so that later runs skip PoCL's compile; scratch files are named
 * <build>/tests/<prefix>-<name>. False, saying why, in the ASan and TSan builds: PoCL's
 * own threads and allocations are not instrumented, so those reports are noise.
 * Holds <build>/pocl-cache.lock until the program exits: tests/run_tests.sh runs two
 * programs at a time, and two of these side by side each run PoCL's compiler on every
 * core, so a kernel build outlasted the watchdog's 10 s (a stage 'ran its own code'). */
static inline bool device_test_start(const char *argv0, const char *prefix)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    (void)argv0;
    (void)prefix;
    printf("skip all: PoCL's own threads and allocations are reported by this sanitizer "
           "(they are not instrumented); the plain and UBSan builds run these tests\n");
    return false;
#else
    char self[512], cache[600];
    find_tool(argv0, "gramps-render");
    snprintf(self, sizeof self, "%s", argv0);
    snprintf(build_dir, sizeof build_dir, "%s/../..", dirname(self));
    snprintf(cache, sizeof cache, "%s/pocl-cache", build_dir);
    setenv("POCL_CACHE_DIR", cache, 0);
    snprintf(cache, sizeof cache, "%s/pocl-cache.lock", build_dir);
    int lock = open(cache, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0 || flock(lock, LOCK_EX) != 0) {
        printf("device_test_start: cannot lock %s: %s\n", cache, strerror(errno));
        exit(1);
    }
    scratch_prefix = prefix;
    return true;
#endif
}

/* buf = <build>/tests/<prefix>-<name> */
static inline void scratch_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/tests/%s-%s", build_dir, scratch_prefix, name);
}

/* Runs `gramps-render -q OPTIONS -o PNG SCENE`, OPTIONS from the printf-style format:
 * the exit status; what it printed is in `out`. Options too long to pass: -1, saying so
 * in `out`. */
static inline int render_to(const char *png, const char *scene, const char *options, ...)
    __attribute__((format(printf, 3, 4)));
static inline int render_to(const char *png, const char *scene, const char *options, ...)
{
    char opts[700], args[1500];            /* run() adds the program's path: 2 KB in all */
    va_list ap;
    va_start(ap, options);
    int n = vsnprintf(opts, sizeof opts, options, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof opts) {
        snprintf(out, sizeof out, "render_to: the options of %s are longer than %zu bytes", png,
                 sizeof opts - 1);
        return -1;
    }
    snprintf(args, sizeof args, "-q %s -o %s %s", opts, png, scene);
    return run(args);
}

/* Renders `scene` with `options` on the CPU, then again with `device_options` added,
 * writing that run's statistics to the scratch file <tag>.json (its path in `stats`);
 * whether both runs succeeded and wrote the same bytes. A failed run is reported with
 * what it printed. */
static inline bool same_image_as_cpu(const char *scene, const char *options,
                                     const char *device_options, const char *tag,
                                     char stats[700])
{
    char cpu[700], dev[700], name[120];
    snprintf(name, sizeof name, "%s-cpu.png", tag);
    scratch_path(cpu, sizeof cpu, name);
    snprintf(name, sizeof name, "%s-device.png", tag);
    scratch_path(dev, sizeof dev, name);
    snprintf(name, sizeof name, "%s.json", tag);
    scratch_path(stats, 700, name);
    int rc = render_to(cpu, scene, "%s", options);
    CHECK_MSG(rc == 0, "%s %s on the CPU: rc %d: %s", options, scene, rc, out);
    if (rc == 0) {
        rc = render_to(dev, scene, "%s %s --stats %s", options, device_options, stats);
        CHECK_MSG(rc == 0, "%s %s %s: rc %d: %s", options, device_options, scene, rc, out);
    }
    return rc == 0 && same_files(cpu, dev);
}

/* The device tests' common render: cornell at 48x48 with `workers` workers and every
 * stage that has a kernel on the device, `extra` options added. */
static inline int render_cornell_on_device(int workers, const char *extra, const char *png)
{
    return render_to(png, "cornell", "-p raytrace -t %d --size 48x48 --set graph.device=opencl %s",
                     workers, extra);
}

/* render_cornell_on_device with the LD_PRELOAD shim tests/plugins/device_cl_count.so
 * writing what the process asked of OpenCL to `counts`. The shim is preloaded into
 * gramps-render alone (env execs it), not into popen's shell, whose exit would otherwise
 * write its own (empty) counts over the render's. */
static inline int render_cornell_counted(int workers, const char *extra, const char *png,
                                         const char *counts)
{
    char plain[sizeof tool];
    snprintf(plain, sizeof plain, "%s", tool);
    int n = snprintf(tool, sizeof tool, "env LD_PRELOAD=%s/tests/plugins/device_cl_count.so "
                     "DEVICE_CL_COUNT=%s %s", build_dir, counts, plain);
    int rc = -1;
    if (n < 0 || (size_t)n >= sizeof tool)
        snprintf(out, sizeof out, "the preloading command is longer than %zu bytes", sizeof tool);
    else
        rc = render_cornell_on_device(workers, extra, png);
    snprintf(tool, sizeof tool, "%s", plain);
    return rc;
}

/* Its CPU image, for the comparisons, into the scratch file cpu.png (its path in png). */
static inline void render_cornell_on_cpu(char png[700])
{
    scratch_path(png, 700, "cpu.png");
    int rc = render_to(png, "cornell", "-p raytrace -t 2 --size 48x48");
    CHECK_MSG(rc == 0, "cornell on the CPU: rc %d: %s", rc, out);
}

/* The stage entry after `from` in a --stats JSON text (from NULL: the first); NULL after
 * the last. */
static inline const char *next_stage(const char *json, const char *from)
{
    const char *key = "{\"name\": ";
    return json ? strstr(from ? from + 1 : json, key) : NULL;
}

/* A stage's entry in a --stats JSON text, from its {"name": "<stage>" on (its fields end
 * at the first '}': they are flat); NULL when the text has none. */
static inline const char *stats_stage(const char *json, const char *stage)
{
    char key[200];
    snprintf(key, sizeof key, "{\"name\": \"%s\"", stage);
    return json ? strstr(json, key) : NULL;
}

/* Where the stage entry's field `name` has its value, NULL when the entry lacks it. */
static inline const char *stage_field(const char *stage, const char *name)
{
    char key[80];
    snprintf(key, sizeof key, "\"%s\": ", name);
    const char *v = stage ? strstr(stage, key) : NULL;
    const char *end = stage ? strchr(stage, '}') : NULL;
    return v && end && v < end ? v + strlen(key) : NULL;
}

/* A number field of a stage entry, 0 when absent. */
static inline unsigned long long stage_number(const char *stage, const char *name)
{
    const char *v = stage_field(stage, name);
    return v ? strtoull(v, NULL, 10) : 0;
}

/* A string field of a stage entry into buf (at most n bytes); false when absent. */
static inline bool stage_string(const char *stage, const char *name, char *buf, size_t n)
{
    const char *v = stage_field(stage, name);
    if (!v || *v != '"') return false;
    snprintf(buf, n, "%.*s", (int)strcspn(v + 1, "\""), v + 1);
    return true;
}

#endif

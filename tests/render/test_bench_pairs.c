/* bench_pipeline_pairs (bench/hybrid.sh's timer) as a user runs it: its flags, its
 * messages, and that a run prints every figure and a verdict for the two sides it names.
 * Nothing here depends on the times measured. The Makefile builds the bench before this
 * test. */
#include "tests/check.h"
#include "tests/cli.h"

static void test_bad_flags_name_themselves(void)
{
    int rc = run("--pairs 0 teapot");
    CHECK_MSG(rc == 2 && strstr(out, "--pairs '0'"), "exit %d:\n%s", rc, out);
    rc = run("--target -1 teapot");
    CHECK_MSG(rc == 2 && strstr(out, "--target '-1'"), "exit %d:\n%s", rc, out);
    rc = run("--against nosuch teapot");
    CHECK_MSG(rc == 2 && strstr(out, "--against nosuch"), "exit %d:\n%s", rc, out);
    rc = run("-p raster --against raster --against-set nosuchstage.k=1 teapot");
    CHECK_MSG(rc == 2 && strstr(out, "--against raster") && strstr(out, "nosuchstage"), "exit %d:\n%s", rc, out);
    rc = run("-q --size 16x16 --pairs 2 no-such-scene.obj");
    CHECK_MSG(rc == 1 && strstr(out, "no-such-scene.obj"), "exit %d:\n%s", rc, out);
}

/* One graph at two settings: the compared side is named <p>_against; every figure and
 * the verdict (against --target) are printed. */
static void test_a_run_prints_both_sides_and_a_verdict(void)
{
    int rc = run("-q -t 1 -p raster --msaa 4 --against raster --against-set graph.msaa=1 "
                 "--size 32x32 --pairs 6 --target 1.6 teapot");
    CHECK_MSG(rc == 0, "exit %d:\n%s", rc, out);
    static const char *const lines[] = {
        "raster_frame_ms_teapot_1t ", "raster_against_frame_ms_teapot_1t ",
        "raster_vs_raster_against_teapot_1t ", "raster_vs_raster_against_teapot_1t_ci_lo ",
        "raster_vs_raster_against_teapot_1t_ci_hi ", "raster_vs_raster_against_teapot_1t_min ",
        "raster_vs_raster_against_teapot_1t_pairs 6 count"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) CHECK_MSG(strstr(out, lines[i]), "%s missing:\n%s", lines[i], out);
    CHECK_MSG(strstr(out, "raster_vs_raster_against_teapot_1t_target ") && strstr(out, "at most 1.60") &&
                  strstr(out, "over 6 pairs"), "%s", out);
    rc = run("-q -t 2 -p hybrid --size 32x32 --pairs 3 teapot");   /* fewer than 6: no range */
    CHECK_MSG(rc == 0 && strstr(out, "hybrid_vs_raytrace_teapot_2t_target undecided(pairs<6)"), "exit %d:\n%s", rc, out);
    rc = run("-q -p raster --size 16x16 --pairs 2 teapot");   /* no -t: the workers the run had */
    CHECK_MSG(rc == 0 && !strstr(out, "_0t"), "exit %d:\n%s", rc, out);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[512];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(tool, sizeof tool, "%s/../../bench/bench_pipeline_pairs", dirname(self));
    RUN(test_bad_flags_name_themselves);
    RUN(test_a_run_prints_both_sides_and_a_verdict);
    return check_finish();
}

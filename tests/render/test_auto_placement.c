/* test_auto_placement.c — placement.c's `device = auto` decision, as PTask places
 * (docs/opencl.md, placement), from measurements given here instead of timed runs, so
 * that every branch is checked whatever the machine's speed: a type's first run goes to
 * the device, its second to the CPU, later ones to the side faster per task, and within
 * a tenth of each other to the side its input is on; each reason names both times. */
#include "tests/check.h"
#include "compose/internal.h"

#include <string.h>

static void test_calibration(void)
{
    static const cp_stage_type t = {0};
    char why[CP_PLACEMENT_WHY];
    CHECK(cp_auto_place(&t, false, why));
    CHECK_MSG(strstr(why, "calibrating, a first run on the device") != NULL, "%s", why);
    cp_auto_measured(&t, true, 8.0, 4);
    CHECK(!cp_auto_place(&t, true, why));
    CHECK_MSG(strstr(why, "calibrating, a run on the CPU") && strstr(why, "2.000 ms"), "%s", why);
}

static void test_faster_side_wins_whatever_the_input(void)
{
    static const cp_stage_type t = {0};
    char why[CP_PLACEMENT_WHY];
    cp_auto_measured(&t, true, 1.0, 10);   /* 0.1 ms a task on the device */
    cp_auto_measured(&t, false, 5.0, 10);  /* 0.5 on the CPU */
    CHECK(cp_auto_place(&t, false, why));
    CHECK_MSG(!strcmp(why, "auto: 0.100 ms a task on the device, 0.500 on the CPU"), "%s", why);
    cp_auto_measured(&t, true, 9.0, 10);   /* the device slower now: the latest run counts */
    CHECK(!cp_auto_place(&t, true, why));
    CHECK_MSG(!strcmp(why, "auto: 0.900 ms a task on the device, 0.500 on the CPU"), "%s", why);
}

static void test_within_a_tenth_follows_the_input(void)
{
    static const cp_stage_type t = {0};
    char why[CP_PLACEMENT_WHY];
    cp_auto_measured(&t, true, 1.05, 10);
    cp_auto_measured(&t, false, 1.0, 10);
    CHECK(cp_auto_place(&t, true, why));
    CHECK_MSG(strstr(why, "within 10%: its input is on the device") != NULL, "%s", why);
    CHECK(!cp_auto_place(&t, false, why));
    CHECK_MSG(strstr(why, "within 10%: its input is on the CPU") != NULL, "%s", why);
}

int main(void)
{
    RUN(test_calibration);
    RUN(test_faster_side_wins_whatever_the_input);
    RUN(test_within_a_tenth_follows_the_input);
    return check_finish();
}

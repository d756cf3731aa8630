/* test_device_relaunch.c — Intersect's tasks sent back after their batch's launch
 * (compose/device.c; docs/opencl.md, Device queues). With test.ray-pass
 * (tests/plugins/ray_pass.c) after rt.intersect and every stage with a kernel on the
 * device, Intersect's input is appended by Shade on the device (its launch gathers it)
 * and its in-place output `pass-in` is a device queue of 2 packets that is not part of a
 * cycle's backward binding, so its reservations fail like any forward output's: a batch
 * of many packets launches them all, the first two tasks reserve `pass-in`, the others
 * go back and are launched again. The launch gave back their appended entries (the
 * elements are whole in their host packets), so the second launch must read the host
 * packets, not the freed entries. Checked: the image is the CPU graph's; rt_intersect
 * launched more work-items than Intersect traced rays (packets launched twice, counted
 * by the LD_PRELOAD shim tests/plugins/device_cl_count.so); the plain queues hold at
 * most their capacity, the push-fed ones the README's bound, on the host and the device.
 *
 * relaunches_from_slot (a task sent back whose packet holds a slot of the device queue)
 * stays 0 here, and the test prints it rather than asserting it: with one worker and
 * one producer into the queue, slots and reservations are taken in the same order from
 * the same capacity, so exactly the tasks that found no free slot are the ones sent back
 * (docs/opencl.md). Cornell at 48x48, one worker, PoCL. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"

static char cpu_png[700], plugin[600], layer[600];

/* What one task can start in a push-fed queue (README "Capacity"; test_footprint_bounds):
 * Shade makes at most a reflection packet and (cornell's one light) a shadow packet of
 * each hits packet, and Shade and Shadow-Intersect two contributions packets in one
 * subqueue. A batch's tasks after its first are not held back by a full queue set (a
 * push into a set reserves nothing, and a batch runs its tasks without asking
 * gr_stage_blocked again), so `contributions` takes up to a batch's 32 tasks' packets. */
#define ONE_TASK 2u
#define BATCH 32u

static void write_layer(void)
{
    scratch_path(layer, sizeof layer, "pass.graph");
    FILE *f = fopen(layer, "w");
    CHECK(f && fputs("[stage pass]\ntype = test.ray-pass\nafter = intersect\ndevice = opencl\n", f) >= 0);
    if (f) fclose(f);
}

/* rt_intersect's work-items in the shim's counts, 0 when absent. */
static unsigned long long intersect_items(const char *counts)
{
    char *text = slurp(counts, NULL);
    const char *at = text ? strstr(text, "items rt_intersect ") : NULL;
    unsigned long long n = at ? strtoull(at + strlen("items rt_intersect "), NULL, 10) : 0;
    free(text);
    return n;
}

/* A queue entry's bound in packets per subqueue (one worker). */
static unsigned long long bound_of(const char *name, unsigned long long capacity)
{
    if (!strncmp(name, "rays-", 5) || !strncmp(name, "shadow-rays-", 12)) return capacity + ONE_TASK - 1;
    if (!strcmp(name, "contributions")) return capacity - 1 + BATCH * ONE_TASK + 1;
    return capacity;
}

/* Every queue of the --stats text within its bound, per subqueue and in all. */
static void check_queues(const char *js)
{
    int queues = 0;
    for (const char *s = next_stage(js, NULL); s; s = next_stage(js, s)) {
        if (!stage_field(s, "reserved_peak_packets")) continue;        /* a stage */
        char name[64] = "";
        stage_string(s, "name", name, sizeof name);
        unsigned long long cap = stage_number(s, "capacity"), subs = stage_number(s, "subqueues");
        unsigned long long bound = bound_of(name, cap), peak = stage_number(s, "reserved_peak_packets");
        unsigned long long sub_peak = stage_number(s, "peak_subqueue_packets");
        CHECK_MSG(peak <= bound * (subs ? subs : 1) && sub_peak <= bound, "queue '%s': peak %llu "
                  "(a subqueue's %llu), bound %llu a subqueue, capacity %llu", name, peak, sub_peak,
                  bound, cap);
        queues++;
    }
    CHECK_MSG(queues >= 6, "%d queues in the statistics", queues);
}

static void test_sent_back_tasks(void)
{
    char png[700], stats[700], counts[700], extra[1800];
    scratch_path(png, sizeof png, "dev.png");
    scratch_path(stats, sizeof stats, "dev.json");
    scratch_path(counts, sizeof counts, "dev.calls");
    remove(counts);
    snprintf(extra, sizeof extra, "--plugin %.500s --graph %.500s --set pass-in.capacity=2 --stats %.500s",
             plugin, layer, stats);
    int rc = render_cornell_counted(1, extra, png, counts);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, out);
    if (rc != 0) return;
    CHECK_MSG(same_files(cpu_png, png), "tasks launched again: not the CPU image");
    char *js = slurp(stats, NULL);
    CHECK_MSG(js != NULL, "no statistics in %s", stats);
    const char *in = stats_stage(js, "intersect-0");
    unsigned long long traced = (unsigned long long)stat_of(js, "secondary");
    unsigned long long items = intersect_items(counts);
    CHECK_MSG(traced > 0 && items > traced, "rt_intersect launched %llu work-items for %llu traced "
              "rays: no task was launched again", items, traced);
    unsigned long long peak = stage_number(in, "device_queue_peak");
    unsigned long long cap = stage_number(in, "device_queue_capacity");
    CHECK_MSG(cap == 2 && peak >= 1 && peak <= cap, "pass-in on the device: peak %llu of %llu", peak, cap);
    CHECK_MSG(stage_field(in, "relaunches_from_slot") != NULL, "Intersect's statistics lack "
              "relaunches_from_slot");
    check_queues(js);
    printf("rt_intersect: %llu work-items launched for %llu rays traced; pass-in on the device: "
           "peak %llu of %llu; relaunches_from_slot %llu\n", items, traced, peak, cap,
           stage_number(in, "relaunches_from_slot"));
    free(js);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "device-relaunch")) return check_finish();
    snprintf(plugin, sizeof plugin, "%s/tests/plugins/ray_pass.so", build_dir);
    write_layer();
    render_cornell_on_cpu(cpu_png);
    RUN(test_sent_back_tasks);
    return check_finish();
}

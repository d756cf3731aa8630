/* test_device_relaunch.c — batches within their outputs' room (compose/device.c;
 * gramps/shader_stage.c, take_batch; docs/opencl.md, Tasks sent back after a launch).
 * With test.ray-pass (tests/plugins/ray_pass.c) after rt.intersect and every stage with
 * a kernel on the device, Intersect's input is appended by Shade on the device (its
 * launch gathers it) and its in-place output `pass-in` is a device queue of 2 packets
 * that is not part of a cycle's backward binding, so a batch of Intersect takes only as
 * many ray packets as `pass-in` has room for; Shade and Shadow-Intersect push into the
 * queue set `contributions` (capacity 4), and a batch takes no more tasks than can start
 * under the CPU's rule (no subqueue full). Checked: the image is the CPU graph's; every
 * kernel ran one work-item per ray it traced or shaded (no task was launched again,
 * counted by the LD_PRELOAD shim tests/plugins/device_cl_count.so); the plain queues
 * hold at most their capacity, the push-fed ones the README's bound, on the host and
 * the device.
 *
 * relaunches_from_slot (a task sent back whose packet holds a slot of the device queue)
 * stays 0 here, and the test prints it rather than asserting it (docs/opencl.md).
 * Cornell at 48x48, one worker, PoCL. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"

static char cpu_png[700], plugin[600], layer[600];

/* What one task can start in a push-fed queue (README "Capacity"; test_footprint_bounds):
 * Shade makes at most a reflection packet and (cornell's one light) a shadow packet of
 * each hits packet, and Shade and Shadow-Intersect two contributions packets in one
 * subqueue. One worker: a queue set's bound is capacity - 1 + (ONE_TASK + 1), batched
 * tasks included (each is held back while a subqueue is full, as on the CPU). */
#define ONE_TASK 2u

static void write_layer(void)
{
    scratch_path(layer, sizeof layer, "pass.graph");
    FILE *f = fopen(layer, "w");
    CHECK(f && fputs("[stage pass]\ntype = test.ray-pass\nafter = intersect\ndevice = opencl\n", f) >= 0);
    if (f) fclose(f);
}

/* A kernel's work-items in the shim's counts ("items KERNEL N"), 0 when absent. */
static unsigned long long kernel_items(const char *counts, const char *kernel)
{
    char *text = slurp(counts, NULL), key[64];
    snprintf(key, sizeof key, "items %s ", kernel);
    const char *at = text ? strstr(text, key) : NULL;
    unsigned long long n = at ? strtoull(at + strlen(key), NULL, 10) : 0;
    free(text);
    return n;
}

/* A queue entry's bound in packets per subqueue (one worker). */
static unsigned long long bound_of(const char *name, unsigned long long capacity)
{
    if (!strncmp(name, "rays-", 5) || !strncmp(name, "shadow-rays-", 12)) return capacity + ONE_TASK - 1;
    if (!strcmp(name, "contributions")) return capacity - 1 + ONE_TASK + 1;
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

static void test_batches_within_room(void)
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
    CHECK_MSG(same_files(cpu_png, png), "not the CPU image");
    char *js = slurp(stats, NULL);
    CHECK_MSG(js != NULL, "no statistics in %s", stats);
    const char *in = stats_stage(js, "intersect-0");
    unsigned long long traced = (unsigned long long)stat_of(js, "secondary");
    unsigned long long shaded = traced + (unsigned long long)stat_of(js, "primary");
    unsigned long long shadow = (unsigned long long)stat_of(js, "shadow");
    unsigned long long items = kernel_items(counts, "rt_intersect");
    unsigned long long shade_items = kernel_items(counts, "rt_shade");
    unsigned long long shadow_items = kernel_items(counts, "rt_occluded");
    CHECK_MSG(traced > 0 && items == traced, "rt_intersect launched %llu work-items for %llu traced "
              "rays: tasks were launched again", items, traced);
    CHECK_MSG(shade_items == shaded, "rt_shade launched %llu work-items for %llu rays shaded",
              shade_items, shaded);
    CHECK_MSG(shadow > 0 && shadow_items == shadow, "rt_occluded launched %llu work-items for %llu "
              "shadow rays", shadow_items, shadow);
    unsigned long long peak = stage_number(in, "device_queue_peak");
    unsigned long long cap = stage_number(in, "device_queue_capacity");
    CHECK_MSG(cap == 2 && peak >= 1 && peak <= cap, "pass-in on the device: peak %llu of %llu", peak, cap);
    CHECK_MSG(stage_field(in, "relaunches_from_slot") != NULL, "Intersect's statistics lack "
              "relaunches_from_slot");
    check_queues(js);
    printf("work-items launched: rt_intersect %llu for %llu rays traced, rt_shade %llu for %llu, "
           "rt_occluded %llu for %llu; pass-in on the device: peak %llu of %llu; "
           "relaunches_from_slot %llu\n", items, traced, shade_items, shaded, shadow_items, shadow,
           peak, cap, stage_number(in, "relaunches_from_slot"));
    free(js);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "device-relaunch")) return check_finish();
    snprintf(plugin, sizeof plugin, "%s/tests/plugins/ray_pass.so", build_dir);
    write_layer();
    render_cornell_on_cpu(cpu_png);
    RUN(test_batches_within_room);
    return check_finish();
}

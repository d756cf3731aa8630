/* placement.c — where a stage with `device = auto` runs, as PTask places tasks: on the
 * side where its measured time per task is lower, and, while the two are within a tenth
 * of each other, where its input comes from (the stage that feeds it runs on the device:
 * its packets are there already). The times come from the runs themselves, per stage
 * type, kept for the process: a stage type's first run under `auto` goes to the device,
 * its second to the CPU (the calibration), and every later one to the faster side,
 * measured again each run. The image is the same wherever a stage runs. */
#include "compose/internal.h"

#include <pthread.h>
#include <string.h>

#define MEASURED_TYPES 64

/* One stage type's busy time and tasks on each side (0: the device, 1: the CPU). */
typedef struct measured {
    const cp_stage_type *type;
    double busy_ms[2];
    uint64_t tasks[2];
} measured;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static measured table[MEASURED_TYPES];
static int ntypes;

/* t's entry, made if there is room; NULL when the table is full. Lock held. */
static measured *entry_of(const cp_stage_type *t)
{
    for (int i = 0; i < ntypes; i++)
        if (table[i].type == t) return &table[i];
    if (ntypes == MEASURED_TYPES) return NULL;
    table[ntypes] = (measured){.type = t};
    return &table[ntypes++];
}

static double per_task(const measured *m, int side)
{
    return m->busy_ms[side] / (double)m->tasks[side];
}

bool cp_auto_place(const cp_stage_type *t, bool input_on_device, char why[CP_PLACEMENT_WHY])
{
    pthread_mutex_lock(&lock);
    const measured *m = entry_of(t);
    bool device;
    if (!m || !m->tasks[0]) {
        device = true;
        snprintf(why, CP_PLACEMENT_WHY, "auto: calibrating, a first run on the device");
    } else if (!m->tasks[1]) {
        device = false;
        snprintf(why, CP_PLACEMENT_WHY, "auto: calibrating, a run on the CPU to compare with "
                 "the device's %.3f ms a task", per_task(m, 0));
    } else {
        const double dev = per_task(m, 0), cpu = per_task(m, 1);
        const bool close = dev <= cpu * 1.1 && cpu <= dev * 1.1;
        device = close ? input_on_device : dev < cpu;
        snprintf(why, CP_PLACEMENT_WHY, "auto: %.3f ms a task on the device, %.3f on the CPU%s",
                 dev, cpu, close ? (input_on_device ? " (within 10%: its input is on the device)"
                                                    : " (within 10%: its input is on the CPU)") : "");
    }
    pthread_mutex_unlock(&lock);
    return device;
}

void cp_auto_measured(const cp_stage_type *t, bool on_device, double busy_ms, uint64_t tasks)
{
    if (!tasks) return;
    pthread_mutex_lock(&lock);
    measured *m = entry_of(t);
    if (m) {
        /* The latest run's figures: a side's time changes with the scene and the frame. */
        m->busy_ms[on_device ? 0 : 1] = busy_ms;
        m->tasks[on_device ? 0 : 1] = tasks;
    }
    pthread_mutex_unlock(&lock);
}

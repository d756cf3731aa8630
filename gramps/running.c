/* running.c — which stage's program each thread is running, for crash reports: a
 * signal handler on the faulting thread asks gr_running_stage and names the stage. One
 * thread-local pointer per OS thread; a Thread instance resumed on another worker is
 * recorded there by that worker's gr_inst_run. */
#include "gramps/internal.h"

static _Thread_local const gr_stage_rt *running;

const gr_stage_rt *gr_running_set(const gr_stage_rt *s)
{
    const gr_stage_rt *was = running;
    running = s;
    return was;
}

bool gr_running_stage(const char **name, const char **origin)
{
    const gr_stage_rt *s = running;       /* one load: the handler may interrupt a set */
    if (!s) return false;
    *name = s->name;
    *origin = s->origin;
    return true;
}

/* apps.c — the table of built-in applications, their parameters, and one checked run
 * (build, launch, wait, compare with the serial implementation). */
#include "apps/apps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ap_app *const apps[] = {&ap_histogram, &ap_srad, &ap_fm_radio, &ap_mergesort, &ap_gaussian,
                                     &ap_spheres};
#define NAPPS ((int)(sizeof apps / sizeof *apps))

const ap_app *ap_app_at(int i) { return i >= 0 && i < NAPPS ? apps[i] : NULL; }

const ap_app *ap_find(const char *name)
{
    for (int i = 0; i < NAPPS; i++)
        if (!strcmp(apps[i]->name, name)) return apps[i];
    return NULL;
}

const char *ap_names(void) { return "histogram, srad, fm-radio, mergesort, gaussian, spheres"; }

int ap_config_init(ap_config *c, const char *name, char err[AP_MSG_MAX])
{
    memset(c, 0, sizeof *c);
    c->app = ap_find(name);
    if (!c->app) {
        snprintf(err, AP_MSG_MAX, "'%s' is no built-in app (the apps: %s)", name, ap_names());
        return -1;
    }
    for (int i = 0; i < c->app->nparams; i++) c->values[i] = c->app->params[i].def;
    return 0;
}

static int param_index(const ap_app *a, const char *name, size_t len)
{
    for (int i = 0; i < a->nparams; i++)
        if (strlen(a->params[i].name) == len && !strncmp(a->params[i].name, name, len)) return i;
    return -1;
}

/* The names of the app's parameters, for messages. */
static void param_names(const ap_app *a, char *out, size_t size)
{
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < a->nparams && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%s", i ? ", " : "", a->params[i].name);
}

int ap_config_set(ap_config *c, const char *assignment, char err[AP_MSG_MAX])
{
    const char *key = strncmp(assignment, "graph.", 6) ? assignment : assignment + 6;
    const char *eq = strchr(key, '=');
    if (!eq) {
        snprintf(err, AP_MSG_MAX, "expected graph.KEY=VALUE");
        return -1;
    }
    int i = param_index(c->app, key, (size_t)(eq - key));
    if (i < 0) {
        char names[256];
        param_names(c->app, names, sizeof names);
        snprintf(err, AP_MSG_MAX, "%s has no parameter '%.*s' (its parameters: %s)",
                 c->app->name, (int)(eq - key), key, names);
        return -1;
    }
    const ap_param *p = &c->app->params[i];
    char *end;
    errno = 0;
    long long v = strtoll(eq + 1, &end, 10);
    if (errno || end == eq + 1 || *end || v < p->min || v > p->max) {
        snprintf(err, AP_MSG_MAX, "%s.%s must be an integer in [%" PRId64 ", %" PRId64 "]",
                 c->app->name, p->name, p->min, p->max);
        return -1;
    }
    c->values[i] = v;
    return 0;
}

int64_t ap_value(const ap_config *c, const char *param)
{
    int i = param_index(c->app, param, strlen(param));
    return i < 0 ? 0 : c->values[i];
}

int ap_run(const ap_config *c, const gr_launch_opts *opts, ap_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->graph = gr_graph_create();
    if (!out->graph) {
        out->status = GR_ERR_NOMEM;
        snprintf(out->line, sizeof out->line, "out of memory");
        return 1;
    }
    void *state = c->app->build(out->graph, c->values, out->line);
    if (!state) { out->status = GR_ERR_INVALID; return 1; }
    out->status = gr_launch(out->graph, opts, NULL, 0);
    if (out->status == GR_OK) out->status = gr_wait(out->graph);
    if (out->status != GR_OK) snprintf(out->line, sizeof out->line, "%s", gr_error(out->graph));
    else out->matches = c->app->check(state, out->graph, out->line) == 0;
    c->app->destroy(state);
    return out->status == GR_OK && out->matches ? 0 : 1;
}

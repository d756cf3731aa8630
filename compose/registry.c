/* registry.c — the named packet formats and stage types a graph can use. */
#include "compose/internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

cp_registry *cp_registry_new(void) { return calloc(1, sizeof(cp_registry)); }

void cp_registry_free(cp_registry *r)
{
    if (!r) return;
    cp_list_free(&r->formats);
    cp_list_free(&r->stages);
    for (int i = 0; i < r->origins.n; i++) free(r->origins.items[i]);
    cp_list_free(&r->origins);
    cp_list_free(&r->images);
    cp_list_free(&r->kernels);
    cp_list_free(&r->resources);
    for (int i = 0; i < r->plugins.n; i++) dlclose(r->plugins.items[i]);
    cp_list_free(&r->plugins);
    for (int i = 0; i < r->plugin_dirs.n; i++) free(r->plugin_dirs.items[i]);
    cp_list_free(&r->plugin_dirs);
    free(r);
}

const cp_format *cp_find_format(const cp_registry *r, const char *name)
{
    for (int i = 0; i < r->formats.n; i++) {
        const cp_format *f = r->formats.items[i];
        if (!strcmp(f->name, name)) return f;
    }
    return NULL;
}

const cp_stage_type *cp_find_stage(const cp_registry *r, const char *name)
{
    for (int i = 0; i < r->stages.n; i++) {
        const cp_stage_type *t = r->stages.items[i];
        if (!strcmp(t->name, name)) return t;
    }
    return NULL;
}

static int check_format(const cp_format *f, char err[CP_ERR_MAX])
{
    if (!f->name || !*f->name) return cp_fail(err, "a packet format has no name");
    if (f->kind == GR_OPAQUE && f->packet_bytes == 0 && (f->element_bytes == 0 || f->default_elements == 0))
        return cp_fail(err, "format '%s': an opaque format needs packet_bytes, or "
                       "element_bytes and default_elements", f->name);
    if (f->kind == GR_COLLECTION && (f->header_bytes < 4 || f->element_bytes == 0 ||
                                     f->default_elements == 0))
        return cp_fail(err, "format '%s': a collection needs header_bytes >= 4, "
                       "element_bytes and default_elements", f->name);
    return 0;
}

int cp_register_format(cp_registry *r, const cp_format *f, char err[CP_ERR_MAX])
{
    if (check_format(f, err)) return -1;
    if (cp_find_format(r, f->name)) return cp_fail(err, "format '%s' is registered twice", f->name);
    return cp_list_add(&r->formats, (void *)f) ? cp_fail(err, "out of memory") : 0;
}

static int check_ports(const cp_registry *r, const cp_stage_type *t, char err[CP_ERR_MAX])
{
    for (int i = 0; i < t->nports; i++) {
        const cp_port *p = &t->ports[i];
        if (!p->name || !p->format)
            return cp_fail(err, "stage type '%s': port %d has no name or format", t->name, i);
        if (!cp_find_format(r, p->format))
            return cp_fail(err, "stage type '%s': port '%s' uses format '%s', which is not "
                           "registered (register formats first)", t->name, p->name, p->format);
        if ((p->mode == GR_BIND_PUSH || p->mode == GR_BIND_INPLACE) && t->kind != GR_SHADER)
            return cp_fail(err, "stage type '%s': port '%s' pushes or forwards in place, "
                           "which only Shader stages do", t->name, p->name);
        for (int k = 0; k < i; k++)
            if (!strcmp(t->ports[k].name, p->name))
                return cp_fail(err, "stage type '%s': two ports named '%s'", t->name, p->name);
    }
    return 0;
}

/* The counts and arrays a type declares: a plugin's type is checked before any of its
 * arrays is read. */
static int check_counts(const cp_stage_type *t, char err[CP_ERR_MAX])
{
    if (t->kind != GR_THREAD && t->kind != GR_SHADER && t->kind != GR_FIXED)
        return cp_fail(err, "stage type '%s': kind %d is not GR_THREAD, GR_SHADER or GR_FIXED",
                       t->name, (int)t->kind);
    if (t->nports < 0 || t->nports > CP_MAX_PORTS || (t->nports && !t->ports))
        return cp_fail(err, "stage type '%s': nports %d with %s ports array (0..%d ports)",
                       t->name, t->nports, t->ports ? "a" : "no", CP_MAX_PORTS);
    if (t->nparams < 0 || t->nparams > CP_MAX_PARAMS || (t->nparams && !t->params))
        return cp_fail(err, "stage type '%s': nparams %d with %s params array (0..%d params)",
                       t->name, t->nparams, t->params ? "a" : "no", CP_MAX_PARAMS);
    if (t->nresources < 0 || t->nresources > CP_MAX_RESOURCES || (t->nresources && !t->resources))
        return cp_fail(err, "stage type '%s': nresources %d with %s resources array (0..%d)",
                       t->name, t->nresources, t->resources ? "a" : "no", CP_MAX_RESOURCES);
    return 0;
}

void cp_origin_of(const cp_stage_type *t, char out[GR_ORIGIN_MAX])
{
    Dl_info stage, self;
    bool found = dladdr((void *)t->main, &stage) && stage.dli_fname;
    bool builtin = !found || (dladdr((void *)cp_origin_of, &self) && self.dli_fname &&
                              !strcmp(self.dli_fname, stage.dli_fname));
    snprintf(out, GR_ORIGIN_MAX, "type %s, %s%s", t->name, builtin ? "built in" : "plugin ",
             builtin ? "" : stage.dli_fname);
}

static char *origin_of(const cp_stage_type *t)
{
    char *out = malloc(GR_ORIGIN_MAX);
    if (out) cp_origin_of(t, out);
    return out;
}

/* t into r's stage types, with its origin at the same index. */
static int add_stage(cp_registry *r, const cp_stage_type *t, char err[CP_ERR_MAX])
{
    char *origin = origin_of(t);
    if (!origin || cp_list_add(&r->origins, origin)) {
        free(origin);
        return cp_fail(err, "out of memory");
    }
    if (!cp_list_add(&r->stages, (void *)t)) return 0;
    free(r->origins.items[--r->origins.n]);
    return cp_fail(err, "out of memory");
}

int cp_register_stage(cp_registry *r, const cp_stage_type *t, char err[CP_ERR_MAX])
{
    if (!t->name || !*t->name || !t->main)
        return cp_fail(err, "a stage type has no name or no main function");
    if (check_counts(t, err)) return -1;
    if (check_ports(r, t, err) || cp_check_resource_uses(r, t, err)) return -1;
    if (cp_find_stage(r, t->name)) return cp_fail(err, "stage type '%s' is registered twice", t->name);
    return add_stage(r, t, err);
}

const char *cp_stage_origin(const cp_registry *r, const cp_stage_type *t)
{
    for (int i = 0; i < r->stages.n; i++)
        if (r->stages.items[i] == t) return r->origins.items[i];
    return NULL;
}

const cp_image_stage_type *cp_image_stage_of(const cp_registry *r, const cp_stage_type *t)
{
    for (int i = 0; i < r->images.n; i++) {
        const cp_image_stage_type *im = r->images.items[i];
        if (&im->stage == t) return im;
    }
    return NULL;
}

const cp_kernel *cp_kernel_of(const cp_registry *r, const cp_stage_type *t)
{
    for (int i = 0; i < r->kernels.n; i++) {
        const cp_kernel_stage_type *k = r->kernels.items[i];
        if (&k->stage == t) return &k->kernel;
    }
    return NULL;
}

int cp_register_kernel_stage(cp_registry *r, const cp_kernel_stage_type *kt, char err[CP_ERR_MAX])
{
    const cp_stage_type *t = &kt->stage;
    const cp_kernel *k = &kt->kernel;
    const char *name = t->name ? t->name : "?";
    if (t->kind != GR_SHADER)
        return cp_fail(err, "stage type '%s': only Shader types may bring an OpenCL kernel", name);
    if (!k->source || !k->name || !k->file || !k->buffers)
        return cp_fail(err, "stage type '%s': its kernel needs a source, a name, a file and a "
                       "buffers hook", name);
    if (k->result_bytes > CP_KERNEL_RESULTS_MAX)
        return cp_fail(err, "stage type '%s': kernel results of %zu bytes an element (at most %d "
                       "a packet)", name, k->result_bytes, CP_KERNEL_RESULTS_MAX);
    if (k->nappends < 0 || k->nappends > CP_KERNEL_APPENDS)
        return cp_fail(err, "stage type '%s': %d kernel appends (at most %d)", name, k->nappends,
                       CP_KERNEL_APPENDS);
    for (int i = 0; i < k->nappends; i++)
        if (k->appends[i].device_bytes < 8 || k->appends[i].output < 0)
            return cp_fail(err, "stage type '%s': kernel append %d: output %d, %zu bytes on the device "
                           "(at least 8: a handle)", name, i, k->appends[i].output,
                           k->appends[i].device_bytes);
    if (cp_register_stage(r, t, err)) return -1;
    if (cp_list_add(&r->kernels, (void *)kt)) return cp_fail(err, "out of memory");
    return 0;
}

/* A tile function, a halo, and no ports (it reads and writes images, not queues). */
int cp_register_image_stage(cp_registry *r, const cp_image_stage_type *im, char err[CP_ERR_MAX])
{
    const cp_stage_type *t = &im->stage;
    if (!t->name || !*t->name || !im->tile)
        return cp_fail(err, "an image-space stage type has no name or no tile function");
    if (im->halo < 0) return cp_fail(err, "image-space stage type '%s': halo %d < 0", t->name, im->halo);
    if (check_counts(t, err)) return -1;
    if (t->nports || t->main)
        return cp_fail(err, "image-space stage type '%s' has ports or a main function (it "
                       "reads and writes images, not queues)", t->name);
    if (cp_check_resource_uses(r, t, err)) return -1;
    if (cp_find_stage(r, t->name)) return cp_fail(err, "stage type '%s' is registered twice", t->name);
    if (cp_list_add(&r->images, (void *)im)) return cp_fail(err, "out of memory");
    return add_stage(r, t, err);
}

static const char *kind_name(gr_stage_kind k)
{
    return k == GR_SHADER ? "Shader" : k == GR_FIXED ? "Fixed-function" : "Thread";
}

static const char *mode_name(gr_bind_mode m)
{
    switch (m) {
    case GR_BIND_INPUT: return "in";
    case GR_BIND_OUTPUT: return "out";
    case GR_BIND_PUSH: return "push";
    case GR_BIND_INPLACE: return "in-place";
    }
    return "?";
}

static const char *param_type_name(cp_param_type t)
{
    return t == CP_INT ? "int" : t == CP_FLOAT ? "float" : t == CP_BOOL ? "bool" : "string";
}

static void print_stage(const cp_registry *r, const cp_stage_type *t, FILE *out)
{
    const cp_image_stage_type *im = cp_image_stage_of(r, t);
    if (im)
        fprintf(out, "%s (image-space, halo %d%s)%s%s\n", t->name, im->halo,
                im->halo_of ? " or as its parameters say" : "", t->help ? ": " : "",
                t->help ? t->help : "");
    else fprintf(out, "%s (%s%s)%s%s\n", t->name, kind_name(t->kind),
            t->instanced == CP_PER_EVERY_SUBQUEUE ? ", an instance per subqueue, fed or not"
            : t->instanced ? ", instanced per subqueue" : "", t->help ? ": " : "",
            t->help ? t->help : "");
    const cp_kernel *k = cp_kernel_of(r, t);
    if (k)
        fprintf(out, "    kernel %s (%s): may run on an OpenCL device (device = opencl|auto)\n",
                k->name, k->file);
    for (int i = 0; i < t->nports; i++)
        fprintf(out, "    port  %-14s %-8s %s%s%s\n", t->ports[i].name, mode_name(t->ports[i].mode),
                t->ports[i].format, t->ports[i].help ? "  " : "",
                t->ports[i].help ? t->ports[i].help : "");
    for (int i = 0; i < t->nparams; i++) {
        const cp_param *p = &t->params[i];
        fprintf(out, "    param %-14s %-6s default %s", p->name, param_type_name(p->type),
                p->def ? p->def : "(required)");
        if (p->min != 0 || p->max != 0) fprintf(out, ", %g..%g", p->min, p->max);
        fprintf(out, "%s%s\n", p->help ? "  " : "", p->help ? p->help : "");
    }
    cp_print_resource_uses(t, out);
}

static void print_format(const cp_format *f, FILE *out)
{
    if (f->kind == GR_OPAQUE && f->packet_bytes)
        fprintf(out, "%s: opaque, %zu bytes", f->name, f->packet_bytes);
    else if (f->kind == GR_OPAQUE)
        fprintf(out, "%s: opaque, %zu-byte header + %u x %zu-byte records (at most %u)", f->name,
                f->header_bytes, f->default_elements, f->element_bytes,
                f->max_elements ? f->max_elements : f->default_elements);
    else
        fprintf(out, "%s: collection, %zu-byte header + %u x %zu-byte elements (at most %u)",
                f->name, f->header_bytes, f->default_elements, f->element_bytes,
                f->max_elements ? f->max_elements : f->default_elements);
    fprintf(out, "%s%s\n", f->help ? ". " : "", f->help ? f->help : "");
}

void cp_registry_print(const cp_registry *r, FILE *out)
{
    fprintf(out, "Stage types:\n");
    for (int i = 0; i < r->stages.n; i++) print_stage(r, r->stages.items[i], out);
    fprintf(out, "\nPacket formats:\n");
    for (int i = 0; i < r->formats.n; i++) print_format(r->formats.items[i], out);
    fprintf(out, "\nFrame resources:\n");
    for (int i = 0; i < r->resources.n; i++) cp_print_resource(r->resources.items[i], out);
}

int cp_registry_print_stage(const cp_registry *r, const char *name, FILE *out)
{
    const cp_stage_type *t = cp_find_stage(r, name);
    if (!t) return -1;
    print_stage(r, t, out);
    for (int i = 0; i < t->nports; i++) {
        bool seen = false;
        for (int k = 0; k < i; k++) seen |= !strcmp(t->ports[k].format, t->ports[i].format);
        const cp_format *f = seen ? NULL : cp_find_format(r, t->ports[i].format);
        if (f) print_format(f, out);
    }
    return 0;
}

int cp_plugin_path_add(cp_registry *r, const char *dirs, char err[CP_ERR_MAX])
{
    for (const char *p = dirs; *p;) {
        size_t len = strcspn(p, ":");
        char *dir = len ? strndup(p, len) : NULL;
        if (len && (!dir || cp_list_add(&r->plugin_dirs, dir))) {
            free(dir);
            return cp_fail(err, "out of memory");
        }
        p += len + (p[len] == ':');
    }
    return 0;
}

/* The plugin path as "a:b" for messages. */
static void plugin_path_text(const cp_registry *r, char *buf, size_t size)
{
    buf[0] = 0;
    for (int i = 0, used = 0; i < r->plugin_dirs.n && used < (int)size; i++)
        used += snprintf(buf + used, size - (size_t)used, "%s%s", i ? ":" : "",
                         (const char *)r->plugin_dirs.items[i]);
}

/* A name without '/' is looked for in the plugin path, first match wins: given to
 * dlopen as it is, it would be searched for among the system's libraries instead. */
static int resolve_plugin(const cp_registry *r, const char *name, char path[4096],
                          char err[CP_ERR_MAX])
{
    if (strchr(name, '/')) {
        snprintf(path, 4096, "%s", name);
        return 0;
    }
    for (int i = 0; i < r->plugin_dirs.n; i++) {
        snprintf(path, 4096, "%s/%s", (const char *)r->plugin_dirs.items[i], name);
        if (access(path, F_OK) == 0) return 0;
    }
    char dirs[1024];
    plugin_path_text(r, dirs, sizeof dirs);
    return cp_fail(err, "plugin '%s': not found in the plugin path (%s)", name,
                   *dirs ? dirs : "empty");
}

/* A plugin whose registration failed half-way stays loaded: the registry may already
 * point into it. */
int cp_plugin_load(cp_registry *r, const char *name, char err[CP_ERR_MAX])
{
    char path[4096];
    if (resolve_plugin(r, name, path, err)) return -1;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return cp_fail(err, "plugin '%s': %s", path, dlerror());
    for (int i = 0; i < r->plugins.n; i++)
        if (r->plugins.items[i] == h) {    /* loaded before: its stages are registered */
            dlclose(h);
            return 0;
        }
    const cp_plugin *p = dlsym(h, CP_PLUGIN_SYMBOL);
    if (!p || p->api_version != CP_API_VERSION || !p->register_stages) {
        if (!p)
            cp_fail(err, "plugin '%s': no '%s' symbol (see compose/compose.h)", path,
                    CP_PLUGIN_SYMBOL);
        else if (p->api_version != CP_API_VERSION)
            cp_fail(err, "plugin '%s' (%s) was built for stage API version %u; this program "
                    "has version %u: rebuild the plugin", path, p->name ? p->name : "?",
                    p->api_version, CP_API_VERSION);
        else
            cp_fail(err, "plugin '%s': register_stages is NULL", path);
        dlclose(h);
        return -1;
    }
    if (cp_list_add(&r->plugins, h)) {
        dlclose(h);
        return cp_fail(err, "out of memory");
    }
    char why[CP_ERR_MAX] = "";
    if (p->register_stages(r, why))
        return cp_fail(err, "plugin '%s': %s", path,
                       why[0] ? why : "register_stages failed without a message");
    return 0;
}

/* Names with a '/' are relative to the graph file; bare names go to the plugin path. */
int cp_graph_load_plugins(const cp_graph *g, cp_registry *r, char err[CP_ERR_MAX])
{
    const cp_section *sec = cp_section_find(g, CP_SEC_GRAPH, NULL);
    const cp_setting *set = sec ? cp_setting_find(sec, "plugins") : NULL;
    if (!set) return 0;
    char *copy = cp_strdup(set->value), *save = NULL, why[CP_ERR_MAX];
    if (!copy) return cp_fail(err, "out of memory");
    int rc = 0;
    for (char *tok = strtok_r(copy, ", \t", &save); tok && !rc; tok = strtok_r(NULL, ", \t", &save)) {
        char path[4096];
        if (tok[0] == '/' || !strchr(tok, '/') || !g->base_dir) snprintf(path, sizeof path, "%s", tok);
        else snprintf(path, sizeof path, "%s/%s", g->base_dir, tok);
        rc = cp_plugin_load(r, path, why);
    }
    free(copy);
    return rc ? cp_fail(err, "%s: %s", set->where, why) : 0;
}

/* description.c — a graph as sections of settings: adding, replacing and removing
 * them (graph files, --set and C callers all come here), and reading values back with
 * their $variables resolved. */
#include "compose/internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

cp_graph *cp_graph_new(const cp_registry *r)
{
    cp_graph *g = calloc(1, sizeof *g);
    if (g) g->r = r;
    return g;
}

static void free_section(cp_section *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->settings[i].key);
        free(s->settings[i].value);
        free(s->settings[i].where);
    }
    free(s->settings);
    free(s->name);
    free(s->where);
}

void cp_graph_free(cp_graph *g)
{
    if (!g) return;
    for (int i = 0; i < g->n; i++) free_section(&g->sections[i]);
    free(g->sections);
    free(g->base_dir);
    for (int i = 0; i < g->layers.n; i++) free(g->layers.items[i]);
    cp_list_free(&g->layers);
    free(g);
}

static const char *const kind_words[] = {"graph", "queue", "stage"};

bool cp_parse_section(const char *text, cp_section_kind *kind, char *name, size_t name_max)
{
    while (isspace((unsigned char)*text)) text++;
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(kind_words[k]);
        if (strncmp(text, kind_words[k], n) || (text[n] && !isspace((unsigned char)text[n])))
            continue;
        const char *p = text + n;
        while (isspace((unsigned char)*p)) p++;
        size_t len = strlen(p);
        while (len && isspace((unsigned char)p[len - 1])) len--;
        if ((k == CP_SEC_GRAPH) != (len == 0) || len >= name_max) return false;
        for (size_t i = 0; i < len; i++)
            if (isspace((unsigned char)p[i]) || p[i] == '.' || p[i] == '$') return false;
        memcpy(name, p, len);
        name[len] = 0;
        *kind = (cp_section_kind)k;
        return true;
    }
    return false;
}

cp_section *cp_section_find(const cp_graph *g, cp_section_kind kind, const char *name)
{
    for (int i = 0; i < g->n; i++) {
        cp_section *s = &g->sections[i];
        if (s->kind == kind && (kind == CP_SEC_GRAPH || !strcmp(s->name, name))) return s;
    }
    return NULL;
}

const cp_setting *cp_setting_find(const cp_section *s, const char *key)
{
    for (int i = s->n - 1; i >= 0; i--)
        if (!strcmp(s->settings[i].key, key)) return &s->settings[i];
    return NULL;
}

const char *cp_section_label(const cp_section *s, char buf[160])
{
    if (s->kind == CP_SEC_GRAPH) snprintf(buf, 160, "[graph]");
    else snprintf(buf, 160, "%s '%s'", kind_words[s->kind], s->name);
    return buf;
}

static cp_section *open_section(cp_graph *g, cp_section_kind kind, const char *name,
                                const char *where)
{
    cp_section *s = cp_section_find(g, kind, name);
    if (s || g->n >= CP_MAX_SECTIONS) return s;
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 16;
        cp_section *a = realloc(g->sections, (size_t)cap * sizeof *a);
        if (!a) return NULL;
        g->sections = a;
        g->cap = cap;
    }
    s = &g->sections[g->n];
    *s = (cp_section){.kind = kind, .name = kind == CP_SEC_GRAPH ? NULL : cp_strdup(name),
                      .where = cp_strdup(where)};
    if (!s->where || (kind != CP_SEC_GRAPH && !s->name)) { free_section(s); return NULL; }
    g->n++;
    return s;
}

/* A later value for a key replaces the earlier one (and takes its origin). */
static int put_setting(cp_section *s, const char *key, const char *value, const char *where)
{
    char *v = cp_strdup(value), *w = cp_strdup(where);
    if (!v || !w) { free(v); free(w); return -1; }
    cp_setting *old = (cp_setting *)cp_setting_find(s, key);
    if (old) {
        free(old->value);
        free(old->where);
        old->value = v;
        old->where = w;
        return 0;
    }
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 8;
        cp_setting *a = realloc(s->settings, (size_t)cap * sizeof *a);
        if (!a) { free(v); free(w); return -1; }
        s->settings = a;
        s->cap = cap;
    }
    char *k = cp_strdup(key);
    if (!k) { free(v); free(w); return -1; }
    s->settings[s->n++] = (cp_setting){k, v, w};
    return 0;
}

void cp_unset(cp_section *s, const char *key)
{
    cp_setting *old = (cp_setting *)cp_setting_find(s, key);
    if (!old) return;
    free(old->key);
    free(old->value);
    free(old->where);
    int i = (int)(old - s->settings);
    memmove(old, old + 1, (size_t)(s->n - i - 1) * sizeof *old);
    s->n--;
}

int cp_put(cp_graph *g, const char *section, const char *key, const char *value,
           const char *where, char err[CP_ERR_MAX])
{
    cp_section_kind kind;
    char name[128];
    if (!cp_parse_section(section, &kind, name, sizeof name))
        return cp_fail(err, "%s: bad section [%s]: expected [graph], [queue NAME] or "
                       "[stage NAME] (names without spaces, dots or $)", where, section);
    if (!*key) return cp_fail(err, "%s: [%s]: a setting without a key", where, section);
    cp_section *s = open_section(g, kind, name, where);
    if (!s && g->n >= CP_MAX_SECTIONS)
        return cp_fail(err, "%s: [%s]: more than %d sections (CP_MAX_SECTIONS)", where, section,
                       CP_MAX_SECTIONS);
    if (s && s->n >= CP_MAX_SECTION_KEYS && !cp_setting_find(s, key))
        return cp_fail(err, "%s: [%s]: more than %d keys in one section (CP_MAX_SECTION_KEYS)",
                       where, section, CP_MAX_SECTION_KEYS);
    if (!s || put_setting(s, key, value, where)) return cp_fail(err, "out of memory");
    return 0;
}

/* The [graph] keys the compose layer and the runtime read themselves (layers.c, registry.c,
 * instance.c); a graph may set them without declaring them. */
static const char *const runtime_graph_keys[] = {"name", "base", "plugins", "low_watermark",
                                                 "device", "device_queues"};

/* Whether some setting of the graph reads [graph] key as its value ("$key"). */
static bool graph_key_read(const cp_graph *g, const char *key)
{
    for (int i = 0; i < g->n; i++)
        for (int k = 0; k < g->sections[i].n; k++) {
            const char *v = g->sections[i].settings[k].value;
            if (v[0] == '$' && !strcmp(v + 1, key)) return true;
        }
    return false;
}

/* Appends key to the comma-separated list in buf (cut short where it is full). */
static void list_key(char *buf, size_t cap, const char *key)
{
    const size_t used = strlen(buf);
    if (used + 1 < cap) snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", key);
}

/* A --set graph.KEY must name a setting the graph has: declared in [graph], read as
 * $KEY, or one the runtime reads; else a typo would change nothing and exit 0. */
static int check_graph_key(const cp_graph *g, const char *assignment, const char *key,
                           char err[CP_ERR_MAX])
{
    const cp_section *s = cp_section_find(g, CP_SEC_GRAPH, NULL);
    if ((s && cp_setting_find(s, key)) || graph_key_read(g, key)) return 0;
    const size_t nruntime = sizeof runtime_graph_keys / sizeof *runtime_graph_keys;
    for (size_t i = 0; i < nruntime; i++)
        if (!strcmp(key, runtime_graph_keys[i])) return 0;
    char known[CP_ERR_MAX / 2] = "", runtime[128] = "";
    for (int i = 0; s && i < s->n; i++) list_key(known, sizeof known, s->settings[i].key);
    for (size_t i = 0; i < nruntime; i++) list_key(runtime, sizeof runtime, runtime_graph_keys[i]);
    return cp_fail(err, "--set '%s': the graph has no setting '%s' (its [graph] settings: %s; "
                   "the runtime's: %s)", assignment, key, *known ? known : "none", runtime);
}

int cp_set(cp_graph *g, const char *assignment, char err[CP_ERR_MAX])
{
    const char *eq = strchr(assignment, '='), *dot = strchr(assignment, '.');
    if (!eq || !dot || dot > eq || dot == assignment || eq == dot + 1)
        return cp_fail(err, "--set '%s': expected SECTION.KEY=VALUE (SECTION: graph or a "
                       "stage or queue name)", assignment);
    char name[128], key[128], section[160];
    size_t nl = (size_t)(dot - assignment), kl = (size_t)(eq - dot - 1);
    if (nl >= sizeof name || kl >= sizeof key) return cp_fail(err, "--set '%s': name too long", assignment);
    memcpy(name, assignment, nl);
    name[nl] = 0;
    memcpy(key, dot + 1, kl);
    key[kl] = 0;
    if (!strcmp(name, "graph")) {
        if (check_graph_key(g, assignment, key, err)) return -1;
        snprintf(section, sizeof section, "graph");
    } else if (cp_section_find(g, CP_SEC_STAGE, name)) {
        snprintf(section, sizeof section, "stage %s", name);
    } else if (cp_section_find(g, CP_SEC_QUEUE, name)) {
        snprintf(section, sizeof section, "queue %s", name);
    } else {
        return cp_fail(err, "--set '%s': the graph has no stage or queue '%s'", assignment, name);
    }
    return cp_put(g, section, key, eq + 1, "command line (--set)", err);
}

int cp_remove(cp_graph *g, const char *section, char err[CP_ERR_MAX])
{
    cp_section_kind kind;
    char name[128];
    cp_section *s = cp_parse_section(section, &kind, name, sizeof name)
                        ? cp_section_find(g, kind, name) : NULL;
    if (!s || kind == CP_SEC_GRAPH) return cp_fail(err, "no section [%s] to remove", section);
    free_section(s);
    int i = (int)(s - g->sections);
    memmove(s, s + 1, (size_t)(g->n - i - 1) * sizeof *s);
    g->n--;
    return 0;
}

const char *cp_graph_value(const cp_graph *g, const char *key)
{
    const cp_section *s = cp_section_find(g, CP_SEC_GRAPH, NULL);
    const cp_setting *v = s ? cp_setting_find(s, key) : NULL;
    return v ? v->value : NULL;
}

const char *cp_graph_resolved(const cp_graph *g, const cp_vars *vars, const char *key, char buf[256])
{
    const cp_section *s = cp_section_find(g, CP_SEC_GRAPH, NULL);
    const cp_setting *v = s ? cp_setting_find(s, key) : NULL;
    char err[CP_ERR_MAX];
    return v ? cp_resolve(g, vars, v, buf, err) : NULL;
}

/* ---- values --------------------------------------------------------------------------- */

#define CP_VAR_DEPTH 8

const char *cp_resolve(const cp_graph *g, const cp_vars *vars, const cp_setting *s,
                       char buf[256], char err[CP_ERR_MAX])
{
    const char *v = s->value;
    for (int depth = 0; v[0] == '$'; depth++) {
        if (depth == CP_VAR_DEPTH) {
            cp_fail(err, "%s: '%s = %s': variables refer to each other in a loop", s->where,
                    s->key, s->value);
            return NULL;
        }
        const char *next = cp_graph_value(g, v + 1);
        if (!next && vars && vars->get) next = vars->get(vars->ctx, v + 1, buf);
        if (!next) {
            cp_fail(err, "%s: '%s = %s': variable '%s' is not set in [graph] nor known to "
                    "this program", s->where, s->key, s->value, v + 1);
            return NULL;
        }
        v = next;
    }
    if (v != buf) snprintf(buf, 256, "%s", v);
    return buf;
}

/* 'key = text', or 'key = $var' ($var = text) for a value read through a variable (so a
 * bad --set graph.var names the variable the user set, not only the line that reads it). */
static const char *shown(const cp_setting *s, const char *text, char buf[600])
{
    if (strcmp(s->value, text)) snprintf(buf, 600, "'%s = %s' (%s = %s)", s->key, s->value, s->value, text);
    else snprintf(buf, 600, "'%s = %s'", s->key, text);
    return buf;
}

int cp_parse_int(const cp_setting *s, const char *text, int64_t *out, char err[CP_ERR_MAX])
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    char shown_buf[600];
    if (errno || end == text || *end)
        return cp_fail(err, "%s: %s: not an integer", s->where, shown(s, text, shown_buf));
    *out = v;
    return 0;
}

int cp_parse_float(const cp_setting *s, const char *text, double *out, char err[CP_ERR_MAX])
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    char shown_buf[600];
    if (errno || end == text || *end || !isfinite(v))
        return cp_fail(err, "%s: %s: not a finite number", s->where, shown(s, text, shown_buf));
    *out = v;
    return 0;
}

int cp_parse_bool(const cp_setting *s, const char *text, bool *out, char err[CP_ERR_MAX])
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (!strcmp(text, yes[i])) { *out = true; return 0; }
        if (!strcmp(text, no[i])) { *out = false; return 0; }
    }
    char shown_buf[600];
    return cp_fail(err, "%s: %s: expected true or false", s->where, shown(s, text, shown_buf));
}

const cp_registry *cp_graph_registry(const cp_graph *g) { return g->r; }

char *cp_graph_text(const cp_graph *g)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) return NULL;
    for (int i = 0; i < g->n; i++) {
        const cp_section *s = &g->sections[i];
        fprintf(f, "[%d %s]\n", (int)s->kind, s->name ? s->name : "");
        for (int k = 0; k < s->n; k++) fprintf(f, "%s=%s\n", s->settings[k].key, s->settings[k].value);
    }
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        free(text);
        return NULL;
    }
    return text;
}

/* graph_file.c — reads graph files (INI syntax through libinih, the parser .scene files
 * use too) into a description, remembering file and line of every setting.
 *
 * inih hands the handler no line numbers, so the reader it pulls lines from counts them;
 * it also strips leading blanks (inih would take an indented line as the continuation
 * of the previous value) and refuses lines longer than inih's buffer instead of letting
 * them be cut. */
#include "compose/internal.h"

#include <ini.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

typedef struct text_reader {
    const char *next;                  /* the rest of the text */
    const char *origin;
    int line;
    int too_long;                      /* first over-long line, 0 if none */
} text_reader;

typedef struct load_ctx {
    cp_graph *g;
    text_reader *rd;
    char *err;
    int failed;
} load_ctx;

static char *read_line(char *str, int num, void *stream)
{
    text_reader *rd = stream;
    if (!*rd->next) return NULL;
    const char *end = strchr(rd->next, '\n');
    size_t len = end ? (size_t)(end - rd->next) : strlen(rd->next);
    const char *start = rd->next;
    rd->next = end ? end + 1 : start + len;
    rd->line++;
    while (len && (*start == ' ' || *start == '\t')) { start++; len--; }
    if (len + 2 > (size_t)num) {
        if (!rd->too_long) rd->too_long = rd->line;
        len = 0;                       /* read as a blank line; reported after parsing */
    }
    memcpy(str, start, len);
    str[len] = '\n';
    str[len + 1] = 0;
    return str;
}

static int on_setting(void *user, const char *section, const char *key, const char *value)
{
    load_ctx *c = user;
    if (c->failed) return 1;
    char where[512];
    snprintf(where, sizeof where, "%s:%d", c->rd->origin, c->rd->line);
    if (!*section) {
        cp_fail(c->err, "%s: '%s' before any [section]", where, key);
        c->failed = 1;
        return 1;
    }
    if (cp_put(c->g, section, key, value, where, c->err)) c->failed = 1;
    return 1;
}

int cp_graph_load_text(cp_graph *g, const char *text, const char *origin, char err[CP_ERR_MAX])
{
    text_reader rd = {text, origin, 0, 0};
    load_ctx c = {g, &rd, err, 0};
    int rc = ini_parse_stream(read_line, &rd, on_setting, &c);
    if (c.failed) return -1;
    if (rd.too_long)
        return cp_fail(err, "%s:%d: line longer than %d characters", origin, rd.too_long,
                       INI_MAX_LINE - 3);
    if (rc > 0)
        return cp_fail(err, "%s:%d: syntax error (expected [section], key = value or a "
                       "comment)", origin, rc);
    return rc < 0 ? cp_fail(err, "%s: out of memory", origin) : 0;
}

char *cp_read_graph_file(const char *path, char err[CP_ERR_MAX])
{
    FILE *f = fopen(path, "rb");
    if (!f) { cp_fail(err, "%s: cannot open graph file", path); return NULL; }
    char *text = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) { free(text); text = NULL; }
    fclose(f);
    if (!text) { cp_fail(err, "%s: cannot read graph file", path); return NULL; }
    text[n] = 0;
    if (strlen(text) != (size_t)n) {
        free(text);
        cp_fail(err, "%s: not a text file (contains NUL bytes)", path);
        return NULL;
    }
    return text;
}

int cp_graph_load(cp_graph *g, const char *path, char err[CP_ERR_MAX])
{
    char *text = cp_read_graph_file(path, err);
    if (!text) return -1;
    char *copy = cp_strdup(path);
    free(g->base_dir);
    g->base_dir = copy ? cp_strdup(dirname(copy)) : NULL;
    free(copy);
    int rc = cp_graph_load_text(g, text, path, err);
    free(text);
    return rc;
}

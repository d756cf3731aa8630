/* edit_line.c — a one-line graph edit, in the spirit of gst-launch's pipeline strings:
 *
 *   TYPE [name=NAME] [after|before STAGE[.PORT]] [KEY=VALUE]...   adds a stage
 *   remove NAME                                                    removes a stage or queue
 *
 * Each becomes the settings a graph file layered over the graph would hold ([stage NAME]
 * with type, after/before and the values; or remove = true), applied by edits.c, so the
 * line and the file behave alike. The stage's name is TYPE's last dotted part unless
 * name= says otherwise (image.fxaa: fxaa). */
#include "compose/internal.h"

#include <stdlib.h>
#include <string.h>

#define WORDS_MAX 64

/* Splits the line at blanks into words (in place); their count, or -1 if too many. */
static int split(char *line, char *words[WORDS_MAX])
{
    int n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == WORDS_MAX) return -1;
        words[n++] = w;
    }
    return n;
}

static int remove_line(cp_graph *g, char **words, int n, const char *where, char err[CP_ERR_MAX])
{
    if (n != 2) return cp_fail(err, "%s: expected remove NAME", where);
    char section[160];
    snprintf(section, sizeof section, "stage %s", words[1]);
    if (!cp_section_find(g, CP_SEC_STAGE, words[1])) snprintf(section, sizeof section, "queue %s", words[1]);
    if (!cp_section_find(g, CP_SEC_QUEUE, words[1]) && !cp_section_find(g, CP_SEC_STAGE, words[1]))
        return cp_fail(err, "%s: the graph has no stage or queue '%s' to remove", where, words[1]);
    int first_new = g->n;
    if (cp_put(g, section, "remove", "true", where, err)) return -1;
    return cp_apply_edits(g, first_new, err);
}

/* The stage's name: name=NAME among the words, else TYPE after its last dot. */
static const char *stage_name(char **words, int n)
{
    for (int i = 1; i < n; i++)
        if (!strncmp(words[i], "name=", 5)) return words[i] + 5;
    const char *dot = strrchr(words[0], '.');
    return dot ? dot + 1 : words[0];
}

static int add_line(cp_graph *g, char **words, int n, const char *where, char err[CP_ERR_MAX])
{
    char section[160];
    const char *name = stage_name(words, n);
    if (strchr(words[0], '='))
        return cp_fail(err, "%s: expected a stage type first, then after|before STAGE and "
                       "KEY=VALUE settings", where);
    snprintf(section, sizeof section, "stage %s", name);
    if (cp_section_find(g, CP_SEC_STAGE, name))
        return cp_fail(err, "%s: the graph has a stage '%s' already (name=NAME gives another "
                       "name)", where, name);
    int first_new = g->n;
    if (cp_put(g, section, "type", words[0], where, err)) return -1;
    for (int i = 1; i < n; i++) {
        char *eq = strchr(words[i], '=');
        bool place = !strcmp(words[i], "after") || !strcmp(words[i], "before");
        if (place && i + 1 == n) return cp_fail(err, "%s: %s what? (STAGE or STAGE.PORT)", where, words[i]);
        if (!place && (!eq || eq == words[i]))
            return cp_fail(err, "%s: '%s': expected after STAGE, before STAGE or KEY=VALUE",
                           where, words[i]);
        if (!place && !strncmp(words[i], "name=", 5)) continue;
        if (!place) *eq = 0;
        if (cp_put(g, section, words[i], place ? words[i + 1] : eq + 1, where, err)) return -1;
        i += place;
    }
    return cp_apply_edits(g, first_new, err);
}

int cp_graph_edit_line(cp_graph *g, const char *line, char err[CP_ERR_MAX])
{
    char where[512], *copy = cp_strdup(line), *words[WORDS_MAX];
    if (!copy) return cp_fail(err, "out of memory");
    snprintf(where, sizeof where, "command line (--edit '%s')", line);
    int n = split(copy, words), rc;
    if (n <= 0) rc = cp_fail(err, "%s: %s", where, n ? "too many words" : "empty");
    else if (!strcmp(words[0], "remove")) rc = remove_line(g, words, n, where, err);
    else rc = add_line(g, words, n, where, err);
    free(copy);
    return rc;
}

/* README "Set up": the section's commands are `make run` and `make test`, each a target
 * of the Makefile, and what `make run` runs (its recipe, with this build's folder) writes
 * the PNG the README's comment names, a picture of more than its background, and the
 * statistics file the README names. The recipe runs in a scratch folder, so that the
 * test writes nothing into the checkout; `make test` is not run (it runs this test). */
#include "tests/check.h"
#include "tests/cli.h"   /* slurp */
#include "tests/scratch_dir.h"

#include <limits.h>
#include <stb/stb_image.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-readme-XXXXXX";
static char build[PATH_MAX], root[PATH_MAX];

/* The commands of the README's set-up block and each one's comment, cut at '#'. */
typedef struct setup { int n; char cmd[4][64], comment[4][256]; } setup;

static setup read_setup(const char *readme)
{
    setup s = {0};
    const char *sec = readme ? strstr(readme, "\n## Set up") : NULL;
    const char *at = sec ? strstr(sec, "```sh\n") : NULL;
    const char *end = at ? strstr(at + 6, "```") : NULL;
    for (const char *line = at ? at + 6 : NULL; line && line < end && s.n < 4;) {
        const char *eol = strchr(line, '\n');
        const char *hash = memchr(line, '#', (size_t)(eol - line));
        const char *cmd_end = hash ? hash : eol;
        while (cmd_end > line && cmd_end[-1] == ' ') cmd_end--;
        snprintf(s.cmd[s.n], sizeof s.cmd[0], "%.*s", (int)(cmd_end - line), line);
        snprintf(s.comment[s.n], sizeof s.comment[0], "%.*s", hash ? (int)(eol - hash) : 0, hash);
        if (s.cmd[s.n][0]) s.n++;
        line = eol + 1;
    }
    return s;
}

/* The recipe of Makefile rule TARGET (its tab-indented lines joined, '@' dropped), or
 * "" where the Makefile has no such rule. */
static void recipe_of(const char *makefile, const char *target, char *recipe, size_t size)
{
    char head[64];
    snprintf(head, sizeof head, "\n%s:", target);
    const char *at = makefile ? strstr(makefile, head) : NULL;
    recipe[0] = 0;
    for (const char *line = at ? strchr(at + 1, '\n') + 1 : NULL; line && *line == '\t';) {
        const char *eol = strchr(line, '\n');
        const char *cmd = line[1] == '@' ? line + 2 : line + 1;
        size_t len = strlen(recipe);
        snprintf(recipe + len, size - len, "%s%.*s", len ? " && " : "", (int)(eol - cmd), cmd);
        line = eol + 1;
    }
}

/* The first word of text that ends in suffix, in word (empty where there is none). */
static void word_ending(const char *text, const char *suffix, char *word, size_t size)
{
    word[0] = 0;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", text);
    for (char *w = strtok(copy, " `,\n"); w; w = strtok(NULL, " `,\n")) {
        size_t n = strlen(w), k = strlen(suffix);
        if (n > k && !strcmp(w + n - k, suffix)) { snprintf(word, size, "%s", w); return; }
    }
}

/* The recipe as a shell command run in the scratch folder: $(BUILD) is this build's
 * folder, a word naming a file of the checkout (mk/run_default.sh) its absolute path. */
static void rooted(const char *recipe, char *cmd, size_t size)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", recipe);
    int n = snprintf(cmd, size, "cd %s &&", dir);
    for (char *w = strtok(copy, " "); w && n > 0 && (size_t)n < size; w = strtok(NULL, " ")) {
        char path[PATH_MAX + 600];
        snprintf(path, sizeof path, "%s/%s", root, w);
        if (!strcmp(w, "$(BUILD)")) n += snprintf(cmd + n, size - (size_t)n, " %s", build);
        else if (strchr(w, '/') && access(path, F_OK) == 0) n += snprintf(cmd + n, size - (size_t)n, " %s", path);
        else n += snprintf(cmd + n, size - (size_t)n, " %s", w);
    }
}

/* More than 1% of the pixels differ from the top-left one (the background). */
static bool more_than_background(const char *png)
{
    int w = 0, h = 0, c = 0;
    unsigned char *px = stbi_load(png, &w, &h, &c, 4);
    long differ = 0;
    for (long i = 0; px && i < (long)w * h; i++) differ += memcmp(px + 4 * i, px, 4) != 0;
    stbi_image_free(px);
    CHECK_MSG(px != NULL, "%s is no PNG", png);
    return differ * 100 > (long)w * h;
}

static void test_setup_commands(void)
{
    char *readme = slurp("README.md", NULL), *makefile = slurp("Makefile", NULL);
    setup s = read_setup(readme);
    CHECK_MSG(s.n == 2 && !strcmp(s.cmd[0], "make run") && !strcmp(s.cmd[1], "make test"),
              "README's set-up block: %d commands, '%s', '%s'", s.n, s.cmd[0], s.cmd[1]);
    char recipe[512], cmd[2048], png[128], json[128], path[256];
    recipe_of(makefile, "test", recipe, sizeof recipe);
    CHECK_MSG(recipe[0], "the Makefile has no recipe for 'test'");
    recipe_of(makefile, "run", recipe, sizeof recipe);
    CHECK_MSG(recipe[0], "the Makefile has no recipe for 'run'");
    word_ending(s.comment[0], ".png", png, sizeof png);
    const char *stats_line = readme ? strstr(readme, "also writes the statistics to") : NULL;
    word_ending(stats_line ? stats_line : "", ".json", json, sizeof json);
    CHECK_MSG(png[0] && json[0], "the README names no PNG ('%s') or statistics file ('%s')", png, json);
    rooted(recipe, cmd, sizeof cmd);
    strncat(cmd, " >/dev/null", sizeof cmd - strlen(cmd) - 1);   /* the frame's statistics */
    CHECK_MSG(system(cmd) == 0, "%s failed", cmd);
    snprintf(path, sizeof path, "%s/%s", dir, png);
    CHECK_MSG(more_than_background(path), "%s: nothing drawn", path);
    snprintf(path, sizeof path, "%s/%s", dir, json);
    char *stats = slurp(path, NULL);
    CHECK_MSG(stats && stats[0] == '{', "%s: no statistics", path);
    free(stats);
    free(readme);
    free(makefile);
}

int main(int argc, char **argv)
{
    (void)argc;
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/../..", dirname(argv[0]));
    if (!realpath(rel, build) || !getcwd(root, sizeof root) || !mkdtemp(dir)) return 1;
    RUN(test_setup_commands);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}

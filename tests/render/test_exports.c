/* What the shared libraries export is what their installed headers declare, nothing
 * more and nothing less (gramps/api.h: the libraries are compiled hidden by default and
 * the installed declarations carry GR_API). This test's build dir is installed with
 * `make install-files` into a temporary PREFIX; the functions the installed headers
 * declare come from the compiler (-aux-info writes every prototype with its file and
 * line), their objects from their `extern` lines; BUILD/lib/libgramps.so must export
 * exactly gramps.h's, BUILD/lib/librender.so exactly those of the other installed
 * headers (`nm -D --defined-only`; names starting with "__" belong to the toolchain,
 * such as a sanitizer's). Each leaked internal symbol and each declared one left
 * hidden fails, by name. */
#include "tests/check.h"
#include "tests/scratch_dir.h"

#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

static char build[PATH_MAX], dir[] = "/tmp/gramps-exports-XXXXXX", prefix[PATH_MAX + 16];
static char include[PATH_MAX + 32];        /* PREFIX/include/gramps/ */

/* A set of names, sorted by names_sort. */
#define MAX_NAMES 1024
typedef struct names { int n; char name[MAX_NAMES][64]; } names;

static void names_add(names *s, const char *name, size_t len)
{
    if (s->n == MAX_NAMES || len == 0 || len >= sizeof s->name[0]) return;
    memcpy(s->name[s->n], name, len);
    s->name[s->n++][len] = 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(a, b); }

static void names_sort(names *s) { qsort(s->name, (size_t)s->n, sizeof s->name[0], cmp_name); }

/* The installed headers: libgramps's (gramps.h, api.h) and librender's (the others). */
static names gramps_headers, render_headers;

static int collect_header(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)ftw;
    size_t len = strlen(path);
    if (type != FTW_F || len < 2 || strcmp(path + len - 2, ".h")) return 0;
    const char *rel = path + strlen(include);
    bool runtime = !strcmp(rel, "gramps.h") || !strcmp(rel, "api.h");
    names_add(runtime ? &gramps_headers : &render_headers, rel, strlen(rel));
    return 0;
}

static bool is_ident(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* The identifier that ends just before `end` in line. */
static void add_ident_before(names *s, const char *line, const char *end)
{
    while (end > line && end[-1] == ' ') end--;
    const char *start = end;
    while (start > line && is_ident(start[-1])) start--;
    names_add(s, start, (size_t)(end - start));
}

static bool among(const names *headers, const char *rel, size_t len)
{
    for (int i = 0; i < headers->n; i++)
        if (strlen(headers->name[i]) == len && !strncmp(headers->name[i], rel, len)) return true;
    return false;
}

/* The functions -aux-info lists as declared `extern` in one of `headers`:
 * lines "/ * PATH:LINE:XX * / extern TYPE NAME (PARAMS);". */
static void declared_functions(const names *headers, const char *aux, names *out)
{
    FILE *f = fopen(aux, "r");
    char line[4096];
    CHECK(f != NULL);
    while (f && fgets(line, sizeof line, f)) {
        const char *path = strstr(line, include), *colon = path ? strchr(path, ':') : NULL;
        const char *body = strstr(line, "*/ extern "), *paren = body ? strstr(body, " (") : NULL;
        if (!colon || !paren) continue;
        const char *rel = path + strlen(include);
        if (among(headers, rel, (size_t)(colon - rel))) add_ident_before(out, line, paren);
    }
    if (f) fclose(f);
}

/* The objects `headers` declare: one-line declarations "extern TYPE NAME[...];". */
static void declared_objects(const names *headers, names *out)
{
    char path[2 * PATH_MAX], line[1024];
    for (int i = 0; i < headers->n; i++) {
        snprintf(path, sizeof path, "%s%s", include, headers->name[i]);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f)) {
            char *semi = strchr(line, ';'), *bracket = strchr(line, '[');
            if (strncmp(line, "extern ", 7) || !semi || strchr(line, '(')) continue;
            add_ident_before(out, line, bracket && bracket < semi ? bracket : semi);
        }
        if (f) fclose(f);
    }
}

/* What `headers` declare, by compiling a file that includes them all. */
static void declared(const char *lib, const names *headers, names *out)
{
    char src[PATH_MAX + 64], aux[PATH_MAX + 64], cmd[6 * PATH_MAX];
    snprintf(src, sizeof src, "%s/%s.c", dir, lib);
    snprintf(aux, sizeof aux, "%s/%s.aux", dir, lib);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    for (int i = 0; f && i < headers->n; i++) fprintf(f, "#include \"%s\"\n", headers->name[i]);
    if (f) fclose(f);
    snprintf(cmd, sizeof cmd, "cc -std=c11 -fsyntax-only -I%s/include -I%s/include/gramps "
             "-aux-info %s %s", prefix, prefix, aux, src);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    declared_functions(headers, aux, out);
    declared_objects(headers, out);
    names_sort(out);
}

/* What BUILD/lib/LIB.so exports (defined, dynamic), less the toolchain's "__" names. */
static void exported(const char *lib, names *out)
{
    char cmd[PATH_MAX + 64], line[512], type[8], name[256];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/lib/%s.so", build, lib);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    while (p && fgets(line, sizeof line, p))
        if (sscanf(line, "%*s %7s %255s", type, name) == 2 && strncmp(name, "__", 2))
            names_add(out, name, strlen(name));
    CHECK(p && pclose(p) == 0);
    names_sort(out);
}

/* Every name in one set and not the other fails, by name. */
static void check_same(const char *lib, const names *decl, const names *exp)
{
    int i = 0, j = 0;
    while (i < decl->n || j < exp->n) {
        int c = i == decl->n ? 1 : j == exp->n ? -1 : strcmp(decl->name[i], exp->name[j]);
        CHECK_MSG(c >= 0, "%s: %s is declared in an installed header, not exported", lib, decl->name[i]);
        CHECK_MSG(c <= 0, "%s: %s is exported, not declared in an installed header", lib, exp->name[j]);
        i += c <= 0;
        j += c >= 0;
    }
}

static void check_library(const char *lib, const names *headers)
{
    static names decl, exp;
    decl.n = exp.n = 0;
    declared(lib, headers, &decl);
    exported(lib, &exp);
    CHECK_MSG(decl.n > 40, "%s: only %d declarations found", lib, decl.n);
    check_same(lib, &decl, &exp);
}

static void test_installed_headers(void)
{
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s "
             "--no-print-directory install-files BUILD=%s PREFIX=%s >/dev/null", build, prefix);
    CHECK(system(cmd) == 0);
    CHECK(nftw(include, collect_header, 16, FTW_PHYS) == 0);
    CHECK(gramps_headers.n == 2 && render_headers.n > 10);
}

static void test_libgramps_exports_gramps_h(void) { check_library("libgramps", &gramps_headers); }
static void test_librender_exports_its_headers(void) { check_library("librender", &render_headers); }

int main(int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX];
    snprintf(self, sizeof self, "%s/../..", dirname(argv[0]));   /* BUILD/tests/render */
    if (!realpath(self, build) || !mkdtemp(dir)) {
        perror("test_exports");
        return 1;
    }
    snprintf(prefix, sizeof prefix, "%s/prefix", dir);
    snprintf(include, sizeof include, "%s/include/gramps/", prefix);
    RUN(test_installed_headers);
    RUN(test_libgramps_exports_gramps_h);
    RUN(test_librender_exports_its_headers);
    CHECK(scratch_dir_remove(dir));
    return check_finish();
}

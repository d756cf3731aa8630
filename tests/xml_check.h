/* A well-formedness check for the XML the tools write (SVG plots), for tests: an
 * optional <?xml ...?> declaration, comments, one root element, elements closed in
 * order, attributes as name="value" without '<', text whose '&' starts an entity
 * (&lt; &gt; &amp; &quot; &apos; &#N;), nothing but whitespace after the root. No DTDs,
 * CDATA or namespaces checked: the tools write none. Written here because the tests
 * cannot count on python3 or xmllint being installed.
 *
 * xml_wellformed(text, root, n): whether text is well-formed; the root element's name
 * into root (n bytes). */
#ifndef TESTS_XML_CHECK_H
#define TESTS_XML_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define XML_MAX_DEPTH 64

static bool xml_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == ':' || c == '.';
}

/* A name at s: its end, or NULL when there is none. */
static const char *xml_name(const char *s)
{
    const char *e = s;
    while (xml_name_char(*e)) e++;
    return e > s ? e : NULL;
}

static const char *xml_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

/* Attributes up to '>' or "/>": the position of that, or NULL. */
static const char *xml_attributes(const char *s)
{
    for (;;) {
        const char *p = xml_ws(s);
        if (*p == '>' || (p[0] == '/' && p[1] == '>')) return p;
        if (p == s) return NULL;                         /* attributes need space before */
        const char *e = xml_name(p);
        if (!e || e[0] != '=' || e[1] != '"') return NULL;
        const char *close = strchr(e + 2, '"');
        if (!close || memchr(e + 2, '<', (size_t)(close - e - 2))) return NULL;
        s = close + 1;
    }
}

/* Text up to the next '<': every '&' starts an entity. */
static const char *xml_text(const char *s)
{
    static const char *const entities[] = {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"};
    while (*s && *s != '<') {
        if (*s != '&') { s++; continue; }
        size_t n = 0;
        for (int i = 0; i < 5 && !n; i++)
            if (!strncmp(s, entities[i], strlen(entities[i]))) n = strlen(entities[i]);
        if (!n && s[1] == '#' && s[2] >= '0' && s[2] <= '9') {
            const char *e = s + 2;
            while (*e >= '0' && *e <= '9') e++;
            if (*e == ';') n = (size_t)(e + 1 - s);
        }
        if (!n) return NULL;
        s += n;
    }
    return s;
}

static bool xml_wellformed(const char *s, char *root, size_t n)
{
    const char *open[XML_MAX_DEPTH];
    size_t len[XML_MAX_DEPTH];
    int depth = 0, roots = 0;
    if (!strncmp(s, "<?xml ", 6)) {
        s = strstr(s, "?>");
        if (!s) return false;
        s += 2;
    }
    for (s = xml_ws(s); *s; s = depth ? s : xml_ws(s)) {
        if (depth == 0 && roots == 1) return *xml_ws(s) == 0;
        if (!strncmp(s, "<!--", 4)) {
            s = strstr(s + 4, "-->");
            if (!s) return false;
            s += 3;
        } else if (s[0] == '<' && s[1] == '/') {
            const char *e = xml_name(s + 2);
            if (!e || !depth || (size_t)(e - s - 2) != len[depth - 1] ||
                strncmp(s + 2, open[depth - 1], len[depth - 1]) || *xml_ws(e) != '>')
                return false;
            depth--;
            s = xml_ws(e) + 1;
        } else if (*s == '<') {
            const char *e = xml_name(s + 1), *end = e ? xml_attributes(e) : NULL;
            if (!end || depth == XML_MAX_DEPTH || (depth == 0 && roots++)) return false;
            if (depth == 0) snprintf(root, n, "%.*s", (int)(e - s - 1), s + 1);
            if (*end == '>') { open[depth] = s + 1; len[depth++] = (size_t)(e - s - 1); }
            s = end + (*end == '>' ? 1 : 2);
        } else if (depth == 0 || !(s = xml_text(s))) {
            return false;
        }
    }
    return depth == 0 && roots == 1;
}

#endif

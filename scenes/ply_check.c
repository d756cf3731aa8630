/* ply_check.c — a PLY file's header checked against the file before assimp sees it.
 * assimp 5.2 loops forever on a header cut short and allocates whatever element counts a
 * header declares (2e9 vertices in a 198-byte file: ~22 GB). Both are cheap to refuse
 * here, with a message naming the file: the header must end (end_header), its format,
 * element and property lines must be well formed, and the data each element needs at the
 * least (binary: its fixed-size properties and list counts; ASCII: one digit and one
 * separator per value) must fit in what follows the header. A line that starts with no
 * PLY keyword is skipped, as assimp skips it (its own test model Wuson.ply has a bare
 * "Created by Blender3D 247 - www.blender.org" line). Everything else (bad indices, short lists) is left to the
 * isolated import and the index checks behind it. */
#include "scenes/loaders.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_MAX 65536          /* longer headers are not real files */

/* Size in bytes of a PLY scalar type name, 0 if unknown. */
static int type_size(const char *t)
{
    static const char *names[] = {"char", "uchar", "int8", "uint8", "short", "ushort", "int16",
                                  "uint16", "int", "uint", "int32", "uint32", "float", "float32",
                                  "double", "float64"};
    static const int sizes[] = {1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 8, 8};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!strcmp(t, names[i])) return sizes[i];
    return 0;
}

typedef struct ply_header {
    bool ascii;
    double need;                  /* bytes the declared data needs at least */
    double count;                 /* the current element's count */
    double per_item;              /* its minimal bytes per item so far */
} ply_header;

/* One header line (no newline); false when a format, element or property line is not
 * valid PLY. */
static bool header_line(ply_header *h, char *line)
{
    char *save, *w = strtok_r(line, " \t\r", &save);
    if (!w || !strcmp(w, "comment") || !strcmp(w, "obj_info")) return true;
    if (!strcmp(w, "format")) {
        w = strtok_r(NULL, " \t\r", &save);
        h->ascii = w && !strcmp(w, "ascii");
        return w && (h->ascii || !strcmp(w, "binary_little_endian") || !strcmp(w, "binary_big_endian"));
    }
    if (!strcmp(w, "element")) {
        h->need += h->count * h->per_item;
        char *name = strtok_r(NULL, " \t\r", &save), *n = strtok_r(NULL, " \t\r", &save), *e;
        if (!name || !n) return false;
        h->count = strtod(n, &e);
        h->per_item = 0;
        return *e == 0 && h->count >= 0;
    }
    if (!strcmp(w, "property")) {
        char *t = strtok_r(NULL, " \t\r", &save);
        if (t && !strcmp(t, "list")) t = strtok_r(NULL, " \t\r", &save);   /* its count type */
        int size = t ? type_size(t) : 0;
        h->per_item += h->ascii ? 2 : size;
        return size > 0;
    }
    return true;                  /* no keyword: a comment without "comment", skipped */
}

int sc_ply_check(const char *path, char err[SC_ERR_MAX])
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;             /* the importer reports it */
    char line[512];
    bool ply = fgets(line, sizeof line, f) && !strncmp(line, "ply", 3) && strchr("\r\n", line[3]);
    ply_header h = {0};
    bool ended = false, ok = true;
    while (ply && ok && !ended && ftell(f) < HEADER_MAX && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        ended = !strncmp(line, "end_header", 10);
        ok = ended || header_line(&h, line);
    }
    long data_at = ftell(f);
    fseek(f, 0, SEEK_END);
    double data = (double)(ftell(f) - data_at);
    fclose(f);
    if (!ply) return 0;           /* not PLY: nothing to check here */
    h.need += h.count * h.per_item;
    if (!ok) snprintf(err, SC_ERR_MAX, "%s: malformed PLY header line '%.80s'", path, line);
    else if (!ended) snprintf(err, SC_ERR_MAX, "%s: the PLY header is cut short (no end_header)", path);
    else if (h.need > data)
        snprintf(err, SC_ERR_MAX, "%s: the PLY header declares at least %.0f bytes of data but "
                 "the file holds %.0f (truncated file or bogus element counts)", path, h.need, data);
    else return 0;
    return -1;
}

/* list.c — a growable array of pointers, and the message helpers of compose/. */
#include "compose/internal.h"

#include <stdlib.h>
#include <string.h>

int cp_list_add(cp_list *l, void *item)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        void **items = realloc(l->items, (size_t)cap * sizeof *items);
        if (!items) return -1;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = item;
    return 0;
}

void cp_list_free(cp_list *l)
{
    free(l->items);
    *l = (cp_list){0};
}

int cp_fail(char err[CP_ERR_MAX], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, CP_ERR_MAX, fmt, ap);
    va_end(ap);
    return -1;
}

char *cp_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* name_index.c — open addressing with linear probing, kept at most half full. */
#include "scenes/name_index.h"

#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;            /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

static const char *name_at(const void *items, size_t stride, uint32_t pos)
{
    return (const char *)items + (size_t)pos * stride;
}

/* The slot holding name, or the empty slot where it would go. */
static size_t probe(const sc_name_index *ix, const void *items, size_t stride, const char *name)
{
    size_t i = hash(name) & (ix->cap - 1);
    while (ix->slots[i] && strcmp(name_at(items, stride, ix->slots[i] - 1), name))
        i = (i + 1) & (ix->cap - 1);
    return i;
}

long sc_name_index_find(const sc_name_index *ix, const void *items, size_t stride, const char *name)
{
    if (!ix->cap) return -1;
    uint32_t v = ix->slots[probe(ix, items, stride, name)];
    return v ? (long)v - 1 : -1;
}

static bool grow(sc_name_index *ix, const void *items, size_t stride)
{
    sc_name_index n = {calloc(ix->cap ? 2 * ix->cap : 64, sizeof *n.slots), ix->cap ? 2 * ix->cap : 64, ix->count};
    if (!n.slots) return false;
    for (size_t i = 0; i < ix->cap; i++)
        if (ix->slots[i]) n.slots[probe(&n, items, stride, name_at(items, stride, ix->slots[i] - 1))] = ix->slots[i];
    free(ix->slots);
    *ix = n;
    return true;
}

bool sc_name_index_add(sc_name_index *ix, const void *items, size_t stride, uint32_t pos)
{
    if (2 * (ix->count + 1) > ix->cap && !grow(ix, items, stride)) return false;
    size_t i = probe(ix, items, stride, name_at(items, stride, pos));
    if (!ix->slots[i]) {
        ix->slots[i] = pos + 1;
        ix->count++;
    }
    return true;
}

void sc_name_index_free(sc_name_index *ix)
{
    free(ix->slots);
    memset(ix, 0, sizeof *ix);
}

#include <stdlib.h>
#include <string.h>
#include "arena.h"

int sc_arena_init(sc_arena *a, size_t bytes, sc_err *err)
{
    memset(a, 0, sizeof *a);
    bytes = (bytes + 63) & ~(size_t)63;
    a->base = aligned_alloc(64, bytes ? bytes : 64);
    if (!a->base) return sc_fail(err, SC_EIO, "out of memory: arena of %zu bytes", bytes);
    a->size = bytes;
    return SC_OK;
}

void sc_arena_free(sc_arena *a)
{
    free(a->base);
    memset(a, 0, sizeof *a);
}

void *sc_arena_push(sc_arena *a, size_t bytes)
{
    size_t start = (a->used + 63) & ~(size_t)63;
    if (start + bytes > a->size) return NULL;
    a->used = start + bytes;
    if (a->used > a->high_water) a->high_water = a->used;
    memset(a->base + start, 0, bytes);
    return a->base + start;
}

size_t sc_arena_mark(const sc_arena *a) { return a->used; }
void sc_arena_reset(sc_arena *a, size_t mark) { a->used = mark; }

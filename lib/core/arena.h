/* Bump allocator: everything a step needs is carved out once, so a step never mallocs. */
#ifndef SC_ARENA_H
#define SC_ARENA_H
#include <stddef.h>
#include "status.h"

typedef struct sc_arena {
    unsigned char *base;
    size_t size, used, high_water;
} sc_arena;

int sc_arena_init(sc_arena *a, size_t bytes, sc_err *err);
void sc_arena_free(sc_arena *a);
/* 64-byte aligned, zeroed; NULL when the arena is exhausted. */
void *sc_arena_push(sc_arena *a, size_t bytes);
size_t sc_arena_mark(const sc_arena *a);
void sc_arena_reset(sc_arena *a, size_t mark);

#endif

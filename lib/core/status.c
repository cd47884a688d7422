#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "status.h"

/* A message longer than the buffer keeps its start and its end ("...": the middle of a long
 * path), so the reason at the end ("No space left on device") is never cut off. */
static void set_msg(sc_err *err, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (n >= (int)sizeof err->msg) {
        char *full = malloc((size_t)n + 1);
        if (full) {
            vsnprintf(full, (size_t)n + 1, fmt, again);
            size_t keep = sizeof err->msg - 1, head = keep / 2 - 2, tail = keep - head - 5;
            memcpy(err->msg, full, head);
            memcpy(err->msg + head, " ... ", 5);
            memcpy(err->msg + head + 5, full + (size_t)n - tail, tail + 1);
            free(full);
        }
    }
    va_end(again);
}

int sc_fail(sc_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        set_msg(err, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

static int prefix_msg(sc_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_msg(err, fmt, ap);
    va_end(ap);
    return err->code;
}

int sc_err_prefix(sc_err *err, const char *fmt, ...)
{
    if (!err) return SC_OK;
    char head[SC_ERR_MSG], old[SC_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    return prefix_msg(err, "%s%s", head, old);
}

void sc_err_clear(sc_err *err)
{
    if (err) {
        err->code = SC_OK;
        err->msg[0] = 0;
    }
}

void *sc_alloc(sc_err *err, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) sc_fail(err, SC_EIO, "out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "status.h"

int sc_fail(sc_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
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
    snprintf(err->msg, sizeof err->msg, "%s%s", head, old);
    return err->code;
}

void sc_err_clear(sc_err *err)
{
    if (err) { err->code = SC_OK; err->msg[0] = 0; }
}

void *sc_alloc(sc_err *err, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) sc_fail(err, SC_EIO, "out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

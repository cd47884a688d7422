#include <stdlib.h>
#include <string.h>
#include "core/blob.h"

void sc_blob_writer_init(sc_blob_writer *w) { memset(w, 0, sizeof *w); }

void sc_blob_writer_fixed(sc_blob_writer *w, void *buf, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->p = buf;
    w->cap = cap;
    w->fixed = 1;
}

void sc_blob_writer_free(sc_blob_writer *w)
{
    if (!w->fixed) free(w->p);
    memset(w, 0, sizeof *w);
}

void *sc_blob_reserve(sc_blob_writer *w, size_t n)
{
    if (w->failed) return NULL;
    if (n > w->cap - w->n) {
        if (w->fixed) {
            w->failed = 1;
            return NULL;
        }
        size_t cap = w->cap ? 2 * w->cap : (size_t)1 << 16;
        while (cap - w->n < n) cap *= 2;
        unsigned char *q = realloc(w->p, cap);
        if (!q) {
            w->failed = 1;
            return NULL;
        }
        w->p = q;
        w->cap = cap;
    }
    void *at = w->p + w->n;
    w->n += n;
    return at;
}

void sc_blob_put(sc_blob_writer *w, const void *v, size_t n)
{
    void *at = sc_blob_reserve(w, n);
    if (at && n) memcpy(at, v, n);
}

void sc_blob_put_i64(sc_blob_writer *w, int64_t v) { sc_blob_put(w, &v, sizeof v); }
void sc_blob_put_f64(sc_blob_writer *w, double v) { sc_blob_put(w, &v, sizeof v); }

void sc_blob_reader_init(sc_blob_reader *r, const void *data, size_t n)
{
    r->p = data;
    r->left = n;
    r->bad = 0;
}

const void *sc_blob_take(sc_blob_reader *r, size_t n)
{
    if (r->bad || r->left < n) {
        r->bad = 1;
        return NULL;
    }
    const void *at = r->p;
    r->p += n;
    r->left -= n;
    return at;
}

void sc_blob_get(sc_blob_reader *r, void *v, size_t n)
{
    const void *at = sc_blob_take(r, n);
    if (at) memcpy(v, at, n);
    else memset(v, 0, n);
}

int64_t sc_blob_get_i64(sc_blob_reader *r)
{
    int64_t v;
    sc_blob_get(r, &v, sizeof v);
    return v;
}
double sc_blob_get_f64(sc_blob_reader *r)
{
    double v;
    sc_blob_get(r, &v, sizeof v);
    return v;
}

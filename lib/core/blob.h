/* The library's one binary serializer: snapshots, checkpoints and messages between ranks are
 * written and read through it. Values are stored in the machine's own byte order and layout
 * (the files it makes are read back on the same kind of machine; each owner's header carries a
 * magic, a version and hashes that refuse anything else).
 *
 * A writer either grows a malloc'd buffer or fills a caller's buffer of fixed capacity (the
 * simulation's snapshot: no allocation); once a put does not fit it is marked failed and later
 * puts do nothing. A reader never reads past its end: a get that does not fit marks it bad and
 * yields zeros, so a caller checks once, after the last get. */
#ifndef SC_BLOB_H
#define SC_BLOB_H
#include <stddef.h>
#include <stdint.h>

typedef struct sc_blob_writer {
    unsigned char *p;
    size_t n, cap;
    int fixed;  /* 1: p is the caller's buffer, never reallocated or freed here */
    int failed; /* out of memory, or past a fixed buffer's capacity */
} sc_blob_writer;

void sc_blob_writer_init(sc_blob_writer *w);
void sc_blob_writer_fixed(sc_blob_writer *w, void *buf, size_t cap);
void sc_blob_writer_free(sc_blob_writer *w); /* a growable writer's buffer */
void sc_blob_put(sc_blob_writer *w, const void *v, size_t n);
void sc_blob_put_i64(sc_blob_writer *w, int64_t v);
void sc_blob_put_f64(sc_blob_writer *w, double v);
/* n bytes left for the caller to fill (NULL when they do not fit): lets a producer write in place. */
void *sc_blob_reserve(sc_blob_writer *w, size_t n);

typedef struct sc_blob_reader {
    const unsigned char *p;
    size_t left;
    int bad; /* a get ran past the end */
} sc_blob_reader;

void sc_blob_reader_init(sc_blob_reader *r, const void *data, size_t n);
void sc_blob_get(sc_blob_reader *r, void *v, size_t n);
int64_t sc_blob_get_i64(sc_blob_reader *r);
double sc_blob_get_f64(sc_blob_reader *r);
/* The next n bytes in place (NULL, and bad, when fewer are left). */
const void *sc_blob_take(sc_blob_reader *r, size_t n);

#endif

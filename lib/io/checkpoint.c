#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "io/h5.h"
#include "io/checkpoint.h"

uint64_t sc_checkpoint_checksum(const void *data, size_t n) { return sc_hash_bytes(SC_HASH_INIT, data, n); }

static uint64_t schema_hash(const char *schema) { return sc_hash_bytes(SC_HASH_INIT, schema, strlen(schema)); }

/* the checksum covers the header's first five fields, then the payload */
static uint64_t seal_sum(const unsigned char *head, const void *payload, size_t n)
{
    return sc_hash_bytes(sc_hash_bytes(SC_HASH_INIT, head, SC_CHECKPOINT_HEADER - 8), payload, n);
}

int sc_checkpoint_seal(const char *schema, uint64_t run_hash, const void *payload, size_t n, unsigned char **out, size_t *nout, sc_err *err)
{
    unsigned char *b = malloc(SC_CHECKPOINT_HEADER + n);
    if (!b) return sc_fail(err, SC_EIO, "out of memory sealing the checkpoint");
    uint64_t h[6] = {SC_CHECKPOINT_MAGIC, SC_CHECKPOINT_FORMAT, schema_hash(schema), run_hash, (uint64_t)n, 0};
    memcpy(b, h, sizeof h);
    if (n) memcpy(b + SC_CHECKPOINT_HEADER, payload, n);
    h[5] = seal_sum(b, payload, n);
    memcpy(b + SC_CHECKPOINT_HEADER - 8, &h[5], 8);
    *out = b;
    *nout = SC_CHECKPOINT_HEADER + n;
    return SC_OK;
}

int sc_checkpoint_unseal(const unsigned char *blob, size_t n, const char *schema, uint64_t run_hash, const unsigned char **payload, size_t *np,
                         sc_err *err)
{
    *payload = NULL;
    *np = 0;
    uint64_t h[6];
    if (n < SC_CHECKPOINT_HEADER) return sc_fail(err, SC_EINPUT, "not a softcon checkpoint (%zu bytes, shorter than the header)", n);
    memcpy(h, blob, sizeof h);
    if (h[0] != SC_CHECKPOINT_MAGIC) return sc_fail(err, SC_EINPUT, "not a softcon checkpoint (no header; made by an older softcon?)");
    if (h[1] != SC_CHECKPOINT_FORMAT)
        return sc_fail(err, SC_EINPUT, "checkpoint format %llu, this softcon reads format %d", (unsigned long long)h[1], SC_CHECKPOINT_FORMAT);
    if (h[2] != schema_hash(schema)) return sc_fail(err, SC_EINPUT, "not a %s (a checkpoint of another tool or method)", schema);
    if (h[4] != (uint64_t)(n - SC_CHECKPOINT_HEADER))
        return sc_fail(err, SC_EINPUT, "damaged checkpoint: the header says %llu bytes of state, the file holds %zu", (unsigned long long)h[4],
                       n - SC_CHECKPOINT_HEADER);
    if (h[5] != seal_sum(blob, blob + SC_CHECKPOINT_HEADER, n - SC_CHECKPOINT_HEADER))
        return sc_fail(err, SC_EINPUT, "damaged checkpoint: checksum mismatch");
    if (h[3] != run_hash)
        return sc_fail(err, SC_EINPUT, "checkpoint made for other inputs (the config, an input file, the seed or the build differ)");
    *payload = blob + SC_CHECKPOINT_HEADER;
    *np = n - SC_CHECKPOINT_HEADER;
    return SC_OK;
}

int sc_checkpoint_write(const char *path, const sc_checkpoint_info *info, const void *data, size_t n, sc_err *err)
{
    unsigned char *blob;
    size_t nb;
    int rc = sc_checkpoint_seal(info->schema, info->run_hash, data, n, &blob, &nb, err);
    if (rc) return rc;
    sc_h5 *f;
    if ((rc = sc_h5_create(path, &f, err))) {
        free(blob);
        return rc;
    }
    char hash[24], sum[24];
    uint64_t checksum;
    memcpy(&checksum, blob + SC_CHECKPOINT_HEADER - 8, 8);
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)info->run_hash);
    snprintf(sum, sizeof sum, "%016llx", (unsigned long long)checksum);
    if (sc_h5_attr_str(f, "/", "schema", info->schema, err) || sc_h5_attr_str(f, "/", "description", info->description, err) ||
        sc_h5_attr_i64(f, "/", "format", SC_CHECKPOINT_FORMAT, err) || sc_h5_attr_i64(f, "/", info->progress_name, info->progress, err) ||
        sc_h5_attr_str(f, "/", "run_hash", hash, err) || sc_h5_attr_str(f, "/", "checksum", sum, err) ||
        sc_h5_write_bytes(f, info->dataset, nb, blob, info->dataset_description, err))
        rc = err->code;
    free(blob);
    if (rc) {
        sc_h5_abort(f);
        return rc;
    }
    return sc_h5_commit(f, err);
}

static void *write_in_background(void *arg)
{
    sc_checkpoint_writer *w = arg;
    sc_err_clear(&w->err);
    w->rc = sc_checkpoint_write(w->path, &w->info, w->data, w->n, &w->err);
    free(w->data);
    w->data = NULL;
    return NULL;
}

int sc_checkpoint_wait(sc_checkpoint_writer *w, sc_err *err)
{
    if (!w->thread) return SC_OK;
    pthread_join(*(pthread_t *)w->thread, NULL);
    free(w->thread);
    w->thread = NULL;
    if (w->rc) *err = w->err;
    return w->rc;
}

int sc_checkpoint_write_async(sc_checkpoint_writer *w, const char *path, const sc_checkpoint_info *info, void *data, size_t n, sc_err *err)
{
    int rc = sc_checkpoint_wait(w, err);
    if (rc) {
        free(data);
        return rc;
    }
    *w = (sc_checkpoint_writer){.path = path, .info = *info, .data = data, .n = n};
    pthread_t *t = malloc(sizeof *t);
    /* the stop signals are the main thread's to see */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int started = t && pthread_create(t, NULL, write_in_background, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started) {
        w->thread = t;
        return SC_OK;
    }
    free(t); /* no thread: write it here */
    write_in_background(w);
    if (w->rc) *err = w->err;
    return w->rc;
}

typedef struct blob_read {
    const char *dataset;
    unsigned char *data;
    size_t n;
} blob_read;

static int read_blob(sc_h5 *f, void *arg, sc_err *err)
{
    blob_read *b = arg;
    return sc_h5_read_bytes(f, b->dataset, &b->n, &b->data, err);
}

int sc_checkpoint_read(const char *path, const char *dataset, const char *schema, uint64_t run_hash, unsigned char **data, size_t *n, sc_err *err)
{
    /* through the guard like every other HDF5 input: a damaged container can crash libhdf5 itself */
    blob_read b = {dataset, NULL, 0};
    int rc = sc_h5_read_file(path, read_blob, &b, err);
    *data = b.data;
    *n = b.n;
    const unsigned char *payload;
    size_t np;
    if (!rc && (rc = sc_checkpoint_unseal(*data, *n, schema, run_hash, &payload, &np, err))) sc_err_prefix(err, "%s: ", path);
    if (rc) {
        free(*data);
        *data = NULL;
        *n = 0;
    }
    return rc;
}

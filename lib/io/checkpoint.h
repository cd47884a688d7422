/* Checkpoints of the long runs (sample-openloop, learn-feedback): an HDF5 file holding the run's
 * state as one byte dataset with attributes that describe it, written by rank 0 to a temporary
 * file and renamed (a crash never leaves half a checkpoint).
 *
 * The dataset's bytes are a sealed blob: a header of six 8-byte fields (magic "SCCHKPT\0", format
 * version, the FNV-1a hash of the schema, the run hash, the payload's length, and the 64-bit
 * FNV-1a checksum of the header's first five fields and the payload), then the payload (the
 * tool's own layout). A reader checks all of it before decoding a byte of the payload, and the
 * decoders range-check every index, count and value: a damaged checkpoint is SC_EINPUT naming
 * the file (docs/formats.md, Checkpoints). */
#ifndef SC_CHECKPOINT_H
#define SC_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"

#define SC_CHECKPOINT_FORMAT 2                     /* 1: the payload alone, without header */
#define SC_CHECKPOINT_HEADER 48                    /* bytes */
#define SC_CHECKPOINT_MAGIC  0x0054504b48434353ull /* "SCCHKPT\0" in the machine's byte order */

typedef struct sc_checkpoint_info {
    const char *schema;      /* root attribute, e.g. "softcon.samcon_checkpoint/2"; its hash is in the header */
    const char *description; /* what it holds and how to continue */
    const char *dataset;     /* the byte dataset, e.g. "/search" */
    const char *dataset_description;
    const char *progress_name; /* an integer root attribute saying how far the run got ... */
    int64_t progress;          /* ... and its value */
    uint64_t run_hash;         /* identifies the inputs: config, character, other inputs, seed, build (header and root attribute) */
} sc_checkpoint_info;

/* 64-bit FNV-1a of the bytes: the header's checksum. */
uint64_t sc_checkpoint_checksum(const void *data, size_t n);
/* The payload sealed: header + payload, malloc'd in *out (*nout bytes). */
int sc_checkpoint_seal(const char *schema, uint64_t run_hash, const void *payload, size_t n, unsigned char **out, size_t *nout, sc_err *err);
/* Checks a sealed blob (magic, format, schema, length, checksum, then the run hash) and points
 * *payload at its payload. SC_EINPUT saying what is wrong (the caller names the file). */
int sc_checkpoint_unseal(const unsigned char *blob, size_t n, const char *schema, uint64_t run_hash, const unsigned char **payload, size_t *np,
                         sc_err *err);

int sc_checkpoint_write(const char *path, const sc_checkpoint_info *info, const void *data, size_t n, sc_err *err);

/* A checkpoint written by a thread of its own while the run goes on, so that the other ranks do
 * not wait for rank 0's disk. One at a time: a write waits for the one before. The caller keeps
 * path and info's strings alive until sc_checkpoint_wait, and must not use HDF5 meanwhile. */
typedef struct sc_checkpoint_writer {
    void *thread; /* pthread_t, while a write is in flight */
    const char *path;
    sc_checkpoint_info info;
    void *data; /* malloc'd payload, owned by the writer */
    size_t n;
    int rc;
    sc_err err;
} sc_checkpoint_writer;
/* Waits for the write before (returning its error, if any, and starting nothing), then starts
 * this one: data (malloc'd) is the writer's from here on, freed whatever happens. */
int sc_checkpoint_write_async(sc_checkpoint_writer *w, const char *path, const sc_checkpoint_info *info, void *data, size_t n, sc_err *err);
/* Waits for the write in flight (none: SC_OK) and returns its outcome. */
int sc_checkpoint_wait(sc_checkpoint_writer *w, sc_err *err);
/* Reads the byte dataset and checks its seal (schema and run hash as the writer's): *data is the
 * whole sealed blob (malloc'd, *n bytes), its payload at SC_CHECKPOINT_HEADER. Errors name path.
 * Rank 0 reads; sc_par_share_bytes gives the bytes, or the same error, to every rank. */
int sc_checkpoint_read(const char *path, const char *dataset, const char *schema, uint64_t run_hash, unsigned char **data, size_t *n, sc_err *err);

#endif

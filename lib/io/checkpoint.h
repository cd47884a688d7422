/* Checkpoints of the long runs (sample-openloop, learn-feedback): an HDF5 file holding the run's
 * state as one byte dataset (the run's own layout) with attributes that describe it, written by
 * rank 0 to a temporary file and renamed (a crash never leaves half a checkpoint). */
#ifndef SC_CHECKPOINT_H
#define SC_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"

typedef struct sc_checkpoint_info {
    const char *schema;      /* root attribute, e.g. "softcon.samcon_checkpoint/1" */
    const char *description; /* what it holds and how to continue */
    const char *dataset;     /* the byte dataset, e.g. "/search" */
    const char *dataset_description;
    const char *progress_name; /* an integer root attribute saying how far the run got ... */
    int64_t progress;          /* ... and its value */
    uint64_t run_hash;         /* identifies the inputs (root attribute, hex) */
} sc_checkpoint_info;

int sc_checkpoint_write(const char *path, const sc_checkpoint_info *info, const void *data, size_t n, sc_err *err);
/* Reads the byte dataset (*data malloc'd, *n bytes). Rank 0 reads; sc_par_share_bytes gives the
 * bytes, or the same error, to every rank. */
int sc_checkpoint_read(const char *path, const char *dataset, unsigned char **data, size_t *n, sc_err *err);

#endif

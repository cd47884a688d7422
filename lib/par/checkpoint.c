#include <stdio.h>
#include <stdlib.h>
#include "io/h5.h"
#include "par/checkpoint.h"
#include "par/par.h"

int sc_checkpoint_write(const char *path, const sc_checkpoint_info *info, const void *data, size_t n, sc_err *err)
{
    sc_h5 *f;
    int rc = sc_h5_create(path, &f, err);
    if (rc) return rc;
    char hash[24];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)info->run_hash);
    rc = sc_h5_attr_str(f, "/", "schema", info->schema, err) || sc_h5_attr_str(f, "/", "description", info->description, err) ||
         sc_h5_attr_i64(f, "/", info->progress_name, info->progress, err) || sc_h5_attr_str(f, "/", "run_hash", hash, err) ||
         sc_h5_write_bytes(f, info->dataset, n, data, info->dataset_description, err);
    if (rc) {
        sc_h5_abort(f);
        return rc;
    }
    return sc_h5_commit(f, err);
}

int sc_checkpoint_read(sc_par *par, const char *path, const char *dataset, unsigned char **data, size_t *n, sc_err *err)
{
    *data = NULL;
    int64_t len = 0;
    if (sc_par_rank(par) == 0) {
        sc_h5 *f;
        size_t sz = 0;
        int rc = sc_h5_open(path, &f, err);
        if (!rc) {
            rc = sc_h5_read_bytes(f, dataset, &sz, data, err);
            sc_h5_close(f);
        }
        len = rc ? -rc : (int64_t)sz;
    }
    sc_par_bcast(par, &len, sizeof len, 0, err);
    sc_par_bcast(par, err->msg, SC_ERR_MSG, 0, err);
    if (len < 0) {
        free(*data);
        *data = NULL;
        err->code = (int)-len;
        return (int)-len;
    }
    if (!*data && !(*data = malloc((size_t)len + 1))) return sc_fail(err, SC_EIO, "out of memory for the checkpoint");
    int rc = sc_par_bcast(par, *data, (size_t)len, 0, err);
    if (rc) {
        free(*data);
        *data = NULL;
        return rc;
    }
    *n = (size_t)len;
    return SC_OK;
}

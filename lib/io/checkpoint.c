#include <stdio.h>
#include <stdlib.h>
#include "io/h5.h"
#include "io/checkpoint.h"

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

int sc_checkpoint_read(const char *path, const char *dataset, unsigned char **data, size_t *n, sc_err *err)
{
    *data = NULL;
    *n = 0;
    sc_h5 *f;
    int rc = sc_h5_open(path, &f, err);
    if (rc) return rc;
    rc = sc_h5_read_bytes(f, dataset, n, data, err);
    sc_h5_close(f);
    return rc;
}

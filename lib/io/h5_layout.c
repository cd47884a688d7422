/* Layouts every softcon file shares (io/h5.h): a series of bone rotations or poses over /time,
 * with the bones named in /bones/names. The formats' owners (lib/store) read them at their own
 * paths; nothing here knows a format. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "io/h5.h"

void sc_h5_rotations_free(sc_h5_rotations *r)
{
    free(r->time);
    free(r->quat);
    if (r->names) sc_h5_free_strings(r->names, r->nb);
    memset(r, 0, sizeof *r);
}

int sc_h5_read_rotations(sc_h5 *f, const char *dataset, size_t max_name, sc_h5_rotations *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    size_t dims[3] = {0, 0, 4};
    int rc;
    if ((rc = sc_h5_read_f64(f, "/time", 1, &r->n, &r->time, err)) || (rc = sc_h5_check_count(f, "/time", r->n, 1, INT_MAX / 1024, err)) ||
        (rc = sc_h5_check_increasing(f, "/time", r->time, r->n, err)) || (rc = sc_h5_read_strings(f, "/bones/names", &r->nb, &r->names, err)) ||
        (rc = sc_h5_check_count(f, "/bones/names", r->nb, 1, 256, err)) ||
        (rc = sc_h5_check_names(f, "/bones/names", r->names, r->nb, max_name, err)))
        goto done;
    dims[0] = r->n;
    dims[1] = r->nb;
    if ((rc = sc_h5_read_f64(f, dataset, 3, dims, &r->quat, err))) goto done;
    rc = sc_h5_check_unit_quats(f, dataset, r->quat, 3, dims, err);
done:
    if (rc) sc_h5_rotations_free(r);
    return rc;
}

void sc_h5_poses_free(sc_h5_poses *p)
{
    free(p->time);
    free(p->pos);
    free(p->quat);
    if (p->names) sc_h5_free_strings(p->names, p->nbones);
    memset(p, 0, sizeof *p);
}

int sc_h5_read_poses(sc_h5 *f, const char *time_path, const char *pos_path, const char *quat_path, sc_h5_poses *p, sc_err *err)
{
    memset(p, 0, sizeof *p);
    int rc;
    if ((rc = sc_h5_read_strings(f, "/bones/names", &p->nbones, &p->names, err)) || (rc = sc_h5_read_f64(f, time_path, 1, &p->n, &p->time, err)))
        goto done;
    size_t d3[3] = {p->n, p->nbones, 3}, d4[3] = {p->n, p->nbones, 4};
    if ((rc = sc_h5_read_f64(f, pos_path, 3, d3, &p->pos, err))) goto done;
    rc = sc_h5_read_f64(f, quat_path, 3, d4, &p->quat, err);
done:
    if (rc) sc_h5_poses_free(p);
    return rc;
}

/* The target-trajectory layout that openloop.h5 and reference.h5 share, as simulate replays it:
 * /time, /bones/names, a [T, nb, 4] rotation dataset (/targets/local_quat, or the reference's raw
 * poses) and the reference time each key plays; and the state such a file starts from (an
 * openloop.h5's /start, else the reference's state). The formats themselves are owned by
 * store/openloop and store/reference; this file reads only this common part of them. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/h5.h"
#include "motion/reference.h"
#include "store/reference.h"
#include "store/trajectory.h"

/* /time, /bones/names (matched to the character by name), `dataset` and the reference time each
   key plays: the layout an openloop.h5 and a reference.h5 share. */
static int read_targets(sc_h5 *f, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    if (!dataset || !dataset[0]) dataset = "/targets/local_quat";
    const char *path = sc_h5_filename(f);
    int rc;
    size_t nt = 0, dims[3] = {0, 0, 4}, nnames = 0;
    double *t = NULL, *q = NULL;
    char **names = NULL;
    if ((rc = sc_h5_read_f64(f, "/time", 1, &nt, &t, err)) || (rc = sc_h5_check_count(f, "/time", nt, 1, INT_MAX / 1024, err)) ||
        (rc = sc_h5_check_increasing(f, "/time", t, nt, err)) || (rc = sc_h5_read_strings(f, "/bones/names", &nnames, &names, err)) ||
        (rc = sc_h5_check_count(f, "/bones/names", nnames, 1, 256, err)) ||
        (rc = sc_h5_check_names(f, "/bones/names", names, nnames, SC_NAME_LEN, err)))
        goto done;
    dims[0] = nt;
    dims[1] = nnames;
    if ((rc = sc_h5_read_f64(f, dataset, 3, dims, &q, err)) || (rc = sc_h5_check_unit_quats(f, dataset, q, 3, dims, err))) goto done;
    c->kind = SC_CTRL_TRAJECTORY;
    c->nbones = m->nbones;
    c->nkeys = (int)nt;
    c->times = t;
    t = NULL;
    c->keys = malloc(nt * (size_t)m->nbones * sizeof *c->keys);
    if (!c->keys) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nt * (size_t)m->nbones; i++) c->keys[i] = sc_q_identity();
    for (size_t j = 0; j < nnames; j++) {
        int b = sc_model_bone_index(m, names[j]);
        if (b < 0) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: bone '%s' is not in the character", path, names[j]);
            goto done;
        }
        for (size_t i = 0; i < nt; i++) {
            const double *s = q + (i * nnames + j) * 4;
            sc_quat k = {s[0], s[1], s[2], s[3]}; /* finite and of norm ~1: checked above */
            /* unit samples are kept as stored, so a recorded trajectory replays bit for bit */
            double n2 = k.w * k.w + k.x * k.x + k.y * k.y + k.z * k.z;
            c->keys[i * (size_t)m->nbones + (size_t)b] = fabs(n2 - 1) <= 1e-12 ? k : sc_q_normalize(k);
        }
    }
    if (sc_h5_exists(f, "/targets/reference_time")) {
        size_t nr = nt;
        if ((rc = sc_h5_read_f64(f, "/targets/reference_time", 1, &nr, &c->ref_time, err)) ||
            (rc = sc_h5_check_finite(f, "/targets/reference_time", c->ref_time, nr, 1, err)))
            goto done;
    } else if (sc_h5_exists(f, "/reference/local_quat")) { /* a reference.h5 plays its own time */
        if (!(c->ref_time = malloc(nt * sizeof(double)))) {
            rc = sc_fail(err, SC_EIO, "out of memory");
            goto done;
        }
        memcpy(c->ref_time, c->times, nt * sizeof(double));
    }
    snprintf(c->source, sizeof c->source, "%s", path);
    snprintf(c->dataset, sizeof c->dataset, "%s", dataset);
done:
    free(t);
    free(q);
    if (names) sc_h5_free_strings(names, nnames);
    if (rc) sc_controller_free(c);
    return rc;
}

typedef struct trajectory_arg {
    const char *dataset;
    const sc_model *m;
    sc_controller *c;
} trajectory_arg;

static int trajectory_reader(sc_h5 *f, void *arg, sc_err *err)
{
    trajectory_arg *a = arg;
    return read_targets(f, a->dataset, a->m, a->c, err);
}

int sc_trajectory_read(const char *path, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    trajectory_arg a = {dataset, m, c};
    return sc_h5_read_file(path, trajectory_reader, &a, err);
}

int sc_trajectory_read_image(const void *data, size_t size, const char *name, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    trajectory_arg a = {dataset, m, c};
    return sc_h5_read_image(data, size, name, trajectory_reader, &a, err);
}

/* /start of an openloop.h5: root_pos [3], root_vel [3], local_quat [nb, 4], local_ang_vel [nb, 3]
 * with /bones/names giving the order. */
static int read_start_group(sc_h5 *f, const char *path, const sc_model *m, double root_pos[3], sc_quat *local, double root_vel[3],
                            double *local_ang_vel, sc_err *err)
{
    size_t nnames = 0, d3 = 3, dq[2] = {0, 4}, dw[2] = {0, 3};
    char **names = NULL;
    double *rp = NULL, *rv = NULL, *q = NULL, *w = NULL;
    int rc = sc_h5_read_strings(f, "/bones/names", &nnames, &names, err);
    if (rc) return rc;
    dq[0] = dw[0] = nnames;
    if ((rc = sc_h5_read_f64(f, "/start/root_pos", 1, &d3, &rp, err)) || (d3 = 3, rc = sc_h5_read_f64(f, "/start/root_vel", 1, &d3, &rv, err)) ||
        (rc = sc_h5_read_f64(f, "/start/local_quat", 2, dq, &q, err)) || (rc = sc_h5_read_f64(f, "/start/local_ang_vel", 2, dw, &w, err)) ||
        (rc = sc_h5_check_range(f, "/start/root_pos", rp, 3, 1, -1e4, 1e4, 0, err)) ||
        (rc = sc_h5_check_range(f, "/start/root_vel", rv, 3, 1, -1e3, 1e3, 0, err)) ||
        (rc = sc_h5_check_unit_quats(f, "/start/local_quat", q, 2, dq, err)) ||
        (rc = sc_h5_check_range(f, "/start/local_ang_vel", w, 3 * nnames, 3, -1e4, 1e4, 0, err)))
        goto done;
    for (int b = 0; b < m->nbones; b++) local[b] = sc_q_identity();
    if (local_ang_vel) memset(local_ang_vel, 0, 3 * sizeof(double) * (size_t)m->nbones);
    for (size_t j = 0; j < nnames; j++) {
        int b = sc_model_bone_index(m, names[j]);
        if (b < 0) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: bone '%s' is not in the character", path, names[j]);
            goto done;
        }
        local[b] = (sc_quat){q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]};
        if (local_ang_vel) memcpy(local_ang_vel + 3 * b, w + 3 * j, 3 * sizeof(double));
    }
    memcpy(root_pos, rp, 3 * sizeof(double));
    if (root_vel) memcpy(root_vel, rv, 3 * sizeof(double));
done:
    free(rp);
    free(rv);
    free(q);
    free(w);
    sc_h5_free_strings(names, nnames);
    return rc;
}

typedef struct {
    const sc_model *m;
    double *root_pos, *root_vel, *local_ang_vel;
    sc_quat *local;
    int has_start;
} start_arg;

static int start_reader(sc_h5 *f, void *arg, sc_err *err)
{
    start_arg *a = arg;
    a->has_start = sc_h5_exists(f, "/start");
    if (!a->has_start) return SC_OK;
    return read_start_group(f, sc_h5_filename(f), a->m, a->root_pos, a->local, a->root_vel, a->local_ang_vel, err);
}

int sc_trajectory_start(const char *path, const sc_model *m, double t, double root_pos[3], sc_quat *local, double root_vel[3], double *local_ang_vel,
                        sc_err *err)
{
    start_arg a = {m, root_pos, root_vel, local_ang_vel, local, 0};
    int rc = sc_h5_read_file(path, start_reader, &a, err); /* guarded, like every whole-file read */
    if (rc || a.has_start) return rc;
    sc_reference r;
    if ((rc = sc_reference_read(path, &r, err))) return rc;
    rc = sc_reference_state_at(&r, m, t, root_pos, local, root_vel, local_ang_vel, err);
    sc_reference_free(&r);
    if (rc) sc_err_prefix(err, "%s: ", path);
    return rc;
}

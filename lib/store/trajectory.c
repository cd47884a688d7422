/* Which format a target-trajectory file is, and its owner's reader: simulate replays an
 * openloop.h5 or a reference.h5 (any file whose schema is not a reference's is read as an
 * openloop.h5), either refused when made for another character (sc_character_hash_verify, the
 * check policies get too); each format's owner (store/openloop, store/reference) reads its part. */
#include <stdlib.h>
#include <string.h>
#include "io/h5.h"
#include "motion/reference.h"
#include "store/character.h"
#include "store/openloop.h"
#include "store/reference.h"
#include "store/trajectory.h"

static int is_reference(sc_h5 *f)
{
    char *schema = NULL;
    int yes = !sc_h5_read_attr_str(f, "/", "schema", &schema, NULL) && !strcmp(schema, SC_REFERENCE_SCHEMA);
    free(schema);
    return yes;
}

typedef struct trajectory_arg {
    const char *dataset;
    const sc_model *m;
    sc_controller *c;
} trajectory_arg;

static int trajectory_reader(sc_h5 *f, void *arg, sc_err *err)
{
    trajectory_arg *a = arg;
    int rc = sc_character_hash_verify(f, a->m, err); /* either format: made for this character */
    if (rc) return rc;
    return is_reference(f) ? sc_reference_read_trajectory_h5(f, a->dataset, a->m, a->c, err)
                           : sc_openloop_read_trajectory_h5(f, a->dataset, a->m, a->c, err);
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

typedef struct {
    const sc_model *m;
    double *root_pos, *root_vel, *local_ang_vel;
    sc_quat *local;
    int has_start;
} start_arg;

static int start_reader(sc_h5 *f, void *arg, sc_err *err)
{
    start_arg *a = arg;
    return sc_openloop_read_start_h5(f, a->m, a->root_pos, a->local, a->root_vel, a->local_ang_vel, &a->has_start, err);
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

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/controller.h"
#include "motion/reference.h"
#include "store/reference.h" /* sc_reference_read, until the trajectory reader leaves lib/sampling */
#include "io/config.h"
#include "io/h5.h"
#include "io/paths.h"

void sc_controller_free(sc_controller *c)
{
    free(c->times);
    free(c->keys);
    free(c->ref_time);
    memset(c, 0, sizeof *c);
}

int sc_controller_load_trajectory_h5(sc_h5 *f, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    if (!dataset || !dataset[0]) dataset = "/targets/local_quat";
    const char *path = sc_h5_filename(f);
    int rc;
    size_t nt = 0, dims[3] = {0, 0, 4}, nnames = 0;
    double *t = NULL, *q = NULL;
    char **names = NULL;
    if ((rc = sc_h5_read_f64(f, "/time", 1, &nt, &t, err)) || (rc = sc_h5_check_count(f, "/time", nt, 1, INT_MAX / 1024, err)) ||
        (rc = sc_h5_check_increasing(f, "/time", t, nt, err)) ||
        (rc = sc_h5_read_strings(f, "/bones/names", &nnames, &names, err)) ||
        (rc = sc_h5_check_count(f, "/bones/names", nnames, 1, 256, err)) ||
        (rc = sc_h5_check_names(f, "/bones/names", names, nnames, SC_NAME_LEN, err)))
        goto done;
    dims[0] = nt;
    dims[1] = nnames;
    if ((rc = sc_h5_read_f64(f, dataset, 3, dims, &q, err)) || (rc = sc_h5_check_unit_quats(f, dataset, q, 3, dims, err)))
        goto done;
    c->kind = SC_CTRL_TRAJECTORY;
    c->nbones = m->nbones;
    c->nkeys = (int)nt;
    c->times = t;
    t = NULL;
    c->keys = malloc(nt * (size_t)m->nbones * sizeof *c->keys);
    if (!c->keys) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    for (size_t i = 0; i < nt * (size_t)m->nbones; i++) c->keys[i] = sc_q_identity();
    for (size_t j = 0; j < nnames; j++) {
        int b = sc_model_bone_index(m, names[j]);
        if (b < 0) { rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: bone '%s' is not in the character", path, names[j]); goto done; }
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
        if (!(c->ref_time = malloc(nt * sizeof(double)))) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
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

typedef struct {
    const char *dataset;
    const sc_model *m;
    sc_controller *c;
} traj_arg;

static int traj_reader(sc_h5 *f, void *arg, sc_err *err)
{
    traj_arg *a = arg;
    return sc_controller_load_trajectory_h5(f, a->dataset, a->m, a->c, err);
}

int sc_controller_load_trajectory(const char *path, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    traj_arg a = {dataset, m, c};
    return sc_h5_read_file(path, traj_reader, &a, err);
}

int sc_controller_load_trajectory_image(const void *data, size_t size, const char *name, const char *dataset,
                                        const sc_model *m, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    traj_arg a = {dataset, m, c};
    return sc_h5_read_image(data, size, name, traj_reader, &a, err);
}

/* A keyframe pose: `bone: [rx, ry, rz]` rotation vector in degrees (axis times angle, in the
 * parent frame), or `bone: angle` in degrees about a hinge's axis. */
static int read_pose(sc_cfg_node *pose, const sc_model *m, sc_quat *out, sc_err *err)
{
    char w[256];
    /* a sequence has no keys: [5, 0, -5] as a pose would look up a bone named NULL */
    if (!sc_cfg_is_map(pose))
        return sc_fail(err, SC_EINPUT, "%s: a pose must be a map of bone: rotation", sc_cfg_where(pose, w, sizeof w));
    for (int b = 0; b < m->nbones; b++) out[b] = sc_q_identity();
    for (int i = 0; i < sc_cfg_len(pose); i++) {
        const char *name = sc_cfg_key_at(pose, i);
        sc_cfg_node *v = sc_cfg_at(pose, i);
        int b = sc_model_bone_index(m, name);
        if (b < 0) return sc_fail(err, SC_EINPUT, "%s: '%s' is not a bone of the character", sc_cfg_where(v, w, sizeof w), name);
        if (sc_cfg_is_scalar(v)) {
            double deg;
            int rc = sc_cfg_scalar_double(v, &deg, err);
            if (rc) return rc;
            if (fabs(deg) > 3600)
                return sc_fail(err, SC_EINPUT, "%s: pose of '%s' = %g degrees is outside [-3600, 3600]", sc_cfg_where(v, w, sizeof w), name, deg);
            sc_vec3 axis = m->joint_type[b] == SC_JOINT_HINGE ? sc_v3_load(m->hinge_axis + 3 * b) : sc_v3(1, 0, 0);
            out[b] = sc_q_axis_angle(axis, deg * SC_PI / 180);
        } else {
            if (!sc_cfg_is_seq(v) || sc_cfg_len(v) != 3)
                return sc_fail(err, SC_EINPUT, "%s: pose of '%s' must be an angle (hinge) or [rx, ry, rz] in degrees", sc_cfg_where(v, w, sizeof w), name);
            double r[3];
            for (int k = 0; k < 3; k++) {
                int rc = sc_cfg_scalar_double(sc_cfg_at(v, k), &r[k], err);
                if (rc) return rc;
                if (fabs(r[k]) > 3600)
                    return sc_fail(err, SC_EINPUT, "%s: pose of '%s' [%d] = %g degrees is outside [-3600, 3600]",
                                   sc_cfg_where(sc_cfg_at(v, k), w, sizeof w), name, k, r[k]);
            }
            out[b] = sc_q_exp(sc_v3_scale(sc_v3_load(r), SC_PI / 180));
        }
    }
    return SC_OK;
}

int sc_controller_from_config(sc_cfg_node *ctrl, const sc_model *m, const char *config_path, sc_controller *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    static const char *const kinds[] = {"hold", "keyframes", "trajectory", "policy"};
    int kind, rc;
    char w[256];
    if ((rc = sc_cfg_enum(ctrl, "type", kinds, 4, SC_CTRL_HOLD, &kind, err)) || (rc = sc_cfg_bool(ctrl, "loop", 0, &c->loop, err)) ||
        (rc = sc_cfg_double_range(ctrl, "time_offset", 0, -1e6, 1e6, &c->offset, err)))
        return rc;
    c->nbones = m->nbones;
    if (kind == SC_CTRL_POLICY) {
        char name[1024];
        c->kind = kind;
        if ((rc = sc_cfg_string(ctrl, "file", NULL, name, sizeof name, err)) || (rc = sc_cfg_int(ctrl, "cycles", 0, 0, 1000000, &c->cycles, err)) ||
            (rc = sc_cfg_bool(ctrl, "feedback", 1, &c->feedback, err)) ||
            (rc = sc_find_input(name, config_path, 0, sc_cfg_where(sc_cfg_get(ctrl, "file"), w, sizeof w), c->source, sizeof c->source, err)))
            return rc;
        return SC_OK;
    }
    if (kind == SC_CTRL_TRAJECTORY) {
        char name[1024], path[1024], dataset[128];
        int loop = c->loop;
        double off = c->offset;
        if ((rc = sc_cfg_string(ctrl, "file", NULL, name, sizeof name, err)) ||
            (rc = sc_cfg_string(ctrl, "dataset", "/targets/local_quat", dataset, sizeof dataset, err)) ||
            (rc = sc_find_input(name, config_path, 0, sc_cfg_where(sc_cfg_get(ctrl, "file"), w, sizeof w), path, sizeof path, err)) ||
            (rc = sc_controller_load_trajectory(path, dataset, m, c, err)))
            return rc;
        c->loop = loop;
        c->offset = off;
        return SC_OK;
    }
    c->kind = kind;
    if (kind == SC_CTRL_HOLD) {
        c->nkeys = 1;
        c->times = calloc(1, sizeof *c->times);
        c->keys = malloc((size_t)m->nbones * sizeof *c->keys);
        if (!c->times || !c->keys) { sc_controller_free(c); return sc_fail(err, SC_EIO, "out of memory"); }
        sc_cfg_node *pose = sc_cfg_get(ctrl, "pose");
        if (pose) {
            if (!sc_cfg_is_map(pose)) { sc_controller_free(c); return sc_fail(err, SC_EINPUT, "%s: controller.pose must be a map of bone: rotation", sc_cfg_where(pose, w, sizeof w)); }
            if ((rc = read_pose(pose, m, c->keys, err))) { sc_controller_free(c); return rc; }
        } else {
            for (int b = 0; b < m->nbones; b++) c->keys[b] = sc_q_identity();
        }
        return SC_OK;
    }
    sc_cfg_node *list;
    if ((rc = sc_cfg_list(ctrl, "keyframes", 1, &list, err))) return rc;
    int n = sc_cfg_len(list);
    if (n < 1) return sc_fail(err, SC_EINPUT, "%s: keyframes is empty", sc_cfg_where(list, w, sizeof w));
    c->nkeys = n;
    c->times = calloc((size_t)n, sizeof *c->times);
    c->keys = malloc((size_t)n * (size_t)m->nbones * sizeof *c->keys);
    if (!c->times || !c->keys) { sc_controller_free(c); return sc_fail(err, SC_EIO, "out of memory"); }
    for (int i = 0; i < n; i++) {
        sc_cfg_node *k = sc_cfg_at(list, i), *pose;
        if (!sc_cfg_is_map(k)) { sc_controller_free(c); return sc_fail(err, SC_EINPUT, "%s: a keyframe is {time: t, pose: {...}}", sc_cfg_where(k, w, sizeof w)); }
        if ((rc = sc_cfg_double_range(k, "time", 0, 0, 1e6, &c->times[i], err)) || (rc = sc_cfg_require(k, "pose", &pose, err)) ||
            (rc = read_pose(pose, m, c->keys + (size_t)i * m->nbones, err))) {
            sc_controller_free(c);
            return rc;
        }
        if (i > 0 && !(c->times[i] > c->times[i - 1])) {
            sc_controller_free(c);
            return sc_fail(err, SC_EINPUT, "%s: keyframe times must increase", sc_cfg_where(k, w, sizeof w));
        }
    }
    return SC_OK;
}

double sc_controller_duration(const sc_controller *c) { return c->nkeys ? c->times[c->nkeys - 1] : 0; }

double sc_controller_reference_time(const sc_controller *c, double t)
{
    if (!c->ref_time || c->nkeys < 1) return NAN;
    t += c->offset;
    const double *tt = c->times;
    int n = c->nkeys;
    if (n == 1 || t <= tt[0]) return c->ref_time[0] + (t - tt[0]);
    if (t >= tt[n - 1]) return c->ref_time[n - 1] + (t - tt[n - 1]);
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (tt[mid] <= t) lo = mid; else hi = mid;
    }
    double a = (t - tt[lo]) / (tt[hi] - tt[lo]);
    return c->ref_time[lo] + a * (c->ref_time[hi] - c->ref_time[lo]);
}

void sc_controller_targets(const sc_controller *c, double t, sc_quat *out)
{
    t += c->offset;
    double end = c->times[c->nkeys - 1];
    if (c->loop && c->nkeys > 1 && t >= end && end > c->times[0]) t = c->times[0] + fmod(t - c->times[0], end - c->times[0]);
    sc_targets_interpolate(c->times, c->nkeys, (const double *)c->keys, c->nbones, t, out);
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
        if (b < 0) { rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: bone '%s' is not in the character", path, names[j]); goto done; }
        local[b] = (sc_quat){q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]};
        if (local_ang_vel) memcpy(local_ang_vel + 3 * b, w + 3 * j, 3 * sizeof(double));
    }
    memcpy(root_pos, rp, 3 * sizeof(double));
    if (root_vel) memcpy(root_vel, rv, 3 * sizeof(double));
done:
    free(rp); free(rv); free(q); free(w);
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

int sc_trajectory_start(const char *path, const sc_model *m, double t, double root_pos[3], sc_quat *local, double root_vel[3],
                        double *local_ang_vel, sc_err *err)
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

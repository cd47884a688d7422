/* simulate's `controller:` section: the PD target source (hold a pose, YAML keyframes, a target
 * trajectory file, or a feedback policy file). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/config.h"
#include "io/paths.h"
#include "settings/controller.h"
#include "store/openloop.h"
#include "store/trajectory.h"

/* A keyframe pose: `bone: [rx, ry, rz]` rotation vector in degrees (axis times angle, in the
 * parent frame), or `bone: angle` in degrees about a hinge's axis. */
static int read_pose(sc_cfg_node *pose, const sc_model *m, sc_quat *out, sc_err *err)
{
    char w[256];
    /* a sequence has no keys: [5, 0, -5] as a pose would look up a bone named NULL */
    if (!sc_cfg_is_map(pose)) return sc_fail(err, SC_EINPUT, "%s: a pose must be a map of bone: rotation", sc_cfg_where(pose, w, sizeof w));
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
                return sc_fail(err, SC_EINPUT, "%s: pose of '%s' must be an angle (hinge) or [rx, ry, rz] in degrees", sc_cfg_where(v, w, sizeof w),
                               name);
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
    static const char *const kinds[] = {"hold", "keyframes", "trajectory", "policy", "simbicon", "network"};
    int kind, rc;
    char w[256];
    if ((rc = sc_cfg_enum(ctrl, "type", kinds, 6, SC_CTRL_HOLD, &kind, err)) || (rc = sc_cfg_bool(ctrl, "loop", 0, &c->loop, err)) ||
        (rc = sc_cfg_double_range(ctrl, "time_offset", 0, -1e6, 1e6, &c->offset, err)))
        return rc;
    c->nbones = m->nbones;
    if (kind == SC_CTRL_SIMBICON || kind == SC_CTRL_NETWORK) {
        c->kind = kind;
        return SC_OK;
    }
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
            (rc = sc_trajectory_read(path, dataset, m, c, err)))
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
        if (!c->times || !c->keys) {
            sc_controller_free(c);
            return sc_fail(err, SC_EIO, "out of memory");
        }
        sc_cfg_node *pose = sc_cfg_get(ctrl, "pose");
        if (pose) {
            if (!sc_cfg_is_map(pose)) {
                sc_controller_free(c);
                return sc_fail(err, SC_EINPUT, "%s: controller.pose must be a map of bone: rotation", sc_cfg_where(pose, w, sizeof w));
            }
            if ((rc = read_pose(pose, m, c->keys, err))) {
                sc_controller_free(c);
                return rc;
            }
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
    if (!c->times || !c->keys) {
        sc_controller_free(c);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        sc_cfg_node *k = sc_cfg_at(list, i), *pose;
        if (!sc_cfg_is_map(k)) {
            sc_controller_free(c);
            return sc_fail(err, SC_EINPUT, "%s: a keyframe is {time: t, pose: {...}}", sc_cfg_where(k, w, sizeof w));
        }
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

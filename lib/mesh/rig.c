#include <stdio.h>
#include <string.h>
#include "io/bvh.h"
#include "io/config.h"
#include "io/paths.h"
#include "mesh/rig.h"

int sc_rig_find(const sc_rig *rig, const char *name)
{
    for (int b = 0; b < rig->nbones; b++)
        if (!strcmp(rig->bone[b].name, name)) return b;
    return -1;
}

double sc_rig_height(const sc_rig *rig)
{
    double lo = 1e30, hi = -1e30;
    for (int b = 0; b < rig->nbones; b++) {
        lo = fmin(lo, fmin(rig->bone[b].head.y, rig->bone[b].tail.y));
        hi = fmax(hi, fmax(rig->bone[b].head.y, rig->bone[b].tail.y));
    }
    return rig->nbones ? hi - lo : 0;
}

int sc_rig_validate(const sc_rig *rig, const char *where, sc_err *err)
{
    if (rig->nbones < 1) return sc_fail(err, SC_EINPUT, "%s: the skeleton has no bones", where);
    for (int b = 0; b < rig->nbones; b++) {
        const sc_rig_bone *x = &rig->bone[b];
        if (sc_rig_find(rig, x->name) != b) return sc_fail(err, SC_EINPUT, "%s: bone name '%s' is used twice", where, x->name);
        if (b == 0 && x->parent != -1) return sc_fail(err, SC_EINPUT, "%s: the first bone ('%s') must be the root (no parent)", where, x->name);
        if (b > 0 && (x->parent < 0 || x->parent >= b))
            return sc_fail(err, SC_EINPUT, "%s: bone '%s' must come after its parent, and only the first bone may be a root", where, x->name);
        if (!(sc_rig_length(x) > 1e-4)) return sc_fail(err, SC_EINPUT, "%s: bone '%s' has zero length (head == tail)", where, x->name);
        if (x->joint_type == SC_JOINT_HINGE && fabs(sc_v3_norm(x->hinge_axis) - 1) > 1e-6)
            return sc_fail(err, SC_EINPUT, "%s: hinge axis of bone '%s' must be non-zero", where, x->name);
    }
    return SC_OK;
}

/* name, BVH joint (head, drives the rotation), BVH joint or End Site at the tail, parent, type,
 * hinge axis. Left is +x, forward +z in the CMU rest pose. */
static const struct { const char *name, *joint, *tail, *parent; int type; double axis[3]; } cmu_map[] = {
    {"pelvis", "Hips", "Spine", NULL, SC_JOINT_FREE, {0, 0, 0}},
    {"spine", "Spine", "Spine1", "pelvis", SC_JOINT_BALL, {0, 0, 0}},
    {"neck", "Neck", "Neck1", "spine", SC_JOINT_BALL, {0, 0, 0}},
    {"head", "Neck1", "Head_End", "neck", SC_JOINT_BALL, {0, 0, 0}},
    {"l_upperarm", "LeftArm", "LeftForeArm", "spine", SC_JOINT_BALL, {0, 0, 0}},
    {"l_forearm", "LeftForeArm", "LeftHand", "l_upperarm", SC_JOINT_HINGE, {0, -1, 0}},
    {"l_hand", "LeftHand", "LeftHandIndex1_End", "l_forearm", SC_JOINT_BALL, {0, 0, 0}},
    {"r_upperarm", "RightArm", "RightForeArm", "spine", SC_JOINT_BALL, {0, 0, 0}},
    {"r_forearm", "RightForeArm", "RightHand", "r_upperarm", SC_JOINT_HINGE, {0, 1, 0}},
    {"r_hand", "RightHand", "RightHandIndex1_End", "r_forearm", SC_JOINT_BALL, {0, 0, 0}},
    {"l_thigh", "LeftUpLeg", "LeftLeg", "pelvis", SC_JOINT_BALL, {0, 0, 0}},
    {"l_shin", "LeftLeg", "LeftFoot", "l_thigh", SC_JOINT_HINGE, {1, 0, 0}},
    {"l_foot", "LeftFoot", "LeftToeBase_End", "l_shin", SC_JOINT_BALL, {0, 0, 0}},
    {"r_thigh", "RightUpLeg", "RightLeg", "pelvis", SC_JOINT_BALL, {0, 0, 0}},
    {"r_shin", "RightLeg", "RightFoot", "r_thigh", SC_JOINT_HINGE, {1, 0, 0}},
    {"r_foot", "RightFoot", "RightToeBase_End", "r_shin", SC_JOINT_BALL, {0, 0, 0}},
};
#define NCMU ((int)(sizeof cmu_map / sizeof *cmu_map))

static const char *const joint_names[] = {"free", "ball", "hinge"};

const char *sc_rig_cmu_map_yaml(void)
{
    static char buf[4096];
    if (buf[0]) return buf;
    size_t n = 0;
    for (int i = 0; i < NCMU; i++) {
        n += (size_t)snprintf(buf + n, sizeof buf - n, "- {name: %s, joint: %s, tail: %s, parent: %s, type: %s", cmu_map[i].name,
                              cmu_map[i].joint, cmu_map[i].tail, cmu_map[i].parent ? cmu_map[i].parent : "~",
                              joint_names[cmu_map[i].type]);
        if (cmu_map[i].type == SC_JOINT_HINGE)
            n += (size_t)snprintf(buf + n, sizeof buf - n, ", axis: [%g, %g, %g]", cmu_map[i].axis[0], cmu_map[i].axis[1], cmu_map[i].axis[2]);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "}\n");
    }
    return buf;
}

static int parent_index(const sc_rig *rig, const char *parent, sc_cfg_node *at, sc_err *err)
{
    if (!parent[0] || !strcmp(parent, "~")) return -1;
    int p = sc_rig_find(rig, parent);
    if (p < 0) {
        char w[256];
        return -sc_fail(err, SC_EINPUT, "%s: parent '%s' is not a bone listed before this one", sc_cfg_where(at, w, sizeof w), parent);
    }
    return p;
}

static void default_bone(sc_rig_bone *b)
{
    memset(b, 0, sizeof *b);
    b->parent = -1;
    for (int i = 0; i < 3; i++) { b->lo[i] = 1; b->hi[i] = -1; }
}

static int from_bvh(sc_cfg_node *sk, const char *config_path, sc_rig *rig, sc_err *err)
{
    char name[512], path[1024], w[256];
    int rc = sc_cfg_string(sk, "bvh", NULL, name, sizeof name, err);
    if (rc) return rc;
    double scale;
    if ((rc = sc_cfg_double_range(sk, "scale", 0.056444, 1e-6, 1e3, &scale, err))) return rc;
    if ((rc = sc_find_input(name, config_path, 1, sc_cfg_where(sc_cfg_get(sk, "bvh"), w, sizeof w), path, sizeof path, err))) return rc;
    sc_bvh bvh;
    if ((rc = sc_bvh_load(path, &bvh, err))) return rc;
    sc_xform world[512];
    if (bvh.njoints > 512) { sc_bvh_free(&bvh); return sc_fail(err, SC_EINPUT, "%s: more than 512 joints", path); }
    sc_bvh_world(&bvh, -1, world); /* rest pose: all channels zero */

    sc_cfg_node *map = NULL;
    if ((rc = sc_cfg_list(sk, "bone_map", 0, &map, err))) { sc_bvh_free(&bvh); return rc; }
    int n = map ? sc_cfg_len(map) : NCMU;
    if (n > SC_MAX_BONES) { sc_bvh_free(&bvh); return sc_fail(err, SC_EINPUT, "%s: at most %d bones", config_path, SC_MAX_BONES); }
    rig->nbones = 0;
    for (int i = 0; i < n; i++) {
        sc_rig_bone *b = &rig->bone[rig->nbones];
        default_bone(b);
        char joint[SC_NAME_LEN], tail[SC_NAME_LEN], parent[SC_NAME_LEN] = "";
        int type;
        double axis[3] = {1, 0, 0};
        sc_cfg_node *e = map ? sc_cfg_at(map, i) : NULL;
        if (e) {
            if (!sc_cfg_is_map(e)) { sc_bvh_free(&bvh); return sc_fail(err, SC_EINPUT, "%s: each bone_map entry must be a map", sc_cfg_where(e, w, sizeof w)); }
            if ((rc = sc_cfg_string(e, "name", NULL, b->name, sizeof b->name, err)) ||
                (rc = sc_cfg_string(e, "joint", NULL, joint, sizeof joint, err)) ||
                (rc = sc_cfg_string(e, "tail", NULL, tail, sizeof tail, err)) ||
                (rc = sc_cfg_string(e, "parent", "", parent, sizeof parent, err)) ||
                (rc = sc_cfg_enum(e, "type", joint_names, 3, i == 0 ? SC_JOINT_FREE : SC_JOINT_BALL, &type, err)) ||
                (rc = sc_cfg_vec_range(e, "axis", 3, axis, -1e3, 1e3, axis, err))) { sc_bvh_free(&bvh); return rc; }
        } else {
            snprintf(b->name, sizeof b->name, "%s", cmu_map[i].name);
            snprintf(joint, sizeof joint, "%s", cmu_map[i].joint);
            snprintf(tail, sizeof tail, "%s", cmu_map[i].tail);
            snprintf(parent, sizeof parent, "%s", cmu_map[i].parent ? cmu_map[i].parent : "");
            type = cmu_map[i].type;
            memcpy(axis, cmu_map[i].axis, sizeof axis);
        }
        const char *where = e ? sc_cfg_where(e, w, sizeof w) : "default CMU bone map";
        int jh = sc_bvh_find(&bvh, joint), jt = sc_bvh_find(&bvh, tail);
        if (jh < 0 || jt < 0) {
            sc_bvh_free(&bvh);
            return sc_fail(err, SC_EINPUT, "%s: bone '%s' names BVH joint '%s', which %s does not have", where, b->name,
                           jh < 0 ? joint : tail, path);
        }
        b->parent = i == 0 ? -1 : sc_rig_find(rig, parent);
        if (i > 0 && b->parent < 0) {
            sc_bvh_free(&bvh);
            return sc_fail(err, SC_EINPUT, "%s: parent '%s' of bone '%s' is not a bone listed before it", where, parent, b->name);
        }
        snprintf(b->source, sizeof b->source, "%s", joint);
        b->joint_type = i == 0 ? SC_JOINT_FREE : type;
        b->head = sc_v3_scale(world[jh].p, scale);
        b->tail = sc_v3_scale(world[jt].p, scale);
        b->hinge_axis = sc_v3_normalize(sc_v3_load(axis));
        rig->nbones++;
    }
    sc_bvh_free(&bvh);
    sc_rig_hinge_axes_to_limbs(rig);
    return SC_OK;
}

void sc_rig_hinge_axes_to_limbs(sc_rig *rig)
{
    for (int j = 1; j < rig->nbones; j++) {
        sc_rig_bone *b = &rig->bone[j];
        if (b->joint_type != SC_JOINT_HINGE || b->parent < 0) continue;
        sc_vec3 d = sc_v3_sub(b->tail, rig->bone[b->parent].head);
        if (!(sc_v3_norm(d) > 1e-9)) continue;
        d = sc_v3_normalize(d);
        sc_vec3 a = sc_v3_sub(b->hinge_axis, sc_v3_scale(d, sc_v3_dot(b->hinge_axis, d)));
        if (sc_v3_norm(a) > 0.1) b->hinge_axis = sc_v3_normalize(a);
    }
}

static int inline_bones(sc_cfg_node *list, sc_rig *rig, sc_err *err)
{
    int n = sc_cfg_len(list);
    char w[256];
    if (n > SC_MAX_BONES) return sc_fail(err, SC_EINPUT, "%s: at most %d bones", sc_cfg_where(list, w, sizeof w), SC_MAX_BONES);
    rig->nbones = 0;
    for (int i = 0; i < n; i++) {
        sc_cfg_node *e = sc_cfg_at(list, i);
        sc_rig_bone *b = &rig->bone[i];
        default_bone(b);
        if (!sc_cfg_is_map(e)) return sc_fail(err, SC_EINPUT, "%s: each bone must be a map", sc_cfg_where(e, w, sizeof w));
        char parent[SC_NAME_LEN];
        double head[3], tail[3], axis[3] = {1, 0, 0};
        int type, rc;
        if ((rc = sc_cfg_string(e, "name", NULL, b->name, sizeof b->name, err)) ||
            (rc = sc_cfg_string(e, "parent", "", parent, sizeof parent, err)) ||
            (rc = sc_cfg_enum(e, "joint", joint_names, 3, i == 0 ? SC_JOINT_FREE : SC_JOINT_BALL, &type, err)) ||
            (rc = sc_cfg_vec_range(e, "head", 3, NULL, -1e3, 1e3, head, err)) ||
            (rc = sc_cfg_vec_range(e, "tail", 3, NULL, -1e3, 1e3, tail, err)) ||
            (rc = sc_cfg_vec_range(e, "axis", 3, axis, -1e3, 1e3, axis, err)))
            return rc;
        int p = parent_index(rig, parent, e, err);
        if (p < -1) return err->code;
        b->parent = p;
        b->joint_type = i == 0 ? SC_JOINT_FREE : type;
        if (i > 0 && type == SC_JOINT_FREE)
            return sc_fail(err, SC_EINPUT, "%s: only the root bone may have a free joint", sc_cfg_where(e, w, sizeof w));
        b->head = sc_v3_load(head);
        b->tail = sc_v3_load(tail);
        b->hinge_axis = sc_v3_normalize(sc_v3_load(axis));
        rig->nbones++;
    }
    return SC_OK;
}

static int read_gains(sc_cfg_node *m, sc_rig_bone *b, const sc_rig_bone *def, sc_err *err)
{
    int rc;
    double lo[3], hi[3];
    if ((rc = sc_cfg_double_range(m, "kp", def->kp, 0, 1e7, &b->kp, err)) ||
        (rc = sc_cfg_double_range(m, "kd", def->kd, 1e-6, 1e6, &b->kd, err)) ||
        (rc = sc_cfg_double_range(m, "torque_limit", def->torque_limit, 0, 1e6, &b->torque_limit, err)) ||
        (rc = sc_cfg_vec_range(m, "lo", 3, def->lo, -100, 100, lo, err)) || (rc = sc_cfg_vec_range(m, "hi", 3, def->hi, -100, 100, hi, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_radius", def->fixed_radius, 0, 10, &b->fixed_radius, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_from", def->fixed_from, -1, 0.95, &b->fixed_from, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_to", def->fixed_to, 0.05, 2, &b->fixed_to, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_spacing", def->fixed_spacing, 1e-3, 10, &b->fixed_spacing, err)) ||
        (rc = sc_cfg_double_range(m, "fixed_clearance", def->fixed_clearance, 0, 1, &b->fixed_clearance, err)))
        return rc;
    int shape;
    static const char *const shapes[] = {"box", "capsule", "sole"};
    if ((rc = sc_cfg_enum(m, "fixed_shape", shapes, 3, def->fixed_shape, &shape, err))) return rc;
    b->fixed_shape = shape;
    memcpy(b->lo, lo, sizeof lo);
    memcpy(b->hi, hi, sizeof hi);
    return SC_OK;
}

int sc_rig_from_config(sc_cfg_node *sk, const char *config_path, sc_rig *rig, sc_err *err)
{
    memset(rig, 0, sizeof *rig);
    char w[256];
    sc_cfg_node *bones = NULL;
    int rc = sc_cfg_list(sk, "bones", 0, &bones, err);
    if (rc) return rc;
    int has_bvh = sc_cfg_get(sk, "bvh") != NULL;
    if (bones && has_bvh) return sc_fail(err, SC_EINPUT, "%s: give either skeleton.bvh or skeleton.bones, not both", sc_cfg_where(sk, w, sizeof w));
    if (!bones && !has_bvh) return sc_fail(err, SC_EINPUT, "%s: skeleton needs `bvh:` (a BVH file) or `bones:` (an inline list)", sc_cfg_where(sk, w, sizeof w));
    rc = bones ? inline_bones(bones, rig, err) : from_bvh(sk, config_path, rig, err);
    if (rc) return rc;

    /* defaults for every joint, then per-bone overrides; fixed-node sizes in `fixed:` are set
       by the caller through these fields too */
    sc_rig_bone def;
    default_bone(&def);
    def.kp = 300;
    def.kd = 30;
    def.torque_limit = 200;
    def.fixed_radius = 0;   /* 0: derived from the bone length by mesh-prep */
    def.fixed_from = 0.2;
    def.fixed_to = 0.8;
    def.fixed_spacing = 0.05;
    def.fixed_clearance = 0.01;
    sc_cfg_node *gains = NULL, *joints = NULL;
    if ((rc = sc_cfg_section(sk, "gains", &gains, err)) || (rc = read_gains(gains, &def, &def, err))) return rc;
    if ((rc = sc_cfg_section(sk, "joints", &joints, err))) return rc;
    for (int b = 0; b < rig->nbones; b++) {
        sc_cfg_node *o = sc_cfg_get(joints, rig->bone[b].name);
        if (o && !sc_cfg_is_map(o)) return sc_fail(err, SC_EINPUT, "%s: joints.%s must be a map", sc_cfg_where(o, w, sizeof w), rig->bone[b].name);
        if ((rc = read_gains(o, &rig->bone[b], &def, err))) return rc;
        static const char *const fixed_keys[] = {"fixed_shape", "fixed_radius", "fixed_from", "fixed_to", "fixed_clearance"};
        for (int k = 0; k < 5 && o; k++) rig->bone[b].fixed_given |= sc_cfg_get(o, fixed_keys[k]) != NULL;
        if (!(rig->bone[b].fixed_to > rig->bone[b].fixed_from))
            return sc_fail(err, SC_EINPUT, "%s: joints.%s: fixed_to must exceed fixed_from", config_path, rig->bone[b].name);
    }
    return sc_rig_validate(rig, config_path, err);
}

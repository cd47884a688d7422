/* The rig: a skeleton of named bones, checked; the default CMU bone map. Read from a config by settings/mesh.c. */
#include <stdio.h>
#include <string.h>
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
static const sc_rig_map_entry cmu_map[] = {
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

const char *const sc_rig_joint_names[3] = {"free", "ball", "hinge"};

const sc_rig_map_entry *sc_rig_cmu_map(int *n)
{
    *n = NCMU;
    return cmu_map;
}

const char *sc_rig_cmu_map_yaml(void)
{
    static char buf[4096];
    if (buf[0]) return buf;
    size_t n = 0;
    for (int i = 0; i < NCMU; i++) {
        n += (size_t)snprintf(buf + n, sizeof buf - n, "- {name: %s, joint: %s, tail: %s, parent: %s, type: %s", cmu_map[i].name, cmu_map[i].joint,
                              cmu_map[i].tail, cmu_map[i].parent ? cmu_map[i].parent : "~", sc_rig_joint_names[cmu_map[i].type]);
        if (cmu_map[i].type == SC_JOINT_HINGE)
            n += (size_t)snprintf(buf + n, sizeof buf - n, ", axis: [%g, %g, %g]", cmu_map[i].axis[0], cmu_map[i].axis[1], cmu_map[i].axis[2]);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "}\n");
    }
    return buf;
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

/* Linear blend skinning and its Jacobian (see lbs.h). */
#include <stddef.h>
#include "skin/lbs.h"

/* r = T_j X - p_j = q_j (X - J_j): the skinned point relative to the bone origin. */
static inline sc_vec3 bone_arm(const double *x, const double *joint_rest, const sc_xform *pose, int j)
{
    return sc_q_rotate(pose[j].q, sc_v3_sub(sc_v3_load(x), sc_v3_load(joint_rest + 3 * j)));
}

void sc_lbs_positions(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w,
                      const double *joint_rest, const sc_xform *pose, double *out)
{
    for (int i = 0; i < nnodes; i++) {
        sc_vec3 acc = sc_v3(0, 0, 0);
        for (int s = 0; s < k; s++) {
            int j = skin_bone[(size_t)i * k + s];
            if (j < 0) continue;
            sc_vec3 t = sc_v3_add(bone_arm(rest_pos + 3 * (size_t)i, joint_rest, pose, j), pose[j].p);
            acc = sc_v3_axpy(skin_w[(size_t)i * k + s], t, acc);
        }
        sc_v3_store(out + 3 * (size_t)i, acc);
    }
}

void sc_lbs_velocities(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w,
                       const double *joint_rest, const sc_xform *pose, const double *lin_vel,
                       const double *ang_vel, double *out)
{
    for (int i = 0; i < nnodes; i++) {
        sc_vec3 acc = sc_v3(0, 0, 0);
        for (int s = 0; s < k; s++) {
            int j = skin_bone[(size_t)i * k + s];
            if (j < 0) continue;
            sc_vec3 r = bone_arm(rest_pos + 3 * (size_t)i, joint_rest, pose, j);
            sc_vec3 v = sc_v3_add(sc_v3_load(lin_vel + 3 * j), sc_v3_cross(sc_v3_load(ang_vel + 3 * j), r));
            acc = sc_v3_axpy(skin_w[(size_t)i * k + s], v, acc);
        }
        sc_v3_store(out + 3 * (size_t)i, acc);
    }
}

void sc_lbs_jacobian_transpose(int nnodes, const double *rest_pos, int k, const int *skin_bone,
                               const double *skin_w, const double *joint_rest, const sc_xform *pose,
                               const double *node_force, double *bone_force, double *bone_torque)
{
    for (int i = 0; i < nnodes; i++) {
        sc_vec3 f = sc_v3_load(node_force + 3 * (size_t)i);
        for (int s = 0; s < k; s++) {
            int j = skin_bone[(size_t)i * k + s];
            if (j < 0) continue;
            sc_vec3 fw = sc_v3_scale(f, skin_w[(size_t)i * k + s]);
            sc_vec3 r = bone_arm(rest_pos + 3 * (size_t)i, joint_rest, pose, j);
            sc_v3_store(bone_force + 3 * j, sc_v3_add(sc_v3_load(bone_force + 3 * j), fw));
            sc_v3_store(bone_torque + 3 * j, sc_v3_add(sc_v3_load(bone_torque + 3 * j), sc_v3_cross(r, fw)));
        }
    }
}

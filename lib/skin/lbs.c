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

void sc_lbs_eval(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w,
                 const double *joint_rest, int nbones, const sc_xform *pose, const double *lin_vel, const double *ang_vel,
                 double *xbar, double *xbar_dot, double *arm)
{
    double rot[64][9];
    for (int j = 0; j < nbones && j < 64; j++) {
        sc_mat3 r = sc_q_to_m3(pose[j].q);
        for (int a = 0; a < 9; a++) rot[j][a] = r.m[a / 3][a % 3];
    }
    for (int i = 0; i < nnodes; i++) {
        const double *X = rest_pos + 3 * (size_t)i;
        double p[3] = {0, 0, 0}, v[3] = {0, 0, 0};
        for (int s = 0; s < k; s++) {
            size_t is = (size_t)i * k + s;
            int j = skin_bone[is];
            if (j < 0) continue;
            const double *R = rot[j], *J = joint_rest + 3 * j, *w = ang_vel + 3 * j, *lv = lin_vel + 3 * j;
            double d0 = X[0] - J[0], d1 = X[1] - J[1], d2 = X[2] - J[2];
            double r0 = R[0] * d0 + R[1] * d1 + R[2] * d2, r1 = R[3] * d0 + R[4] * d1 + R[5] * d2, r2 = R[6] * d0 + R[7] * d1 + R[8] * d2;
            double ws = skin_w[is];
            p[0] += ws * (r0 + pose[j].p.x);
            p[1] += ws * (r1 + pose[j].p.y);
            p[2] += ws * (r2 + pose[j].p.z);
            v[0] += ws * (lv[0] + w[1] * r2 - w[2] * r1);
            v[1] += ws * (lv[1] + w[2] * r0 - w[0] * r2);
            v[2] += ws * (lv[2] + w[0] * r1 - w[1] * r0);
            if (arm) { arm[3 * is] = r0; arm[3 * is + 1] = r1; arm[3 * is + 2] = r2; }
        }
        sc_v3_store(xbar + 3 * (size_t)i, sc_v3(p[0], p[1], p[2]));
        if (xbar_dot) sc_v3_store(xbar_dot + 3 * (size_t)i, sc_v3(v[0], v[1], v[2]));
    }
}

void sc_lbs_jacobian_transpose_arms(int nnodes, int k, const int *skin_bone, const double *skin_w, const double *arm,
                                    const double *node_force, double *bone_force, double *bone_torque)
{
    for (int i = 0; i < nnodes; i++) {
        const double *f = node_force + 3 * (size_t)i;
        if (f[0] == 0 && f[1] == 0 && f[2] == 0) continue;
        for (int s = 0; s < k; s++) {
            size_t is = (size_t)i * k + s;
            int j = skin_bone[is];
            if (j < 0) continue;
            double ws = skin_w[is], fx = ws * f[0], fy = ws * f[1], fz = ws * f[2];
            const double *r = arm + 3 * is;
            bone_force[3 * j] += fx;
            bone_force[3 * j + 1] += fy;
            bone_force[3 * j + 2] += fz;
            bone_torque[3 * j] += r[1] * fz - r[2] * fy;
            bone_torque[3 * j + 1] += r[2] * fx - r[0] * fz;
            bone_torque[3 * j + 2] += r[0] * fy - r[1] * fx;
        }
    }
}

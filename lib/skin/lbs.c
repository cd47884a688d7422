/* Linear blend skinning and its Jacobian (see lbs.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "skin/lbs.h"

/* r = T_j X - p_j = q_j (X - J_j): the skinned point relative to the bone origin. */
static inline sc_vec3 bone_arm(const double *x, const double *joint_rest, const sc_xform *pose, int j)
{
    return sc_q_rotate(pose[j].q, sc_v3_sub(sc_v3_load(x), sc_v3_load(joint_rest + 3 * j)));
}

void sc_lbs_positions(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest,
                      const sc_xform *pose, double *out)
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

void sc_lbs_velocities(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest,
                       const sc_xform *pose, const double *lin_vel, const double *ang_vel, double *out)
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

void sc_lbs_jacobian_transpose(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest,
                               const sc_xform *pose, const double *node_force, double *bone_force, double *bone_torque)
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

void sc_lbs_eval(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest, int nbones,
                 const sc_xform *pose, const double *lin_vel, const double *ang_vel, double *xbar, double *xbar_dot, double *arm)
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
            if (arm) {
                arm[3 * is] = r0;
                arm[3 * is + 1] = r1;
                arm[3 * is + 2] = r2;
            }
        }
        sc_v3_store(xbar + 3 * (size_t)i, sc_v3(p[0], p[1], p[2]));
        if (xbar_dot) sc_v3_store(xbar_dot + 3 * (size_t)i, sc_v3(v[0], v[1], v[2]));
    }
}

void sc_lbs_jacobian_transpose_arms(int nnodes, int k, const int *skin_bone, const double *skin_w, const double *arm, const double *node_force,
                                    double *bone_force, double *bone_torque)
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

/* ---- bone-major plan ---- */

void sc_lbs_plan_free(sc_lbs_plan *p)
{
    if (!p) return;
    free(p->bone_start);
    free(p->node);
    free(p->w);
    free(p->d);
    free(p->arm);
    free(p->buf);
    free(p->pair_of);
    memset(p, 0, sizeof *p);
}

int sc_lbs_plan_init(sc_lbs_plan *p, int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest,
                     int nbones, sc_err *err)
{
    memset(p, 0, sizeof *p);
    int n = 0;
    for (size_t is = 0; is < (size_t)nnodes * k; is++) n += skin_bone[is] >= 0 && skin_bone[is] < nbones;
    p->nnodes = nnodes;
    p->nbones = nbones;
    p->npairs = n;
    p->bone_start = calloc((size_t)nbones + 1, sizeof *p->bone_start);
    p->node = malloc((size_t)(n ? n : 1) * sizeof *p->node);
    p->w = malloc((size_t)(n ? n : 1) * sizeof *p->w);
    p->d = malloc(3 * (size_t)(n ? n : 1) * sizeof *p->d);
    p->arm = malloc(3 * (size_t)(n ? n : 1) * sizeof *p->arm);
    p->buf = malloc(6 * (size_t)(n ? n : 1) * sizeof *p->buf);
    p->pair_of = malloc((size_t)(nnodes ? nnodes : 1) * k * sizeof *p->pair_of);
    p->k = k;
    if (!p->bone_start || !p->node || !p->w || !p->d || !p->arm || !p->buf || !p->pair_of) {
        sc_lbs_plan_free(p);
        return sc_fail(err, SC_EIO, "out of memory for the skinning plan");
    }
    for (size_t is = 0; is < (size_t)nnodes * k; is++)
        if (skin_bone[is] >= 0 && skin_bone[is] < nbones) p->bone_start[skin_bone[is] + 1]++;
    for (int j = 0; j < nbones; j++) p->bone_start[j + 1] += p->bone_start[j];
    int *fill = malloc((size_t)(nbones ? nbones : 1) * sizeof *fill);
    if (!fill) {
        sc_lbs_plan_free(p);
        return sc_fail(err, SC_EIO, "out of memory for the skinning plan");
    }
    memcpy(fill, p->bone_start, (size_t)nbones * sizeof *fill);
    for (int i = 0; i < nnodes; i++) /* ascending nodes within each bone */
        for (int s = 0; s < k; s++) {
            size_t is = (size_t)i * k + s;
            int j = skin_bone[is];
            p->pair_of[is] = -1;
            if (j < 0 || j >= nbones) continue;
            int q = fill[j]++;
            p->pair_of[is] = q;
            p->node[q] = i;
            p->w[q] = skin_w[is];
            for (int c = 0; c < 3; c++) p->d[(size_t)c * n + q] = rest_pos[3 * (size_t)i + c] - joint_rest[3 * j + c];
        }
    free(fill);
    return SC_OK;
}

typedef struct {
    sc_mat3 r;
    double p[3], v[3], w[3];
} lbs_bone;

/* One bone's pairs, lane-parallel: arms r = R d, position terms w (r + p), velocity terms
 * w (v + omega x r). */
static inline void lbs_lanes(int m, const double *restrict dx, const double *restrict dy, const double *restrict dz, const double *restrict w,
                             const lbs_bone *b, double *restrict ax, double *restrict ay, double *restrict az, double *restrict bx,
                             double *restrict by, double *restrict bz, double *restrict ux, double *restrict uy, double *restrict uz)
{
    const double r00 = b->r.m[0][0], r01 = b->r.m[0][1], r02 = b->r.m[0][2], r10 = b->r.m[1][0], r11 = b->r.m[1][1];
    const double r12 = b->r.m[1][2], r20 = b->r.m[2][0], r21 = b->r.m[2][1], r22 = b->r.m[2][2];
    const double px = b->p[0], py = b->p[1], pz = b->p[2], vx = b->v[0], vy = b->v[1], vz = b->v[2];
    const double wx = b->w[0], wy = b->w[1], wz = b->w[2];
    for (int q = 0; q < m; q++) {
        const double r0 = r00 * dx[q] + r01 * dy[q] + r02 * dz[q];
        const double r1 = r10 * dx[q] + r11 * dy[q] + r12 * dz[q];
        const double r2 = r20 * dx[q] + r21 * dy[q] + r22 * dz[q];
        ax[q] = r0;
        ay[q] = r1;
        az[q] = r2;
        bx[q] = w[q] * (r0 + px);
        by[q] = w[q] * (r1 + py);
        bz[q] = w[q] * (r2 + pz);
        ux[q] = w[q] * (vx + wy * r2 - wz * r1); /* associated as in sc_lbs_eval */
        uy[q] = w[q] * (vy + wz * r0 - wx * r2);
        uz[q] = w[q] * (vz + wx * r1 - wy * r0);
    }
}

void sc_lbs_plan_terms(sc_lbs_plan *p, const sc_xform *pose, const double *lin_vel, const double *ang_vel)
{
    const size_t n = (size_t)p->npairs;
    double *bx = p->buf, *by = bx + n, *bz = by + n, *ux = bz + n, *uy = ux + n, *uz = uy + n;
    for (int j = 0; j < p->nbones; j++) {
        lbs_bone b = {sc_q_to_m3(pose[j].q),
                      {pose[j].p.x, pose[j].p.y, pose[j].p.z},
                      {lin_vel[3 * j], lin_vel[3 * j + 1], lin_vel[3 * j + 2]},
                      {ang_vel[3 * j], ang_vel[3 * j + 1], ang_vel[3 * j + 2]}};
        const int q0 = p->bone_start[j], m = p->bone_start[j + 1] - q0;
        lbs_lanes(m, p->d + q0, p->d + n + q0, p->d + 2 * n + q0, p->w + q0, &b, p->arm + q0, p->arm + n + q0, p->arm + 2 * n + q0, bx + q0, by + q0,
                  bz + q0, ux + q0, uy + q0, uz + q0);
    }
}

void sc_lbs_plan_eval(sc_lbs_plan *p, const sc_xform *pose, const double *lin_vel, const double *ang_vel, double *xbar, double *xbar_dot)
{
    sc_lbs_plan_terms(p, pose, lin_vel, ang_vel);
    double v[3];
    for (int i = 0; i < p->nnodes; i++) sc_lbs_plan_node(p, i, xbar + 3 * (size_t)i, xbar_dot ? xbar_dot + 3 * (size_t)i : v);
}

/* bone j's force and torque (about its origin) from per-pair forces wf (SoA, 3 x npairs, the
 * weights applied): four lanes of partial sums, reduced in a fixed order (the same bits on
 * every machine) */
static void bone_sums(const sc_lbs_plan *p, const double *wfx, const double *wfy, const double *wfz, double *bone_force, double *bone_torque)
{
    typedef double v4 __attribute__((vector_size(32)));
    const size_t n = (size_t)p->npairs;
    const double *ax = p->arm, *ay = ax + n, *az = ay + n;
    for (int j = 0; j < p->nbones; j++) {
        v4 fx = {0}, fy = {0}, fz = {0}, tx = {0}, ty = {0}, tz = {0};
        const int q0 = p->bone_start[j], q1 = p->bone_start[j + 1];
        for (int q = q0; q < q1; q += 4) {
            v4 gx, gy, gz, r0, r1, r2;
            if (q + 4 <= q1) {
                memcpy(&gx, wfx + q, 32);
                memcpy(&gy, wfy + q, 32);
                memcpy(&gz, wfz + q, 32);
                memcpy(&r0, ax + q, 32);
                memcpy(&r1, ay + q, 32);
                memcpy(&r2, az + q, 32);
            } else {
                for (int l = 0; l < 4; l++) { /* past the bone's end: zero force */
                    const int in = q + l < q1, ql = in ? q + l : q0;
                    gx[l] = in ? wfx[ql] : 0;
                    gy[l] = in ? wfy[ql] : 0;
                    gz[l] = in ? wfz[ql] : 0;
                    r0[l] = ax[ql];
                    r1[l] = ay[ql];
                    r2[l] = az[ql];
                }
            }
            fx += gx;
            fy += gy;
            fz += gz;
            tx += r1 * gz - r2 * gy;
            ty += r2 * gx - r0 * gz;
            tz += r0 * gy - r1 * gx;
        }
        bone_force[3 * j] += (fx[0] + fx[1]) + (fx[2] + fx[3]);
        bone_force[3 * j + 1] += (fy[0] + fy[1]) + (fy[2] + fy[3]);
        bone_force[3 * j + 2] += (fz[0] + fz[1]) + (fz[2] + fz[3]);
        bone_torque[3 * j] += (tx[0] + tx[1]) + (tx[2] + tx[3]);
        bone_torque[3 * j + 1] += (ty[0] + ty[1]) + (ty[2] + ty[3]);
        bone_torque[3 * j + 2] += (tz[0] + tz[1]) + (tz[2] + tz[3]);
    }
}

void sc_lbs_plan_jacobian_transpose(const sc_lbs_plan *p, const double *node_force, double *bone_force, double *bone_torque)
{
    const size_t n = (size_t)p->npairs;
    double *wx = p->buf, *wy = wx + n, *wz = wy + n; /* the terms are spent: reuse their space */
    for (size_t q = 0; q < n; q++) {
        const double *fi = node_force + 3 * (size_t)p->node[q];
        wx[q] = p->w[q] * fi[0];
        wy[q] = p->w[q] * fi[1];
        wz[q] = p->w[q] * fi[2];
    }
    bone_sums(p, wx, wy, wz, bone_force, bone_torque);
}

void sc_lbs_plan_jacobian_transpose_weighted(const sc_lbs_plan *p, const double *wf, double *bone_force, double *bone_torque)
{
    const size_t n = (size_t)p->npairs;
    bone_sums(p, wf, wf + n, wf + 2 * n, bone_force, bone_torque);
}

/* Linear blend skinning of the tet-mesh nodes ([L13] eq. 12-13), its velocity (skinning Jacobian
 * times bone velocities) and the transpose of the skinning Jacobian ([L13] eq. 18).
 * Bone poses are sc_xform (rotation q, ORIGIN position p). At rest every bone has q = identity and
 * p = its joint position J_j, so bone j maps a rest point X to T_j X = q_j (X - J_j) + p_j.
 * Weights come in the sparse top-k form of sc_bbw_topk (k slots per node, bone -1 = unused). */
#ifndef SC_LBS_H
#define SC_LBS_H
#include "core/mathx.h"

/* [L13] eq. 12-13: xbar_i = sum_j w_ij T_j X_i. out: 3n. */
void sc_lbs_positions(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest /* 3*nbones */,
                      const sc_xform *pose, double *out);

/* Velocity of the skinned points: bone j moves with origin velocity v_j and world angular velocity
 * omega_j: xbar_dot_i = sum_j w_ij (v_j + omega_j x (T_j X_i - p_j)). out: 3n. */
void sc_lbs_velocities(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest,
                       const sc_xform *pose, const double *lin_vel /* 3nb */, const double *ang_vel /* 3nb */, double *out);

/* Transpose of the skinning Jacobian ([L13] eq. 18): a force f_i at the skinned point of node i gives
 * bone j the force w_ij f_i and the torque (T_j X_i - p_j) x (w_ij f_i) about its origin. ACCUMULATES
 * into bone_force and bone_torque (3*nbones each; the caller zeroes them). */
void sc_lbs_jacobian_transpose(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest,
                               const sc_xform *pose, const double *node_force /* 3n */, double *bone_force, double *bone_torque);

#endif

#ifndef SC_LBS_FAST
#define SC_LBS_FAST
/* The per-step form the simulator uses: one pass computes x~ (eq. 12-13), its velocity
 * (skinning Jacobian times bone velocities) and keeps every arm r_ij = q_j (X_i - J_j) in
 * arm[3 * (i * k + s)] for the transpose (eq. 18), with the bone rotations turned into
 * matrices once. Same results as the reference functions above to rounding. */
void sc_lbs_eval(int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest, int nbones,
                 const sc_xform *pose, const double *lin_vel, const double *ang_vel, double *xbar, double *xbar_dot, double *arm);
/* Jacobian transpose with the arms of the last sc_lbs_eval; accumulates like the reference. */
void sc_lbs_jacobian_transpose_arms(int nnodes, int k, const int *skin_bone, const double *skin_w, const double *arm, const double *node_force,
                                    double *bone_force, double *bone_torque);
#endif

#ifndef SC_LBS_PLAN
#define SC_LBS_PLAN
#include "core/status.h"
/* Bone-major skinning for the simulation step: the (node, bone) pairs of the top-k weights
 * grouped by bone, with the rest offsets X_i - J_j precomputed, so each bone's rotation stays
 * in registers and its pairs run as plain vector loops; then each node sums its terms in
 * slot order: the same bits as sc_lbs_eval. */
typedef struct sc_lbs_plan {
    int nnodes, nbones, npairs;
    int *bone_start; /* [nbones+1] the pairs of bone j: [bone_start[j], bone_start[j+1]) */
    int *node;       /* [npairs] */
    double *w;       /* [npairs] weight */
    double *d;       /* [3*npairs] SoA: d[c*npairs + p] = (X_i - J_j)_c */
    double *arm;     /* [3*npairs] SoA scratch: r = q_j (X_i - J_j) of the last sc_lbs_plan_eval */
    double *buf;     /* [6*npairs] scratch: each pair's position and velocity terms */
    int k, *pair_of; /* [nnodes*k] the pair of node i's slot s, -1 for none */
} sc_lbs_plan;

int sc_lbs_plan_init(sc_lbs_plan *p, int nnodes, const double *rest_pos, int k, const int *skin_bone, const double *skin_w, const double *joint_rest,
                     int nbones, sc_err *err);
void sc_lbs_plan_free(sc_lbs_plan *p);
/* x~ (eq. 12-13) and, when xbar_dot is not NULL, its velocity; keeps the arms. */
void sc_lbs_plan_eval(sc_lbs_plan *p, const sc_xform *pose, const double *lin_vel, const double *ang_vel, double *xbar, double *xbar_dot);
/* The same in two parts, for a caller that uses each node's x~ at once: the pairs' terms
 * (and the arms), then node i's sums (3 values each), in slot order. */
void sc_lbs_plan_terms(sc_lbs_plan *p, const sc_xform *pose, const double *lin_vel, const double *ang_vel);
static inline void sc_lbs_plan_node(const sc_lbs_plan *p, int i, double *xbar, double *xbar_dot)
{
    const size_t n = (size_t)p->npairs;
    const double *bx = p->buf, *by = bx + n, *bz = by + n, *ux = bz + n, *uy = ux + n, *uz = uy + n;
    const int *pq = p->pair_of + (size_t)i * p->k;
    double x0 = 0, x1 = 0, x2 = 0, v0 = 0, v1 = 0, v2 = 0;
    for (int s = 0; s < p->k; s++) {
        const int q = pq[s];
        if (q < 0) continue;
        x0 += bx[q];
        x1 += by[q];
        x2 += bz[q];
        v0 += ux[q];
        v1 += uy[q];
        v2 += uz[q];
    }
    xbar[0] = x0;
    xbar[1] = x1;
    xbar[2] = x2;
    xbar_dot[0] = v0;
    xbar_dot[1] = v1;
    xbar_dot[2] = v2;
}
/* The transpose of the skinning Jacobian (eq. 18) with the arms of the last eval;
 * ACCUMULATES into bone_force and bone_torque (about each bone's origin). Overwrites the
 * terms of the last eval (their space is reused). */
void sc_lbs_plan_jacobian_transpose(const sc_lbs_plan *p, const double *node_force, double *bone_force, double *bone_torque);
/* The same from per-pair forces already weighted: wf[c*npairs + q] = w_q f_c of pair q's node. */
void sc_lbs_plan_jacobian_transpose_weighted(const sc_lbs_plan *p, const double *wf, double *bone_force, double *bone_torque);
#endif

/* Recursive Newton-Euler inverse dynamics (see rnea.h). */
#include <math.h>
#include <string.h>
#include "motion/rnea.h"

/* Backward pass without recursion: children have larger indices than their parents, so a
 * reverse sweep accumulates every subtree before its root is reached. */
void sc_rnea(const sc_body *b, const sc_bone_kin *k, const double g[3], const double *fext, const double *text, double *joint_force,
             double *joint_torque)
{
    int nb = b->nb;
    sc_vec3 grav = sc_v3_load(g);
    /* f[j], n[j]: wrench the parent exerts on bone j (torque about the joint), accumulated in place */
    sc_vec3 F[SC_BODY_MAX_BONES], N[SC_BODY_MAX_BONES];
    if (nb > SC_BODY_MAX_BONES) return; /* sc_body_from_model refuses such skeletons */
    for (int j = 0; j < nb; j++) {
        sc_vec3 c = sc_kin_com(b, k, j), ac = sc_kin_com_acc(b, k, j);
        sc_mat3 I = sc_kin_inertia_world(b, k, j);
        double m = b->mass[j];
        /* Newton-Euler for the bone alone: the net force and the net torque about its com */
        sc_vec3 fnet = sc_v3_scale(sc_v3_sub(ac, grav), m);
        sc_vec3 tnet = sc_v3_add(sc_m3_mulv(I, k[j].dw), sc_v3_cross(k[j].w, sc_m3_mulv(I, k[j].w)));
        sc_vec3 rc = sc_v3_sub(c, k[j].p);
        if (fext) fnet = sc_v3_sub(fnet, sc_v3_load(fext + 3 * j));
        if (text) tnet = sc_v3_sub(tnet, sc_v3_load(text + 3 * j));
        F[j] = fnet;
        N[j] = sc_v3_add(tnet, sc_v3_cross(rc, fnet)); /* about the origin */
    }
    for (int j = nb - 1; j > 0; j--) {
        int p = b->parent[j];
        /* the child's joint wrench acts on the parent reversed, at the child's origin */
        F[p] = sc_v3_add(F[p], F[j]);
        N[p] = sc_v3_add(N[p], sc_v3_add(N[j], sc_v3_cross(sc_v3_sub(k[j].p, k[p].p), F[j])));
    }
    for (int j = 0; j < nb; j++) {
        if (joint_force) sc_v3_store(joint_force + 3 * j, F[j]);
        if (joint_torque) sc_v3_store(joint_torque + 3 * j, N[j]);
    }
}

void sc_body_momentum(const sc_body *b, const sc_bone_kin *k, sc_momentum *out)
{
    memset(out, 0, sizeof *out);
    double M = 0;
    for (int j = 0; j < b->nb; j++) {
        double m = b->mass[j];
        M += m;
        out->com = sc_v3_axpy(m, sc_kin_com(b, k, j), out->com);
        out->P = sc_v3_axpy(m, sc_kin_com_vel(b, k, j), out->P);
        out->dP = sc_v3_axpy(m, sc_kin_com_acc(b, k, j), out->dP);
    }
    if (!(M > 0)) return;
    out->com = sc_v3_scale(out->com, 1.0 / M);
    out->com_vel = sc_v3_scale(out->P, 1.0 / M);
    for (int j = 0; j < b->nb; j++) {
        double m = b->mass[j];
        sc_vec3 r = sc_v3_sub(sc_kin_com(b, k, j), out->com);
        sc_vec3 vr = sc_v3_sub(sc_kin_com_vel(b, k, j), out->com_vel);
        sc_mat3 I = sc_kin_inertia_world(b, k, j);
        sc_vec3 Iw = sc_m3_mulv(I, k[j].w);
        out->H = sc_v3_add(out->H, sc_v3_add(sc_v3_cross(r, sc_v3_scale(vr, m)), Iw));
        /* sum m_j (c_j - c) = 0, so the com's own acceleration drops out */
        out->dH = sc_v3_add(
            out->dH, sc_v3_add(sc_v3_cross(r, sc_v3_scale(sc_kin_com_acc(b, k, j), m)), sc_v3_add(sc_m3_mulv(I, k[j].dw), sc_v3_cross(k[j].w, Iw))));
    }
}

sc_vec3 sc_joint_actuated(const sc_body *b, const sc_bone_kin *k, int j, sc_vec3 tau)
{
    if (j == 0) return sc_v3(0, 0, 0);
    if (b->type[j] != SC_JOINT_HINGE) return tau;
    sc_vec3 a = sc_q_rotate(k[j].q, sc_v3_load(b->axis + 3 * j));
    return sc_v3_scale(a, sc_v3_dot(a, tau));
}

sc_quat sc_pd_target(const sc_body *b, const sc_bone_kin *k, int j, sc_quat local, sc_vec3 w_local, sc_vec3 tau, double kp, double kd,
                     double max_offset, int *clamped)
{
    if (clamped) *clamped = 0;
    if (b->type[j] == SC_JOINT_HINGE) {
        sc_vec3 a = sc_v3_load(b->axis + 3 * j);
        double th = sc_kin_twist_angle(local, a);
        if (kp <= 0) return sc_q_axis_angle(a, th);
        /* the hinge axis is the same vector in the parent and child frames */
        sc_vec3 aw = sc_q_rotate(k[j].q, a);
        double rate = sc_v3_dot(w_local, a), d = (sc_v3_dot(tau, aw) + kd * rate) / kp;
        if (fabs(d) > max_offset) {
            d = d > 0 ? max_offset : -max_offset;
            if (clamped) *clamped = 1;
        }
        return sc_q_axis_angle(a, th + d);
    }
    if (kp <= 0) return local;
    /* into the child frame: torque by the child's world rotation, the relative angular velocity
       (parent frame) by the local rotation */
    sc_vec3 tc = sc_q_rotate(sc_q_conj(k[j].q), tau);
    sc_vec3 wc = sc_q_rotate(sc_q_conj(local), w_local);
    sc_vec3 d = sc_v3_scale(sc_v3_axpy(kd, wc, tc), 1.0 / kp);
    double nd = sc_v3_norm(d);
    if (nd > max_offset) {
        d = sc_v3_scale(d, max_offset / nd);
        if (clamped) *clamped = 1;
    }
    return sc_q_normalize(sc_q_mul(local, sc_q_exp(d)));
}

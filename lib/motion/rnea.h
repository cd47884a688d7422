/* Recursive Newton-Euler inverse dynamics on the character's floating-base skeleton ([L13] eq.
 * 19), whole-body momentum, and joint torques turned into PD targets ([L13] eq. 32).
 * All vectors are world unless said otherwise. */
#ifndef SC_CONTROL_RNEA_H
#define SC_CONTROL_RNEA_H
#include "motion/kinematics.h"

/* Given the world kinematics k[nb] of every bone (sc_kin_forward), gravity g and optional
 * external loads (fext[3nb]: force at each bone's centre of mass; text[3nb]: torque), computes
 * for every bone j the force and torque (about the joint, i.e. the bone origin) that its parent
 * applies to it through joint j: joint_force[3nb], joint_torque[3nb]. For the root (j = 0) this is
 * the wrench the world would have to apply at the root origin: the floating base's residual,
 * zero when the external loads are consistent with the motion. Either output may be NULL. */
void sc_rnea(const sc_body *b, const sc_bone_kin *k, const double g[3], const double *fext, const double *text, double *joint_force,
             double *joint_torque);

/* Whole-body quantities: centre of mass, linear momentum P, angular momentum H about the centre
 * of mass, and their exact time derivatives for the given accelerations:
 *   dP = sum m_j a_cj,   dH = sum (c_j - c) x m_j a_cj + I_j dw_j + w_j x I_j w_j. */
typedef struct sc_momentum {
    sc_vec3 com, com_vel, P, H, dP, dH;
} sc_momentum;
void sc_body_momentum(const sc_body *b, const sc_bone_kin *k, sc_momentum *out);

/* The part of joint torque tau (world, on bone j) that the joint's servo supplies: all of it for a
 * ball joint, its component along the hinge axis for a hinge (the constraint takes the rest). */
sc_vec3 sc_joint_actuated(const sc_body *b, const sc_bone_kin *k, int j, sc_vec3 tau);

/* [L13] eq. 32, q_target = q + (tau + kd q') / kp, in the convention of sim/skeleton.c's servos:
 * ball joints: target = local * exp(delta), delta = (tau_c + kd w_c) / kp with tau and the
 * relative angular velocity expressed in the joint's (child's) frame; hinges: angle about the
 * axis. local: the reference local rotation, w_local: its angular velocity (parent frame), tau:
 * world torque on bone j. |delta| is clamped to max_offset (rad; *clamped set to 1 when it was).
 * kp <= 0 returns the reference rotation (a hinge: its twist about the axis). */
sc_quat sc_pd_target(const sc_body *b, const sc_bone_kin *k, int j, sc_quat local, sc_vec3 w_local, sc_vec3 tau, double kp, double kd,
                     double max_offset, int *clamped);

#endif

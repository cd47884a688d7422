/* The physics module of [BK] 4 beyond PD tracking: virtual forces made into joint torques by
 * the Jacobian transpose along a chain of bones ([BK] 4.2 after Pratt 2001), gravity
 * compensation, and a virtual torque on the root handed to the stance legs.
 *
 * Every function adds world-frame torque pairs into tau [3 nb] in sc_sim_set_joint_torques'
 * convention: tau[b] acts on bone b, -tau[b] on its parent. A hinge keeps only the component
 * along its axis (the rest its joint would carry anyway). The pose is the bones' world frames
 * (origin at the joint, sc_sim's pose). */
#ifndef SC_NETWORK_PHYSICS_H
#define SC_NETWORK_PHYSICS_H
#include "core/mathx.h"
#include "model/model.h"

/* 1 when `ancestor` lies on the way from bone b up to the root (b itself included). */
int sc_bone_is_below(const sc_model *m, int b, int ancestor);

/* A force f at world point p carried by the effector: the joints from `effector` up to (not
 * including) its ancestor `base` get tau_j = (p - joint_j) x f, so the chain acts on the
 * effector as f would, with the base taking the reaction (a hand reaching, a swing foot
 * lifted). */
void sc_vf_chain(const sc_model *m, const sc_xform *pose, int effector, int base, sc_vec3 p, sc_vec3 f, double *tau);
/* A force f at world point p on the body above a foot that stands on the ground: the joints
 * from `foot` up to (not including) the root get tau_j = -(p - joint_j) x f, the leg pushing
 * the root's side with the ground taking the reaction (the centre of mass moved over the
 * support, its speed controlled). */
void sc_vf_support(const sc_model *m, const sc_xform *pose, int foot, sc_vec3 p, sc_vec3 f, double *tau);
/* Gravity compensation: the joint of each bone with compensate[b] set gets the torque that
 * holds up everything below it: tau_j = -sum over the subtree of (c_d - joint_j) x m_d g, with
 * the bones' carried masses m_d (kg) and world centres of mass c_d [3 nb]. scratch: 4 nb. */
void sc_vf_gravity(const sc_model *m, const sc_xform *pose, const double *mass, const double *com, const unsigned char *compensate, const double g[3],
                   double *scratch, double *tau);

#endif

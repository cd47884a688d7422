/* The rigid skeleton on the Open Dynamics Engine with stable PD servos ([L13] 4.1, eq. 1-5).
 * One ODE body per bone (placed at the bone's centre of mass), ball and hinge joints, no
 * collision geometry. Poses and velocities at this interface refer to the bone ORIGIN (its
 * joint), the frame in which the model's bone-local coordinates are given. ODE types stay in
 * skeleton.c. */
#ifndef SC_SKELETON_H
#define SC_SKELETON_H
#include <stddef.h>
#include "core/mathx.h"
#include "core/status.h"
#include "model/model.h"
#include "sim/contact.h"

typedef struct sc_skeleton sc_skeleton;

typedef struct sc_skeleton_opts {
    double gravity[3];   /* default {0,-9.81,0} */
    int exact_solver;    /* 1 (default): dWorldStep (exact LCP), 0: dWorldQuickStep with `iterations` */
    int iterations;      /* quickstep iterations, default 20 */
    double erp, cfm;     /* global joint ERP/CFM (defaults 0.2, 1e-10) */
    int fix_root;        /* 1: the root is kinematic (moves only as set), for tests and rigs */
    int finite_rotation; /* 1 (default): exact rotation by w*h per step instead of ODE's
                            first-order quaternion update */
    int speculative;     /* 1 (default): exact steps leave the torque bound off servos far below it
                            (see sc_skeleton_step); 0: every servo row carries its bound */
    int tree_solver;     /* 1 (default, with speculative): an exact step first solves its rows
                            without bounds by the linear-time tree solver (tree_solve.h); ODE's
                            dense LCP (dWorldStep) takes the step only when a hinge is at its stop
                            or a servo comes out over its limit. 0: always dWorldStep */
} sc_skeleton_opts;

void sc_skeleton_default_opts(sc_skeleton_opts *o);
/* Builds the skeleton at the model's rest pose (all bone rotations identity). Validates the
 * skeleton part of the model (SC_EINPUT naming the bone). */
int sc_skeleton_create(const sc_model *m, const sc_skeleton_opts *o, sc_skeleton **out, sc_err *err);
void sc_skeleton_free(sc_skeleton *s);
int sc_skeleton_nbones(const sc_skeleton *s);

/* pose[b]: rotation and ORIGIN position; lin_vel: world velocity of the origin, ang_vel: world
 * angular velocity (3 per bone). Any output may be NULL. In set_state NULL velocities mean 0;
 * quaternions are normalized. */
void sc_skeleton_get_state(const sc_skeleton *s, sc_xform *pose, double *lin_vel, double *ang_vel);
void sc_skeleton_set_state(sc_skeleton *s, const sc_xform *pose, const double *lin_vel, const double *ang_vel);
/* World centre of mass and its velocity of one bone. */
void sc_skeleton_bone_com(const sc_skeleton *s, int bone, double com[3], double com_vel[3]);

/* External loads for the next step (cleared after each step). */
void sc_skeleton_add_force_at(sc_skeleton *s, int bone, const double f[3], const double world_point[3]);
void sc_skeleton_add_torque(sc_skeleton *s, int bone, const double tau[3]);

/* Stable PD targets ([L13] eq. 1, 4-5): per non-root bone the target rotation of the bone
 * relative to its parent; for hinges only the twist about the hinge axis matters. The target
 * is held until changed; the motor rows are set up from it at the start of every step. */
/* Changes gravity (for a tilted world, e.g. a slope test) from the next step on. */
void sc_skeleton_set_gravity(sc_skeleton *s, const double g[3]);
void sc_skeleton_set_targets(sc_skeleton *s, const sc_quat *target_local /* [nbones], root ignored */);
/* Scales each servo's gains from the model's: kp x a, kd x sqrt(a) (the ratio of [BK] 4.1's
 * kd = 2 sqrt(kp)), a = scale[b] but at least SC_SKELETON_MIN_GAIN_SCALE; servos without a
 * damper are left alone. Held until changed. */
#define SC_SKELETON_MIN_GAIN_SCALE 1e-3
void sc_skeleton_set_gain_scale(sc_skeleton *s, const double *scale /* [nbones], root ignored */);
/* local[b] = q_parent^-1 q_b (the root's is its world rotation). */
void sc_skeleton_local_rotations(const sc_skeleton *s, sc_quat *local /* [nbones] */);
/* Torque the servo of each bone applied to that bone in the last step (world, 3 per bone; the
 * parent received the opposite). Root: zero. Joint stops' reactions are not included. */
void sc_skeleton_motor_torques(const sc_skeleton *s, double *tau /* 3*nbones */);

/* One step of size dt. Non-finite state afterwards -> SC_ENUMERIC naming the bone. With the
 * exact solver, servos well below their torque limit (last step's torque under half of it)
 * step without the bound, which makes the LCP much cheaper and leaves its solution as it is
 * while the bound does not bind; if one then exceeds its limit, the step is redone with
 * every bound. */
int sc_skeleton_step(sc_skeleton *s, double dt, sc_err *err);
/* Exact steps redone with every servo bounded since creation. */
long sc_skeleton_redone_steps(const sc_skeleton *s);
/* Exact steps whose constraints the tree solver solved since creation. */
long sc_skeleton_tree_steps(const sc_skeleton *s);

/* Snapshot of everything that determines the future (body positions, quaternions, velocities,
 * pending loads, targets, last motor torques). Restoring it and
 * stepping reproduces the uninterrupted run bit for bit, also into a fresh skeleton built from
 * the same model and options. */
size_t sc_skeleton_state_size(const sc_skeleton *s); /* number of doubles */
void sc_skeleton_save(const sc_skeleton *s, double *buf);
void sc_skeleton_restore(sc_skeleton *s, const double *buf);

/* ODE messages (warnings) raised while stepping this skeleton, and the last one's text. */
long sc_skeleton_ode_messages(const sc_skeleton *s, const char **last);

/* ---- rigid contact ([J11]'s baseline: the bones themselves touch the ground) ----
 * Boxes (or point sets) fixed to bones meet the ground (sc_ground_height: plane, slope, bumps,
 * tiles) through ODE contact joints with Coulomb friction (ODE's friction pyramid,
 * dContactApprox1). Each box is tested at its corners and at points on its faces no further
 * apart than `spacing` (0: corners only, enough on a plane); of a collider's points under the
 * ground the deepest, then repeatedly the one farthest from those chosen, up to
 * SC_BOX_CONTACTS, become contacts; a collider wholly above the ground's highest point is
 * skipped. The contacts are made
 * afresh at the start of every step from the bodies' positions, so they are not state. */
#define SC_BOX_CONTACTS 4
typedef struct sc_box_collider {
    int bone;
    double center[3]; /* m, from the bone's origin, bone frame (at rest: world axes) */
    double half[3];   /* m, half extents along the bone frame's axes */
} sc_box_collider;

typedef struct sc_rigid_contact_opts {
    double mu;      /* Coulomb friction coefficient */
    double spacing; /* m between tested points on a face (0: corners only), or of a skin's thinned vertices */
    double erp;     /* fraction of the penetration corrected per step */
    double cfm;     /* contact softness (m/N per step); 0: hard */
} sc_rigid_contact_opts;

/* Gives the skeleton collision boxes against the ground g (copied). SC_EINPUT for a bone out of
 * range or a box without volume; replaces any earlier boxes. */
int sc_skeleton_set_colliders(sc_skeleton *s, int n, const sc_box_collider *boxes, const sc_ground *g, const sc_rigid_contact_opts *o, sc_err *err);
/* The same with each collider a set of points instead of a box's: collider c is bone[c]'s
 * points first[c] .. first[c + 1] - 1 of pts (m, from the bone's origin, bone frame). */
int sc_skeleton_set_point_colliders(sc_skeleton *s, int n, const int *bone, const int *first, const double *pts, const sc_ground *g,
                                    const sc_rigid_contact_opts *o, sc_err *err);
/* The contact forces of the last step: total force on the bones, contacts pressing, their loads
 * for the centre of pressure (sc_contact_cop), deepest penetration at the step's start. */
void sc_skeleton_rigid_contact(const sc_skeleton *s, sc_contact_result *res);
/* The ground's normal force on one bone in the last step (N; 0 without contact). */
double sc_skeleton_bone_contact_force(const sc_skeleton *s, int bone);

/* Total linear momentum and angular momentum about the world origin of the bones. */
void sc_skeleton_momentum(const sc_skeleton *s, double lin[3], double ang[3]);

#endif

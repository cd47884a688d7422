/* The two-way coupled simulation of [L13] section 4 (DESIGN.md section 2): an sc_sim holds
 * the mutable state of one character (MuJoCo's mjData to the model's mjModel) and every
 * scratch array a step needs, allocated once at creation: a step never allocates.
 *
 * Step (dt = 0.5 ms, symplectic Euler), [L13] 4.4:
 *  1. kinematics: fixed nodes take their bone's motion; the pose-based rest shape
 *     x~ = LBS(q, X) and its velocity (eq. 12-13); surface points by the embedding;
 *  2. forces: corotated elasticity with pose-based plasticity (eq. 7-16), pose-based damping
 *     (eq. 17) or Rayleigh, penalty contact with Coulomb friction mapped by J_phi^T, fluid drag
 *     on the fine surface's triangles mapped the same way ([P17] 4.2.2, sim/fluid.h), gravity;
 *  3. coupling: forces on fixed nodes go to their bones as forces at points, damping
 *     reactions through the skinning Jacobian transpose (eq. 18);
 *  4. integration: free nodes by symplectic Euler, the skeleton by one ODE step with stable
 *     PD servos (eq. 1-5). */
#ifndef SC_SIM_H
#define SC_SIM_H
#include <stdint.h>
#include "sim/contact.h"
#include "sim/fem.h"
#include "sim/fluid.h"
#include "model/model.h"
#include "sim/skeleton.h"
#include "skin/lbs.h"

#define SC_SIM_MAX_BONES 64

typedef enum { SC_DAMP_POSE = 0, SC_DAMP_RAYLEIGH = 1, SC_DAMP_NONE = 2 } sc_damping_kind;

/* How the character meets the ground ([J11] compares these on one skeleton):
 * SOFT: the whole body is FEM flesh with penalty contact ([L13] 4, the default);
 * RIGID: the flesh is carried rigidly by the bone that moves it most, its mass lumped into
 *   that bone, and the bones' boxes (their flesh's bounds) touch the ground through ODE contact
 *   joints (sc_skeleton_set_colliders): [J11]'s rigid baseline, and no FEM step at all;
 * LAYER: [J11] 3-4's soft contact layer: the flesh within `thickness` of the skin of the layer
 *   bones (feet, hands) stays FEM flesh coupled two ways; every other node is carried rigidly by
 *   its bone as in RIGID, its mass lumped into it, and the tets between carried nodes are not
 *   simulated. Contact is softcon's penalty contact on the whole surface (in place of [J11]'s
 *   LCP; docs/tools/simulate.md compares them). */
typedef enum { SC_CONTACT_SOFT = 0, SC_CONTACT_RIGID = 1, SC_CONTACT_LAYER = 2 } sc_contact_model;
/* RIGID: what of a bone meets the ground: the box bounding its skin, or its skin's vertices */
typedef enum { SC_RIGID_BOX = 0, SC_RIGID_SKIN = 1 } sc_rigid_shape;

typedef struct sc_layer_opts {
    double thickness; /* m of flesh under the skin that stays soft */
    uint64_t bones;   /* bit b: bone b has a soft layer */
} sc_layer_opts;

/* Wang et al. 2010's motor noise as [J11] 6 uses it: every step, each servo's torque gets a
 * Gaussian torque of standard deviation b |tau| / tau_max per axis (tau: the servo's torque of
 * the step before, tau_max: the joint's torque limit, its strength). b = 0: none. */
typedef struct sc_motor_noise_opts {
    double b;
    uint64_t seed;
} sc_motor_noise_opts;

typedef struct sc_sim_opts {
    double dt;             /* s */
    double gravity[3];     /* m/s^2 */
    int plasticity;        /* 1: pose-based plasticity (eq. 12-16), 0: plain corotated (eq. 8) */
    int fem_single;        /* 1: the FEM pass in single precision (sc_fem_kernel_id_single), 0: double */
    int damping;           /* sc_damping_kind */
    double pose_damping;   /* c of eq. 17 (1/s) */
    double rayleigh_alpha; /* 1/s */
    double rayleigh_beta;  /* s */
    int contact_model;     /* sc_contact_model */
    sc_contact_opts contact;
    sc_rigid_contact_opts rigid; /* RIGID: friction is contact.mu, the ground contact.ground */
    int rigid_shape;             /* sc_rigid_shape */
    sc_layer_opts layer;
    sc_motor_noise_opts motor_noise;
    sc_fluid_opts fluid; /* drag on the flesh's fine surface; not with RIGID (no flesh is simulated) */
    sc_skeleton_opts skeleton;
    double max_speed;    /* m/s; a node faster than this is a blow-up */
    double max_inverted; /* fraction of tets allowed inverted at once */
    double settle;       /* s: a posed start comes to rest on the ground first (sc_sim_settle) */
} sc_sim_opts;

void sc_sim_default_opts(sc_sim_opts *o);
/* The FEM kernel (SC_FEM_KERNEL_*) a simulation made with these options runs in this process. */
int sc_sim_fem_kernel(const sc_sim_opts *o);

typedef struct sc_sim_timing {                                                  /* seconds, accumulated over `steps` */
    double skin, fem, damping, contact, fluid, coupling, ode, integrate, total; /* integrate: nodes, fixed nodes, blow-up check */
    long steps;
} sc_sim_timing;

typedef struct sc_sim_diag {
    double kinetic, elastic, potential; /* J (potential: gravity, relative to y = 0) */
    double linear[3];                   /* kg m/s */
    double angular[3];                  /* kg m^2/s about the centre of mass */
    double com[3], mass;
    double contact_force[3]; /* N */
    int contacts, inverted;
} sc_sim_diag;

/* Counted per simulation, never in process-wide state (MuJoCo's mjData.warning). */
typedef struct sc_sim_warnings {
    long fem_fallbacks; /* rotations that needed the exact polar fallback, summed over steps */
    long ode_messages;  /* ODE warnings raised while stepping */
    const char *last_ode_message;
} sc_sim_warnings;

typedef struct sc_sim {
    const sc_model *m;
    sc_sim_opts o;
    uint64_t model_hash, options_hash; /* derived once at creation, for snapshot headers */
    long fem_fallbacks;
    sc_fem fem;
    sc_skeleton *skel;
    int nn, nb, nv;
    /* state */
    double t;
    long step;
    double start_sink;         /* m the last sc_sim_settle lowered the start by; NAN: not settled */
    double *x, *v;             /* [3 nn] node positions and velocities */
    double *warm;              /* FEM warm-start rotations */
    double *anchor;            /* [3 nv] friction anchors */
    unsigned char *in_contact; /* [nv] */
    /* inputs for the next step */
    sc_quat *targets;     /* [nb] PD target local rotations */
    double *push;         /* [3 nb] external force at each bone's centre of mass (N) */
    double *joint_torque; /* [3 nb] a controller's torque at each joint beyond its servo (N m, world) */
    double *gain_scale;   /* [nb] each servo's gain multiplier (1: the model's gains) */
    /* scratch and last-step results */
    double *f, *xbar, *xbar_dot, *reaction, *sp;
    sc_xform *pose;
    double *lin_vel, *ang_vel, *bone_f, *bone_tau;
    double *dt_mass;      /* [nn] dt / node mass; 0 for fixed nodes */
    sc_contact_cull cull; /* which surface vertices can touch the ground */
    sc_lbs_plan lbs;      /* skinning by bone (when the model has weights) */
    sc_fem_stats fem_stats;
    sc_contact_result contact;
    double *surf_v, *surf_f; /* [3 nv] with a fluid: the fine surface's velocities and drag */
    sc_sim_timing timing;
    /* RIGID: the model with the flesh lumped into the bones (what the skeleton was built from),
       and each node's bone and bone-frame rest offset; LAYER: the model whose carried nodes are
       fixed to their bones, which m then points to */
    sc_model *lumped;
    int *node_owner;
    double *node_local;
    int *vert_bone; /* [nv] the bone that moves each surface vertex most */
} sc_sim;

/* Creates the simulation at the rest pose; SC_EINPUT if the model lacks what the options need
 * (skin weights for plasticity or pose damping). */
int sc_sim_create(const sc_model *m, const sc_sim_opts *o, sc_sim **out, sc_err *err);
void sc_sim_free(sc_sim *s);
/* Moves the whole character rigidly by `offset` and gives everything velocity `vel`. */
void sc_sim_translate(sc_sim *s, const double offset[3], const double vel[3]);
/* Adds the rigid velocity field dv + dw x (x - com) to every node and bone (a sudden
 * perturbation; dw may be NULL). */
void sc_sim_add_velocity(sc_sim *s, const double dv[3], const double dw[3]);
void sc_sim_set_targets(sc_sim *s, const sc_quat *local);
/* Inputs beyond the PD targets, held until changed (a motion network's physics module, [BK] 4):
 * a torque at each joint (3 per bone, world, N m; +tau on the bone, -tau on its parent; the
 * root's is ignored), and each servo's gain multiplier (sc_skeleton_set_gain_scale). */
void sc_sim_set_joint_torques(sc_sim *s, const double *tau);
void sc_sim_set_gain_scale(sc_sim *s, const double *scale);
/* Puts the character in a pose: the root bone's origin at root_pos, local joint rotations
 * (root: world), optional root origin velocity and local angular velocities (each in its
 * parent's frame; NULL = at rest); the flesh takes the skinned shape and velocity. */
void sc_sim_set_pose(sc_sim *s, const double root_pos[3], const sc_quat *local, const double root_vel[3], const double *local_ang_vel);
/* sc_sim_set_pose with the root above its rest place, raised or lowered so that the lowest
 * surface point is `height` above the ground (the root's world rotation: local[0]). */
int sc_sim_set_pose_above_ground(sc_sim *s, const sc_quat *local, double height, const double vel[3], sc_err *err);
/* Lets a start in contact come to rest on the ground (opts.settle seconds; 0: nothing), so that
 * it meets no jolt: after sc_sim_set_pose the flesh is in its skinned, unloaded shape and would
 * drop onto the soles with the whole weight at once (1.3-1.9 m g in the first 0.1 s). For
 * `settle` seconds of simulated time the pose is held and the skeleton may only move vertically
 * as one body, the flesh free, both damped; then the posed state resumes lowered by the sink
 * found (s->start_sink, m), its velocities unchanged, the flesh deformed and the soles in
 * contact as they came to rest, at the same t and step. A character the ground does not carry
 * at the end (less than half the weight on it, or a sink of more than SC_SETTLE_MAX_SINK: a start
 * in flight) is left exactly as posed and start_sink is NAN. Deterministic; SC_ENUMERIC from a
 * step. */
#define SC_SETTLE_MAX_SINK 0.05
int sc_sim_settle(sc_sim *s, sc_err *err);
void sc_sim_set_gravity(sc_sim *s, const double g[3]);
/* One step; SC_ENUMERIC with the step, time, node or element and quantity on a blow-up. */
int sc_sim_step(sc_sim *s, sc_err *err);
void sc_sim_diagnostics(const sc_sim *s, sc_sim_diag *d);
/* Positions of the fine-surface vertices (3 per vertex) from the current nodes. */
void sc_sim_surface(const sc_sim *s, double *out);
void sc_sim_warnings_get(const sc_sim *s, sc_sim_warnings *w);
/* Whether the ground pressed on the flesh (soft) or the box (rigid) of this bone in the last
 * step: a foot's touchdown, for controllers that switch on contact. */
int sc_sim_bone_touches(const sc_sim *s, int bone);
/* The ground's normal load on a bone in the last step (N): rigid contact's own; soft contact's
 * total load shared by the bone's part of the vertices in contact (an estimate: the pressure
 * is taken as even). */
double sc_sim_bone_load(const sc_sim *s, int bone);

/* ---- checked snapshots (Box2D's b2World_Snapshot / b2World_Restore) ----
 * A snapshot holds everything that determines the future: time and step, gravity, node
 * positions and velocities, FEM warm starts, PD targets, pushes, joint torques and gain
 * multipliers in force, the skeleton's bodies and loads, the friction anchors of the vertices in contact (only those: an anchor is
 * reset when a vertex touches down) and the last step's diagnostics, so that after a restore
 * sc_sim_diagnostics describes the restored state. Restoring it into any simulation of the same
 * model, options and build and stepping reproduces the original run bit for bit.
 * Layout: a header (magic, layout version, FEM kernel id, model / options / build hashes,
 * payload size and checksum), then the payload; all values native-endian. */
#define SC_SNAPSHOT_LAYOUT 3
/* Bytes a snapshot of s can take at most (every surface vertex in contact). */
size_t sc_sim_snapshot_capacity(const sc_sim *s);
/* Writes a snapshot of s into buf; returns its size in bytes, or 0 when cap is too small. */
size_t sc_sim_snapshot_save(const sc_sim *s, void *buf, size_t cap);
/* Restores a snapshot; SC_EINPUT, saying what differs, for a buffer that is not a snapshot,
 * is truncated or damaged, or comes from another model, options, build or FEM kernel. s is
 * untouched on failure. */
int sc_sim_snapshot_restore(sc_sim *s, const void *buf, size_t size, sc_err *err);
/* Identifies this build (version, source revision, compiler, FEM kernel) in headers. */
uint64_t sc_sim_build_hash(void);

#endif

/* Reference kinematics of the character's skeleton for inverse dynamics ([L13] 5.1):
 * - sc_motion: poses at keyframe rate (what retargeting produces);
 * - sc_traj: poses, velocities and accelerations at simulation rate by the forward differences
 *   and constant-acceleration interpolation of [L13] eq. 20-24, done on rotations with relative
 *   rotations (omega = log(q_T^-1 q_T+1) / dT, rotated into the parent frame; positions by slerp);
 * - sc_body: the rigid-body mass model of the skeleton (bone masses, centres of mass and inertias
 *   from ALL tet nodes weighted by their skinning weights, [L13] 5.1), and forward kinematics.
 *
 * Frames: bone frames are world-aligned at rest with the origin at the bone's joint (model/model.h).
 * A local rotation is the bone's rotation relative to its parent (the root's: relative to the
 * world). A local angular velocity is the child's angular velocity relative to its parent,
 * expressed in the PARENT frame; its acceleration is the time derivative of those components. */
#ifndef SC_CONTROL_KINEMATICS_H
#define SC_CONTROL_KINEMATICS_H
#include "core/mathx.h"
#include "core/status.h"
#include "model/model.h"

/* ---- keyframe motion ---- */
/* The fewest keyframes each stencil of the pipeline needs (sc_id_min_frames combines them for a
 * configuration; the stages themselves skip what a shorter motion cannot give): */
#define SC_DIFF_MIN_FRAMES       3 /* an acceleration, the difference of two interval rates (eq. 22) */
#define SC_FILTER_MIN_FRAMES     3 /* a filter: a 3-tap section, the narrowest centred window */
#define SC_OFFSET_FIT_MIN_FRAMES 5 /* sc_offset_fit (the balance fits): D2^T D2 is 5 wide */

typedef struct sc_motion {
    int nframes, nbones;
    double frame_time; /* dT between keyframes (s) */
    double *root_pos;  /* [nframes*3] world position of the root bone's origin (m) */
    sc_quat *local;    /* [nframes*nbones] local rotations */
} sc_motion;

int sc_motion_alloc(sc_motion *m, int nframes, int nbones, double frame_time, sc_err *err);
void sc_motion_free(sc_motion *m);
/* Flips quaternion signs so that consecutive samples of every bone lie in one hemisphere. */
void sc_motion_make_continuous(sc_motion *m);
/* Optional low-pass filter for noisy capture: a centred (zero-phase) moving average over `window`
 * frames (odd, >= 1; 1 = off) of the root position and of every local rotation, the latter taken
 * in the tangent space at the frame itself: q' = q exp(mean_k log(q^-1 q_k)). The window shrinks
 * symmetrically at the ends of the clip. Box response: -3 dB at about 0.443 / (window dT) Hz. */
int sc_motion_smooth(sc_motion *m, int window, sc_err *err);
/* The other option: a zero-phase Butterworth low-pass (2nd order run forwards and backwards, so
 * 4th order, -6 dB at cutoff_hz) on the root position and on every quaternion's components
 * (consecutive samples in one hemisphere), renormalized; the ends are padded by odd reflection.
 * Biomechanics commonly low-passes marker data at about 6 Hz. Needs cutoff < the Nyquist rate. */
int sc_motion_lowpass(sc_motion *m, double cutoff_hz, sc_err *err);

/* ---- rigid-body model ---- */
typedef enum {
    SC_MASS_SKIN = 0,    /* all tet nodes by their skinning weights ([L13] 5.1) */
    SC_MASS_NEAREST = 1, /* all tet nodes, each with weight 1 to the bone whose segment is nearest */
    SC_MASS_FIXED = 2    /* the model's bone masses (its fixed nodes only, [L13] 4.3) */
} sc_mass_source;

#define SC_BODY_MAX_BONES 64

typedef struct sc_body {
    int nb;
    int *parent, *type; /* [nb] as in sc_model */
    double *offset;     /* [nb*3] joint_pos[j] - joint_pos[parent] (parent frame); root: joint_pos[0] */
    double *axis;       /* [nb*3] unit hinge axis, bone frame (hinges; else 0) */
    double *mass;       /* [nb] kg */
    double *com;        /* [nb*3] origin -> centre of mass, bone frame (m) */
    double *inertia;    /* [nb*9] about the centre of mass, bone frame (kg m^2) */
    double total_mass;
    int source; /* sc_mass_source actually used */
} sc_body;

/* want = SC_MASS_SKIN falls back to SC_MASS_NEAREST when the model has no skinning weights
 * (m->skin_k == 0); b->source says which was used. */
int sc_body_from_model(const sc_model *m, int want, sc_body *b, sc_err *err);
void sc_body_free(sc_body *b);
/* Bone whose segment (joint_pos -> bone_end) is nearest to x; on a tie the bone with the larger
 * index (a child rather than its parent: the heel goes with the foot, not the shin). */
int sc_nearest_bone(const sc_model *m, sc_vec3 x);
/* Per-node weights in top-k form: the model's skin weights, or (skin_k == 0) nearest bone with
 * k = 1. *bone and *w are malloc'd (free()). Returns the source (SC_MASS_SKIN / SC_MASS_NEAREST)
 * in *source. */
int sc_node_weights(const sc_model *m, int *k, int **bone, double **w, int *source, sc_err *err);

/* ---- simulation-rate trajectory ---- */
enum { SC_DIFF_FORWARD = 0, SC_DIFF_CENTRAL = 1 };

typedef struct sc_traj {
    int n, nb;
    double dt;                              /* simulation step; sample k is at time k dt from the first keyframe */
    double *root_pos, *root_vel, *root_acc; /* [n*3] world */
    sc_quat *local;                         /* [n*nb] */
    double *ang_vel;                        /* [n*nb*3] local angular velocity, parent frame (root: world) */
    double *ang_acc;                        /* [n*nb*3] time derivative of ang_vel's components */
} sc_traj;

/* SC_DIFF_FORWARD is [L13] eq. 20-24 as written: d_T = (q_T+1 - q_T)/dT is the velocity at
 * keyframe T, a_T = (d_T+1 - d_T)/dT its acceleration, held constant over [T, T+1] (eq. 22);
 * velocities are interpolated linearly (eq. 23), positions linearly / by slerp (eq. 24). Both
 * derivatives are first-order accurate (d_T is really the velocity at T + dT/2).
 * SC_DIFF_CENTRAL: v_T = (d_T-1 + d_T)/2, a_T = (d_T - d_T-1)/dT, both interpolated linearly:
 * second order. Needs >= 2 keyframes; samples cover [0, (nframes-1) dT]. */
int sc_traj_from_motion(const sc_motion *m, double dt, int scheme, sc_traj *out, sc_err *err);
void sc_traj_free(sc_traj *t);

/* World state of one bone: rotation, origin position and velocity/acceleration, angular
 * velocity/acceleration (all world). */
typedef struct sc_bone_kin {
    sc_quat q;
    sc_vec3 p, v, a, w, dw;
} sc_bone_kin;

/* Forward kinematics of sample k of a trajectory (out: [nb]). */
void sc_kin_forward(const sc_body *b, const sc_traj *t, int k, sc_bone_kin *out);
/* The same from raw arrays (w_local, dw_local may be NULL: zero). */
void sc_kin_forward_raw(const sc_body *b, sc_vec3 root_p, sc_vec3 root_v, sc_vec3 root_a, const sc_quat *local, const double *w_local,
                        const double *dw_local, sc_bone_kin *out);
/* World centre of mass of bone j and its velocity / acceleration. */
sc_vec3 sc_kin_com(const sc_body *b, const sc_bone_kin *k, int j);
sc_vec3 sc_kin_com_vel(const sc_body *b, const sc_bone_kin *k, int j);
sc_vec3 sc_kin_com_acc(const sc_body *b, const sc_bone_kin *k, int j);
/* World inertia of bone j about its centre of mass. */
sc_mat3 sc_kin_inertia_world(const sc_body *b, const sc_bone_kin *k, int j);

/* Twist of q about the unit axis a (swing-twist decomposition) as a rotation about a, and its
 * angle in (-pi, pi] (the convention of sim/skeleton.c's hinge servo). */
sc_quat sc_kin_twist(sc_quat q, sc_vec3 a);
double sc_kin_twist_angle(sc_quat q, sc_vec3 a);

/* The offset x[n] on a grid of step h whose second differences best match t[n] (t[0], t[n-1]
 * unused) while staying small: min sum_f ((x[f-1] - 2 x[f] + x[f+1]) / h^2 - t[f])^2 +
 * lambda sum_f weight[f] x[f]^2 (weight NULL: all 1; a large weight pins x[f] near 0), a
 * symmetric pentadiagonal system solved by banded LDL^T. a0, a1, a2: work arrays [n]. */
void sc_offset_fit(int n, double h, double lambda, const double *weight, const double *t, double *x, double *a0, double *a1, double *a2);

#endif

/* Linear feedback policies around a cyclic open-loop controller ([L13] 5, after Liu et al. 2012;
 * learned by guided learning, Liu et al. 2016): the controller plays a gait cycle of the
 * reference in fragments; at the start of fragment j it reads a small state s of the character
 * and sets the PD target offsets of the action DoFs to
 *     a = a_j + M_j (s - s_j)        (clamped to +-max_action about a_j)
 * and the other DoFs to the fragment's open-loop offsets, held over the fragment. With every M_j
 * zero it is the open-loop cycle controller.
 *
 * Features (19; all but heading in the root's heading frame: x left, y up, z forward, yaw removed):
 *   root_pitch, root_roll        rad   the root's tilt (rotation vector about heading x and z)
 *   root_height                  m     the root origin's height
 *   com_stance_x/y/z             m     centre of mass relative to the stance foot (the foot with
 *                                      more surface vertices on the ground; else the lower one)
 *   com_vel_x/y/z                m/s   centre-of-mass velocity
 *   lfoot_x/y/z, rfoot_x/y/z     m     the feet (bone origins) relative to the centre of mass
 *   angmom_x/y/z                 m^2/s angular momentum about the centre of mass per unit mass
 *   heading                      rad   the root's heading (yaw about up) from the policy's start
 *                                      heading; its s_bar is the reference cycle's at the
 *                                      fragment's start, so a closed-loop gait keeps the
 *                                      capture's direction instead of drifting */
#ifndef SC_POLICY_H
#define SC_POLICY_H
#include "sampling/openloop.h"
#include "sampling/segments.h"

#define SC_FEATURES        19
#define SC_FEATURE_HEADING 18
#define SC_MAX_ACTIONS     32
extern const char *const sc_feature_names[SC_FEATURES];
extern const char *const sc_feature_units[SC_FEATURES];
/* A typical deviation of each feature in a gait (0.1 rad, 0.05-0.1 m, 0.1-0.2 m/s, ...): the unit
 * in which gains are searched and deviations scored. */
extern const double sc_feature_scale[SC_FEATURES];
/* The feature's index, -1 when no feature has that name. */
int sc_feature_index(const char *name);

typedef struct sc_policy sc_policy;

/* What the features need from the model, derived once. */
typedef struct sc_features {
    const sc_model *m;
    int lfoot, rfoot; /* the two lowest leaf bones, left = +x at rest */
    int *vert_bone;   /* [nsurf_verts] */
    double heading0;  /* rad, the heading the heading feature is measured from */
} sc_features;
/* p: the policy whose runs they describe (the heading is measured from its start heading; NULL:
 * from heading 0). */
int sc_features_init(sc_features *f, const sc_model *m, const sc_policy *p, sc_err *err);
void sc_features_free(sc_features *f);
void sc_features_eval(const sc_features *f, const sc_sim *s, double out[SC_FEATURES]);

struct sc_policy {
    int nb, ndof, nact, nfrag;
    int act[SC_MAX_ACTIONS];       /* the control DoF of each action */
    long *steps;                   /* [nfrag] simulated length of each fragment */
    double *ref_t0, *ref_t1;       /* [nfrag] span of the cycle each plays (s from the cycle's start) */
    double *offset;                /* [nfrag * ndof] open-loop offsets */
    double *s_bar;                 /* [nfrag * SC_FEATURES] */
    double *a_bar;                 /* [nfrag * nact] */
    double *M;                     /* [nfrag * nact * SC_FEATURES] */
    double max_action;             /* rad */
    int nbase;                     /* the cycle's base targets: nbase samples over [0, period] */
    double *base_time, *base_quat; /* [nbase], [nbase * nb * 4] */
    double *ref_quat;              /* [nbase * nb * 4] the reference's local rotations over the cycle (tracking error) */
    double period;                 /* s of reference time */
    double start_root[3], start_vel[3];
    double *start_quat, *start_w; /* [nb * 4], [nb * 3] the state the controller starts from */
    double mean_root_height;      /* the cycle's, for judging a fall */
};
int sc_policy_alloc(sc_policy *p, int nb, int ndof, int nact, int nfrag, int nbase, sc_err *err);
void sc_policy_free(sc_policy *p);
int sc_policy_copy(const sc_policy *src, sc_policy *dst, sc_err *err);
/* The open-loop policy of a cycle controller: per fragment the mean offsets over the cycles, the
 * median steps; every M zero; the actions the control DoFs act[nact], each within +-max_action. */
int sc_policy_from_openloop(const sc_openloop_cycle *o, const sc_reference *ref, const sc_model *m, const sc_control_dofs *dofs, int nact,
                            const int *act, double max_action, sc_policy *p, sc_err *err);
/* The heading feature's target at fragment j's start: the reference cycle's root heading then,
 * from its heading at the cycle's start (the s_bar every fit keeps for it). */
double sc_policy_heading_target(const sc_policy *p, int j);
/* The action offsets at fragment j for features s (feedback 0: the open loop, a_j). */
void sc_policy_actions(const sc_policy *p, int j, const double s[SC_FEATURES], int feedback, double *a);

/* The policy as a controller: a target source with state (the fragment being played). */
typedef struct sc_policy_controller {
    const sc_policy *p;
    const sc_features *f;
    const sc_control_dofs *dofs;
    int feedback;
    long next_step; /* step at which the next fragment starts */
    long frag_start;
    int frag;    /* fragment being played (-1 before the first) */
    long cycles; /* fragments completed / nfrag */
    double offset[SC_MAX_DOFS];
    double s[SC_FEATURES]; /* the features read at the fragment's start */
    const double *explore; /* [nact] rad or NULL: each fragment's actions get a uniform draw of +-explore[i] */
    uint64_t explore_seed; /* keyed by the fragment's count since the start, so a draw never depends on who runs it */
} sc_policy_controller;
/* Starts at the simulation's current step, fragment 0. */
void sc_policy_controller_init(sc_policy_controller *c, const sc_policy *p, const sc_features *f, const sc_control_dofs *dofs, long step,
                               int feedback);
sc_target_source sc_policy_source(sc_policy_controller *c);
/* The reference time within the cycle the controller plays now (after an eval). */
double sc_policy_controller_cycle_time(const sc_policy_controller *c, long step);
/* Simulated steps of one cycle (every fragment's steps). */
long sc_policy_cycle_steps(const sc_policy *p);
/* Puts s in the policy's start state (settled when s's options say so: sc_sim_settle). */
int sc_policy_start(const sc_policy *p, sc_sim *s, sc_err *err);
/* A fall, for a cyclic controller: the root below half the cycle's mean root height
 * (SC_FALL_LOW), or its up axis more than max_tilt from vertical (SC_FALL_TILT); else 0. */
int sc_policy_fallen(const sc_policy *p, const sc_sim *s, double max_tilt);

#endif

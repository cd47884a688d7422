/* The controller of [T12] 5: every control period h, the desired muscle lengths l_d are chosen
 * by one QPCC (optim/qpcc.h) over l_d and the ground contact impulses, minimising a sum of
 * the objectives of [T12] 5.2 on the state one implicit step ahead:
 *
 *   M~ v+ = M v + h (f_e + f_ext + M g + A (l_d - l)) + J' f_c,   M~ = M + h C + h^2 K  (eq. 8)
 *
 * subject to 0.5 l0 <= l_d <= l0 and frictional contact as complementarity (eq. 11): per
 * contact patch, the normal impulse against the gap after the step, 8 friction directions
 * against the tangential velocity plus lambda, lambda against the friction cone. With the
 * static-contact option the QP of eq. 19-22 alone is solved ([T12]'s baseline).
 *
 * Prediction (what differs from [T12] 4.3): K is the rest stiffness turned by the body's
 * best-fit rotation (M~ is factored once; [T12] uses the current corotated K), C = alpha M +
 * beta K as the simulation's Rayleigh damping. Linear and angular momentum after the step use
 * the rigid modes of M~ (M~ 1 = (1 + h alpha) M 1), so they need no solve; the contact patches
 * and tracked points need three solves each. Contact patches: the boundary nodes within
 * `contact_margin` of the ground (after h at their current velocity), grouped into at most
 * `patches` clusters in the ground plane; a patch's velocity is its nodes' mean and its
 * impulse is shared among them. The simulation (softbody.h) then runs h with l_d held. */
#ifndef SC_MUSCLE_CONTROL_H
#define SC_MUSCLE_CONTROL_H
#include "muscle/softbody.h"
#include "optim/qpcc.h"
#include "optim/skyline.h"

typedef enum {
    SC_OBJ_MOMENTUM = 0,     /* eq. 12-13: dL/dt -> m kp (c_target - c) - kd L */
    SC_OBJ_ANGULAR = 1,      /* eq. 14: dH/dt -> rate - kd H */
    SC_OBJ_COM = 2,          /* eq. 17, f = the centre of mass: c+ -> target */
    SC_OBJ_COM_VELOCITY = 3, /* eq. 18 for the centre of mass */
    SC_OBJ_POINT = 4,        /* eq. 17: the mean of a node set -> target */
    SC_OBJ_POINT_VELOCITY = 5,
    SC_OBJ_REGULARISE = 6, /* |(l_d - l_ref) / l0|^2 over its segments, l_ref = (1 - target[0]) l0: target[0] is the contraction sought (0: rest) */
    SC_OBJ_KINETIC = 7     /* sum m_i |v_i+ - v_c+|^2: the motion about the centre of mass after the step (J x 2) */
} sc_objective_type;

typedef enum { SC_WHEN_ALWAYS = 0, SC_WHEN_CONTACT = 1, SC_WHEN_AIRBORNE = 2 } sc_objective_when;

/* How target enters over the window [from, to): whole from the start, or grown from 0 at `from`
   to target at `to`, linearly or by the smoothstep 3u^2 - 2u^3 (no jump in velocity at either end:
   a foot lifted, moved and placed). */
typedef enum { SC_RAMP_NONE = 0, SC_RAMP_LINEAR = 1, SC_RAMP_SMOOTH = 2 } sc_objective_ramp;

/* One objective term, active for from <= t < to and when its contact condition holds. Its
 * target is target (times the ramp's fraction) + amplitude * sin(2 pi (t - from) / period)
 * (period 0: no sine); targets of MOMENTUM may be offsets from the centre of support in x and z
 * (support: 1); targets of POINT, COM and MOMENTUM may be offsets from where the node set (or the
 * centre of mass) was at the window's first plan (anchored: 1; the controller keeps that anchor). */
typedef struct sc_objective {
    int type; /* sc_objective_type */
    double weight;
    double from, to;  /* s */
    int when;         /* sc_objective_when */
    double axes[3];   /* per-axis weights (1, 1, 1 by default) */
    double target[3]; /* m, m/s, or N / N m for the rates (ANGULAR: the rate) */
    double amplitude[3], period;
    int support;   /* MOMENTUM: c_target's x and z are offsets from the centre of support */
    double kp, kd; /* MOMENTUM (1/s^2, 1/s), ANGULAR (kd only, 1/s) */
    int nnodes;    /* POINT*: the node set */
    int *nodes;
    int relative;                  /* POINT: target is an offset from the set's rest centre; REGULARISE: towards the last plan's l_d */
    const unsigned char *segments; /* REGULARISE: [nsegs] 1 for the segments it covers; NULL: all */
    int ramp;                      /* sc_objective_ramp */
    int anchored;                  /* POINT, COM, MOMENTUM: target is an offset from the window's first plan's position */
} sc_objective;

typedef struct sc_control_opts {
    double period;         /* h (s) */
    int qpcc;              /* 1: QPCC ([T12] 6); 0: the static-contact QP ([T12] eq. 19-22) */
    int patches;           /* contact patches at most */
    double contact_margin; /* m */
    double mu;             /* friction coefficient of the plan */
    int max_nodes;         /* QPCC states explored per plan */
    double ridge;          /* added to every variable's Hessian diagonal */
    int nobjectives;
    sc_objective *objectives;
    const unsigned char *locked; /* [nsegs] or NULL: 1 holds a segment at its rest length (it cannot contract: [T12] 7's inchworm) */
} sc_control_opts;

void sc_control_default_opts(sc_control_opts *o);

typedef struct sc_control_report {
    double objective;     /* of the plan */
    int nodes;            /* QPs solved */
    int patches;          /* contact patches planned */
    int sliding, broken;  /* patches planned sliding and breaking */
    int failed;           /* 1: no feasible plan, l_d kept */
    double planned_dL[3]; /* the change of linear momentum the plan predicts over the period (kg m/s) */
    double planned_dH[3]; /* the change of angular momentum about the centre of mass (kg m^2/s) */
} sc_control_report;

typedef struct sc_control sc_control;

/* Builds the controller of body s (its model, muscles and options): factors M~. */
int sc_control_create(const sc_softbody *s, const sc_control_opts *o, sc_control **out, sc_err *err);
void sc_control_free(sc_control *c);
/* Plans the next period: writes s->ld (kept when no plan is feasible: report->failed). An
 * anchored objective's anchor is taken at its window's first plan (the first with from <= t) and
 * is the only state the controller keeps between plans: it is taken anew when the body's time is
 * before it (a body restored from an earlier snapshot), but kept for a body restored to a later
 * time within its window, so muscle-sample (which restores snapshots) refuses anchored objectives. */
int sc_control_plan(sc_control *c, sc_softbody *s, sc_control_report *report, sc_err *err);

#endif

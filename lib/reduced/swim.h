/* Swimming by open-loop DMP control of a reduced body in fluid ([P17] 5 and 6's fish swim, by
 * [P17] Table 1's "L-BFGS alone" baseline): the weights (and the period) of a periodic DMP
 * (dmp.h) driving the K modal control forces are found by L-BFGS (optim/lbfgs.h) on an
 * objective measured by forward simulation of the reduced body (body.h) from rest.
 *
 * Objective, the terms of [P17] 5 that apply to open-loop swimming, means over the steps after a
 * warm-up (the body starts at rest; the DMP's first periods are a start, not the gait):
 *   speed   ([P17] eq. 11):  |v - v* d|^2 / v*^2   (v the centre of mass's velocity, d the unit
 *                            direction, v* the target speed; 1 for a body at rest)
 *   balance ([P17] eq. 12):  |R a - a|^2            (a a unit body axis kept fixed in the world)
 *   effort  ([P17] 4.3.2's Tikhonov term on u):  sum_k (u_k / s_k)^2, with s_k = lambda_k sqrt(M) l
 *                            the modal force that bends mode k statically by l = a tenth of the body's
 *                            largest extent: unit-free and alike for every mode
 * each times its weight. The physics violation term of [P17] 4.1.1 is zero by construction: the
 * trajectory is not a free variable but the forward simulation of the controls (single shooting),
 * so it satisfies the reduced equations of motion at every step; so are the environment-force
 * terms (the drag is computed, not optimised), and no contact is involved.
 *
 * Variables: x[k N + i] = w_ki / s_k (the weights in units of s_k), and, with a free period,
 * x[K N] = log(T / T0). Gradient by central differences of forward simulations (2 n + 1 of them,
 * step 1e-4 in x) spread over threads: each thread owns a state and a DMP and runs a fixed share
 * of the evaluations, each result goes to its own slot, and the gradient is assembled in index
 * order, so any thread count gives the same bits. */
#ifndef SC_REDUCED_SWIM_H
#define SC_REDUCED_SWIM_H
#include "model/model.h"
#include "muscle/softbody.h"
#include "optim/lbfgs.h"
#include "reduced/body.h"
#include "reduced/dmp.h"

#define SC_SWIM_MAX_THREADS 64

typedef struct sc_swim_objective {
    double duration;       /* s simulated per evaluation */
    double warmup;         /* s at the start not scored */
    double direction[3];   /* unit: d */
    double target_speed;   /* m/s: v* > 0 */
    double speed_weight;   /* 1 */
    double effort_weight;  /* 1 */
    double balance_weight; /* 1 */
    double balance_axis[3];
} sc_swim_objective;

typedef struct sc_swim_terms {
    double total, speed, effort, balance; /* weighted: total = speed + effort + balance */
    double achieved;                      /* m/s: the mean velocity along d after the warm-up (displacement / time) */
    double drift;                         /* m/s: the mean velocity across d after the warm-up */
    double control_rms;                   /* N/sqrt(kg): the RMS modal force over the modes and the scored steps */
} sc_swim_terms;

/* A record of a run, every `every` steps (frames at steps 0, every, 2 every, ...). */
typedef struct sc_swim_trace {
    int nframes, cap, nmodes;
    double *time;    /* [F] s */
    double *com;     /* [F x 3] m */
    double *vel;     /* [F x 3] m/s */
    double *rot;     /* [F x 4] the frame's (full FEM: the best-fit) orientation, w x y z */
    double *q;       /* [F x K] modal coordinates (full FEM: the nodes projected on the modes) */
    double *control; /* [F x K] N/sqrt(kg) */
} sc_swim_trace;

int sc_swim_trace_create(int nframes, int nmodes, sc_swim_trace *t, sc_err *err);
void sc_swim_trace_free(sc_swim_trace *t);

typedef struct sc_swim_problem {
    const sc_reduced_model *rm;
    sc_swim_objective obj;
    int kind, nbasis; /* the DMP's */
    double period0;   /* s: T0 */
    int free_period;  /* 1: the period is a variable */
    int nvars;        /* K N (+ 1) */
    int threads;      /* 1..SC_SWIM_MAX_THREADS */
    double fd_step;   /* in x */
    double *scale;    /* [K] s_k (N/sqrt(kg)) */
    double length;    /* m: l */
    long nsteps, warmup_steps;
    /* per thread: a state, a DMP, a result slot array shared by index */
    sc_reduced_state *states;
    sc_dmp *dmps;
    double *fd_values; /* [2 nvars + 1] */
    double *fd_points; /* [threads x nvars] */
    long evaluations;  /* forward simulations run */
} sc_swim_problem;

/* A problem for reduced model rm (borrowed). SC_EINPUT for bad objective values (duration <=
 * warm-up, v* <= 0, a zero direction or axis, negative weights), threads out of range. */
int sc_swim_problem_create(const sc_reduced_model *rm, const sc_swim_objective *obj, int kind, int nbasis, double period0, int free_period,
                           int threads, sc_swim_problem *p, sc_err *err);
void sc_swim_problem_free(sc_swim_problem *p);
/* x's DMP: weights w = s_k x and period T0 exp(x[K N]) into d (made by sc_dmp_create with p's sizes). */
void sc_swim_to_dmp(const sc_swim_problem *p, const double *x, sc_dmp *d);
/* x from a DMP (the inverse of sc_swim_to_dmp). */
void sc_swim_from_dmp(const sc_swim_problem *p, const sc_dmp *d, double *x);
/* Small random weights (+-amplitude in x, from the seed's stream) and the period T0 ([P17] 5.3
 * starts from small random weights). */
void sc_swim_initial_guess(const sc_swim_problem *p, unsigned long seed, double amplitude, double *x);

/* The objective of the controller d by one forward run of the reduced body from rest in state s
 * (one of p's states or the caller's); trace may be NULL, else recorded every `every` steps
 * (its capacity must hold nsteps / every + 1 frames). SC_ENUMERIC when the body blows up. */
int sc_swim_simulate(const sc_swim_problem *p, sc_reduced_state *s, const sc_dmp *d, sc_swim_terms *terms, sc_swim_trace *trace, int every,
                     sc_err *err);
/* f(x) and its central-difference gradient g (may be NULL: f only) over p's threads. */
int sc_swim_objective_gradient(sc_swim_problem *p, const double *x, double *f, double *g, sc_err *err);

typedef struct sc_swim_history {
    int n, cap;
    double *objective, *achieved, *seconds; /* per accepted iteration, the start first */
} sc_swim_history;

void sc_swim_history_free(sc_swim_history *h);
/* Minimises from x (overwritten by the optimum) with L-BFGS; history (may be NULL) gets the start
   and every accepted iteration. */
int sc_swim_optimise(sc_swim_problem *p, const sc_lbfgs_opts *o, double *x, sc_swim_history *history, sc_lbfgs_result *r, sc_err *err);

/* The DMP replayed open loop in the full FEM (muscle/softbody, options o: its fluid, no contact
 * needed) from rest: the modal forces become the nodal forces f = M R Phi u, R the body's
 * best-fit rotation (sc_softbody_orientation) at each step. M Phi u is the force whose
 * projection on the kept modes is u (Phi^T M Phi = I) and on every other mode zero
 * (M-orthogonality): it does work only on the controlled modes, has no net force (sum m_i
 * Phi_i = 0) and no net torque about the rest centre of mass; rotated with the body it stays an
 * internal force. Scored with p's objective (terms, achieved speed, drift) and recorded in trace
 * every `every` steps of o->dt (the orientation is the best-fit one, q the nodes projected on the
 * modes). The FEM step is o->dt; duration is p's. */
int sc_swim_replay_full(const sc_swim_problem *p, const sc_model *m, const sc_softbody_opts *o, const sc_dmp *d, sc_swim_terms *terms,
                        sc_swim_trace *trace, int every, sc_err *err);

#endif

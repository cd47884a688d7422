/* A run of a boneless body ([T12] 6): the soft body (softbody.h), the controller (control.h)
 * planning every period, and external forces (a push at the head, a drag) switched on and off
 * by time. A tool drives it step by step and records what it wants between steps, as
 * mj_step's callers do; the run keeps the statistics a report needs. */
#ifndef SC_MUSCLE_RUN_H
#define SC_MUSCLE_RUN_H
#include "muscle/control.h"

/* A force (N, world frame) shared equally by a node set for from <= t < to; with ramp, it grows
   linearly from 0 at `from` to `force` at `to` ([T12] 7's ever harder drag on the F). */
typedef struct sc_node_force {
    double from, to;
    double force[3];
    int ramp;
    int nnodes;
    int *nodes;
} sc_node_force;

typedef enum { SC_RUN_PASSIVE = 0, SC_RUN_QP = 1, SC_RUN_QPCC = 2 } sc_run_solver;

typedef struct sc_muscle_run_opts {
    sc_softbody_opts body;
    sc_control_opts control;
    int solver; /* sc_run_solver: no control, the static-contact QP, QPCC */
    int nforces;
    sc_node_force *forces;
} sc_muscle_run_opts;

typedef struct sc_muscle_run_stats {
    long plans, failed_plans, qps; /* plans made, plans with no feasible solution, QPs solved */
    double plan_s;                 /* wall time in plans */
    double max_volume_change;      /* max |V / V0 - 1| of the whole body over the sampled states */
    double min_det, max_det;       /* the extreme tet volume ratios det F over the sampled states */
} sc_muscle_run_stats;

typedef struct sc_muscle_run {
    sc_softbody *s;
    sc_control *c; /* NULL when passive */
    const sc_muscle_run_opts *o;
    int plan_every;           /* steps per control period */
    sc_control_report report; /* of the last plan */
    double push[3];           /* the external force applied in the last step (N) */
    sc_muscle_run_stats stats;
} sc_muscle_run;

/* The run of model m with muscles mu (the options are borrowed, not copied). */
int sc_muscle_run_create(const sc_model *m, const sc_muscles *mu, const sc_muscle_run_opts *o, sc_muscle_run *r, sc_err *err);
void sc_muscle_run_free(sc_muscle_run *r);
/* One step: a plan when a period begins, the external forces of the step's time, the body's step. */
int sc_muscle_run_step(sc_muscle_run *r, sc_err *err);
/* The body's diagnostics, folded into the volume statistics (call at each recorded frame). */
void sc_muscle_run_sample(sc_muscle_run *r, sc_softbody_diag *d);

#endif

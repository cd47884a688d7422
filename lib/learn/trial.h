/* Trials of a policy: closed- or open-loop runs from its start state, judged (falls, tracking,
 * deviation from the cycle), and the evaluation every learned policy gets: pushes of several
 * magnitudes, directions and phases, and the flesh stiffness it still walks with. */
#ifndef SC_TRIAL_H
#define SC_TRIAL_H
#include "learn/learning.h"

/* One run of a policy from its start state until `steps`, feedback on or off, with an optional
 * push (a world force on push_bone from push_step for push_len steps, direction push_dir: 0 front,
 * 1 back, 2 left, 3 right in the heading frame when it starts). */
typedef struct sc_policy_trial {
    const sc_model *m;
    const sc_sim_opts *o;
    const sc_policy *p;
    const sc_control_dofs *dofs;
    const sc_features *f;
    int feedback;
    long steps;
    double max_tilt;
    int push_bone;
    long push_step, push_len;
    double push_force; /* N; 0: none */
    int push_dir;
} sc_policy_trial;
typedef struct sc_trial_result {
    double survived;    /* s: until the fall, else the run's length */
    double joint_error; /* rad, RMS against the cycle's reference */
    double deviation;   /* mean over the fragments started of sum ((s - s_bar) / scale)^2 over root pitch and
                                    roll and the centre of mass's horizontal velocity: how far off the cycle it strays */
    double turned;      /* rad, the heading's change against the cycle's own, from the first fragment's start to the last's */
} sc_trial_result;
int sc_policy_trial_run(const sc_policy_trial *t, sc_trial_result *r, sc_err *err);
/* Survival and joint error of a policy from its start state over `seconds` (feedback on or off;
 * stiffness factor on the model's Young's modulus, 1: as is). */
int sc_policy_run(const sc_model *m, const sc_sim_opts *o, const sc_policy *p, const sc_control_dofs *dofs, int feedback, double seconds,
                  double max_tilt, double *survived, double *joint_error, sc_err *err);

/* The evaluation of a policy (pushes, stiffness, survival), spread over the ranks. */
int sc_feedback_evaluate(const sc_feedback_run *run, const sc_policy *p, sc_evaluation *e, sc_err *err);

#endif

/* Trials of a policy: closed- or open-loop runs from its start state, judged (falls, tracking,
 * deviation from the cycle), and the evaluation every learned policy gets: pushes of several
 * magnitudes, directions and phases, and the flesh stiffness it still walks with. */
#ifndef SC_TRIAL_H
#define SC_TRIAL_H
#include "learn/learning.h"

/* One run of a policy from its start state until `steps`, feedback on or off, with an optional
 * push (a world force on push_bone from push_step for push_len steps, direction push_dir: 0 front,
 * 1 back, 2 left, 3 right in the heading frame when it starts). */
/* A run's transitions, one per fragment completed before its end or fall (fit: model's rows):
 * the fragment, the features at its start, its actions, the features at its end. */
typedef struct sc_transition_log {
    int nact, cap, n;
    double *rows; /* [cap * SC_TRANSITION_WIDTH(nact)] */
} sc_transition_log;
#define SC_TRANSITION_WIDTH(nact) (1 + 2 * SC_FEATURES + (nact))

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
    const double *explore; /* [nact] rad or NULL: exploration of the actions (sc_policy_controller) */
    uint64_t explore_seed;
    sc_transition_log *log; /* NULL, or filled with the run's transitions */
} sc_policy_trial;
typedef struct sc_trial_result {
    int fell;           /* it fell (or the simulation failed) before the run's end */
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

/* The evaluation's pushes: the step of phase k of n of the second cycle (simulate's `cycle: 1,
 * phase: k / n`), and the length of a pushed run: the whole test (`full` steps), longer when
 * the push ends later than `after` cycles before its end. */
long sc_eval_push_step(long cycle_steps, int phase, int nphase);
long sc_eval_push_steps(long full, long push_step, long push_len, int after_cycles, long cycle_steps);

/* The evaluation of a policy (pushes, stiffness, survival), spread over the ranks; a push is
 * survived when the character does not fall before its run's end. */
int sc_feedback_evaluate(const sc_feedback_run *run, const sc_policy *p, sc_evaluation *e, sc_err *err);

#endif

/* learn-feedback: linear feedback policies (control/policy.h) for a gait cycle, learned by guided
 * learning (Liu, van de Panne, Yin 2016): starting from the open-loop cycle controller found by
 * sample-openloop, every iteration runs the sampler over the cycle repeated `cycles` times with
 * each sample's offsets centred on the current policy's output for its start state, collects the
 * (features, action offsets) of every segment's elites, and refits each fragment's affine law by
 * ridge regression on all the pairs gathered so far. The policy that keeps the character going
 * longest on closed loop (then tracks best) is kept. Then it is evaluated: pushes of several
 * magnitudes, directions and cycle phases, open loop (every M zero) and closed loop alike, and the
 * range of flesh stiffness over which it still completes its run. */
#ifndef SC_FEEDBACK_H
#define SC_FEEDBACK_H
#include "control/cycle.h"
#include "control/policy.h"
#include "control/samcon.h"
#include "io/h5.h"

#define SC_POLICY_SCHEMA "softcon.policy/1"
#define SC_MAX_EVAL 16

typedef struct sc_feedback_config {
    int iterations, cycles, samples, elites;
    double noise;               /* guided samples' boxes, relative to sampling.boxes */
    int explore_residual;       /* 1: after the first fit, each DoF's box from the spread of the pairs about
                                   the policy (sqrt(3) x its RMS residual: a uniform of that spread), within
                                   [0.1, 1] x noise x its sampling box; 0: noise x the sampling boxes throughout */
    double ridge;               /* lambda per sample, on standardized features */
    double max_action;          /* rad */
    int nact;
    int act[SC_MAX_ACTIONS];    /* control DoFs the policy sets */
    int all_data;               /* 1: regress on every iteration's pairs, 0: the last iteration's */
    int path_pairs;             /* 1: only the elites on paths that went on to the last segment reached
                                   (the good paths); 0: every segment's elites, dead ends too */
    /* evaluation */
    double eval_seconds;        /* closed-loop survival test length (s) */
    double max_tilt;            /* rad: a fall */
    int npush, ndir, nphase;
    double push[SC_MAX_EVAL];   /* N */
    double push_duration;       /* s */
    int push_bone;
    int after_cycles;           /* success: still going this many cycles after the push */
    int nstiff;
    double stiffness[SC_MAX_EVAL]; /* Young's modulus factors */
} sc_feedback_config;

/* Reads `feedback:` (configs/run.yaml documents it) for the model's control DoFs. */
struct sc_cfg;
int sc_feedback_read_config(struct sc_cfg *cfg, const sc_model *m, const sc_control_dofs *dofs, sc_feedback_config *c, sc_err *err);

/* What learn-feedback reads from an openloop.h5 of a gait cycle. */
typedef struct sc_openloop_cycle {
    sc_cycle cycle;
    int fragments, base;        /* base: SC_BASE_ID or SC_BASE_REFERENCE */
    int nseg;
    long *steps;                /* [nseg] */
    double *offsets;            /* [nseg * ndof] */
    double start_root[3], start_vel[3], *start_quat, *start_w;
    char reference[4096];       /* the reference.h5 it tracked (resolved), checked by hash */
    uint64_t reference_hash;
    uint64_t hash;              /* of the controller (segments, offsets), for the policy file */
} sc_openloop_cycle;
/* SC_EINPUT (naming the HDF5 path) when the file is not an openloop.h5 of a cycle for this
 * character's control DoFs. */
int sc_openloop_cycle_read(const char *path, const sc_model *m, const sc_control_dofs *dofs, sc_openloop_cycle *o, sc_err *err);
void sc_openloop_cycle_free(sc_openloop_cycle *o);

/* The open-loop policy of a cycle controller: per fragment the mean offsets over the cycles, the
 * median steps; every M zero. */
int sc_policy_from_openloop(const sc_openloop_cycle *o, const sc_reference *ref, const sc_model *m, const sc_control_dofs *dofs,
                            const sc_feedback_config *c, sc_policy *p, sc_err *err);

typedef struct sc_learning_iteration {
    double survived_s;          /* closed loop, until the fall or eval_seconds */
    double joint_error;         /* rad, RMS over the survived time */
    long samples;
    long pairs;                 /* regression pairs used */
    double residual;            /* RMS regression residual of the actions (rad) */
} sc_learning_iteration;

typedef struct sc_evaluation {
    double openloop_survived_s, closedloop_survived_s;
    double openloop_joint_error, closedloop_joint_error;
    /* pushes: [magnitude][direction][phase], 1 = still going `after` cycles later */
    unsigned char push_open[SC_MAX_EVAL][4][SC_MAX_EVAL], push_closed[SC_MAX_EVAL][4][SC_MAX_EVAL];
    double stiff_open_s[SC_MAX_EVAL], stiff_closed_s[SC_MAX_EVAL]; /* survived (s) at each factor */
} sc_evaluation;

typedef struct sc_feedback_run {
    const sc_model *m;
    const sc_sim_opts *sim_opts;
    const sc_reference *ref;     /* the original reference; the cycle is repeated from it */
    const sc_openloop_cycle *ol;
    const sc_control_dofs *dofs;
    const sc_samcon_config *sampling;
    const sc_feedback_config *cfg;
    uint64_t seed, run_hash;
    const char *checkpoint;
    int resume;
    int (*stop)(void);
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
    struct sc_par *par;
} sc_feedback_run;

typedef struct sc_feedback_result {
    sc_policy policy;            /* the best */
    int best_iteration;
    int niter;
    sc_learning_iteration iter[64];
    sc_evaluation eval;
    double wall_seconds;
    long samples;
} sc_feedback_result;

int sc_feedback_learn(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err);
/* The evaluation of a policy (pushes, stiffness, survival), spread over the ranks. */
int sc_feedback_evaluate(const sc_feedback_run *run, const sc_policy *p, sc_evaluation *e, sc_err *err);
/* Survival and joint error of a policy from its start state over `seconds` (feedback on or off;
 * stiffness factor on the model's Young's modulus, 1: as is). */
int sc_policy_run(const sc_model *m, const sc_sim_opts *o, const sc_policy *p, const sc_control_dofs *dofs, int feedback, double seconds,
                  double max_tilt, double *survived, double *joint_error, sc_err *err);

/* policy.h5 */
int sc_policy_write(sc_h5 *f, const sc_policy *p, const sc_model *m, const sc_control_dofs *dofs, sc_err *err);
int sc_feedback_write(sc_h5 *f, const sc_feedback_run *run, const sc_feedback_result *r, sc_err *err);
/* SC_EINPUT naming the HDF5 path for a policy made for another character or controller (bone,
 * DoF or feature names differ) or with non-finite values. */
int sc_policy_read(const char *path, const sc_model *m, const sc_control_dofs *dofs, sc_policy *p, sc_err *err);

#endif

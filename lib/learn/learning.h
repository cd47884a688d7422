/* The types learn-feedback's stages share (learning, trials, evaluation, policy.h5).
 *
 * learn-feedback: linear feedback policies (learn/policy.h) for a gait cycle, learned by guided
 * sampling (Liu, van de Panne, Yin 2016): starting from the open-loop cycle controller found by
 * sample-openloop, every iteration runs the sampler over the cycle repeated `cycles` times with
 * each sample's offsets centred on the current policy's output for its start state. Each
 * fragment's law is then refitted on all the data gathered so far, in one of two ways:
 * fit: model (the default) fits each fragment's map from the features at its start to those at
 * its end on every sample (actions and start states vary, so the map is well determined) and
 * takes the gains of the periodic linear-quadratic regulator of those maps; fit: actions
 * regresses the elites' actions on their start features (Liu et al. 2016's fit). The guided runs
 * may sample bodies of other flesh stiffness in turn (`stiffness`), and every iteration's policy is
 * tested closed loop at each of them (with several action costs, the gains of each, keeping those
 * that go furthest); the policy that keeps the character going longest on average (then tracks
 * best) is kept. Then it is
 * evaluated: pushes of several magnitudes, directions and cycle phases, open loop (every M zero)
 * and closed loop alike, and the range of flesh stiffness over which it still completes its run. */
#ifndef SC_LEARNING_H
#define SC_LEARNING_H
#include <stdint.h>
#include "learn/policy.h"
#include "sampling/samcon.h"
#include "sampling/openloop.h"

#define SC_MAX_EVAL        16
#define SC_MAX_GENERATIONS 500
#define SC_MAX_COSTS       8
#define SC_MAX_TRIALS      16

enum { SC_LEARN_GUIDED, SC_LEARN_SEARCH };

/* method: search (Liu et al. 2012's optimization of M): the gains of the law are shared by every
 * fragment per role (a DoF of the stance or the swing leg, or a DoF of the trunk), one per role and
 * chosen feature, plus a bias per role; they are searched by CMA-ES (diagonal covariance, Ros and
 * Hansen 2008), each candidate scored by closed-loop runs of `seconds` from the start state, one
 * unpushed and the others pushed. */
typedef struct sc_search_config {
    int generations, population; /* population 0: 4 + 3 ln(parameters) */
    double sigma;                /* initial step, in units of each feature's scale (sc_feature_scale) */
    double seconds;              /* each scored run */
    int rollouts;                /* runs per candidate: the first unpushed, the others pushed */
    double push;                 /* N, for push_duration, on push_bone; directions and phases taken in turn */
    int nfeat;
    int feat[SC_FEATURES]; /* the features the gains read */
    int bias;              /* 1: a constant offset per role too */
} sc_search_config;

typedef struct sc_feedback_config {
    int method; /* SC_LEARN_GUIDED | SC_LEARN_SEARCH */
    sc_search_config search;
    int iterations, cycles, samples, elites;
    double noise;         /* guided samples' boxes, relative to sampling.boxes */
    int explore_residual; /* 1: after the first fit, each DoF's box from the spread of the pairs about
                                   the policy (sqrt(3) x its RMS residual: a uniform of that spread), within
                                   [0.1, 1] x noise x its sampling box; 0: noise x the sampling boxes throughout */
    double ridge;         /* lambda per sample, on standardized features */
    double max_action;    /* rad */
    int nact;
    int act[SC_MAX_ACTIONS]; /* control DoFs the policy sets */
    int nlearn_stiff;
    double learn_stiffness[SC_MAX_EVAL]; /* Young's modulus factors of the guided runs, one per iteration in turn (the
                                   data of every iteration are pooled): a policy for a range of flesh stiffness */
    int all_data;                        /* 1: regress on every iteration's pairs, 0: the last iteration's */
    int path_pairs;                      /* 1: only the elites on paths that went on to the last segment reached
                                   (the good paths); 0: every segment's elites, dead ends too */
    int fit_model;                       /* 0 (fit: actions): M regressed on the elites' actions; 1 (fit: model): each
                                   fragment's map from start to end features fitted on every sample, then M
                                   by a periodic linear-quadratic regulator on those maps */
    int ncost;
    double action_cost[SC_MAX_COSTS];         /* model: R = action_cost / box^2 per action DoF, against Q = 1 / scale^2; with
                                   several, each iteration keeps the one whose gains go furthest on closed loop */
    int horizon;                              /* model: cycles of the Riccati recursion */
    int bootstraps;                           /* model: resamples of the transitions whose maps give candidate gains too */
    int ensemble;                             /* model: the regulator of all those maps together gives candidate gains too */
    double heading_scale;                     /* model: rad, the heading's scale in Q (its weight 1 / scale^2) */
    int rollouts, rounds;                     /* closed-loop data: rounds of `rollouts` explored runs of the policy, each
                                   followed by the maps refitted and the gains chosen again (guided.c) */
    int trials;                               /* closed-loop runs per candidate and learning stiffness: the first as is, ... */
    double trial_noise;                       /* ... the others under motor noise of this b (N m, sc_motor_noise_opts) */
    unsigned char model_feature[SC_FEATURES]; /* model: 1 for a feature in the regulated state */
    /* evaluation */
    double eval_seconds; /* closed-loop survival test length (s) */
    double max_tilt;     /* rad: a fall */
    int npush, ndir, nphase;
    double push[SC_MAX_EVAL]; /* N */
    double push_duration;     /* s */
    int push_bone;
    int after_cycles; /* success: still going this many cycles after the push */
    int nstiff;
    double stiffness[SC_MAX_EVAL]; /* Young's modulus factors */
} sc_feedback_config;

/* One guided-learning iteration, or one generation of the search (its best candidate). */
typedef struct sc_learning_iteration {
    double survived_s;                     /* closed loop, until the fall or eval_seconds (search: mean over the candidate's runs;
                                   guided: the mean over learn_stiffness) */
    double survived_at[SC_MAX_EVAL];       /* guided: at each factor of learn_stiffness */
    double action_cost;                    /* fit: model: the one chosen */
    long maps_kept;                        /* fit: model: whose maps gave the kept gains (0 all, then resamples, ensemble) */
    double cost_survived[SC_MAX_COSTS];    /* fit: model: the mean survival over learn_stiffness of each action_cost's gains
                                              (with bootstraps: of its best variant) */
    double cost_joint_error[SC_MAX_COSTS]; /* ... and their mean joint error (rad) */
    double joint_error;                    /* rad, RMS over the survived time */
    long samples;                          /* samples (guided) or runs (search) simulated */
    long pairs;                            /* regression pairs used (guided) */
    double residual;                       /* RMS regression residual of the actions (rad) (guided) */
    double model_error;                    /* fit: model: RMS one-step prediction error of the features, in their scales */
    double score, mean_score, sigma;       /* search: the best and the mean candidate's score, the step size */
} sc_learning_iteration;

typedef struct sc_evaluation {
    double openloop_survived_s, closedloop_survived_s;
    double openloop_joint_error, closedloop_joint_error;
    double openloop_turned, closedloop_turned; /* rad, the heading's change against the cycle's (sc_trial_result) */
    /* pushes: [magnitude][direction][phase], 1 = never fell over the pushed run, and the time
       before the fall (s; the run's length when none); per phase the push's start and the
       pushed run's length (s) */
    unsigned char push_open[SC_MAX_EVAL][4][SC_MAX_EVAL], push_closed[SC_MAX_EVAL][4][SC_MAX_EVAL];
    double push_open_s[SC_MAX_EVAL][4][SC_MAX_EVAL], push_closed_s[SC_MAX_EVAL][4][SC_MAX_EVAL];
    double push_start_s[SC_MAX_EVAL], push_test_s[SC_MAX_EVAL];
    double stiff_open_s[SC_MAX_EVAL], stiff_closed_s[SC_MAX_EVAL]; /* survived (s) at each factor */
} sc_evaluation;

typedef struct sc_feedback_run {
    const sc_model *m;
    const sc_sim_opts *sim_opts;
    const sc_reference *ref; /* the original reference; the cycle is repeated from it */
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
    sc_policy policy; /* the best */
    int best_iteration;
    int niter;
    sc_learning_iteration iter[SC_MAX_GENERATIONS];
    /* search: the roles and their gains (theta: [nroles][nfeat + bias], in feature-scale units) */
    int nroles;
    char role[SC_MAX_ACTIONS][48];
    double theta[SC_MAX_ACTIONS * (SC_FEATURES + 1)];
    int *role_of; /* [nfrag * nact] the role of each fragment's action */
    sc_evaluation eval;
    double wall_seconds;
    long samples;
} sc_feedback_result;
void sc_feedback_result_free(sc_feedback_result *r);

/* The history's part of a checkpoint (learn/guided.c, learn/gain_search.c): `n` iterations,
 * field by field in the machine's layout (core/blob.h). */
struct sc_blob_writer;
struct sc_blob_reader;
void sc_learning_iterations_put(struct sc_blob_writer *w, const sc_learning_iteration *it, int n);
void sc_learning_iterations_get(struct sc_blob_reader *r, sc_learning_iteration *it, int n);
/* 1 when every value of the n iterations read back is one a run can make (finite, counts >= 0). */
int sc_learning_iterations_ok(const sc_learning_iteration *it, int n);

#endif

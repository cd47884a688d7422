/* A rollout advances an sc_sim under a target source and the scenario's perturbations until a
 * time: the loop simulate runs once and the sampler runs millions of times from restored
 * snapshots. No I/O and no allocation; the optional per-step hook writes output or stops the
 * run (a fall, a failed sample). */
#ifndef SC_ROLLOUT_H
#define SC_ROLLOUT_H
#include "sampling/scenario.h"

/* PD targets (nb local rotations, sc_skeleton's convention) for the simulation's current
 * state: a function of s->t or s->step, or of the state (feedback; such a source keeps what it
 * decided in ctx, which is why ctx is not const). A source that also drives the joints beyond
 * their targets sets `actuate`, called right after eval: it sets the step's other inputs
 * (sc_sim_set_joint_torques, sc_sim_set_gain_scale) from what eval decided; NULL: none. */
typedef struct sc_target_source {
    void (*eval)(void *ctx, const sc_sim *s, sc_quat *out);
    void *ctx;
    void (*actuate)(void *ctx, sc_sim *s);
} sc_target_source;

/* Called once per visited state, after its targets and perturbations are set and before it
 * is stepped (and once for the final state): push_total is the external push in force (N).
 * A non-zero return stops the rollout and is returned in sc_rollout_result.stopped. */
typedef int (*sc_rollout_hook)(void *ctx, const sc_sim *s, const sc_quat *targets, const double push_total[3]);

typedef struct sc_rollout_result {
    long steps;  /* steps taken */
    int stopped; /* the hook's non-zero return, else 0 */
} sc_rollout_result;

/* Steps s until s->step reaches end_step. targets (nb entries) is the caller's scratch (no
 * allocation here). pert and hook may be NULL. SC_ENUMERIC from the step (s is then in the
 * failed state; the error names the step and quantity). */
int sc_rollout(sc_sim *s, sc_target_source src, const sc_perturbations *pert, long end_step, sc_rollout_hook hook, void *hook_ctx, sc_quat *targets,
               sc_rollout_result *res, sc_err *err);

/* The target source of an sc_controller (hold, keyframes, trajectory) evaluated at s->t. */
struct sc_controller;
sc_target_source sc_controller_source(const struct sc_controller *c);

#endif

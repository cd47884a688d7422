/* policy.h5 (schema softcon.policy/2): the one writer and reader of learn-feedback's output, the
 * feedback policy simulate --policy plays. Every dataset carries its units and a description.
 *
 *   / attributes                     provenance (softcon_version, schema, created_by, created_at,
 *                                    host, config), seed, character, fem_kernel, openloop and
 *                                    openloop_hash (the controller learned from), status, and the
 *                                    character's hash (sc_character_hash_write)
 *   /bones/names [nb]                the character's bones, the order of every per-bone dataset
 *   /policy/features, feature_units [18]
 *                                    the state s, in the root's heading frame (learn/policy.h)
 *   /policy/actions [A], action_dof [A]
 *                                    the control DoFs the policy sets, their index in dof_names
 *   /policy/dof_names [D]            every control DoF: bone.x|y|z of a ball joint, or a hinge
 *   /policy/steps [F]                simulated steps of each fragment
 *   /policy/ref_t0, ref_t1 [F] s     each fragment's span of the cycle
 *   /policy/offsets [F,D] rad        open-loop PD target offsets of each fragment
 *   /policy/s_bar [F,18], a_bar [F,A] rad, M [F,A,18]
 *                                    the law a = a_bar + M (s - s_bar), clamped to +-max_action
 *   /policy attributes               max_action_rad, period_s, fragments, mean_root_height_m
 *   /cycle/time [NB] s, targets [NB,nb,4], reference_quat [NB,nb,4]
 *                                    the cycle's base PD targets and the reference's rotations
 *   /start/root_pos, root_vel [3], local_quat [nb,4], local_ang_vel [nb,3]
 *                                    the state the controller starts from
 *   /learning                        the history: guided, one row per iteration (survived,
 *                                    survived_at, joint_error, samples, pairs, residual; fit: model
 *                                    also action_costs, action_cost, cost_survived,
 *                                    cost_joint_error, regulated_features, model_error,
 *                                    feature_scale); search, one row per generation (score,
 *                                    mean_score, sigma, survived, joint_error, runs) and the gains
 *                                    found (roles, role_of, gain_inputs, gains, feature_scale);
 *                                    attributes: method, the chosen iteration, wall_seconds,
 *                                    samples or runs, ranks
 *   /evaluation                      pushes (push_magnitude, push_direction, push_success_* [M,4,P],
 *                                    push_success_rate_*, largest_push_*) and stiffness
 *                                    (stiffness_factor, youngs_modulus, stiffness_survived_*),
 *                                    open loop (M = 0) and closed loop; attributes: the survival
 *                                    test's times and joint errors, test_seconds, the push's
 *                                    duration, bone, phases, cycle, frame and cycles after it,
 *                                    the fall criterion (max_tilt_deg, fall_root_height_m); per
 *                                    phase push_phase, push_start s, push_test_length s; per
 *                                    push push_survived_* [M,4,P] s */
#ifndef SC_STORE_POLICY_H
#define SC_STORE_POLICY_H
#include "io/h5.h"
#include "learn/learning.h"

#define SC_POLICY_SCHEMA "softcon.policy/2"

/* /bones, /policy, /cycle, /start and the character's hash. */
int sc_policy_write(sc_h5 *f, const sc_policy *p, const sc_model *m, const sc_control_dofs *dofs, sc_err *err);
/* /learning and /evaluation. */
int sc_feedback_write(sc_h5 *f, const sc_feedback_run *run, const sc_feedback_result *r, sc_err *err);

/* What learn-feedback ran on, for policy.h5's root attributes. */
typedef struct sc_policy_file_info {
    int argc;
    char *const *argv;
    const char *resolved_config;
    const char *character, *openloop; /* the input paths */
    int ranks, threads;               /* threads: of each rank */
    const double *timeline;           /* [2][ranks][SC_PAR_PHASES] s: learning (from the start), evaluation; NULL: none */
} sc_policy_file_info;
/* policy.h5 whole at path: provenance, root attributes, the policy of r (for the character as
 * loaded, before the scenario's changes), its learning and evaluation; nothing is left at path
 * on an error. */
int sc_policy_file_write(const char *path, const sc_policy_file_info *info, const sc_model *character, const sc_feedback_run *run,
                         const sc_feedback_result *r, sc_err *err);

/* SC_EINPUT naming the HDF5 path for a policy made for another character or controller (bone,
 * DoF or feature names differ) or with non-finite values. */
int sc_policy_read(const char *path, const sc_model *m, const sc_control_dofs *dofs, sc_policy *p, sc_err *err);
/* The fall criterion the policy's evaluation judged by: /evaluation's max_tilt_deg (rad; 60 deg
 * for a file written before it was recorded). */
int sc_policy_read_max_tilt(const char *path, double *max_tilt, sc_err *err);
int sc_policy_read_image(const void *data, size_t size, const char *name, const sc_model *m, const sc_control_dofs *dofs, sc_policy *p, sc_err *err);

#endif

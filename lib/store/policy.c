/* policy.h5 (store/policy.h): the one writer and reader of learn-feedback's output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/policy.h"
#include "store/timeline.h"
#include "store/character.h"
#include "store/reference.h"
#include "motion/reference.h"

int sc_policy_write(sc_h5 *f, const sc_policy *p, const sc_model *m, const sc_control_dofs *dofs, sc_err *err)
{
    size_t F = (size_t)p->nfrag, A = (size_t)p->nact, D = (size_t)p->ndof, nb = (size_t)p->nb, NB = (size_t)p->nbase;
    const char *names[SC_SIM_MAX_BONES], *act[SC_MAX_ACTIONS], *dn[SC_MAX_DOFS];
    for (size_t b = 0; b < nb; b++) names[b] = m->bone_name[b];
    for (size_t i = 0; i < A; i++) act[i] = dofs->name[p->act[i]];
    for (size_t d = 0; d < D; d++) dn[d] = dofs->name[d];
    int *steps = malloc(sizeof(int) * F), *adof = malloc(sizeof(int) * (A ? A : 1)), rc;
    if (!steps || !adof) {
        free(steps);
        free(adof);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (size_t j = 0; j < F; j++) steps[j] = (int)p->steps[j];
    for (size_t i = 0; i < A; i++) adof[i] = p->act[i];
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) goto done; \
    } while (0)
    TRY(sc_h5_write_strings(f, "/bones/names", nb, names, "the character's bones, in the order of every per-bone dataset", err));
    TRY(sc_h5_group(f, "/policy", "a = a_bar + M (s - s_bar) per fragment, on the action DoFs; the other DoFs hold the fragment's offsets", err));
    TRY(sc_h5_write_strings(f, "/policy/features", SC_FEATURES, sc_feature_names, "the state s, in the root's heading frame (lib/learn/policy.h)",
                            err));
    TRY(sc_h5_write_strings(f, "/policy/feature_units", SC_FEATURES, sc_feature_units, "units of each feature", err));
    TRY(sc_h5_write_strings(f, "/policy/actions", A, act, "the control DoFs the policy sets (rad)", err));
    TRY(sc_h5_write_i32(f, "/policy/action_dof", 1, &A, adof, "index of each action in /policy/dof_names", err));
    TRY(sc_h5_write_strings(f, "/policy/dof_names", D, dn, "every control DoF: bone.x|y|z of a ball joint, or a hinge", err));
    TRY(sc_h5_write_i32(f, "/policy/steps", 1, &F, steps, "simulated steps of each fragment", err));
    TRY(sc_h5_write_f64(f, "/policy/ref_t0", 1, &F, p->ref_t0, "s", "start of the fragment's span of the cycle", err));
    TRY(sc_h5_write_f64(f, "/policy/ref_t1", 1, &F, p->ref_t1, "s", "end of the span", err));
    TRY(sc_h5_write_f64(f, "/policy/offsets", 2, (size_t[]){F, D}, p->offset, "rad", "open-loop PD target offsets of each fragment", err));
    TRY(sc_h5_write_f64(f, "/policy/s_bar", 2, (size_t[]){F, SC_FEATURES}, p->s_bar, "see feature_units",
                        "the state each fragment's law is centred on", err));
    TRY(sc_h5_write_f64(f, "/policy/a_bar", 2, (size_t[]){F, A}, p->a_bar, "rad", "the actions at s_bar", err));
    TRY(sc_h5_write_f64(f, "/policy/M", 3, (size_t[]){F, A, SC_FEATURES}, p->M, "rad per feature unit", "feedback gains", err));
    TRY(sc_h5_attr_f64(f, "/policy", "max_action_rad", p->max_action, err));
    TRY(sc_h5_attr_f64(f, "/policy", "period_s", p->period, err));
    TRY(sc_h5_attr_i64(f, "/policy", "fragments", p->nfrag, err));
    TRY(sc_h5_attr_f64(f, "/policy", "mean_root_height_m", p->mean_root_height, err));
    TRY(sc_h5_group(f, "/cycle", "the gait cycle's base PD targets and reference poses, from its start", err));
    TRY(sc_h5_write_f64(f, "/cycle/time", 1, &NB, p->base_time, "s", "sample times from the cycle's start", err));
    TRY(sc_h5_write_f64(f, "/cycle/targets", 3, (size_t[]){NB, nb, 4}, p->base_quat, "1", "base PD target local rotations (w, x, y, z)", err));
    TRY(sc_h5_write_f64(f, "/cycle/reference_quat", 3, (size_t[]){NB, nb, 4}, p->ref_quat, "1", "the reference's local rotations", err));
    TRY(sc_h5_group(f, "/start", "the state the controller starts from", err));
    TRY(sc_h5_write_f64(f, "/start/root_pos", 1, (size_t[]){3}, p->start_root, "m", "root bone origin", err));
    TRY(sc_h5_write_f64(f, "/start/root_vel", 1, (size_t[]){3}, p->start_vel, "m/s", "root origin velocity", err));
    TRY(sc_h5_write_f64(f, "/start/local_quat", 2, (size_t[]){nb, 4}, p->start_quat, "1", "local rotations (root: world)", err));
    TRY(sc_h5_write_f64(f, "/start/local_ang_vel", 2, (size_t[]){nb, 3}, p->start_w, "rad/s", "local angular velocities, parent frame", err));
    TRY(sc_character_hash_write(f, sc_model_hash(m), err));
#undef TRY
done:
    free(steps);
    free(adof);
    return rc;
}

/* /learning of guided learning: one row per iteration */
static int write_guided_history(sc_h5 *f, const sc_feedback_config *c, const sc_feedback_result *r, sc_err *err)
{
    size_t N = (size_t)(r->niter ? r->niter : 1);
    double *a = calloc(N * 6, sizeof(double));
    if (!a) return sc_fail(err, SC_EIO, "out of memory");
    for (int i = 0; i < r->niter; i++) {
        const sc_learning_iteration *it = &r->iter[i];
        double v[6] = {it->survived_s, it->joint_error, (double)it->samples, (double)it->pairs, it->residual, it->model_error};
        for (int k = 0; k < 6; k++) a[k * N + i] = v[k];
    }
    int rc;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) goto done; \
    } while (0)
    TRY(sc_h5_group(f, "/learning", "guided learning (Liu et al. 2016): one row per iteration", err));
    TRY(sc_h5_attr_str(f, "/learning", "method",
                       c->fit_model
                           ? "guided learning: sampling centred on the policy's output; each fragment's feature map fitted on every "
                             "sample (ridge regression), the gains by a periodic LQR on those maps"
                           : "guided learning: sampling centred on the policy's output, ridge regression of the elites' actions per fragment",
                       err));
    TRY(sc_h5_attr_str(f, "/learning", "fit", c->fit_model ? "model" : "actions", err));
    if (c->fit_model) {
        const char *names[SC_FEATURES];
        size_t nf = 0;
        for (int k = 0; k < SC_FEATURES; k++)
            if (c->model_feature[k]) names[nf++] = sc_feature_names[k];
        size_t C = (size_t)c->ncost, d2[2] = {N, C};
        double *chosen = calloc(N, sizeof(double)), *cs = calloc(N * C, sizeof(double)), *ce = calloc(N * C, sizeof(double)),
               *maps = calloc(N, sizeof(double));
        if (!chosen || !cs || !ce || !maps) {
            free(maps);
            free(chosen);
            free(cs);
            free(ce);
            rc = sc_fail(err, SC_EIO, "out of memory");
            goto done;
        }
        for (int i = 0; i < r->niter; i++) {
            chosen[i] = r->iter[i].action_cost;
            maps[i] = r->iter[i].maps_kept;
            memcpy(cs + (size_t)i * C, r->iter[i].cost_survived, sizeof(double) * C);
            memcpy(ce + (size_t)i * C, r->iter[i].cost_joint_error, sizeof(double) * C);
        }
        rc = sc_h5_write_f64(f, "/learning/action_costs", 1, &C, c->action_cost, "1", "the candidate action costs (R = cost / box^2)", err);
        if (!rc) rc = sc_h5_write_f64(f, "/learning/action_cost", 1, &N, chosen, "1", "the action cost whose gains each iteration kept", err);
        if (!rc)
            rc = sc_h5_write_f64(f, "/learning/cost_survived", 2, d2, cs, "s",
                                 "closed loop with each candidate's gains: the mean survival over /learning/stiffness (and trials; with "
                                 "bootstraps, each action cost's best variant)",
                                 err);
        if (!rc) rc = sc_h5_write_f64(f, "/learning/cost_joint_error", 2, d2, ce, "rad", "... and their mean RMS joint error", err);
        if (!rc)
            rc = sc_h5_write_f64(f, "/learning/maps_kept", 1, &N, maps, "1",
                                 "whose fitted maps gave the gains each iteration kept: 0 all the transitions, 1 to model.bootstraps "
                                 "a resample, model.bootstraps + 1 the regulator of them all together (model.ensemble)",
                                 err);
        free(maps);
        free(chosen);
        free(cs);
        free(ce);
        if (rc) goto done;
        TRY(sc_h5_attr_i64(f, "/learning", "horizon_cycles", c->horizon, err));
        TRY(sc_h5_write_strings(f, "/learning/regulated_features", nf, names, "the features in the LQR's state (Q = 1 / scale^2)", err));
        TRY(sc_h5_write_f64(f, "/learning/model_error", 1, &N, a + 5 * N, "1",
                            "RMS one-step prediction error of the fitted fragment maps, in feature scales (/learning/feature_scale)", err));
        TRY(sc_h5_write_f64(f, "/learning/feature_scale", 1, (size_t[]){SC_FEATURES}, sc_feature_scale, "see /policy/feature_units",
                            "each feature's scale", err));
    }
    TRY(sc_h5_attr_i64(f, "/learning", "chosen_iteration", r->best_iteration, err));
    TRY(sc_h5_attr_f64(f, "/learning", "wall_seconds", r->wall_seconds, err));
    TRY(sc_h5_attr_i64(f, "/learning", "samples", r->samples, err));
    TRY(sc_h5_write_f64(f, "/learning/survived", 1, &N, a, "s",
                        "closed loop until the fall (or the end of the test); the mean over /learning/stiffness", err));
    {
        size_t S = (size_t)c->nlearn_stiff, d2[2] = {N, S};
        double *at = calloc(N * S, sizeof(double));
        if (!at) {
            rc = sc_fail(err, SC_EIO, "out of memory");
            goto done;
        }
        for (int i = 0; i < r->niter; i++) memcpy(at + (size_t)i * S, r->iter[i].survived_at, sizeof(double) * S);
        rc = sc_h5_write_f64(f, "/learning/stiffness", 1, &S, c->learn_stiffness, "1",
                             "Young's modulus / the character's, of the guided runs: iteration i sampled at factor i mod the count", err);
        if (!rc) rc = sc_h5_write_f64(f, "/learning/survived_at", 2, d2, at, "s", "the closed-loop test at each factor of /learning/stiffness", err);
        free(at);
        if (rc) goto done;
    }
    TRY(sc_h5_write_f64(f, "/learning/joint_error", 1, &N, a + N, "rad", "RMS joint angle error against the cycle's reference", err));
    TRY(sc_h5_write_f64(f, "/learning/samples", 1, &N, a + 2 * N, "1", "samples simulated", err));
    TRY(sc_h5_write_f64(f, "/learning/pairs", 1, &N, a + 3 * N, "1", "(state, action) pairs regressed", err));
    TRY(sc_h5_write_f64(f, "/learning/residual", 1, &N, a + 4 * N, "rad", "RMS residual of the regressed actions", err));
#undef TRY
done:
    free(a);
    return rc;
}

/* /learning of method: search: one row per generation, and the gains found */
static int write_search_history(sc_h5 *f, const sc_feedback_config *c, const sc_feedback_result *r, sc_err *err)
{
    const sc_search_config *sc = &c->search;
    size_t N = (size_t)(r->niter ? r->niter : 1), R = (size_t)r->nroles, G = (size_t)(sc->nfeat + sc->bias);
    double *a = calloc(N * 6, sizeof(double));
    const char *gain[SC_FEATURES + 1], *roles[SC_MAX_ACTIONS];
    if (!a) return sc_fail(err, SC_EIO, "out of memory");
    for (int i = 0; i < r->niter; i++) {
        const sc_learning_iteration *it = &r->iter[i];
        double v[6] = {it->score, it->mean_score, it->sigma, it->survived_s, it->joint_error, (double)it->samples};
        for (int k = 0; k < 6; k++) a[k * N + i] = v[k];
    }
    for (int q = 0; q < sc->nfeat; q++) gain[q] = sc_feature_names[sc->feat[q]];
    if (sc->bias) gain[sc->nfeat] = "bias";
    for (size_t k = 0; k < R; k++) roles[k] = r->role[k];
    int rc;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) goto done; \
    } while (0)
    TRY(sc_h5_group(f, "/learning", "CMA-ES (diagonal covariance) over the shared gains: one row per generation", err));
    TRY(sc_h5_attr_i64(f, "/learning", "candidates", r->niter ? r->iter[0].samples / sc->rollouts : 0, err));
    TRY(sc_h5_attr_i64(f, "/learning", "runs_per_candidate", sc->rollouts, err));
    TRY(sc_h5_attr_f64(f, "/learning", "run_seconds", sc->seconds, err));
    TRY(sc_h5_attr_str(f, "/learning", "method", "search: the feedback gains optimized by CMA-ES on closed-loop runs (Liu et al. 2012)", err));
    TRY(sc_h5_attr_i64(f, "/learning", "chosen_generation", r->best_iteration, err));
    TRY(sc_h5_attr_f64(f, "/learning", "wall_seconds", r->wall_seconds, err));
    TRY(sc_h5_attr_i64(f, "/learning", "runs", r->samples, err));
    TRY(sc_h5_attr_f64(f, "/learning", "push_N", sc->push, err));
    TRY(sc_h5_write_f64(f, "/learning/score", 1, &N, a, "1",
                        "the generation's best candidate: mean over its runs of survived / seconds - 0.1 (1 - exp(-deviation / 4))", err));
    TRY(sc_h5_write_f64(f, "/learning/mean_score", 1, &N, a + N, "1", "the generation's mean score", err));
    TRY(sc_h5_write_f64(f, "/learning/sigma", 1, &N, a + 2 * N, "1", "CMA-ES step size, in feature-scale units", err));
    TRY(sc_h5_write_f64(f, "/learning/survived", 1, &N, a + 3 * N, "s", "the best candidate's runs, mean time until the fall", err));
    TRY(sc_h5_write_f64(f, "/learning/joint_error", 1, &N, a + 4 * N, "rad",
                        "the best candidate's RMS joint angle error against the cycle's reference", err));
    TRY(sc_h5_write_f64(f, "/learning/runs", 1, &N, a + 5 * N, "1", "closed-loop runs simulated", err));
    TRY(sc_h5_write_strings(f, "/learning/roles", R, roles, "stance_X / swing_X: the leg DoF X of the fragment's stance or swing side; else the DoF",
                            err));
    TRY(sc_h5_write_i32(f, "/learning/role_of", 2, (size_t[]){(size_t)r->policy.nfrag, (size_t)r->policy.nact}, r->role_of,
                        "the role (row of /learning/roles) of each fragment's action", err));
    TRY(sc_h5_write_strings(f, "/learning/gain_inputs", G, gain, "the features each role's gains read, then its bias", err));
    TRY(sc_h5_write_f64(f, "/learning/gains", 2, (size_t[]){R, G}, r->theta, "rad per feature scale (bias: rad)",
                        "the gains found: M = gain / feature_scale for every fragment's action of that role", err));
    TRY(sc_h5_write_f64(f, "/learning/feature_scale", 1, (size_t[]){SC_FEATURES}, sc_feature_scale, "see /policy/feature_units",
                        "the unit of each feature in the gains and the deviation", err));
#undef TRY
done:
    free(a);
    return rc;
}

int sc_feedback_write(sc_h5 *f, const sc_feedback_run *run, const sc_feedback_result *r, sc_err *err)
{
    const sc_feedback_config *c = run->cfg;
    int rc;
    const sc_evaluation *e = &r->eval;
    size_t M = (size_t)c->npush, Dn = (size_t)c->ndir, P = (size_t)c->nphase, S = (size_t)(c->nstiff ? c->nstiff : 1);
    int *po = calloc(M * Dn * P + 1, sizeof(int)), *pc = calloc(M * Dn * P + 1, sizeof(int));
    double *so_s = calloc(M * Dn * P + 1, sizeof(double)), *sc_s = calloc(M * Dn * P + 1, sizeof(double));
    if (!po || !pc || !so_s || !sc_s) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    double rate[2][SC_MAX_EVAL], youngs[SC_MAX_EVAL], largest[2][4];
    static const char *const dirs[4] = {"front", "back", "left", "right"};
    for (size_t q = 0; q < M; q++) {
        int so = 0, sc = 0;
        for (size_t d = 0; d < Dn; d++)
            for (size_t ph = 0; ph < P; ph++) {
                po[(q * Dn + d) * P + ph] = e->push_open[q][d][ph];
                pc[(q * Dn + d) * P + ph] = e->push_closed[q][d][ph];
                so_s[(q * Dn + d) * P + ph] = e->push_open_s[q][d][ph];
                sc_s[(q * Dn + d) * P + ph] = e->push_closed_s[q][d][ph];
                so += e->push_open[q][d][ph];
                sc += e->push_closed[q][d][ph];
            }
        rate[0][q] = (double)so / (double)(Dn * P);
        rate[1][q] = (double)sc / (double)(Dn * P);
    }
    /* the largest push survived in a direction at every phase (0 when none) */
    for (int loop = 0; loop < 2; loop++)
        for (size_t d = 0; d < Dn; d++) {
            largest[loop][d] = 0;
            for (size_t q = 0; q < M; q++) {
                int all = 1;
                for (size_t ph = 0; ph < P; ph++) all &= loop ? e->push_closed[q][d][ph] : e->push_open[q][d][ph];
                if (all && c->push[q] > largest[loop][d]) largest[loop][d] = c->push[q];
            }
        }
    for (int k = 0; k < c->nstiff; k++) youngs[k] = run->m->youngs * c->stiffness[k];
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) goto done; \
    } while (0)
    TRY(c->method == SC_LEARN_SEARCH ? write_search_history(f, c, r, err) : write_guided_history(f, c, r, err));
    TRY(sc_h5_group(f, "/evaluation", "pushes and stiffness, open loop (M = 0) and closed loop alike", err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "openloop_survived_s", e->openloop_survived_s, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "closedloop_survived_s", e->closedloop_survived_s, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "openloop_joint_error_rad", e->openloop_joint_error, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "closedloop_joint_error_rad", e->closedloop_joint_error, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "openloop_turned_rad", e->openloop_turned, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "closedloop_turned_rad", e->closedloop_turned, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "test_seconds", c->eval_seconds, err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_magnitude", 1, &M, c->push, "N", "push forces tried", err));
    TRY(sc_h5_write_strings(f, "/evaluation/push_direction", Dn, dirs, "in the character's heading frame when the push starts", err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "push_duration_s", c->push_duration, err));
    TRY(sc_h5_attr_str(f, "/evaluation", "push_bone", run->m->bone_name[c->push_bone], err));
    TRY(sc_h5_attr_i64(f, "/evaluation", "phases", c->nphase, err));
    TRY(sc_h5_attr_i64(f, "/evaluation", "cycles_after_push", c->after_cycles, err));
    TRY(sc_h5_write_i32(f, "/evaluation/push_success_openloop", 3, (size_t[]){M, Dn, P}, po,
                        "1: no fall until the pushed run's end (magnitude, direction, phase)", err));
    TRY(sc_h5_write_i32(f, "/evaluation/push_success_closedloop", 3, (size_t[]){M, Dn, P}, pc, "the same with feedback", err));
    TRY(sc_h5_attr_i64(f, "/evaluation", "push_cycle", 1, err));
    TRY(sc_h5_attr_str(f, "/evaluation", "push_frame", "heading", err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "max_tilt_deg", c->max_tilt * 180 / SC_PI, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "max_tilt_rad", c->max_tilt, err)); /* exact: what simulate judges by */
    TRY(sc_h5_attr_f64(f, "/evaluation", "fall_root_height_m", 0.5 * r->policy.mean_root_height, err));
    double phase[SC_MAX_EVAL];
    for (size_t ph = 0; ph < P; ph++) phase[ph] = (double)ph / (double)P;
    TRY(sc_h5_write_f64(f, "/evaluation/push_phase", 1, &P, phase, "1", "the push's phase of cycle push_cycle (simulate's `phase`)", err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_start", 1, &P, e->push_start_s, "s", "when the push starts, per phase, from the policy's start", err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_test_length", 1, &P, e->push_test_s, "s",
                        "the pushed run's length, per phase: test_seconds, or the push's end plus cycles_after_push when later", err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_survived_openloop", 3, (size_t[]){M, Dn, P}, so_s, "s",
                        "time before the fall (root below fall_root_height_m or tilted past max_tilt_deg); push_test_length: none", err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_survived_closedloop", 3, (size_t[]){M, Dn, P}, sc_s, "s", "the same with feedback", err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_success_rate_openloop", 1, &M, rate[0], "1", "over directions and phases, per magnitude", err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_success_rate_closedloop", 1, &M, rate[1], "1", "the same with feedback", err));
    TRY(sc_h5_write_f64(f, "/evaluation/largest_push_openloop", 1, &Dn, largest[0], "N", "largest magnitude survived at every phase, per direction",
                        err));
    TRY(sc_h5_write_f64(f, "/evaluation/largest_push_closedloop", 1, &Dn, largest[1], "N", "the same with feedback", err));
    if (c->nstiff) {
        TRY(sc_h5_write_f64(f, "/evaluation/stiffness_factor", 1, &S, c->stiffness, "1", "Young's modulus / the character's", err));
        TRY(sc_h5_write_f64(f, "/evaluation/youngs_modulus", 1, &S, youngs, "Pa", "Young's modulus run", err));
        TRY(sc_h5_write_f64(f, "/evaluation/stiffness_survived_openloop", 1, &S, e->stiff_open_s, "s", "time until the fall (test length: completed)",
                            err));
        TRY(sc_h5_write_f64(f, "/evaluation/stiffness_survived_closedloop", 1, &S, e->stiff_closed_s, "s", "the same with feedback", err));
    }
#undef TRY
done:
    free(po);
    free(pc);
    free(so_s);
    free(sc_s);
    return rc;
}

int sc_policy_file_write(const char *path, const sc_policy_file_info *info, const sc_model *character, const sc_feedback_run *run,
                         const sc_feedback_result *r, sc_err *err)
{
    sc_h5 *f = NULL;
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)run->ol->hash);
    int rc = sc_h5_create(path, &f, err) || sc_h5_provenance(f, SC_POLICY_SCHEMA, info->argc, info->argv, info->resolved_config, err) ||
        sc_h5_attr_i64(f, "/", "seed", (long long)run->seed, err) || sc_h5_attr_str(f, "/", "character", info->character, err) ||
        sc_h5_attr_str(f, "/", "fem_kernel", sc_fem_kernel_name(sc_sim_fem_kernel(run->sim_opts)), err) ||
        sc_h5_attr_str(f, "/", "openloop", info->openloop, err) || sc_h5_attr_str(f, "/", "openloop_hash", hex, err) ||
        sc_h5_attr_str(f, "/", "status", "completed", err) || sc_policy_write(f, &r->policy, character, run->dofs, err) ||
        sc_feedback_write(f, run, r, err) || sc_h5_attr_i64(f, "/learning", "ranks", info->ranks, err) ||
        sc_h5_attr_i64(f, "/learning", "threads", info->threads, err) ||
        sc_timeline_write(f, "/learning", info->timeline ? 2 : 0, info->ranks, info->timeline, NULL, err);
    if (rc) sc_h5_abort(f);
    else rc = sc_h5_commit(f, err);
    return rc ? (err->code ? err->code : SC_EIO) : SC_OK;
}

typedef struct policy_arg {
    const sc_model *m;
    const sc_control_dofs *dofs;
    sc_policy *p;
} policy_arg;

static int policy_reader(sc_h5 *f, void *arg, sc_err *err)
{
    const policy_arg *pa = arg;
    const sc_model *m = pa->m;
    const sc_control_dofs *dofs = pa->dofs;
    sc_policy *p = pa->p;
    const char *path = sc_h5_filename(f);
    memset(p, 0, sizeof *p);
    int rc = SC_OK;
    char *schema = NULL, **names = NULL, **feat = NULL, **dn = NULL;
    size_t nn = 0, nf = 0, nd = 0, F = 0, A = 0, NB = 0;
    int *steps = NULL, *adof = NULL;
    double *v[12] = {0};
    long long frag = 0;
#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) goto done; \
    } while (0)
#define BAD(...)                                   \
    do {                                           \
        rc = sc_fail(err, SC_EINPUT, __VA_ARGS__); \
        goto done;                                 \
    } while (0)
    TRY(sc_h5_read_attr_str(f, "/", "schema", &schema, err));
    if (strcmp(schema, SC_POLICY_SCHEMA)) BAD("%s: schema '%s', expected a policy.h5 (%s)", path, schema, SC_POLICY_SCHEMA);
    uint64_t made_for;
    TRY(sc_character_hash_read(f, &made_for, err));
    if (!made_for) BAD("%s: no character_hash: not a policy.h5 learn-feedback wrote", path); /* policies always carried it */
    TRY(sc_character_hash_check(path, made_for, m, err));
    TRY(sc_h5_read_strings(f, "/bones/names", &nn, &names, err));
    if (nn != (size_t)m->nbones) BAD("%s:/bones/names: %zu bones, the character has %d", path, nn, m->nbones);
    TRY(sc_h5_read_strings(f, "/policy/features", &nf, &feat, err));
    if (nf != SC_FEATURES) BAD("%s:/policy/features: %zu features, this build's policies have %d", path, nf, SC_FEATURES);
    for (size_t k = 0; k < nf; k++)
        if (strcmp(feat[k], sc_feature_names[k]))
            BAD("%s:/policy/features: feature %zu is '%s', unknown here (expected '%s')", path, k, feat[k], sc_feature_names[k]);
    TRY(sc_h5_read_strings(f, "/policy/dof_names", &nd, &dn, err));
    if (nd != (size_t)dofs->n) BAD("%s:/policy/dof_names: %zu DoFs, the character has %d", path, nd, dofs->n);
    for (size_t d = 0; d < nd; d++)
        if (strcmp(dn[d], dofs->name[d])) BAD("%s:/policy/dof_names: DoF %zu is '%s', the character's is '%s'", path, d, dn[d], dofs->name[d]);
    TRY(sc_h5_read_attr_i64(f, "/policy", "fragments", &frag, err));
    TRY(sc_h5_read_i32(f, "/policy/steps", 1, &F, &steps, err));
    TRY(sc_h5_read_i32(f, "/policy/action_dof", 1, &A, &adof, err));
    TRY(sc_h5_read_f64(f, "/cycle/time", 1, &NB, &v[0], err));
    if ((long long)F != frag || F < 1 || F > 100000 || A > SC_MAX_ACTIONS || NB < 2 || NB > 10000000)
        BAD("%s:/policy: %zu fragments (attribute %lld), %zu actions, %zu cycle samples", path, F, frag, A, NB);
    TRY(sc_policy_alloc(p, m->nbones, dofs->n, (int)A, (int)F, (int)NB, err));
    size_t dims[][3] = {{F, 0, 0}, {F, 0, 0}, {F, nd, 0}, {F, SC_FEATURES, 0}, {F, A, 0}, {F, A, SC_FEATURES}, {NB, nn, 4}, {NB, nn, 4}, {3},
                        {3},       {nn, 4},   {nn, 3}};
    const char *paths[] = {"/policy/ref_t0",  "/policy/ref_t1",  "/policy/offsets",   "/policy/s_bar",
                           "/policy/a_bar",   "/policy/M",       "/cycle/targets",    "/cycle/reference_quat",
                           "/start/root_pos", "/start/root_vel", "/start/local_quat", "/start/local_ang_vel"};
    double *dst[] = {p->ref_t0,    p->ref_t1,   p->offset,     p->s_bar,     p->a_bar,      p->M,
                     p->base_quat, p->ref_quat, p->start_root, p->start_vel, p->start_quat, p->start_w};
    int ranks[] = {1, 1, 2, 2, 2, 3, 3, 3, 1, 1, 2, 2};
    memcpy(p->base_time, v[0], sizeof(double) * NB);
    /* plausible magnitudes: offsets and actions in rad, features' centres, gains, times, poses */
    const double bound[] = {1e6, 1e6, 10, 1e3, 10, 1e6, 2, 2, 1e3, 1e3, 2, 1e3};
    for (int i = 0; i < 12; i++) {
        double *x;
        size_t total = 1, want[3];
        memcpy(want, dims[i], sizeof want);
        TRY(sc_h5_read_f64(f, paths[i], ranks[i], dims[i], &x, err));
        /* exactly the shape the policy was allocated for: a count of 0 (no actions) reads as
           "any length" in sc_h5_read_f64, so an (F, 7) /policy/a_bar went into an (F, 0) array */
        for (int k = 0; k < ranks[i]; k++)
            if (dims[i][k] != want[k]) {
                free(x);
                BAD("%s:%s: dimension %d is %zu, expected %zu", path, paths[i], k, dims[i][k], want[k]);
            }
        for (int k = 0; k < ranks[i]; k++) total *= dims[i][k];
        int quats = i == 6 || i == 7 || i == 10;
        rc = quats ? sc_h5_check_unit_quats(f, paths[i], x, ranks[i], dims[i], err)
                   : sc_h5_check_range_nd(f, paths[i], x, ranks[i], dims[i], -bound[i], bound[i], 0, err);
        if (rc) {
            free(x);
            goto done;
        }
        memcpy(dst[i], x, sizeof(double) * total);
        free(x);
    }
    for (size_t j = 0; j < F; j++)
        if (!(p->ref_t0[j] >= 0 && p->ref_t1[j] > p->ref_t0[j]))
            BAD("%s:/policy/ref_t0, ref_t1: element %zu = [%g, %g] is not a span of the cycle", path, j, p->ref_t0[j], p->ref_t1[j]);
    TRY(sc_h5_check_range(f, "/cycle/time", p->base_time, NB, 1, 0, 1e6, 0, err));
    for (size_t j = 0; j < F; j++) {
        if (steps[j] < 1) BAD("%s:/policy/steps: element %zu = %d", path, j, steps[j]);
        p->steps[j] = steps[j];
    }
    for (size_t i = 0; i < A; i++) {
        if (adof[i] < 0 || adof[i] >= dofs->n) BAD("%s:/policy/action_dof: element %zu = %d", path, i, adof[i]);
        p->act[i] = adof[i];
    }
    for (size_t k = 1; k < NB; k++)
        if (!(p->base_time[k] > p->base_time[k - 1])) BAD("%s:/cycle/time: not increasing at %zu", path, k);
    TRY(sc_h5_read_attr_f64(f, "/policy", "max_action_rad", &p->max_action, err));
    TRY(sc_h5_read_attr_f64(f, "/policy", "period_s", &p->period, err));
    TRY(sc_h5_read_attr_f64(f, "/policy", "mean_root_height_m", &p->mean_root_height, err));
    TRY(sc_h5_check_range(f, "/policy (attribute max_action_rad)", &p->max_action, 1, 1, 0, 10, 0, err));
    TRY(sc_h5_check_range(f, "/policy (attribute period_s)", &p->period, 1, 1, 0, 1e6, 1, err));
    TRY(sc_h5_check_range(f, "/policy (attribute mean_root_height_m)", &p->mean_root_height, 1, 1, -1e3, 1e3, 0, err));
#undef TRY
#undef BAD
done:
    free(schema);
    free(steps);
    free(adof);
    free(v[0]);
    if (names) sc_h5_free_strings(names, nn);
    if (feat) sc_h5_free_strings(feat, nf);
    if (dn) sc_h5_free_strings(dn, nd);
    if (rc) sc_policy_free(p);
    return rc;
}

int sc_policy_read(const char *path, const sc_model *m, const sc_control_dofs *dofs, sc_policy *p, sc_err *err)
{
    memset(p, 0, sizeof *p);
    policy_arg a = {m, dofs, p};
    return sc_h5_read_file(path, policy_reader, &a, err);
}

/* written with /evaluation/push_phase, from the same version on */
static int max_tilt_reader(sc_h5 *f, void *arg, sc_err *err)
{
    double *tilt = arg;
    *tilt = 60 * SC_PI / 180; /* the evaluation's default, as settings/learn.c computes it */
    int rc = sc_h5_exists(f, "/evaluation/push_phase") ? sc_h5_read_attr_f64(f, "/evaluation", "max_tilt_rad", tilt, err) : SC_OK;
    if (!rc && !(*tilt >= SC_PI / 180 && *tilt <= SC_PI))
        rc = sc_fail(err, SC_EINPUT, "%s: /evaluation max_tilt_rad = %g is outside [1, 180] deg", sc_h5_filename(f), *tilt);
    return rc;
}

int sc_policy_read_max_tilt(const char *path, double *max_tilt, sc_err *err) { return sc_h5_read_file(path, max_tilt_reader, max_tilt, err); }

int sc_policy_read_image(const void *data, size_t size, const char *name, const sc_model *m, const sc_control_dofs *dofs, sc_policy *p, sc_err *err)
{
    memset(p, 0, sizeof *p);
    policy_arg a = {m, dofs, p};
    return sc_h5_read_image(data, size, name, policy_reader, &a, err);
}

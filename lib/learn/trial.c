/* Trials of a policy and its evaluation (learn/trial.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "learn/trial.h"
#include "model/targets.h"
#include "par/par.h"

/* ---- running a policy ------------------------------------------------------------------- */

typedef struct trial_judge {
    const sc_policy *p;
    sc_policy_controller *c;
    double max_tilt, se, dev;
    long n, nfrag, fell_at; /* step of the fall, -1 */
    long frag_start;        /* of the last fragment seen */
    double heading_off;     /* the last fragment start's heading less its target, unwrapped */
    double heading_first;   /* the same at the first fragment's start */
    sc_transition_log *log; /* the transitions, when asked */
    double *open;           /* the log's row of the fragment being played, its end still to come */
} trial_judge;

/* a fragment starts: the one before it ends here (its row completed), the new one's row begun */
static void log_transition(trial_judge *judge)
{
    const sc_policy_controller *c = judge->c;
    sc_transition_log *log = judge->log;
    if (judge->open) {
        memcpy(judge->open + 1 + SC_FEATURES + log->nact, c->s, sizeof(double) * SC_FEATURES);
        log->n++;
        judge->open = NULL;
    }
    if (log->n == log->cap) return;
    double *row = log->rows + (size_t)log->n * SC_TRANSITION_WIDTH(log->nact);
    row[0] = c->frag;
    memcpy(row + 1, c->s, sizeof(double) * SC_FEATURES);
    for (int i = 0; i < log->nact; i++) row[1 + SC_FEATURES + i] = c->offset[judge->p->act[i]];
    judge->open = row;
}

/* the deviation's features: root pitch and roll, the centre of mass's horizontal velocity */
static const int deviation_features[] = {0, 1, 6, 8};

/* a fall ends the run; meanwhile the joint error against the cycle's reference accumulates, and
   at each fragment's start the features' deviation from the fragment's s_bar */
static int judge_state(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    trial_judge *judge = ctx;
    const sc_policy *p = judge->p;
    const sc_policy_controller *c = judge->c;
    if (sc_policy_fallen(p, s, judge->max_tilt)) {
        judge->fell_at = s->step;
        return 1;
    }
    if (c->frag >= 0 && c->frag_start != judge->frag_start) {
        judge->frag_start = c->frag_start;
        if (judge->log) log_transition(judge);
        const double *sb = p->s_bar + (size_t)c->frag * SC_FEATURES;
        for (size_t i = 0; i < sizeof deviation_features / sizeof *deviation_features; i++) {
            int k = deviation_features[i];
            judge->dev += pow((c->s[k] - sb[k]) / sc_feature_scale[k], 2);
        }
        /* the turn away from the cycle's own heading, unwrapped fragment by fragment */
        double off = c->s[SC_FEATURE_HEADING] - sb[SC_FEATURE_HEADING];
        if (!judge->nfrag) judge->heading_first = judge->heading_off = sc_wrap_angle(off);
        else judge->heading_off += sc_wrap_angle(off - judge->heading_off);
        judge->nfrag++;
    }
    if (s->step % 20) return 0;
    sc_quat ref[SC_SIM_MAX_BONES];
    sc_targets_interpolate(p->base_time, p->nbase, p->ref_quat, p->nb, sc_policy_controller_cycle_time(c, s->step), ref);
    for (int b = 1; b < p->nb; b++) {
        int par = s->m->parent[b];
        double a = sc_q_angle_between(sc_q_mul(sc_q_conj(s->pose[par].q), s->pose[b].q), ref[b]);
        judge->se += a * a;
        judge->n++;
    }
    return 0;
}

int sc_policy_trial_run(const sc_policy_trial *trial, sc_trial_result *out, sc_err *err)
{
    sc_sim *s;
    int rc = sc_sim_create(trial->m, trial->o, &s, err);
    if (rc) return rc;
    if ((rc = sc_policy_start(trial->p, s, err))) {
        sc_sim_free(s);
        return rc;
    }
    sc_policy_controller c;
    sc_policy_controller_init(&c, trial->p, trial->f, trial->dofs, s->step, trial->feedback);
    c.explore = trial->explore;
    c.explore_seed = trial->explore_seed;
    trial_judge judge = {.p = trial->p, .c = &c, .max_tilt = trial->max_tilt, .fell_at = -1, .frag_start = -1, .log = trial->log};
    if (trial->log) trial->log->n = 0;
    sc_quat targets[SC_SIM_MAX_BONES];
    sc_rollout_result rr;
    sc_err step_err;
    long end = trial->steps;
    if (trial->push_force > 0 && trial->push_step < end) {
        rc = sc_rollout(s, sc_policy_source(&c), NULL, trial->push_step, judge_state, &judge, targets, &rr, &step_err);
        if (!rc && !rr.stopped) {
            /* a push in the character's own frame at that moment, started as simulate starts
               one given with `frame: heading` (so it reproduces this run bit for bit) */
            static const double dirs[4][3] = {{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {-1, 0, 0}};
            sc_perturbations pert = {1, {{.kind = SC_PERTURB_PUSH, .bone = trial->push_bone, .frame = SC_FRAME_HEADING}}};
            sc_v3_store(pert.p[0].v, sc_v3_scale(sc_v3_load(dirs[trial->push_dir]), trial->push_force));
            pert.p[0].duration = (double)trial->push_len * s->o.dt;
            sc_push_start(&pert.p[0], s);
            rc = sc_rollout(s, sc_policy_source(&c), &pert, end, judge_state, &judge, targets, &rr, &step_err);
        }
    } else {
        rc = sc_rollout(s, sc_policy_source(&c), NULL, end, judge_state, &judge, targets, &rr, &step_err);
    }
    if (rc == SC_ENUMERIC) {
        judge.fell_at = s->step;
        rc = SC_OK;
    } /* a blow-up is a fall too */
    else if (rc)
        *err = step_err;
    out->fell = judge.fell_at >= 0;
    out->survived = (judge.fell_at >= 0 ? judge.fell_at : s->step) * s->o.dt;
    out->joint_error = judge.n ? sqrt(judge.se / judge.n) : 0;
    out->deviation = judge.nfrag ? judge.dev / judge.nfrag : 0;
    out->turned = judge.heading_off - judge.heading_first;
    sc_sim_free(s);
    return rc;
}

int sc_policy_run(const sc_model *m, const sc_sim_opts *o, const sc_policy *p, const sc_control_dofs *dofs, int feedback, double seconds,
                  double max_tilt, double *survived, double *joint_error, sc_err *err)
{
    sc_features f;
    int rc = sc_features_init(&f, m, p, err);
    if (rc) return rc;
    sc_policy_trial trial = {
        .m = m, .o = o, .p = p, .dofs = dofs, .f = &f, .feedback = feedback, .steps = lround(seconds / o->dt), .max_tilt = max_tilt};
    sc_trial_result res;
    rc = sc_policy_trial_run(&trial, &res, err);
    *survived = res.survived;
    if (joint_error) *joint_error = res.joint_error;
    sc_features_free(&f);
    return rc;
}

/* ---- evaluation: every run is a task of the map ------------------------------------------- */

long sc_eval_push_step(long cycle_steps, int phase, int nphase) { return sc_cycle_phase_step(cycle_steps, 1, (double)phase / nphase); }

long sc_eval_push_steps(long full, long push_step, long push_len, int after_cycles, long cycle_steps)
{
    long window = push_step + push_len + (long)after_cycles * cycle_steps;
    return window > full ? window : full;
}

typedef struct eval_ctx {
    const sc_feedback_run *run;
    const sc_policy *p;
    const sc_features *f;
    sc_model *stiff; /* [nstiff] models with scaled Young's modulus */
    int npush_tasks; /* 2 * npush * ndir * nphase, then 2 * nstiff, then 2 survival runs */
} eval_ctx;

static int eval_task(void *ctx, int thread, int i, void *out, sc_err *err)
{
    (void)thread; /* a run makes its own simulation; the context is only read */
    const eval_ctx *evaluation = ctx;
    const sc_feedback_config *c = evaluation->run->cfg;
    long cyc = sc_policy_cycle_steps(evaluation->p), full = lround(c->eval_seconds / evaluation->run->sim_opts->dt);
    sc_policy_trial trial = {.m = evaluation->run->m,
                             .o = evaluation->run->sim_opts,
                             .p = evaluation->p,
                             .dofs = evaluation->run->dofs,
                             .f = evaluation->f,
                             .feedback = i % 2,
                             .steps = full,
                             .max_tilt = c->max_tilt,
                             .push_bone = c->push_bone};
    int t = i / 2;
    if (t < evaluation->npush_tasks / 2) { /* pushes during the second cycle: magnitude, direction, phase */
        int ph = t % c->nphase, dir = (t / c->nphase) % c->ndir, mag = t / (c->nphase * c->ndir);
        trial.push_force = c->push[mag];
        trial.push_dir = dir;
        trial.push_len = lround(c->push_duration / evaluation->run->sim_opts->dt);
        trial.push_step = sc_eval_push_step(cyc, ph, c->nphase);
        trial.steps = sc_eval_push_steps(full, trial.push_step, trial.push_len, c->after_cycles, cyc);
    } else if ((t -= evaluation->npush_tasks / 2) < c->nstiff) {
        trial.m = &evaluation->stiff[t];
    }
    return sc_policy_trial_run(&trial, out, err);
}

int sc_feedback_evaluate(const sc_feedback_run *run, const sc_policy *p, sc_evaluation *e, sc_err *err)
{
    const sc_feedback_config *c = run->cfg;
    memset(e, 0, sizeof *e);
    sc_features f;
    int rc = sc_features_init(&f, run->m, p, err);
    if (rc) return rc;
    eval_ctx evaluation = {run, p, &f, calloc((size_t)(c->nstiff ? c->nstiff : 1), sizeof(sc_model)), 2 * c->npush * c->ndir * c->nphase};
    int ntask = evaluation.npush_tasks + 2 * c->nstiff + 2, stopped = 0;
    sc_trial_result *res = calloc((size_t)ntask, sizeof *res);
    int *owner = calloc((size_t)ntask, sizeof(int));
    if (!evaluation.stiff || !res || !owner) rc = sc_fail(err, SC_EIO, "out of memory");
    for (int k = 0; !rc && k < c->nstiff; k++) {
        rc = sc_model_clone(run->m, &evaluation.stiff[k], err);
        evaluation.stiff[k].youngs *= c->stiffness[k];
    }
    if (!rc) rc = sc_par_map(run->par, ntask, sizeof *res, eval_task, &evaluation, run->stop, res, owner, &stopped, err);
    if (!rc && stopped) rc = sc_fail(err, SC_EINTERRUPTED, "stopped by a signal during the evaluation");
    if (!rc) {
        double dt = run->sim_opts->dt;
        long cyc = sc_policy_cycle_steps(p), full = lround(c->eval_seconds / dt), len = lround(c->push_duration / dt);
        for (int ph = 0; ph < c->nphase; ph++) {
            long at = sc_eval_push_step(cyc, ph, c->nphase);
            e->push_start_s[ph] = (double)at * dt;
            e->push_test_s[ph] = (double)sc_eval_push_steps(full, at, len, c->after_cycles, cyc) * dt;
        }
        /* survived: no fall over the whole test, not only `after` cycles past the push */
        for (int t = 0; t < evaluation.npush_tasks / 2; t++) {
            int ph = t % c->nphase, dir = (t / c->nphase) % c->ndir, mag = t / (c->nphase * c->ndir);
            e->push_open[mag][dir][ph] = !res[2 * t].fell;
            e->push_closed[mag][dir][ph] = !res[2 * t + 1].fell;
            e->push_open_s[mag][dir][ph] = res[2 * t].survived;
            e->push_closed_s[mag][dir][ph] = res[2 * t + 1].survived;
        }
        for (int k = 0; k < c->nstiff; k++) {
            e->stiff_open_s[k] = res[evaluation.npush_tasks + 2 * k].survived;
            e->stiff_closed_s[k] = res[evaluation.npush_tasks + 2 * k + 1].survived;
        }
        int t = evaluation.npush_tasks + 2 * c->nstiff;
        e->openloop_survived_s = res[t].survived;
        e->openloop_joint_error = res[t].joint_error;
        e->closedloop_survived_s = res[t + 1].survived;
        e->closedloop_joint_error = res[t + 1].joint_error;
        e->openloop_turned = res[t].turned;
        e->closedloop_turned = res[t + 1].turned;
    }
    for (int k = 0; evaluation.stiff && k < c->nstiff; k++) sc_model_free(&evaluation.stiff[k]);
    free(evaluation.stiff);
    free(res);
    free(owner);
    sc_features_free(&f);
    return rc;
}

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sampling/controller.h"
#include "learn/feedback.h"
#include "store/reference.h" /* sc_reference_write_character, until policy.h5 moves to store/ */
#include "core/hash.h"
#include "core/linalg.h"
#include "core/log.h"
#include "io/config.h"
#include "io/checkpoint.h"
#include "par/par.h"

/* ---- configuration ---------------------------------------------------------------------- */

static int read_search_config(sc_cfg_node *f, sc_search_config *c, sc_err *err)
{
    sc_cfg_node *sr, *list;
    char w[256];
    long n;
    int rc;
#define TRY(x) if ((rc = (x))) return rc
    TRY(sc_cfg_section(f, "search", &sr, err));
    TRY(sc_cfg_int(sr, "generations", 30, 1, SC_MAX_GENERATIONS, &n, err));
    c->generations = (int)n;
    TRY(sc_cfg_int(sr, "population", 0, 0, 10000, &n, err));
    c->population = (int)n;
    if (c->population == 1)
        return sc_fail(err, SC_EINPUT, "%s: feedback.search.population = 1: CMA-ES needs at least 2 (0: its default)", sc_cfg_where(sc_cfg_get(sr, "population"), w, sizeof w));
    TRY(sc_cfg_double_range(sr, "sigma", 0.1, 1e-6, 10, &c->sigma, err));
    TRY(sc_cfg_double_range(sr, "seconds", 10, 0.1, 1e5, &c->seconds, err));
    TRY(sc_cfg_int(sr, "rollouts", 1, 1, 64, &n, err));
    c->rollouts = (int)n;
    TRY(sc_cfg_double_range(sr, "push", 0, 0, 1e5, &c->push, err));
    TRY(sc_cfg_bool(sr, "bias", 1, &c->bias, err));
    TRY(sc_cfg_list(sr, "features", 0, &list, err));
    if (list) {
        c->nfeat = sc_cfg_len(list);
        if (c->nfeat < 1 || c->nfeat > SC_FEATURES) return sc_fail(err, SC_EINPUT, "%s: feedback.search.features: 1 to %d features", sc_cfg_where(list, w, sizeof w), SC_FEATURES);
        for (int i = 0; i < c->nfeat; i++) {
            const char *name = sc_cfg_scalar(sc_cfg_at(list, i));
            int k = name ? sc_feature_index(name) : -1;
            if (k < 0) return sc_fail(err, SC_EINPUT, "%s: feedback.search.features names '%s', not a feature (lib/learn/policy.h lists them)",
                                      sc_cfg_where(sc_cfg_at(list, i), w, sizeof w), name ? name : "?");
            for (int j = 0; j < i; j++)
                if (c->feat[j] == k) return sc_fail(err, SC_EINPUT, "%s: feedback.search.features names '%s' twice", sc_cfg_where(sc_cfg_at(list, i), w, sizeof w), name);
            c->feat[i] = k;
        }
    } else { /* the torso's tilt, where the centre of mass is and where it goes */
        static const int def[] = {0, 1, 3, 5, 6, 8};
        c->nfeat = 6;
        memcpy(c->feat, def, sizeof def);
    }
#undef TRY
    return SC_OK;
}

/* `stiffness`: a list of at least `min` factors on Young's modulus (default def[ndef]) */
static int read_stiffness_factors(sc_cfg_node *sec, const double *def, int ndef, int min, double *out, int *n, sc_err *err)
{
    char w[160];
    sc_cfg_node *sl;
    int rc = sc_cfg_list(sec, "stiffness", 0, &sl, err);
    if (rc) return rc;
    if (!sl) {
        double v[SC_MAX_EVAL];
        memcpy(out, def, sizeof(double) * (size_t)ndef);
        *n = ndef;
        return sc_cfg_vec(sec, "stiffness", ndef, def, v, err); /* records the default */
    }
    *n = sc_cfg_len(sl);
    if (*n < min || *n > SC_MAX_EVAL) return sc_fail(err, SC_EINPUT, "%s: %d to %d stiffness factors", sc_cfg_where(sl, w, sizeof w), min, SC_MAX_EVAL);
    for (int i = 0; i < *n; i++) {
        if ((rc = sc_cfg_scalar_double(sc_cfg_at(sl, i), &out[i], err))) return rc;
        if (!(out[i] > 0 && out[i] <= 1e3))
            return sc_fail(err, SC_EINPUT, "%s: a stiffness factor of %g", sc_cfg_where(sc_cfg_at(sl, i), w, sizeof w), out[i]);
    }
    return SC_OK;
}

int sc_feedback_read_config(sc_cfg *cfg, const sc_model *m, const sc_control_dofs *dofs, sc_feedback_config *c, sc_err *err)
{
    sc_cfg_node *root = sc_cfg_root(cfg), *f, *ev, *list;
    char w[256];
    long n;
    int rc;
    memset(c, 0, sizeof *c);
#define TRY(x) if ((rc = (x))) return rc
    TRY(sc_cfg_section(root, "feedback", &f, err));
    static const char *const methods[] = {"guided", "search"};
    TRY(sc_cfg_enum(f, "method", methods, 2, SC_LEARN_GUIDED, &c->method, err));
    TRY(read_search_config(f, &c->search, err));
    TRY(sc_cfg_int(f, "iterations", 3, 1, 64, &n, err));
    c->iterations = (int)n;
    TRY(sc_cfg_int(f, "cycles", 4, 1, 1000, &n, err));
    c->cycles = (int)n;
    TRY(sc_cfg_int(f, "samples", 300, 1, 1000000, &n, err));
    c->samples = (int)n;
    TRY(sc_cfg_int(f, "elites", 30, 1, 100000, &n, err));
    c->elites = (int)n;
    if (c->elites > c->samples)
        return sc_fail(err, SC_EINPUT, "%s: feedback.elites = %d is more than feedback.samples = %d", sc_cfg_where(sc_cfg_get(f, "elites"), w, sizeof w),
                       c->elites, c->samples);
    TRY(sc_cfg_double_range(f, "noise", 0.5, 0, 10, &c->noise, err));
    static const char *const explore[] = {"box", "residual"};
    TRY(sc_cfg_enum(f, "exploration", explore, 2, 0, &c->explore_residual, err));
    TRY(sc_cfg_double_range(f, "ridge", 0.1, 0, 1e6, &c->ridge, err));
    TRY(sc_cfg_double_range(f, "max_action", 1.0, 0, SC_PI, &c->max_action, err));
    static const char *const data[] = {"last", "all"};
    TRY(sc_cfg_enum(f, "data", data, 2, 1, &c->all_data, err));
    static const char *const pairs[] = {"elites", "paths"};
    TRY(sc_cfg_enum(f, "pairs", pairs, 2, 0, &c->path_pairs, err));
    static const char *const fits[] = {"actions", "model"};
    TRY(sc_cfg_enum(f, "fit", fits, 2, 1, &c->fit_model, err));
    sc_cfg_node *mo, *fl;
    TRY(sc_cfg_section(f, "model", &mo, err));
    sc_cfg_node *cn = sc_cfg_get(mo, "action_cost");
    if (cn && sc_cfg_is_seq(cn)) { /* candidates, chosen per iteration by the closed-loop test */
        c->ncost = sc_cfg_len(cn);
        if (c->ncost < 1 || c->ncost > SC_MAX_COSTS)
            return sc_fail(err, SC_EINPUT, "%s: feedback.model.action_cost: 1 to %d values", sc_cfg_where(cn, w, sizeof w), SC_MAX_COSTS);
        for (int i = 0; i < c->ncost; i++) {
            TRY(sc_cfg_scalar_double(sc_cfg_at(cn, i), &c->action_cost[i], err));
            if (!(c->action_cost[i] >= 1e-6 && c->action_cost[i] <= 1e6))
                return sc_fail(err, SC_EINPUT, "%s: an action cost of %g is outside [1e-06, 1e+06]", sc_cfg_where(sc_cfg_at(cn, i), w, sizeof w),
                               c->action_cost[i]);
        }
    } else {
        c->ncost = 1;
        TRY(sc_cfg_double_range(mo, "action_cost", 1.0, 1e-6, 1e6, &c->action_cost[0], err));
    }
    TRY(sc_cfg_int(mo, "horizon", 20, 1, 1000, &n, err));
    c->horizon = (int)n;
    TRY(sc_cfg_list(mo, "features", 0, &fl, err));
    for (int k = 0; k < SC_FEATURES; k++) c->model_feature[k] = !fl && strncmp(sc_feature_names[k], "com_stance", 10) != 0;
    for (int i = 0; fl && i < sc_cfg_len(fl); i++) {
        const char *name = sc_cfg_scalar(sc_cfg_at(fl, i));
        int k = name ? sc_feature_index(name) : -1;
        if (k < 0) return sc_fail(err, SC_EINPUT, "%s: feedback.model.features: '%s' is not a feature (the features are listed under learn-feedback in the README)",
                                  sc_cfg_where(sc_cfg_at(fl, i), w, sizeof w), name ? name : "?");
        c->model_feature[k] = 1;
    }
    TRY(sc_cfg_list(f, "actions", 0, &list, err));
    if (list) {
        for (int i = 0; i < sc_cfg_len(list); i++) {
            const char *name = sc_cfg_scalar(sc_cfg_at(list, i));
            int b = name ? sc_model_bone_index(m, name) : -1;
            if (b < 0 || dofs->first[b] < 0)
                return sc_fail(err, SC_EINPUT, "%s: feedback.actions names '%s', which is not a joint of the character",
                               sc_cfg_where(sc_cfg_at(list, i), w, sizeof w), name ? name : "?");
            int k = m->joint_type[b] == SC_JOINT_HINGE ? 1 : 3;
            if (c->nact + k > SC_MAX_ACTIONS) return sc_fail(err, SC_EINPUT, "%s: more than %d action DoFs", sc_cfg_where(list, w, sizeof w), SC_MAX_ACTIONS);
            for (int d = 0; d < k; d++) c->act[c->nact++] = dofs->first[b] + d;
        }
    } else { /* the waist, both hips and knees (mass-SAMCON's actions) */
        for (int d = 0; d < dofs->n; d++) {
            int cls = sc_joint_class(m->bone_name[dofs->bone[d]]);
            if ((cls == SC_JOINT_SPINE || cls == SC_JOINT_HIPS || cls == SC_JOINT_KNEES) && c->nact < SC_MAX_ACTIONS) c->act[c->nact++] = d;
        }
    }
    if (c->nact == 0) return sc_fail(err, SC_EINPUT, "%s: feedback.actions: no joint to act on", sc_cfg_where(f, w, sizeof w));

    TRY(sc_cfg_section(f, "evaluate", &ev, err));
    double tilt;
    TRY(sc_cfg_double_range(ev, "seconds", 20, 0.1, 1e5, &c->eval_seconds, err));
    TRY(sc_cfg_double_range(ev, "max_tilt", 60, 1, 180, &tilt, err));
    c->max_tilt = tilt * SC_PI / 180;
    sc_cfg_node *pl;
    TRY(sc_cfg_list(ev, "pushes", 0, &pl, err));
    if (!pl) {
        double def[] = {100, 200, 300, 400};
        c->npush = 4;
        memcpy(c->push, def, sizeof def);
        double v[4];
        TRY(sc_cfg_vec(ev, "pushes", 4, def, v, err)); /* records the default */
    } else {
        c->npush = sc_cfg_len(pl);
        if (c->npush > SC_MAX_EVAL) return sc_fail(err, SC_EINPUT, "%s: at most %d push magnitudes", sc_cfg_where(pl, w, sizeof w), SC_MAX_EVAL);
        for (int i = 0; i < c->npush; i++) {
            TRY(sc_cfg_scalar_double(sc_cfg_at(pl, i), &c->push[i], err));
            if (!(c->push[i] >= 0 && c->push[i] <= 1e5))
                return sc_fail(err, SC_EINPUT, "%s: a push of %g N", sc_cfg_where(sc_cfg_at(pl, i), w, sizeof w), c->push[i]);
        }
    }
    TRY(sc_cfg_double_range(ev, "push_duration", 0.1, 0.001, 10, &c->push_duration, err));
    char bone[SC_NAME_LEN];
    TRY(sc_cfg_string(ev, "push_bone", "spine", bone, sizeof bone, err));
    c->push_bone = sc_model_bone_index(m, bone);
    if (c->push_bone < 0)
        return sc_fail(err, SC_EINPUT, "%s: feedback.evaluate.push_bone '%s' is not a bone of the character",
                       sc_cfg_where(sc_cfg_get(ev, "push_bone"), w, sizeof w), bone);
    TRY(sc_cfg_int(ev, "directions", 4, 1, 4, &n, err));
    c->ndir = (int)n;
    TRY(sc_cfg_int(ev, "phases", 4, 1, SC_MAX_EVAL, &n, err));
    c->nphase = (int)n;
    TRY(sc_cfg_int(ev, "after", 2, 1, 100, &n, err));
    c->after_cycles = (int)n;
    double eval_def[] = {0.125, 0.25, 0.5, 2, 4}, learn_def[] = {1};
    TRY(read_stiffness_factors(ev, eval_def, 5, 0, c->stiffness, &c->nstiff, err));
    TRY(read_stiffness_factors(f, learn_def, 1, 1, c->learn_stiffness, &c->nlearn_stiff, err));
#undef TRY
    return SC_OK;
}

static int cmp_long(const void *a, const void *b) { long x = *(const long *)a, y = *(const long *)b; return (x > y) - (x < y); }

int sc_policy_from_openloop(const sc_openloop_cycle *o, const sc_reference *ref, const sc_model *m, const sc_control_dofs *dofs,
                            const sc_feedback_config *c, sc_policy *p, sc_err *err)
{
    sc_cycle cy;
    int rc = sc_cycle_from_times(ref, o->cycle.t0, o->cycle.t1, &cy, err);
    if (rc) return rc;
    int nb = m->nbones, mf = o->fragments, P = cy.i1 - cy.i0, ndof = dofs->n;
    if ((rc = sc_policy_alloc(p, nb, ndof, c->nact, mf, P + 1, err))) return rc;
    memcpy(p->act, c->act, sizeof(int) * (size_t)c->nact);
    p->max_action = c->max_action;
    p->period = ref->time[cy.i1] - ref->time[cy.i0];
    const double *base = o->base == SC_BASE_ID ? ref->target_quat : ref->local_quat;
    double h = 0;
    for (int s = 0; s <= P; s++) {
        p->base_time[s] = ref->time[cy.i0 + s] - ref->time[cy.i0];
        memcpy(p->base_quat + (size_t)s * nb * 4, base + (size_t)(cy.i0 + s) * nb * 4, sizeof(double) * 4 * (size_t)nb);
        memcpy(p->ref_quat + (size_t)s * nb * 4, ref->local_quat + (size_t)(cy.i0 + s) * nb * 4, sizeof(double) * 4 * (size_t)nb);
        h += ref->root_pos[3 * (cy.i0 + s) + 1];
    }
    p->mean_root_height = h / (P + 1);
    long *st = malloc(sizeof(long) * (size_t)(o->nseg / mf + 1));
    if (!st) { sc_policy_free(p); return sc_fail(err, SC_EIO, "out of memory"); }
    for (int j = 0; j < mf; j++) {
        p->ref_t0[j] = p->period * j / mf;
        p->ref_t1[j] = p->period * (j + 1) / mf;
        int n = 0;
        for (int k = j; k < o->nseg; k += mf) {
            st[n++] = o->steps[k];
            for (int d = 0; d < ndof; d++) p->offset[(size_t)j * ndof + d] += o->offsets[(size_t)k * ndof + d];
        }
        for (int d = 0; d < ndof; d++) p->offset[(size_t)j * ndof + d] /= n;
        qsort(st, (size_t)n, sizeof *st, cmp_long);
        p->steps[j] = st[n / 2];
        for (int i = 0; i < c->nact; i++) p->a_bar[(size_t)j * c->nact + i] = p->offset[(size_t)j * ndof + c->act[i]];
    }
    free(st);
    memcpy(p->start_root, o->start_root, sizeof p->start_root);
    memcpy(p->start_vel, o->start_vel, sizeof p->start_vel);
    memcpy(p->start_quat, o->start_quat, sizeof(double) * 4 * (size_t)nb);
    memcpy(p->start_w, o->start_w, sizeof(double) * 3 * (size_t)nb);
    return SC_OK;
}

/* ---- running a policy ------------------------------------------------------------------- */

typedef struct judge {
    const sc_policy *p;
    sc_policy_controller *c;
    double max_tilt, se, dev;
    long n, nfrag, fell_at;   /* step of the fall, -1 */
    long frag_start;          /* of the last fragment seen */
} judge;

/* the deviation's features: root pitch and roll, the centre of mass's horizontal velocity */
static const int deviation_features[] = {0, 1, 6, 8};

/* a fall ends the run; meanwhile the joint error against the cycle's reference accumulates, and
   at each fragment's start the features' deviation from the fragment's s_bar */
static int judge_state(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    judge *J = ctx;
    const sc_policy *p = J->p;
    const sc_policy_controller *c = J->c;
    if (sc_policy_fallen(p, s, J->max_tilt)) { J->fell_at = s->step; return 1; }
    if (c->frag >= 0 && c->frag_start != J->frag_start) {
        J->frag_start = c->frag_start;
        const double *sb = p->s_bar + (size_t)c->frag * SC_FEATURES;
        for (size_t i = 0; i < sizeof deviation_features / sizeof *deviation_features; i++) {
            int k = deviation_features[i];
            J->dev += pow((c->s[k] - sb[k]) / sc_feature_scale[k], 2);
        }
        J->nfrag++;
    }
    if (s->step % 20) return 0;
    sc_quat ref[SC_SIM_MAX_BONES];
    sc_targets_interpolate(p->base_time, p->nbase, p->ref_quat, p->nb, sc_policy_controller_cycle_time(c, s->step), ref);
    for (int b = 1; b < p->nb; b++) {
        int par = s->m->parent[b];
        double a = sc_q_angle_between(sc_q_mul(sc_q_conj(s->pose[par].q), s->pose[b].q), ref[b]);
        J->se += a * a;
        J->n++;
    }
    return 0;
}

int sc_policy_trial_run(const sc_policy_trial *R, sc_trial_result *out, sc_err *err)
{
    sc_sim *s;
    int rc = sc_sim_create(R->m, R->o, &s, err);
    if (rc) return rc;
    if ((rc = sc_policy_start(R->p, s, err))) { sc_sim_free(s); return rc; }
    sc_policy_controller c;
    sc_policy_controller_init(&c, R->p, R->f, R->dofs, s->step, R->feedback);
    judge J = {.p = R->p, .c = &c, .max_tilt = R->max_tilt, .fell_at = -1, .frag_start = -1};
    sc_quat targets[SC_SIM_MAX_BONES];
    sc_rollout_result rr;
    sc_err step_err;
    long end = R->steps;
    if (R->push_force > 0 && R->push_step < end) {
        rc = sc_rollout(s, sc_policy_source(&c), NULL, R->push_step, judge_state, &J, targets, &rr, &step_err);
        if (!rc && !rr.stopped) {
            /* a push in the character's own frame at that moment */
            static const double dirs[4][3] = {{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {-1, 0, 0}};
            sc_vec3 d = sc_q_rotate(sc_q_axis_angle(sc_v3(0, 1, 0), sc_q_heading(s->pose[0].q)), sc_v3_load(dirs[R->push_dir]));
            sc_perturbations pert = {1, {{SC_PERTURB_PUSH, R->push_bone, s->t, R->push_len * s->o.dt, {0, 0, 0}}}};
            sc_v3_store(pert.p[0].v, sc_v3_scale(d, R->push_force));
            rc = sc_rollout(s, sc_policy_source(&c), &pert, end, judge_state, &J, targets, &rr, &step_err);
        }
    } else {
        rc = sc_rollout(s, sc_policy_source(&c), NULL, end, judge_state, &J, targets, &rr, &step_err);
    }
    if (rc == SC_ENUMERIC) { J.fell_at = s->step; rc = SC_OK; } /* a blow-up is a fall too */
    else if (rc) *err = step_err;
    out->survived = (J.fell_at >= 0 ? J.fell_at : s->step) * s->o.dt;
    out->joint_error = J.n ? sqrt(J.se / J.n) : 0;
    out->deviation = J.nfrag ? J.dev / J.nfrag : 0;
    sc_sim_free(s);
    return rc;
}

int sc_policy_run(const sc_model *m, const sc_sim_opts *o, const sc_policy *p, const sc_control_dofs *dofs, int feedback, double seconds,
                  double max_tilt, double *survived, double *joint_error, sc_err *err)
{
    sc_features f;
    int rc = sc_features_init(&f, m, err);
    if (rc) return rc;
    sc_policy_trial R = {.m = m, .o = o, .p = p, .dofs = dofs, .f = &f, .feedback = feedback, .steps = lround(seconds / o->dt), .max_tilt = max_tilt};
    sc_trial_result res;
    rc = sc_policy_trial_run(&R, &res, err);
    *survived = res.survived;
    if (joint_error) *joint_error = res.joint_error;
    sc_features_free(&f);
    return rc;
}

/* ---- evaluation: every run is a task of the map ------------------------------------------- */

typedef struct eval_ctx {
    const sc_feedback_run *run;
    const sc_policy *p;
    const sc_features *f;
    sc_model *stiff;        /* [nstiff] models with scaled Young's modulus */
    int npush_tasks;        /* 2 * npush * ndir * nphase, then 2 * nstiff, then 2 survival runs */
} eval_ctx;

static int eval_task(void *ctx, int i, void *out, sc_err *err)
{
    eval_ctx *E = ctx;
    const sc_feedback_config *c = E->run->cfg;
    long cyc = sc_policy_cycle_steps(E->p), full = lround(c->eval_seconds / E->run->sim_opts->dt);
    sc_policy_trial R = {.m = E->run->m, .o = E->run->sim_opts, .p = E->p, .dofs = E->run->dofs, .f = E->f, .feedback = i % 2, .steps = full,
                         .max_tilt = c->max_tilt, .push_bone = c->push_bone};
    int t = i / 2;
    if (t < E->npush_tasks / 2) { /* pushes during the second cycle: magnitude, direction, phase */
        int ph = t % c->nphase, dir = (t / c->nphase) % c->ndir, mag = t / (c->nphase * c->ndir);
        R.push_force = c->push[mag];
        R.push_dir = dir;
        R.push_len = lround(c->push_duration / E->run->sim_opts->dt);
        R.push_step = cyc + cyc * ph / c->nphase;
        R.steps = R.push_step + R.push_len + (long)c->after_cycles * cyc;
    } else if ((t -= E->npush_tasks / 2) < c->nstiff) {
        R.m = &E->stiff[t];
    }
    return sc_policy_trial_run(&R, out, err);
}

int sc_feedback_evaluate(const sc_feedback_run *run, const sc_policy *p, sc_evaluation *e, sc_err *err)
{
    const sc_feedback_config *c = run->cfg;
    memset(e, 0, sizeof *e);
    sc_features f;
    int rc = sc_features_init(&f, run->m, err);
    if (rc) return rc;
    eval_ctx E = {run, p, &f, calloc((size_t)(c->nstiff ? c->nstiff : 1), sizeof(sc_model)), 2 * c->npush * c->ndir * c->nphase};
    int ntask = E.npush_tasks + 2 * c->nstiff + 2, stopped = 0;
    sc_trial_result *res = calloc((size_t)ntask, sizeof *res);
    int *owner = calloc((size_t)ntask, sizeof(int));
    if (!E.stiff || !res || !owner) rc = sc_fail(err, SC_EIO, "out of memory");
    for (int k = 0; !rc && k < c->nstiff; k++) {
        rc = sc_model_clone(run->m, &E.stiff[k], err);
        E.stiff[k].youngs *= c->stiffness[k];
    }
    if (!rc) rc = sc_par_map(run->par, ntask, sizeof *res, eval_task, &E, run->stop, res, owner, &stopped, err);
    if (!rc && stopped) rc = sc_fail(err, SC_EINTERRUPTED, "stopped by a signal during the evaluation");
    if (!rc) {
        long cyc = sc_policy_cycle_steps(p);
        for (int t = 0; t < E.npush_tasks / 2; t++) {
            int ph = t % c->nphase, dir = (t / c->nphase) % c->ndir, mag = t / (c->nphase * c->ndir);
            double need = (cyc + cyc * ph / c->nphase + lround(c->push_duration / run->sim_opts->dt) + (long)c->after_cycles * cyc) * run->sim_opts->dt;
            e->push_open[mag][dir][ph] = res[2 * t].survived >= need - 1e-9;
            e->push_closed[mag][dir][ph] = res[2 * t + 1].survived >= need - 1e-9;
        }
        for (int k = 0; k < c->nstiff; k++) {
            e->stiff_open_s[k] = res[E.npush_tasks + 2 * k].survived;
            e->stiff_closed_s[k] = res[E.npush_tasks + 2 * k + 1].survived;
        }
        int t = E.npush_tasks + 2 * c->nstiff;
        e->openloop_survived_s = res[t].survived;
        e->openloop_joint_error = res[t].joint_error;
        e->closedloop_survived_s = res[t + 1].survived;
        e->closedloop_joint_error = res[t + 1].joint_error;
    }
    for (int k = 0; E.stiff && k < c->nstiff; k++) sc_model_free(&E.stiff[k]);
    free(E.stiff);
    free(res);
    free(owner);
    sc_features_free(&f);
    return rc;
}

/* ---- guided learning -------------------------------------------------------------------- */

/* (features, offsets) pairs per fragment, gathered over the iterations; for fit: model, the
 * samples' transitions: (start features, [actions, end features]) */
typedef struct dataset {
    int ndof;
    long n, cap;
    int *frag;
    double *s, *o;  /* [n * SC_FEATURES], [n * ndof] */
} dataset;

static int data_add(dataset *d, int frag, const double *s, const double *o)
{
    if (d->n == d->cap) {
        long cap = d->cap ? 2 * d->cap : 4096;
        int *f = realloc(d->frag, sizeof(int) * (size_t)cap);
        if (f) d->frag = f;
        double *ns = realloc(d->s, sizeof(double) * SC_FEATURES * (size_t)cap);
        if (ns) d->s = ns;
        double *no = realloc(d->o, sizeof(double) * (size_t)d->ndof * (size_t)cap);
        if (no) d->o = no;
        if (!f || !ns || !no) return SC_EIO;
        d->cap = cap;
    }
    d->frag[d->n] = frag;
    memcpy(d->s + SC_FEATURES * d->n, s, sizeof(double) * SC_FEATURES);
    memcpy(d->o + (size_t)d->ndof * d->n, o, sizeof(double) * (size_t)d->ndof);
    d->n++;
    return SC_OK;
}

typedef struct guide {
    const sc_policy *p;
    const sc_features *f;
    int fragments;
    dataset *dyn;           /* fit: model: every sample's (start features, actions, end features) */
    int ndof, naux, rc;
    long base;              /* dyn's rows from earlier iterations */
} guide;

/* centre of a sample's offsets: the policy's output for its start state (features kept as aux) */
static void guide_center(void *ctx, int segment, const sc_sim *start, double *offset, double *aux)
{
    const guide *g = ctx;
    const sc_policy *p = g->p;
    int j = segment % g->fragments;
    sc_features_eval(g->f, start, aux);
    memcpy(offset, p->offset + (size_t)j * p->ndof, sizeof(double) * (size_t)p->ndof);
    double a[SC_MAX_ACTIONS];
    sc_policy_actions(p, j, aux, 1, a);
    for (int i = 0; i < p->nact; i++) offset[p->act[i]] = a[i];
}

/* rows [from, n) of a dataset, and rows appended from such bytes */
static void put_rows(FILE *f, const dataset *d, long from)
{
    size_t n = (size_t)(d->n - from);
    if (n == 0) return; /* an empty dataset has no arrays */
    fwrite(d->frag + from, sizeof(int), n, f);
    fwrite(d->s + (size_t)from * SC_FEATURES, sizeof(double), n * SC_FEATURES, f);
    fwrite(d->o + (size_t)from * (size_t)d->ndof, sizeof(double), n * (size_t)d->ndof, f);
}
static int get_rows(FILE *f, dataset *d, long n)
{
    long at = d->n;
    if (n == 0) return 1;
    static const double zero[SC_MAX_DOFS + SC_FEATURES];
    for (long r = 0; r < n; r++)
        if (data_add(d, 0, zero, zero)) return 0;
    size_t k = (size_t)n;
    return fread(d->frag + at, sizeof(int), k, f) == k && fread(d->s + (size_t)at * SC_FEATURES, sizeof(double), k * SC_FEATURES, f) == k * SC_FEATURES &&
           fread(d->o + (size_t)at * (size_t)d->ndof, sizeof(double), k * (size_t)d->ndof, f) == k * (size_t)d->ndof;
}

/* fit: model: this iteration's transitions ride in the sampler's checkpoint */
static int guide_save(void *ctx, unsigned char **bytes, size_t *n)
{
    const guide *g = ctx;
    char *p = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&p, &len);
    if (!f) return SC_EIO;
    int64_t rows = g->dyn->n - g->base;
    fwrite(&rows, sizeof rows, 1, f);
    put_rows(f, g->dyn, g->base);
    if (fclose(f)) { free(p); return SC_EIO; }
    *bytes = (unsigned char *)p;
    *n = len;
    return SC_OK;
}
static int guide_restore(void *ctx, const unsigned char *bytes, size_t n)
{
    guide *g = ctx;
    FILE *f = fmemopen((void *)bytes, n, "rb");
    if (!f) return SC_EIO;
    int64_t rows;
    g->dyn->n = g->base;
    int ok = fread(&rows, sizeof rows, 1, f) == 1 && rows >= 0 && (size_t)rows <= n && get_rows(f, g->dyn, (long)rows);
    fclose(f);
    return ok ? SC_OK : SC_EINPUT;
}

/* fit: model: the end state's features, after the start's in a sample's aux */
static void guide_finish(void *ctx, int segment, const sc_sim *end, double *aux)
{
    (void)segment;
    const guide *g = ctx;
    sc_features_eval(g->f, end, aux + SC_FEATURES);
}

/* fit: model: every sample that did not fail is a transition of its fragment */
static void guide_samples(void *ctx, int segment, int n, const double *records, const unsigned char *failed)
{
    guide *g = ctx;
    const sc_policy *p = g->p;
    double o[SC_MAX_ACTIONS + SC_FEATURES];
    for (int i = 0; i < n && !g->rc; i++) {
        if (failed[i]) continue;
        const double *r = records + (size_t)i * (size_t)(g->ndof + g->naux), *aux = r + g->ndof;
        for (int a = 0; a < p->nact; a++) o[a] = r[p->act[a]];
        memcpy(o + p->nact, aux + SC_FEATURES, sizeof(double) * SC_FEATURES);
        g->rc = data_add(g->dyn, segment % g->fragments, aux, o);
    }
}

/* Refits fragment j's law on its pairs: s_bar and a_bar the means; M by ridge regression on
 * features scaled to unit variance; the other DoFs' offsets the mean of the pairs'. */
static int refit(sc_policy *p, const dataset *d, int j, double ridge, long *pairs, double *sq_residual, sc_err *err)
{
    int na = p->nact, nd = p->ndof;
    long n = 0;
    for (long r = 0; r < d->n; r++) n += d->frag[r] == j;
    if (n < 2) return SC_OK;
    double mean_s[SC_FEATURES] = {0}, sd[SC_FEATURES] = {0}, mean_o[SC_MAX_DOFS] = {0};
    for (long r = 0; r < d->n; r++) {
        if (d->frag[r] != j) continue;
        for (int k = 0; k < SC_FEATURES; k++) mean_s[k] += d->s[SC_FEATURES * r + k] / n;
        for (int k = 0; k < nd; k++) mean_o[k] += d->o[(size_t)nd * r + k] / n;
    }
    for (long r = 0; r < d->n; r++) {
        if (d->frag[r] != j) continue;
        for (int k = 0; k < SC_FEATURES; k++) sd[k] += pow(d->s[SC_FEATURES * r + k] - mean_s[k], 2) / n;
    }
    for (int k = 0; k < SC_FEATURES; k++) sd[k] = sqrt(sd[k]) + 1e-6; /* a constant feature gets no weight */
    double *X = malloc(sizeof(double) * (size_t)n * SC_FEATURES), *Y = malloc(sizeof(double) * (size_t)n * na),
           *W = malloc(sizeof(double) * SC_FEATURES * (size_t)na);
    if (!X || !Y || !W) { free(X); free(Y); free(W); return sc_fail(err, SC_EIO, "out of memory"); }
    long q = 0;
    for (long r = 0; r < d->n; r++) {
        if (d->frag[r] != j) continue;
        for (int k = 0; k < SC_FEATURES; k++) X[q * SC_FEATURES + k] = (d->s[SC_FEATURES * r + k] - mean_s[k]) / sd[k];
        for (int i = 0; i < na; i++) Y[q * na + i] = d->o[(size_t)nd * r + p->act[i]] - mean_o[p->act[i]];
        q++;
    }
    int rc = sc_ridge((int)n, SC_FEATURES, na, X, Y, ridge * n, W, err);
    if (!rc) {
        memcpy(p->s_bar + (size_t)j * SC_FEATURES, mean_s, sizeof mean_s);
        memcpy(p->offset + (size_t)j * nd, mean_o, sizeof(double) * (size_t)nd);
        for (int i = 0; i < na; i++) {
            p->a_bar[(size_t)j * na + i] = mean_o[p->act[i]];
            for (int k = 0; k < SC_FEATURES; k++) p->M[((size_t)j * na + i) * SC_FEATURES + k] = W[k * na + i] / sd[k];
        }
        for (long r = 0; r < n; r++)
            for (int i = 0; i < na; i++) {
                double pred = 0;
                for (int k = 0; k < SC_FEATURES; k++) pred += X[r * SC_FEATURES + k] * W[k * na + i];
                *sq_residual += pow(Y[r * na + i] - pred, 2) / na;
            }
        *pairs += n;
    }
    free(X); free(Y); free(W);
    return rc;
}

/* fit: model: the regulated features (their indices in idx); returns their count */
static int model_features(const sc_feedback_config *c, int idx[SC_FEATURES])
{
    int nf = 0;
    for (int k = 0; k < SC_FEATURES; k++)
        if (c->model_feature[k]) idx[nf++] = k;
    return nf;
}

/* fit: model. Each fragment's map from the features at its start to those at its end, fitted on
 * every sample's transition by ridge regression on standardized columns, linear about the data's
 * means: x' = A_j x + B_j u (x: the regulated features, u: the actions), into A [nfrag * nf * nf]
 * and B [nfrag * nf * nact], zeroed by the caller (they stay zero for a fragment with too few
 * transitions). Returns the RMS one-step prediction error (in feature scales) in *error. */
static int fit_model_maps(const sc_policy *p, const dataset *dyn, const sc_feedback_config *c, double *A, double *B, double *error, sc_err *err)
{
    int na = p->nact, mf = p->nfrag, idx[SC_FEATURES], nf = model_features(c, idx);
    int nx = nf + na;
    double *X = NULL, *Y = NULL, *W = calloc((size_t)nx * nf, sizeof(double));
    int rc = SC_OK;
    if (!W) return sc_fail(err, SC_EIO, "out of memory");
    double sq = 0;
    long rows = 0;
    for (int j = 0; j < mf; j++) {
        long n = 0;
        for (long r = 0; r < dyn->n; r++) n += dyn->frag[r] == j;
        if (n < 2 * nx) continue; /* too few transitions: no model (A = B = 0), no feedback */
        double mx[SC_FEATURES + SC_MAX_ACTIONS] = {0}, sd[SC_FEATURES + SC_MAX_ACTIONS] = {0}, my[SC_FEATURES] = {0};
        free(X); free(Y);
        X = malloc(sizeof(double) * (size_t)n * nx);
        Y = malloc(sizeof(double) * (size_t)n * nf);
        if (!X || !Y) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
        long q = 0;
        for (long r = 0; r < dyn->n; r++) {
            if (dyn->frag[r] != j) continue;
            const double *st = dyn->s + (size_t)SC_FEATURES * r, *o = dyn->o + (size_t)dyn->ndof * r;
            for (int k = 0; k < nf; k++) X[q * nx + k] = st[idx[k]];
            for (int a = 0; a < na; a++) X[q * nx + nf + a] = o[a];
            for (int k = 0; k < nf; k++) Y[q * nf + k] = o[na + idx[k]];
            q++;
        }
        for (long r = 0; r < n; r++) {
            for (int k = 0; k < nx; k++) mx[k] += X[r * nx + k] / n;
            for (int k = 0; k < nf; k++) my[k] += Y[r * nf + k] / n;
        }
        for (long r = 0; r < n; r++)
            for (int k = 0; k < nx; k++) sd[k] += pow(X[r * nx + k] - mx[k], 2) / n;
        for (int k = 0; k < nx; k++) sd[k] = sqrt(sd[k]) + 1e-9;
        for (long r = 0; r < n; r++) {
            for (int k = 0; k < nx; k++) X[r * nx + k] = (X[r * nx + k] - mx[k]) / sd[k];
            for (int k = 0; k < nf; k++) Y[r * nf + k] -= my[k];
        }
        if ((rc = sc_ridge((int)n, nx, nf, X, Y, c->ridge * n, W, err))) goto done;
        for (int i = 0; i < nf; i++) {
            for (int k = 0; k < nf; k++) A[(j * nf + i) * nf + k] = W[(size_t)k * nf + i] / sd[k];
            for (int a = 0; a < na; a++) B[(j * nf + i) * na + a] = W[(size_t)(nf + a) * nf + i] / sd[nf + a];
        }
        for (long r = 0; r < n; r++)
            for (int i = 0; i < nf; i++) {
                double pred = 0;
                for (int k = 0; k < nx; k++) pred += X[r * nx + k] * W[(size_t)k * nf + i];
                sq += pow((Y[r * nf + i] - pred) / sc_feature_scale[idx[i]], 2) / nf;
            }
        rows += n;
    }
    *error = rows ? sqrt(sq / rows) : 0;
done:
    free(X); free(Y); free(W);
    return rc;
}

/* fit: model. The periodic linear-quadratic regulator of the fragment maps: the Riccati recursion
 * run backwards over `horizon` cycles with Q = diag(1 / scale^2) (sc_feature_scale) and R =
 * diag(action_cost / box^2) (the sampling box of each action DoF), and each fragment's law
 * M_j = -K_j from the recursion's first cycle. The laws regulate the features about s_bar_j. */
static int regulator_gains(sc_policy *p, const sc_feedback_config *c, const double *A, const double *B, const double *box, double action_cost,
                           sc_err *err)
{
    int na = p->nact, mf = p->nfrag, idx[SC_FEATURES], nf = model_features(c, idx);
    size_t F = (size_t)mf;
    double *K = calloc(F * na * nf, sizeof(double)), *Q = calloc((size_t)nf * nf, sizeof(double)), *R = calloc((size_t)na * na, sizeof(double));
    int rc = SC_OK;
    if (!K || !Q || !R) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    for (int k = 0; k < nf; k++) Q[k * nf + k] = 1 / pow(sc_feature_scale[idx[k]], 2);
    for (int a = 0; a < na; a++) {
        double bx = box[p->act[a]] > 0 ? box[p->act[a]] : 0.1;
        R[a * na + a] = action_cost / (bx * bx);
    }
    if ((rc = sc_lqr_periodic(nf, na, mf, A, B, Q, R, c->horizon, K, err))) goto done;
    memset(p->M, 0, sizeof(double) * F * na * SC_FEATURES);
    for (int j = 0; j < mf; j++)
        for (int a = 0; a < na; a++)
            for (int k = 0; k < nf; k++) p->M[((size_t)j * na + a) * SC_FEATURES + idx[k]] = -K[((size_t)j * na + a) * nf + k];
done:
    free(K); free(Q); free(R);
    return rc;
}

/* The guided samples' boxes for the next iteration. With residual exploration (as mass-SAMCON's
 * noise of the residual variance), once a fit exists: each DoF's spread of the pairs about what
 * the policy gives for their states (an action's regression residual, another DoF's deviation
 * from its fragment's mean offset), as the half-width sqrt(3) sigma of a uniform, kept within
 * [0.1, 1] x the configured box. A function of the pairs and the policy alone: a resumed run
 * recomputes the same boxes. */
static void exploration_boxes(const sc_policy *p, const dataset *d, const double *box0, int residual, double *box)
{
    int nd = p->ndof;
    memcpy(box, box0, sizeof(double) * (size_t)nd);
    if (!residual || d->n == 0) return;
    double sq[SC_MAX_DOFS] = {0}, a[SC_MAX_ACTIONS];
    for (long r = 0; r < d->n; r++) {
        int j = d->frag[r];
        const double *o = d->o + (size_t)nd * r, *mean = p->offset + (size_t)j * nd;
        for (int k = 0; k < nd; k++) sq[k] += pow(o[k] - mean[k], 2);
        const double *sb = p->s_bar + (size_t)j * SC_FEATURES, *s = d->s + (size_t)SC_FEATURES * r;
        for (int i = 0; i < p->nact; i++) {
            a[i] = p->a_bar[(size_t)j * p->nact + i];
            for (int k = 0; k < SC_FEATURES; k++) a[i] += p->M[((size_t)j * p->nact + i) * SC_FEATURES + k] * (s[k] - sb[k]);
            int dof = p->act[i];
            sq[dof] += pow(o[dof] - a[i], 2) - pow(o[dof] - mean[dof], 2); /* the residual replaces the deviation */
        }
    }
    for (int k = 0; k < nd; k++) {
        double half = sqrt(3 * fmax(sq[k], 0) / (double)d->n);
        box[k] = fmin(box0[k], fmax(0.1 * box0[k], half));
    }
}

/* the learner's state between iterations, for checkpoints */
typedef struct learner {
    int it;                 /* iterations done */
    sc_policy cur, best;
    dataset data, dyn;
    sc_feedback_result *r;
} learner;

static void put_policy(FILE *f, const sc_policy *p)
{
    size_t F = (size_t)p->nfrag;
    fwrite(p->offset, sizeof(double), F * (size_t)p->ndof, f);
    fwrite(p->s_bar, sizeof(double), F * SC_FEATURES, f);
    fwrite(p->a_bar, sizeof(double), F * (size_t)p->nact, f);
    fwrite(p->M, sizeof(double), F * (size_t)p->nact * SC_FEATURES, f);
}
static int get_policy(FILE *f, sc_policy *p)
{
    size_t F = (size_t)p->nfrag;
    return fread(p->offset, sizeof(double), F * (size_t)p->ndof, f) == F * (size_t)p->ndof &&
           fread(p->s_bar, sizeof(double), F * SC_FEATURES, f) == F * SC_FEATURES &&
           fread(p->a_bar, sizeof(double), F * (size_t)p->nact, f) == F * (size_t)p->nact &&
           fread(p->M, sizeof(double), F * (size_t)p->nact * SC_FEATURES, f) == F * (size_t)p->nact * SC_FEATURES;
}

/* The learner's state as bytes (the same layout every rank can read back). */
static int serialize_learner(const learner *L, uint64_t run_hash, unsigned char **buf, size_t *len)
{
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    if (!f) return SC_EIO;
    int64_t hdr[5] = {0x53434c5241524e32ll, (int64_t)run_hash, L->it, L->data.n, L->dyn.n};
    fwrite(hdr, sizeof hdr, 1, f);
    put_policy(f, &L->cur);
    put_policy(f, &L->best);
    put_rows(f, &L->data, 0);
    put_rows(f, &L->dyn, 0);
    const sc_feedback_result *r = L->r;
    fwrite(&r->best_iteration, sizeof r->best_iteration, 1, f);
    fwrite(&r->niter, sizeof r->niter, 1, f);
    fwrite(r->iter, sizeof r->iter, 1, f);
    fwrite(&r->wall_seconds, sizeof r->wall_seconds, 1, f);
    fwrite(&r->samples, sizeof r->samples, 1, f);
    if (fclose(f)) { free(p); return SC_EIO; }
    *buf = (unsigned char *)p;
    *len = n;
    return SC_OK;
}

static int deserialize_learner(learner *L, uint64_t run_hash, const unsigned char *buf, size_t len, sc_err *err)
{
    FILE *f = fmemopen((void *)buf, len, "rb");
    if (!f) return sc_fail(err, SC_EIO, "out of memory");
    int64_t hdr[5];
    int ok = fread(hdr, sizeof hdr, 1, f) == 1 && hdr[0] == 0x53434c5241524e32ll;
    if (ok && (uint64_t)hdr[1] != run_hash) {
        fclose(f);
        return sc_fail(err, SC_EINPUT, "checkpoint: made for other inputs (config, character, controller, seed or build differ)");
    }
    ok = ok && hdr[2] >= 0 && hdr[3] >= 0 && hdr[4] >= 0 && get_policy(f, &L->cur) && get_policy(f, &L->best);
    ok = ok && get_rows(f, &L->data, (long)hdr[3]) && get_rows(f, &L->dyn, (long)hdr[4]);
    ok = ok && fread(&L->r->best_iteration, sizeof L->r->best_iteration, 1, f) == 1 && fread(&L->r->niter, sizeof L->r->niter, 1, f) == 1 &&
         fread(L->r->iter, sizeof L->r->iter, 1, f) == 1 && fread(&L->r->wall_seconds, sizeof L->r->wall_seconds, 1, f) == 1 &&
         fread(&L->r->samples, sizeof L->r->samples, 1, f) == 1;
    fclose(f);
    if (!ok) return sc_fail(err, SC_EINPUT, "checkpoint: damaged or truncated");
    L->it = (int)hdr[2];
    return SC_OK;
}

static int write_learner(const sc_feedback_run *run, const learner *L, sc_err *err)
{
    unsigned char *buf;
    size_t len;
    if (serialize_learner(L, run->run_hash, &buf, &len)) return sc_fail(err, SC_EIO, "out of memory writing the checkpoint");
    sc_checkpoint_info info = {"softcon.feedback_checkpoint/1", "learn-feedback after its last completed iteration: continue it with --resume",
                               "/learner", "the policies, the regression pairs and the history, softcon's own layout", "iterations_done", L->it,
                               run->run_hash};
    int rc = sc_checkpoint_write(run->checkpoint, &info, buf, len, err);
    free(buf);
    return rc;
}

static int read_learner(const sc_feedback_run *run, learner *L, sc_err *err)
{
    unsigned char *data;
    size_t n;
    int rc = sc_par_rank(run->par) == 0 ? sc_checkpoint_read(run->checkpoint, "/learner", &data, &n, err) : SC_OK;
    rc = sc_par_share_bytes(run->par, rc, &data, &n, err);
    if (rc) return rc;
    rc = deserialize_learner(L, run->run_hash, data, n, err);
    free(data);
    if (rc) sc_err_prefix(err, "%s: ", run->checkpoint);
    return rc;
}

int sc_policy_copy(const sc_policy *src, sc_policy *dst, sc_err *err)
{
    int rc = sc_policy_alloc(dst, src->nb, src->ndof, src->nact, src->nfrag, src->nbase, err);
    if (rc) return rc;
    size_t F = (size_t)src->nfrag, B = (size_t)src->nbase * (size_t)src->nb * 4;
    memcpy(dst->act, src->act, sizeof src->act);
    memcpy(dst->steps, src->steps, sizeof(long) * F);
    memcpy(dst->ref_t0, src->ref_t0, sizeof(double) * F);
    memcpy(dst->ref_t1, src->ref_t1, sizeof(double) * F);
    memcpy(dst->offset, src->offset, sizeof(double) * F * (size_t)src->ndof);
    memcpy(dst->s_bar, src->s_bar, sizeof(double) * F * SC_FEATURES);
    memcpy(dst->a_bar, src->a_bar, sizeof(double) * F * (size_t)src->nact);
    memcpy(dst->M, src->M, sizeof(double) * F * (size_t)src->nact * SC_FEATURES);
    memcpy(dst->base_time, src->base_time, sizeof(double) * (size_t)src->nbase);
    memcpy(dst->base_quat, src->base_quat, sizeof(double) * B);
    memcpy(dst->ref_quat, src->ref_quat, sizeof(double) * B);
    memcpy(dst->start_quat, src->start_quat, sizeof(double) * 4 * (size_t)src->nb);
    memcpy(dst->start_w, src->start_w, sizeof(double) * 3 * (size_t)src->nb);
    dst->max_action = src->max_action;
    dst->period = src->period;
    dst->mean_root_height = src->mean_root_height;
    memcpy(dst->start_root, src->start_root, sizeof src->start_root);
    memcpy(dst->start_vel, src->start_vel, sizeof src->start_vel);
    return SC_OK;
}

typedef struct { const sc_feedback_run *run; int it; } iteration_progress;
static void samcon_progress(void *ctx, int done, int nseg, const char *line)
{
    const iteration_progress *ip = ctx;
    char buf[640];
    snprintf(buf, sizeof buf, "iteration %d/%d, %s", ip->it + 1, ip->run->cfg->iterations, line);
    (void)done;
    (void)nseg;
    ip->run->progress(ip->run->progress_ctx, buf);
}

/* the closed-loop test of an iteration's candidate policies: one run of each at each learning stiffness */
typedef struct { const sc_feedback_run *run; const sc_policy *const *p; const sc_model *const *models; int nmodels; } survival_ctx;
static int survival_task(void *ctx, int i, void *out, sc_err *err)
{
    const survival_ctx *sv = ctx;
    sc_trial_result *res = out;
    return sc_policy_run(sv->models[i % sv->nmodels], sv->run->sim_opts, sv->p[i / sv->nmodels], sv->run->dofs, 1, sv->run->cfg->eval_seconds,
                         sv->run->cfg->max_tilt, &res->survived, &res->joint_error, err);
}

void sc_feedback_result_free(sc_feedback_result *r)
{
    sc_policy_free(&r->policy);
    free(r->role_of);
    r->role_of = NULL;
}

int sc_feedback_learn(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err)
{
    const sc_feedback_config *c = run->cfg;
    const sc_model *m = run->m;
    memset(r, 0, sizeof *r);
    if (c->method == SC_LEARN_SEARCH) return sc_feedback_search(run, r, err);
    learner L = {0};
    L.r = r;
    L.data.ndof = run->dofs->n;
    L.dyn.ndof = c->nact + SC_FEATURES;
    sc_features f;
    sc_cycle cy;
    sc_reference rep;
    int have_rep = 0;
    long *seg_steps = NULL;
    char inner[4200];
    snprintf(inner, sizeof inner, "%s.samcon", run->checkpoint);
    /* the models of the learning stiffness factors (the character's own where the factor is 1) */
    const sc_model *models[SC_MAX_EVAL];
    sc_model scaled[SC_MAX_EVAL];
    int nscaled = 0;
    int rc = sc_features_init(&f, m, err);
    if (rc) return rc;
    for (int k = 0; k < c->nlearn_stiff && !rc; k++) {
        models[k] = m;
        if (c->learn_stiffness[k] == 1) continue;
        if ((rc = sc_model_clone(m, &scaled[nscaled], err))) break;
        scaled[nscaled].youngs *= c->learn_stiffness[k];
        models[k] = &scaled[nscaled++];
    }
    if (rc) goto done;
    if ((rc = sc_policy_from_openloop(run->ol, run->ref, m, run->dofs, c, &L.cur, err)) || (rc = sc_policy_copy(&L.cur, &L.best, err)) ||
        (rc = sc_cycle_from_times(run->ref, run->ol->cycle.t0, run->ol->cycle.t1, &cy, err)) ||
        (rc = sc_cycle_repeat(run->ref, &cy, c->cycles, &rep, err)))
        goto done;
    have_rep = 1;
    int mf = L.cur.nfrag, nseg = mf * c->cycles;
    if (!(seg_steps = malloc(sizeof(long) * (size_t)nseg))) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    for (int k = 0; k < nseg; k++) seg_steps[k] = L.cur.steps[k % mf];
    /* the guided runs: the sampler's settings, with the feedback's sample counts, boxes scaled by
       `noise`, the fragments' own durations, over the repeated cycle */
    sc_samcon_config scfg = *run->sampling;
    scfg.samples = c->samples;
    scfg.elites = c->elites;
    for (int d = 0; d < run->dofs->n; d++) scfg.box[d] *= c->noise;
    double box0[SC_MAX_DOFS];
    memcpy(box0, scfg.box, sizeof(double) * (size_t)run->dofs->n);
    scfg.time_scaling = 0;
    scfg.scale_min = scfg.scale_max = 1;
    scfg.start = scfg.end = 0;
    scfg.segment = L.cur.period / mf;
    scfg.cycle = SC_CYCLE_NONE;
    if (run->resume && access(run->checkpoint, F_OK) == 0 && (rc = read_learner(run, &L, err))) goto done;
    double wall0 = sc_wall_time(), wall_before = r->wall_seconds;
    while (L.it < c->iterations) {
        int i = L.it;
        /* fit: model: the residual of regressed actions means nothing to an LQR law: boxes fixed */
        exploration_boxes(&L.cur, &L.data, box0, c->explore_residual && !c->fit_model, scfg.box);
        if (!c->all_data) L.dyn.n = 0;
        int naux = c->fit_model ? 2 * SC_FEATURES : SC_FEATURES;
        guide g = {&L.cur, &f, mf, &L.dyn, run->dofs->n, naux, SC_OK, L.dyn.n};
        iteration_progress ip = {run, i};
        sc_samcon_run sr = {.m = models[i % c->nlearn_stiff], .sim_opts = run->sim_opts, .ref = &rep, .cycle = &cy, .fragments = mf,
                            .dofs = run->dofs, .cfg = &scfg,
                            .seed = sc_hash_i64(run->seed, i), .run_hash = sc_hash_i64(run->run_hash, i), .checkpoint = inner,
                            .resume = access(inner, F_OK) == 0, .stop = run->stop, .progress = run->progress ? samcon_progress : NULL,
                            .progress_ctx = &ip, .par = run->par, .center = guide_center, .center_ctx = &g, .naux = naux,
                            .segment_steps = seg_steps};
        if (c->fit_model) { /* every sample's transition, kept in the sampler's checkpoints too */
            sr.finish = guide_finish;
            sr.on_samples = guide_samples;
            sr.save_gathered = guide_save;
            sr.restore_gathered = guide_restore;
        }
        sc_samcon_result sres;
        if ((rc = sc_samcon(&sr, &sres, err))) goto done;
        if (g.rc) { sc_samcon_result_free(&sres); rc = sc_fail(err, SC_EIO, "out of memory for the samples' transitions"); goto done; }
        if (!c->all_data) L.data.n = 0;
        long idx = 0;
        for (int k = 0; k < sres.nseg && !rc; k++)
            for (int e = 0; e < sres.nelites[k] && !rc; e++, idx++) {
                if (c->path_pairs && !sres.elite_kept[idx]) continue; /* a dead end */
                if (data_add(&L.data, k % mf, sres.elite_aux + (size_t)idx * naux, sres.elite_offset + (size_t)idx * run->dofs->n))
                    rc = sc_fail(err, SC_EIO, "out of memory for the regression pairs");
            }
        sc_learning_iteration *it = &r->iter[i];
        it->samples = sres.samples;
        r->samples += sres.samples;
        sc_samcon_result_free(&sres);
        double sq = 0;
        for (int j = 0; j < mf && !rc; j++) rc = refit(&L.cur, &L.data, j, c->ridge, &it->pairs, &sq, err);
        if (rc) goto done;
        it->residual = it->pairs ? sqrt(sq / it->pairs) : 0;
        /* the gains of each action cost (fit: model), tested closed loop at every learning stiffness */
        int ncand = c->fit_model ? c->ncost : 1, nst = c->nlearn_stiff;
        sc_policy cand[SC_MAX_COSTS];
        const sc_policy *cands[SC_MAX_COSTS] = {&L.cur};
        memset(cand, 0, sizeof cand);
        if (c->fit_model) { /* the maps once, then the regulator of each cost */
            int idx[SC_FEATURES], nf = model_features(c, idx);
            size_t F = (size_t)mf;
            double *A = calloc(F * nf * nf, sizeof(double)), *B = calloc(F * nf * (size_t)L.cur.nact, sizeof(double));
            rc = A && B ? fit_model_maps(&L.cur, &L.dyn, c, A, B, &it->model_error, err) : sc_fail(err, SC_EIO, "out of memory");
            for (int k = 0; k < ncand && !rc; k++) {
                cands[k] = &cand[k];
                if (!(rc = sc_policy_copy(&L.cur, &cand[k], err))) rc = regulator_gains(&cand[k], c, A, B, run->sampling->box, c->action_cost[k], err);
            }
            free(A);
            free(B);
        }
        survival_ctx sv = {run, cands, models, nst};
        sc_trial_result er[SC_MAX_COSTS * SC_MAX_EVAL];
        int owner[SC_MAX_COSTS * SC_MAX_EVAL], stopped = 0;
        if (!rc) rc = sc_par_map(run->par, ncand * nst, sizeof er[0], survival_task, &sv, run->stop, er, owner, &stopped, err);
        if (!rc && stopped) rc = sc_fail(err, SC_EINTERRUPTED, "stopped by a signal in iteration %d; the learning up to there is in %s", i + 1, run->checkpoint);
        /* a policy for the stiffness it learned from is judged by its mean time before a fall over
           them (the least would rank a policy that falls at once everywhere above one that only
           falls at one factor); of the action costs, the gains that go furthest (then track best) are kept */
        int chosen = 0;
        double mean[SC_MAX_COSTS], jerr[SC_MAX_COSTS];
        for (int k = 0; !rc && k < ncand; k++) {
            mean[k] = jerr[k] = 0;
            for (int q = 0; q < nst; q++) {
                mean[k] += er[k * nst + q].survived / nst;
                jerr[k] += er[k * nst + q].joint_error / nst;
            }
            it->cost_survived[k] = mean[k];
            it->cost_joint_error[k] = jerr[k];
            if (k && (mean[k] > mean[chosen] + 1e-9 || (fabs(mean[k] - mean[chosen]) <= 1e-9 && jerr[k] < jerr[chosen]))) chosen = k;
        }
        if (!rc && c->fit_model) {
            sc_policy_free(&L.cur);
            L.cur = cand[chosen];
            memset(&cand[chosen], 0, sizeof cand[chosen]);
            it->action_cost = c->action_cost[chosen];
        }
        for (int k = 0; k < ncand; k++) sc_policy_free(&cand[k]);
        if (rc) goto done;
        it->survived_s = mean[chosen];
        it->joint_error = jerr[chosen];
        for (int q = 0; q < nst; q++) it->survived_at[q] = er[chosen * nst + q].survived;
        const sc_learning_iteration *b = r->niter ? &r->iter[r->best_iteration] : NULL;
        if (!b || it->survived_s > b->survived_s + 1e-9 || (fabs(it->survived_s - b->survived_s) <= 1e-9 && it->joint_error < b->joint_error)) {
            sc_policy_free(&L.best);
            if ((rc = sc_policy_copy(&L.cur, &L.best, err))) goto done;
            r->best_iteration = i;
        }
        L.it = i + 1;
        r->niter = L.it;
        r->wall_seconds = wall_before + (sc_wall_time() - wall0);
        if (run->progress && sc_par_rank(run->par) == 0) {
            char line[1024], model[128] = "", at[400] = "", sampled[64] = "";
            if (c->nlearn_stiff > 1) snprintf(sampled, sizeof sampled, " (sampled at %g x Young's modulus)", c->learn_stiffness[i % c->nlearn_stiff]);
            if (c->fit_model)
                snprintf(model, sizeof model, ", %ld transitions, model error %.3f (feature scales)", L.dyn.n, it->model_error);
            for (int k = 0, o = 0; c->nlearn_stiff > 1 && k < c->nlearn_stiff && o < (int)sizeof at - 40; k++)
                o += snprintf(at + o, sizeof at - (size_t)o, "%s%.1f s at %g x E", k ? ", " : " (", it->survived_at[k], c->learn_stiffness[k]);
            if (c->nlearn_stiff > 1) strcat(at, ")");
            for (int k = 0, o = (int)strlen(at); c->fit_model && c->ncost > 1 && k < c->ncost && o < (int)sizeof at - 60; k++)
                o += snprintf(at + o, sizeof at - (size_t)o, "%s%.1f s with action cost %g%s", k ? ", " : "; ", it->cost_survived[k], c->action_cost[k],
                              c->action_cost[k] == it->action_cost ? " (kept)" : "");
            snprintf(line, sizeof line, "iteration %d/%d%s: %ld samples, %ld regression pairs, action residual %.3f rad%s; closed loop went %.1f of %.1f s%s "
                     "(joint error %.1f deg); best so far: iteration %d",
                     i + 1, c->iterations, sampled, it->samples, it->pairs,
                     it->residual, model, it->survived_s, c->eval_seconds, at, it->joint_error * 180 / SC_PI, r->best_iteration + 1);
            run->progress(run->progress_ctx, line);
        }
        if (sc_par_rank(run->par) == 0) {
            rc = write_learner(run, &L, err);
            if (!rc) unlink(inner);
        }
        if (sc_par_any(run->par, rc != SC_OK)) { if (!rc) rc = sc_fail(err, SC_EIO, "stopped: rank 0 could not write the checkpoint"); goto done; }
    }
    rc = sc_policy_copy(&L.best, &r->policy, err);
done:
    sc_policy_free(&L.cur);
    sc_policy_free(&L.best);
    free(L.data.frag); free(L.data.s); free(L.data.o);
    free(L.dyn.frag); free(L.dyn.s); free(L.dyn.o);
    free(seg_steps);
    if (have_rep) sc_reference_free(&rep);
    for (int k = 0; k < nscaled; k++) sc_model_free(&scaled[k]);
    sc_features_free(&f);
    return rc;
}

/* ---- policy.h5 -------------------------------------------------------------------------- */

int sc_policy_write(sc_h5 *f, const sc_policy *p, const sc_model *m, const sc_control_dofs *dofs, sc_err *err)
{
    size_t F = (size_t)p->nfrag, A = (size_t)p->nact, D = (size_t)p->ndof, nb = (size_t)p->nb, NB = (size_t)p->nbase;
    const char *names[SC_SIM_MAX_BONES], *act[SC_MAX_ACTIONS], *dn[SC_MAX_DOFS];
    for (size_t b = 0; b < nb; b++) names[b] = m->bone_name[b];
    for (size_t i = 0; i < A; i++) act[i] = dofs->name[p->act[i]];
    for (size_t d = 0; d < D; d++) dn[d] = dofs->name[d];
    int *steps = malloc(sizeof(int) * F), *adof = malloc(sizeof(int) * (A ? A : 1)), rc;
    if (!steps || !adof) { free(steps); free(adof); return sc_fail(err, SC_EIO, "out of memory"); }
    for (size_t j = 0; j < F; j++) steps[j] = (int)p->steps[j];
    for (size_t i = 0; i < A; i++) adof[i] = p->act[i];
#define TRY(x) do { if ((rc = (x))) goto done; } while (0)
    TRY(sc_h5_write_strings(f, "/bones/names", nb, names, "the character's bones, in the order of every per-bone dataset", err));
    TRY(sc_h5_group(f, "/policy", "a = a_bar + M (s - s_bar) per fragment, on the action DoFs; the other DoFs hold the fragment's offsets", err));
    TRY(sc_h5_write_strings(f, "/policy/features", SC_FEATURES, sc_feature_names, "the state s, in the root's heading frame (lib/learn/policy.h)", err));
    TRY(sc_h5_write_strings(f, "/policy/feature_units", SC_FEATURES, sc_feature_units, "units of each feature", err));
    TRY(sc_h5_write_strings(f, "/policy/actions", A, act, "the control DoFs the policy sets (rad)", err));
    TRY(sc_h5_write_i32(f, "/policy/action_dof", 1, &A, adof, "index of each action in /policy/dof_names", err));
    TRY(sc_h5_write_strings(f, "/policy/dof_names", D, dn, "every control DoF: bone.x|y|z of a ball joint, or a hinge", err));
    TRY(sc_h5_write_i32(f, "/policy/steps", 1, &F, steps, "simulated steps of each fragment", err));
    TRY(sc_h5_write_f64(f, "/policy/ref_t0", 1, &F, p->ref_t0, "s", "start of the fragment's span of the cycle", err));
    TRY(sc_h5_write_f64(f, "/policy/ref_t1", 1, &F, p->ref_t1, "s", "end of the span", err));
    TRY(sc_h5_write_f64(f, "/policy/offsets", 2, (size_t[]){F, D}, p->offset, "rad", "open-loop PD target offsets of each fragment", err));
    TRY(sc_h5_write_f64(f, "/policy/s_bar", 2, (size_t[]){F, SC_FEATURES}, p->s_bar, "see feature_units", "the state each fragment's law is centred on", err));
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
    TRY(sc_reference_write_character(f, m, err));
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
#define TRY(x) do { if ((rc = (x))) goto done; } while (0)
    TRY(sc_h5_group(f, "/learning", "guided learning (Liu et al. 2016): one row per iteration", err));
    TRY(sc_h5_attr_str(f, "/learning", "method",
                       c->fit_model ? "guided learning: sampling centred on the policy's output; each fragment's feature map fitted on every "
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
        double *chosen = calloc(N, sizeof(double)), *cs = calloc(N * C, sizeof(double)), *ce = calloc(N * C, sizeof(double));
        if (!chosen || !cs || !ce) { free(chosen); free(cs); free(ce); rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
        for (int i = 0; i < r->niter; i++) {
            chosen[i] = r->iter[i].action_cost;
            memcpy(cs + (size_t)i * C, r->iter[i].cost_survived, sizeof(double) * C);
            memcpy(ce + (size_t)i * C, r->iter[i].cost_joint_error, sizeof(double) * C);
        }
        rc = sc_h5_write_f64(f, "/learning/action_costs", 1, &C, c->action_cost, "1", "the candidate action costs (R = cost / box^2)", err);
        if (!rc) rc = sc_h5_write_f64(f, "/learning/action_cost", 1, &N, chosen, "1", "the action cost whose gains each iteration kept", err);
        if (!rc) rc = sc_h5_write_f64(f, "/learning/cost_survived", 2, d2, cs, "s",
                                      "closed loop with each candidate's gains: the mean survival over /learning/stiffness", err);
        if (!rc) rc = sc_h5_write_f64(f, "/learning/cost_joint_error", 2, d2, ce, "rad", "... and their mean RMS joint error", err);
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
    TRY(sc_h5_write_f64(f, "/learning/survived", 1, &N, a, "s", "closed loop until the fall (or the end of the test); the mean over /learning/stiffness", err));
    {
        size_t S = (size_t)c->nlearn_stiff, d2[2] = {N, S};
        double *at = calloc(N * S, sizeof(double));
        if (!at) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
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
#define TRY(x) do { if ((rc = (x))) goto done; } while (0)
    TRY(sc_h5_group(f, "/learning", "CMA-ES (diagonal covariance) over the shared gains: one row per generation", err));
    TRY(sc_h5_attr_i64(f, "/learning", "candidates", r->niter ? r->iter[0].samples / sc->rollouts : 0, err));
    TRY(sc_h5_attr_i64(f, "/learning", "runs_per_candidate", sc->rollouts, err));
    TRY(sc_h5_attr_f64(f, "/learning", "run_seconds", sc->seconds, err));
    TRY(sc_h5_attr_str(f, "/learning", "method", "search: the feedback gains optimized by CMA-ES on closed-loop runs (Liu et al. 2012)", err));
    TRY(sc_h5_attr_i64(f, "/learning", "chosen_generation", r->best_iteration, err));
    TRY(sc_h5_attr_f64(f, "/learning", "wall_seconds", r->wall_seconds, err));
    TRY(sc_h5_attr_i64(f, "/learning", "runs", r->samples, err));
    TRY(sc_h5_attr_f64(f, "/learning", "push_N", sc->push, err));
    TRY(sc_h5_write_f64(f, "/learning/score", 1, &N, a, "1", "the generation's best candidate: mean over its runs of survived / seconds - 0.1 (1 - exp(-deviation / 4))", err));
    TRY(sc_h5_write_f64(f, "/learning/mean_score", 1, &N, a + N, "1", "the generation's mean score", err));
    TRY(sc_h5_write_f64(f, "/learning/sigma", 1, &N, a + 2 * N, "1", "CMA-ES step size, in feature-scale units", err));
    TRY(sc_h5_write_f64(f, "/learning/survived", 1, &N, a + 3 * N, "s", "the best candidate's runs, mean time until the fall", err));
    TRY(sc_h5_write_f64(f, "/learning/joint_error", 1, &N, a + 4 * N, "rad", "the best candidate's RMS joint angle error against the cycle's reference", err));
    TRY(sc_h5_write_f64(f, "/learning/runs", 1, &N, a + 5 * N, "1", "closed-loop runs simulated", err));
    TRY(sc_h5_write_strings(f, "/learning/roles", R, roles, "stance_X / swing_X: the leg DoF X of the fragment's stance or swing side; else the DoF", err));
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
    double rate[2][SC_MAX_EVAL], youngs[SC_MAX_EVAL], largest[2][4];
    static const char *const dirs[4] = {"front", "back", "left", "right"};
    for (size_t q = 0; q < M; q++) {
        int so = 0, sc = 0;
        for (size_t d = 0; d < Dn; d++)
            for (size_t ph = 0; ph < P; ph++) {
                po[(q * Dn + d) * P + ph] = e->push_open[q][d][ph];
                pc[(q * Dn + d) * P + ph] = e->push_closed[q][d][ph];
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
#define TRY(x) do { if ((rc = (x))) goto done; } while (0)
    TRY(c->method == SC_LEARN_SEARCH ? write_search_history(f, c, r, err) : write_guided_history(f, c, r, err));
    TRY(sc_h5_group(f, "/evaluation", "pushes and stiffness, open loop (M = 0) and closed loop alike", err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "openloop_survived_s", e->openloop_survived_s, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "closedloop_survived_s", e->closedloop_survived_s, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "openloop_joint_error_rad", e->openloop_joint_error, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "closedloop_joint_error_rad", e->closedloop_joint_error, err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "test_seconds", c->eval_seconds, err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_magnitude", 1, &M, c->push, "N", "push forces tried", err));
    TRY(sc_h5_write_strings(f, "/evaluation/push_direction", Dn, dirs, "in the character's heading frame when the push starts", err));
    TRY(sc_h5_attr_f64(f, "/evaluation", "push_duration_s", c->push_duration, err));
    TRY(sc_h5_attr_str(f, "/evaluation", "push_bone", run->m->bone_name[c->push_bone], err));
    TRY(sc_h5_attr_i64(f, "/evaluation", "phases", c->nphase, err));
    TRY(sc_h5_attr_i64(f, "/evaluation", "cycles_after_push", c->after_cycles, err));
    TRY(sc_h5_write_i32(f, "/evaluation/push_success_openloop", 3, (size_t[]){M, Dn, P}, po, "1: still going after the push (magnitude, direction, phase)", err));
    TRY(sc_h5_write_i32(f, "/evaluation/push_success_closedloop", 3, (size_t[]){M, Dn, P}, pc, "the same with feedback", err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_success_rate_openloop", 1, &M, rate[0], "1", "over directions and phases, per magnitude", err));
    TRY(sc_h5_write_f64(f, "/evaluation/push_success_rate_closedloop", 1, &M, rate[1], "1", "the same with feedback", err));
    TRY(sc_h5_write_f64(f, "/evaluation/largest_push_openloop", 1, &Dn, largest[0], "N", "largest magnitude survived at every phase, per direction", err));
    TRY(sc_h5_write_f64(f, "/evaluation/largest_push_closedloop", 1, &Dn, largest[1], "N", "the same with feedback", err));
    if (c->nstiff) {
        TRY(sc_h5_write_f64(f, "/evaluation/stiffness_factor", 1, &S, c->stiffness, "1", "Young's modulus / the character's", err));
        TRY(sc_h5_write_f64(f, "/evaluation/youngs_modulus", 1, &S, youngs, "Pa", "Young's modulus run", err));
        TRY(sc_h5_write_f64(f, "/evaluation/stiffness_survived_openloop", 1, &S, e->stiff_open_s, "s", "time until the fall (test length: completed)", err));
        TRY(sc_h5_write_f64(f, "/evaluation/stiffness_survived_closedloop", 1, &S, e->stiff_closed_s, "s", "the same with feedback", err));
    }
#undef TRY
done:
    free(po);
    free(pc);
    return rc;
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
    char *schema = NULL, *hash = NULL, **names = NULL, **feat = NULL, **dn = NULL;
    size_t nn = 0, nf = 0, nd = 0, F = 0, A = 0, NB = 0;
    int *steps = NULL, *adof = NULL;
    double *v[12] = {0};
    long long frag = 0;
#define TRY(x) do { if ((rc = (x))) goto done; } while (0)
#define BAD(...) do { rc = sc_fail(err, SC_EINPUT, __VA_ARGS__); goto done; } while (0)
    TRY(sc_h5_read_attr_str(f, "/", "schema", &schema, err));
    if (strcmp(schema, SC_POLICY_SCHEMA)) BAD("%s: schema '%s', expected a policy.h5 (%s)", path, schema, SC_POLICY_SCHEMA);
    TRY(sc_h5_read_attr_str(f, "/", "character_hash", &hash, err));
    if (strtoull(hash, NULL, 16) != sc_model_hash(m)) BAD("%s: a policy for another character (its character_hash %s differs from this character's)", path, hash);
    TRY(sc_h5_read_strings(f, "/bones/names", &nn, &names, err));
    if (nn != (size_t)m->nbones) BAD("%s:/bones/names: %zu bones, the character has %d", path, nn, m->nbones);
    TRY(sc_h5_read_strings(f, "/policy/features", &nf, &feat, err));
    if (nf != SC_FEATURES) BAD("%s:/policy/features: %zu features, this build's policies have %d", path, nf, SC_FEATURES);
    for (size_t k = 0; k < nf; k++)
        if (strcmp(feat[k], sc_feature_names[k])) BAD("%s:/policy/features: feature %zu is '%s', unknown here (expected '%s')", path, k, feat[k], sc_feature_names[k]);
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
    size_t dims[][3] = {{F, 0, 0}, {F, 0, 0}, {F, nd, 0}, {F, SC_FEATURES, 0}, {F, A, 0}, {F, A, SC_FEATURES}, {NB, nn, 4}, {NB, nn, 4}, {3}, {3}, {nn, 4}, {nn, 3}};
    const char *paths[] = {"/policy/ref_t0", "/policy/ref_t1", "/policy/offsets", "/policy/s_bar", "/policy/a_bar", "/policy/M",
                           "/cycle/targets", "/cycle/reference_quat", "/start/root_pos", "/start/root_vel", "/start/local_quat", "/start/local_ang_vel"};
    double *dst[] = {p->ref_t0, p->ref_t1, p->offset, p->s_bar, p->a_bar, p->M, p->base_quat, p->ref_quat, p->start_root, p->start_vel, p->start_quat, p->start_w};
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
        if (rc) { free(x); goto done; }
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
    free(schema); free(hash); free(steps); free(adof); free(v[0]);
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

int sc_policy_read_image(const void *data, size_t size, const char *name, const sc_model *m, const sc_control_dofs *dofs, sc_policy *p,
                         sc_err *err)
{
    memset(p, 0, sizeof *p);
    policy_arg a = {m, dofs, p};
    return sc_h5_read_image(data, size, name, policy_reader, &a, err);
}

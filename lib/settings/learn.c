/* The `feedback:` section (settings/learn.h). */
#include <string.h>
#include "settings/learn.h"

static int read_search_config(sc_cfg_node *f, sc_search_config *c, sc_err *err)
{
    sc_cfg_node *sr, *list;
    char w[256];
    long n;
    int rc;
#define TRY(x) \
    if ((rc = (x))) return rc
    TRY(sc_cfg_section(f, "search", &sr, err));
    TRY(sc_cfg_int(sr, "generations", 30, 1, SC_MAX_GENERATIONS, &n, err));
    c->generations = (int)n;
    TRY(sc_cfg_int(sr, "population", 0, 0, 10000, &n, err));
    c->population = (int)n;
    if (c->population == 1)
        return sc_fail(err, SC_EINPUT, "%s: feedback.search.population = 1: CMA-ES needs at least 2 (0: its default)",
                       sc_cfg_where(sc_cfg_get(sr, "population"), w, sizeof w));
    TRY(sc_cfg_double_range(sr, "sigma", 0.1, 1e-6, 10, &c->sigma, err));
    TRY(sc_cfg_double_range(sr, "seconds", 10, 0.1, 1e5, &c->seconds, err));
    TRY(sc_cfg_int(sr, "rollouts", 1, 1, 64, &n, err));
    c->rollouts = (int)n;
    TRY(sc_cfg_double_range(sr, "push", 0, 0, 1e5, &c->push, err));
    TRY(sc_cfg_bool(sr, "bias", 1, &c->bias, err));
    TRY(sc_cfg_list(sr, "features", 0, &list, err));
    if (list) {
        c->nfeat = sc_cfg_len(list);
        if (c->nfeat < 1 || c->nfeat > SC_FEATURES)
            return sc_fail(err, SC_EINPUT, "%s: feedback.search.features: 1 to %d features", sc_cfg_where(list, w, sizeof w), SC_FEATURES);
        for (int i = 0; i < c->nfeat; i++) {
            const char *name = sc_cfg_scalar(sc_cfg_at(list, i));
            int k = name ? sc_feature_index(name) : -1;
            if (k < 0)
                return sc_fail(err, SC_EINPUT, "%s: feedback.search.features names '%s', not a feature (lib/learn/policy.h lists them)",
                               sc_cfg_where(sc_cfg_at(list, i), w, sizeof w), name ? name : "?");
            for (int j = 0; j < i; j++)
                if (c->feat[j] == k)
                    return sc_fail(err, SC_EINPUT, "%s: feedback.search.features names '%s' twice", sc_cfg_where(sc_cfg_at(list, i), w, sizeof w),
                                   name);
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
    if (*n < min || *n > SC_MAX_EVAL)
        return sc_fail(err, SC_EINPUT, "%s: %d to %d stiffness factors", sc_cfg_where(sl, w, sizeof w), min, SC_MAX_EVAL);
    for (int i = 0; i < *n; i++) {
        if ((rc = sc_cfg_scalar_double(sc_cfg_at(sl, i), &out[i], err))) return rc;
        if (!(out[i] > 0 && out[i] <= 1e3))
            return sc_fail(err, SC_EINPUT, "%s: a stiffness factor of %g", sc_cfg_where(sc_cfg_at(sl, i), w, sizeof w), out[i]);
    }
    return SC_OK;
}

/* `model:` (fit: model): the action costs, the horizon and the regulated features */
static int read_model_section(sc_cfg_node *f, sc_feedback_config *c, sc_err *err)
{
    char w[256];
    long n;
    int rc;
#define TRY(x) \
    if ((rc = (x))) return rc
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
    TRY(sc_cfg_int(mo, "bootstraps", 0, 0, 63, &n, err));
    c->bootstraps = (int)n;
    TRY(sc_cfg_bool(mo, "ensemble", 0, &c->ensemble, err));
    if (c->ensemble && !c->bootstraps)
        return sc_fail(err, SC_EINPUT, "%s: feedback.model.ensemble needs resampled maps: set model.bootstraps >= 1",
                       sc_cfg_where(sc_cfg_get(mo, "ensemble"), w, sizeof w));
    TRY(sc_cfg_list(mo, "features", 0, &fl, err));
    int heading = 0;
    TRY(sc_cfg_bool(mo, "heading", 0, &heading, err));
    TRY(sc_cfg_double_range(mo, "heading_scale", 1.0, 1e-3, 10, &c->heading_scale, err));
    for (int k = 0; k < SC_FEATURES; k++) c->model_feature[k] = !fl && strncmp(sc_feature_names[k], "com_stance", 10) != 0 && k != SC_FEATURE_HEADING;
    if (heading) c->model_feature[SC_FEATURE_HEADING] = 1;
    for (int i = 0; fl && i < sc_cfg_len(fl); i++) {
        const char *name = sc_cfg_scalar(sc_cfg_at(fl, i));
        int k = name ? sc_feature_index(name) : -1;
        if (k < 0)
            return sc_fail(err, SC_EINPUT,
                           "%s: feedback.model.features: '%s' is not a feature (the features are listed under learn-feedback in the README)",
                           sc_cfg_where(sc_cfg_at(fl, i), w, sizeof w), name ? name : "?");
        c->model_feature[k] = 1;
    }
    if (!c->model_feature[SC_FEATURE_HEADING] && sc_cfg_get(mo, "heading_scale"))
        return sc_fail(err, SC_EINPUT, "%s: model.heading_scale weighs a regulated heading: set model.heading: true",
                       sc_cfg_where(sc_cfg_get(mo, "heading_scale"), w, sizeof w));
#undef TRY
    return SC_OK;
}

/* `actions`: the control DoFs the policy sets (default: the waist, the hips and the knees) */
static int read_actions(sc_cfg_node *f, const sc_model *m, const sc_control_dofs *dofs, sc_feedback_config *c, sc_err *err)
{
    sc_cfg_node *list;
    char w[256];
    int rc;
#define TRY(x) \
    if ((rc = (x))) return rc
    TRY(sc_cfg_list(f, "actions", 0, &list, err));
    if (list) {
        for (int i = 0; i < sc_cfg_len(list); i++) {
            const char *name = sc_cfg_scalar(sc_cfg_at(list, i));
            int b = name ? sc_model_bone_index(m, name) : -1;
            if (b < 0 || dofs->first[b] < 0)
                return sc_fail(err, SC_EINPUT, "%s: feedback.actions names '%s', which is not a joint of the character",
                               sc_cfg_where(sc_cfg_at(list, i), w, sizeof w), name ? name : "?");
            for (int e = 0; e < i; e++) /* twice would give the policy the same DoFs twice */
                if (!strcmp(sc_cfg_scalar(sc_cfg_at(list, e)), name)) {
                    char w0[256];
                    return sc_fail(err, SC_EINPUT, "%s: feedback.actions names '%s' twice (first at %s)",
                                   sc_cfg_where(sc_cfg_at(list, i), w, sizeof w), name, sc_cfg_where(sc_cfg_at(list, e), w0, sizeof w0));
                }
            int k = m->joint_type[b] == SC_JOINT_HINGE ? 1 : 3;
            if (c->nact + k > SC_MAX_ACTIONS)
                return sc_fail(err, SC_EINPUT, "%s: more than %d action DoFs", sc_cfg_where(list, w, sizeof w), SC_MAX_ACTIONS);
            for (int d = 0; d < k; d++) c->act[c->nact++] = dofs->first[b] + d;
        }
    } else { /* the waist, both hips and knees (mass-SAMCON's actions) */
        for (int d = 0; d < dofs->n; d++) {
            int cls = sc_joint_class(m->bone_name[dofs->bone[d]]);
            if ((cls == SC_JOINT_SPINE || cls == SC_JOINT_HIPS || cls == SC_JOINT_KNEES) && c->nact < SC_MAX_ACTIONS) c->act[c->nact++] = d;
        }
    }
    if (c->nact == 0) return sc_fail(err, SC_EINPUT, "%s: feedback.actions: no joint to act on", sc_cfg_where(f, w, sizeof w));
#undef TRY
    return SC_OK;
}

/* `evaluate:` the survival test, the pushes and the stiffness factors */
static int read_evaluate(sc_cfg_node *f, const sc_model *m, sc_feedback_config *c, sc_err *err)
{
    sc_cfg_node *ev;
    char w[256];
    long n;
    int rc;
#define TRY(x) \
    if ((rc = (x))) return rc
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
    double eval_def[] = {0.125, 0.25, 0.5, 2, 4};
    TRY(read_stiffness_factors(ev, eval_def, 5, 0, c->stiffness, &c->nstiff, err));
#undef TRY
    return SC_OK;
}

int sc_feedback_read_config(sc_cfg *cfg, const sc_model *m, const sc_control_dofs *dofs, sc_feedback_config *c, sc_err *err)
{
    sc_cfg_node *root = sc_cfg_root(cfg), *f;
    char w[256];
    long n;
    int rc;
    memset(c, 0, sizeof *c);
#define TRY(x) \
    if ((rc = (x))) return rc
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
        return sc_fail(err, SC_EINPUT, "%s: feedback.elites = %d is more than feedback.samples = %d",
                       sc_cfg_where(sc_cfg_get(f, "elites"), w, sizeof w), c->elites, c->samples);
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
    TRY(read_model_section(f, c, err));
    sc_cfg_node *loop;
    TRY(sc_cfg_section(f, "closed_loop", &loop, err));
    TRY(sc_cfg_int(loop, "rollouts", 0, 0, 4096, &n, err));
    c->rollouts = (int)n;
    TRY(sc_cfg_int(loop, "rounds", 1, 1, 64, &n, err));
    c->rounds = (int)n;
    if (c->rollouts && !c->fit_model)
        return sc_fail(err, SC_EINPUT, "%s: feedback.closed_loop.rollouts gathers transitions for fit: model's maps; fit: actions has none",
                       sc_cfg_where(sc_cfg_get(loop, "rollouts"), w, sizeof w));
    TRY(sc_cfg_int(f, "trials", 1, 1, SC_MAX_TRIALS, &n, err));
    c->trials = (int)n;
    TRY(sc_cfg_double_range(f, "trial_noise", 5, 0, 1e4, &c->trial_noise, err));
    if (c->trials > 1 && !(c->trial_noise > 0))
        return sc_fail(err, SC_EINPUT, "%s: feedback.trial_noise 0 would run every trial of feedback.trials the same",
                       sc_cfg_where(sc_cfg_get(f, "trial_noise"), w, sizeof w));
    TRY(read_actions(f, m, dofs, c, err));
    TRY(read_evaluate(f, m, c, err));
    double learn_def[] = {1};
    TRY(read_stiffness_factors(f, learn_def, 1, 1, c->learn_stiffness, &c->nlearn_stiff, err));
#undef TRY
    return SC_OK;
}

/* reduced-opt's config (swim.h). */
#include "settings/swim.h"
#include <math.h>
#include <string.h>
#include "settings/scenario.h"

#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)

static int nonzero_vec(sc_cfg_node *sec, const char *key, const double *v, sc_err *err)
{
    char w[256];
    if (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] > 0) return SC_OK;
    sc_cfg_node *at = sc_cfg_get(sec, key);
    return sc_fail(err, SC_EINPUT, "%s: %s must not be zero", sc_cfg_where(at ? at : sec, w, sizeof w), key);
}

int sc_swim_config_read(sc_cfg *cfg, int with_controller, sc_swim_config *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    sc_cfg_node *root = sc_cfg_root(cfg), *sec, *sub;
    char w[256];
    int rc;
    /* the reduced body */
    sc_reduced_default_opts(&c->body);
    memset(c->body.gravity, 0, sizeof c->body.gravity);
    static const char *const schemes[] = {"midpoint", "backward_euler"};
    const double zero[3] = {0, 0, 0};
    TRY(sc_cfg_section(root, "reduced_body", &sec, err));
    TRY(sc_cfg_double_range(sec, "dt", 5e-3, 1e-6, 0.1, &c->body.dt, err));
    TRY(sc_cfg_enum(sec, "scheme", schemes, 2, SC_REDUCED_MIDPOINT, &c->body.scheme, err));
    TRY(sc_cfg_section(sec, "rayleigh", &sub, err));
    TRY(sc_cfg_double_range(sub, "alpha", 0, 0, 1e3, &c->body.rayleigh_alpha, err));
    TRY(sc_cfg_double_range(sub, "beta", 2e-4, 0, 1e3, &c->body.rayleigh_beta, err));
    TRY(sc_cfg_vec_range(sec, "gravity", 3, zero, -1e3, 1e3, c->body.gravity, err));
    /* the fluid: required, and wet */
    sc_cfg_node *fl = sc_cfg_get(root, "fluid");
    TRY(sc_fluid_read(root, &c->body.fluid, err));
    if (!fl || !sc_fluid_enabled(&c->body.fluid))
        return sc_fail(err, SC_EINPUT, "%s: reduced-opt swims: give `fluid:` with density > 0 and drag > 0 (e.g. {density: 1000, drag: 1})",
                       sc_cfg_where(fl ? fl : root, w, sizeof w));
    /* the objective */
    sc_swim_objective *o = &c->objective;
    const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
    TRY(sc_cfg_section(root, "swim", &sec, err));
    TRY(sc_cfg_vec_range(sec, "direction", 3, ex, -1e3, 1e3, o->direction, err));
    TRY(nonzero_vec(sec, "direction", o->direction, err));
    TRY(sc_cfg_double_range(sec, "target_speed", 0.1, 1e-6, 100, &o->target_speed, err));
    TRY(sc_cfg_double_range(sec, "duration", 4.0, 1e-3, 1e4, &o->duration, err));
    TRY(sc_cfg_double_range(sec, "warmup", 1.0, 0, 1e4, &o->warmup, err));
    if (o->warmup >= o->duration) {
        sc_cfg_node *at = sc_cfg_get(sec, "warmup");
        return sc_fail(err, SC_EINPUT, "%s: swim.warmup = %g s must be shorter than swim.duration = %g s", sc_cfg_where(at ? at : sec, w, sizeof w),
                       o->warmup, o->duration);
    }
    TRY(sc_cfg_section(sec, "weights", &sub, err));
    TRY(sc_cfg_double_range(sub, "speed", 1, 0, 1e9, &o->speed_weight, err));
    TRY(sc_cfg_double_range(sub, "effort", 1e-3, 0, 1e9, &o->effort_weight, err));
    TRY(sc_cfg_double_range(sub, "balance", 0, 0, 1e9, &o->balance_weight, err));
    TRY(sc_cfg_vec_range(sec, "balance_axis", 3, ey, -1e3, 1e3, o->balance_axis, err));
    TRY(nonzero_vec(sec, "balance_axis", o->balance_axis, err));
    /* the DMP (a given controller brings its own) */
    sc_cfg_node *dmp = sc_cfg_get(root, "dmp");
    if (with_controller && dmp)
        return sc_fail(err, SC_EINPUT,
                       "%s: `dmp:` does not apply when a controller is given (its size and period are the input's): remove the section",
                       sc_cfg_where(dmp, w, sizeof w));
    if (!with_controller) {
        TRY(sc_cfg_section(root, "dmp", &sec, err));
        long basis;
        TRY(sc_cfg_int(sec, "basis", 6, 1, SC_DMP_MAX_BASIS, &basis, err));
        c->basis = (int)basis;
        TRY(sc_cfg_double_range(sec, "period", 0, 0, 1e3, &c->period, err));
        TRY(sc_cfg_bool(sec, "free_period", 1, &c->free_period, err));
    }
    /* the optimiser */
    sc_lbfgs_default_opts(&c->lbfgs);
    sc_cfg_node *opt = sc_cfg_get(root, "optimise");
    if (with_controller && opt)
        return sc_fail(err, SC_EINPUT, "%s: `optimise:` does not apply when a controller is given (it is replayed as it is): remove the section",
                       sc_cfg_where(opt, w, sizeof w));
    c->optimise = !with_controller;
    if (c->optimise) {
        long it, mem;
        TRY(sc_cfg_section(root, "optimise", &sec, err));
        TRY(sc_cfg_int(sec, "iterations", 40, 0, 100000, &it, err));
        TRY(sc_cfg_int(sec, "memory", 8, 1, 100, &mem, err));
        TRY(sc_cfg_double_range(sec, "initial_amplitude", 0.05, 0, 10, &c->initial_amplitude, err));
        c->lbfgs.max_iterations = (int)it;
        c->lbfgs.memory = (int)mem;
        c->lbfgs.max_evaluations = 1 << 30;
    }
    /* the replay */
    static const char *const models[] = {"reduced", "full"};
    long every;
    TRY(sc_cfg_section(root, "replay", &sec, err));
    TRY(sc_cfg_enum(sec, "model", models, 2, SC_REPLAY_REDUCED, &c->replay_model, err));
    sc_cfg_node *dt = sc_cfg_get(sec, "dt");
    if (c->replay_model == SC_REPLAY_REDUCED && dt)
        return sc_fail(err, SC_EINPUT, "%s: replay.dt is the full FEM's step (replay.model: full); the reduced body steps by reduced_body.dt",
                       sc_cfg_where(dt, w, sizeof w));
    if (c->replay_model == SC_REPLAY_FULL) TRY(sc_cfg_double_range(sec, "dt", 5e-4, 1e-6, 0.1, &c->full_dt, err));
    TRY(sc_cfg_int(sec, "every", 10, 1, 1000000, &every, err));
    c->every = (int)every;
    return SC_OK;
}

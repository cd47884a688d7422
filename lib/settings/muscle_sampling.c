/* muscle-sample's config (muscle_sampling.h). */
#include "settings/muscle_sampling.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define TRY(x)                     \
    do {                           \
        if ((rc = (x))) return rc; \
    } while (0)

static const char *const axes_names[] = {"x", "y", "z"};
static const char *const cost_types[] = {"turn", "com", "com_velocity"};

static int read_control(sc_cfg_node *e, int i, const sc_muscle_run_config *run, sc_msamcon_control *u, sc_err *err)
{
    char w[256];
    long obj;
    int rc;
    if (!sc_cfg_is_map(e))
        return sc_fail(err, SC_EINPUT, "%s: muscle_sampling.controls[%d]: a map {objective, axis, half_width}", sc_cfg_where(e, w, sizeof w), i);
    TRY(sc_cfg_int(e, "objective", -1, -1, 1000000, &obj, err));
    if (obj < 0 || obj >= run->run.control.nobjectives)
        return sc_fail(err, SC_EINPUT, "%s: muscle_sampling.controls[%d].objective: %ld is not one of muscle_control.objectives (0 to %d)",
                       sc_cfg_where(sc_cfg_get(e, "objective") ? sc_cfg_get(e, "objective") : e, w, sizeof w), i, obj,
                       run->run.control.nobjectives - 1);
    u->objective = (int)obj;
    TRY(sc_cfg_enum(e, "axis", axes_names, 3, -1, &u->axis, err));
    TRY(sc_cfg_double_range(e, "half_width", 0, 1e-12, 1e7, &u->half_width, err));
    if (!sc_cfg_get(e, "half_width"))
        return sc_fail(err, SC_EINPUT, "%s: muscle_sampling.controls[%d]: missing half_width", sc_cfg_where(e, w, sizeof w), i);
    return SC_OK;
}

static int read_term(sc_cfg_node *e, int i, sc_mcost_term *t, sc_err *err)
{
    char w[256];
    const double one[3] = {1, 1, 1}, zero[3] = {0, 0, 0}, z_axis[3] = {0, 0, 1};
    int rc;
    if (!sc_cfg_is_map(e)) return sc_fail(err, SC_EINPUT, "%s: muscle_sampling.cost[%d]: a map with a type", sc_cfg_where(e, w, sizeof w), i);
    memset(t, 0, sizeof *t);
    TRY(sc_cfg_enum(e, "type", cost_types, 3, -1, &t->type, err));
    TRY(sc_cfg_double_range(e, "weight", 1, 0, 1e12, &t->weight, err));
    TRY(sc_cfg_double_range(e, "from", 0, 0, 1e9, &t->from, err));
    TRY(sc_cfg_double_range(e, "to", 1e9, 0, 1e9, &t->to, err));
    if (!(t->to > t->from))
        return sc_fail(err, SC_EINPUT, "%s: muscle_sampling.cost[%d]: to (%g) must be after from (%g)", sc_cfg_where(e, w, sizeof w), i, t->to,
                       t->from);
    if (t->type == SC_MCOST_TURN) {
        TRY(sc_cfg_vec_range(e, "axis", 3, z_axis, -1, 1, t->axis, err));
        const double n = sqrt(t->axis[0] * t->axis[0] + t->axis[1] * t->axis[1] + t->axis[2] * t->axis[2]);
        if (!(n > 0)) return sc_fail(err, SC_EINPUT, "%s: muscle_sampling.cost[%d].axis: zero", sc_cfg_where(e, w, sizeof w), i);
        for (int k = 0; k < 3; k++) t->axis[k] /= n;
        TRY(sc_cfg_double_range(e, "start", 0, -1e6, 1e6, &t->start, err));
        TRY(sc_cfg_double_range(e, "target", 0, -1e6, 1e6, &t->target[0], err));
    } else {
        TRY(sc_cfg_vec_range(e, "target", 3, zero, -1e6, 1e6, t->target, err));
        TRY(sc_cfg_vec_range(e, "axes", 3, one, 0, 1e12, t->axes, err));
    }
    return SC_OK;
}

int sc_msamcon_read(sc_cfg *cfg, const sc_muscle_run_config *run, sc_msamcon_config *c, sc_err *err)
{
    char w[256];
    sc_cfg_node *sec, *list;
    long samples, elites;
    int rc;
    sc_msamcon_default_config(c);
    TRY(sc_cfg_section(sc_cfg_root(cfg), "muscle_sampling", &sec, err));
    for (int k = 0; k < run->run.control.nobjectives; k++)
        if (run->run.control.objectives[k].anchored)
            return sc_fail(err, SC_EINPUT,
                           "%s: muscle_sampling: muscle_control.objectives[%d] is anchored: its anchor is the controller's state, which the "
                           "sampler's snapshots do not carry",
                           sc_cfg_where(sec, w, sizeof w), k);
    TRY(sc_cfg_double_range(sec, "segment", c->segment, 1e-4, 100, &c->segment, err));
    TRY(sc_cfg_double_range(sec, "duration", run->duration, 1e-4, 1e6, &c->duration, err));
    TRY(sc_cfg_int(sec, "samples", c->samples, 1, 1000000, &samples, err));
    TRY(sc_cfg_int(sec, "elites", c->elites, 1, 1000000, &elites, err));
    TRY(sc_cfg_double_range(sec, "max_volume_change", c->max_volume_change, 0, 10, &c->max_volume_change, err));
    c->samples = (int)samples;
    c->elites = (int)elites;
    if (c->elites > c->samples)
        return sc_fail(err, SC_EINPUT, "%s: muscle_sampling: elites (%d) cannot exceed samples (%d)", sc_cfg_where(sec, w, sizeof w), c->elites,
                       c->samples);
    const double per = c->segment / run->run.control.period;
    if (fabs(per - lround(per)) > 1e-6)
        return sc_fail(err, SC_EINPUT, "%s: muscle_sampling.segment: %g s is not a whole number of control periods (%g s)",
                       sc_cfg_where(sc_cfg_get(sec, "segment") ? sc_cfg_get(sec, "segment") : sec, w, sizeof w), c->segment, run->run.control.period);
    TRY(sc_cfg_list(sec, "controls", 1, &list, err));
    const int nu = sc_cfg_len(list);
    if (nu < 1 || nu > SC_MSAMCON_MAX_CONTROLS)
        return sc_fail(err, SC_EINPUT, "%s: muscle_sampling.controls: 1 to %d controls, not %d", sc_cfg_where(list, w, sizeof w),
                       SC_MSAMCON_MAX_CONTROLS, nu);
    for (int i = 0; i < nu; i++) TRY(read_control(sc_cfg_at(list, i), i, run, &c->controls[i], err));
    c->ncontrols = nu;
    TRY(sc_cfg_list(sec, "cost", 1, &list, err));
    const int nt = sc_cfg_len(list);
    if (nt < 1 || nt > SC_MSAMCON_MAX_TERMS)
        return sc_fail(err, SC_EINPUT, "%s: muscle_sampling.cost: 1 to %d terms, not %d", sc_cfg_where(list, w, sizeof w), SC_MSAMCON_MAX_TERMS, nt);
    for (int i = 0; i < nt; i++) TRY(read_term(sc_cfg_at(list, i), i, &c->terms[i], err));
    c->nterms = nt;
    return SC_OK;
}

/* The run of a boneless body: see run.h. */
#include "muscle/run.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"

int sc_muscle_run_create(const sc_model *m, const sc_muscles *mu, const sc_muscle_run_opts *o, sc_muscle_run *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    r->o = o;
    r->stats.min_det = INFINITY;
    r->stats.max_det = -INFINITY;
    const double steps = o->control.period / o->body.dt;
    r->plan_every = (int)lround(steps);
    if (o->solver != SC_RUN_PASSIVE && (r->plan_every < 1 || fabs(steps - r->plan_every) > 1e-6))
        return sc_fail(err, SC_EINPUT, "muscle run: the control period %g s is not a whole number of steps of %g s", o->control.period, o->body.dt);
    int rc = sc_softbody_create(m, mu, &o->body, &r->s, err);
    if (rc) return rc;
    if (o->solver != SC_RUN_PASSIVE) {
        if (!mu) {
            sc_muscle_run_free(r);
            return sc_fail(err, SC_EINPUT, "muscle run: a controlled body needs muscles");
        }
        sc_control_opts co = o->control;
        co.qpcc = o->solver == SC_RUN_QPCC;
        if ((rc = sc_control_create(r->s, &co, &r->c, err))) {
            sc_muscle_run_free(r);
            return rc;
        }
    }
    return SC_OK;
}

void sc_muscle_run_free(sc_muscle_run *r)
{
    sc_control_free(r->c);
    sc_softbody_free(r->s);
    r->c = NULL;
    r->s = NULL;
}

static void apply_forces(sc_muscle_run *r)
{
    sc_softbody *s = r->s;
    const double t = s->t;
    memset(s->ext, 0, 3 * (size_t)s->m->nnodes * sizeof(double));
    memset(r->push, 0, sizeof r->push);
    for (int k = 0; k < r->o->nforces; k++) {
        const sc_node_force *f = &r->o->forces[k];
        if (t < f->from || t >= f->to || f->nnodes < 1) continue;
        const double scale = f->ramp ? (t - f->from) / (f->to - f->from) : 1;
        for (int i = 0; i < f->nnodes; i++)
            for (int c = 0; c < 3; c++) s->ext[3 * f->nodes[i] + c] += scale * f->force[c] / f->nnodes;
        for (int c = 0; c < 3; c++) r->push[c] += scale * f->force[c];
    }
}

int sc_muscle_run_step(sc_muscle_run *r, sc_err *err)
{
    sc_softbody *s = r->s;
    if (r->c && s->step % r->plan_every == 0) {
        const double t0 = sc_wall_time();
        int rc = sc_control_plan(r->c, s, &r->report, err);
        r->stats.plan_s += sc_wall_time() - t0;
        if (rc) return rc;
        r->stats.plans++;
        r->stats.failed_plans += r->report.failed;
        r->stats.qps += r->report.nodes;
    }
    apply_forces(r);
    return sc_softbody_step(s, err);
}

void sc_muscle_run_sample(sc_muscle_run *r, sc_softbody_diag *d)
{
    sc_softbody_diagnostics(r->s, d);
    r->stats.max_volume_change = fmax(r->stats.max_volume_change, fabs(d->volume_ratio - 1));
    r->stats.min_det = fmin(r->stats.min_det, d->min_det);
    r->stats.max_det = fmax(r->stats.max_det, d->max_det);
}

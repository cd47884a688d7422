/* The scenario applied: the model's overrides and the perturbations due at each step. */
#include <string.h>
#include "sampling/scenario.h"

int sc_scenario_model(const sc_model *m, const sc_scenario *sc, sc_model *out, sc_err *err)
{
    int rc = sc_model_clone(m, out, err);
    if (rc) return rc;
    out->youngs = sc->youngs;
    out->poisson = sc->poisson;
    for (int b = 0; b < out->nbones; b++) {
        out->kp[b] *= sc->kp_scale;
        out->kd[b] *= sc->kd_scale;
        out->torque_limit[b] *= sc->limit_scale;
    }
    return SC_OK;
}

void sc_perturbations_apply(const sc_perturbations *p, sc_sim *s, double push_total[3])
{
    double t = s->t, dt = s->o.dt;
    memset(s->push, 0, (size_t)s->nb * 3 * sizeof(double));
    if (push_total) push_total[0] = push_total[1] = push_total[2] = 0;
    for (int i = 0; i < p->n; i++) {
        const sc_perturbation *q = &p->p[i];
        if (q->kind == SC_PERTURB_PUSH && t >= q->time && t < q->time + q->duration) {
            for (int d = 0; d < 3; d++) {
                s->push[3 * q->bone + d] += q->v[d];
                if (push_total) push_total[d] += q->v[d];
            }
        } else if (q->kind == SC_PERTURB_VELOCITY && t >= q->time && t - dt < q->time) {
            sc_sim_add_velocity(s, q->v, NULL);
        }
    }
}

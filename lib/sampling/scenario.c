/* The scenario applied: the model's overrides and the perturbations due at each step. */
#include <math.h>
#include <string.h>
#include "sampling/scenario.h"
#include "core/mathx.h"

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
        if (sc_push_pending(q)) continue;
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

int sc_push_pending(const sc_perturbation *p) { return p->kind == SC_PERTURB_PUSH && (p->frame == SC_FRAME_HEADING || p->at_phase); }

long sc_cycle_phase_step(long cycle_steps, long cycle, double phase)
{
    /* the margin absorbs the rounding of phase * cycle_steps when it is a whole number */
    return cycle * cycle_steps + (long)floor(phase * (double)cycle_steps + 1e-6);
}

void sc_push_start(sc_perturbation *p, const sc_sim *s)
{
    if (p->frame == SC_FRAME_HEADING) {
        sc_vec3 d = sc_q_rotate(sc_q_axis_angle(sc_v3(0, 1, 0), sc_q_heading(s->pose[0].q)), sc_v3_load(p->v));
        sc_v3_store(p->v, d);
    }
    p->time = s->t;
    p->duration = (double)lround(p->duration / s->o.dt) * s->o.dt;
    p->frame = SC_FRAME_WORLD;
    p->at_phase = 0;
}

void sc_perturbations_start_due(sc_perturbations *p, const sc_sim *s, long step0, long cycle_steps)
{
    for (int i = 0; i < p->n; i++) {
        sc_perturbation *q = &p->p[i];
        if (!sc_push_pending(q)) continue;
        int due = q->at_phase ? cycle_steps > 0 && s->step >= step0 + sc_cycle_phase_step(cycle_steps, q->cycle, q->phase) : s->t >= q->time;
        if (due) sc_push_start(q, s);
    }
}

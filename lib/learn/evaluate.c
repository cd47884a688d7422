/* The fall judge: a simulated motion against the reference it tracked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "learn/evaluate.h"
#include "core/mathx.h"
#include "model/world.h"

static sc_quat quat_at(const double *q) { return (sc_quat){q[0], q[1], q[2], q[3]}; }

/* Adds frame k's squared joint angles to *se: simulated local rotations against the reference's
   (not against the PD targets, which inverse dynamics deliberately offsets). */
static void add_tracking_error(const sc_fall_motion *sim, const sc_fall_reference *ref, size_t k, size_t rk, double *se)
{
    size_t nb = sim->nbones;
    for (size_t b = 1; b < nb; b++) {
        const double *qb = sim->quat + (k * nb + b) * 4, *qp = sim->quat + (k * nb + (size_t)sim->parents[b]) * 4,
                     *qr = ref->local_quat + (rk * nb + b) * 4;
        sc_quat local = sc_q_mul(sc_q_conj(quat_at(qp)), quat_at(qb));
        double a = sc_q_angle_between(sc_q_normalize(local), sc_q_normalize(quat_at(qr)));
        *se += a * a;
    }
}

void sc_evaluate_fall_motion(const sc_fall_motion *sim, const sc_fall_reference *ref, double max_tilt_deg, sc_fall_report *r)
{
    memset(r, 0, sizeof *r);
    size_t nt = sim->nframes, nb = sim->nbones, nrt = ref->nframes;
    const double *t = sim->time, *rt = ref->time;
    int torso = 0;
    for (size_t b = 0; b < nb; b++)
        if (!strcmp(sim->names[b], "spine")) torso = (int)b;
    double t0 = rt[0], se = 0;
    size_t k, rk = 0, used = 0;
    r->pelvis_min_ratio = 1e300;
    r->fall_time = nt ? t[nt - 1] : 0;
    for (k = 0; k < nt; k++) {
        /* the reference sample at the same time since the start of tracking */
        double tr = t0 + (t[k] - t[0]);
        while (rk + 1 < nrt && rt[rk + 1] <= tr) rk++;
        double ref_h = ref->root_pos[3 * rk + 1], h = sim->pos[(k * nb) * 3 + 1];
        sc_vec3 up = sc_q_rotate(sc_q_normalize(quat_at(sim->quat + (k * nb + (size_t)torso) * 4)), sc_v3(0, 1, 0)), ref_up = sc_v3(0, 1, 0);
        if (ref->bone_quat) ref_up = sc_q_rotate(sc_q_normalize(quat_at(ref->bone_quat + (rk * nb + (size_t)torso) * 4)), sc_v3(0, 1, 0));
        double tilt = acos(fmax(-1, fmin(1, sc_v3_dot(up, ref_up)))) * 180 / SC_PI;
        if (ref_h > 0) r->pelvis_min_ratio = fmin(r->pelvis_min_ratio, h / ref_h);
        r->max_tilt_deg = fmax(r->max_tilt_deg, tilt);
        /* the one fall test; its tilt is compared as cos(angle) against cos(max_tilt) */
        int fall = sc_fall_test(h, ref_h, 0.5, up, ref_up, max_tilt_deg * SC_PI / 180);
        if (fall != SC_FALL_NONE) {
            r->fell = 1;
            r->fall_time = t[k] - t[0];
            snprintf(r->reason, sizeof r->reason, fall == SC_FALL_LOW ? "pelvis at %.2f of its reference height" : "torso tilted %.0f deg",
                     fall == SC_FALL_LOW ? h / ref_h : tilt);
            break;
        }
        add_tracking_error(sim, ref, k, rk, &se);
        used += nb > 1 ? nb - 1 : 0;
    }
    r->tracking_rms = used ? sqrt(se / used) : 0;
    if (!r->fell) r->fall_time = nt ? t[nt - 1] - t[0] : 0;
}

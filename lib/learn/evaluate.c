#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "learn/evaluate.h"
#include "core/mathx.h"
#include "io/h5.h"

int sc_evaluate_fall(const char *sim_path, const char *ref_path, double max_tilt_deg, sc_fall_report *r, sc_err *err)
{
    return sc_evaluate_fall_ex(sim_path, ref_path, max_tilt_deg, 0, r, err);
}

int sc_evaluate_fall_ex(const char *sim_path, const char *ref_path, double max_tilt_deg, int relative, sc_fall_report *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    sc_h5 *fs = NULL, *fr = NULL;
    size_t nt = 0, nrt = 0, nnames = 0, d3[3] = {0, 0, 3}, d4[3] = {0, 0, 4}, d2[2] = {0, 3};
    double *t = NULL, *pos = NULL, *quat = NULL, *rt = NULL, *rroot = NULL, *rq = NULL, *rbq = NULL;
    int *parents = NULL;
    char **names = NULL, **rnames = NULL;
    size_t nrnames = 0;
    int rc;
    if ((rc = sc_h5_open(sim_path, &fs, err)) || (rc = sc_h5_open(ref_path, &fr, err))) goto done;
    if ((rc = sc_h5_read_f64(fs, "/time", 1, &nt, &t, err)) || (rc = sc_h5_read_strings(fs, "/bones/names", &nnames, &names, err)))
        goto done;
    d3[0] = d4[0] = nt;
    d3[1] = d4[1] = nnames;
    if ((rc = sc_h5_read_f64(fs, "/bones/position", 3, d3, &pos, err)) || (rc = sc_h5_read_f64(fs, "/bones/orientation", 3, d4, &quat, err)) ||
        (rc = sc_h5_read_i32(fs, "/bones/parents", 1, &nnames, &parents, err)))
        goto done;
    if ((rc = sc_h5_read_f64(fr, "/time", 1, &nrt, &rt, err)) || (rc = sc_h5_read_strings(fr, "/bones/names", &nrnames, &rnames, err)))
        goto done;
    for (size_t b = 0; b < nnames; b++)
        if (nrnames != nnames || strcmp(names[b], rnames[b])) {
            rc = sc_fail(err, SC_EINPUT, "%s:/bones/names: the bones differ from those of %s", ref_path, sim_path);
            goto done;
        }
    d2[0] = nrt;
    size_t dq[3] = {nrt, nnames, 4};
    if ((rc = sc_h5_read_f64(fr, "/reference/root_pos", 2, d2, &rroot, err)) || (rc = sc_h5_read_f64(fr, "/reference/local_quat", 3, dq, &rq, err)))
        goto done;
    if (relative && (rc = sc_h5_read_f64(fr, "/reference/bone_quat", 3, dq, &rbq, err))) goto done;
    int torso = 0;
    for (size_t b = 0; b < nnames; b++)
        if (!strcmp(names[b], "spine")) torso = (int)b;
    double t0 = rt[0], se = 0;
    size_t k, rk = 0, used = 0;
    r->pelvis_min_ratio = 1e300;
    r->fall_time = nt ? t[nt - 1] : 0;
    for (k = 0; k < nt; k++) {
        /* the reference sample at the same time since the start of tracking */
        double tr = t0 + (t[k] - t[0]);
        while (rk + 1 < nrt && rt[rk + 1] <= tr) rk++;
        double ref_h = rroot[3 * rk + 1], h = pos[(k * nnames) * 3 + 1];
        const double *q = quat + (k * nnames + (size_t)torso) * 4;
        sc_vec3 up = sc_q_rotate(sc_q_normalize((sc_quat){q[0], q[1], q[2], q[3]}), sc_v3(0, 1, 0)), ref_up = sc_v3(0, 1, 0);
        if (rbq) {
            const double *b = rbq + (rk * nnames + (size_t)torso) * 4;
            ref_up = sc_q_rotate(sc_q_normalize((sc_quat){b[0], b[1], b[2], b[3]}), sc_v3(0, 1, 0));
        }
        double tilt = acos(fmax(-1, fmin(1, sc_v3_dot(up, ref_up)))) * 180 / SC_PI;
        if (ref_h > 0) r->pelvis_min_ratio = fmin(r->pelvis_min_ratio, h / ref_h);
        r->max_tilt_deg = fmax(r->max_tilt_deg, tilt);
        if (h < 0.5 * ref_h || tilt > max_tilt_deg) {
            r->fell = 1;
            r->fall_time = t[k] - t[0];
            snprintf(r->reason, sizeof r->reason, h < 0.5 * ref_h ? "pelvis at %.2f of its reference height" : "torso tilted %.0f deg",
                     h < 0.5 * ref_h ? h / ref_h : tilt);
            break;
        }
        /* tracking: simulated local rotations against the reference's (not against the PD
           targets, which inverse dynamics deliberately offsets) */
        for (size_t b = 1; b < nnames; b++) {
            const double *qb = quat + (k * nnames + b) * 4, *qp = quat + (k * nnames + (size_t)parents[b]) * 4, *qr = rq + (rk * nnames + b) * 4;
            sc_quat local = sc_q_mul(sc_q_conj((sc_quat){qp[0], qp[1], qp[2], qp[3]}), (sc_quat){qb[0], qb[1], qb[2], qb[3]});
            double a = sc_q_angle_between(sc_q_normalize(local), sc_q_normalize((sc_quat){qr[0], qr[1], qr[2], qr[3]}));
            se += a * a;
            used++;
        }
    }
    r->tracking_rms = used ? sqrt(se / used) : 0;
    if (!r->fell) r->fall_time = nt ? t[nt - 1] - t[0] : 0;
done:
    free(t); free(pos); free(quat); free(rt); free(rroot); free(rq); free(rbq); free(parents);
    if (names) sc_h5_free_strings(names, nnames);
    if (rnames) sc_h5_free_strings(rnames, nrnames);
    if (fs) sc_h5_close(fs);
    if (fr) sc_h5_close(fr);
    return rc;
}

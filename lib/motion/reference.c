#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "motion/reference.h"
#include "model/targets.h"
#include "io/config.h"
#include "io/paths.h"
#include "core/log.h"

/* ---- memory ----------------------------------------------------------------------------- */

void sc_reference_free(sc_reference *r)
{
    if (!r) return;
    free(r->names);
    free(r->time);
    free(r->root_pos);
    free(r->root_vel);
    free(r->root_acc);
    free(r->local_quat);
    free(r->local_ang_vel);
    free(r->local_ang_acc);
    free(r->bone_pos);
    free(r->bone_quat);
    free(r->com);
    free(r->com_vel);
    free(r->target_quat);
    free(r->contact_force);
    free(r->contact_torque);
    free(r->contact_flag);
    free(r->captured);
    free(r->contact_height);
    free(r->contact_speed);
    free(r->contact_resultant);
    free(r->joint_torque);
    free(r->root_residual);
    memset(r, 0, sizeof *r);
}

int sc_reference_alloc(sc_reference *r, int n, int nb, sc_err *err)
{
    memset(r, 0, sizeof *r);
    if (n < 1 || nb < 1) return sc_fail(err, SC_EINPUT, "reference: %d samples, %d bones", n, nb);
    size_t N = (size_t)n, B = (size_t)nb;
    r->n = n;
    r->nb = nb;
    r->names = sc_alloc(err, B, sizeof *r->names);
    r->time = sc_alloc(err, N, sizeof(double));
    r->root_pos = sc_alloc(err, N * 3, sizeof(double));
    r->root_vel = sc_alloc(err, N * 3, sizeof(double));
    r->root_acc = sc_alloc(err, N * 3, sizeof(double));
    r->local_quat = sc_alloc(err, N * B * 4, sizeof(double));
    r->local_ang_vel = sc_alloc(err, N * B * 3, sizeof(double));
    r->local_ang_acc = sc_alloc(err, N * B * 3, sizeof(double));
    r->bone_pos = sc_alloc(err, N * B * 3, sizeof(double));
    r->bone_quat = sc_alloc(err, N * B * 4, sizeof(double));
    r->com = sc_alloc(err, N * 3, sizeof(double));
    r->com_vel = sc_alloc(err, N * 3, sizeof(double));
    r->target_quat = sc_alloc(err, N * B * 4, sizeof(double));
    r->contact_force = sc_alloc(err, N * B * 3, sizeof(double));
    r->contact_torque = sc_alloc(err, N * B * 3, sizeof(double));
    r->contact_flag = sc_alloc(err, N * B, sizeof(int));
    r->captured = sc_alloc(err, N * B, sizeof(int));
    r->contact_height = sc_alloc(err, N * B, sizeof(double));
    r->contact_speed = sc_alloc(err, N * B, sizeof(double));
    r->contact_resultant = sc_alloc(err, N * 6, sizeof(double));
    r->joint_torque = sc_alloc(err, N * B * 3, sizeof(double));
    r->root_residual = sc_alloc(err, N * 6, sizeof(double));
    if (!r->names || !r->time || !r->root_pos || !r->root_vel || !r->root_acc || !r->local_quat || !r->local_ang_vel ||
        !r->local_ang_acc || !r->bone_pos || !r->bone_quat || !r->com || !r->com_vel || !r->target_quat ||
        !r->contact_force || !r->contact_torque || !r->contact_flag || !r->captured || !r->contact_height || !r->contact_speed || !r->contact_resultant ||
        !r->joint_torque || !r->root_residual) {
        sc_reference_free(r);
        return SC_EIO;
    }
    return SC_OK;
}

static void q_store(double *a, sc_quat q)
{
    a[0] = q.w;
    a[1] = q.x;
    a[2] = q.y;
    a[3] = q.z;
}

/* ---- the driver ------------------------------------------------------------------------- */

void sc_id_default_opts(sc_id_opts *o)
{
    memset(o, 0, sizeof *o);
    o->gravity[1] = -9.81;
    o->momentum_rate = SC_RATE_ANALYTIC;
    o->max_target_offset = 1.5;
    sc_gc_default_opts(&o->contact);
}

int sc_id_run(const sc_model *m, const sc_body *b, const sc_gc_geom *g, const sc_traj *t, const sc_id_opts *o,
              sc_reference *out, sc_id_report *rep, sc_err *err)
{
    int nb = b->nb, n = t->n;
    if (m->nbones != nb || t->nb != nb)
        return sc_fail(err, SC_EINPUT, "inverse dynamics: %d bones in the character, %d in the body model, %d in the motion",
                       m->nbones, nb, t->nb);
    int rc = sc_reference_alloc(out, n, nb, err);
    if (rc) return rc;
    out->dt = t->dt;
    for (int j = 0; j < nb; j++) snprintf(out->names[j], SC_NAME_LEN, "%s", m->bone_name ? m->bone_name[j] : "bone");
    sc_id_report R;
    memset(&R, 0, sizeof R);
    R.nb = nb;
    R.total_mass = b->total_mass;
    R.mass_source = b->source;
    sc_vec3 grav = sc_v3_load(o->gravity);
    R.weight = b->total_mass * sc_v3_norm(grav);

    sc_bone_kin kin[SC_BODY_MAX_BONES];
    sc_gc_probe probe[SC_BODY_MAX_BONES];
    double fext[3 * SC_BODY_MAX_BONES], text[3 * SC_BODY_MAX_BONES], jf[3 * SC_BODY_MAX_BONES], jt[3 * SC_BODY_MAX_BONES];
    int flag[SC_BODY_MAX_BONES];
    double sumsq[SC_BODY_MAX_BONES] = {0};
    long ncontact[SC_BODY_MAX_BONES] = {0};
    double *PH = NULL; /* [n*6] momenta for SC_RATE_DIFFERENCE */
    if (o->momentum_rate == SC_RATE_DIFFERENCE && n > 1) {
        PH = malloc((size_t)n * 6 * sizeof(double));
        if (!PH) {
            sc_reference_free(out);
            return sc_fail(err, SC_EIO, "out of memory");
        }
        for (int k = 0; k < n; k++) {
            sc_momentum mo;
            sc_kin_forward(b, t, k, kin);
            sc_body_momentum(b, kin, &mo);
            sc_v3_store(PH + 6 * k, mo.P);
            sc_v3_store(PH + 6 * k + 3, mo.H);
        }
    }
    double res_f2 = 0, res_t2 = 0;
    for (int k = 0; k < n; k++) {
        size_t o3 = (size_t)k * nb * 3, o4 = (size_t)k * nb * 4, o1 = (size_t)k * nb;
        out->time[k] = k * t->dt;
        sc_kin_forward(b, t, k, kin);
        sc_momentum mo;
        sc_body_momentum(b, kin, &mo);
        sc_vec3 dP = mo.dP, dH = mo.dH;
        if (PH) { /* forward difference, backward at the last sample */
            int k0 = k < n - 1 ? k : n - 2;
            dP = sc_v3_scale(sc_v3_sub(sc_v3_load(PH + 6 * (k0 + 1)), sc_v3_load(PH + 6 * k0)), 1.0 / t->dt);
            dH = sc_v3_scale(sc_v3_sub(sc_v3_load(PH + 6 * (k0 + 1) + 3), sc_v3_load(PH + 6 * k0 + 3)), 1.0 / t->dt);
        }
        sc_vec3 fc = sc_v3_sub(dP, sc_v3_scale(grav, b->total_mass)); /* eq. 25 */
        sc_vec3 tc = dH;                                              /* eq. 26 */
        sc_v3_store(out->contact_resultant + 6 * k, fc);
        sc_v3_store(out->contact_resultant + 6 * k + 3, tc);
        R.mean_resultant_fy += fc.y;
        if (g) {
            sc_gc_opts co = o->contact;
            co.weight = R.weight;
            sc_gc_estimate(b, g, kin, mo.com, fc, tc, &co, o->contact_flags ? o->contact_flags + o1 : NULL, fext, text, flag,
                           probe, &R.contact);
        } else {
            memset(fext, 0, sizeof(double) * 3 * (size_t)nb);
            memset(text, 0, sizeof(double) * 3 * (size_t)nb);
            for (int j = 0; j < nb; j++) {
                flag[j] = 0;
                probe[j].height = NAN;
                probe[j].speed = NAN;
            }
        }
        sc_rnea(b, kin, o->gravity, fext, text, jf, jt);
        double fy = 0;
        for (int j = 0; j < nb; j++) {
            const sc_bone_kin *q = &kin[j];
            q_store(out->local_quat + o4 + 4 * j, t->local[o1 + j]);
            memcpy(out->local_ang_vel + o3 + 3 * j, t->ang_vel + o3 + 3 * j, 3 * sizeof(double));
            memcpy(out->local_ang_acc + o3 + 3 * j, t->ang_acc + o3 + 3 * j, 3 * sizeof(double));
            sc_v3_store(out->bone_pos + o3 + 3 * j, q->p);
            q_store(out->bone_quat + o4 + 4 * j, q->q);
            memcpy(out->contact_force + o3 + 3 * j, fext + 3 * j, 3 * sizeof(double));
            memcpy(out->contact_torque + o3 + 3 * j, text + 3 * j, 3 * sizeof(double));
            out->contact_flag[o1 + j] = flag[j];
            out->contact_height[o1 + j] = probe[j].height;
            out->contact_speed[o1 + j] = probe[j].speed;
            ncontact[j] += flag[j];
            fy += fext[3 * j + 1];
            sc_quat target = sc_q_identity();
            sc_vec3 act = {0, 0, 0};
            if (j > 0) {
                act = sc_joint_actuated(b, kin, j, sc_v3_load(jt + 3 * j));
                int clamped = 0;
                target = sc_pd_target(b, kin, j, t->local[o1 + j], sc_v3_load(t->ang_vel + o3 + 3 * j), act,
                                      m->kp ? m->kp[j] : 0, m->kd ? m->kd[j] : 0, o->max_target_offset, &clamped);
                R.target_clamps += clamped;
                double a = sc_v3_norm(act);
                R.peak_torque[j] = fmax(R.peak_torque[j], a);
                sumsq[j] += a * a;
                if (m->torque_limit && m->torque_limit[j] > 0 && a > m->torque_limit[j]) R.limit_exceeded[j]++;
            }
            sc_v3_store(out->joint_torque + o3 + 3 * j, act);
            q_store(out->target_quat + o4 + 4 * j, target);
        }
        R.mean_contact_fy += fy;
        R.peak_contact_fy = fmax(R.peak_contact_fy, fy);
        if (k * t->dt <= 0.2 + 1e-9) R.peak_contact_fy_start = fmax(R.peak_contact_fy_start, fy);
        {
            int any = 0;
            for (int j = 0; j < nb; j++) any |= flag[j];
            R.unsupported += !any && fc.y > 0.1 * R.weight;
        }
        if (k == 0) R.com_vel_start = mo.com_vel.y;
        if (k == n - 1) R.com_vel_end = mo.com_vel.y;
        sc_v3_store(out->root_pos + 3 * k, sc_v3_load(t->root_pos + 3 * k));
        sc_v3_store(out->root_vel + 3 * k, sc_v3_load(t->root_vel + 3 * k));
        sc_v3_store(out->root_acc + 3 * k, sc_v3_load(t->root_acc + 3 * k));
        sc_v3_store(out->com + 3 * k, mo.com);
        sc_v3_store(out->com_vel + 3 * k, mo.com_vel);
        memcpy(out->root_residual + 6 * k, jf, 3 * sizeof(double));
        memcpy(out->root_residual + 6 * k + 3, jt, 3 * sizeof(double));
        double rf = sc_v3_norm(sc_v3_load(jf)), rt = sc_v3_norm(sc_v3_load(jt));
        res_f2 += rf * rf;
        res_t2 += rt * rt;
        R.residual_force_max = fmax(R.residual_force_max, rf);
        R.residual_torque_max = fmax(R.residual_torque_max, rt);
        for (int c = 0; c < 3 * nb; c++)
            if (!isfinite(out->joint_torque[o3 + c]) || !isfinite(out->contact_force[o3 + c])) {
                free(PH);
                int j = c / 3;
                sc_reference_free(out);
                return sc_fail(err, SC_ENUMERIC, "inverse dynamics: step %d (t = %.4f s): non-finite torque or contact force "
                               "on bone %d '%s'", k, k * t->dt, j, m->bone_name ? m->bone_name[j] : "?");
            }
    }
    free(PH);
    for (int j = 0; j < nb; j++) {
        R.rms_torque[j] = sqrt(sumsq[j] / n);
        R.duty[j] = (double)ncontact[j] / n;
    }
    R.residual_force_rms = sqrt(res_f2 / n);
    R.residual_torque_rms = sqrt(res_t2 / n);
    R.mean_contact_fy /= n;
    /* what the mean vertical force must be: m g + m (v_end - v_start) / T */
    R.expected_fy = R.weight + (n > 1 ? b->total_mass * (R.com_vel_end - R.com_vel_start) / ((n - 1) * t->dt) : 0);
    if (rep) *rep = R;
    return SC_OK;
}

/* ---- balance at the simulation rate -------------------------------------------------------- */

int sc_id_balance(const sc_body *b, sc_traj *t, const unsigned char *flags, double mu, double gravity, double offset,
                  sc_id_balance_info *info, sc_err *err)
{
    int n = t->n, nb = t->nb;
    sc_id_balance_info inf;
    memset(&inf, 0, sizeof inf);
    if (n < 5) {
        if (info) *info = inf;
        return SC_OK;
    }
    double *a0 = malloc((size_t)n * 3 * sizeof *a0), *d = malloc((size_t)n * 3 * sizeof *d), *w = malloc((size_t)n * 5 * sizeof *w);
    if (!a0 || !d || !w) {
        free(a0);
        free(d);
        free(w);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    sc_bone_kin kin[SC_BODY_MAX_BONES];
    for (int k = 0; k < n; k++) {
        sc_momentum mo;
        sc_kin_forward(b, t, k, kin);
        sc_body_momentum(b, kin, &mo);
        sc_v3_store(a0 + 3 * k, sc_v3_scale(mo.dP, 1 / b->total_mass));
    }
    memset(d, 0, (size_t)n * 3 * sizeof *d);
    double h = t->dt, lambda = 1 / (offset * offset), *dd = w; /* dd reuses w[0..n) per axis below */
    double *dd3 = malloc((size_t)n * 3 * sizeof *dd3), *tt = malloc((size_t)n * 3 * sizeof *tt);
    if (!dd3 || !tt) {
        free(a0); free(d); free(w); free(dd3); free(tt);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    memset(dd3, 0, (size_t)n * 3 * sizeof *dd3);
    for (int it = 0; it < 40; it++) {
        double worst = 0, sq = 0;
        for (int k = 0; k < n; k++) {
            int contact = 0;
            for (int j = 0; j < nb; j++) contact |= flags[(size_t)k * nb + j];
            sc_vec3 a = sc_v3_add(sc_v3_load(a0 + 3 * k), sc_v3_load(dd3 + 3 * k)), fa = sc_v3(a.x, a.y + gravity, a.z), p = sc_v3(0, 0, 0);
            if (contact) {
                double r = hypot(fa.x, fa.z), s = fa.y;
                p = fa;
                if (mu * r <= -s) p = sc_v3(0, 0, 0);
                else if (r > mu * s) {
                    double s2 = (mu * r + s) / (mu * mu + 1), r2 = mu * s2;
                    p = sc_v3(r > 0 ? fa.x * r2 / r : 0, s2, r > 0 ? fa.z * r2 / r : 0);
                }
            }
            double e = sc_v3_dist(p, fa);
            worst = fmax(worst, e);
            sq += e * e;
            sc_v3_store(tt + 3 * k, sc_v3_sub(sc_v3_sub(p, sc_v3(0, gravity, 0)), sc_v3_load(a0 + 3 * k)));
        }
        if (it == 0) inf.misfit_before = sqrt(sq / n);
        inf.misfit_after = sqrt(sq / n);
        if (worst < 1e-3 * gravity) break;
        for (int ax = 0; ax < 3; ax++) {
            double *ta = w + n, *xa = dd;
            for (int k = 0; k < n; k++) ta[k] = tt[3 * k + ax];
            sc_offset_fit(n, h, lambda, ta, xa, w + 2 * n, w + 3 * n, w + 4 * n);
            for (int k = 0; k < n; k++) d[3 * k + ax] = xa[k];
            for (int k = 0; k < n; k++) {
                int c = k < 1 ? 1 : k > n - 2 ? n - 2 : k;
                dd3[3 * k + ax] = (d[3 * (c + 1) + ax] - 2 * d[3 * c + ax] + d[3 * (c - 1) + ax]) / (h * h);
            }
        }
    }
    for (int k = 0; k < n; k++) {
        int kp = k > 0 ? k - 1 : k, kn = k < n - 1 ? k + 1 : k;
        for (int ax = 0; ax < 3; ax++) {
            t->root_pos[3 * k + ax] += d[3 * k + ax];
            t->root_vel[3 * k + ax] += (d[3 * kn + ax] - d[3 * kp + ax]) / ((kn - kp) * h);
            t->root_acc[3 * k + ax] += dd3[3 * k + ax];
        }
        inf.max_offset = fmax(inf.max_offset, sc_v3_norm(sc_v3_load(d + 3 * k)));
    }
    free(a0); free(d); free(w); free(dd3); free(tt);
    if (info) *info = inf;
    return SC_OK;
}

/* ---- the pipeline ------------------------------------------------------------------------- */

int sc_id_compute(const sc_id_config *c, const sc_model *m, sc_reference *out, sc_id_report *rep, sc_id_pipeline_info *info,
                  sc_err *err)
{
    memset(out, 0, sizeof *out);
    sc_id_pipeline_info inf;
    memset(&inf, 0, sizeof inf);
    double t0 = sc_wall_time();
    int nb = m->nbones, rc;
    sc_bvh bvh;
    sc_motion mo;
    sc_body body;
    sc_gc_geom geom;
    sc_traj traj;
    unsigned char allowed[SC_BODY_MAX_BONES], *kflags = NULL, *sflags = NULL;
    memset(&mo, 0, sizeof mo);
    memset(&body, 0, sizeof body);
    memset(&geom, 0, sizeof geom);
    memset(&traj, 0, sizeof traj);
    if ((rc = sc_bvh_load(c->bvh, &bvh, err))) return rc;
    if (c->filter == 2 && !(c->filter_cutoff < 0.5 / bvh.frame_time)) {
        /* the clip's rate is known only now: say where the cutoff was set */
        rc = sc_fail(err, SC_EINPUT, "%s: motion.filter_cutoff %g Hz must be below half the frame rate of %s (%.6g Hz)",
                     c->filter_cutoff_where, c->filter_cutoff, c->bvh, 0.5 / bvh.frame_time);
        sc_bvh_free(&bvh);
        return rc;
    }
    double grav = -c->id.gravity[1];
    if ((rc = sc_retarget(&bvh, c->bvh, m, &c->retarget, &mo, &inf.retarget, err)) ||
        (c->filter == 1 && (rc = sc_motion_smooth(&mo, c->filter_window, err))) ||
        (c->filter == 2 && (rc = sc_motion_lowpass(&mo, c->filter_cutoff, err))) ||
        (rc = sc_body_from_model(m, c->mass_model, &body, err)) || (rc = sc_gc_geom_build(m, &geom, err)) ||
        (rc = sc_id_allowed_mask(c, m, allowed, err)))
        goto done;
    inf.frame_time = mo.frame_time;
    sc_gc_auto_tolerances(m, grav > 0 ? grav : 9.81, &inf.height_tol, &inf.speed_tol);
    if (c->height_tol > 0) inf.height_tol = c->height_tol;
    if (c->speed_tol > 0) inf.speed_tol = c->speed_tol;
    if (c->floor_mode > 0) {
        if ((rc = sc_gc_floor(&body, &geom, &mo, allowed, inf.speed_tol, c->floor_mode == 2, c->floor_percentile, c->height_offset,
                              &inf.floor, err)))
            goto done;
    } else {
        inf.floor.shift = c->height_offset;
        for (int f = 0; f < mo.nframes; f++) mo.root_pos[3 * f + 1] += c->height_offset;
    }
    /* the capture's contacts, kept on the character */
    kflags = malloc((size_t)mo.nframes * nb);
    if (!kflags) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    sc_gc_detect_opts dop;
    sc_gc_detect_default_opts(&dop);
    dop.height_tol = inf.height_tol;
    dop.speed_tol = inf.speed_tol;
    dop.support = c->id.contact.support > 0 ? c->id.contact.support : dop.support;
    dop.gravity = grav;
    dop.allowed = allowed;
    if ((rc = sc_gc_detect(&body, &geom, &mo, &dop, kflags, &inf.detect, err))) goto done;
    if (c->fit_contacts) {
        sc_contact_fit_opts fop;
        sc_contact_fit_default_opts(&fop);
        fop.balance = c->balance;
        fop.mu = c->id.contact.mu;
        fop.gravity = grav;
        if ((rc = sc_retarget_fit_contacts(m, &body, &geom, kflags, &fop, &mo, &inf.fit, err))) goto done;
    }
    if ((rc = sc_traj_from_motion(&mo, c->dt, c->scheme, &traj, err))) goto done;
    /* per sample: the contacts of both keyframes around it (eq. 22 holds the acceleration of
       the next keyframe over the interval) */
    sflags = malloc((size_t)traj.n * nb);
    if (!sflags) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    for (int k = 0; k < traj.n; k++) {
        int T = (int)floor(k * traj.dt / mo.frame_time + 1e-9);
        if (T > mo.nframes - 2) T = mo.nframes - 2;
        for (int j = 0; j < nb; j++) sflags[(size_t)k * nb + j] = kflags[(size_t)T * nb + j] | kflags[(size_t)(T + 1) * nb + j];
    }
    if (c->balance && (rc = sc_id_balance(&body, &traj, sflags, c->id.contact.mu, grav, 0.03, &inf.balance, err))) goto done;
    sc_id_opts io = c->id;
    io.contact.allowed = allowed;
    io.contact.height_tol = inf.height_tol;
    io.contact.speed_tol = inf.speed_tol;
    io.contact.rescue_band = 3 * inf.height_tol;
    io.contact_flags = sflags;
    if ((rc = sc_id_run(m, &body, &geom, &traj, &io, out, rep, err))) goto done;
    /* the capture's contacts per sample (nearest keyframe), and how far they stay from the floor */
    for (int k = 0; k < out->n; k++) {
        int f = (int)floor(k * traj.dt / mo.frame_time + 0.5);
        if (f > mo.nframes - 1) f = mo.nframes - 1;
        for (int j = 0; j < nb; j++) out->captured[(size_t)k * nb + j] = kflags[(size_t)f * nb + j];
    }
    if (rep) {
        rep->contact_intervals = rep->contacts_kept = 0;
        rep->max_contact_gap = 0;
        for (int j = 0; j < nb; j++) {
            double gap = 0;
            int in = 0;
            for (int k = 0; k <= out->n; k++) {
                if (k < out->n && out->captured[(size_t)k * nb + j]) {
                    double h = out->contact_height[(size_t)k * nb + j];
                    gap = fmax(gap, isfinite(h) ? fabs(h) : INFINITY);
                    in = 1;
                } else if (in) {
                    rep->contact_intervals++;
                    rep->contacts_kept += gap <= 0.02;
                    if (gap > rep->max_contact_gap) {
                        rep->max_contact_gap = gap;
                        rep->max_gap_bone = j;
                    }
                    gap = 0;
                    in = 0;
                }
            }
        }
    }
done:
    free(kflags);
    free(sflags);
    sc_traj_free(&traj);
    sc_gc_geom_free(&geom);
    sc_body_free(&body);
    sc_motion_free(&mo);
    sc_bvh_free(&bvh);
    inf.seconds = sc_wall_time() - t0;
    if (info) *info = inf;
    if (rc) sc_reference_free(out);
    return rc;
}

/* ---- writing ---------------------------------------------------------------------------- */

static int put_f64(sc_h5 *f, sc_h5_series *tl, const char *path, int n, int rank, const size_t *sdims, const double *data,
                   const char *units, const char *desc, sc_err *err)
{
    sc_h5_series *s;
    int rc = sc_h5_series_create(f, path, tl, rank, sdims, units, desc, &s, err);
    if (rc) return rc;
    size_t per = 1;
    for (int i = 0; i < rank; i++) per *= sdims[i];
    for (int k = 0; k < n && !rc; k++) rc = sc_h5_series_append(s, data + (size_t)k * per, err);
    return rc;
}

int sc_reference_write(sc_h5 *f, const sc_reference *r, sc_err *err)
{
    int rc, n = r->n;
    size_t nb = (size_t)r->nb;
    const char *names[SC_BODY_MAX_BONES];
    if (r->nb > SC_BODY_MAX_BONES) return sc_fail(err, SC_EINPUT, "reference: %d bones", r->nb);
    for (int j = 0; j < r->nb; j++) names[j] = r->names[j];
    sc_h5_series *tl;
#define TRY(x) do { if ((rc = (x))) return rc; } while (0)
    TRY(sc_h5_timeline_create(f, "/time", &tl, err));
    for (int k = 0; k < n; k++) TRY(sc_h5_series_append(tl, &r->time[k], err));
    TRY(sc_h5_attr_str(f, "/time", "description", "simulation-rate sample times from the first frame used", err));
    TRY(sc_h5_group(f, "/bones", "the character's bones, in character order (bone 0 is the root)", err));
    TRY(sc_h5_write_strings(f, "/bones/names", nb, names, "bone names", err));
    TRY(sc_h5_group(f, "/reference", "reference motion at simulation rate ([L13] eq. 20-24); quaternions w,x,y,z", err));
    size_t d3[1] = {3}, b3[2] = {nb, 3}, b4[2] = {nb, 4}, b1[1] = {nb}, d6[1] = {6};
    TRY(put_f64(f, tl, "/reference/root_pos", n, 1, d3, r->root_pos, "m", "root bone origin, world", err));
    TRY(put_f64(f, tl, "/reference/root_lin_vel", n, 1, d3, r->root_vel, "m/s", "root origin velocity, world (eq. 20, 23)", err));
    TRY(put_f64(f, tl, "/reference/root_lin_acc", n, 1, d3, r->root_acc, "m/s^2", "root origin acceleration, world (eq. 21-22)", err));
    TRY(put_f64(f, tl, "/reference/local_quat", n, 2, b4, r->local_quat, "1",
                "rotation of each bone relative to its parent (root: world), identity at the character's rest pose", err));
    TRY(put_f64(f, tl, "/reference/local_ang_vel", n, 2, b3, r->local_ang_vel, "rad/s",
                "angular velocity of each bone relative to its parent, in the parent frame (root: world)", err));
    TRY(put_f64(f, tl, "/reference/local_ang_acc", n, 2, b3, r->local_ang_acc, "rad/s^2",
                "time derivative of local_ang_vel's components", err));
    TRY(put_f64(f, tl, "/reference/bone_pos", n, 2, b3, r->bone_pos, "m", "world position of each bone origin (joint)", err));
    TRY(put_f64(f, tl, "/reference/bone_quat", n, 2, b4, r->bone_quat, "1", "world rotation of each bone", err));
    TRY(put_f64(f, tl, "/reference/com", n, 1, d3, r->com, "m", "whole-body centre of mass of the ID mass model", err));
    TRY(put_f64(f, tl, "/reference/com_vel", n, 1, d3, r->com_vel, "m/s", "velocity of the centre of mass", err));
    TRY(sc_h5_group(f, "/targets", "PD targets ([L13] eq. 32) in the servo convention of the skeleton", err));
    TRY(put_f64(f, tl, "/targets/local_quat", n, 2, b4, r->target_quat, "1",
                "PD target local rotations: ball joints reference*exp(delta), delta = (tau + kd w)/kp in the joint frame; "
                "hinges: rotation about the axis; root: identity. Slerp between samples", err));
    TRY(sc_h5_group(f, "/contact", "estimated ground contact ([L13] eq. 25-31); ground plane y = 0", err));
    TRY(put_f64(f, tl, "/contact/force", n, 2, b3, r->contact_force, "N", "ground force on each bone, at its centre of mass", err));
    TRY(put_f64(f, tl, "/contact/torque", n, 2, b3, r->contact_torque, "N m", "ground torque on each bone, about its centre of mass", err));
    {
        sc_h5_series *s;
        TRY(sc_h5_series_create_i32(f, "/contact/flag", tl, 1, b1, "1 when the bone is in contact", &s, err));
        for (int k = 0; k < n; k++) TRY(sc_h5_series_append_i32(s, r->contact_flag + (size_t)k * nb, err));
    }
    {
        sc_h5_series *s;
        TRY(sc_h5_series_create_i32(f, "/contact/captured", tl, 1, b1,
                                    "1 where the capture touches the floor with the bone (the contacts retargeting kept)", &s, err));
        for (int k = 0; k < n; k++) TRY(sc_h5_series_append_i32(s, r->captured + (size_t)k * nb, err));
        int allowed[SC_BODY_MAX_BONES] = {0};
        for (size_t i = 0; i < (size_t)n * nb; i++) allowed[i % nb] |= r->contact_flag[i] | r->captured[i];
        size_t dn[1] = {nb};
        TRY(sc_h5_write_i32(f, "/contact/allowed", 1, dn, allowed, "1 for the bones that touch the floor anywhere in the clip", err));
    }
    TRY(put_f64(f, tl, "/contact/lowest_height", n, 1, b1, r->contact_height, "m", "height of each bone's lowest point", err));
    TRY(put_f64(f, tl, "/contact/lowest_speed", n, 1, b1, r->contact_speed, "m/s", "speed of each bone's lowest (material) point", err));
    TRY(put_f64(f, tl, "/contact/resultant", n, 1, d6, r->contact_resultant, "N, N m",
                "resultant contact force (eq. 25) and torque about the com (eq. 26), before the split and clamps", err));
    TRY(sc_h5_group(f, "/torques", "recursive Newton-Euler inverse dynamics", err));
    TRY(put_f64(f, tl, "/torques/joint", n, 2, b3, r->joint_torque, "N m",
                "servo torque on each bone (world; its parent receives the opposite; hinges: axial part); root 0", err));
    TRY(put_f64(f, tl, "/torques/root_residual", n, 1, d6, r->root_residual, "N, N m",
                "force and torque about the root origin the unactuated root would still need", err));
#undef TRY
    return SC_OK;
}

int sc_reference_write_report(sc_h5 *f, const sc_reference *r, const sc_id_report *rep, sc_err *err)
{
    int rc, nb = rep->nb;
    double tmp[SC_BODY_MAX_BONES];
    char names[SC_BODY_MAX_BONES * (SC_NAME_LEN + 1)] = "";
    size_t c = 0;
    for (int j = 0; j < nb; j++) c += (size_t)snprintf(names + c, sizeof names - c, "%s%s", j ? "," : "", r->names[j]);
#define TRY(x) do { if ((rc = (x))) return rc; } while (0)
    TRY(sc_h5_group(f, "/report", "inverse-dynamics report: torques N m, forces N, masses kg; arrays in joint_names order", err));
    TRY(sc_h5_attr_str(f, "/report", "joint_names", names, err));
    TRY(sc_h5_attr_f64_array(f, "/report", "peak_torque_Nm", (size_t)nb, rep->peak_torque, err));
    TRY(sc_h5_attr_f64_array(f, "/report", "rms_torque_Nm", (size_t)nb, rep->rms_torque, err));
    for (int j = 0; j < nb; j++) tmp[j] = (double)rep->limit_exceeded[j];
    TRY(sc_h5_attr_f64_array(f, "/report", "torque_limit_exceeded", (size_t)nb, tmp, err));
    TRY(sc_h5_attr_f64_array(f, "/report", "contact_duty_factor", (size_t)nb, rep->duty, err));
    for (int j = 0; j < nb; j++)
        if (rep->duty[j] > 0) {
            char a[SC_NAME_LEN + 8];
            snprintf(a, sizeof a, "duty_%s", r->names[j]);
            TRY(sc_h5_attr_f64(f, "/report", a, rep->duty[j], err));
        }
    TRY(sc_h5_attr_i64(f, "/report", "push_only_clamps", rep->contact.push_only, err));
    TRY(sc_h5_attr_i64(f, "/report", "friction_cone_clamps", rep->contact.friction, err));
    TRY(sc_h5_attr_i64(f, "/report", "contact_torque_clamps", rep->contact.torque, err));
    TRY(sc_h5_attr_i64(f, "/report", "contact_bone_steps", rep->contact.contact_steps, err));
    TRY(sc_h5_attr_i64(f, "/report", "steps_without_contact_bones", rep->contact.lost_steps, err));
    TRY(sc_h5_attr_i64(f, "/report", "steps_contact_from_resultant", rep->contact.rescued_steps, err));
    TRY(sc_h5_attr_i64(f, "/report", "target_offset_clamps", rep->target_clamps, err));
    TRY(sc_h5_attr_i64(f, "/report", "samples", r->n, err));
    TRY(sc_h5_attr_f64(f, "/report", "dt_s", r->dt, err));
    TRY(sc_h5_attr_f64(f, "/report", "total_mass_kg", rep->total_mass, err));
    TRY(sc_h5_attr_str(f, "/report", "mass_source",
                       rep->mass_source == SC_MASS_SKIN ? "skin weights" : rep->mass_source == SC_MASS_NEAREST ? "nearest bone" : "fixed nodes", err));
    TRY(sc_h5_attr_f64(f, "/report", "weight_N", rep->weight, err));
    TRY(sc_h5_attr_f64(f, "/report", "mean_contact_force_y_N", rep->mean_contact_fy, err));
    TRY(sc_h5_attr_f64(f, "/report", "mean_resultant_force_y_N", rep->mean_resultant_fy, err));
    TRY(sc_h5_attr_f64(f, "/report", "peak_contact_force_y_N", rep->peak_contact_fy, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_force_rms_N", rep->residual_force_rms, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_force_max_N", rep->residual_force_max, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_torque_rms_Nm", rep->residual_torque_rms, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_torque_max_Nm", rep->residual_torque_max, err));
    TRY(sc_h5_attr_f64(f, "/report", "expected_mean_force_y_N", rep->expected_fy, err));
    TRY(sc_h5_attr_f64(f, "/report", "mean_force_ratio", rep->mean_contact_fy / rep->expected_fy, err));
    TRY(sc_h5_attr_i64(f, "/report", "unsupported_samples", rep->unsupported, err));
    TRY(sc_h5_attr_f64(f, "/report", "unsupported_fraction", (double)rep->unsupported / r->n, err));
    TRY(sc_h5_attr_f64(f, "/report", "root_residual_force_rms_per_weight", rep->residual_force_rms / rep->weight, err));
    TRY(sc_h5_attr_f64(f, "/report", "peak_contact_force_y_first_0.2s_per_weight", rep->peak_contact_fy_start / rep->weight, err));
    TRY(sc_h5_attr_i64(f, "/report", "contact_intervals", rep->contact_intervals, err));
    TRY(sc_h5_attr_i64(f, "/report", "contact_intervals_kept", rep->contacts_kept, err));
    TRY(sc_h5_attr_f64(f, "/report", "max_contact_gap_m", rep->max_contact_gap, err));
#undef TRY
    return SC_OK;
}

int sc_id_write_pipeline_report(sc_h5 *f, const sc_id_pipeline_info *info, sc_err *err)
{
    int rc;
#define TRY(x) do { if ((rc = (x))) return rc; } while (0)
    TRY(sc_h5_attr_f64(f, "/report", "contact_height_tol_m", info->height_tol, err));
    TRY(sc_h5_attr_f64(f, "/report", "contact_speed_tol_m_per_s", info->speed_tol, err));
    TRY(sc_h5_attr_i64(f, "/report", "captured_contact_intervals", info->detect.intervals, err));
    TRY(sc_h5_attr_i64(f, "/report", "captured_frames_from_resultant", info->detect.frames_rescued, err));
    TRY(sc_h5_attr_f64(f, "/report", "fit_max_gap_keyframes_m", info->fit.max_gap, err));
    TRY(sc_h5_attr_f64(f, "/report", "fit_root_lowered_m", info->fit.max_root_offset, err));
    TRY(sc_h5_attr_f64(f, "/report", "fit_balance_offset_m", info->fit.max_balance_offset, err));
    TRY(sc_h5_attr_f64(f, "/report", "balance_misfit_before_m_per_s2", info->balance.misfit_before, err));
    TRY(sc_h5_attr_f64(f, "/report", "balance_misfit_after_m_per_s2", info->balance.misfit_after, err));
    TRY(sc_h5_attr_f64(f, "/report", "balance_offset_m", info->balance.max_offset, err));
#undef TRY
    return SC_OK;
}

/* ---- reading ---------------------------------------------------------------------------- */

static int rd(sc_h5 *f, const char *path, int required, int rank, size_t n, size_t nb, size_t last, double *dst, sc_err *err)
{
    if (!sc_h5_exists(f, path)) {
        if (required) return sc_fail(err, SC_EINPUT, "%s:%s: missing", sc_h5_filename(f), path);
        return SC_OK;
    }
    size_t dims[3] = {n, rank == 3 ? nb : last, last}; /* rank 2: [n, last]; rank 3: [n, nb, last] */
    double *data;
    int rc = sc_h5_read_f64(f, path, rank, dims, &data, err);
    if (rc) return rc;
    size_t tot = n * (rank == 3 ? nb * last : last);
    memcpy(dst, data, tot * sizeof(double));
    free(data);
    return SC_OK;
}

/* The values of a reference, checked after reading (a hand-edited or damaged file fails here,
   naming the dataset and element, instead of steering a simulation with NaN). */
static int check_reference(sc_h5 *f, const sc_reference *r, int has_flag, int has_captured, sc_err *err)
{
    size_t n = (size_t)r->n, nb = (size_t)r->nb, q4[3] = {n, nb, 4}, v3[3] = {n, nb, 3};
    int rc;
#define CHECK(x) do { if ((rc = (x))) return rc; } while (0)
    CHECK(sc_h5_check_increasing(f, "/time", r->time, n, err));
    CHECK(sc_h5_check_range(f, "/reference/root_pos", r->root_pos, 3 * n, 3, -1e4, 1e4, 0, err));
    CHECK(sc_h5_check_unit_quats(f, "/reference/local_quat", r->local_quat, 3, q4, err));
    CHECK(sc_h5_check_unit_quats(f, "/targets/local_quat", r->target_quat, 3, q4, err));
    /* the optional series are zero when absent */
    CHECK(sc_h5_check_finite(f, "/reference/root_lin_vel", r->root_vel, 3 * n, 3, err));
    CHECK(sc_h5_check_finite(f, "/reference/root_lin_acc", r->root_acc, 3 * n, 3, err));
    CHECK(sc_h5_check_range_nd(f, "/reference/local_ang_vel", r->local_ang_vel, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_range_nd(f, "/reference/local_ang_acc", r->local_ang_acc, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_range_nd(f, "/reference/bone_pos", r->bone_pos, 3, v3, -1e4, 1e4, 0, err));
    CHECK(sc_h5_check_range_nd(f, "/reference/bone_quat", r->bone_quat, 3, q4, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_range(f, "/reference/com", r->com, 3 * n, 3, -1e4, 1e4, 0, err));
    CHECK(sc_h5_check_finite(f, "/reference/com_vel", r->com_vel, 3 * n, 3, err));
    CHECK(sc_h5_check_range_nd(f, "/contact/force", r->contact_force, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_range_nd(f, "/contact/torque", r->contact_torque, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_finite(f, "/contact/lowest_height", r->contact_height, n * nb, nb, err));
    CHECK(sc_h5_check_range(f, "/contact/lowest_speed", r->contact_speed, n * nb, nb, 0, INFINITY, 0, err));
    CHECK(sc_h5_check_finite(f, "/contact/resultant", r->contact_resultant, 6 * n, 6, err));
    CHECK(sc_h5_check_range_nd(f, "/torques/joint", r->joint_torque, 3, v3, -INFINITY, INFINITY, 0, err));
    CHECK(sc_h5_check_finite(f, "/torques/root_residual", r->root_residual, 6 * n, 6, err));
    if (has_flag) CHECK(sc_h5_check_index(f, "/contact/flag", r->contact_flag, n * nb, nb, 0, 1, err));
    if (has_captured) CHECK(sc_h5_check_index(f, "/contact/captured", r->captured, n * nb, nb, 0, 1, err));
#undef CHECK
    return SC_OK;
}

int sc_reference_read_h5(sc_h5 *f, sc_reference *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    const char *path = sc_h5_filename(f);
    char **names = NULL;
    size_t nnames = 0, tdims[1] = {0};
    double *time = NULL;
    int rc, has[2] = {0, 0}; /* /contact/flag, /contact/captured present */
    if ((rc = sc_h5_read_strings(f, "/bones/names", &nnames, &names, err)) ||
        (rc = sc_h5_check_count(f, "/bones/names", nnames, 1, SC_BODY_MAX_BONES, err)) ||
        (rc = sc_h5_check_names(f, "/bones/names", names, nnames, SC_NAME_LEN, err)) ||
        (rc = sc_h5_read_f64(f, "/time", 1, tdims, &time, err)) ||
        (rc = sc_h5_check_count(f, "/time", tdims[0], 1, INT_MAX / 64, err)))
        goto fail;
    if ((rc = sc_reference_alloc(r, (int)tdims[0], (int)nnames, err))) goto fail;
    memcpy(r->time, time, tdims[0] * sizeof(double));
    r->dt = tdims[0] > 1 ? time[1] - time[0] : 0;
    for (size_t j = 0; j < nnames; j++) snprintf(r->names[j], SC_NAME_LEN, "%s", names[j]);
    size_t n = tdims[0], nb = nnames;
    if ((rc = rd(f, "/reference/root_pos", 1, 2, n, nb, 3, r->root_pos, err)) ||
        (rc = rd(f, "/reference/local_quat", 1, 3, n, nb, 4, r->local_quat, err)) ||
        (rc = rd(f, "/targets/local_quat", 1, 3, n, nb, 4, r->target_quat, err)) ||
        (rc = rd(f, "/reference/root_lin_vel", 0, 2, n, nb, 3, r->root_vel, err)) ||
        (rc = rd(f, "/reference/root_lin_acc", 0, 2, n, nb, 3, r->root_acc, err)) ||
        (rc = rd(f, "/reference/local_ang_vel", 0, 3, n, nb, 3, r->local_ang_vel, err)) ||
        (rc = rd(f, "/reference/local_ang_acc", 0, 3, n, nb, 3, r->local_ang_acc, err)) ||
        (rc = rd(f, "/reference/bone_pos", 0, 3, n, nb, 3, r->bone_pos, err)) ||
        (rc = rd(f, "/reference/bone_quat", 0, 3, n, nb, 4, r->bone_quat, err)) ||
        (rc = rd(f, "/reference/com", 0, 2, n, nb, 3, r->com, err)) ||
        (rc = rd(f, "/reference/com_vel", 0, 2, n, nb, 3, r->com_vel, err)) ||
        (rc = rd(f, "/contact/force", 0, 3, n, nb, 3, r->contact_force, err)) ||
        (rc = rd(f, "/contact/torque", 0, 3, n, nb, 3, r->contact_torque, err)) ||
        (rc = rd(f, "/contact/lowest_height", 0, 2, n, nb, nb, r->contact_height, err)) ||
        (rc = rd(f, "/contact/lowest_speed", 0, 2, n, nb, nb, r->contact_speed, err)) ||
        (rc = rd(f, "/contact/resultant", 0, 2, n, nb, 6, r->contact_resultant, err)) ||
        (rc = rd(f, "/torques/joint", 0, 3, n, nb, 3, r->joint_torque, err)) ||
        (rc = rd(f, "/torques/root_residual", 0, 2, n, nb, 6, r->root_residual, err)))
        goto fail;
    static const char *const ipaths[2] = {"/contact/flag", "/contact/captured"};
    int *idst[2] = {r->contact_flag, r->captured};
    for (int i = 0; i < 2; i++)
        if (sc_h5_exists(f, ipaths[i])) {
            size_t d[2] = {n, nb};
            int *fl;
            if ((rc = sc_h5_read_i32(f, ipaths[i], 2, d, &fl, err))) goto fail;
            memcpy(idst[i], fl, n * nb * sizeof(int));
            free(fl);
            has[i] = 1;
        }
    if ((rc = check_reference(f, r, has[0], has[1], err))) goto fail;
    char *hash = NULL;
    if (sc_h5_read_attr_str(f, "/", "character_hash", &hash, NULL) == SC_OK) {
        r->character_hash = strtoull(hash, NULL, 16);
        free(hash);
    }
    sc_h5_free_strings(names, nnames);
    free(time);
    return SC_OK;
fail:
    (void)path;
    if (names) sc_h5_free_strings(names, nnames);
    free(time);
    sc_reference_free(r);
    return rc;
}

static int reference_reader(sc_h5 *f, void *arg, sc_err *err) { return sc_reference_read_h5(f, arg, err); }

int sc_reference_read(const char *path, sc_reference *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    return sc_h5_read_file(path, reference_reader, r, err);
}

int sc_reference_read_image(const void *data, size_t size, const char *name, sc_reference *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    return sc_h5_read_image(data, size, name, reference_reader, r, err);
}

uint64_t sc_reference_hash(const sc_reference *r)
{
    uint64_t h = SC_HASH_INIT;
    size_t n = (size_t)r->n, nb = (size_t)r->nb;
    h = sc_hash_bytes(h, r->time, 8 * n);
    h = sc_hash_bytes(h, r->root_pos, 24 * n);
    h = sc_hash_bytes(h, r->root_vel, 24 * n);
    h = sc_hash_bytes(h, r->local_quat, 32 * n * nb);
    h = sc_hash_bytes(h, r->local_ang_vel, 24 * n * nb);
    h = sc_hash_bytes(h, r->target_quat, 32 * n * nb);
    h = sc_hash_bytes(h, r->bone_pos, 24 * n * nb);
    h = sc_hash_bytes(h, r->bone_quat, 32 * n * nb);
    h = sc_hash_bytes(h, r->com, 24 * n);
    h = sc_hash_bytes(h, r->com_vel, 24 * n);
    return sc_hash_bytes(h, r->contact_flag, sizeof(int) * n * nb);
}

int sc_reference_write_character(sc_h5 *f, const sc_model *m, sc_err *err)
{
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sc_model_hash(m));
    return sc_h5_attr_str(f, "/", "character_hash", hex, err);
}

int sc_reference_check_character(const sc_reference *r, const char *path, const sc_model *m, sc_err *err)
{
    if (r->character_hash && r->character_hash != sc_model_hash(m))
        return sc_fail(err, SC_EINPUT, "%s: made for another character (its character_hash %016llx is not this character's %016llx): run "
                       "inverse-dynamics on this character", path, (unsigned long long)r->character_hash, (unsigned long long)sc_model_hash(m));
    return SC_OK;
}

void sc_reference_targets_at(const sc_reference *r, double t, sc_quat *out)
{
    sc_targets_interpolate(r->time, r->n, r->target_quat, r->nb, t, out);
}

/* ---- configuration ---------------------------------------------------------------------- */

static int frames_pair(sc_cfg_node *sec, int *first, int *last, sc_err *err)
{
    double v[2], def[2] = {1, -1};
    int rc = sc_cfg_vec(sec, "frames", 2, def, v, err);
    if (rc) return rc;
    for (int i = 0; i < 2; i++)
        if (v[i] != floor(v[i]) || fabs(v[i]) > 1e8) {
            char w[256];
            return sc_fail(err, SC_EINPUT, "%s: motion.frames must be two whole frame numbers [first, last] (last -1 = the "
                           "clip's last frame), got %g", sc_cfg_where(sc_cfg_get(sec, "frames"), w, sizeof w), v[i]);
        }
    if (v[1] != -1 && v[0] > v[1]) {
        char w[256];
        return sc_fail(err, SC_EINPUT, "%s: motion.frames [%g, %g] is reversed: the first frame must not come after the "
                       "last (use -1 as the last for the end of the clip)", sc_cfg_where(sc_cfg_get(sec, "frames"), w, sizeof w),
                       v[0], v[1]);
    }
    *first = (int)v[0];
    *last = (int)v[1];
    return SC_OK;
}

static int read_map(sc_cfg_node *sec, sc_retarget_opts *o, sc_err *err)
{
    char w[256], buf[32];
    sc_cfg_node *map = sc_cfg_get(sec, "map");
    if (!map || sc_cfg_is_scalar(map)) {
        int rc = sc_cfg_string(sec, "map", "default", buf, sizeof buf, err);
        if (rc) return rc;
        if (strcmp(buf, "default") != 0)
            return sc_fail(err, SC_EINPUT, "%s: retarget.map must be 'default' (the CMU map) or a map from character bones "
                           "to BVH joints ({bone: joint} or {bone: [joint, tail]})", sc_cfg_where(map, w, sizeof w));
        return SC_OK; /* the defaults already hold the CMU map */
    }
    if (!sc_cfg_is_map(map))
        return sc_fail(err, SC_EINPUT, "%s: retarget.map must be a map from character bones to BVH joints", sc_cfg_where(map, w, sizeof w));
    int n = sc_cfg_len(map);
    if (n > SC_RETARGET_MAX) return sc_fail(err, SC_EINPUT, "%s: at most %d bones in retarget.map", sc_cfg_where(map, w, sizeof w), SC_RETARGET_MAX);
    o->nmap = 0;
    sc_cfg_where(map, o->map_where, sizeof o->map_where);
    for (int i = 0; i < n; i++) {
        sc_cfg_node *v = sc_cfg_at(map, i);
        sc_retarget_entry *e = &o->map[o->nmap++];
        memset(e, 0, sizeof *e);
        snprintf(e->bone, sizeof e->bone, "%s", sc_cfg_key_at(map, i));
        sc_cfg_where(v, e->where, sizeof e->where);
        const char *j = NULL, *t = "";
        if (sc_cfg_is_scalar(v)) j = sc_cfg_scalar(v);
        else if (sc_cfg_is_seq(v) && (sc_cfg_len(v) == 1 || sc_cfg_len(v) == 2)) {
            j = sc_cfg_scalar(sc_cfg_at(v, 0));
            if (sc_cfg_len(v) == 2) t = sc_cfg_scalar(sc_cfg_at(v, 1));
        }
        if (!j || !t || !j[0] || strlen(j) >= SC_NAME_LEN || strlen(t) >= SC_NAME_LEN)
            return sc_fail(err, SC_EINPUT, "%s: retarget.map.%s must be a BVH joint name or [joint, tail]", e->where, e->bone);
        snprintf(e->joint, sizeof e->joint, "%s", j);
        snprintf(e->tail, sizeof e->tail, "%s", t);
    }
    return SC_OK;
}

/* `auto` (*out = 0) or a number in [lo, hi]. */
static int auto_or_number(sc_cfg_node *sec, const char *key, double lo, double hi, double *out, sc_err *err)
{
    char buf[64], w[256];
    int rc = sc_cfg_string(sec, key, "auto", buf, sizeof buf, err);
    if (rc) return rc;
    *out = 0;
    if (!strcmp(buf, "auto")) return SC_OK;
    char *end;
    double v = strtod(buf, &end);
    if (*end || end == buf || !(v >= lo) || !(v <= hi))
        return sc_fail(err, SC_EINPUT, "%s: %s must be 'auto' or a number in [%g, %g], got '%s'", sc_cfg_where(sc_cfg_get(sec, key), w, sizeof w),
                       key, lo, hi, buf);
    *out = v;
    return SC_OK;
}

int sc_id_read_config(struct sc_cfg *cfg, sc_id_config *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    int rc = sc_retarget_default_opts(&c->retarget, err);
    if (rc) return rc;
    sc_id_default_opts(&c->id);
    sc_cfg_node *root = sc_cfg_root(cfg), *mo, *rt, *ki, *co, *dy;
    char w[256], name[512], buf[64];
    if ((rc = sc_cfg_section(root, "motion", &mo, err)) || (rc = sc_cfg_section(root, "retarget", &rt, err)) ||
        (rc = sc_cfg_section(root, "kinematics", &ki, err)) || (rc = sc_cfg_section(root, "contact_estimation", &co, err)) ||
        (rc = sc_cfg_section(root, "dynamics", &dy, err)))
        return rc;
    /* motion */
    long window;
    static const char *const filters[] = {"none", "moving_average", "butterworth"};
    if ((rc = sc_cfg_string(mo, "bvh", NULL, name, sizeof name, err))) return rc;
    sc_cfg_where(sc_cfg_get(mo, "bvh"), c->bvh_where, sizeof c->bvh_where);
    sc_cfg_where(sc_cfg_get(mo, "filter_cutoff"), c->filter_cutoff_where, sizeof c->filter_cutoff_where);
    if ((rc = sc_cfg_double_range(mo, "unit", 0.056444, 1e-9, 1e3, &c->retarget.unit, err)) ||
        (rc = frames_pair(mo, &c->retarget.first, &c->retarget.last, err)) ||
        (rc = sc_cfg_bool(mo, "mirror", 0, &c->retarget.mirror, err)) ||
        (rc = sc_cfg_enum(mo, "filter", filters, 3, 0, &c->filter, err)) ||
        (rc = sc_cfg_int(mo, "filter_window", 5, 1, 1001, &window, err)) ||
        (rc = sc_cfg_double_range(mo, "filter_cutoff", 6, 1e-3, 1e4, &c->filter_cutoff, err)))
        return rc;
    if (window % 2 == 0)
        return sc_fail(err, SC_EINPUT, "%s: motion.filter_window must be odd (a centred window), got %ld",
                       sc_cfg_where(sc_cfg_get(mo, "filter_window"), w, sizeof w), window);
    c->filter_window = (int)window;
    /* retarget */
    static const char *const floors[] = {"keep", "flat", "auto"};
    static const char *const hinge_fits[] = {"direction", "twist"};
    if ((rc = read_map(rt, &c->retarget, err)) || (rc = sc_cfg_string(rt, "root_scale", "auto", buf, sizeof buf, err)) ||
        (rc = sc_cfg_bool(rt, "recentre", 1, &c->retarget.recentre, err)) ||
        (rc = sc_cfg_bool(rt, "hinge_ik", 1, &c->retarget.hinge_ik, err)) ||
        (rc = sc_cfg_enum(rt, "hinge_fit", hinge_fits, 2, SC_HINGE_DIRECTION, &c->retarget.hinge_fit, err)) ||
        (rc = sc_cfg_enum(rt, "floor", floors, 3, 2, &c->floor_mode, err)) ||
        (rc = sc_cfg_double_range(rt, "floor_percentile", 50, 0, 100, &c->floor_percentile, err)) ||
        (rc = sc_cfg_double_range(rt, "height_offset", 0, -10, 10, &c->height_offset, err)) ||
        (rc = sc_cfg_bool(rt, "contacts", 1, &c->fit_contacts, err)) || (rc = sc_cfg_bool(rt, "balance", 1, &c->balance, err)))
        return rc;
    if (strcmp(buf, "auto") != 0) {
        char *end;
        double s = strtod(buf, &end);
        if (*end || end == buf || !(s > 0) || !(s < 100))
            return sc_fail(err, SC_EINPUT, "%s: retarget.root_scale must be 'auto' or a number in (0, 100), got '%s'",
                           sc_cfg_where(sc_cfg_get(rt, "root_scale"), w, sizeof w), buf);
        c->retarget.root_scale = s;
    }
    /* kinematics */
    static const char *const schemes[] = {"forward", "central"};
    if ((rc = sc_cfg_double_range(ki, "dt", 0.0005, 1e-6, 0.1, &c->dt, err)) ||
        (rc = sc_cfg_enum(ki, "differences", schemes, 2, SC_DIFF_FORWARD, &c->scheme, err)))
        return rc;
    /* contact */
    sc_gc_opts *ct = &c->id.contact;
    static const char *const splits[] = {"residual", "paper"};
    if ((rc = sc_cfg_double_range(co, "mu", ct->mu, 0, 10, &ct->mu, err)) ||
        (rc = auto_or_number(co, "height_tol", 1e-4, 1, &c->height_tol, err)) ||
        (rc = auto_or_number(co, "speed_tol", 1e-3, 100, &c->speed_tol, err)) ||
        (rc = sc_cfg_double_range(co, "support", ct->support, 0, 1, &ct->support, err)) ||
        (rc = sc_cfg_double_range(co, "min_distance", ct->min_dist, 1e-6, 10, &ct->min_dist, err)) ||
        (rc = sc_cfg_enum(co, "torque_split", splits, 2, SC_SPLIT_RESIDUAL, &ct->torque_split, err)))
        return rc;
    sc_cfg_node *bones = sc_cfg_get(co, "bones");
    c->all_bones = 1;
    if (bones && sc_cfg_is_seq(bones)) {
        c->all_bones = 0;
        sc_cfg_where(bones, c->bones_where, sizeof c->bones_where);
        int n = sc_cfg_len(bones);
        if (n > SC_BODY_MAX_BONES) return sc_fail(err, SC_EINPUT, "%s: too many bones in contact_estimation.bones", c->bones_where);
        for (int i = 0; i < n; i++) {
            const char *s = sc_cfg_scalar(sc_cfg_at(bones, i));
            if (!s || strlen(s) >= SC_NAME_LEN)
                return sc_fail(err, SC_EINPUT, "%s: contact_estimation.bones must list bone names", sc_cfg_where(sc_cfg_at(bones, i), w, sizeof w));
            snprintf(c->allowed[c->nallowed++], SC_NAME_LEN, "%s", s);
        }
    } else {
        if ((rc = sc_cfg_string(co, "bones", "all", buf, sizeof buf, err))) return rc;
        if (strcmp(buf, "all") != 0)
            return sc_fail(err, SC_EINPUT, "%s: contact_estimation.bones must be 'all' or a list of bone names, got '%s'",
                           sc_cfg_where(bones, w, sizeof w), buf);
    }
    /* dynamics */
    static const char *const masses[] = {"skin", "fixed_nodes"};
    static const char *const rates[] = {"analytic", "difference"};
    int mm;
    if ((rc = sc_cfg_enum(dy, "mass_model", masses, 2, 0, &mm, err)) ||
        (rc = sc_cfg_vec_range(dy, "gravity", 3, c->id.gravity, -1e3, 1e3, c->id.gravity, err)) ||
        (rc = sc_cfg_enum(dy, "momentum_rate", rates, 2, SC_RATE_ANALYTIC, &c->id.momentum_rate, err)) ||
        (rc = sc_cfg_double_range(dy, "max_target_offset", c->id.max_target_offset, 1e-3, 3.0, &c->id.max_target_offset, err)))
        return rc;
    c->mass_model = mm == 0 ? SC_MASS_SKIN : SC_MASS_FIXED;
    return sc_find_input(name, sc_cfg_path(cfg), 1, c->bvh_where, c->bvh, sizeof c->bvh, err);
}

int sc_id_allowed_mask(const sc_id_config *c, const sc_model *m, unsigned char *mask, sc_err *err)
{
    for (int j = 0; j < m->nbones; j++) mask[j] = (unsigned char)c->all_bones;
    for (int i = 0; i < c->nallowed; i++) {
        int found = 0;
        for (int j = 0; j < m->nbones; j++)
            if (!strcmp(m->bone_name[j], c->allowed[i])) mask[j] = 1, found = 1;
        if (!found)
            return sc_fail(err, SC_EINPUT, "%s: contact_estimation.bones names '%s', which the character does not have", c->bones_where,
                           c->allowed[i]);
    }
    return SC_OK;
}

int sc_reference_state_at(const sc_reference *r, const sc_model *m, double t, double root_pos[3], sc_quat *local, double root_vel[3],
                          double *local_ang_vel, sc_err *err)
{
    int k = 0; /* the sample at or just before t */
    while (k + 1 < r->n && r->time[k + 1] <= t) k++;
    for (int b = 0; b < m->nbones; b++) {
        local[b] = sc_q_identity();
        if (local_ang_vel) local_ang_vel[3 * b] = local_ang_vel[3 * b + 1] = local_ang_vel[3 * b + 2] = 0;
    }
    for (int j = 0; j < r->nb; j++) {
        int b = sc_model_bone_index(m, r->names[j]);
        if (b < 0) return sc_fail(err, SC_EINPUT, "reference: bone '%s' is not in the character", r->names[j]);
        const double *q = r->local_quat + ((size_t)k * r->nb + j) * 4;
        local[b] = sc_q_normalize((sc_quat){q[0], q[1], q[2], q[3]});
        if (local_ang_vel) memcpy(local_ang_vel + 3 * b, r->local_ang_vel + ((size_t)k * r->nb + j) * 3, 3 * sizeof(double));
    }
    if (root_pos) memcpy(root_pos, r->root_pos + 3 * k, 3 * sizeof(double));
    if (root_vel) memcpy(root_vel, r->root_vel + 3 * k, 3 * sizeof(double));
    return SC_OK;
}

/* The inverse-dynamics driver (eq. 25-32 per sample), the balance at the simulation rate and the
 * pipeline from a BVH clip to a reference. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "model/world.h"
#include "motion/inverse_dynamics.h"

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
    o->gravity[1] = -SC_STANDARD_GRAVITY;
    o->momentum_rate = SC_RATE_ANALYTIC;
    o->max_target_offset = 1.5;
    sc_gc_default_opts(&o->contact);
}

/* What one sample computes (kept across samples, as one buffer) and the sums over the samples. */
typedef struct id_work {
    sc_bone_kin kin[SC_BODY_MAX_BONES];
    sc_gc_probe probe[SC_BODY_MAX_BONES];
    double fext[3 * SC_BODY_MAX_BONES], text[3 * SC_BODY_MAX_BONES], jf[3 * SC_BODY_MAX_BONES], jt[3 * SC_BODY_MAX_BONES];
    int flag[SC_BODY_MAX_BONES];
    double sumsq[SC_BODY_MAX_BONES];
    long ncontact[SC_BODY_MAX_BONES];
    double res_f2, res_t2;
} id_work;

/* The momenta of every sample ([n*6] P, H) for SC_RATE_DIFFERENCE. */
static double *sample_momenta(const sc_body *b, const sc_traj *t, id_work *w)
{
    int n = t->n;
    double *PH = malloc((size_t)n * 6 * sizeof(double));
    if (!PH) return NULL;
    for (int k = 0; k < n; k++) {
        sc_momentum mo;
        sc_kin_forward(b, t, k, w->kin);
        sc_body_momentum(b, w->kin, &mo);
        sc_v3_store(PH + 6 * k, mo.P);
        sc_v3_store(PH + 6 * k + 3, mo.H);
    }
    return PH;
}

/* Eq. 27-31 on sample k's resultant (none without a contact geometry: airborne). */
static void estimate_contact(const sc_body *b, const sc_gc_geom *g, const sc_momentum *mo, sc_vec3 fc, sc_vec3 tc, const sc_id_opts *o,
                             const unsigned char *given, sc_id_report *R, id_work *w)
{
    int nb = b->nb;
    if (g) {
        sc_gc_opts co = o->contact;
        co.weight = R->weight;
        sc_gc_estimate(b, g, w->kin, mo->com, fc, tc, &co, given, w->fext, w->text, w->flag, w->probe, &R->contact);
    } else {
        memset(w->fext, 0, sizeof(double) * 3 * (size_t)nb);
        memset(w->text, 0, sizeof(double) * 3 * (size_t)nb);
        for (int j = 0; j < nb; j++) {
            w->flag[j] = 0;
            w->probe[j].height = NAN;
            w->probe[j].speed = NAN;
        }
    }
}

/* Sample k's bones into out: pose, contact, servo torque and the PD target of eq. 32. Returns
 * the summed vertical contact force. */
static double store_bones(const sc_model *m, const sc_body *b, const sc_traj *t, const sc_id_opts *o, int k, sc_reference *out, sc_id_report *R,
                          id_work *w)
{
    int nb = b->nb;
    size_t o3 = (size_t)k * nb * 3, o4 = (size_t)k * nb * 4, o1 = (size_t)k * nb;
    const sc_bone_kin *kin = w->kin;
    double fy = 0;
    for (int j = 0; j < nb; j++) {
        const sc_bone_kin *q = &kin[j];
        q_store(out->local_quat + o4 + 4 * j, t->local[o1 + j]);
        memcpy(out->local_ang_vel + o3 + 3 * j, t->ang_vel + o3 + 3 * j, 3 * sizeof(double));
        memcpy(out->local_ang_acc + o3 + 3 * j, t->ang_acc + o3 + 3 * j, 3 * sizeof(double));
        sc_v3_store(out->bone_pos + o3 + 3 * j, q->p);
        q_store(out->bone_quat + o4 + 4 * j, q->q);
        memcpy(out->contact_force + o3 + 3 * j, w->fext + 3 * j, 3 * sizeof(double));
        memcpy(out->contact_torque + o3 + 3 * j, w->text + 3 * j, 3 * sizeof(double));
        out->contact_flag[o1 + j] = w->flag[j];
        out->contact_height[o1 + j] = w->probe[j].height;
        out->contact_speed[o1 + j] = w->probe[j].speed;
        w->ncontact[j] += w->flag[j];
        fy += w->fext[3 * j + 1];
        sc_quat target = sc_q_identity();
        sc_vec3 act = {0, 0, 0};
        if (j > 0) {
            act = sc_joint_actuated(b, kin, j, sc_v3_load(w->jt + 3 * j));
            int clamped = 0;
            target = sc_pd_target(b, kin, j, t->local[o1 + j], sc_v3_load(t->ang_vel + o3 + 3 * j), act, m->kp ? m->kp[j] : 0, m->kd ? m->kd[j] : 0,
                                  o->max_target_offset, &clamped);
            R->target_clamps += clamped;
            double a = sc_v3_norm(act);
            R->peak_torque[j] = fmax(R->peak_torque[j], a);
            w->sumsq[j] += a * a;
            if (m->torque_limit && m->torque_limit[j] > 0 && a > m->torque_limit[j]) R->limit_exceeded[j]++;
        }
        sc_v3_store(out->joint_torque + o3 + 3 * j, act);
        q_store(out->target_quat + o4 + 4 * j, target);
    }
    return fy;
}

/* Eq. 25-32 on sample k. Returns the bone with a non-finite torque or contact force, or -1. */
static int id_sample(const sc_model *m, const sc_body *b, const sc_gc_geom *g, const sc_traj *t, const sc_id_opts *o, const double *PH, int k,
                     sc_reference *out, sc_id_report *R, id_work *w)
{
    int nb = b->nb, n = t->n;
    size_t o3 = (size_t)k * nb * 3, o1 = (size_t)k * nb;
    sc_vec3 grav = sc_v3_load(o->gravity);
    out->time[k] = k * t->dt;
    sc_kin_forward(b, t, k, w->kin);
    sc_momentum mo;
    sc_body_momentum(b, w->kin, &mo);
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
    R->mean_resultant_fy += fc.y;
    estimate_contact(b, g, &mo, fc, tc, o, o->contact_flags ? o->contact_flags + o1 : NULL, R, w);
    sc_rnea(b, w->kin, o->gravity, w->fext, w->text, w->jf, w->jt);
    double fy = store_bones(m, b, t, o, k, out, R, w);
    R->mean_contact_fy += fy;
    R->peak_contact_fy = fmax(R->peak_contact_fy, fy);
    if (k * t->dt <= 0.2 + 1e-9) R->peak_contact_fy_start = fmax(R->peak_contact_fy_start, fy);
    {
        int any = 0;
        for (int j = 0; j < nb; j++) any |= w->flag[j];
        R->unsupported += !any && fc.y > 0.1 * R->weight;
    }
    if (k == 0) R->com_vel_start = mo.com_vel.y;
    if (k == n - 1) R->com_vel_end = mo.com_vel.y;
    sc_v3_store(out->root_pos + 3 * k, sc_v3_load(t->root_pos + 3 * k));
    sc_v3_store(out->root_vel + 3 * k, sc_v3_load(t->root_vel + 3 * k));
    sc_v3_store(out->root_acc + 3 * k, sc_v3_load(t->root_acc + 3 * k));
    sc_v3_store(out->com + 3 * k, mo.com);
    sc_v3_store(out->com_vel + 3 * k, mo.com_vel);
    memcpy(out->root_residual + 6 * k, w->jf, 3 * sizeof(double));
    memcpy(out->root_residual + 6 * k + 3, w->jt, 3 * sizeof(double));
    double rf = sc_v3_norm(sc_v3_load(w->jf)), rt = sc_v3_norm(sc_v3_load(w->jt));
    w->res_f2 += rf * rf;
    w->res_t2 += rt * rt;
    R->residual_force_max = fmax(R->residual_force_max, rf);
    R->residual_torque_max = fmax(R->residual_torque_max, rt);
    for (int c = 0; c < 3 * nb; c++)
        if (!isfinite(out->joint_torque[o3 + c]) || !isfinite(out->contact_force[o3 + c])) return c / 3;
    return -1;
}

/* The report's means and acceptance figures from the sums over the samples. */
static void finish_report(const sc_body *b, const sc_traj *t, const id_work *w, sc_id_report *R)
{
    int n = t->n;
    for (int j = 0; j < b->nb; j++) {
        R->rms_torque[j] = sqrt(w->sumsq[j] / n);
        R->duty[j] = (double)w->ncontact[j] / n;
    }
    R->residual_force_rms = sqrt(w->res_f2 / n);
    R->residual_torque_rms = sqrt(w->res_t2 / n);
    R->mean_contact_fy /= n;
    R->mean_resultant_fy /= n;
    /* what the mean vertical force must be: m g + m (v_end - v_start) / T */
    R->expected_fy = R->weight + (n > 1 ? b->total_mass * (R->com_vel_end - R->com_vel_start) / ((n - 1) * t->dt) : 0);
}

int sc_id_run(const sc_model *m, const sc_body *b, const sc_gc_geom *g, const sc_traj *t, const sc_id_opts *o, sc_reference *out, sc_id_report *rep,
              sc_err *err)
{
    int nb = b->nb, n = t->n;
    if (m->nbones != nb || t->nb != nb)
        return sc_fail(err, SC_EINPUT, "inverse dynamics: %d bones in the character, %d in the body model, %d in the motion", m->nbones, nb, t->nb);
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
    id_work *w = calloc(1, sizeof *w);
    double *PH = NULL; /* [n*6] momenta for SC_RATE_DIFFERENCE */
    if (w && o->momentum_rate == SC_RATE_DIFFERENCE && n > 1) PH = sample_momenta(b, t, w);
    if (!w || (o->momentum_rate == SC_RATE_DIFFERENCE && n > 1 && !PH)) {
        free(w);
        sc_reference_free(out);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int k = 0; k < n; k++) {
        int j = id_sample(m, b, g, t, o, PH, k, out, &R, w);
        if (j >= 0) {
            free(PH);
            free(w);
            sc_reference_free(out);
            return sc_fail(err, SC_ENUMERIC,
                           "inverse dynamics: step %d (t = %.4f s): non-finite torque or contact force "
                           "on bone %d '%s'",
                           k, k * t->dt, j, m->bone_name ? m->bone_name[j] : "?");
        }
    }
    free(PH);
    finish_report(b, t, w, &R);
    free(w);
    if (rep) *rep = R;
    return SC_OK;
}

/* ---- balance at the simulation rate -------------------------------------------------------- */

int sc_id_balance(const sc_body *b, sc_traj *t, const unsigned char *flags, double mu, double gravity, double offset, sc_id_balance_info *info,
                  sc_err *err)
{
    int n = t->n, nb = t->nb;
    sc_id_balance_info inf;
    memset(&inf, 0, sizeof inf);
    if (n < SC_OFFSET_FIT_MIN_FRAMES) {
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
        free(a0);
        free(d);
        free(w);
        free(dd3);
        free(tt);
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
            sc_offset_fit(n, h, lambda, NULL, ta, xa, w + 2 * n, w + 3 * n, w + 4 * n);
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
    free(a0);
    free(d);
    free(w);
    free(dd3);
    free(tt);
    if (info) *info = inf;
    return SC_OK;
}

/* ---- the pipeline ------------------------------------------------------------------------- */

/* What the pipeline's stages share. */
typedef struct id_pipeline {
    const sc_id_config *c;
    const sc_model *m;
    int nb;
    double grav; /* m/s^2, down */
    sc_bvh bvh;
    sc_motion mo;
    sc_body body;
    sc_gc_geom geom;
    sc_traj traj;
    unsigned char allowed[SC_BODY_MAX_BONES];
    unsigned char *kflags; /* [nframes*nb] the capture's contacts per keyframe */
    unsigned char *sflags; /* [n*nb] ... per sample */
    sc_id_pipeline_info inf;
} id_pipeline;

int sc_id_min_frames(const sc_id_config *c, const char **why)
{
    int n = SC_DIFF_MIN_FRAMES;
    *why = "the differences of the accelerations";
    if (c->filter && SC_FILTER_MIN_FRAMES > n) n = SC_FILTER_MIN_FRAMES, *why = "the motion filter";
    if (c->filter == 1 && c->filter_window > n) n = c->filter_window, *why = "motion.filter_window";
    if (c->balance && SC_OFFSET_FIT_MIN_FRAMES > n) n = SC_OFFSET_FIT_MIN_FRAMES, *why = "the balance fit of retarget.balance";
    return n;
}

/* Retargets the clip onto the character (a range too short for the stencils refused: their
 * stages would be skipped, leaving absurd velocities), filters it, builds the mass and contact
 * models and sets the floor; the contact tolerances from the character unless given. */
static int prepare_motion(id_pipeline *p, sc_err *err)
{
    const sc_id_config *c = p->c;
    const sc_model *m = p->m;
    int rc;
    if ((rc = sc_retarget(&p->bvh, c->bvh, m, &c->retarget, &p->mo, &p->inf.retarget, err))) return rc;
    const char *why;
    int need = sc_id_min_frames(c, &why);
    if (p->mo.nframes < need)
        return sc_fail(err, SC_EINPUT, "%s: motion.frames [%d, %d] selects %d frame%s of %s; at least %d are needed for %s", c->frames_where,
                       c->retarget.first, c->retarget.last, p->mo.nframes, p->mo.nframes == 1 ? "" : "s", c->bvh, need, why);
    if ((c->filter == 1 && (rc = sc_motion_smooth(&p->mo, c->filter_window, err))) ||
        (c->filter == 2 && (rc = sc_motion_lowpass(&p->mo, c->filter_cutoff, err))) || (rc = sc_body_from_model(m, c->mass_model, &p->body, err)) ||
        (rc = sc_gc_geom_build(m, &p->geom, err)) || (rc = sc_id_allowed_mask(c, m, p->allowed, err)))
        return rc;
    p->inf.frame_time = p->mo.frame_time;
    sc_gc_auto_tolerances(m, p->grav > 0 ? p->grav : SC_STANDARD_GRAVITY, &p->inf.height_tol, &p->inf.speed_tol);
    if (c->height_tol > 0) p->inf.height_tol = c->height_tol;
    if (c->speed_tol > 0) p->inf.speed_tol = c->speed_tol;
    if (c->floor_mode > 0)
        return sc_gc_floor(&p->body, &p->geom, &p->mo, p->allowed, p->inf.speed_tol, c->floor_mode == 2, c->floor_percentile, c->height_offset,
                           &p->inf.floor, err);
    p->inf.floor.shift = c->height_offset;
    for (int f = 0; f < p->mo.nframes; f++) p->mo.root_pos[3 * f + 1] += c->height_offset;
    return SC_OK;
}

/* The capture's contacts (sc_gc_detect), kept on the character (sc_retarget_fit_contacts). */
static int capture_contacts(id_pipeline *p, sc_err *err)
{
    const sc_id_config *c = p->c;
    int rc;
    p->kflags = malloc((size_t)p->mo.nframes * p->nb);
    if (!p->kflags) return sc_fail(err, SC_EIO, "out of memory");
    sc_gc_detect_opts dop;
    sc_gc_detect_default_opts(&dop);
    dop.height_tol = p->inf.height_tol;
    dop.speed_tol = p->inf.speed_tol;
    dop.support = c->id.contact.support > 0 ? c->id.contact.support : dop.support;
    dop.gravity = p->grav;
    dop.allowed = p->allowed;
    if ((rc = sc_gc_detect(&p->body, &p->geom, &p->mo, &dop, p->kflags, &p->inf.detect, err))) return rc;
    if (!c->fit_contacts) return SC_OK;
    sc_contact_fit_opts fop;
    sc_contact_fit_default_opts(&fop);
    fop.balance = c->balance;
    fop.mu = c->id.contact.mu;
    fop.gravity = p->grav;
    return sc_retarget_fit_contacts(p->m, &p->body, &p->geom, p->kflags, &fop, &p->mo, &p->inf.fit, err);
}

static void add_warning(sc_id_pipeline_info *info, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* motion.edit: the limb ends moved where the edit asks, after the contact fit (an edit of a
   foot in contact would lift it off the floor the fit put it on: the edit decides); a moved
   end's contact is dropped wherever the edit lifts it. */
static int edit_motion(id_pipeline *p, sc_err *err)
{
    const sc_limb_edit *ed = &p->c->edit;
    int bones[SC_LIMB_EDIT_MAX];
    if (!ed->nmoves) return SC_OK;
    for (int k = 0; k < ed->nmoves; k++)
        if ((bones[k] = sc_model_bone_index(p->m, ed->bone[k])) < 0)
            return sc_fail(err, SC_EINPUT, "%s: motion.edit moves '%s', which the character does not have", ed->where[k], ed->bone[k]);
    int rc = sc_retarget_edit_limbs(p->m, &p->body, ed, bones, &p->mo, &p->inf.edit_miss, err);
    for (int f = 0; f < p->mo.nframes; f++)
        for (int k = 0; k < ed->nmoves; k++)
            if (sc_limb_edit_offset(ed, k, f * p->mo.frame_time).y > 0) p->kflags[(size_t)f * p->nb + bones[k]] = 0;
    if (!rc && p->inf.edit_miss > 0.01)
        add_warning(&p->inf, "motion.edit: a limb end lands %.3f m from where the edit asks (beyond the limb's reach)", p->inf.edit_miss);
    return rc;
}

/* The motion at the simulation rate with the contacts of both keyframes around each sample
 * (eq. 22 holds the acceleration of the next keyframe over the interval), balanced. */
static int sample_motion(id_pipeline *p, sc_err *err)
{
    const sc_id_config *c = p->c;
    int rc, nb = p->nb;
    if ((rc = sc_traj_from_motion(&p->mo, c->dt, c->scheme, &p->traj, err))) return rc;
    p->sflags = malloc((size_t)p->traj.n * nb);
    if (!p->sflags) return sc_fail(err, SC_EIO, "out of memory");
    const sc_motion *mo = &p->mo;
    for (int k = 0; k < p->traj.n; k++) {
        int T = (int)floor(k * p->traj.dt / mo->frame_time + 1e-9);
        if (T > mo->nframes - 2) T = mo->nframes - 2;
        for (int j = 0; j < nb; j++) p->sflags[(size_t)k * nb + j] = p->kflags[(size_t)T * nb + j] | p->kflags[(size_t)(T + 1) * nb + j];
    }
    if (c->balance) return sc_id_balance(&p->body, &p->traj, p->sflags, c->id.contact.mu, p->grav, 0.03, &p->inf.balance, err);
    return SC_OK;
}

/* The capture's contacts per sample (nearest keyframe), and how far they stay from the floor. */
static void captured_contacts(const id_pipeline *p, sc_reference *out, sc_id_report *rep)
{
    int nb = p->nb;
    const sc_motion *mo = &p->mo;
    for (int k = 0; k < out->n; k++) {
        int f = (int)floor(k * p->traj.dt / mo->frame_time + 0.5);
        if (f > mo->nframes - 1) f = mo->nframes - 1;
        for (int j = 0; j < nb; j++) out->captured[(size_t)k * nb + j] = p->kflags[(size_t)f * nb + j];
    }
    if (!rep) return;
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

static void add_warning(sc_id_pipeline_info *info, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_warning(sc_id_pipeline_info *info, const char *fmt, ...)
{
    size_t used = strlen(info->warnings);
    if (used + 2 >= sizeof info->warnings) return;
    if (used) info->warnings[used++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(info->warnings + used, sizeof info->warnings - used, fmt, ap);
    va_end(ap);
    info->nwarnings++;
}

/* The report's figures against the limits of inverse_dynamics.h (SC_ID_WARN_*). */
static void quality_warnings(const sc_id_report *rep, const sc_model *m, int n, sc_id_pipeline_info *info)
{
    const double mg = rep->weight, leg = info->retarget.leg_char;
    if (rep->contacts_kept < rep->contact_intervals || rep->max_contact_gap > SC_ID_WARN_GAP)
        add_warning(info, "contacts: %d of %d kept within 2 cm of the floor, largest gap %.3f m (%s): the reference floats where the capture touches",
                    rep->contacts_kept, rep->contact_intervals, rep->max_contact_gap, m->bone_name[rep->max_gap_bone]);
    if (rep->peak_contact_fy > SC_ID_WARN_PEAK_FORCE * mg)
        add_warning(info, "peak vertical contact force %.1f m g (limit %g m g): the contacts cannot carry the motion plausibly",
                    rep->peak_contact_fy / mg, SC_ID_WARN_PEAK_FORCE);
    if (rep->residual_force_rms > SC_ID_WARN_RESIDUAL * mg)
        add_warning(info, "root residual force %.3f m g RMS (limit %g m g): no contact explains it", rep->residual_force_rms / mg,
                    SC_ID_WARN_RESIDUAL);
    if (leg > 0 && rep->residual_torque_rms > SC_ID_WARN_RESIDUAL_TORQ * mg * leg)
        add_warning(info, "root residual torque %.1f N m RMS, max %.1f N m (limit %.1f N m = %g m g x leg %.2f m): no contact explains it",
                    rep->residual_torque_rms, rep->residual_torque_max, SC_ID_WARN_RESIDUAL_TORQ * mg * leg, SC_ID_WARN_RESIDUAL_TORQ, leg);
    if (n > 0 && rep->target_clamps > SC_ID_WARN_CLAMPS * n * m->nbones)
        add_warning(info, "%ld PD target offsets clamped (%.2f %% of the bone-samples, limit %g %%): the servos cannot reach the reference there",
                    rep->target_clamps, 100.0 * rep->target_clamps / ((double)n * m->nbones), 100 * SC_ID_WARN_CLAMPS);
    for (int j = 0; j < m->nbones && n > 0; j++)
        if (rep->limit_exceeded[j] > SC_ID_WARN_TORQUE_LIMIT * n)
            add_warning(info, "%s over its torque limit in %.1f %% of the samples (peak %.1f N m, limit %g N m)", m->bone_name[j],
                        100.0 * rep->limit_exceeded[j] / n, rep->peak_torque[j], m->torque_limit[j]);
}

int sc_id_compute(const sc_id_config *c, const sc_model *m, sc_reference *out, sc_id_report *rep, sc_id_pipeline_info *info, sc_err *err)
{
    memset(out, 0, sizeof *out);
    id_pipeline *p = calloc(1, sizeof *p);
    if (!p) return sc_fail(err, SC_EIO, "out of memory");
    double t0 = sc_wall_time();
    int rc;
    p->c = c;
    p->m = m;
    p->nb = m->nbones;
    if ((rc = sc_bvh_load(c->bvh, &p->bvh, err))) {
        free(p);
        return rc;
    }
    if (c->filter == 2 && !(c->filter_cutoff < 0.5 / p->bvh.frame_time)) {
        /* the clip's rate is known only now: say where the cutoff was set */
        rc = sc_fail(err, SC_EINPUT, "%s: motion.filter_cutoff %g Hz must be below half the frame rate of %s (%.6g Hz)", c->filter_cutoff_where,
                     c->filter_cutoff, c->bvh, 0.5 / p->bvh.frame_time);
        sc_bvh_free(&p->bvh);
        free(p);
        return rc;
    }
    p->grav = -c->id.gravity[1];
    if ((rc = prepare_motion(p, err)) || (rc = capture_contacts(p, err)) || (rc = edit_motion(p, err)) || (rc = sample_motion(p, err))) goto done;
    sc_id_opts io = c->id;
    io.contact.allowed = p->allowed;
    io.contact.height_tol = p->inf.height_tol;
    io.contact.speed_tol = p->inf.speed_tol;
    io.contact.rescue_band = 3 * p->inf.height_tol;
    io.contact_flags = p->sflags;
    if ((rc = sc_id_run(m, &p->body, &p->geom, &p->traj, &io, out, rep, err))) goto done;
    captured_contacts(p, out, rep);
    if (rep) quality_warnings(rep, m, out->n, &p->inf);
done:
    free(p->kflags);
    free(p->sflags);
    sc_traj_free(&p->traj);
    sc_gc_geom_free(&p->geom);
    sc_body_free(&p->body);
    sc_motion_free(&p->mo);
    sc_bvh_free(&p->bvh);
    p->inf.seconds = sc_wall_time() - t0;
    if (info) *info = p->inf;
    free(p);
    if (rc) sc_reference_free(out);
    return rc;
}

void sc_id_config_free(sc_id_config *c)
{
    free(c->edit.offset);
    c->edit.offset = NULL;
    c->edit.nmoves = c->edit.nsamples = 0;
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

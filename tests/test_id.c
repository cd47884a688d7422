/* inverse-dynamics ([L13] 5.1, eq. 19-32): torques recovered from a simulated motion, PD targets
 * that hold and track, derivative orders, retargeting geometry, standing still, real clips, the
 * project's march, and every kind of bad input. */
#include <stdlib.h>
#include <string.h>
#include "motion/inverse_dynamics.h"
#include "settings/motion.h"
#include "store/reference.h"
#include "motion/retarget.h"
#include "core/log.h"
#include "core/rng.h"
#include "io/bvh.h"
#include "store/character.h"
#include "io/h5.h"
#include "sim/skeleton.h"
#include "test.h"

static char out[32768];

/* ---- helpers ---------------------------------------------------------------------------- */

/* The characters, built once per run: 0 = michelin_cmu.yaml, 1 = michelin.yaml by mesh-prep
 * alone (no /skin: the nearest-bone fallback), 2 and 3 = the same after skin-weights. */
static const char *character(int which)
{
    static int built[4];
    static char path[4][1024];
    static const char *names[4] = {"id_cmu.h5", "id_michelin.h5", "id_cmu_skin.h5", "id_michelin_skin.h5"};
    if (!built[which]) {
        const char *cfg = sc_test_repo(which % 2 ? "configs/michelin.yaml" : "configs/michelin_cmu.yaml");
        snprintf(path[which], sizeof path[which], "%s", sc_test_tmp(names[which]));
        int rc;
        if (which < 2) {
            rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s", sc_test_tool("mesh-prep"), cfg, path[which]);
        } else {
            const char *plain = character(which - 2);
            rc = plain ? sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("skin-weights"), cfg, path[which], plain) : -1;
        }
        built[which] = rc == 0 ? 1 : -1;
        if (rc) sc_test_fail(__FILE__, __LINE__, "building %s: exit %d: %s", names[which], rc, out);
    }
    return built[which] == 1 ? path[which] : NULL;
}

static int run_id(const char *config, const char *charfile, const char *outfile)
{
    return sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("inverse-dynamics"), config, outfile, charfile);
}

static double attr_f(const char *file, const char *obj, const char *name)
{
    sc_h5 *f;
    double v = NAN;
    if (sc_h5_open(file, &f, NULL)) return v;
    sc_h5_read_attr_f64(f, obj, name, &v, NULL);
    sc_h5_close(f);
    return v;
}

static long long attr_i(const char *file, const char *obj, const char *name)
{
    sc_h5 *f;
    long long v = -1;
    if (sc_h5_open(file, &f, NULL)) return v;
    sc_h5_read_attr_i64(f, obj, name, &v, NULL);
    sc_h5_close(f);
    return v;
}

static int bone_index(const sc_reference *r, const char *name)
{
    for (int j = 0; j < r->nb; j++)
        if (!strcmp(r->names[j], name)) return j;
    return -1;
}

/* Sum over bones of the vertical contact force at sample k. */
static double contact_fy(const sc_reference *r, int k)
{
    double s = 0;
    for (int j = 0; j < r->nb; j++) s += r->contact_force[3 * ((size_t)k * r->nb + j) + 1];
    return s;
}

static double peak_torque(const sc_reference *r, int j, double *rms)
{
    double pk = 0, s2 = 0;
    for (int k = 0; k < r->n; k++) {
        double a = sc_v3_norm(sc_v3_load(r->joint_torque + 3 * ((size_t)k * r->nb + j)));
        pk = fmax(pk, a);
        s2 += a * a;
    }
    if (rms) *rms = sqrt(s2 / r->n);
    return pk;
}

/* Stance fraction per stride: from each touchdown (flag 0 -> 1) to the next. */
static double stride_duty(const sc_reference *r, int j, int *ntouch)
{
    int first = -1, last = -1, n = 0;
    long in = 0;
    for (int k = 1; k < r->n; k++)
        if (!r->contact_flag[(size_t)(k - 1) * r->nb + j] && r->contact_flag[(size_t)k * r->nb + j]) {
            if (first < 0) first = k;
            last = k;
            n++;
        }
    *ntouch = n;
    if (n < 2) return NAN;
    for (int k = first; k < last; k++) in += r->contact_flag[(size_t)k * r->nb + j];
    return (double)in / (last - first);
}

/* A 4-bone floating skeleton: root (free), leg (ball), shin (hinge about x), arm (ball). */
static void hand_model(sc_model *m, double kp, double kd)
{
    memset(m, 0, sizeof *m);
    int nb = 4;
    m->nbones = nb;
    m->bone_name = calloc((size_t)nb, SC_NAME_LEN);
    m->parent = malloc(nb * sizeof(int));
    m->joint_type = malloc(nb * sizeof(int));
    m->joint_pos = malloc(3 * nb * sizeof(double));
    m->bone_end = malloc(3 * nb * sizeof(double));
    m->hinge_axis = calloc(3 * (size_t)nb, sizeof(double));
    m->joint_lo = malloc(3 * nb * sizeof(double));
    m->joint_hi = malloc(3 * nb * sizeof(double));
    m->kp = malloc(nb * sizeof(double));
    m->kd = malloc(nb * sizeof(double));
    m->torque_limit = calloc((size_t)nb, sizeof(double));
    m->bone_mass = malloc(nb * sizeof(double));
    m->bone_com = malloc(3 * nb * sizeof(double));
    m->bone_inertia = malloc(9 * nb * sizeof(double));
    static const char *names[] = {"root", "leg", "shin", "arm"};
    static const int par[] = {-1, 0, 1, 0}, typ[] = {SC_JOINT_FREE, SC_JOINT_BALL, SC_JOINT_HINGE, SC_JOINT_BALL};
    static const double jp[][3] = {{0, 1, 0}, {0.15, 0.95, 0.02}, {0.17, 0.55, 0.02}, {0.1, 1.3, 0}};
    static const double be[][3] = {{0, 1.3, 0}, {0.17, 0.55, 0.02}, {0.18, 0.15, 0.05}, {0.45, 1.32, 0.03}};
    static const double mass[] = {8, 3, 2, 1.5}, rad[] = {0.09, 0.05, 0.04, 0.035};
    for (int b = 0; b < nb; b++) {
        snprintf(m->bone_name[b], SC_NAME_LEN, "%s", names[b]);
        m->parent[b] = par[b];
        m->joint_type[b] = typ[b];
        m->kp[b] = kp;
        m->kd[b] = kd;
        m->bone_mass[b] = mass[b];
        sc_vec3 a = sc_v3_load(jp[b]), e = sc_v3_load(be[b]);
        sc_v3_store(m->joint_pos + 3 * b, a);
        sc_v3_store(m->bone_end + 3 * b, e);
        sc_v3_store(m->bone_com + 3 * b, sc_v3_scale(sc_v3_add(a, e), 0.5));
        for (int c = 0; c < 3; c++) {
            m->joint_lo[3 * b + c] = 1;
            m->joint_hi[3 * b + c] = -1;
        }
        /* solid cylinder along the segment */
        sc_vec3 d = sc_v3_sub(e, a);
        double L = sc_v3_norm(d), r = rad[b], dv[3];
        d = sc_v3_scale(d, 1 / L);
        sc_v3_store(dv, d);
        double ia = mass[b] * r * r / 2, it = mass[b] * (3 * r * r + L * L) / 12;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) m->bone_inertia[9 * b + 3 * i + k] = ia * dv[i] * dv[k] + it * ((i == k) - dv[i] * dv[k]);
    }
    m->hinge_axis[3 * 2] = 1;
}

/* The applied joint torques of the round trip (world, on the child), smooth in time. The part
 * along a ball-jointed bone's own axis is left out: a limb's small axial inertia would spin it up
 * to tens of rad/s, which no character does. */
static sc_vec3 applied_torque(const sc_model *m, int j, double t, const sc_xform *pose)
{
    double w = 2 * SC_PI;
    if (j == 2) return sc_v3_scale(sc_q_rotate(pose[2].q, sc_v3(1, 0, 0)), 0.8 * sin(w * 1.3 * t + 0.5));
    sc_vec3 tau = j == 1 ? sc_v3(1.2 * sin(w * 1.5 * t), 0.8 * cos(w * 1.1 * t), 0.6 * sin(w * 0.7 * t + 1))
                         : sc_v3(0.3 * cos(w * 2 * t), 0.4 * sin(w * 1.7 * t), 0.25 * sin(w * t));
    sc_vec3 ax = sc_v3_normalize(sc_q_rotate(pose[j].q, sc_v3_sub(sc_v3_load(m->bone_end + 3 * j), sc_v3_load(m->joint_pos + 3 * j))));
    return sc_v3_sub(tau, sc_v3_scale(ax, sc_v3_dot(ax, tau)));
}

/* ---- 1. round trip without contact ------------------------------------------------------ */

/* Simulates the hand model airborne for 0.4 s at step h under the applied torques, records it at
 * every step, and recovers the torques with both difference schemes: rel[scheme] RMS relative
 * error, resid[scheme] root residual force rms / weight. Returns 0 on failure. */
static int roundtrip(double h, double rel[2], double resid[2], double *excursion, double *wmax)
{
    sc_err err;
    sc_model m;
    hand_model(&m, 0, 0);
    sc_skeleton_opts o;
    sc_skeleton_default_opts(&o);
    o.exact_solver = 1;
    sc_skeleton *s;
    if (sc_skeleton_create(&m, &o, &s, &err)) {
        sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
        sc_model_free(&m);
        return 0;
    }
    const int K = (int)(0.4 / h + 0.5), nb = 4;
    sc_xform pose[4];
    /* thrown upwards, tumbling; the children move rigidly with the root at the start */
    sc_skeleton_get_state(s, pose, NULL, NULL);
    double lv[12], av[12], wv[12];
    sc_vec3 w0 = sc_v3(0.6, -0.4, 0.3), v0 = sc_v3(0.3, 1.5, -0.2);
    for (int b = 0; b < nb; b++) {
        sc_v3_store(av + 3 * b, w0);
        sc_v3_store(lv + 3 * b, sc_v3_add(v0, sc_v3_cross(w0, sc_v3_sub(pose[b].p, pose[0].p))));
    }
    sc_skeleton_set_state(s, pose, lv, av);
    sc_motion mo;
    sc_motion_alloc(&mo, K + 1, nb, h, NULL);
    double *tau = calloc((size_t)(K + 1) * nb * 3, sizeof(double));
    *excursion = *wmax = 0;
    for (int k = 0; k <= K; k++) {
        sc_skeleton_get_state(s, pose, NULL, wv);
        sc_v3_store(mo.root_pos + 3 * k, pose[0].p);
        for (int b = 0; b < nb; b++) {
            mo.local[(size_t)k * nb + b] = b == 0 ? pose[0].q : sc_q_mul(sc_q_conj(pose[m.parent[b]].q), pose[b].q);
            if (b > 0) *excursion = fmax(*excursion, sc_q_angle_between(mo.local[(size_t)k * nb + b], mo.local[b]));
            *wmax = fmax(*wmax, sc_v3_norm(sc_v3_load(wv + 3 * b)));
        }
        for (int j = 1; j < nb; j++) {
            sc_vec3 t = applied_torque(&m, j, k * h, pose);
            sc_v3_store(tau + 3 * ((size_t)k * nb + j), t);
            if (k == K) continue;
            double tp[3], tn[3];
            sc_v3_store(tp, t);
            sc_v3_store(tn, sc_v3_scale(t, -1));
            sc_skeleton_add_torque(s, j, tp);
            sc_skeleton_add_torque(s, m.parent[j], tn);
        }
        if (k < K && sc_skeleton_step(s, h, &err)) break;
    }
    sc_skeleton_free(s);
    sc_motion_make_continuous(&mo);
    sc_body body;
    int ok = !sc_body_from_model(&m, SC_MASS_FIXED, &body, &err);
    sc_id_opts io;
    sc_id_default_opts(&io);
    for (int scheme = 0; ok && scheme < 2; scheme++) {
        sc_traj tr;
        sc_reference ref;
        sc_id_report rep;
        if (sc_traj_from_motion(&mo, h, scheme, &tr, &err) || sc_id_run(&m, &body, NULL, &tr, &io, &ref, &rep, &err)) {
            sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
            ok = 0;
            break;
        }
        /* symplectic Euler: x_k+1 = x_k + h v_k+1, so the forward difference at sample k sees the
           acceleration of step k+1, the centred one that of step k */
        int lag = scheme == SC_DIFF_FORWARD ? 1 : 0;
        double e2 = 0, t2 = 0;
        for (int k = 3; k < K - 3; k++)
            for (int j = 1; j < nb; j++) {
                sc_vec3 a = sc_v3_load(tau + 3 * ((size_t)(k + lag) * nb + j)), r = sc_v3_load(ref.joint_torque + 3 * ((size_t)k * nb + j));
                e2 += sc_v3_dot(sc_v3_sub(a, r), sc_v3_sub(a, r));
                t2 += sc_v3_dot(a, a);
            }
        rel[scheme] = sqrt(e2 / t2);
        resid[scheme] = rep.residual_force_rms / (body.total_mass * 9.81);
        sc_traj_free(&tr);
        sc_reference_free(&ref);
    }
    free(tau);
    sc_motion_free(&mo);
    sc_body_free(&body);
    sc_model_free(&m);
    return ok;
}

TEST(id_roundtrip_no_contact)
{
    double rel[2][2], resid[2][2], exc, wmax;
    static const double hs[2] = {0.0005, 0.00025};
    for (int i = 0; i < 2; i++) {
        if (!roundtrip(hs[i], rel[i], resid[i], &exc, &wmax)) return;
        for (int scheme = 0; scheme < 2; scheme++)
            sc_test_report("round trip recorded at %.2f ms, %s differences: torque error %.4f %% RMS (3 joints, 0.4 s); "
                           "root residual force rms %.2g x weight",
                           hs[i] * 1e3, scheme ? "central" : "forward ([L13] eq. 20-21)", 100 * rel[i][scheme], resid[i][scheme]);
    }
    sc_test_report("joint excursion up to %.2f rad, bone angular speeds up to %.1f rad/s; forward error ratio 0.5 ms / "
                   "0.25 ms = %.2f (first order), central %.2f",
                   exc, wmax, rel[0][0] / rel[1][0], rel[0][1] / rel[1][1]);
    ENSURE(exc > 0.5);
    /* the centred scheme recovers the torques to well within 2 %; the paper's forward differences
       are first order (positions one step behind the velocities and accelerations): a few % at
       0.5 ms, halving with the step */
    ENSURE(rel[0][1] < 0.02 && rel[1][1] < 0.02);
    ENSURE(rel[0][0] < 0.03 && rel[1][0] < 0.015);
    ENSURE(rel[0][0] / rel[1][0] > 1.6 && rel[0][0] / rel[1][0] < 2.4);
    ENSURE(resid[0][0] < 0.01 && resid[0][1] < 0.001);
}

/* ---- eq. 32: ID targets hold a pose and track a motion (fixed root) --------------------- */

static double track(const sc_model *m, const sc_body *b, const sc_traj *tr, const sc_reference *ref, int use_id, double seconds, double *final_err,
                    sc_err *err)
{
    sc_skeleton_opts o;
    sc_skeleton_default_opts(&o);
    o.exact_solver = 1;
    o.fix_root = 1;
    sc_skeleton *s;
    if (sc_skeleton_create(m, &o, &s, err)) return -1;
    int nb = b->nb, K = (int)(seconds / tr->dt + 0.5);
    if (K > tr->n - 1) K = tr->n - 1;
    sc_bone_kin kin[4];
    sc_xform pose[4];
    double lv[12], av[12];
    sc_kin_forward(b, tr, 0, kin);
    for (int j = 0; j < nb; j++) {
        pose[j].q = kin[j].q;
        pose[j].p = kin[j].p;
        sc_v3_store(lv + 3 * j, kin[j].v);
        sc_v3_store(av + 3 * j, kin[j].w);
    }
    sc_skeleton_set_state(s, pose, lv, av);
    double e2 = 0;
    long ne = 0;
    sc_quat tgt[4], loc[4];
    for (int k = 0; k < K; k++) {
        for (int j = 0; j < nb; j++) {
            const double *q = (use_id ? ref->target_quat : ref->local_quat) + 4 * ((size_t)k * nb + j);
            tgt[j] = (sc_quat){q[0], q[1], q[2], q[3]};
        }
        sc_skeleton_set_targets(s, tgt);
        if (sc_skeleton_step(s, tr->dt, err)) {
            sc_skeleton_free(s);
            return -1;
        }
        sc_skeleton_local_rotations(s, loc);
        for (int j = 1; j < nb; j++) {
            double a = sc_q_angle_between(loc[j], tr->local[(size_t)(k + 1) * nb + j]);
            e2 += a * a;
            ne++;
            if (k == K - 1) *final_err = j == 1 ? a : fmax(*final_err, a);
        }
    }
    sc_skeleton_free(s);
    return sqrt(e2 / ne);
}

TEST(id_pd_targets_hold_and_track)
{
    sc_err err;
    sc_model m;
    hand_model(&m, 150, 15);
    sc_body body;
    ENSURE_OK(sc_body_from_model(&m, SC_MASS_FIXED, &body, &err), &err);
    sc_id_opts io;
    sc_id_default_opts(&io);
    int nb = 4;
    double res[2][2]; /* [static, moving][raw, id]: static: final error; moving: rms error */
    for (int moving = 0; moving < 2; moving++) {
        double T = moving ? 2.0 : 1.0, fps = 120;
        int nf = (int)(T * fps) + 1;
        sc_motion mo;
        ENSURE_OK(sc_motion_alloc(&mo, nf, nb, 1 / fps, &err), &err);
        for (int f = 0; f < nf; f++) {
            double t = moving ? f / fps : 0, w = 2 * SC_PI;
            sc_v3_store(mo.root_pos + 3 * f, sc_v3_load(m.joint_pos));
            sc_quat *L = mo.local + (size_t)f * nb;
            L[0] = sc_q_identity();
            L[1] = sc_q_exp(sc_v3(0.3 * sin(w * 0.8 * t), 0, 0.5 + 0.2 * sin(w * 1.1 * t)));
            L[2] = sc_q_axis_angle(sc_v3(1, 0, 0), 0.6 + 0.5 * sin(w * 1.3 * t));
            L[3] = sc_q_exp(sc_v3(0, 0.5 * sin(w * t), -0.4));
        }
        sc_traj tr;
        sc_reference ref;
        ENSURE_OK(sc_traj_from_motion(&mo, 0.0005, SC_DIFF_CENTRAL, &tr, &err), &err);
        ENSURE_OK(sc_id_run(&m, &body, NULL, &tr, &io, &ref, NULL, &err), &err);
        for (int use_id = 0; use_id < 2; use_id++) {
            double fin = 0, rms = track(&m, &body, &tr, &ref, use_id, T, &fin, &err);
            ENSURE_MSG(rms >= 0, "%s", err.msg);
            res[moving][use_id] = moving ? rms : fin;
        }
        sc_traj_free(&tr);
        sc_reference_free(&ref);
        sc_motion_free(&mo);
    }
    sc_body_free(&body);
    sc_model_free(&m);
    sc_test_report("static pose under gravity, kp 150: final joint error %.4f deg with the reference as target, %.5f deg "
                   "with the ID targets",
                   res[0][0] * 180 / SC_PI, res[0][1] * 180 / SC_PI);
    sc_test_report("sinusoidal joint motion (0.8-1.3 Hz): tracking error rms %.3f deg with the reference as target, %.4f "
                   "deg with the ID targets",
                   res[1][0] * 180 / SC_PI, res[1][1] * 180 / SC_PI);
    ENSURE(res[0][0] > 0.01);             /* gravity makes a plain PD sag ... */
    ENSURE(res[0][1] < 0.01 * res[0][0]); /* ... which eq. 32 removes */
    ENSURE(res[1][1] < 0.1 * res[1][0]);
}

/* ---- 3. derivative orders --------------------------------------------------------------- */

/* q(t) = exp(ta(t) A) exp(tb(t) B): parent-frame angular velocity and its derivative. */
typedef struct {
    sc_vec3 A, B;
    double a0, fa, pa, b0, fb, pb;
} rot2;

static void rot2_eval(const rot2 *r, double t, sc_quat *q, sc_vec3 *w, sc_vec3 *dw)
{
    double W = 2 * SC_PI, ta = r->a0 * sin(W * r->fa * t + r->pa), tb = r->b0 * sin(W * r->fb * t + r->pb);
    double da = r->a0 * W * r->fa * cos(W * r->fa * t + r->pa), db = r->b0 * W * r->fb * cos(W * r->fb * t + r->pb);
    double dda = -r->a0 * W * W * r->fa * r->fa * sin(W * r->fa * t + r->pa), ddb = -r->b0 * W * W * r->fb * r->fb * sin(W * r->fb * t + r->pb);
    sc_quat qa = sc_q_axis_angle(r->A, ta);
    *q = sc_q_mul(qa, sc_q_axis_angle(r->B, tb));
    sc_vec3 RB = sc_q_rotate(qa, r->B);
    *w = sc_v3_add(sc_v3_scale(r->A, da), sc_v3_scale(RB, db));
    *dw = sc_v3_add(sc_v3_add(sc_v3_scale(r->A, dda), sc_v3_scale(RB, ddb)), sc_v3_scale(sc_v3_cross(r->A, RB), da * db));
}

TEST(id_derivative_convergence)
{
    sc_err err;
    const rot2 rr[2] = {{{0, 0, 1}, {1, 0, 0}, 0.9, 0.7, 0.2, 0.5, 1.1, 0.3}, {{0, 1, 0}, {0, 0, 1}, 0.7, 0.9, 1.0, 0.6, 0.6, -0.4}};
    const double T = 2.0, dt = 0.0005, dts[4] = {1.0 / 30, 1.0 / 60, 1.0 / 120, 1.0 / 240};
    double e[2][4][3]; /* scheme, level, {position, velocity, acceleration} max error */
    for (int scheme = 0; scheme < 2; scheme++)
        for (int l = 0; l < 4; l++) {
            int nf = (int)(T / dts[l] + 0.5) + 1;
            sc_motion mo;
            ENSURE_OK(sc_motion_alloc(&mo, nf, 2, dts[l], &err), &err);
            for (int f = 0; f < nf; f++) {
                double t = f * dts[l];
                sc_v3_store(mo.root_pos + 3 * f, sc_v3(0.3 * sin(2 * t), 1 + 0.1 * cos(3 * t), 0.4 * sin(1.3 * t + 0.5)));
                sc_vec3 w, dw;
                for (int j = 0; j < 2; j++) rot2_eval(&rr[j], t, &mo.local[(size_t)f * 2 + j], &w, &dw);
            }
            sc_traj tr;
            ENSURE_OK(sc_traj_from_motion(&mo, dt, scheme, &tr, &err), &err);
            double ep = 0, ev = 0, ea = 0;
            for (int k = 0; k < tr.n; k++) {
                double t = k * dt;
                if (t < 0.25 || t > T - 0.25) continue; /* away from the one-sided ends */
                sc_vec3 p = sc_v3(0.3 * sin(2 * t), 1 + 0.1 * cos(3 * t), 0.4 * sin(1.3 * t + 0.5));
                sc_vec3 v = sc_v3(0.6 * cos(2 * t), -0.3 * sin(3 * t), 0.52 * cos(1.3 * t + 0.5));
                sc_vec3 a = sc_v3(-1.2 * sin(2 * t), -0.9 * cos(3 * t), -0.676 * sin(1.3 * t + 0.5));
                ep = fmax(ep, sc_v3_dist(p, sc_v3_load(tr.root_pos + 3 * k)));
                ev = fmax(ev, sc_v3_dist(v, sc_v3_load(tr.root_vel + 3 * k)));
                ea = fmax(ea, sc_v3_dist(a, sc_v3_load(tr.root_acc + 3 * k)));
                for (int j = 0; j < 2; j++) {
                    sc_quat q;
                    sc_vec3 w, dw;
                    rot2_eval(&rr[j], t, &q, &w, &dw);
                    ep = fmax(ep, sc_q_angle_between(q, tr.local[(size_t)k * 2 + j]));
                    ev = fmax(ev, sc_v3_dist(w, sc_v3_load(tr.ang_vel + 3 * ((size_t)k * 2 + j))));
                    ea = fmax(ea, sc_v3_dist(dw, sc_v3_load(tr.ang_acc + 3 * ((size_t)k * 2 + j))));
                }
            }
            e[scheme][l][0] = ep;
            e[scheme][l][1] = ev;
            e[scheme][l][2] = ea;
            sc_traj_free(&tr);
            sc_motion_free(&mo);
        }
    static const char *what[3] = {"position", "velocity", "acceleration"};
    for (int scheme = 0; scheme < 2; scheme++)
        for (int q = 0; q < 3; q++) {
            double ord[3];
            for (int l = 0; l < 3; l++) ord[l] = log2(e[scheme][l][q] / e[scheme][l + 1][q]);
            sc_test_report("%s differences, %-12s max error %.3g %.3g %.3g %.3g at dT = 1/30..1/240 s: observed orders "
                           "%.2f %.2f %.2f",
                           scheme ? "central" : "forward", what[q], e[scheme][0][q], e[scheme][1][q], e[scheme][2][q], e[scheme][3][q], ord[0],
                           ord[1], ord[2]);
            /* [L13] eq. 20-24 are first order in velocity and acceleration; slerp is second order
               in position; centred differences with linear interpolation are second order */
            double expect = (q == 0 || scheme == SC_DIFF_CENTRAL) ? 2 : 1;
            ENSURE_MSG(fabs(ord[2] - expect) < 0.25 && fabs(ord[1] - expect) < 0.35, "%s %s: orders %.2f %.2f, expected %.0f",
                       scheme ? "central" : "forward", what[q], ord[1], ord[2], expect);
        }
}

/* The optional low-pass filters: capture-like noise (1 mm, 0.2 deg at 120 fps) on a 1 Hz motion. */
TEST(id_lowpass_filters)
{
    sc_err err;
    const double fps = 120, T = 4, W = 2 * SC_PI;
    const int nf = (int)(T * fps) + 1;
    double res[3][2]; /* raw, moving average 5, Butterworth 6 Hz: {position, acceleration} rms error */
    for (int flt = 0; flt < 3; flt++) {
        sc_motion mo;
        ENSURE_OK(sc_motion_alloc(&mo, nf, 1, 1 / fps, &err), &err);
        sc_rng rng;
        sc_rng_init(&rng, 7, 0, 0);
        for (int f = 0; f < nf; f++) {
            double t = f / fps;
            sc_v3_store(mo.root_pos + 3 * f, sc_v3(0.001 * sc_rng_normal(&rng), 1 + 0.05 * sin(W * t) + 0.001 * sc_rng_normal(&rng), 0));
            mo.local[f] = sc_q_axis_angle(sc_v3(0, 0, 1), 0.5 * sin(W * t) + 0.2 * SC_PI / 180 * sc_rng_normal(&rng));
        }
        if (flt == 1) ENSURE_OK(sc_motion_smooth(&mo, 5, &err), &err);
        if (flt == 2) ENSURE_OK(sc_motion_lowpass(&mo, 6, &err), &err);
        sc_traj tr;
        ENSURE_OK(sc_traj_from_motion(&mo, 0.0005, SC_DIFF_CENTRAL, &tr, &err), &err);
        double ep = 0, ea = 0;
        int n = 0;
        for (int k = 0; k < tr.n; k++) {
            double t = k * tr.dt;
            if (t < 0.5 || t > T - 0.5) continue;
            double y = 1 + 0.05 * sin(W * t), ay = -0.05 * W * W * sin(W * t), th = 0.5 * sin(W * t), al = -0.5 * W * W * sin(W * t);
            double dp = tr.root_pos[3 * k + 1] - y, da = tr.root_acc[3 * k + 1] - ay;
            double dq = sc_kin_twist_angle(tr.local[k], sc_v3(0, 0, 1)) - th, dw = tr.ang_acc[3 * k + 2] - al;
            ep += dp * dp + (0.1 * dq) * (0.1 * dq); /* 0.1 m lever: radians as metres */
            ea += da * da + (0.1 * dw) * (0.1 * dw);
            n++;
        }
        res[flt][0] = sqrt(ep / n);
        res[flt][1] = sqrt(ea / n);
        sc_traj_free(&tr);
        sc_motion_free(&mo);
    }
    static const char *names[3] = {"none", "moving average 5 frames", "Butterworth 6 Hz"};
    for (int flt = 0; flt < 3; flt++)
        sc_test_report("filter %-24s: position error rms %.3f mm, acceleration error rms %.2f m/s^2 (signal 1.97 m/s^2 "
                       "amplitude)",
                       names[flt], 1e3 * res[flt][0], res[flt][1]);
    ENSURE(res[0][1] > 5);             /* differencing amplifies the noise ... */
    ENSURE(res[1][1] < res[0][1] / 3); /* ... which both filters remove, */
    ENSURE(res[2][1] < res[0][1] / 10 && res[2][1] < 0.5);
    ENSURE(res[1][0] < 1e-3 && res[2][0] < 1e-3); /* without lag or loss of the 1 Hz motion */
}

/* ---- retargeting geometry ----------------------------------------------------------------- */

TEST(id_retarget_geometry)
{
    sc_err err;
    const char *cmu = character(0), *mich = character(1);
    ENSURE(cmu && mich);
    sc_bvh bvh;
    ENSURE_OK(sc_bvh_load(sc_test_mocap("cmu_02_01_walk.bvh"), &bvh, &err), &err);
    sc_xform *W = malloc((size_t)bvh.njoints * sizeof *W), *W0 = malloc((size_t)bvh.njoints * sizeof *W0);
    sc_bvh_world(&bvh, -1, W0);
    /* bones that IK leaves alone (default CMU map): joint, tail */
    const char *bones[] = {"pelvis", "spine", "neck", "head", "l_foot", "r_foot", "l_hand", "r_hand"};
    const char *joints[] = {"Hips", "Spine", "Neck", "Neck1", "LeftFoot", "RightFoot", "LeftHand", "RightHand"};
    const char *tails[] = {
        "Spine", "Spine1", "Neck1", "Head_End", "LeftToeBase_End", "RightToeBase_End", "LeftHandIndex1_End", "RightHandIndex1_End"};
    for (int which = 0; which < 2; which++)
        for (int mirror = 0; mirror < 2; mirror++) {
            sc_model m;
            ENSURE_OK(sc_character_read(which ? mich : cmu, &m, 0, &err), &err);
            sc_retarget_opts o;
            ENSURE_OK(sc_retarget_default_opts(&o, &err), &err);
            o.mirror = mirror;
            sc_motion mo;
            sc_retarget_info info;
            ENSURE_OK(sc_retarget(&bvh, "walk", &m, &o, &mo, &info, &err), &err);
            ENSURE(mo.nframes == bvh.nframes - 1);
            sc_body b;
            ENSURE_OK(sc_body_from_model(&m, SC_MASS_FIXED, &b, &err), &err);
            sc_bone_kin kin[SC_BODY_MAX_BONES];
            double dir_err = 0, tip_err = 0;
            sc_vec3 zero = {0, 0, 0};
            for (int f = 0; f < mo.nframes; f += 7) {
                sc_bvh_world(&bvh, f + 1, W);
                sc_kin_forward_raw(&b, sc_v3_load(mo.root_pos + 3 * f), zero, zero, mo.local + (size_t)f * m.nbones, NULL, NULL, kin);
                /* Q_j = R_J A_j: the bone points where its BVH joint turns the BVH's rest segment
                   (reflected when mirrored, with the mirror bone's joints) */
                for (int i = 0; i < 8; i++) {
                    char nm[SC_NAME_LEN];
                    if (mirror) sc_retarget_mirror_name(bones[i], nm, sizeof nm);
                    else snprintf(nm, sizeof nm, "%s", bones[i]);
                    int j = -1, J = sc_bvh_find(&bvh, joints[i]), T = sc_bvh_find(&bvh, tails[i]);
                    for (int c = 0; c < m.nbones; c++)
                        if (!strcmp(m.bone_name[c], nm)) j = c;
                    ENSURE(j >= 0 && J >= 0 && T >= 0);
                    sc_vec3 c = sc_v3_normalize(sc_v3_sub(sc_v3_load(m.bone_end + 3 * j), sc_v3_load(m.joint_pos + 3 * j)));
                    sc_vec3 d = sc_q_rotate(W[J].q, sc_v3_normalize(sc_v3_sub(W0[T].p, W0[J].p)));
                    if (mirror) d.x = -d.x;
                    dir_err = fmax(dir_err, sc_v3_dist(sc_q_rotate(kin[j].q, c), d));
                }
                /* IK puts ankles and wrists where the BVH has them relative to hips and shoulders
                   (this character has the BVH's skeleton: scale 1) */
                if (which == 0 && !mirror) {
                    const char *pairs[][4] = {{"l_thigh", "l_shin", "LeftUpLeg", "LeftFoot"}, {"r_upperarm", "r_forearm", "RightArm", "RightHand"}};
                    for (int pi = 0; pi < 2; pi++) {
                        int th = -1, sh = -1;
                        for (int c = 0; c < m.nbones; c++) {
                            if (!strcmp(m.bone_name[c], pairs[pi][0])) th = c;
                            if (!strcmp(m.bone_name[c], pairs[pi][1])) sh = c;
                        }
                        ENSURE(th >= 0 && sh >= 0);
                        sc_vec3 tip = sc_v3_add(kin[sh].p,
                                                sc_q_rotate(kin[sh].q, sc_v3_sub(sc_v3_load(m.bone_end + 3 * sh), sc_v3_load(m.joint_pos + 3 * sh))));
                        sc_vec3 want = sc_v3_scale(sc_v3_sub(W[sc_bvh_find(&bvh, pairs[pi][3])].p, W[sc_bvh_find(&bvh, pairs[pi][2])].p), o.unit);
                        tip_err = fmax(tip_err, sc_v3_dist(sc_v3_sub(tip, kin[th].p), want));
                    }
                }
            }
            sc_test_report("%s%s: rest alignment up to %.1f deg (%s), root scale %.4f, bone directions off by <= %.2g, "
                           "IK'd ankle and wrist off by <= %.2g m%s",
                           which ? "michelin.yaml (inline skeleton)" : "michelin_cmu.yaml", mirror ? ", mirrored" : "", info.max_align_deg,
                           m.bone_name[info.align_bone], info.root_scale, dir_err, tip_err,
                           which == 0 && !mirror ? "" : " (checked on the first case only)");
            ENSURE(dir_err < 1e-9);
            ENSURE(tip_err < 1e-6);
            if (which == 0 && !mirror) ENSURE(info.max_align_deg < 1e-6 && fabs(info.root_scale - 1) < 1e-9);
            if (which == 1) ENSURE(info.max_align_deg > 5);
            sc_body_free(&b);
            sc_motion_free(&mo);
            sc_model_free(&m);
        }
    char mn[64];
    sc_retarget_mirror_name("LHipJoint", mn, sizeof mn);
    ENSURE(!strcmp(mn, "RHipJoint"));
    sc_retarget_mirror_name("RightFoot", mn, sizeof mn);
    ENSURE(!strcmp(mn, "LeftFoot"));
    sc_retarget_mirror_name("spine", mn, sizeof mn);
    ENSURE(!strcmp(mn, "spine"));
    free(W);
    free(W0);
    sc_bvh_free(&bvh);
}

/* ---- 2. standing still ------------------------------------------------------------------ */

/* The CMU skeleton of the walk holding its rest pose for `frames` frames (+ the T-pose frame 0). */
static const char *standing_bvh(const char *name, int frames, sc_err *err)
{
    sc_bvh b;
    if (sc_bvh_load(sc_test_mocap("cmu_02_01_walk.bvh"), &b, err)) return NULL;
    free(b.frames);
    b.nframes = frames + 1;
    b.frames = calloc((size_t)b.nframes * b.nchannels, sizeof(double));
    for (int f = 0; f < b.nframes; f++) b.frames[(size_t)f * b.nchannels + 1] = 16.7; /* Hips Yposition */
    const char *path = sc_test_tmp(name);
    int rc = sc_bvh_write(path, &b, err);
    sc_bvh_free(&b);
    return rc ? NULL : path;
}

TEST(id_standing_still)
{
    sc_err err;
    const char *bvh = standing_bvh("stand.bvh", 120, &err);
    ENSURE_MSG(bvh, "%s", err.msg);
    long long clamps_paper = -1;
    for (int run = 0; run < 3; run++) { /* skin weights, nearest bone, skin weights with eq. 28 as printed */
        const char *ch = character(run == 1 ? 0 : 2);
        ENSURE(ch);
        int paper = run == 2;
        char cfg[2048], name[64];
        snprintf(cfg, sizeof cfg, "motion: {bvh: %s}\ncontact_estimation: {torque_split: %s}\n", bvh, paper ? "paper" : "residual");
        snprintf(name, sizeof name, "stand%d.yaml", run);
        const char *yaml = sc_test_write(name, cfg);
        snprintf(name, sizeof name, "stand%d.h5", run);
        const char *h5 = sc_test_tmp(name);
        int rc = run_id(yaml, ch, h5);
        ENSURE_MSG(rc == 0, "inverse-dynamics exit %d: %s", rc, out);
        if (paper) {
            clamps_paper = attr_i(h5, "/report", "contact_torque_clamps");
            continue;
        }
        sc_reference r;
        ENSURE_OK(sc_reference_read(h5, &r, &err), &err);
        double mg = attr_f(h5, "/report", "weight_N"), worst = 0, share = 0, resid = 0;
        int lf = bone_index(&r, "l_foot"), rf = bone_index(&r, "r_foot"), others = 0;
        for (int k = 0; k < r.n; k++) {
            worst = fmax(worst, fabs(contact_fy(&r, k) - mg) / mg);
            share = fmax(share, fabs(r.contact_force[3 * ((size_t)k * r.nb + lf) + 1] / mg - 0.5));
            resid = fmax(resid, sc_v3_norm(sc_v3_load(r.root_residual + 6 * k)));
            for (int j = 0; j < r.nb; j++) others += (j != lf && j != rf) && r.contact_flag[(size_t)k * r.nb + j];
            ENSURE(r.contact_flag[(size_t)k * r.nb + lf] && r.contact_flag[(size_t)k * r.nb + rf]);
        }
        double pl = peak_torque(&r, bone_index(&r, "l_thigh"), NULL), pr = peak_torque(&r, bone_index(&r, "r_thigh"), NULL);
        long long fr = attr_i(h5, "/report", "friction_cone_clamps"), po = attr_i(h5, "/report", "push_only_clamps"),
                  tq = attr_i(h5, "/report", "contact_torque_clamps");
        char *src = NULL;
        sc_h5 *f;
        if (!sc_h5_open(h5, &f, NULL)) {
            sc_h5_read_attr_str(f, "/report", "mass_source", &src, NULL);
            sc_h5_close(f);
        }
        sc_test_report("standing %.2f s (%d samples), masses by %s, m g = %.1f N: vertical ground force off by <= %.2g of "
                       "m g; left foot share 0.5 +- %.3f; other bones in contact %d; clamps: friction %lld, push-only %lld, "
                       "torque %lld; root residual <= %.2g N; hip torques %.1f / %.1f N m",
                       r.time[r.n - 1], r.n, src ? src : "?", mg, worst, share, others, fr, po, tq, resid, pl, pr);
        int src_ok = src && !strcmp(src, run == 1 ? "nearest bone" : "skin weights");
        free(src);
        ENSURE(src_ok);
        ENSURE(worst < 0.01);
        ENSURE(fr == 0 && po == 0 && tq == 0);
        ENSURE(others == 0 && share < 0.05);
        ENSURE(resid < 1e-6 * mg);
        ENSURE(fabs(pl - pr) < 0.1 * fmax(pl, pr));
        sc_reference_free(&r);
    }
    /* eq. 28 as printed gives each foot minus the moment of its own force about the com */
    sc_test_report("the same with eq. 28 as printed (torque_split: paper): %lld contact torque clamps", clamps_paper);
    ENSURE(clamps_paper > 0);
}

/* ---- 5. real clips ---------------------------------------------------------------------- */

TEST(id_real_clips)
{
    sc_err err;
    const char *ch = character(2);
    ENSURE(ch);
    static const char *clips[] = {"walk", "run"};
    for (int c = 0; c < 2; c++) {
        char cfg[256], h5[256];
        snprintf(cfg, sizeof cfg, "configs/%s.yaml", clips[c]);
        snprintf(h5, sizeof h5, "%s_ref.h5", clips[c]);
        const char *outp = sc_test_tmp(h5);
        double t0 = sc_wall_time();
        int rc = run_id(sc_test_repo(cfg), ch, outp);
        double secs = sc_wall_time() - t0;
        ENSURE_MSG(rc == 0, "%s: exit %d: %s", clips[c], rc, out);
        sc_reference r;
        ENSURE_OK(sc_reference_read(outp, &r, &err), &err);
        double mg = attr_f(outp, "/report", "weight_N"), mass = attr_f(outp, "/report", "total_mass_kg");
        double mean = 0, peak = 0;
        int airborne = 0;
        for (int k = 0; k < r.n; k++) {
            double fy = contact_fy(&r, k);
            mean += fy / r.n;
            peak = fmax(peak, fy);
            int any = 0;
            for (int j = 0; j < r.nb; j++) any |= r.contact_flag[(size_t)k * r.nb + j];
            airborne += !any;
        }
        int lf = bone_index(&r, "l_foot"), rf = bone_index(&r, "r_foot"), nl, nr;
        double dl = attr_f(outp, "/report", "duty_l_foot"), dr = attr_f(outp, "/report", "duty_r_foot");
        double sl = stride_duty(&r, lf, &nl), sr = stride_duty(&r, rf, &nr);
        long long fr = attr_i(outp, "/report", "friction_cone_clamps"), po = attr_i(outp, "/report", "push_only_clamps"),
                  tq = attr_i(outp, "/report", "contact_torque_clamps"), steps = attr_i(outp, "/report", "contact_bone_steps");
        double res = attr_f(outp, "/report", "root_residual_force_rms_N"), rest = attr_f(outp, "/report", "root_residual_torque_rms_Nm");
        char *src = NULL;
        {
            sc_h5 *f;
            if (!sc_h5_open(outp, &f, NULL)) {
                sc_h5_read_attr_str(f, "/report", "mass_source", &src, NULL);
                sc_h5_close(f);
            }
        }
        sc_test_report("%s (%s, %d samples, %.2f s): mass %.2f kg (%s); duty factor l_foot %.3f r_foot %.3f, per stride "
                       "%.3f (%d touchdowns) / %.3f (%d); airborne %.1f %% of the time; vertical ground force mean %.3f, peak "
                       "%.2f x m g; clamps friction %lld push-only %lld torque %lld of %lld bone-steps; root residual rms "
                       "%.1f N, %.1f N m",
                       clips[c], cfg, r.n, secs, mass, src ? src : "?", dl, dr, sl, nl, sr, nr, 100.0 * airborne / r.n, mean / mg, peak / mg, fr, po,
                       tq, steps, res, rest);
        free(src);
        const char *jn[] = {"l_thigh", "r_thigh", "l_shin", "r_shin", "l_foot", "r_foot", "spine", "l_upperarm"};
        char line[1024];
        size_t n = 0;
        double hip_peak = 0, ankle_peak = 0;
        for (int i = 0; i < 8; i++) {
            double rms, pk = peak_torque(&r, bone_index(&r, jn[i]), &rms);
            n += (size_t)snprintf(line + n, sizeof line - n, " %s %.0f/%.0f", jn[i], pk, rms);
            if (i < 2) hip_peak = fmax(hip_peak, pk);
            if (i == 4 || i == 5) ankle_peak = fmax(ankle_peak, pk);
        }
        sc_test_report("%s peak/rms joint torque (N m):%s", clips[c], line);
        /* physically sane: [L13]-style clamps rarely needed, human-like ground forces and torques */
        ENSURE(nl >= 2 && nr >= 2);
        ENSURE(hip_peak / mass > 0.5 && hip_peak / mass < 5 && ankle_peak / mass > 0.5 && ankle_peak / mass < 5);
        if (c == 0) {
            ENSURE(dl > 0.5 && dl < 0.85 && dr > 0.5 && dr < 0.85);
            ENSURE(sl > 0.55 && sl < 0.75 && sr > 0.55 && sr < 0.75);
            ENSURE(fabs(mean / mg - 1) < 0.1);
            ENSURE(peak / mg > 1.05 && peak / mg < 1.6);
            ENSURE(airborne == 0);
            ENSURE(fr + po + tq < 0.01 * steps);
            ENSURE(res < 0.02 * mg);
        } else {
            ENSURE(dl > 0.25 && dl < 0.5 && dr > 0.25 && dr < 0.5);
            ENSURE(fabs(mean / mg - 1) < 0.15);
            ENSURE(peak / mg > 1.8 && peak / mg < 3.2);
            ENSURE(airborne > r.n / 10); /* running has flight phases */
        }
        /* reference.h5 describes itself and the reader interpolates the targets */
        sc_h5 *f;
        ENSURE_OK(sc_h5_open(outp, &f, &err), &err);
        char *schema = NULL, *cls = NULL, *range = NULL, *motion = NULL;
        sc_h5_read_attr_str(f, "/", "schema", &schema, NULL);
        sc_h5_read_attr_str(f, "/time", "CLASS", &cls, NULL);
        sc_h5_read_attr_str(f, "/", "frame_range", &range, NULL);
        sc_h5_read_attr_str(f, "/", "motion", &motion, NULL);
        sc_h5_close(f);
        int ok = schema && !strcmp(schema, SC_REFERENCE_SCHEMA) && cls && !strcmp(cls, "DIMENSION_SCALE") && range && !strncmp(range, "1..", 3) &&
            motion && strstr(motion, clips[c]);
        free(schema);
        free(cls);
        free(range);
        free(motion);
        ENSURE(ok);
        sc_quat tq4[SC_BODY_MAX_BONES];
        int k = r.n / 3;
        sc_reference_targets_at(&r, r.time[k], tq4);
        double d = 0;
        for (int j = 0; j < r.nb; j++) {
            const double *q = r.target_quat + 4 * ((size_t)k * r.nb + j);
            d = fmax(d, sc_q_angle_between(tq4[j], (sc_quat){q[0], q[1], q[2], q[3]}));
        }
        ENSURE(d < 1e-9);
        sc_reference_free(&r);
    }
    /* the walk again with eq. 25-26 taken literally (momenta differenced at the simulation step) and
       centred differences: the estimates agree, and the literal momentum rate leaves a small root
       residual (it is not the derivative the Newton-Euler pass sees) */
    {
        char cfg[4096];
        snprintf(cfg, sizeof cfg,
                 "motion: {bvh: %s, filter: butterworth, filter_cutoff: 6}\nkinematics: {differences: central}\n"
                 "dynamics: {momentum_rate: difference}\n",
                 sc_test_mocap("cmu_02_01_walk.bvh"));
        const char *yaml = sc_test_write("walk_difference.yaml", cfg), *o2 = sc_test_tmp("walk_difference.h5");
        int rc = run_id(yaml, ch, o2);
        ENSURE_MSG(rc == 0, "exit %d: %s", rc, out);
        double mg = attr_f(o2, "/report", "weight_N"), res = attr_f(o2, "/report", "root_residual_force_rms_N");
        double mean = attr_f(o2, "/report", "mean_contact_force_y_N"), dl = attr_f(o2, "/report", "duty_l_foot");
        double dl0 = attr_f(sc_test_tmp("walk_ref.h5"), "/report", "duty_l_foot");
        sc_test_report("walk with central differences and momentum_rate: difference: root residual force rms %.2f N (%.2g of "
                       "m g), mean vertical force %.4f x m g, duty l_foot %.3f (forward/analytic: %.3f)",
                       res, res / mg, mean / mg, dl, dl0);
        ENSURE(res > 0 && res < 0.02 * mg);
        ENSURE(fabs(mean / mg - 1) < 0.01);
        ENSURE(fabs(dl - dl0) < 0.03);
    }
    /* the open-loop comparison of the test 4 (raw reference vs ID targets, time to fall and
       tracking error on walk and run) needs `simulate`, which is not in the tree yet */
}

/* ---- the project's march on the built-in character ------------------------------------ */

TEST(id_march_builtin)
{
    sc_err err;
    const char *ch = character(3);
    ENSURE(ch);
    const char *outp = sc_test_tmp("march_ref.h5");
    int rc = sc_test_sh(out, sizeof out, "cd %s && %s -c configs/march.yaml -o %s %s", sc_test_repo("."), sc_test_tool("inverse-dynamics"), outp, ch);
    ENSURE_MSG(rc == 0, "exit %d: %s", rc, out);
    sc_reference r;
    ENSURE_OK(sc_reference_read(outp, &r, &err), &err);
    double mg = attr_f(outp, "/report", "weight_N"), worst = 0, mean = 0, resid = 0;
    int airborne = 0;
    for (int k = 0; k < r.n; k++) {
        double fy = contact_fy(&r, k);
        mean += fy / r.n;
        resid = fmax(resid, sc_v3_norm(sc_v3_load(r.root_residual + 6 * k)));
        int any = 0;
        for (int j = 0; j < r.nb; j++) any |= r.contact_flag[(size_t)k * r.nb + j];
        airborne += !any;
        worst = fmax(worst, fy / mg);
    }
    double dl = attr_f(outp, "/report", "duty_l_foot"), dr = attr_f(outp, "/report", "duty_r_foot");
    long long fr = attr_i(outp, "/report", "friction_cone_clamps"), po = attr_i(outp, "/report", "push_only_clamps"),
              tq = attr_i(outp, "/report", "contact_torque_clamps");
    double align = attr_f(outp, "/", "max_rest_alignment_deg");
    double rms, hip = peak_torque(&r, bone_index(&r, "l_thigh"), &rms);
    sc_test_report("march (%d samples) on michelin.yaml: rest alignment up to %.1f deg; duty l_foot %.3f r_foot %.3f; "
                   "airborne %d samples; vertical force mean %.4f, peak %.3f x m g; clamps %lld/%lld/%lld; root residual "
                   "<= %.2g N; l_thigh peak %.0f rms %.0f N m",
                   r.n, align, dl, dr, airborne, mean / mg, worst, fr, po, tq, resid, hip, rms);
    ENSURE(align > 5);
    ENSURE(dl > 0.7 && dl < 0.9 && dr > 0.7 && dr < 0.9);
    ENSURE(airborne == 0);
    ENSURE(fabs(mean / mg - 1) < 0.01);
    ENSURE(fr == 0 && po == 0 && tq == 0);
    ENSURE(resid < 1e-6 * mg);
    /* issue 28 item 2: the mean resultant is a force, and a plausible reference has no warning */
    const char *res = strstr(out, "mean resultant before clamps ");
    ENSURE_MSG(res && fabs(atof(res + strlen("mean resultant before clamps ")) / mg - 1) < 0.01, "%s", out);
    ENSURE_MSG(attr_i(outp, "/report", "warning_count") == 0 && !strstr(out, "warning"), "%s", out);
    sc_reference_free(&r);
    /* targets clamped at 0.001 rad: the figure is warned about, with the number, and stored */
    const char *clamped = sc_test_tmp("march_clamped.yaml"), *outc = sc_test_tmp("march_clamped.h5");
    rc = sc_test_sh(out, sizeof out, "cd %s && (cat configs/march.yaml; echo 'dynamics: {max_target_offset: 0.001}') > %s && %s -c %s -o %s %s 2>&1 | grep -v '^  '",
                    sc_test_repo("."), clamped, sc_test_tool("inverse-dynamics"), clamped, outc, ch);
    sc_test_report("march with targets clamped at 0.001 rad: exit %d: %s", rc, out);
    ENSURE_MSG(rc == 0 && strstr(out, "warning: inverse-dynamics: ") && strstr(out, "PD target offsets clamped (") &&
                   attr_i(outc, "/report", "warning_count") >= 1,
               "exit %d: %s", rc, out);
}

/* Issue 28 item 2: a synthetic log roll (scripts/make-roll.py: on the back, onto each side and
   back). A body lying on the floor spans it with its lowest points, but those differ in height by
   the body's shape, not by a slope: the floor is not tilted (it was by 4.4 deg). Its contacts are
   found on the back and the arms without a list, and the fit keeps them within 3 cm (the body's
   contacts set the root height by least squares; it was 10 cm with the last one winning). Without
   the fit the reference floats 5-7 cm over the floor: inverse-dynamics warns, with the figures. */
TEST(id_synthetic_roll_contacts_floor_and_warnings)
{
    const char *bvh = sc_test_tmp("roll.bvh"), *outp = sc_test_tmp("roll_ref.h5"), *nofit = sc_test_tmp("roll_nofit.h5");
    char cfg[1400];
    snprintf(cfg, sizeof cfg, "motion: {bvh: %s, filter: butterworth, filter_cutoff: 8}\n", bvh);
    const char *yaml = sc_test_write("roll.yaml", cfg);
    int rc = sc_test_sh(out, sizeof out, "%s %s", sc_test_repo("scripts/make-roll.py"), bvh);
    ENSURE_MSG(rc == 0, "%s", out);
    const char *ch = NULL;
    for (int which = 3; which >= 2; which--) { /* the built-in Michelin, then on the CMU skeleton */
        ch = character(which);
        ENSURE(ch);
        rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s 2>&1 | grep -v '^  [a-eg-z]'", sc_test_tool("inverse-dynamics"), yaml, outp, ch);
        const char *lev = strstr(out, "levelled by ");
        ENSURE_MSG(rc == 0 && lev && fabs(atof(lev + strlen("levelled by "))) < 0.5, "%s", out);
        double gap = attr_f(outp, "/report", "max_contact_gap_m");
        double duty[3] = {attr_f(outp, "/report", "duty_pelvis"), attr_f(outp, "/report", "duty_spine"), attr_f(outp, "/report", "duty_l_upperarm")};
        sc_test_report("synthetic roll on %s: largest contact gap %.4f m; in contact: pelvis %.2f, spine %.2f, left upper arm %.2f of the time", ch,
                       gap, duty[0], duty[1], duty[2]);
        ENSURE_MSG(gap < 0.03 && duty[0] > 0.25 && duty[1] > 0.25 && duty[2] > 0.15, "gap %.4f m, duty %.2f %.2f %.2f", gap, duty[0], duty[1], duty[2]);
        remove(outp);
    }
    snprintf(cfg, sizeof cfg, "motion: {bvh: %s, filter: butterworth, filter_cutoff: 8}\nretarget: {contacts: false}\n", bvh);
    yaml = sc_test_write("roll_nofit.yaml", cfg);
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s 2>&1 | grep -v '^  '", sc_test_tool("inverse-dynamics"), yaml, nofit, ch);
    sc_test_report("synthetic roll without the contact fit: exit %d: %s", rc, out);
    ENSURE_MSG(rc == 0 && strstr(out, "warning: inverse-dynamics: ") && strstr(out, "kept within 2 cm of the floor, largest gap") &&
                   attr_i(nofit, "/report", "warning_count") >= 1 && attr_f(nofit, "/report", "max_contact_gap_m") > 0.04,
               "%s", out);
}

/* ---- 4. bad input ----------------------------------------------------------------------- */

static void expect_failure(const char *name, const char *yaml_text, const char *charfile, int code, const char *n1, const char *n2)
{
    char file[128], h5[128];
    snprintf(file, sizeof file, "%s.yaml", name);
    snprintf(h5, sizeof h5, "%s.h5", name);
    const char *yaml = sc_test_write(file, yaml_text);
    const char *outp = sc_test_tmp(h5);
    int rc = run_id(yaml, charfile, outp);
    sc_test_report("%s: exit %d: %s", name, rc, out);
    ENSURE_MSG(rc == code, "%s: exit %d, expected %d: %s", name, rc, code, out);
    ENSURE_MSG(strstr(out, n1) != NULL, "%s: '%s' not in: %s", name, n1, out);
    ENSURE_MSG(!n2 || strstr(out, n2) != NULL, "%s: '%s' not in: %s", name, n2, out);
    ENSURE_MSG(!sc_test_file_exists(outp) && !sc_test_temporary_left(outp), "%s left output", name);
}

/* Gravity and friction come from the keys the simulator reads; the rest of those sections is the
   simulator's (no unknown-key error); the old keys are errors that say where the value lives now. */
TEST(id_world_settings)
{
    sc_err err;
    char text[2048];
    snprintf(text, sizeof text,
             "motion: {bvh: %s}\nsimulation: {gravity: [0, -9.5, 0], fem_precision: single, solver: exact}\n"
             "contact: {friction: 0.6, stiffness: 1e5}\n",
             sc_test_mocap("cmu_02_01_walk.bvh"));
    sc_cfg *cfg;
    sc_id_config c;
    ENSURE_OK(sc_cfg_load_string(text, "world.yaml", &cfg, &err), &err);
    ENSURE_OK(sc_id_read_config(cfg, &c, &err), &err);
    ENSURE_OK(sc_cfg_check_unknown(cfg, &err), &err);
    ENSURE(c.id.gravity[0] == 0 && c.id.gravity[1] == -9.5 && c.id.gravity[2] == 0 && c.id.contact.mu == 0.6);
    sc_cfg_free(cfg);
    /* the defaults: model/world.h's */
    snprintf(text, sizeof text, "motion: {bvh: %s}\n", sc_test_mocap("cmu_02_01_walk.bvh"));
    ENSURE_OK(sc_cfg_load_string(text, "world.yaml", &cfg, &err), &err);
    ENSURE_OK(sc_id_read_config(cfg, &c, &err), &err);
    ENSURE(c.id.gravity[1] == -9.81 && c.id.contact.mu == 0.8);
    sc_cfg_free(cfg);
    const char *old[][2] = {
        {"contact_estimation:\n  mu: 0.7\n", "world.yaml:3:7: contact_estimation.mu moved: set contact.friction (read by every tool)"},
        {"dynamics: {gravity: [0, -9.81, 0]}\n", "world.yaml:2:21: dynamics.gravity moved: set simulation.gravity (read by every tool)"}};
    for (int i = 0; i < 2; i++) {
        snprintf(text, sizeof text, "motion: {bvh: %s}\n%s", sc_test_mocap("cmu_02_01_walk.bvh"), old[i][0]);
        ENSURE_OK(sc_cfg_load_string(text, "world.yaml", &cfg, &err), &err);
        ENSURE(sc_id_read_config(cfg, &c, &err) == SC_EINPUT);
        ENSURE_MSG(strstr(err.msg, old[i][1]) != NULL, "%s", err.msg);
        sc_cfg_free(cfg);
    }
}

TEST(id_bad_input)
{
    sc_err err;
    const char *ch = character(0);
    ENSURE(ch);
    char walk[1024], buf[4096], map[3000];
    snprintf(walk, sizeof walk, "%s", sc_test_mocap("cmu_02_01_walk.bvh"));
    /* a map without l_hand; a map naming a joint the BVH lacks */
    const char *entries[][3] = {{"pelvis", "Hips", "Spine"},
                                {"spine", "Spine", "Spine1"},
                                {"neck", "Neck", "Neck1"},
                                {"head", "Neck1", "Head_End"},
                                {"l_upperarm", "LeftArm", "LeftForeArm"},
                                {"l_forearm", "LeftForeArm", "LeftHand"},
                                {"r_upperarm", "RightArm", "RightForeArm"},
                                {"r_forearm", "RightForeArm", "RightHand"},
                                {"r_hand", "RightHand", "RightHandIndex1_End"},
                                {"l_thigh", "LeftUpLeg", "LeftLeg"},
                                {"l_shin", "LeftLeg", "LeftFoot"},
                                {"l_foot", "LeftFoot", "LeftToeBase_End"},
                                {"r_thigh", "RightUpLeg", "RightLeg"},
                                {"r_shin", "RightLeg", "RightFoot"},
                                {"r_foot", "RightFoot", "RightToeBase_End"}};
    size_t n = 0;
    for (int i = 0; i < 15; i++) n += (size_t)snprintf(map + n, sizeof map - n, "    %s: [%s, %s]\n", entries[i][0], entries[i][1], entries[i][2]);
    snprintf(buf, sizeof buf, "motion: {bvh: %s}\nretarget:\n  map:\n%s", walk, map);
    expect_failure("map_missing_bone", buf, ch, 2, "character bone 'l_hand' has no entry in the retarget map", "map_missing_bone.yaml:");
    snprintf(buf, sizeof buf, "motion: {bvh: %s}\nretarget:\n  map:\n%s    l_hand: [LeftPalm, LeftHandIndex1_End]\n", walk, map);
    expect_failure("map_bad_joint", buf, ch, 2, "bone 'l_hand' is mapped to BVH joint 'LeftPalm'", "cmu_02_01_walk.bvh does not have");
    snprintf(buf, sizeof buf, "motion: {bvh: %s}\nretarget:\n  map:\n%s    l_hand: [LeftHand, LeftHandIndex1_End]\n    tail: [Hips, Spine]\n", walk,
             map);
    expect_failure("map_unknown_bone", buf, ch, 2, "names bone 'tail', which the character does not have", NULL);
    /* NaN in a channel: the BVH reader names the frame, joint and channel */
    sc_bvh b;
    ENSURE_OK(sc_bvh_load(walk, &b, &err), &err);
    FILE *src = fopen(walk, "rb");
    ENSURE(src);
    static char text[4 << 20];
    size_t len = fread(text, 1, sizeof text - 1, src);
    fclose(src);
    text[len] = 0;
    char *motion = strstr(text, "Frame Time:");
    ENSURE(motion);
    char *line = strchr(motion, '\n') + 1;
    for (int f = 0; f < 5; f++) line = strchr(line, '\n') + 1; /* frame 5 */
    /* the 10th value of frame 5: channel 3 of joint 1 (LHipJoint Zrotation) is index 6..8; use index 9 */
    char *p = line;
    for (int v = 0; v < 9; v++) {
        while (*p == ' ' || *p == '\t') p++;
        while (*p && *p != ' ' && *p != '\t') p++;
    }
    while (*p == ' ' || *p == '\t') p++;
    char *e = p;
    while (*e && *e != ' ' && *e != '\t') e++;
    static char bad[4 << 20];
    snprintf(bad, sizeof bad, "%.*snan%s", (int)(p - text), text, e);
    const char *nanbvh = sc_test_write("nan.bvh", bad);
    int jn = -1, ch9 = -1;
    for (int j = 0; j < b.njoints; j++)
        if (b.joints[j].nchannels && 9 >= b.joints[j].channel_offset && 9 < b.joints[j].channel_offset + b.joints[j].nchannels) {
            jn = j;
            ch9 = b.joints[j].channel[9 - b.joints[j].channel_offset];
        }
    ENSURE(jn >= 0);
    char needle[256];
    snprintf(needle, sizeof needle, "frame 5, joint %s, channel %s", b.joints[jn].name, sc_bvh_channel_name(ch9));
    sc_bvh_free(&b);
    snprintf(buf, sizeof buf, "motion: {bvh: %s}\n", nanbvh);
    expect_failure("nan_channel", buf, ch, 2, needle, "nan.bvh:");
    /* frame range */
    snprintf(buf, sizeof buf, "motion: {bvh: %s, frames: [1, 5000]}\n", walk);
    expect_failure("frames_outside", buf, ch, 2, "frame range [1, 5000] is outside the clip, which has frames 0..343", NULL);
    snprintf(buf, sizeof buf, "motion: {bvh: %s, frames: [200, 100]}\n", walk);
    expect_failure("frames_reversed", buf, ch, 2, "frames [200, 100] is reversed", "frames_reversed.yaml:1:");
    /* config errors: unknown key (did you mean), bad enum, missing clip, missing character */
    snprintf(buf, sizeof buf, "motion: {bvh: %s}\ncontact_estimation:\n  support: 0.1\n  hieght_tol: 0.03\n", walk);
    expect_failure("unknown_key", buf, ch, 2, "unknown_key.yaml:4:3: unknown key 'hieght_tol'", "did you mean 'height_tol'");
    snprintf(buf, sizeof buf, "motion: {bvh: %s}\nkinematics: {differences: backward}\n", walk);
    expect_failure("bad_scheme", buf, ch, 2, "differences", "forward");
    snprintf(buf, sizeof buf, "motion: {bvh: no_such_clip.bvh}\n");
    expect_failure("missing_clip", buf, ch, 3, "no_such_clip.bvh", "SOFTCON_MOCAP_PATH");
    snprintf(buf, sizeof buf, "motion: {bvh: %s}\n", walk);
    expect_failure("missing_character", buf, sc_test_tmp("no_such_character.h5"), 3, "no_such_character.h5", NULL);
    snprintf(buf, sizeof buf, "motion: {bvh: %s}\ncontact_estimation: {bones: [l_foot, l_toe]}\n", walk);
    expect_failure("contact_bones", buf, ch, 2, "contact_estimation.bones names 'l_toe'", NULL);
    /* usage */
    int rc = sc_test_sh(out, sizeof out, "%s -c %s", sc_test_tool("inverse-dynamics"), sc_test_repo("configs/walk.yaml"));
    ENSURE_MSG(rc == 1 && strstr(out, "usage"), "exit %d: %s", rc, out);
}

/* motion.edit ([BK] 8's motion-capture editing): the left foot raised by a spline through its
   stance edges and swing. Relative to the root (the balance fit may move the root), the foot is
   where the spline asks at its peak, turned as before; the other foot has not moved; the foot's
   contact is dropped wherever it is lifted. Bad edits exit 2 naming their line. */
TEST(id_motion_edit_raises_the_foot)
{
    sc_err err;
    const char *ch = character(2);
    ENSURE(ch);
    char text[2048];
    const char *plain = sc_test_tmp("edit_plain.h5"), *edited = sc_test_tmp("edit_raised.h5");
    snprintf(text, sizeof text, "motion: {bvh: %s, filter: butterworth, filter_cutoff: 8}\n", sc_test_mocap("cmu_02_01_walk.bvh"));
    ENSURE_MSG(run_id(sc_test_write("edit_plain.yaml", text), ch, plain) == 0, "%s", out);
    snprintf(text, sizeof text,
             "motion:\n  bvh: %s\n  filter: butterworth\n  filter_cutoff: 8\n  edit:\n"
             "    nodes:\n      - {name: lift, spline: [[0.60, 0], [0.85, 0.10, 0], [1.10, 0]]}\n"
             "    moves:\n      - {bone: l_foot, y: lift}\n",
             sc_test_mocap("cmu_02_01_walk.bvh"));
    ENSURE_MSG(run_id(sc_test_write("edit_raised.yaml", text), ch, edited) == 0, "%s", out);
    sc_reference a, b;
    ENSURE_OK(sc_reference_read(plain, &a, &err), &err);
    ENSURE_OK(sc_reference_read(edited, &b, &err), &err);
    ENSURE(a.n == b.n && a.nb == b.nb);
    const int lf = bone_index(&a, "l_foot"), rf = bone_index(&a, "r_foot"), nb = a.nb;
    double lift_err = 0, turn = 0, other = 0;
    int peak = -1, kept = 0, lifted = 0;
    for (int k = 0; k < a.n; k++) {
        const double t = a.time[k];
        if (fabs(t - 0.85) < 0.5 * (a.time[1] - a.time[0])) peak = k;
        double d[2][3];
        for (int c = 0; c < 3; c++) {
            d[0][c] = (b.bone_pos[3 * ((size_t)k * nb + lf) + c] - b.bone_pos[3 * (size_t)k * nb + c]) -
                      (a.bone_pos[3 * ((size_t)k * nb + lf) + c] - a.bone_pos[3 * (size_t)k * nb + c]);
            d[1][c] = (b.bone_pos[3 * ((size_t)k * nb + rf) + c] - b.bone_pos[3 * (size_t)k * nb + c]) -
                      (a.bone_pos[3 * ((size_t)k * nb + rf) + c] - a.bone_pos[3 * (size_t)k * nb + c]);
        }
        other = fmax(other, sqrt(d[1][0] * d[1][0] + d[1][1] * d[1][1] + d[1][2] * d[1][2]));
        double dot = 0; /* on keyframes (every 3rd at 120 fps): between them the local rotations are interpolated */
        for (int c = 0; c < 4; c++) dot += a.bone_quat[4 * ((size_t)k * nb + lf) + c] * b.bone_quat[4 * ((size_t)k * nb + lf) + c];
        if (fabs(remainder(t, 0.025)) < 1e-9) turn = fmax(turn, 2 * acos(fmin(1, fabs(dot))));
        if (k == peak) lift_err = fabs(d[0][1] - 0.10) + fabs(d[0][0]) + fabs(d[0][2]);
        if (t > 0.62 && t < 1.08) {
            lifted += b.contact_flag[(size_t)k * nb + lf] == 0;
            kept += a.contact_flag[(size_t)k * nb + lf] != 0;
        }
    }
    sc_test_report("edited l_foot at 0.85 s: %.2e m from 0.10 m up; turned %.2e rad at most on keyframes; r_foot moved %.2e m; "
                   "l_foot contact dropped on %d samples of (0.62, 1.08) s, %d of which the capture had in contact",
                   lift_err, turn, other, lifted, kept);
    ENSURE(peak >= 0 && lift_err < 1e-6 && turn < 1e-6 && other < 1e-9);
    ENSURE(kept > 50 && lifted == (int)round(0.46 / (a.time[1] - a.time[0])) - 1);
    sc_reference_free(&a);
    sc_reference_free(&b);
    static const struct {
        const char *edit, *want;
    } bad[] = {
        {"{nodes: [{name: l, spline: [[0, 0], [1, 0.1]]}], moves: [{bone: l_fot, y: l}]}", "moves 'l_fot', which the character does not have"},
        {"{nodes: [{name: l, spline: [[0, 0], [1, 0.1]]}], moves: [{bone: l_shin, y: l}]}", "moves 'l_shin', which is no limb end"},
        {"{nodes: [{name: l, spline: [[0, 0], [1, 0.1]], loop: true}], moves: [{bone: l_foot, y: l}]}", "node 'l' loops"},
        {"{nodes: [{name: l, feedback: com_forward}], moves: [{bone: l_foot, y: l}]}", "have no feedback"},
        {"{nodes: [{name: l, spline: [[0, 0], [1, 0.1]]}], moves: [{bone: l_foot, y: lift}]}", "names node 'lift', which motion.edit.nodes does not have"},
        {"{nodes: [{name: l, spline: [[0, 0], [1, 0.1]]}], moves: [{bone: l_foot}]}", "along none of x, y, z"},
        {"{nodes: [{name: l, spline: [[0, 0], [1e6, 0.1]]}], moves: [{bone: l_foot, y: l}]}", "an edit spans at most 600 s"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        snprintf(text, sizeof text, "motion:\n  bvh: %s\n  edit: %s\n", sc_test_mocap("cmu_02_01_walk.bvh"), bad[k].edit);
        const char *o = sc_test_tmp("edit_bad.h5");
        int rc = run_id(sc_test_write("edit_bad.yaml", text), ch, o);
        ENSURE_MSG(rc == 2 && strstr(out, "edit_bad.yaml:3:") && strstr(out, bad[k].want) && !sc_test_file_exists(o), "edit %s: exit %d: %s",
                   bad[k].edit, rc, out);
    }
    sc_test_report("%zu bad edits: exit 2 naming line 3, no output; e.g. %s", sizeof bad / sizeof *bad, out);
}

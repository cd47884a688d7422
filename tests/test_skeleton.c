/* Skeleton on ODE: stable PD against its analytic discrete response, explicit PD divergence,
 * bit-identical snapshots, momentum, pose conversions. Models are built by hand. */
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "core/rng.h"
#include "sim/skeleton.h"
#include "test.h"

#define TB_MAX 16

typedef struct {
    sc_model m;
    char names[TB_MAX][SC_NAME_LEN];
    int parent[TB_MAX], type[TB_MAX];
    double joint_pos[3 * TB_MAX], bone_end[3 * TB_MAX], axis[3 * TB_MAX], lo[3 * TB_MAX], hi[3 * TB_MAX];
    double kp[TB_MAX], kd[TB_MAX], tlim[TB_MAX], mass[TB_MAX], com[3 * TB_MAX], inertia[9 * TB_MAX];
} tmodel;

static void tm_init(tmodel *t, int nb)
{
    memset(t, 0, sizeof *t);
    sc_model *m = &t->m;
    m->nbones = nb;
    m->bone_name = t->names;
    m->parent = t->parent;
    m->joint_type = t->type;
    m->joint_pos = t->joint_pos;
    m->bone_end = t->bone_end;
    m->hinge_axis = t->axis;
    m->joint_lo = t->lo;
    m->joint_hi = t->hi;
    m->kp = t->kp;
    m->kd = t->kd;
    m->torque_limit = t->tlim;
    m->bone_mass = t->mass;
    m->bone_com = t->com;
    m->bone_inertia = t->inertia;
    for (int i = 0; i < 3 * TB_MAX; i++) {
        t->lo[i] = 1;
        t->hi[i] = -1;
    } /* no limits */
}

/* Bone b with joint at jp, centre of mass at com, inertia I (world rest axes). */
static void tm_bone(tmodel *t, int b, int parent, int type, sc_vec3 jp, sc_vec3 com, double mass, sc_mat3 I)
{
    snprintf(t->names[b], SC_NAME_LEN, "bone%d", b);
    t->parent[b] = parent;
    t->type[b] = type;
    sc_v3_store(t->joint_pos + 3 * b, jp);
    sc_v3_store(t->com + 3 * b, com);
    sc_v3_store(t->bone_end + 3 * b, sc_v3_add(com, sc_v3_sub(com, jp)));
    t->mass[b] = mass;
    for (int i = 0; i < 9; i++) t->inertia[9 * b + i] = I.m[i / 3][i % 3];
}

static sc_mat3 diag3(double a, double b, double c)
{
    sc_mat3 m = sc_m3_zero();
    m.m[0][0] = a;
    m.m[1][1] = b;
    m.m[2][2] = c;
    return m;
}

/* Inertia with principal moment ia about the unit axis a and ip about every normal axis. */
static sc_mat3 axial_inertia(sc_vec3 a, double ia, double ip)
{
    sc_mat3 m = sc_m3_scale(sc_m3_identity(), ip);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) m.m[i][j] += (ia - ip) * sc_v3_get(a, i) * sc_v3_get(a, j);
    return m;
}

/* Root (kinematic via fix_root) and one hinge bone whose com lies on the axis, so the servo row
 * decouples from the hinge's other rows and the motion is a pure 1-dof rotation. */
static sc_vec3 g_axis;
static void hinge_model(tmodel *t, double ia, double kp, double kd, double tlim)
{
    tm_init(t, 2);
    g_axis = sc_v3_normalize(sc_v3(1, 2, 2));
    tm_bone(t, 0, -1, SC_JOINT_FREE, sc_v3(0, 0, 0), sc_v3(0, 0, 0), 1.0, diag3(0.1, 0.1, 0.1));
    sc_vec3 jp = sc_v3(0.3, 0.2, -0.1);
    tm_bone(t, 1, 0, SC_JOINT_HINGE, jp, sc_v3_axpy(0.15, g_axis, jp), 2.0, axial_inertia(g_axis, ia, 2.5 * ia));
    sc_v3_store(t->axis + 3, g_axis);
    t->kp[1] = kp;
    t->kd[1] = kd;
    t->tlim[1] = tlim;
}

static double hinge_angle(const sc_skeleton *s)
{
    sc_quat l[2];
    sc_skeleton_local_rotations(s, l);
    sc_quat q = l[1];
    return 2 * atan2(q.x * g_axis.x + q.y * g_axis.y + q.z * g_axis.z, q.w);
}

static double hinge_rate(const sc_skeleton *s)
{
    double w[6];
    sc_skeleton_get_state(s, NULL, NULL, w);
    return sc_v3_dot(sc_v3_load(w + 3), g_axis); /* the root is static */
}

static void set_hinge_target(sc_skeleton *s, double angle)
{
    sc_quat t[2] = {sc_q_identity(), sc_q_axis_angle(g_axis, angle)};
    sc_skeleton_set_targets(s, t);
}

TEST(skeleton_stable_pd_hinge_analytic)
{
    const double I = 0.02, kp = 200, kd = 5, h = 1e-3, qt = 0.7;
    tmodel t;
    hinge_model(&t, I, kp, kd, 0);
    sc_err err;
    /* variants: exact solver, quickstep, exact with far stops (the servo is then a 1-axis amotor) */
    for (int variant = 0; variant < 3; variant++) {
        int solver = variant != 1;
        t.lo[3] = variant == 2 ? -3 : 1;
        t.hi[3] = variant == 2 ? 3 : -1;
        sc_skeleton_opts o;
        sc_skeleton_default_opts(&o);
        o.gravity[1] = 0;
        o.fix_root = 1;
        o.exact_solver = solver;
        sc_skeleton *s;
        ENSURE_OK(sc_skeleton_create(&t.m, &o, &s, &err), &err);
        set_hinge_target(s, qt);
        double q = 0, w = 0, eq = 0, ew = 0, etau = 0;
        for (int n = 0; n < 1000; n++) {
            double tau_ref = kp * (qt - q); /* row force kp(q~-q_t) - kd w_t+1, eq. 1 with implicit damper */
            w = (I * w + h * kp * (qt - q)) / (I + h * kd);
            q += h * w;
            tau_ref -= kd * w;
            if (sc_skeleton_step(s, h, &err)) {
                sc_test_fail(__FILE__, __LINE__, "%s", err.msg);
                sc_skeleton_free(s);
                return;
            }
            double tau[6];
            sc_skeleton_motor_torques(s, tau);
            eq = fmax(eq, fabs(hinge_angle(s) - q));
            ew = fmax(ew, fabs(hinge_rate(s) - w));
            etau = fmax(etau, fabs(sc_v3_dot(sc_v3_load(tau + 3), g_axis) - tau_ref));
            /* the torque acts along the axis only */
            etau = fmax(etau, sc_v3_norm(sc_v3_sub(sc_v3_load(tau + 3), sc_v3_scale(g_axis, sc_v3_dot(sc_v3_load(tau + 3), g_axis)))));
        }
        sc_test_report("%s: max |q - q_ref| %.3g rad, |w - w_ref| %.3g rad/s, |tau - tau_ref| %.3g N m over 1000 steps "
                       "(final q %.6f, target %.1f)",
                       variant == 2 ? "exact, amotor servo"
                           : solver ? "exact"
                                    : "quickstep",
                       eq, ew, etau, q, qt);
        sc_skeleton_free(s);
        if (solver) {
            ENSURE(eq < 1e-9);
            ENSURE(ew < 1e-9);
            ENSURE(etau < 1e-8);
        } else {
            ENSURE(eq < 1e-6 && ew < 1e-6);
        }
    }

    /* FMax clamping: a 0.5 N m limit against kp (q~ - q) = 140 N m */
    hinge_model(&t, I, kp, kd, 0.5);
    sc_skeleton_opts o;
    sc_skeleton_default_opts(&o);
    o.gravity[1] = 0;
    o.fix_root = 1;
    o.exact_solver = 1;
    sc_skeleton *s;
    ENSURE_OK(sc_skeleton_create(&t.m, &o, &s, &err), &err);
    set_hinge_target(s, qt);
    double w = 0, elim = 0, ew = 0;
    for (int n = 0; n < 50; n++) {
        w += h * 0.5 / I;
        ENSURE_OK(sc_skeleton_step(s, h, &err), &err);
        double tau[6];
        sc_skeleton_motor_torques(s, tau);
        elim = fmax(elim, fabs(sc_v3_norm(sc_v3_load(tau + 3)) - 0.5));
        ew = fmax(ew, fabs(hinge_rate(s) - w));
    }
    sc_skeleton_free(s);
    sc_test_report("clamped: max ||tau| - 0.5| %.3g N m, |w - w_ref| %.3g rad/s", elim, ew);
    ENSURE(elim < 1e-12);
    ENSURE(ew < 1e-10);
}

TEST(skeleton_explicit_pd_diverges)
{
    /* kd h / I = 6 > 2: the explicit damper overshoots by a factor ~5 per step */
    const double I = 0.005, kp = 300, kd = 30, h = 1e-3, qt = 0.5;
    ENSURE(kd * h / I > 2);
    /* explicit recursion */
    double q = 0, w = 0, amp_exp = 0;
    for (int n = 0; n < 10; n++) {
        w = w + h / I * (kp * (qt - q) - kd * w);
        q += h * w;
        if (n >= 5) amp_exp = fmax(amp_exp, fabs(w));
    }
    /* explicit PD applied as a torque in ODE (servo rows off: kp = kd = 0 in the model) */
    tmodel t;
    hinge_model(&t, I, 0, 0, 0);
    sc_skeleton_opts o;
    sc_skeleton_default_opts(&o);
    o.gravity[1] = 0;
    o.fix_root = 1;
    o.exact_solver = 1;
    sc_err err;
    sc_skeleton *s;
    ENSURE_OK(sc_skeleton_create(&t.m, &o, &s, &err), &err);
    double amp_ode_exp = 0;
    int n_ode = 0;
    for (; n_ode < 10; n_ode++) {
        double qs = hinge_angle(s), ws = hinge_rate(s);
        sc_vec3 tau = sc_v3_scale(g_axis, kp * (qt - qs) - kd * ws);
        double tv[3];
        sc_v3_store(tv, tau);
        sc_skeleton_add_torque(s, 1, tv);
        if (sc_skeleton_step(s, h, &err)) {
            amp_ode_exp = INFINITY;
            break;
        }
        if (n_ode >= 5) amp_ode_exp = fmax(amp_ode_exp, fabs(hinge_rate(s)));
    }
    sc_skeleton_free(s);
    /* the same gains as a stable PD motor row */
    hinge_model(&t, I, kp, kd, 0);
    ENSURE_OK(sc_skeleton_create(&t.m, &o, &s, &err), &err);
    set_hinge_target(s, qt);
    double amp_imp = 0, w0 = 0, qr = 0, wr = 0, eref = 0;
    for (int n = 0; n < 2000; n++) {
        wr = (I * wr + h * kp * (qt - qr)) / (I + h * kd);
        qr += h * wr;
        ENSURE_OK(sc_skeleton_step(s, h, &err), &err);
        if (n == 0) w0 = fabs(hinge_rate(s));
        amp_imp = fmax(amp_imp, fabs(hinge_rate(s)));
        eref = fmax(eref, fabs(hinge_angle(s) - qr));
    }
    double final_err = fabs(hinge_angle(s) - qt);
    sc_skeleton_free(s);
    sc_test_report("kd h/I = %.1f: |w| over steps 5-10: explicit recursion %.3g, explicit torque in ODE %.3g, "
                   "stable PD row max over 2 s %.3g (first step %.3g) rad/s; stable PD |q - q~| after 2 s %.3g rad, vs recursion %.3g",
                   kd * h / I, amp_exp, amp_ode_exp, amp_imp, w0, final_err, eref);
    ENSURE(amp_exp > 1e4);
    ENSURE(amp_ode_exp > 1e4);
    /* w_t+1 is the I : h kd weighted mean of w_t and kp e / kd, so it never exceeds kp |q~| / kd */
    ENSURE(amp_imp <= kp * qt / kd);
    ENSURE(final_err < 1e-6);
    ENSURE(eref < 1e-9);
}

/* ---- chain used by the snapshot and momentum tests ---- */

static void chain_model(tmodel *t)
{
    const int nb = 6;
    tm_init(t, nb);
    const int types[6] = {SC_JOINT_FREE, SC_JOINT_BALL, SC_JOINT_HINGE, SC_JOINT_BALL, SC_JOINT_HINGE, SC_JOINT_BALL};
    const sc_vec3 axes[6] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 1}, {0, 0, 0}, {0, 1, 0}, {0, 0, 0}};
    const double L = 0.25;
    for (int b = 0; b < nb; b++) {
        double m = 1.0 + 0.3 * b;
        sc_vec3 jp = sc_v3(L * b, 1.0, 0.05 * b);
        sc_vec3 com = sc_v3_add(jp, sc_v3(0.5 * L, -0.02, 0.01));
        tm_bone(t, b, b - 1, types[b], jp, com, m, diag3(m * 0.0015, m * 0.006, m * 0.0055));
        sc_v3_store(t->axis + 3 * b, axes[b]);
        t->kp[b] = 80 + 10 * b;
        t->kd[b] = 3;
        t->tlim[b] = 40;
    }
    t->lo[3 * 2] = -2.0; /* one hinge with stops */
    t->hi[3 * 2] = 2.0;
}

static void chain_targets(sc_skeleton *s, int step, double dt)
{
    double tm = step * dt;
    sc_quat tg[6];
    tg[0] = sc_q_identity();
    for (int b = 1; b < 6; b++) {
        double ph = 0.7 * b, a = 0.6 * sin(2 * SC_PI * 1.5 * tm + ph);
        if (b == 2) tg[b] = sc_q_axis_angle(sc_v3(0, 0, 1), a);
        else if (b == 4) tg[b] = sc_q_axis_angle(sc_v3(0, 1, 0), a);
        else tg[b] = sc_q_exp(sc_v3(0.5 * a, 0.3 * cos(3 * tm + ph), 0.4 * a));
    }
    sc_skeleton_set_targets(s, tg);
}

static void chain_loads(sc_skeleton *s, int step, double dt)
{
    double f[3] = {0, 0, 3 * sin(5 * step * dt)}, p[3] = {0.9, 1.0, 0.2};
    sc_skeleton_add_force_at(s, 3, f, p);
}

/* Steps [from, to); saves into `save` just before stepping `save_at` (loads already applied).
 * With resume set the first step's targets/loads come from a restored snapshot. */
static int chain_run(sc_skeleton *s, int from, int to, double dt, int save_at, double *save, int resume, sc_err *err)
{
    for (int i = from; i < to; i++) {
        if (!(resume && i == from)) {
            chain_targets(s, i, dt);
            chain_loads(s, i, dt);
        }
        if (i == save_at) sc_skeleton_save(s, save);
        int rc = sc_skeleton_step(s, dt, err);
        if (rc) return rc;
    }
    return 0;
}

TEST(skeleton_snapshot_bit_identical)
{
    tmodel t;
    chain_model(&t);
    const double dt = 5e-4;
    sc_err err;
    for (int solver = 0; solver <= 1; solver++) {
        sc_skeleton_opts o;
        sc_skeleton_default_opts(&o);
        o.exact_solver = solver;
        sc_skeleton *s, *other, *fresh;
        ENSURE_OK(sc_skeleton_create(&t.m, &o, &s, &err), &err);
        size_t n = sc_skeleton_state_size(s);
        double *mid = calloc(n, sizeof(double)), *endA = calloc(n, sizeof(double)), *endB = calloc(n, sizeof(double));
        double *endC = calloc(n, sizeof(double)), *endD = calloc(n, sizeof(double));
        ENSURE(mid && endA && endB && endC && endD);
        ENSURE_OK(chain_run(s, 0, 200, dt, 100, mid, 0, &err), &err);
        sc_skeleton_save(s, endA);
        /* another skeleton steps in between and consumes ODE's global random stream */
        ENSURE_OK(sc_skeleton_create(&t.m, &o, &other, &err), &err);
        ENSURE_OK(chain_run(other, 0, 37, dt, -1, NULL, 0, &err), &err);
        /* restore into the same skeleton */
        sc_skeleton_restore(s, mid);
        ENSURE_OK(chain_run(s, 100, 200, dt, -1, NULL, 1, &err), &err);
        sc_skeleton_save(s, endB);
        /* restore into a fresh skeleton */
        ENSURE_OK(sc_skeleton_create(&t.m, &o, &fresh, &err), &err);
        sc_skeleton_restore(fresh, mid);
        ENSURE_OK(chain_run(fresh, 100, 200, dt, -1, NULL, 1, &err), &err);
        sc_skeleton_save(fresh, endC);
        sc_skeleton_free(fresh);
        /* a second uninterrupted run from scratch */
        ENSURE_OK(sc_skeleton_create(&t.m, &o, &fresh, &err), &err);
        ENSURE_OK(chain_run(fresh, 0, 200, dt, -1, NULL, 0, &err), &err);
        sc_skeleton_save(fresh, endD);
        sc_skeleton_free(fresh);
        /* the run must have moved: compare the bones' local rotations to their rest pose */
        sc_quat loc[6];
        sc_skeleton_local_rotations(s, loc);
        double maxang = 0;
        for (int b = 1; b < 6; b++) maxang = fmax(maxang, sc_q_angle_between(loc[b], sc_q_identity()));
        size_t ndiff = 0;
        for (size_t i = 0; i < n; i++) ndiff += mid[i] != endA[i];
        sc_test_report("%s: %zu doubles per snapshot, %zu changed between step 100 and 200, max joint angle %.3f rad; "
                       "restore same/fresh and rerun: memcmp %d/%d, fresh run: memcmp %d",
                       solver ? "exact" : "quickstep", n, ndiff, maxang, memcmp(endA, endB, n * sizeof(double)),
                       memcmp(endA, endC, n * sizeof(double)), memcmp(endA, endD, n * sizeof(double)));
        ENSURE(ndiff > n / 2);
        ENSURE(maxang > 0.1);
        ENSURE(memcmp(endA, endB, n * sizeof(double)) == 0);
        ENSURE(memcmp(endA, endC, n * sizeof(double)) == 0);
        ENSURE(memcmp(endA, endD, n * sizeof(double)) == 0);
        sc_skeleton_free(other);
        sc_skeleton_free(s);
        free(mid);
        free(endA);
        free(endB);
        free(endC);
        free(endD);
    }
}

static double total_mass(const tmodel *t)
{
    double m = 0;
    for (int b = 0; b < t->m.nbones; b++) m += t->mass[b];
    return m;
}

/* Angular momentum about the system's centre of mass; P gets the linear momentum. */
static sc_vec3 com_angular_momentum(const sc_skeleton *s, const tmodel *t, double P[3])
{
    double L[3];
    sc_skeleton_momentum(s, P, L);
    double M = total_mass(t);
    sc_vec3 xc = {0, 0, 0};
    for (int b = 0; b < t->m.nbones; b++) {
        double c[3];
        sc_skeleton_bone_com(s, b, c, NULL);
        xc = sc_v3_axpy(t->mass[b] / M, sc_v3_load(c), xc);
    }
    return sc_v3_sub(sc_v3_load(L), sc_v3_cross(xc, sc_v3_load(P)));
}

TEST(skeleton_momentum_free_flight)
{
    tmodel t;
    chain_model(&t);
    const double dt = 5e-4;
    const int nb = 6;
    sc_err err;
    for (int solver = 0; solver <= 1; solver++) {
        sc_skeleton_opts o;
        sc_skeleton_default_opts(&o);
        o.gravity[1] = 0;
        o.exact_solver = solver;
        sc_skeleton *s;
        ENSURE_OK(sc_skeleton_create(&t.m, &o, &s, &err), &err);
        /* a rigid initial motion consistent with the joints */
        sc_xform pose[6];
        double lv[18], av[18];
        sc_vec3 V = sc_v3(0.3, -0.2, 0.5), W = sc_v3(0.4, 1.1, -0.7);
        for (int b = 0; b < nb; b++) {
            pose[b].q = sc_q_identity();
            pose[b].p = sc_v3_load(t.joint_pos + 3 * b);
            sc_v3_store(lv + 3 * b, sc_v3_add(V, sc_v3_cross(W, pose[b].p)));
            sc_v3_store(av + 3 * b, W);
        }
        sc_skeleton_set_state(s, pose, lv, av);
        double P0[3], P[3];
        sc_vec3 Lc0 = com_angular_momentum(s, &t, P0);
        double maxP = 0, maxL = 0, L0n = sc_v3_norm(Lc0);
        for (int i = 0; i < 2000; i++) {
            chain_targets(s, i, dt);
            ENSURE_OK(sc_skeleton_step(s, dt, &err), &err);
            sc_vec3 Lc = com_angular_momentum(s, &t, P);
            maxP = fmax(maxP, sc_v3_dist(sc_v3_load(P), sc_v3_load(P0)) / sc_v3_norm(sc_v3_load(P0)));
            maxL = fmax(maxL, sc_v3_dist(Lc, Lc0) / L0n);
        }
        sc_quat loc[6];
        sc_skeleton_local_rotations(s, loc);
        double maxang = 0;
        for (int b = 1; b < nb; b++) maxang = fmax(maxang, sc_q_angle_between(loc[b], sc_q_identity()));
        sc_skeleton_free(s);
        sc_test_report("%s, 1 s of PD swinging (max joint angle at end %.2f rad): linear momentum max relative drift "
                       "%.3g, angular momentum about the com max relative drift %.3g (|L| = %.3g kg m^2/s)",
                       solver ? "exact" : "quickstep", maxang, maxP, maxL, L0n);
        ENSURE(maxang > 0.1);
        ENSURE(maxP < 1e-9);
        ENSURE(maxL < 0.05);
    }
}

TEST(skeleton_pose_roundtrip)
{
    tmodel t;
    chain_model(&t);
    sc_err err;
    sc_skeleton_opts o;
    sc_skeleton_default_opts(&o);
    o.gravity[1] = 0;
    sc_skeleton *s;
    ENSURE_OK(sc_skeleton_create(&t.m, &o, &s, &err), &err);
    sc_rng r;
    sc_rng_init(&r, 7, 0, 0);
    sc_xform pose[6], back[6];
    double lv[18], av[18], lv2[18], av2[18];
    double e = 0;
    for (int k = 0; k < 20; k++) {
        for (int b = 0; b < 6; b++) {
            sc_quat q = {sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r)};
            pose[b].q = sc_q_normalize(q);
            pose[b].p = sc_v3(sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r));
            for (int i = 0; i < 3; i++) {
                lv[3 * b + i] = sc_rng_normal(&r);
                av[3 * b + i] = 3 * sc_rng_normal(&r);
            }
        }
        sc_skeleton_set_state(s, pose, lv, av);
        sc_skeleton_get_state(s, back, lv2, av2);
        for (int b = 0; b < 6; b++) {
            e = fmax(e, sc_v3_dist(pose[b].p, back[b].p));
            e = fmax(e, sc_q_angle_between(pose[b].q, back[b].q));
            for (int i = 0; i < 3; i++) e = fmax(e, fmax(fabs(lv[3 * b + i] - lv2[3 * b + i]), fabs(av[3 * b + i] - av2[3 * b + i])));
            /* the com sits at origin + R (com - joint) */
            double c[3], cv[3];
            sc_skeleton_bone_com(s, b, c, cv);
            sc_vec3 cl = sc_v3_sub(sc_v3_load(t.com + 3 * b), sc_v3_load(t.joint_pos + 3 * b));
            sc_vec3 cref = sc_v3_add(pose[b].p, sc_q_rotate(pose[b].q, cl));
            sc_vec3 vref = sc_v3_add(sc_v3_load(lv + 3 * b), sc_v3_cross(sc_v3_load(av + 3 * b), sc_q_rotate(pose[b].q, cl)));
            e = fmax(e, fmax(sc_v3_dist(sc_v3_load(c), cref), sc_v3_dist(sc_v3_load(cv), vref)));
        }
    }
    sc_skeleton_free(s);
    sc_test_report("set/get state round trip (origin vs com offsets): max error %.3g", e);
    ENSURE(e < 1e-12);

    /* force at a point on one free body: dv = h F / m, dw = h I_w^-1 ((p - c) x F) */
    tmodel f;
    tm_init(&f, 1);
    sc_mat3 I = diag3(0.02, 0.05, 0.04);
    tm_bone(&f, 0, -1, SC_JOINT_FREE, sc_v3(0.1, 0.2, 0.3), sc_v3(0.3, 0.1, 0.25), 1.7, I);
    ENSURE_OK(sc_skeleton_create(&f.m, &o, &s, &err), &err);
    sc_xform p0 = {sc_q_normalize((sc_quat){0.9, 0.2, -0.3, 0.1}), sc_v3(1, 2, 3)};
    sc_skeleton_set_state(s, &p0, NULL, NULL);
    double c[3];
    sc_skeleton_bone_com(s, 0, c, NULL);
    sc_vec3 F = sc_v3(3, -1, 2), P = sc_v3(1.2, 1.7, 3.4);
    double fa[3], pa[3];
    sc_v3_store(fa, F);
    sc_v3_store(pa, P);
    sc_skeleton_add_force_at(s, 0, fa, pa);
    const double h = 1e-3;
    ENSURE_OK(sc_skeleton_step(s, h, &err), &err);
    sc_mat3 R = sc_q_to_m3(p0.q), Iw = sc_m3_mul_nt(sc_m3_mul(R, I), R), Iwi;
    ENSURE(sc_m3_inverse(Iw, &Iwi));
    sc_vec3 wref = sc_m3_mulv(Iwi, sc_v3_scale(sc_v3_cross(sc_v3_sub(P, sc_v3_load(c)), F), h));
    sc_vec3 vref = sc_v3_scale(F, h / 1.7);
    double cv[3], w[3];
    sc_skeleton_bone_com(s, 0, NULL, cv);
    sc_skeleton_get_state(s, NULL, NULL, w);
    double ev = sc_v3_dist(sc_v3_load(cv), vref) / sc_v3_norm(vref), ew = sc_v3_dist(sc_v3_load(w), wref) / sc_v3_norm(wref);
    /* a pure torque */
    double tq[3] = {0.5, 0.2, -0.4};
    sc_skeleton_set_state(s, &p0, NULL, NULL);
    sc_skeleton_add_torque(s, 0, tq);
    ENSURE_OK(sc_skeleton_step(s, h, &err), &err);
    sc_skeleton_get_state(s, NULL, NULL, w);
    sc_skeleton_bone_com(s, 0, NULL, cv);
    double et = sc_v3_dist(sc_v3_load(w), sc_m3_mulv(Iwi, sc_v3_scale(sc_v3_load(tq), h))) / (h * 10);
    sc_test_report("force at a point: relative error of dv %.3g, of dw %.3g; pure torque dw %.3g; |v_com| after "
                   "torque %.3g",
                   ev, ew, et, sc_v3_norm(sc_v3_load(cv)));
    ENSURE(ev < 1e-12);
    ENSURE(ew < 1e-12);
    ENSURE(et < 1e-12);
    ENSURE(sc_v3_norm(sc_v3_load(cv)) < 1e-15);

    /* a non-finite load is reported with the bone's name */
    double nanf[3] = {NAN, 0, 0};
    sc_skeleton_add_force_at(s, 0, nanf, pa);
    int rc = sc_skeleton_step(s, h, &err);
    ENSURE(rc == SC_ENUMERIC);
    ENSURE(strstr(err.msg, "bone0") != NULL);
    /* so is a diverged velocity, before ODE would overflow */
    double fast[3] = {0, 1e12, 0};
    sc_skeleton_set_state(s, &p0, NULL, fast);
    rc = sc_skeleton_step(s, h, &err);
    sc_skeleton_free(s);
    ENSURE(rc == SC_ENUMERIC);
    ENSURE(strstr(err.msg, "diverged") != NULL);
}

TEST(skeleton_ball_pd_reaches_target)
{
    /* root rotated and held (kinematic), one ball bone with spherical inertia about its joint */
    tmodel t;
    tm_init(&t, 2);
    tm_bone(&t, 0, -1, SC_JOINT_FREE, sc_v3(0, 0, 0), sc_v3(0, 0, 0), 1, diag3(0.1, 0.1, 0.1));
    const double i0 = 0.01, kp = 40, kd = 2, h = 5e-4;
    tm_bone(&t, 1, 0, SC_JOINT_BALL, sc_v3(0.2, 0, 0), sc_v3(0.2, 0, 0), 1.5, diag3(i0, i0, i0));
    t.kp[1] = kp;
    t.kd[1] = kd;
    sc_skeleton_opts o;
    sc_skeleton_default_opts(&o);
    o.gravity[1] = 0;
    o.fix_root = 1;
    o.exact_solver = 1;
    sc_err err;
    sc_skeleton *s;
    ENSURE_OK(sc_skeleton_create(&t.m, &o, &s, &err), &err);
    sc_quat qr = sc_q_axis_angle(sc_v3_normalize(sc_v3(1, 1, 0)), 0.8);
    sc_xform pose[2] = {{qr, sc_v3(0, 0, 0)}, {qr, sc_q_rotate(qr, sc_v3(0.2, 0, 0))}};
    sc_skeleton_set_state(s, pose, NULL, NULL);
    sc_quat tg[2] = {sc_q_identity(), sc_q_axis_angle(sc_v3_normalize(sc_v3(0.3, -1, 0.5)), 1.0)};
    sc_skeleton_set_targets(s, tg);
    /* first step from rest: the servo torque is kp e / (1 + h kd / I) along the error, and I dw/h equals it */
    ENSURE_OK(sc_skeleton_step(s, h, &err), &err);
    double tau[6], w[6];
    sc_skeleton_motor_torques(s, tau);
    sc_skeleton_get_state(s, NULL, NULL, w);
    sc_vec3 ew = sc_q_rotate(qr, sc_q_log(tg[1])); /* error in world: parent rotation times local log */
    sc_vec3 tref = sc_v3_scale(ew, kp / (1 + h * kd / i0));
    double e1 = sc_v3_dist(sc_v3_load(tau + 3), tref) / sc_v3_norm(tref);
    double e2 = sc_v3_dist(sc_v3_scale(sc_v3_load(w + 3), i0 / h), tref) / sc_v3_norm(tref);
    for (int n = 1; n < 4000; n++) ENSURE_OK(sc_skeleton_step(s, h, &err), &err);
    sc_quat loc[2];
    sc_skeleton_local_rotations(s, loc);
    double ang = sc_q_angle_between(loc[1], tg[1]);
    sc_skeleton_free(s);
    sc_test_report("ball servo: first-step torque relative error %.3g, I dw/h vs torque %.3g; angle to target "
                   "after 2 s %.3g rad",
                   e1, e2, ang);
    ENSURE(e1 < 1e-9);
    ENSURE(e2 < 1e-9);
    ENSURE(ang < 1e-4);
}

TEST(skeleton_rejects_bad_models)
{
    tmodel t;
    chain_model(&t);
    sc_err err;
    sc_skeleton *s;
    t.parent[3] = 4;
    ENSURE(sc_skeleton_create(&t.m, NULL, &s, &err) == SC_EINPUT && s == NULL);
    ENSURE(strstr(err.msg, "bone3") != NULL);
    chain_model(&t);
    t.mass[2] = 0;
    ENSURE(sc_skeleton_create(&t.m, NULL, &s, &err) == SC_EINPUT);
    ENSURE(strstr(err.msg, "bone2") != NULL);
    chain_model(&t);
    t.inertia[9 * 4 + 0] = 1.0; /* 1.0 > 0.0144 + 0.0132: violates the triangle inequality */
    ENSURE(sc_skeleton_create(&t.m, NULL, &s, &err) == SC_EINPUT);
    chain_model(&t);
    t.type[0] = SC_JOINT_BALL;
    ENSURE(sc_skeleton_create(&t.m, NULL, &s, &err) == SC_EINPUT);
}

TEST(skeleton_hinge_stop)
{
    /* target 1.2 rad beyond a 0.5 rad stop: the hinge rests at the stop, pushed by the servo */
    const double I = 0.02, h = 5e-4;
    tmodel t;
    hinge_model(&t, I, 100, 5, 0);
    t.lo[3] = -0.5;
    t.hi[3] = 0.5;
    sc_skeleton_opts o;
    sc_skeleton_default_opts(&o);
    o.gravity[1] = 0;
    o.fix_root = 1;
    sc_err err;
    sc_skeleton *s;
    ENSURE_OK(sc_skeleton_create(&t.m, &o, &s, &err), &err);
    set_hinge_target(s, 1.2);
    double qmax = 0;
    for (int n = 0; n < 4000; n++) {
        ENSURE_OK(sc_skeleton_step(s, h, &err), &err);
        qmax = fmax(qmax, hinge_angle(s));
    }
    double qend = hinge_angle(s), tau[6];
    sc_skeleton_motor_torques(s, tau);
    sc_skeleton_free(s);
    double tax = sc_v3_dot(sc_v3_load(tau + 3), g_axis);
    sc_test_report("hinge stop at 0.5 rad, target 1.2: max angle %.4f, final %.6f rad, final axial joint torque %.3g N m", qmax, qend, tax);
    ENSURE(qmax < 0.55);
    ENSURE_NEAR(qend, 0.5, 1e-3);
    /* at rest against the stop the servo pushes with kp (q~ - q), not with FMax */
    ENSURE_NEAR(tax, 100 * (1.2 - qend), 1e-6);
}

/* The swinging chain stepped side by side under two option sets for `steps` steps of 0.5 ms:
 * the largest state difference (relative), servo torque difference and servo torque of s[0]. */
typedef struct {
    double state, tau, tau_max;
} chain_diff;

static int chain_side_by_side(const tmodel *t, const sc_skeleton_opts o[2], int steps, sc_skeleton *s[2], chain_diff *d)
{
    const double dt = 5e-4;
    sc_err err;
    s[0] = s[1] = NULL;
    for (int k = 0; k < 2; k++) CHECK(sc_skeleton_create(&t->m, &o[k], &s[k], &err) == 0, "%s", err.msg);
    size_t n = sc_skeleton_state_size(s[0]);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    *d = (chain_diff){0, 0, 0};
    int ok = 1;
    for (int i = 0; i < steps && ok; i++) {
        for (int k = 0; k < 2 && ok; k++) {
            chain_targets(s[k], i, dt);
            chain_loads(s[k], i, dt);
            ok = sc_skeleton_step(s[k], dt, &err) == 0;
        }
        sc_skeleton_save(s[0], a);
        sc_skeleton_save(s[1], b);
        for (size_t j = 0; j < n; j++) d->state = fmax(d->state, fabs(a[j] - b[j]) / fmax(1, fabs(a[j])));
        double ta[18], tb[18];
        sc_skeleton_motor_torques(s[0], ta);
        sc_skeleton_motor_torques(s[1], tb);
        for (int j = 3; j < 18; j += 3) {
            d->tau_max = fmax(d->tau_max, sc_v3_norm(sc_v3_load(ta + j)));
            d->tau = fmax(d->tau, sc_v3_norm(sc_v3_sub(sc_v3_load(ta + j), sc_v3_load(tb + j))));
        }
    }
    free(a);
    free(b);
    CHECK(ok, "step: %s", err.msg);
    return 1;
}

TEST(skeleton_speculative_exact_matches_bounded)
{
    /* Exact steps that leave the torque bound off servos far below it (redone bounded when one
     * exceeds it) follow the always-bounded solver to rounding, on a swinging chain whose
     * servos saturate (targets kp * 0.6 rad > the 40 N m limit) part of the time. */
    tmodel t;
    chain_model(&t);
    const int steps = 600;
    sc_skeleton_opts o[2];
    for (int spec = 0; spec <= 1; spec++) {
        sc_skeleton_default_opts(&o[spec]);
        o[spec].exact_solver = 1;
        o[spec].speculative = spec;
    }
    sc_skeleton *s[2];
    chain_diff d;
    int ran = chain_side_by_side(&t, o, steps, s, &d);
    long redone = s[1] ? sc_skeleton_redone_steps(s[1]) : 0, redone0 = s[0] ? sc_skeleton_redone_steps(s[0]) : 0;
    sc_skeleton_free(s[0]);
    sc_skeleton_free(s[1]);
    ENSURE(ran);
    sc_test_report("%d exact steps: speculative vs always bounded: max state difference %.2e (relative), largest servo torque "
                   "%.1f N m (limit 40), %ld steps redone bounded",
                   steps, d.state, d.tau_max, redone);
    ENSURE(d.tau_max > 39.9); /* the bound was reached */
    ENSURE(redone > 0 && redone < steps);
    ENSURE(d.state < 1e-9);
    ENSURE(redone0 == 0);
}

TEST(skeleton_tree_solver_matches_ode_dense_lcp)
{
    /* The linear-time tree solve of the exact step's rows gives ODE's own dense solution to
     * rounding: the swinging chain (ball joints with 3-axis servos, a hinge with its own motor,
     * a hinge with stops and a 1-axis amotor, an external load, saturating servos), stepped by
     * both for 600 steps from the same state. */
    tmodel t;
    chain_model(&t);
    const int steps = 600;
    sc_skeleton_opts o[2];
    for (int tree = 0; tree <= 1; tree++) {
        sc_skeleton_default_opts(&o[tree]);
        o[tree].tree_solver = tree;
    }
    sc_skeleton *s[2];
    chain_diff d;
    int ran = chain_side_by_side(&t, o, steps, s, &d);
    long tree_steps = s[1] ? sc_skeleton_tree_steps(s[1]) : 0, redone = s[1] ? sc_skeleton_redone_steps(s[1]) : 0;
    long dense_tree_steps = s[0] ? sc_skeleton_tree_steps(s[0]) : -1;
    sc_skeleton_free(s[0]);
    sc_skeleton_free(s[1]);
    ENSURE(ran);
    sc_test_report("%d exact steps: tree solver vs ODE's dense LCP: max state difference %.2e (relative), servo torques "
                   "within %.2e N m (largest %.1f, limit 40); %ld steps by the tree solver, %ld redone bounded by ODE",
                   steps, d.state, d.tau, d.tau_max, tree_steps, redone);
    ENSURE(d.tau_max > 39.9);
    ENSURE(tree_steps > steps / 2 && tree_steps < steps); /* both paths taken */
    ENSURE(dense_tree_steps == 0);
    ENSURE(d.state < 1e-9);
    ENSURE(d.tau < 1e-6);
}

/* ---- ODE's own errors (issue 14, item 4): never an abort -------------------------------- */
#include <sys/wait.h>
#include <unistd.h>
#include "core/cleanup.h"

static int g_fatal_pipe = -1;
static void fatal_to_pipe(int code, const char *msg)
{
    (void)!write(g_fatal_pipe, msg, strlen(msg));
    _exit(code);
}

/* Runs fn in a child (an abort there must not take the suite down); returns its exit status
 * (128 + signal when killed) and what it reported into msg. */
static int in_child(int (*fn)(char *msg, size_t n), char *msg, size_t n)
{
    int fds[2];
    if (pipe(fds)) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        g_fatal_pipe = fds[1];
        char local[512] = "";
        int code = fn(local, sizeof local);
        (void)!write(fds[1], local, strlen(local));
        _exit(code);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t k;
    while (got + 1 < n && (k = read(fds[0], msg + got, n - 1 - got)) > 0) got += (size_t)k;
    msg[got] = 0;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A NaN position reaches ODE's step (nothing checks positions before it): ODE's internal
 * assertion inside dWorldStep becomes SC_ENUMERIC and the skeleton refuses further steps. */
static int nan_inside_step(char *msg, size_t n)
{
    tmodel t;
    hinge_model(&t, 0.05, 50, 2, 100);
    sc_skeleton *s;
    sc_err err;
    if (sc_skeleton_create(&t.m, NULL, &s, &err)) return 90;
    sc_xform pose[TB_MAX];
    sc_skeleton_get_state(s, pose, NULL, NULL);
    pose[1].p.x = NAN;
    sc_skeleton_set_state(s, pose, NULL, NULL);
    int rc = sc_skeleton_step(s, 5e-4, &err);
    snprintf(msg, n, "%s", err.msg);
    if (rc != SC_ENUMERIC) return 91;
    rc = sc_skeleton_step(s, 5e-4, &err);
    if (rc != SC_ENUMERIC || !strstr(err.msg, "unusable")) return 92;
    sc_skeleton_free(s);
    return rc;
}

/* A damaged snapshot (a NaN rotation) reaches ODE outside any step (restore cannot return
 * an error): ODE's assertion ends the process through sc_fatal with exit code 4 (the CLI
 * prints it as "tool: error: ..." after removing temporary files). */
static int nan_outside_step(char *msg, size_t n)
{
    sc_set_fatal_handler(fatal_to_pipe);
    tmodel t;
    hinge_model(&t, 0.05, 50, 2, 100);
    sc_skeleton *s;
    sc_err err;
    if (sc_skeleton_create(&t.m, NULL, &s, &err)) {
        snprintf(msg, n, "%s", err.msg);
        return 93;
    }
    double *snap = malloc(sc_skeleton_state_size(s) * sizeof *snap);
    sc_skeleton_save(s, snap);
    for (size_t i = 0; i < sc_skeleton_state_size(s); i++) snap[i] = NAN;
    sc_skeleton_restore(s, snap);
    free(snap);
    sc_skeleton_free(s);
    return 94;
}

TEST(skeleton_ode_errors_become_numerical_failures)
{
    char msg[1024];
    int rc = in_child(nan_inside_step, msg, sizeof msg);
    sc_test_report("NaN position inside a step: child exit %d: %s", rc, msg);
    ENSURE_MSG(rc == SC_ENUMERIC && strstr(msg, "ODE"), "exit %d (134 = abort): %s", rc, msg);
    rc = in_child(nan_outside_step, msg, sizeof msg);
    sc_test_report("NaN rotation outside a step: child exit %d: %s", rc, msg);
    ENSURE_MSG(rc == SC_ENUMERIC && strstr(msg, "ODE error"), "exit %d (134 = abort): %s", rc, msg);
}

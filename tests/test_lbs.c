/* Linear blend skinning ([L13] eq. 12-13), its velocity and the skinning Jacobian transpose (eq. 18). */
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "core/rng.h"
#include "skin/lbs.h"
#include "test.h"

enum { NN = 200, NB = 7, K = 4 };

typedef struct rig {
    double x[3 * NN], joint[3 * NB], w[NN * K];
    int bone[NN * K];
    sc_xform pose[NB];
    double v[3 * NB], om[3 * NB];
} rig;

static sc_quat rand_q(sc_rng *r)
{
    sc_quat q = {sc_rng_normal(r), sc_rng_normal(r), sc_rng_normal(r), sc_rng_normal(r)};
    return sc_q_normalize(q);
}

/* Random rest points, joints and top-k weights (some slots unused, rows sum to 1); random pose
 * and bone velocities. */
static void make_rig(rig *g, unsigned seed)
{
    sc_rng r;
    sc_rng_init(&r, seed, 0, 0);
    for (int i = 0; i < 3 * NN; i++) g->x[i] = 2 * sc_rng_uniform(&r) - 1;
    for (int i = 0; i < 3 * NB; i++) {
        g->joint[i] = sc_rng_uniform(&r) - 0.5;
        g->v[i] = sc_rng_normal(&r);
        g->om[i] = 2 * sc_rng_normal(&r);
    }
    for (int i = 0; i < NN; i++) {
        int used = 1 + (int)(sc_rng_uniform(&r) * K); /* 1..K slots */
        double sum = 0;
        for (int s = 0; s < K; s++) {
            int b = (i + 2 * s) % NB; /* distinct bones per node */
            g->bone[i * K + s] = s < used ? b : -1;
            g->w[i * K + s] = s < used ? 0.05 + sc_rng_uniform(&r) : 0;
            sum += g->w[i * K + s];
        }
        for (int s = 0; s < K; s++) g->w[i * K + s] /= sum;
    }
    for (int j = 0; j < NB; j++) {
        g->pose[j].q = rand_q(&r);
        g->pose[j].p = sc_v3(sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r));
    }
}

TEST(lbs_rigid_motion_exact)
{
    static rig g;
    make_rig(&g, 1);
    double out[3 * NN];
    /* rest pose: q = identity, p = joint reproduces the rest points */
    for (int j = 0; j < NB; j++) g.pose[j].q = sc_q_identity(), g.pose[j].p = sc_v3_load(g.joint + 3 * j);
    sc_lbs_positions(NN, g.x, K, g.bone, g.w, g.joint, g.pose, out);
    double err_rest = 0;
    for (int i = 0; i < 3 * NN; i++) err_rest = fmax(err_rest, fabs(out[i] - g.x[i]));
    ENSURE(err_rest < 1e-14);
    /* the same rigid motion (R, t) of every bone: origin J_j goes to R J_j + t */
    sc_rng r;
    sc_rng_init(&r, 5, 0, 0);
    double err = 0;
    for (int trial = 0; trial < 10; trial++) {
        sc_quat q = rand_q(&r);
        sc_vec3 t = sc_v3(3 * sc_rng_normal(&r), 3 * sc_rng_normal(&r), 3 * sc_rng_normal(&r));
        for (int j = 0; j < NB; j++) {
            g.pose[j].q = q;
            g.pose[j].p = sc_v3_add(sc_q_rotate(q, sc_v3_load(g.joint + 3 * j)), t);
        }
        sc_lbs_positions(NN, g.x, K, g.bone, g.w, g.joint, g.pose, out);
        for (int i = 0; i < NN; i++) {
            sc_vec3 want = sc_v3_add(sc_q_rotate(q, sc_v3_load(g.x + 3 * i)), t);
            err = fmax(err, sc_v3_dist(sc_v3_load(out + 3 * i), want));
        }
    }
    sc_test_report("rest pose error %.1e, rigid motion max error %.1e m (|t| ~ 3 m)", err_rest, err);
    ENSURE(err < 1e-12);
    /* a node weighted by one bone only moves rigidly with it */
    make_rig(&g, 2);
    g.bone[0] = 3, g.w[0] = 1;
    for (int s = 1; s < K; s++) g.bone[s] = -1, g.w[s] = 0;
    sc_lbs_positions(NN, g.x, K, g.bone, g.w, g.joint, g.pose, out);
    sc_vec3 want = sc_xf_apply(g.pose[3], sc_v3_sub(sc_v3_load(g.x), sc_v3_load(g.joint + 9)));
    ENSURE(sc_v3_dist(sc_v3_load(out), want) < 1e-14);
}

/* positions at time t of bones moving with (v_j, omega_j) from the current pose */
static void advance(const rig *g, double t, sc_xform *pose)
{
    for (int j = 0; j < NB; j++) {
        pose[j].q = sc_q_mul(sc_q_exp(sc_v3_scale(sc_v3_load(g->om + 3 * j), t)), g->pose[j].q);
        pose[j].p = sc_v3_axpy(t, sc_v3_load(g->v + 3 * j), g->pose[j].p);
    }
}

static double fd_error(const rig *g, double h, const double *vel)
{
    sc_xform pp[NB], pm[NB];
    double xp[3 * NN], xm[3 * NN], e = 0;
    advance(g, h, pp);
    advance(g, -h, pm);
    sc_lbs_positions(NN, g->x, K, g->bone, g->w, g->joint, pp, xp);
    sc_lbs_positions(NN, g->x, K, g->bone, g->w, g->joint, pm, xm);
    for (int i = 0; i < 3 * NN; i++) e = fmax(e, fabs((xp[i] - xm[i]) / (2 * h) - vel[i]));
    return e;
}

TEST(lbs_velocity_matches_finite_differences)
{
    static rig g;
    double worst_ratio = 1e300, e1 = 0, e2 = 0, vmax = 0;
    for (unsigned seed = 10; seed < 15; seed++) {
        make_rig(&g, seed);
        double vel[3 * NN];
        sc_lbs_velocities(NN, g.x, K, g.bone, g.w, g.joint, g.pose, g.v, g.om, vel);
        for (int i = 0; i < 3 * NN; i++) vmax = fmax(vmax, fabs(vel[i]));
        e1 = fd_error(&g, 1e-3, vel);
        e2 = fd_error(&g, 5e-4, vel);
        ENSURE(e1 < 1e-4 * vmax);
        worst_ratio = fmin(worst_ratio, e1 / e2);
    }
    sc_test_report("central difference error h=1e-3: %.2e, h=5e-4: %.2e (|v| up to %.1f m/s); min ratio %.2f "
                   "(O(h^2): 4)",
                   e1, e2, vmax, worst_ratio);
    ENSURE(worst_ratio > 3.5 && worst_ratio < 4.5);
}

TEST(lbs_jacobian_transpose_is_adjoint)
{
    static rig g;
    sc_rng r;
    sc_rng_init(&r, 21, 0, 0);
    double worst = 0;
    for (unsigned seed = 30; seed < 40; seed++) {
        make_rig(&g, seed);
        double vel[3 * NN], f[3 * NN], bf[3 * NB] = {0}, bt[3 * NB] = {0};
        for (int i = 0; i < 3 * NN; i++) f[i] = sc_rng_normal(&r);
        sc_lbs_velocities(NN, g.x, K, g.bone, g.w, g.joint, g.pose, g.v, g.om, vel);
        sc_lbs_jacobian_transpose(NN, g.x, K, g.bone, g.w, g.joint, g.pose, f, bf, bt);
        double lhs = 0, rhs = 0, scale = 0;
        for (int i = 0; i < 3 * NN; i++) lhs += f[i] * vel[i], scale += fabs(f[i] * vel[i]);
        for (int i = 0; i < 3 * NB; i++) rhs += bf[i] * g.v[i] + bt[i] * g.om[i];
        worst = fmax(worst, fabs(lhs - rhs) / scale);
        /* accumulation: a second call adds the same amounts */
        double bf2[3 * NB], bt2[3 * NB];
        memcpy(bf2, bf, sizeof bf), memcpy(bt2, bt, sizeof bt);
        sc_lbs_jacobian_transpose(NN, g.x, K, g.bone, g.w, g.joint, g.pose, f, bf2, bt2);
        for (int i = 0; i < 3 * NB; i++) ENSURE_NEAR(bf2[i], 2 * bf[i], 1e-12 * (1 + fabs(bf[i])));
    }
    /* total force: with weights summing to 1 the bones receive the full applied force */
    sc_test_report("adjoint identity max relative error %.1e", worst);
    ENSURE(worst < 1e-12);
    make_rig(&g, 3);
    double f[3 * NN], bf[3 * NB] = {0}, bt[3 * NB] = {0}, sum[3] = {0}, got[3] = {0};
    for (int i = 0; i < 3 * NN; i++) f[i] = sc_rng_normal(&r), sum[i % 3] += f[i];
    sc_lbs_jacobian_transpose(NN, g.x, K, g.bone, g.w, g.joint, g.pose, f, bf, bt);
    for (int i = 0; i < 3 * NB; i++) got[i % 3] += bf[i];
    for (int a = 0; a < 3; a++) ENSURE_NEAR(got[a], sum[a], 1e-12 * NN);
}

TEST(lbs_fast_form_matches_reference)
{
    /* random weights, poses and velocities: the per-step form equals the reference functions */
    enum { N = 200, SLOTS = 3, BONES = 5 };
    sc_rng r;
    sc_rng_init(&r, 77, 0, 0);
    double X[3 * N], J[3 * BONES], w[N * SLOTS], lv[3 * BONES], av[3 * BONES], f[3 * N];
    int bone[N * SLOTS];
    sc_xform pose[BONES];
    for (int i = 0; i < 3 * N; i++) {
        X[i] = sc_rng_normal(&r);
        f[i] = sc_rng_normal(&r);
    }
    for (int j = 0; j < BONES; j++) {
        for (int d = 0; d < 3; d++) {
            J[3 * j + d] = sc_rng_normal(&r);
            lv[3 * j + d] = sc_rng_normal(&r);
            av[3 * j + d] = sc_rng_normal(&r);
        }
        sc_quat q = {sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r)};
        pose[j].q = sc_q_normalize(q);
        pose[j].p = sc_v3(sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r));
    }
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int k = 0; k < SLOTS; k++) {
            bone[i * SLOTS + k] = (i + k) % BONES;
            w[i * SLOTS + k] = sc_rng_uniform(&r);
            s += w[i * SLOTS + k];
        }
        for (int k = 0; k < SLOTS; k++) w[i * SLOTS + k] /= s;
        if (i % 7 == 0) {
            bone[i * SLOTS + 2] = -1;
            w[i * SLOTS + 2] = 0;
        }
    }
    double p0[3 * N], v0[3 * N], p1[3 * N], v1[3 * N], arm[3 * N * SLOTS];
    double bf0[3 * BONES] = {0}, bt0[3 * BONES] = {0}, bf1[3 * BONES] = {0}, bt1[3 * BONES] = {0};
    sc_lbs_positions(N, X, SLOTS, bone, w, J, pose, p0);
    sc_lbs_velocities(N, X, SLOTS, bone, w, J, pose, lv, av, v0);
    sc_lbs_jacobian_transpose(N, X, SLOTS, bone, w, J, pose, f, bf0, bt0);
    sc_lbs_eval(N, X, SLOTS, bone, w, J, BONES, pose, lv, av, p1, v1, arm);
    sc_lbs_jacobian_transpose_arms(N, SLOTS, bone, w, arm, f, bf1, bt1);
    double e = 0;
    for (int i = 0; i < 3 * N; i++) e = fmax(e, fmax(fabs(p0[i] - p1[i]), fabs(v0[i] - v1[i])));
    for (int i = 0; i < 3 * BONES; i++) e = fmax(e, fmax(fabs(bf0[i] - bf1[i]), fabs(bt0[i] - bt1[i])));
    sc_test_report("fast LBS vs reference: max difference %.2e", e);
    ENSURE(e < 1e-12);
}

TEST(lbs_plan_matches_eval)
{
    /* the bone-major plan of the simulation step gives sc_lbs_eval's bits, and the reference's
     * Jacobian transpose to rounding */
    enum { N = 300, SLOTS = 4, BONES = 7 };
    sc_rng r;
    sc_rng_init(&r, 78, 0, 0);
    double X[3 * N], J[3 * BONES], w[N * SLOTS], lv[3 * BONES], av[3 * BONES], f[3 * N];
    int bone[N * SLOTS];
    sc_xform pose[BONES];
    for (int i = 0; i < 3 * N; i++) {
        X[i] = sc_rng_normal(&r);
        f[i] = sc_rng_normal(&r);
    }
    for (int j = 0; j < BONES; j++) {
        for (int d = 0; d < 3; d++) {
            J[3 * j + d] = sc_rng_normal(&r);
            lv[3 * j + d] = sc_rng_normal(&r);
            av[3 * j + d] = sc_rng_normal(&r);
        }
        sc_quat q = {sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r)};
        pose[j].q = sc_q_normalize(q);
        pose[j].p = sc_v3(sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r));
    }
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int k = 0; k < SLOTS; k++) {
            bone[i * SLOTS + k] = (3 * i + 2 * k) % BONES;
            w[i * SLOTS + k] = sc_rng_uniform(&r);
            s += w[i * SLOTS + k];
        }
        for (int k = 0; k < SLOTS; k++) w[i * SLOTS + k] /= s;
        if (i % 5 == 0) {
            bone[i * SLOTS + 3] = -1;
            w[i * SLOTS + 3] = 0;
        }
    }
    double p0[3 * N], v0[3 * N], p1[3 * N], v1[3 * N], arm[3 * N * SLOTS];
    double bf0[3 * BONES] = {0}, bt0[3 * BONES] = {0}, bf1[3 * BONES] = {0}, bt1[3 * BONES] = {0};
    sc_lbs_eval(N, X, SLOTS, bone, w, J, BONES, pose, lv, av, p0, v0, arm);
    sc_lbs_jacobian_transpose(N, X, SLOTS, bone, w, J, pose, f, bf0, bt0);
    sc_lbs_plan plan;
    sc_err err;
    ENSURE_OK(sc_lbs_plan_init(&plan, N, X, SLOTS, bone, w, J, BONES, &err), &err);
    ENSURE(plan.npairs == N * SLOTS - (N + 4) / 5);
    sc_lbs_plan_eval(&plan, pose, lv, av, p1, v1);
    sc_lbs_plan_jacobian_transpose(&plan, f, bf1, bt1);
    double e = 0, scale = 0;
    for (int i = 0; i < 3 * BONES; i++) {
        e = fmax(e, fmax(fabs(bf0[i] - bf1[i]), fabs(bt0[i] - bt1[i])));
        scale = fmax(scale, fmax(fabs(bf0[i]), fabs(bt0[i])));
    }
    sc_test_report("skinning plan: positions and velocities bit-identical to sc_lbs_eval: %s; J^T vs reference %.2e of %.3g",
                   !memcmp(p0, p1, sizeof p0) && !memcmp(v0, v1, sizeof v0) ? "yes" : "no", e, scale);
    ENSURE(!memcmp(p0, p1, sizeof p0) && !memcmp(v0, v1, sizeof v0));
    ENSURE(e < 1e-13 * scale);
    sc_lbs_plan_free(&plan);
}

#include <stdint.h>
#include <string.h>
#include "core/arena.h"
#include "core/linalg.h"
#include "core/mathx.h"
#include "core/rng.h"
#include "core/status.h"
#include "test.h"

static double m3_maxdiff(sc_mat3 a, sc_mat3 b)
{
    double d = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) d = fmax(d, fabs(a.m[i][j] - b.m[i][j]));
    return d;
}

static sc_mat3 random_m3(sc_rng *r, double scale)
{
    sc_mat3 a;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] = scale * (2 * sc_rng_uniform(r) - 1);
    return a;
}

static sc_quat random_q(sc_rng *r)
{
    sc_quat q = {sc_rng_normal(r), sc_rng_normal(r), sc_rng_normal(r), sc_rng_normal(r)};
    return sc_q_normalize(q);
}

TEST(core_vec3_mat3_basics)
{
    sc_vec3 a = sc_v3(1, 2, 3), b = sc_v3(-2, 0.5, 4);
    ENSURE_NEAR(sc_v3_dot(sc_v3_cross(a, b), a), 0, 1e-15);
    ENSURE_NEAR(sc_v3_dot(sc_v3_cross(a, b), b), 0, 1e-15);
    sc_rng r;
    sc_rng_init(&r, 1, 0, 0);
    for (int k = 0; k < 100; k++) {
        sc_mat3 m = random_m3(&r, 2), inv;
        ENSURE(sc_m3_inverse(m, &inv));
        ENSURE(m3_maxdiff(sc_m3_mul(m, inv), sc_m3_identity()) < 1e-9);
        sc_mat3 n = random_m3(&r, 1);
        ENSURE_NEAR(sc_m3_det(sc_m3_mul(m, n)), sc_m3_det(m) * sc_m3_det(n), 1e-12);
    }
    sc_mat3 sing = sc_m3_from_cols(a, b, sc_v3_add(a, b)), out;
    ENSURE(!sc_m3_inverse(sing, &out));
    ENSURE_NEAR(sc_v3_norm(sc_v3_sub(sc_m3_mulv(sc_m3_skew(a), b), sc_v3_cross(a, b))), 0, 1e-15);
}

TEST(core_quaternion_roundtrips)
{
    sc_rng r;
    sc_rng_init(&r, 2, 0, 0);
    for (int k = 0; k < 200; k++) {
        sc_quat q = random_q(&r), p = random_q(&r);
        sc_vec3 v = sc_v3(sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r));
        /* rotate == matrix */
        sc_vec3 a = sc_q_rotate(q, v), b = sc_m3_mulv(sc_q_to_m3(q), v);
        ENSURE(sc_v3_dist(a, b) < 1e-12);
        /* matrix -> quat -> matrix */
        ENSURE(m3_maxdiff(sc_q_to_m3(sc_q_from_m3(sc_q_to_m3(q))), sc_q_to_m3(q)) < 1e-12);
        /* product composes */
        ENSURE(sc_v3_dist(sc_q_rotate(sc_q_mul(q, p), v), sc_q_rotate(q, sc_q_rotate(p, v))) < 1e-12);
        /* log/exp */
        sc_vec3 w = sc_q_log(q);
        ENSURE(sc_v3_norm(w) <= SC_PI + 1e-12);
        ENSURE(sc_q_angle_between(sc_q_exp(w), q) < 1e-9);
        /* slerp endpoints and midpoint angle */
        ENSURE(sc_q_angle_between(sc_q_slerp(q, p, 0), q) < 1e-9);
        ENSURE(sc_q_angle_between(sc_q_slerp(q, p, 1), p) < 1e-9);
        ENSURE_NEAR(sc_q_angle_between(sc_q_slerp(q, p, 0.5), q), 0.5 * sc_q_angle_between(q, p), 1e-9);
    }
    /* Euler ZYX: R = Rz Ry Rx */
    double deg[3] = {30, -20, 45};
    sc_quat e = sc_q_from_euler_deg("ZYX", deg);
    sc_quat ref = sc_q_mul(sc_q_axis_angle(sc_v3(0, 0, 1), 30 * SC_PI / 180),
                           sc_q_mul(sc_q_axis_angle(sc_v3(0, 1, 0), -20 * SC_PI / 180), sc_q_axis_angle(sc_v3(1, 0, 0), 45 * SC_PI / 180)));
    ENSURE(sc_q_angle_between(e, ref) < 1e-12);
}

TEST(core_rigid_transforms)
{
    sc_rng r;
    sc_rng_init(&r, 3, 0, 0);
    for (int k = 0; k < 100; k++) {
        sc_xform a = {random_q(&r), sc_v3(sc_rng_normal(&r), 1, 2)};
        sc_xform b = {random_q(&r), sc_v3(-1, sc_rng_normal(&r), 0.5)};
        sc_vec3 v = sc_v3(0.3, -0.7, 1.1);
        ENSURE(sc_v3_dist(sc_xf_apply(sc_xf_mul(a, b), v), sc_xf_apply(a, sc_xf_apply(b, v))) < 1e-12);
        ENSURE(sc_v3_dist(sc_xf_apply(sc_xf_inverse(a), sc_xf_apply(a, v)), v) < 1e-12);
    }
}

TEST(core_polar_decomposition)
{
    sc_rng r;
    sc_rng_init(&r, 4, 0, 0);
    for (int k = 0; k < 500; k++) {
        /* F = R S with known S (sometimes inverted: one negative stretch) */
        sc_quat q = random_q(&r);
        double s0 = 0.5 + sc_rng_uniform(&r), s1 = 0.5 + sc_rng_uniform(&r), s2 = 0.5 + sc_rng_uniform(&r);
        if (k % 5 == 0) s2 = -s2;
        sc_mat3 v = sc_q_to_m3(random_q(&r));
        sc_mat3 d = sc_m3_zero();
        d.m[0][0] = s0;
        d.m[1][1] = s1;
        d.m[2][2] = s2;
        sc_mat3 sym = sc_m3_mul(v, sc_m3_mul_nt(d, v));
        sc_mat3 f = sc_m3_mul(sc_q_to_m3(q), sym), rr, ss;
        sc_polar(f, &rr, &ss);
        ENSURE_NEAR(sc_m3_det(rr), 1, 1e-12);
        ENSURE(m3_maxdiff(sc_m3_mul_tn(rr, rr), sc_m3_identity()) < 1e-12);
        ENSURE(m3_maxdiff(sc_m3_mul(rr, ss), f) < 1e-10);
        ENSURE(m3_maxdiff(ss, sc_m3_transpose(ss)) < 1e-12);
        if (s2 > 0) ENSURE(m3_maxdiff(rr, sc_q_to_m3(q)) < 1e-9);
        /* warm start from a nearby rotation converges to the same R for non-inverted F */
        if (s2 > 0) {
            sc_quat w = sc_q_mul(sc_q_axis_angle(sc_v3(1, 1, 0), 0.2), q);
            int it = sc_polar_rotation_warm(f, &w, 100, 1e-13);
            ENSURE(it < 100);
            ENSURE(m3_maxdiff(sc_q_to_m3(w), rr) < 1e-9);
        }
    }
    /* degenerate: flat element (rank 2) and a point (rank 0) still give rotations */
    sc_mat3 flat = sc_m3_identity(), rr, ss;
    flat.m[2][2] = 0;
    ENSURE(!sc_polar(flat, &rr, &ss));
    ENSURE_NEAR(sc_m3_det(rr), 1, 1e-12);
    ENSURE(m3_maxdiff(sc_m3_mul(rr, ss), flat) < 1e-12);
    sc_polar(sc_m3_zero(), &rr, &ss);
    ENSURE_NEAR(sc_m3_det(rr), 1, 1e-12);
    sc_quat w = sc_q_identity();
    sc_polar_rotation_warm(sc_m3_zero(), &w, 20, 1e-12);
    ENSURE(isfinite(w.w) && isfinite(w.x));
}

TEST(core_rng_known_answer_and_streams)
{
    /* Philox4x32-10 known-answer vectors from Random123 (kat_vectors). */
    uint32_t ctr0[4] = {0, 0, 0, 0}, key0[2] = {0, 0}, out[4];
    sc_philox4x32_10(ctr0, key0, out);
    ENSURE(out[0] == 0x6627e8d5u && out[1] == 0xe169c58du && out[2] == 0xbc57ac4cu && out[3] == 0x9b00dbd8u);
    uint32_t ctr1[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, key1[2] = {0xffffffffu, 0xffffffffu};
    sc_philox4x32_10(ctr1, key1, out);
    ENSURE(out[0] == 0x408f276du && out[1] == 0x41c83b0eu && out[2] == 0xa20bc7c6u && out[3] == 0x6d5451fdu);
    /* same key -> same stream; different stream ids -> different numbers */
    sc_rng a, b, c;
    sc_rng_init(&a, 42, 3, 7);
    sc_rng_init(&b, 42, 3, 7);
    sc_rng_init(&c, 42, 3, 8);
    int same = 1, differ = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = sc_rng_u64(&a), y = sc_rng_u64(&b), z = sc_rng_u64(&c);
        same &= x == y;
        differ += x != z;
    }
    ENSURE(same && differ == 100);
    /* uniform moments */
    double s = 0, s2 = 0;
    int n = 100000;
    sc_rng_init(&a, 5, 0, 0);
    for (int i = 0; i < n; i++) {
        double u = sc_rng_normal(&a);
        s += u;
        s2 += u * u;
    }
    ENSURE_NEAR(s / n, 0, 0.02);
    ENSURE_NEAR(s2 / n, 1, 0.02);
}

TEST(core_arena_and_status)
{
    sc_err err;
    sc_arena a;
    ENSURE_OK(sc_arena_init(&a, 1000, &err), &err);
    double *x = sc_arena_push(&a, 100 * sizeof(double));
    ENSURE(x && ((uintptr_t)x % 64) == 0);
    size_t mark = sc_arena_mark(&a);
    ENSURE(sc_arena_push(&a, 10000) == NULL);
    ENSURE(sc_arena_mark(&a) == mark);
    sc_arena_free(&a);
    ENSURE(sc_fail(&err, SC_EINPUT, "bad %d", 3) == SC_EINPUT);
    sc_err_prefix(&err, "file.yaml:%d: ", 7);
    ENSURE(!strcmp(err.msg, "file.yaml:7: bad 3") && err.code == SC_EINPUT);
}

static double spectral_radius2(const double M[4])
{
    double tr = M[0] + M[3], det = M[0] * M[3] - M[1] * M[2], disc = tr * tr - 4 * det;
    return disc >= 0 ? fmax(fabs(tr + sqrt(disc)), fabs(tr - sqrt(disc))) / 2 : sqrt(det);
}

/* learn-feedback's fit: model gains: the scalar Riccati equation's closed form, and a periodic
   system unstable over its cycle made stable, the gains converged in the number of cycles */
TEST(core_lqr_periodic_against_the_riccati_equation)
{
    sc_err err;
    double a = 1.2, b = 0.7, q = 2, r = 0.5, K[4], K2[4];
    ENSURE_OK(sc_lqr_periodic(1, 1, 1, &a, &b, &q, &r, 200, K, &err), &err);
    /* P = q + a^2 P r / (r + b^2 P): b^2 P^2 + (r - a^2 r - q b^2) P - q r = 0 */
    double B2 = b * b, lin = r - a * a * r - q * B2, P = (-lin + sqrt(lin * lin + 4 * B2 * q * r)) / (2 * B2), expect = a * b * P / (r + B2 * P);
    sc_test_report("scalar a = 1.2, b = 0.7, q = 2, r = 0.5: K = %.12f, from the Riccati equation %.12f", K[0], expect);
    ENSURE_NEAR(K[0], expect, 1e-10);
    /* the same stage twice is the same law */
    double aa[2] = {a, a}, bb[2] = {b, b};
    ENSURE_OK(sc_lqr_periodic(1, 1, 2, aa, bb, &q, &r, 200, K2, &err), &err);
    ENSURE_NEAR(K2[0], expect, 1e-10);
    ENSURE_NEAR(K2[1], expect, 1e-10);
    /* two stages of a falling pendulum-like system (position, velocity), one input */
    double A[8] = {1, 0.1, 0.3, 1.05, 1.1, 0.1, 0.2, 1}, B[4] = {0, 0.1, 0.02, 0.05}, Q[4] = {1, 0, 0, 0.1}, R[1] = {0.01}, Kc[4], Kl[4];
    ENSURE_OK(sc_lqr_periodic(2, 1, 2, A, B, Q, R, 100, Kc, &err), &err);
    ENSURE_OK(sc_lqr_periodic(2, 1, 2, A, B, Q, R, 200, Kl, &err), &err);
    for (int i = 0; i < 4; i++) ENSURE_NEAR(Kc[i], Kl[i], 1e-9 * (1 + fabs(Kl[i])));
    double open[4], closed[4], C0[4], C1[4];
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            C0[i * 2 + k] = A[i * 2 + k] - B[i] * Kc[k];
            C1[i * 2 + k] = A[4 + i * 2 + k] - B[2 + i] * Kc[2 + k];
        }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            open[i * 2 + k] = A[4 + i * 2] * A[k] + A[4 + i * 2 + 1] * A[2 + k];
            closed[i * 2 + k] = C1[i * 2] * C0[k] + C1[i * 2 + 1] * C0[2 + k];
        }
    double ro = spectral_radius2(open), rc = spectral_radius2(closed);
    sc_test_report("2-stage periodic system: spectral radius over a cycle %.3f open loop, %.3f with the gains", ro, rc);
    ENSURE(ro > 1.1 && rc < 0.9);
}

/* fit: model's ensemble gains: the LQR of a scalar system whose input gain is drawn each step from
   {b (1 + s), b (1 - s)} against the closed form with E[b^2] = b^2 (1 + s^2); the spread makes the
   law gentler than the mean system's; one model is the plain recursion bit for bit */
TEST(core_lqr_ensemble_against_its_riccati_equation)
{
    sc_err err;
    double a = 1.2, b = 0.7, s = 0.6, q = 2, r = 0.5, K1, Km, Ke, aa[2] = {a, a}, bb[2] = {b * (1 + s), b * (1 - s)};
    ENSURE_OK(sc_lqr_periodic(1, 1, 1, &a, &b, &q, &r, 200, &K1, &err), &err);
    ENSURE_OK(sc_lqr_periodic_ensemble(1, 1, 1, 1, &a, &b, &q, &r, 200, &Km, &err), &err);
    ENSURE(memcmp(&K1, &Km, sizeof K1) == 0);
    ENSURE_OK(sc_lqr_periodic_ensemble(1, 1, 1, 2, aa, bb, &q, &r, 200, &Ke, &err), &err);
    /* P = q + a^2 P - (a b P)^2 / (r + c P), c = E[b^2]: (c - a^2 c + a^2 b^2) P^2 + (r - q c - a^2 r) P - q r = 0 */
    double c = b * b * (1 + s * s), qa = c - a * a * c + a * a * b * b, lin = r - q * c - a * a * r;
    double P = (-lin + sqrt(lin * lin + 4 * qa * q * r)) / (2 * qa), expect = a * b * P / (r + c * P);
    sc_test_report("input gain 0.7 +- 60 %%: K = %.12f (closed form %.12f), the mean system's %.6f", Ke, expect, K1);
    ENSURE_NEAR(Ke, expect, 1e-10);
    ENSURE(Ke < K1);
}

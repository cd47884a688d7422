/* Tests of the soft-body force kernels ([L13] 4.2, eq. 7-17): rest/rigid invariance, energy
 * gradient, momentum conservation with pose-based plasticity, inverted elements, the fast
 * polar decomposition, damping. A scalar reference built on sc_polar checks the SIMD kernel. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "core/rng.h"
#include "sim/fem.h"
#include "test.h"

/* ---- a structured block: nx*ny*nz cubes of side h, 5 tets each, nodes jittered ---- */

static void mesh_free(sc_model *m)
{
    free(m->rest_pos);
    free(m->node_mass);
    free(m->tets);
    free(m->tet_volume);
    free(m->bm_inv);
    memset(m, 0, sizeof *m);
}

static sc_mat3 shape_mat(const double *x, const int *tn)
{
    sc_vec3 x0 = sc_v3_load(x + 3 * tn[0]);
    return sc_m3_from_cols(sc_v3_sub(sc_v3_load(x + 3 * tn[1]), x0), sc_v3_sub(sc_v3_load(x + 3 * tn[2]), x0),
                           sc_v3_sub(sc_v3_load(x + 3 * tn[3]), x0));
}

static int block_mesh(sc_model *m, int nx, int ny, int nz, double h, double jitter, uint64_t seed)
{
    static const int even[5][4] = {{0, 3, 5, 6}, {1, 0, 3, 5}, {2, 0, 3, 6}, {4, 0, 5, 6}, {7, 3, 5, 6}};
    static const int odd[5][4] = {{1, 2, 4, 7}, {0, 1, 2, 4}, {3, 1, 2, 7}, {5, 1, 4, 7}, {6, 2, 4, 7}};
    memset(m, 0, sizeof *m);
    const int NX = nx + 1, NY = ny + 1, NZ = nz + 1;
    m->nnodes = NX * NY * NZ;
    m->ntets = 5 * nx * ny * nz;
    m->rest_pos = calloc(3 * (size_t)m->nnodes, sizeof(double));
    m->node_mass = calloc((size_t)m->nnodes, sizeof(double));
    m->tets = calloc(4 * (size_t)m->ntets, sizeof(int));
    m->tet_volume = calloc((size_t)m->ntets, sizeof(double));
    m->bm_inv = calloc(9 * (size_t)m->ntets, sizeof(double));
    m->density = 1000;
    m->youngs = 1e5;
    m->poisson = 0.4;
    sc_rng r;
    sc_rng_init(&r, seed, 11, 0);
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                double *p = m->rest_pos + 3 * (i + NX * (j + NY * k));
                p[0] = h * (i + jitter * (2 * sc_rng_uniform(&r) - 1));
                p[1] = h * (j + jitter * (2 * sc_rng_uniform(&r) - 1));
                p[2] = h * (k + jitter * (2 * sc_rng_uniform(&r) - 1));
            }
    int t = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                int c[8];
                for (int b = 0; b < 8; b++) c[b] = (i + (b & 1)) + NX * ((j + (b >> 1 & 1)) + NY * (k + (b >> 2)));
                const int(*pat)[4] = (i + j + k) & 1 ? odd : even;
                for (int e = 0; e < 5; e++, t++) {
                    int *tn = m->tets + 4 * t;
                    for (int a = 0; a < 4; a++) tn[a] = c[pat[e][a]];
                    sc_mat3 dm = shape_mat(m->rest_pos, tn);
                    if (sc_m3_det(dm) < 0) {
                        int tmp = tn[2];
                        tn[2] = tn[3];
                        tn[3] = tmp;
                        dm = shape_mat(m->rest_pos, tn);
                    }
                    double vol = sc_m3_det(dm) / 6;
                    if (!(vol > 0)) return 0;
                    sc_mat3 inv;
                    if (!sc_m3_inverse(dm, &inv)) return 0;
                    m->tet_volume[t] = vol;
                    memcpy(m->bm_inv + 9 * t, inv.m, sizeof inv.m);
                    for (int a = 0; a < 4; a++) m->node_mass[tn[a]] += m->density * vol / 4;
                }
            }
    return 1;
}

static sc_quat random_q(sc_rng *r)
{
    sc_quat q = {sc_rng_normal(r), sc_rng_normal(r), sc_rng_normal(r), sc_rng_normal(r)};
    return sc_q_normalize(q);
}

/* y = Q (x + noise) + p for all nodes */
static void transform(int n, const double *x, sc_quat q, sc_vec3 p, double noise, sc_rng *r, double *y)
{
    for (int i = 0; i < n; i++) {
        sc_vec3 v = sc_v3_load(x + 3 * i);
        if (noise > 0) v = sc_v3_add(v, sc_v3(noise * sc_rng_normal(r), noise * sc_rng_normal(r), noise * sc_rng_normal(r)));
        sc_v3_store(y + 3 * i, sc_v3_add(sc_q_rotate(q, v), p));
    }
}

static double max_abs(int n, const double *a)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
    return m;
}

static double max_diff(int n, const double *a, const double *b)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

/* Scalar reference on sc_polar. mode 0: R_p = R* R ([L13] 4.2.2); 1: R_p = I; 2: R_p = rot(Fp).
 * Returns the energy sum V (mu |R^T F - R_p^T Fp|^2 + lambda/2 tr(.)^2). */
static double ref_forces(const sc_model *m, const double *x, const double *xp, int mode, double *force)
{
    double mu = m->youngs / (2 * (1 + m->poisson));
    double lambda = m->youngs * m->poisson / ((1 + m->poisson) * (1 - 2 * m->poisson));
    double energy = 0;
    for (int t = 0; t < m->ntets; t++) {
        const int *tn = m->tets + 4 * t;
        sc_mat3 bmi;
        memcpy(bmi.m, m->bm_inv + 9 * t, sizeof bmi.m);
        sc_mat3 f = sc_m3_mul(shape_mat(x, tn), bmi), r, e;
        sc_polar(f, &r, NULL);
        double tr;
        if (xp) {
            sc_mat3 fp = sc_m3_mul(shape_mat(xp, tn), bmi), rp = sc_m3_identity();
            if (mode == 0) {
                sc_mat3 rs;
                sc_polar(sc_m3_mul_nt(fp, f), &rs, NULL);
                rp = sc_m3_mul(rs, r);
            } else if (mode == 2) {
                sc_polar(fp, &rp, NULL);
            }
            sc_mat3 bp = sc_m3_mul_tn(rp, fp); /* R_p^T Fp */
            e = sc_m3_sub(f, sc_m3_mul(r, bp));
            tr = sc_m3_trace(sc_m3_mul_tn(r, f)) - sc_m3_trace(bp);
        } else {
            e = sc_m3_sub(f, r);
            tr = sc_m3_trace(sc_m3_mul_tn(r, f)) - 3;
        }
        double vol = m->tet_volume[t], fro = sc_m3_frob(e);
        energy += vol * (mu * fro * fro + 0.5 * lambda * tr * tr);
        sc_mat3 p = sc_m3_add(sc_m3_scale(e, 2 * mu), sc_m3_scale(r, lambda * tr));
        sc_mat3 h = sc_m3_scale(sc_m3_mul_nt(p, bmi), -vol);
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++) {
                force[3 * tn[j + 1] + i] += h.m[i][j];
                force[3 * tn[0] + i] -= h.m[i][j];
            }
    }
    return energy;
}

static void sum_force_torque(int n, const double *x, const double *f, sc_vec3 *fs, sc_vec3 *tq, double *fscale, double *tscale)
{
    *fs = *tq = sc_v3(0, 0, 0);
    *fscale = *tscale = 0;
    for (int i = 0; i < n; i++) {
        sc_vec3 xi = sc_v3_load(x + 3 * i), fi = sc_v3_load(f + 3 * i);
        *fs = sc_v3_add(*fs, fi);
        *tq = sc_v3_add(*tq, sc_v3_cross(xi, fi));
        *fscale += sc_v3_norm(fi);
        *tscale += sc_v3_norm(xi) * sc_v3_norm(fi);
    }
}

typedef struct {
    sc_model m;
    sc_fem fem;
    double *warm, *f, *x, *xp, *f2;
} fixture;

static int fixture_init(fixture *fx, int nx, int ny, int nz, double h, double jitter, uint64_t seed, sc_err *err)
{
    memset(fx, 0, sizeof *fx);
    if (!block_mesh(&fx->m, nx, ny, nz, h, jitter, seed)) return sc_fail(err, SC_ENUMERIC, "bad test mesh");
    int rc = sc_fem_init(&fx->fem, &fx->m, err);
    if (rc) return rc;
    fx->warm = malloc(sc_fem_warm_size(&fx->fem) * sizeof(double));
    sc_fem_warm_reset(&fx->fem, fx->warm);
    size_t n3 = 3 * (size_t)fx->m.nnodes;
    fx->f = calloc(n3, sizeof(double));
    fx->f2 = calloc(n3, sizeof(double));
    fx->x = calloc(n3, sizeof(double));
    fx->xp = calloc(n3, sizeof(double));
    return SC_OK;
}

static void fixture_free(fixture *fx)
{
    sc_fem_free(&fx->fem);
    mesh_free(&fx->m);
    free(fx->warm);
    free(fx->f);
    free(fx->f2);
    free(fx->x);
    free(fx->xp);
}

static void elastic(fixture *fx, const double *x, const double *xp, double *f, sc_fem_stats *st)
{
    memset(f, 0, 3 * (size_t)fx->m.nnodes * sizeof(double));
    sc_fem_elastic_forces(&fx->fem, x, xp, fx->warm, f, st);
}

TEST(fem_init_and_layout)
{
    sc_err err;
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 2, 3, 1, 0.1, 0.1, 1, &err), &err);
    ENSURE(fx.fem.ntets == 30 && fx.fem.stride == 32 && fx.fem.nnodes == 24);
    ENSURE(sc_fem_warm_size(&fx.fem) == SC_FEM_WARM_PER_TET * 32);
    double E = 1e5, nu = 0.4;
    ENSURE_NEAR(fx.fem.mu, E / (2 * (1 + nu)), 1e-9);
    ENSURE_NEAR(fx.fem.lambda, E * nu / ((1 + nu) * (1 - 2 * nu)), 1e-9);
    sc_quat q = sc_fem_warm_get(&fx.fem, fx.warm, 29, 1);
    ENSURE(q.w == 1 && q.x == 0 && q.y == 0 && q.z == 0);
    ENSURE(fx.fem.vol[30] == 0 && fx.fem.vol[31] == 0);
    /* recomputing Bm^-1 and volumes from rest_pos gives the same */
    sc_model m2 = fx.m;
    m2.bm_inv = NULL;
    m2.tet_volume = NULL;
    sc_fem f2;
    ENSURE_OK(sc_fem_init(&f2, &m2, &err), &err);
    ENSURE(max_diff(9 * 32, f2.bm, fx.fem.bm) < 1e-9 && max_diff(32, f2.vol, fx.fem.vol) < 1e-15);
    sc_fem_free(&f2);
    /* bad input is rejected with a message that names the place */
    m2.poisson = 0.5;
    ENSURE(sc_fem_init(&f2, &m2, &err) == SC_EINPUT && strstr(err.msg, "poisson"));
    m2.poisson = 0.3;
    m2.tets = malloc(4 * (size_t)m2.ntets * sizeof(int));
    memcpy(m2.tets, fx.m.tets, 4 * (size_t)m2.ntets * sizeof(int));
    m2.tets[4 * 7 + 2] = 99;
    ENSURE(sc_fem_init(&f2, &m2, &err) == SC_EINPUT && strstr(err.msg, "tets[7]"));
    memcpy(m2.tets, fx.m.tets, 4 * (size_t)m2.ntets * sizeof(int));
    int tmp = m2.tets[4 * 5 + 2];
    m2.tets[4 * 5 + 2] = m2.tets[4 * 5 + 3];
    m2.tets[4 * 5 + 3] = tmp; /* inverted in the rest pose */
    ENSURE(sc_fem_init(&f2, &m2, &err) == SC_EINPUT && strstr(err.msg, "tet 5"));
    free(m2.tets);
    sc_test_report("SIMD width %d lanes", sc_fem_simd_width());
    fixture_free(&fx);
}

TEST(fem_matches_reference)
{
    sc_err err;
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 3, 3, 3, 0.05, 0.15, 2, &err), &err);
    sc_rng r;
    sc_rng_init(&r, 2, 0, 0);
    const int n = fx.m.nnodes, n3 = 3 * n;
    double worst = 0;
    int max_inv = 0;
    for (int trial = 0; trial < 6; trial++) {
        transform(n, fx.m.rest_pos, random_q(&r), sc_v3(0.1, -0.2, 0.3), trial < 4 ? 0.006 : 0.012, &r, fx.x);
        transform(n, fx.m.rest_pos, random_q(&r), sc_v3(0, 0, 0), 0.006, &r, fx.xp);
        const double *xp = trial % 2 ? fx.xp : NULL;
        sc_fem_stats st;
        elastic(&fx, fx.x, xp, fx.f, &st);
        memset(fx.f2, 0, n3 * sizeof(double));
        double eref = ref_forces(&fx.m, fx.x, xp, 0, fx.f2);
        double scale = max_abs(n3, fx.f2), d = max_diff(n3, fx.f, fx.f2) / scale;
        worst = fmax(worst, d);
        ENSURE_MSG(d < 1e-10, "trial %d: max force diff %.3g relative", trial, d);
        ENSURE_NEAR(st.elastic_energy, eref, 1e-11 * eref);
        /* inversion statistics */
        int inv = 0, wt = -1;
        double wd = INFINITY;
        for (int t = 0; t < fx.m.ntets; t++) {
            sc_mat3 bmi;
            memcpy(bmi.m, fx.m.bm_inv + 9 * t, sizeof bmi.m);
            double det = sc_m3_det(sc_m3_mul(shape_mat(fx.x, fx.m.tets + 4 * t), bmi));
            inv += det <= 0;
            if (det < wd) {
                wd = det;
                wt = t;
            }
        }
        ENSURE(st.inverted == inv && st.worst_tet == wt);
        ENSURE_NEAR(st.worst_det, wd, 1e-12);
        max_inv = inv > max_inv ? inv : max_inv;
        /* the same configuration again: warm start converged, fast path only */
        elastic(&fx, fx.x, xp, fx.f, &st);
        ENSURE(st.fallbacks == 0);
        ENSURE(max_diff(n3, fx.f, fx.f2) / scale < 1e-10);
    }
    ENSURE(max_inv > 0);
    sc_test_report("SIMD kernel vs sc_polar reference: max force diff %.2g relative (%d tets, up to %d inverted)", worst, fx.m.ntets, max_inv);
    fixture_free(&fx);
}

TEST(fem_rest_and_rigid_zero)
{
    sc_err err;
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 3, 3, 3, 0.05, 0.15, 3, &err), &err);
    sc_rng r;
    sc_rng_init(&r, 3, 0, 0);
    const int n = fx.m.nnodes, n3 = 3 * n;
    /* force scale: a 5 % random deformation */
    transform(n, fx.m.rest_pos, sc_q_identity(), sc_v3(0, 0, 0), 0.0025, &r, fx.x);
    elastic(&fx, fx.x, NULL, fx.f, NULL);
    const double scale = max_abs(n3, fx.f);
    ENSURE(scale > 1);
    sc_fem_warm_reset(&fx.fem, fx.warm);
    sc_fem_stats st;
    elastic(&fx, fx.m.rest_pos, NULL, fx.f, &st);
    double worst = max_abs(n3, fx.f) / scale;
    ENSURE(worst < 1e-12 && st.elastic_energy < 1e-20 && st.inverted == 0 && st.fallbacks == 0);
    ENSURE(fabs(st.worst_det - 1) < 1e-12);
    elastic(&fx, fx.m.rest_pos, fx.m.rest_pos, fx.f, &st);
    ENSURE(max_abs(n3, fx.f) / scale < 1e-12);
    /* rigid motions: from a cold start (fallback) and then rotating on step by step (fast path) */
    for (int trial = 0; trial < 4; trial++) {
        sc_quat q = random_q(&r);
        sc_vec3 p = sc_v3(sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r));
        sc_vec3 axis = sc_v3(sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r));
        for (int step = 0; step < 20; step++) {
            sc_quat qs = sc_q_mul(sc_q_axis_angle(axis, 0.004 * step), q);
            transform(n, fx.m.rest_pos, qs, p, 0, &r, fx.x);
            elastic(&fx, fx.x, NULL, fx.f, &st);
            worst = fmax(worst, max_abs(n3, fx.f) / scale);
            ENSURE_MSG(max_abs(n3, fx.f) < 1e-9 * scale, "trial %d step %d: |f| %.3g", trial, step, max_abs(n3, fx.f));
            if (step > 0) ENSURE(st.fallbacks == 0);
            /* plasticity: pose_rest rigidly moved too (the same or another rigid motion) */
            sc_quat q2 = step % 2 ? qs : random_q(&r);
            transform(n, fx.m.rest_pos, q2, sc_v3(0.5, 0, 0), 0, &r, fx.xp);
            elastic(&fx, fx.x, fx.xp, fx.f, &st);
            worst = fmax(worst, max_abs(n3, fx.f) / scale);
            ENSURE_MSG(max_abs(n3, fx.f) < 1e-9 * scale, "plastic trial %d step %d: |f| %.3g", trial, step, max_abs(n3, fx.f));
        }
    }
    sc_test_report("max |f| under rigid motions: %.2g of the 5%%-strain force scale %.3g N", worst, scale);
    fixture_free(&fx);
}

TEST(fem_force_is_energy_gradient)
{
    sc_err err;
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 2, 2, 2, 0.05, 0.15, 4, &err), &err);
    sc_rng r;
    sc_rng_init(&r, 4, 0, 0);
    const int n = fx.m.nnodes, n3 = 3 * n;
    double worst = 0;
    for (int trial = 0; trial < 2; trial++) {
        /* trial 1 is a large deformation (30 % noise): some tets come out inverted */
        transform(n, fx.m.rest_pos, random_q(&r), sc_v3(0, 0.1, 0), trial ? 0.015 : 0.004, &r, fx.x);
        sc_fem_stats st;
        elastic(&fx, fx.x, NULL, fx.f, &st);
        const double scale = max_abs(n3, fx.f), eps = 1e-7;
        double *xe = fx.xp;
        memset(fx.f2, 0, n3 * sizeof(double));
        ENSURE_NEAR(st.elastic_energy, ref_forces(&fx.m, fx.x, NULL, 0, fx.f2), 1e-12 * st.elastic_energy);
        for (int i = 0; i < n3; i++) {
            /* central differences of the energy, evaluated independently (sc_polar reference) */
            memcpy(xe, fx.x, n3 * sizeof(double));
            xe[i] = fx.x[i] + eps;
            double ep = ref_forces(&fx.m, xe, NULL, 0, fx.f2);
            xe[i] = fx.x[i] - eps;
            double em = ref_forces(&fx.m, xe, NULL, 0, fx.f2);
            double grad = (ep - em) / (2 * eps);
            double d = fabs(fx.f[i] + grad) / scale;
            worst = fmax(worst, d);
            ENSURE_MSG(d < 1e-6, "trial %d dof %d: f %.9g, -dE/dx %.9g", trial, i, fx.f[i], -grad);
        }
        sc_test_report("trial %d: %d inverted tets, energy %.4g J, |f + dE/dx|max %.2g of |f|max %.3g N", trial, st.inverted, st.elastic_energy,
                       worst, scale);
        if (trial) ENSURE(st.inverted > 0);
    }
    fixture_free(&fx);
}

TEST(fem_momentum_conservation)
{
    sc_err err;
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 3, 3, 3, 0.05, 0.15, 5, &err), &err);
    sc_rng r;
    sc_rng_init(&r, 5, 0, 0);
    const int n = fx.m.nnodes, n3 = 3 * n;
    double wf = 0, wt = 0, naive_t = INFINITY, polar_t = INFINITY;
    int cold_fallbacks = 0;
    for (int trial = 0; trial < 5; trial++) {
        transform(n, fx.m.rest_pos, random_q(&r), sc_v3(0.2, 0.1, -0.3), 0.006, &r, fx.x);
        transform(n, fx.m.rest_pos, random_q(&r), sc_v3(-0.1, 0, 0.2), 0.006, &r, fx.xp);
        for (int pass = 0; pass < 2; pass++) { /* cold start, then warm */
            sc_fem_stats st;
            elastic(&fx, fx.x, fx.xp, fx.f, &st);
            sc_vec3 fs, tq;
            double fsc, tsc;
            sum_force_torque(n, fx.x, fx.f, &fs, &tq, &fsc, &tsc);
            wf = fmax(wf, sc_v3_norm(fs) / fsc);
            wt = fmax(wt, sc_v3_norm(tq) / tsc);
            ENSURE_MSG(sc_v3_norm(fs) < 1e-10 * fsc, "trial %d: |sum f| %.3g of %.3g", trial, sc_v3_norm(fs), fsc);
            ENSURE_MSG(sc_v3_norm(tq) < 1e-9 * tsc, "trial %d: |sum x x f| %.3g of %.3g", trial, sc_v3_norm(tq), tsc);
            if (pass) ENSURE(st.fallbacks == 0);
            else cold_fallbacks += st.fallbacks;
        }
        /* naive choices of R_p break angular momentum */
        for (int mode = 1; mode <= 2; mode++) {
            memset(fx.f2, 0, n3 * sizeof(double));
            ref_forces(&fx.m, fx.x, fx.xp, mode, fx.f2);
            sc_vec3 fs, tq;
            double fsc, tsc;
            sum_force_torque(n, fx.x, fx.f2, &fs, &tq, &fsc, &tsc);
            ENSURE(sc_v3_norm(fs) < 1e-10 * fsc);
            double rel = sc_v3_norm(tq) / tsc;
            if (mode == 1) naive_t = fmin(naive_t, rel);
            else polar_t = fmin(polar_t, rel);
        }
    }
    ENSURE(naive_t > 1e-3 && polar_t > 1e-5);
    ENSURE(cold_fallbacks > 0); /* the exact fallback path was exercised too */
    sc_test_report("R_p = R* R: |sum f| %.2g, |sum x x f| %.2g (relative; %d fallbacks on the cold passes); "
                   "naive R_p = I: torque >= %.2g, R_p = rot(Fp): torque >= %.2g",
                   wf, wt, cold_fallbacks, naive_t, polar_t);
    fixture_free(&fx);
}

TEST(fem_plasticity_rest_shape)
{
    sc_err err;
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 3, 3, 3, 0.05, 0.15, 6, &err), &err);
    sc_rng r;
    sc_rng_init(&r, 6, 0, 0);
    const int n = fx.m.nnodes, n3 = 3 * n;
    double worst = 0;
    int max_inv = 0;
    for (int trial = 0; trial < 4; trial++) {
        transform(n, fx.m.rest_pos, random_q(&r), sc_v3(0, 0, 0), trial < 2 ? 0.005 : 0.012, &r, fx.x);
        sc_fem_stats st;
        elastic(&fx, fx.x, fx.m.rest_pos, fx.f, &st); /* same shape against the undeformed rest */
        double scale = max_abs(n3, fx.f);
        ENSURE(scale > 1);
        for (int pass = 0; pass < 2; pass++) {
            elastic(&fx, fx.x, fx.x, fx.f, &st); /* the pose shape is stress free */
            worst = fmax(worst, max_abs(n3, fx.f) / scale);
            ENSURE_MSG(max_abs(n3, fx.f) < 1e-9 * scale, "trial %d: |f| %.3g of %.3g", trial, max_abs(n3, fx.f), scale);
            ENSURE(st.elastic_energy < 1e-18 * scale);
        }
        max_inv = st.inverted > max_inv ? st.inverted : max_inv;
    }
    ENSURE(max_inv > 0); /* the large trials include inverted tets: still stress free */
    sc_test_report("x == pose_rest: max |f| %.2g of the force against the rest shape (up to %d inverted tets)", worst, max_inv);
    fixture_free(&fx);
}

static double signed_volume(const double *x)
{
    const int tn[4] = {0, 1, 2, 3};
    return sc_m3_det(shape_mat(x, tn)) / 6;
}

TEST(fem_inverted_robust)
{
    /* one tet */
    sc_model m;
    memset(&m, 0, sizeof m);
    double rest[12] = {0, 0, 0, 0.1, 0, 0, 0.02, 0.09, 0, 0.03, 0.03, 0.08};
    int tets[4] = {0, 1, 2, 3};
    m.nnodes = 4;
    m.ntets = 1;
    m.rest_pos = rest;
    m.tets = tets;
    m.youngs = 1e5;
    m.poisson = 0.3;
    sc_fem fem;
    sc_err err;
    ENSURE_OK(sc_fem_init(&fem, &m, &err), &err); /* Bm^-1 and volume from rest_pos */
    double bmi[9], vol0 = fem.vol[0];
    for (int k = 0; k < 9; k++) bmi[k] = fem.bm[k * fem.stride];
    m.bm_inv = bmi; /* for ref_forces */
    m.tet_volume = &vol0;
    double *warm = malloc(sc_fem_warm_size(&fem) * sizeof(double));
    double x[12], f[12], f2[12];
    const double v0 = signed_volume(rest);
    ENSURE(v0 > 0);
    const char *names[] = {"inverted", "inverted (warm path)", "flat", "line", "point"};
    for (int c = 0; c < 5; c++) {
        memcpy(x, rest, sizeof x);
        sc_fem_warm_reset(&fem, warm);
        if (c == 0) x[11] = -0.05; /* node 3 pushed through the base */
        if (c == 1) {
            /* push node 3 through in small steps: the warm start follows */
            for (int k = 0; k <= 26; k++) {
                x[11] = 0.08 - 0.005 * k;
                memset(f, 0, sizeof f);
                sc_fem_elastic_forces(&fem, x, NULL, warm, f, NULL);
            }
        }
        if (c == 2) x[11] = 0;
        if (c == 3)
            for (int i = 1; i < 4; i++) {
                x[3 * i] = 0.05 * i;
                x[3 * i + 1] = x[3 * i + 2] = 0;
            }
        if (c == 4)
            for (int i = 0; i < 12; i++) x[i] = 0.01;
        sc_fem_stats st;
        memset(f, 0, sizeof f);
        sc_fem_elastic_forces(&fem, x, NULL, warm, f, &st);
        double fn = 0;
        for (int i = 0; i < 12; i++) {
            ENSURE_MSG(isfinite(f[i]), "%s: f[%d] = %g", names[c], i, f[i]);
            fn = fmax(fn, fabs(f[i]));
        }
        ENSURE(isfinite(st.elastic_energy) && st.worst_tet == 0);
        double vol = signed_volume(x);
        if (c <= 1) {
            ENSURE(vol < 0 && st.inverted == 1 && st.worst_det < 0);
            memset(f2, 0, sizeof f2);
            ref_forces(&m, x, NULL, 0, f2);
            ENSURE(max_diff(12, f, f2) < 1e-9 * fn);
        }
        if (c == 2) ENSURE(st.inverted == 1 && st.worst_det == 0);
        if (c == 4) ENSURE(st.fallbacks == 1); /* F = 0: no well-posed Newton step */
        if (c <= 2) {
            /* a small step along the force raises the signed volume */
            double y[12], a = 1e-3 * 0.1 / fn;
            for (int i = 0; i < 12; i++) y[i] = x[i] + a * f[i];
            double vol2 = signed_volume(y);
            ENSURE_MSG(vol2 > vol, "%s: volume %.6g -> %.6g", names[c], vol, vol2);
            sc_test_report("%s tet: volume %.3g -> %.3g m^3 after a 0.1 mm step along f (|f|max %.3g N, "
                           "%d fallbacks)",
                           names[c], vol, vol2, fn, st.fallbacks);
        }
    }
    free(warm);
    sc_fem_free(&fem);
}

/* F = R S with S symmetric, eigenvalues d (maybe one negative) in the frame v */
static sc_mat3 make_f(sc_quat q, sc_quat v, const double d[3])
{
    sc_mat3 vm = sc_q_to_m3(v), dm = sc_m3_zero();
    for (int i = 0; i < 3; i++) dm.m[i][i] = d[i];
    return sc_m3_mul(sc_q_to_m3(q), sc_m3_mul(vm, sc_m3_mul_nt(dm, vm)));
}

TEST(fem_polar_fixed_iterations_accuracy)
{
    enum { N = 512, STEPS = 200 };
    const double dt = 5e-4;
    static double f[9 * N], q[4 * N], h[3 * N];
    static sc_quat rot[N], frame[N];
    static sc_vec3 omega[N], frame_w[N];
    static double d[N][3], dd[N][3], phase[N];
    static int fb[N];
    const int vw = sc_fem_simd_width(), groups = (N + vw - 1) / vw;
    static const char *names[] = {"typical (<= 0.01 rad/step)", "big jumps (0.1-0.3 rad/step)", "huge jumps (0.5-1.5 rad/step)"};
    double typical_iters[2] = {0, 0};
    /* regime 0: typical (up to 20 rad/s, oscillating at 3 Hz; strain rates up to 2/s; 1/8 of
     * the elements inverted); 1, 2: big and huge jumps. Each without and with the predictor. */
    for (int regime = 0; regime < 3; regime++)
        for (int pred = 0; pred < 2; pred++) {
            sc_rng r;
            sc_rng_init(&r, 7, regime, 0);
            for (int i = 0; i < N; i++) {
                rot[i] = random_q(&r);
                frame[i] = random_q(&r);
                sc_vec3 a = sc_v3_normalize(sc_v3(sc_rng_normal(&r), sc_rng_normal(&r), sc_rng_normal(&r)));
                double wmag = regime == 0 ? 20 * sc_rng_uniform(&r) : regime == 1 ? 200 + 400 * sc_rng_uniform(&r) : 1000 + 2000 * sc_rng_uniform(&r);
                omega[i] = sc_v3_scale(a, wmag);
                phase[i] = 2 * SC_PI * sc_rng_uniform(&r);
                frame_w[i] = sc_v3_scale(sc_v3_normalize(sc_v3(sc_rng_normal(&r), 1, sc_rng_normal(&r))), 2 * sc_rng_uniform(&r));
                for (int k = 0; k < 3; k++) {
                    d[i][k] = 0.8 + 0.4 * sc_rng_uniform(&r) + 0.3 * k; /* distinct stretches */
                    dd[i][k] = 2 * (2 * sc_rng_uniform(&r) - 1);
                }
                if (i % 8 == 0) d[i][0] = -d[i][0] * 0.5; /* inverted: the smallest becomes negative */
                sc_mat3 fm = make_f(rot[i], frame[i], d[i]), rr;
                sc_polar(fm, &rr, NULL);
                sc_quat q0 = sc_q_from_m3(rr);
                q[4 * i] = q0.w;
                q[4 * i + 1] = q0.x;
                q[4 * i + 2] = q0.y;
                q[4 * i + 3] = q0.z;
                h[3 * i] = h[3 * i + 1] = h[3 * i + 2] = 0;
            }
            double err = 0, orth = 0;
            long iters = 0;
            int fallbacks = 0;
            for (int s = 0; s < STEPS; s++) {
                for (int i = 0; i < N; i++) {
                    double w = regime ? 1 : cos(2 * SC_PI * 3 * s * dt + phase[i]);
                    rot[i] = sc_q_normalize(sc_q_mul(sc_q_exp(sc_v3_scale(omega[i], w * dt)), rot[i]));
                    frame[i] = sc_q_normalize(sc_q_mul(sc_q_exp(sc_v3_scale(frame_w[i], dt)), frame[i]));
                    for (int k = 0; k < 3; k++) d[i][k] += dt * dd[i][k];
                    sc_mat3 fm = make_f(rot[i], frame[i], d[i]);
                    memcpy(f + 9 * i, fm.m, sizeof fm.m);
                }
                long it = 0;
                fallbacks += sc_fem_polar_batch(N, f, q, pred ? h : NULL, fb, &it);
                iters += it;
                for (int i = 0; i < N; i++) {
                    sc_mat3 fm, rr;
                    memcpy(fm.m, f + 9 * i, sizeof fm.m);
                    sc_polar(fm, &rr, NULL);
                    sc_quat qi = {q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]};
                    sc_mat3 rq = sc_q_to_m3(qi);
                    for (int a = 0; a < 3; a++)
                        for (int b = 0; b < 3; b++) err = fmax(err, fabs(rq.m[a][b] - rr.m[a][b]));
                    orth = fmax(orth, fabs(qi.w * qi.w + qi.x * qi.x + qi.y * qi.y + qi.z * qi.z - 1));
                }
            }
            double per_group = (double)iters / (STEPS * groups);
            sc_test_report("%s, %s: max |R - R_sc_polar| %.2g over %d x %d steps, |q|^2-1 %.1g, %.2f Newton "
                           "steps per group of %d, %d fallbacks (%.2g %%)",
                           names[regime], pred ? "predictor" : "no predictor", err, N, STEPS, orth, per_group, vw, fallbacks,
                           100.0 * fallbacks / (N * STEPS));
            ENSURE_MSG(err < 1e-10, "max rotation error %.3g", err);
            ENSURE(orth < 1e-14);
            if (regime == 0) {
                ENSURE(fallbacks == 0 && per_group <= 2.0);
                typical_iters[pred] = per_group;
            }
            if (regime == 2) ENSURE(fallbacks > 0);
        }
    ENSURE(typical_iters[1] < typical_iters[0]);
}

TEST(fem_damping)
{
    sc_err err;
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 3, 3, 3, 0.05, 0.15, 8, &err), &err);
    sc_rng r;
    sc_rng_init(&r, 8, 0, 0);
    const int n = fx.m.nnodes, n3 = 3 * n;
    double *v = calloc(n3, sizeof(double)), *xd = calloc(n3, sizeof(double)), *re = calloc(n3, sizeof(double));

    /* pose-based damping ([L13] eq. 17) */
    transform(n, fx.m.rest_pos, sc_q_identity(), sc_v3(0, 0, 0), 0.004, &r, fx.x);
    transform(n, fx.m.rest_pos, sc_q_identity(), sc_v3(0, 0, 0), 0.004, &r, fx.xp);
    memcpy(fx.xp + 9, fx.x + 9, 3 * sizeof(double)); /* node 3: dx = 0 */
    for (int i = 0; i < n3; i++) {
        v[i] = sc_rng_normal(&r);
        xd[i] = sc_rng_normal(&r);
    }
    memset(fx.f, 0, n3 * sizeof(double));
    const double c = 20;
    sc_fem_pose_damping(n, fx.m.node_mass, fx.x, v, fx.xp, xd, c, fx.f, re);
    sc_vec3 lin = sc_v3(0, 0, 0), ang = sc_v3(0, 0, 0);
    double fsc = 0, power = 0;
    for (int i = 0; i < n; i++) {
        sc_vec3 fi = sc_v3_load(fx.f + 3 * i), ri = sc_v3_load(re + 3 * i);
        sc_vec3 dx = sc_v3_sub(sc_v3_load(fx.xp + 3 * i), sc_v3_load(fx.x + 3 * i));
        sc_vec3 dv = sc_v3_sub(sc_v3_load(xd + 3 * i), sc_v3_load(v + 3 * i));
        lin = sc_v3_add(lin, sc_v3_add(fi, ri));
        ang = sc_v3_add(ang, sc_v3_add(sc_v3_cross(sc_v3_load(fx.x + 3 * i), fi), sc_v3_cross(sc_v3_load(fx.xp + 3 * i), ri)));
        fsc += sc_v3_norm(fi);
        ENSURE(sc_v3_norm(sc_v3_cross(fi, dx)) <= 1e-12 * sc_v3_norm(fi) * sc_v3_norm(dx) + 1e-300); /* along dx */
        if (i != 3) {
            double expect = c * fx.m.node_mass[i] * sc_v3_dot(dv, dx) / sc_v3_norm(dx);
            ENSURE_NEAR(sc_v3_dot(fi, dx) / sc_v3_norm(dx), expect, 1e-12 * fabs(expect) + 1e-300);
        } else {
            ENSURE(fi.x == 0 && fi.y == 0 && fi.z == 0);
        }
        power += sc_v3_dot(sc_v3_scale(dv, -1), fi); /* relative motion loses energy */
    }
    ENSURE(sc_v3_norm(lin) <= 1e-14 * fsc);
    ENSURE(sc_v3_norm(ang) <= 1e-14 * fsc);
    ENSURE(power < 0);

    /* Rayleigh: rotations from an elastic pass at a rotated, deformed shape */
    sc_quat q = sc_q_axis_angle(sc_v3(1, 2, 3), 0.9);
    transform(n, fx.m.rest_pos, q, sc_v3(0.3, 0, 0), 0.004, &r, fx.x);
    elastic(&fx, fx.x, NULL, fx.f, NULL);
    for (int i = 0; i < n3; i++) v[i] = sc_rng_normal(&r);
    memset(fx.f, 0, n3 * sizeof(double));
    sc_fem_rayleigh_damping(&fx.fem, fx.m.node_mass, v, fx.warm, 0, 0.01, fx.f);
    const double scale = max_abs(n3, fx.f);
    double vf = 0;
    for (int i = 0; i < n3; i++) vf += v[i] * fx.f[i];
    ENSURE(vf < 0 && scale > 0);
    /* K_R is symmetric: u.(K v) = v.(K u) */
    for (int i = 0; i < n3; i++) xd[i] = sc_rng_normal(&r);
    memset(fx.f2, 0, n3 * sizeof(double));
    sc_fem_rayleigh_damping(&fx.fem, fx.m.node_mass, xd, fx.warm, 0, 0.01, fx.f2);
    double uf = 0, fu = 0, mf = 0;
    for (int i = 0; i < n3; i++) {
        uf += xd[i] * fx.f[i];
        fu += v[i] * fx.f2[i];
    }
    ENSURE_NEAR(uf, fu, 1e-10 * fabs(vf));
    /* with mass damping */
    memset(fx.f2, 0, n3 * sizeof(double));
    sc_fem_rayleigh_damping(&fx.fem, fx.m.node_mass, v, fx.warm, 0.5, 0.01, fx.f2);
    for (int i = 0; i < n3; i++) mf += v[i] * fx.f2[i];
    double mv2 = 0;
    for (int i = 0; i < n; i++) mv2 += fx.m.node_mass[i] * sc_v3_dot(sc_v3_load(v + 3 * i), sc_v3_load(v + 3 * i));
    ENSURE_NEAR(mf, vf - 0.5 * mv2, 1e-10 * fabs(mf));
    /* rigid translation: no force */
    for (int i = 0; i < n; i++) sc_v3_store(v + 3 * i, sc_v3(0.3, -1.2, 0.7));
    memset(fx.f, 0, n3 * sizeof(double));
    sc_fem_rayleigh_damping(&fx.fem, fx.m.node_mass, v, fx.warm, 0, 0.01, fx.f);
    double trans = max_abs(n3, fx.f) / scale;
    ENSURE(trans < 1e-12);
    /* rigid rotation: zero at an undeformed (rotated) shape, first order in the strain otherwise */
    double rot_f[3];
    const double strain[3] = {0, 0.0005, 0.001};
    sc_vec3 w = sc_v3(0.7, -0.4, 1.1);
    for (int k = 0; k < 3; k++) {
        sc_rng r2;
        sc_rng_init(&r2, 99, 0, 0); /* the same noise pattern, scaled */
        transform(n, fx.m.rest_pos, q, sc_v3(0.3, 0, 0), strain[k] * 0.05, &r2, fx.x);
        elastic(&fx, fx.x, NULL, fx.f, NULL);
        /* scale v so |v| ~ the random v above */
        for (int i = 0; i < n; i++) sc_v3_store(v + 3 * i, sc_v3_scale(sc_v3_cross(w, sc_v3_load(fx.x + 3 * i)), 10));
        memset(fx.f, 0, n3 * sizeof(double));
        sc_fem_rayleigh_damping(&fx.fem, fx.m.node_mass, v, fx.warm, 0, 0.01, fx.f);
        rot_f[k] = max_abs(n3, fx.f) / scale;
    }
    ENSURE(rot_f[0] < 1e-9);
    ENSURE(rot_f[2] < 0.05);
    ENSURE_NEAR(rot_f[2] / rot_f[1], 2, 0.1);
    sc_test_report("pose damping: |sum f + reaction| %.1g, |torque| %.1g; Rayleigh: v.f %.3g W, translation %.1g, "
                   "rotation %.1g (rest), %.2g / %.2g (strain 5e-4 / 1e-3) of the random-v force",
                   sc_v3_norm(lin), sc_v3_norm(ang), vf, trans, rot_f[0], rot_f[1], rot_f[2]);
    free(v);
    free(xd);
    free(re);
    fixture_free(&fx);
}

TEST(fem_warm_state_bit_identical)
{
    /* a restored snapshot (x, pose_rest, warm) reproduces forces and warm bit for bit */
    sc_err err;
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 3, 3, 3, 0.05, 0.15, 9, &err), &err);
    sc_rng r;
    sc_rng_init(&r, 9, 0, 0);
    const int n = fx.m.nnodes, n3 = 3 * n;
    const size_t ws = sc_fem_warm_size(&fx.fem);
    double *snap = malloc(ws * sizeof(double)), *w2 = malloc(ws * sizeof(double));
    transform(n, fx.m.rest_pos, random_q(&r), sc_v3(0, 0, 0), 0.004, &r, fx.x);
    transform(n, fx.m.rest_pos, random_q(&r), sc_v3(0, 0, 0), 0.004, &r, fx.xp);
    elastic(&fx, fx.x, fx.xp, fx.f, NULL);
    for (int i = 0; i < n3; i++) fx.x[i] += 1e-4 * sc_rng_normal(&r);
    memcpy(snap, fx.warm, ws * sizeof(double));
    elastic(&fx, fx.x, fx.xp, fx.f, NULL);
    memcpy(w2, fx.warm, ws * sizeof(double));
    memcpy(fx.warm, snap, ws * sizeof(double));
    elastic(&fx, fx.x, fx.xp, fx.f2, NULL);
    ENSURE(!memcmp(fx.f, fx.f2, n3 * sizeof(double)));
    ENSURE(!memcmp(w2, fx.warm, ws * sizeof(double)));
    free(snap);
    free(w2);
    fixture_free(&fx);
}

/* ---- the kernels ---- */

TEST(fem_kernels_match_scalar_reference)
{
    /* Every SIMD kernel this CPU runs against the plain scalar kernel (sc_polar on every tet),
     * on a jittered block deformed by a random rotation and noise large enough to invert some
     * tets: double kernels' forces within 1e-10 of the largest, energy within 1e-11, the same
     * inverted count and worst tet; single-precision kernels' forces within 2e-5 of the
     * largest (with plasticity and without), energy within 1e-5, the inverted count within 1;
     * from cold warm starts (fallbacks) and then warm (the Newton path). */
    sc_err err;
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 4, 4, 3, 0.05, 0.15, 12, &err), &err);
    const int n3 = 3 * fx.m.nnodes;
    const size_t ws = sc_fem_warm_size(&fx.fem);
    double *wref = malloc(ws * sizeof(double)), *ref = calloc(n3, sizeof(double)), *vel = malloc(n3 * sizeof(double));
    sc_rng r;
    sc_rng_init(&r, 12, 0, 0);
    for (int i = 0; i < n3; i++) vel[i] = sc_rng_normal(&r);
    int kernels = 0, max_inv = 0, kernels32 = 0;
    double worst = 0, worst32 = 0;
    for (int id = 1; id <= SC_FEM_KERNEL_MAX; id++) {
        if (id == SC_FEM_KERNEL_SCALAR || !sc_fem_kernel_available(id)) continue;
        const int f32 = sc_fem_kernel_is_f32(id);
        kernels++;
        kernels32 += f32;
        sc_rng_init(&r, 13, 0, 0);
        for (int trial = 0; trial < 8; trial++) {
            /* trials 0-3 from cold warm starts, 4-7 one step on from the previous configuration */
            if (trial < 4 || trial == 4) {
                transform(fx.m.nnodes, fx.m.rest_pos, random_q(&r), sc_v3(0.1, -0.2, 0.3), trial % 2 ? 0.012 : 0.005, &r, fx.x);
                transform(fx.m.nnodes, fx.m.rest_pos, random_q(&r), sc_v3(0, 0, 0), 0.004, &r, fx.xp);
            } else {
                for (int i = 0; i < n3; i++) {
                    fx.x[i] += 2e-5 * sc_rng_normal(&r);
                    fx.xp[i] += 1e-5 * sc_rng_normal(&r);
                }
            }
            const double *xp = trial % 4 == 3 ? NULL : fx.xp;
            sc_fem_stats st, sr;
            /* each warm buffer is reset under its own kernel: the layout follows the precision */
            ENSURE_OK(sc_fem_set_kernel(&fx.fem, id, &err), &err);
            if (trial < 4) sc_fem_warm_reset(&fx.fem, fx.warm);
            elastic(&fx, fx.x, xp, fx.f, &st);
            ENSURE_OK(sc_fem_set_kernel(&fx.fem, SC_FEM_KERNEL_SCALAR, &err), &err);
            if (trial < 4) sc_fem_warm_reset(&fx.fem, wref);
            memset(ref, 0, n3 * sizeof(double));
            sc_fem_elastic_forces(&fx.fem, fx.x, xp, wref, ref, &sr);
            double scale = max_abs(n3, ref), d = max_diff(n3, fx.f, ref) / scale;
            if (f32) {
                worst32 = fmax(worst32, d);
                ENSURE_MSG(d < 2e-5, "%s trial %d: forces off by %.3g of the largest", sc_fem_kernel_name(id), trial, d);
                ENSURE_NEAR(st.elastic_energy, sr.elastic_energy, 1e-5 * sr.elastic_energy);
                ENSURE(abs(st.inverted - sr.inverted) <= 1);
                ENSURE_NEAR(st.worst_det, sr.worst_det, 1e-5);
            } else {
                worst = fmax(worst, d);
                ENSURE_MSG(d < 1e-10, "%s trial %d: forces off by %.3g of the largest", sc_fem_kernel_name(id), trial, d);
                ENSURE_NEAR(st.elastic_energy, sr.elastic_energy, 1e-11 * sr.elastic_energy);
                ENSURE(st.inverted == sr.inverted && st.worst_tet == sr.worst_tet);
                ENSURE_NEAR(st.worst_det, sr.worst_det, 1e-12);
            }
            if (trial >= 5) ENSURE(st.fallbacks == 0);
            max_inv = st.inverted > max_inv ? st.inverted : max_inv;
        }
        /* Rayleigh damping from the same rotations (each kernel's own) */
        ENSURE_OK(sc_fem_set_kernel(&fx.fem, id, &err), &err);
        memset(fx.f, 0, n3 * sizeof(double));
        sc_fem_rayleigh_damping(&fx.fem, fx.m.node_mass, vel, fx.warm, 0.5, 1e-3, fx.f);
        ENSURE_OK(sc_fem_set_kernel(&fx.fem, SC_FEM_KERNEL_SCALAR, &err), &err);
        memset(ref, 0, n3 * sizeof(double));
        sc_fem_rayleigh_damping(&fx.fem, fx.m.node_mass, vel, f32 ? wref : fx.warm, 0.5, 1e-3, ref);
        ENSURE(max_diff(n3, fx.f, ref) < (f32 ? 2e-5 : 1e-12) * max_abs(n3, ref));
    }
    sc_test_report("%d SIMD kernel(s) vs the scalar kernel: max force difference %.2g of the largest in double, %.2g in "
                   "single precision (%d kernels; %d tets, up to %d inverted)",
                   kernels, worst, worst32, kernels32, fx.m.ntets, max_inv);
    ENSURE(kernels >= 1 && max_inv > 0);
    free(wref);
    free(ref);
    free(vel);
    fixture_free(&fx);
}

TEST(fem_kernel_selection_and_determinism)
{
    /* the id names the kernel in use; the override (SOFTCON_FEM_KERNEL) replaces the choice and a bad value is
     * refused; each kernel repeats itself to the bit */
    sc_err err;
    const char *saved = getenv("SOFTCON_FEM_KERNEL");
    char keep[64] = "";
    if (saved) snprintf(keep, sizeof keep, "%s", saved);
    sc_fem_kernel_override(NULL);
    int best = sc_fem_kernel_id();
    ENSURE(best ==
           (sc_fem_kernel_available(SC_FEM_KERNEL_AVX512)     ? SC_FEM_KERNEL_AVX512
                : sc_fem_kernel_available(SC_FEM_KERNEL_AVX2) ? SC_FEM_KERNEL_AVX2
                                                              : SC_FEM_KERNEL_SCALAR));
    ENSURE(!strcmp(sc_fem_kernel_name(SC_FEM_KERNEL_AVX512), "avx512-f64x8") && !strcmp(sc_fem_kernel_name(SC_FEM_KERNEL_AVX2), "avx2-f64x4"));
    ENSURE(!strcmp(sc_fem_kernel_name(99), "unknown"));
    fixture fx;
    ENSURE_OK(fixture_init(&fx, 2, 2, 2, 0.05, 0.1, 14, &err), &err);
    ENSURE(fx.fem.kernel == best);
    ENSURE(sc_fem_set_kernel(&fx.fem, 99, &err) == SC_EINPUT);
    sc_fem_kernel_override("scalar");
    ENSURE(sc_fem_kernel_id() == SC_FEM_KERNEL_SCALAR && sc_fem_simd_width() == 1);
    sc_fem f2;
    ENSURE_OK(sc_fem_init(&f2, &fx.m, &err), &err);
    ENSURE(f2.kernel == SC_FEM_KERNEL_SCALAR);
    sc_fem_free(&f2);
    sc_fem_kernel_override("avx1024");
    ENSURE(sc_fem_kernel_id() == 0);
    ENSURE(sc_fem_init(&f2, &fx.m, &err) == SC_EINPUT && strstr(err.msg, "SOFTCON_FEM_KERNEL=avx1024"));
    sc_fem_kernel_override(keep[0] ? keep : NULL);
    /* determinism: same inputs, same bits, for every kernel */
    const int n3 = 3 * fx.m.nnodes;
    const size_t ws = sc_fem_warm_size(&fx.fem);
    double *w1 = malloc(ws * sizeof(double)), *f1 = calloc(n3, sizeof(double));
    sc_rng r;
    for (int id = 1; id <= SC_FEM_KERNEL_MAX; id++) {
        if (!sc_fem_kernel_available(id)) continue;
        ENSURE_OK(sc_fem_set_kernel(&fx.fem, id, &err), &err);
        for (int rep = 0; rep < 2; rep++) {
            sc_rng_init(&r, 15, 0, 0);
            sc_fem_warm_reset(&fx.fem, fx.warm);
            for (int k = 0; k < 5; k++) {
                transform(fx.m.nnodes, fx.m.rest_pos, random_q(&r), sc_v3(0, 0, 0), 0.003, &r, fx.x);
                transform(fx.m.nnodes, fx.m.rest_pos, random_q(&r), sc_v3(0, 0, 0), 0.003, &r, fx.xp);
                elastic(&fx, fx.x, fx.xp, fx.f, NULL);
            }
            if (rep == 0) {
                memcpy(w1, fx.warm, ws * sizeof(double));
                memcpy(f1, fx.f, n3 * sizeof(double));
            }
        }
        ENSURE_MSG(!memcmp(w1, fx.warm, ws * sizeof(double)) && !memcmp(f1, fx.f, n3 * sizeof(double)), "%s is not deterministic",
                   sc_fem_kernel_name(id));
    }
    sc_test_report("kernel selected on this CPU: %s", sc_fem_kernel_name(best));
    free(w1);
    free(f1);
    fixture_free(&fx);
}

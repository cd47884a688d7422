/* The dense QP solver against the optimality conditions (which certify a convex QP's global
 * minimum), and the QPCC solver of [T12] 6 on problems whose solutions are known. */
#include <string.h>
#include "core/rng.h"
#include "optim/qp.h"
#include "optim/qpcc.h"
#include "test.h"

#define QN 30
#define QM 50

static double dotn(int n, const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

TEST(qp_random_problems_meet_the_optimality_conditions)
{
    static double H[QN * QN], g[QN], A[QM * QN], b[QM], x0[QN], x[QN], u[QM], grad[QN];
    sc_qp_work *w = NULL;
    sc_err err;
    ENSURE_OK(sc_qp_work_create(QN, QM, &w, &err), &err);
    double worst_kkt = 0, worst_viol = 0, worst_comp = 0;
    int active_total = 0;
    for (int trial = 0; trial < 60; trial++) {
        sc_rng r;
        sc_rng_init(&r, 7, (uint32_t)trial, 0);
        const int n = 2 + (int)(sc_rng_uniform(&r) * (QN - 1)), neq = (int)(sc_rng_uniform(&r) * (n < 6 ? n / 2 : 5));
        const int nin = (int)(sc_rng_uniform(&r) * (QM - neq));
        /* H = B B' + 0.01 I, rows through a feasible point x0 (some tight, some slack) */
        static double B[QN * QN];
        for (int i = 0; i < n * n; i++) B[i] = sc_rng_normal(&r);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) H[i * n + j] = dotn(n, B + i * n, B + j * n) / n + (i == j ? 0.01 : 0);
        for (int i = 0; i < n; i++) {
            g[i] = 3 * sc_rng_normal(&r);
            x0[i] = sc_rng_normal(&r);
        }
        for (int j = 0; j < neq + nin; j++) {
            for (int i = 0; i < n; i++) A[j * n + i] = sc_rng_normal(&r);
            b[j] = dotn(n, A + j * n, x0) - (j < neq ? 0 : (sc_rng_uniform(&r) < 0.3 ? 0 : sc_rng_uniform(&r)));
        }
        sc_qp p = {.n = n, .neq = neq, .nin = nin, .H = H, .g = g, .Aeq = A, .beq = b, .Ain = A + neq * n, .bin = b + neq};
        sc_qp_result res;
        ENSURE_OK(sc_qp_solve(&p, w, x, u, u + neq, &res, &err), &err);
        /* stationarity H x + g = A' u, dual feasibility, complementary slackness, primal feasibility */
        for (int i = 0; i < n; i++) grad[i] = dotn(n, H + i * n, x) + g[i];
        for (int j = 0; j < neq + nin; j++)
            for (int i = 0; i < n; i++) grad[i] -= A[j * n + i] * u[j];
        double gnorm = 0;
        for (int i = 0; i < n; i++) gnorm = fmax(gnorm, fabs(grad[i]));
        worst_kkt = fmax(worst_kkt, gnorm);
        worst_viol = fmax(worst_viol, sc_qp_violation(&p, x));
        for (int j = neq; j < neq + nin; j++) {
            ENSURE_MSG(u[j] >= 0, "trial %d: multiplier %d = %g < 0", trial, j, u[j]);
            worst_comp = fmax(worst_comp, u[j] * fabs(dotn(n, A + j * n, x) - b[j]));
        }
        double f = dotn(n, g, x);
        for (int i = 0; i < n; i++) f += 0.5 * x[i] * dotn(n, H + i * n, x);
        ENSURE_NEAR(res.objective, f, 1e-9 * (1 + fabs(f)));
        active_total += res.nactive;
    }
    sc_test_report("60 random QPs (n <= 30, <= 50 rows, %d rows active in all): stationarity %.1e, violation %.1e, complementarity %.1e",
                   active_total, worst_kkt, worst_viol, worst_comp);
    ENSURE(worst_kkt < 1e-8 && worst_viol < 1e-8 && worst_comp < 1e-8);
    ENSURE(active_total > 100); /* the problems do bind */
    /* x >= 1 and -x >= 0 cannot both hold */
    const double h1 = 1, g1 = 0, a2[2] = {1, -1}, b2[2] = {1, 0};
    sc_qp bad = {.n = 1, .nin = 2, .H = &h1, .g = &g1, .Ain = a2, .bin = b2};
    ENSURE(sc_qp_solve(&bad, w, x, NULL, NULL, NULL, &err) == SC_ENUMERIC);
    const double hneg = -1;
    bad.H = &hneg;
    ENSURE(sc_qp_solve(&bad, w, x, NULL, NULL, NULL, &err) == SC_EINPUT);
    sc_qp_work_free(w);
}

/* |T x - t|^2 with T (rank x n) and t standard normal, plus a ridge of 1e-6: H = 2 T'T + 2e-6 I,
 * g = -2 T't (T is scratch). */
static void rank_objective(sc_rng *r, int n, int rank, double *T, double *H, double *g)
{
    for (int i = 0; i < rank * n; i++) T[i] = sc_rng_normal(r);
    for (int i = 0; i < n; i++) {
        g[i] = 0;
        for (int k = 0; k < rank; k++) g[i] -= 2 * T[k * n + i] * sc_rng_normal(r);
        for (int j = 0; j < n; j++) {
            double h = 0;
            for (int k = 0; k < rank; k++) h += T[k * n + i] * T[k * n + j];
            H[i * n + j] = 2 * h + (i == j ? 2e-6 : 0);
        }
    }
}

/* A semi-definite objective made definite by a tiny ridge (what [T12]'s control QPs look like:
 * a few tracked quantities of many variables), with every variable boxed and some equalities:
 * the ridge pulls the variables onto their bounds, so nearly n rows end up active. H's
 * condition number is about 1e8; the active rows must still hold to rounding (they drifted by
 * up to 1.7e-5 before the solver's final refinement), and n active rows must never be exceeded. */
TEST(qp_tiny_ridge_keeps_its_active_rows)
{
    enum { N = 40, R = 5, NE = 8, M = NE + 2 * N };
    static double H[N * N], g[N], A[M * N], b[M], T[R * N], x[N], u[M];
    sc_qp_work *w = NULL;
    sc_err err;
    ENSURE_OK(sc_qp_work_create(N, M, &w, &err), &err);
    double worst_viol = 0, worst_kkt = 0;
    int most_active = 0;
    for (int trial = 0; trial < 20; trial++) {
        sc_rng r;
        sc_rng_init(&r, 11, (uint32_t)trial, 0);
        rank_objective(&r, N, R, T, H, g);
        memset(A, 0, sizeof A);
        for (int j = 0; j < NE; j++) { /* equalities through x0 = 0.75 of each box */
            b[j] = 0;
            for (int i = 0; i < N; i++) {
                A[j * N + i] = sc_rng_normal(&r);
                b[j] += A[j * N + i] * 0.75 * (1 + i % 3);
            }
        }
        for (int i = 0; i < N; i++) { /* 0.5 (1 + i % 3) <= x_i <= 1 + i % 3 */
            A[(NE + 2 * i) * N + i] = 1;
            b[NE + 2 * i] = 0.5 * (1 + i % 3);
            A[(NE + 2 * i + 1) * N + i] = -1;
            b[NE + 2 * i + 1] = -(1.0 + i % 3);
        }
        sc_qp p = {.n = N, .neq = NE, .nin = 2 * N, .H = H, .g = g, .Aeq = A, .beq = b, .Ain = A + NE * N, .bin = b + NE};
        sc_qp_result res;
        ENSURE_OK(sc_qp_solve(&p, w, x, u, u + NE, &res, &err), &err);
        worst_viol = fmax(worst_viol, sc_qp_violation(&p, x));
        double gmax = 0, gscale = 1;
        for (int i = 0; i < N; i++) {
            double gr = dotn(N, H + i * N, x) + g[i];
            for (int j = 0; j < M; j++) gr -= A[j * N + i] * u[j];
            gmax = fmax(gmax, fabs(gr));
            gscale = fmax(gscale, fabs(g[i]));
        }
        worst_kkt = fmax(worst_kkt, gmax / gscale);
        ENSURE(res.nactive <= N);
        if (res.nactive > most_active) most_active = res.nactive;
    }
    sc_test_report("20 QPs of 40 variables, rank-5 objective + 1e-6 ridge, 8 equalities and 80 bounds: violation %.1e, stationarity %.1e "
                   "(relative), up to %d rows active",
                   worst_viol, worst_kkt, most_active);
    ENSURE(worst_viol < 1e-9);
    ENSURE(worst_kkt < 1e-6);
    ENSURE(most_active >= N - R - 2);
    sc_qp_work_free(w);
}

/* The same objectives with 40 more inequalities through the feasible point x0 (0.75 of each box;
 * some tight, some slack): crowded, degenerate vertices where more rows pass than there are
 * variables. Every problem is feasible by construction. Before the refinement and the looser
 * test of dependence, 187 of these 200 ended with rows violated by up to 1.3e-3; at a ridge of
 * 1e-8 the solver wrote an (n+1)-th active row past its arrays (trial 181). Below a ridge of
 * about 1e-6 of H's scale the Gram factor of the active rows still loses its digits: rows
 * violated by up to 5e-2 at ridges of 1e-7 and 1e-8 (see qp.h). */
TEST(qp_degenerate_vertices_are_not_infeasible)
{
    enum { N = 40, R = 5, NE = 8, NX = 40, M = NE + 2 * N + NX };
    static double H[N * N], g[N], A[M * N], b[M], T[R * N], x[N];
    sc_qp_work *w = NULL;
    sc_err err;
    ENSURE_OK(sc_qp_work_create(N, M, &w, &err), &err);
    double worst_viol = 0;
    int most_active = 0;
    for (int trial = 0; trial < 200; trial++) {
        sc_rng r;
        sc_rng_init(&r, 11, (uint32_t)trial, 0);
        rank_objective(&r, N, R, T, H, g);
        memset(A, 0, sizeof A);
        for (int j = 0; j < M; j++) {
            if (j >= NE && j < NE + 2 * N) continue;
            b[j] = 0;
            for (int i = 0; i < N; i++) {
                A[j * N + i] = sc_rng_normal(&r);
                b[j] += A[j * N + i] * 0.75 * (1 + i % 3);
            }
            if (j >= NE + 2 * N) b[j] -= 0.1 * sc_rng_uniform(&r);
        }
        for (int i = 0; i < N; i++) {
            A[(NE + 2 * i) * N + i] = 1;
            b[NE + 2 * i] = 0.5 * (1 + i % 3);
            A[(NE + 2 * i + 1) * N + i] = -1;
            b[NE + 2 * i + 1] = -(1.0 + i % 3);
        }
        sc_qp p = {.n = N, .neq = NE, .nin = M - NE, .H = H, .g = g, .Aeq = A, .beq = b, .Ain = A + NE * N, .bin = b + NE};
        sc_qp_result res;
        ENSURE_MSG(sc_qp_solve(&p, w, x, NULL, NULL, &res, &err) == SC_OK, "trial %d: %s", trial, err.msg);
        worst_viol = fmax(worst_viol, sc_qp_violation(&p, x));
        ENSURE(res.nactive <= N);
        if (res.nactive > most_active) most_active = res.nactive;
    }
    sc_test_report("200 QPs of 40 variables and 128 rows at a ridge of 1e-6: violation %.1e, up to %d rows active", worst_viol, most_active);
    ENSURE(worst_viol < 1e-9);
    sc_qp_work_free(w);
}

/* [T12] Figure 3: 0 <= x _|_ x - y - 2 >= 0, here with the objective 1/2 ((x-3)^2 + y^2). From
 * x = 0 the minimizer (0, -2) lies on x - y - 2 >= 0's boundary (objective 6.5); one pivot
 * reaches the global minimizer (2.5, 0.5), objective 0.25 - 4.5 + 4.5 = 0.25. */
TEST(qpcc_pivots_to_the_global_minimizer_of_figure_3)
{
    const double H[4] = {1, 0, 0, 1}, g[2] = {-3, 0}, row[2] = {1, -1}, off = -2;
    const int var = 0;
    sc_qpcc p = {.base = {.n = 2, .H = H, .g = g}, .npairs = 1, .var = &var, .row = row, .off = &off};
    sc_qpcc_work *w = NULL;
    sc_err err;
    ENSURE_OK(sc_qpcc_work_create(2, 0, 1, 16, &w, &err), &err);
    double x[2];
    unsigned char start = 0, state = 9;
    sc_qpcc_result r;
    ENSURE_OK(sc_qpcc_solve_state(&p, w, &start, x, &r, &err), &err);
    ENSURE_NEAR(x[0], 0, 1e-12);
    ENSURE_NEAR(x[1], -2, 1e-12);
    ENSURE_NEAR(r.objective + 4.5, 6.5, 1e-12); /* the constant 9/2 is not in the QP */
    ENSURE_OK(sc_qpcc_solve(&p, w, &start, x, &state, &r, &err), &err);
    ENSURE_NEAR(x[0], 2.5, 1e-12);
    ENSURE_NEAR(x[1], 0.5, 1e-12);
    ENSURE_NEAR(r.objective + 4.5, 0.25, 1e-12);
    ENSURE(state == 1 && r.nodes == 2);
    ENSURE_OK(sc_qpcc_exact(&p, 100, x, &r, &err), &err);
    ENSURE(r.proven);
    ENSURE_NEAR(x[0], 2.5, 1e-9);
    ENSURE_NEAR(r.objective + 4.5, 0.25, 1e-9);
    sc_qpcc_work_free(w);
}

/* One contact of [T12] eq. 11 in impulse form: a unit mass meets the ground at normal velocity
 * -1 with tangential velocity vt along x; after the step v = v0 + f (f the contact impulse).
 * Coulomb with mu = 0.5 on 8 directions: for vt = 0.3 the point sticks (friction 0.3), for
 * vt = 2 it slides on at 2 - 0.5 = 1.5 with lambda its slip speed. The objective is a tiny
 * ridge, so the minimizer is the contact's own solution. */
static int one_contact(double vt, double *vx_after, double *lambda, int *sliding)
{
    enum { NT = 8, NV = NT + 2 }; /* f_n, f_t[8], lambda */
    double H[NV * NV] = {0}, g[NV] = {0}, row[NV * NV] = {0}, off[NV];
    int var[NV];
    for (int i = 0; i < NV; i++) H[i * NV + i] = 1e-6;
    const double mu = 0.5, v0[3] = {vt, -1, 0};
    double d[NT][3];
    for (int j = 0; j < NT; j++) {
        d[j][0] = cos(2 * M_PI * j / NT);
        d[j][1] = 0;
        d[j][2] = sin(2 * M_PI * j / NT);
    }
    /* pair 0: f_n against v_y; pairs 1-8: f_t,j against d_j.v + lambda; pair 9: lambda against mu f_n - sum f_t */
    var[0] = 0;
    row[0] = 1;
    off[0] = v0[1];
    for (int j = 0; j < NT; j++) {
        var[1 + j] = 1 + j;
        for (int k = 0; k < NT; k++) row[(1 + j) * NV + 1 + k] = d[j][0] * d[k][0] + d[j][2] * d[k][2];
        row[(1 + j) * NV + NV - 1] = 1;
        off[1 + j] = d[j][0] * v0[0] + d[j][2] * v0[2];
    }
    var[NV - 1] = NV - 1;
    row[(NV - 1) * NV] = mu;
    for (int k = 0; k < NT; k++) row[(NV - 1) * NV + 1 + k] = -1;
    off[NV - 1] = 0;
    const sc_qpcc_contact c = {.normal = 0, .tangent = 1, .ntangent = NT, .slide = NV - 1};
    sc_qpcc p = {.base = {.n = NV, .H = H, .g = g}, .npairs = NV, .var = var, .row = row, .off = off, .ncontacts = 1, .contacts = &c};
    sc_qpcc_work *w = NULL;
    sc_err err;
    CHECK(sc_qpcc_work_create(NV, 0, NV, 64, &w, &err) == SC_OK, "%s", err.msg);
    unsigned char start[NV], state[NV];
    sc_qpcc_static_state(&p, start);
    double x[NV];
    sc_qpcc_result r;
    CHECK(sc_qpcc_solve(&p, w, start, x, state, &r, &err) == SC_OK, "%s", err.msg);
    sc_qpcc_work_free(w);
    double vx = v0[0];
    for (int k = 0; k < NT; k++) vx += x[1 + k] * d[k][0];
    CHECK(fabs(x[0] - 1) < 1e-6, "normal impulse %g, not 1", x[0]);
    *vx_after = vx;
    *lambda = x[NV - 1];
    *sliding = state[NV - 1];
    return 1;
}

TEST(qpcc_contact_sticks_below_the_friction_cone_and_slides_above_it)
{
    double vx, lambda;
    int sliding;
    ENSURE(one_contact(0.3, &vx, &lambda, &sliding));
    ENSURE_NEAR(vx, 0, 1e-6);
    ENSURE(!sliding);
    ENSURE(one_contact(2.0, &vx, &lambda, &sliding));
    ENSURE_NEAR(vx, 1.5, 1e-6);
    ENSURE_NEAR(lambda, 1.5, 1e-6);
    ENSURE(sliding);
}

#include "optim/lcp.h"

/* Lemke's method on random monotone LCPs (M = G G' + S, S skew: positive semi-definite, so
 * Lemke solves every feasible one): z >= 0, w = M z + q >= 0, z'w = 0. */
TEST(lcp_lemke_solves_random_monotone_problems)
{
    enum { N = 24 };
    static double M[N * N], G[N * N], q[N], z[N];
    double worst = 0;
    int nonzero = 0;
    for (int trial = 0; trial < 40; trial++) {
        sc_rng r;
        sc_rng_init(&r, 11, (uint32_t)trial, 0);
        const int n = 2 + trial % (N - 1);
        for (int i = 0; i < n * n; i++) G[i] = sc_rng_normal(&r);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) M[i * n + j] = dotn(n, G + i * n, G + j * n) / n + 0.01 * (i == j);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) { /* a skew part */
                const double s = 0.5 * sc_rng_normal(&r);
                M[i * n + j] += s;
                M[j * n + i] -= s;
            }
        for (int i = 0; i < n; i++) q[i] = sc_rng_normal(&r);
        sc_err err;
        ENSURE_OK(sc_lcp_lemke(n, M, q, z, 100 * n, &err), &err); /* positive definite: always solvable */
        for (int i = 0; i < n; i++) {
            const double w = dotn(n, M + i * n, z) + q[i];
            ENSURE_MSG(z[i] >= 0 && w >= -1e-9, "trial %d: z %g w %g", trial, z[i], w);
            worst = fmax(worst, fabs(z[i] * w));
            nonzero += z[i] > 0;
        }
    }
    sc_test_report("40 monotone LCPs: complementarity %.1e, %d positive z", worst, nonzero);
    ENSURE(worst < 1e-9 && nonzero > 50);
}

/* [T12]'s muscles and the solvers its controller needs. */
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "muscle/fibre.h"
#include "optim/skyline.h"
#include "test.h"

/* The unit corner tet (V = 1/6, Bm^-1 = I) with one segment along x: the tension
 * s = k (l - l_d) / l0 acts as the stress s e_x e_x', so node 1 (at x = 1) is pulled towards
 * node 0 by V s and node 0 the other way; nodes 2 and 3 feel nothing. k = 1200 Pa,
 * l = l0 = 0.2 m, l_d = 0.1 m: s = 600 Pa, |f| = 100 N. Rotated by R (the body turned, the
 * tet's R = R), the forces turn with it. */
TEST(muscle_force_of_one_fibre_by_hand)
{
    double rest[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, vol = 1.0 / 6, bm[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, mass[4] = {1, 1, 1, 1};
    int tets[4] = {0, 1, 2, 3};
    sc_model m = {.nnodes = 4, .ntets = 1, .rest_pos = rest, .tets = tets, .tet_volume = &vol, .bm_inv = bm, .node_mass = mass};
    double pts[6] = {0.1, 0.1, 0.1, 0.3, 0.1, 0.1};
    char names[1][SC_MUSCLE_NAME] = {"longitudinal"};
    int kind = SC_MUSCLE_LONGITUDINAL;
    sc_fibre_def fd = {.group = 0, .npoints = 2, .points = pts, .line = 7};
    sc_muscle_defs defs = {.ngroups = 1, .group_name = names, .group_kind = &kind, .nfibres = 1, .fibres = &fd, .stiffness = 1200, .sigma = 1e4, .min_ratio = 0.5};
    sc_muscles mu;
    sc_err err;
    ENSURE_OK(sc_muscles_build(&m, &defs, &mu, &err), &err);
    ENSURE(mu.nsegs == 1 && mu.inf_first[1] == 1);
    ENSURE_NEAR(mu.inf_w[0], 1, 1e-8);
    ENSURE_NEAR(mu.rest_len[0], 0.2, 1e-15);
    double rot[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, ld = 0.1, len, f[12] = {0};
    sc_muscle_forces(&mu, &m, rest, rot, &ld, &len, f);
    ENSURE_NEAR(len, 0.2, 1e-15);
    const double expect[12] = {100, 0, 0, -100, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 12; i++) ENSURE_NEAR(f[i], expect[i], 1e-6);
    /* A (l_d - l) is the same force */
    double A[12];
    sc_muscle_matrix(&mu, &m, rot, A);
    for (int i = 0; i < 12; i++) ENSURE_NEAR(A[i] * (ld - len), expect[i], 1e-6);
    /* turned by 90 degrees about z: x -> y */
    double x[12], R[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1};
    for (int i = 0; i < 4; i++)
        for (int r = 0; r < 3; r++) x[3 * i + r] = R[3 * r] * rest[3 * i] + R[3 * r + 1] * rest[3 * i + 1] + R[3 * r + 2] * rest[3 * i + 2];
    memset(f, 0, sizeof f);
    sc_muscle_forces(&mu, &m, x, R, &ld, &len, f);
    ENSURE_NEAR(len, 0.2, 1e-15);
    ENSURE_NEAR(f[1], 100, 1e-6);
    ENSURE_NEAR(f[4], -100, 1e-6);
    ENSURE_NEAR(f[0] + f[3], 0, 1e-9);
    sc_muscles_free(&mu);
    /* a point outside the body names its fibre and line */
    pts[3] = 2;
    ENSURE(sc_muscles_build(&m, &defs, &mu, &err) == SC_EINPUT);
    ENSURE_MSG(strstr(err.msg, "line 7") && strstr(err.msg, "outside"), "%s", err.msg);
}

/* The envelope Cholesky solves a random SPD system assembled from 3x3 node blocks of random
 * 4-node elements like a dense solve does. */
TEST(skyline_solves_like_a_dense_cholesky)
{
    enum { NN = 40, NE = 60, N = 3 * NN };
    int elem[4 * NE];
    sc_rng r;
    sc_rng_init(&r, 3, 0, 0);
    for (int e = 0; e < NE; e++)
        for (int k = 0; k < 4; k++) elem[4 * e + k] = (e + (int)(sc_rng_uniform(&r) * 6)) % NN; /* banded-ish, with repeats */
    static double dense[N * N], b[N], x[N], work[N];
    memset(dense, 0, sizeof dense);
    sc_skyline s;
    sc_err err;
    ENSURE_OK(sc_skyline_create(NN, NE, 4, elem, &s, &err), &err);
    for (int e = 0; e < NE; e++) /* each element adds G G' over its 12 unknowns */
    {
        double G[12][12];
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < 12; j++) G[i][j] = sc_rng_normal(&r);
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < 12; j++) {
                double v = 0;
                for (int k = 0; k < 12; k++) v += G[i][k] * G[j][k];
                const int gi = 3 * elem[4 * e + i / 3] + i % 3, gj = 3 * elem[4 * e + j / 3] + j % 3;
                dense[gi * N + gj] += v;
                if (gi >= gj) sc_skyline_add(&s, gi, gj, gi == gj ? v : v); /* lower half, once per pair of entries */
            }
    }
    for (int i = 0; i < N; i++) {
        dense[i * N + i] += 1;
        sc_skyline_add(&s, i, i, 1);
        b[i] = sc_rng_normal(&r);
    }
    ENSURE_OK(sc_skyline_factor(&s, &err), &err);
    memcpy(x, b, sizeof b);
    sc_skyline_solve(&s, x, work);
    double worst = 0, scale = 0;
    for (int i = 0; i < N; i++) {
        double ax = 0;
        for (int j = 0; j < N; j++) ax += dense[i * N + j] * x[j];
        worst = fmax(worst, fabs(ax - b[i]));
        scale = fmax(scale, fabs(b[i]));
    }
    sc_test_report("skyline: %zu envelope entries for %d unknowns, residual %.2e", sc_skyline_size(&s), N, worst);
    ENSURE(worst < 1e-9 * scale);
    sc_skyline_free(&s);
}

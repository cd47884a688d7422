/* [P17]'s reduced body (lib/reduced): the modal basis (mass-orthonormal, eigen-residuals, the
 * stiffness against the FEM's forces, a bar's axial and bending frequencies against beam
 * theory), the reduced step against the full FEM of the boneless body (muscle/softbody: the
 * same mesh, material and masses) with every mode kept and with a few, in fluid, a free body's
 * momentum, determinism, the /reduced group of character.h5 and mesh-prep's `reduced:` section. */
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "core/log.h"
#include "core/rng.h"
#include "core/mathx.h"
#include "fixtures.h"
#include "io/h5.h"
#include "muscle/softbody.h"
#include "reduced/basis.h"
#include "reduced/body.h"
#include "sim/fem.h"
#include "store/character.h"
#include "io/config.h"
#include "settings/reduced.h"
#include "store/reduced.h"
#include "test.h"

static char out[16384];

/* The bar of these tests: nx x 3 x 3 nodes 5 cm apart (length (nx - 1) 5 cm, 10 x 10 cm
   cross-section), density 1000, E 1e5 Pa. */
static int bar(sc_model *m, int nx, double poisson) { return sc_fixture_column(m, nx, 3, 3, 0.05, 1e5, poisson); }

/* the RMS over nodes of |a - b| */
static double rms_diff(int nn, const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < 3 * nn; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s / nn);
}

TEST(reduced_basis_orthonormal_with_small_residuals)
{
    sc_model m;
    ENSURE(bar(&m, 13, 0));
    sc_reduced_basis b;
    sc_reduced_basis_stats st;
    sc_err err;
    ENSURE_OK(sc_reduced_basis_compute(&m, 12, &b, &st, &err), &err);
    /* the purest axial mode: the one whose motion is most along the bar (x). On this mesh it is the
       second axial mode (c / L); the first (c / 2L) mixes with the second bending modes, of nearly
       the same frequency, through the cells' asymmetric split into tets */
    int axial = -1;
    double axial_share = 0;
    for (int k = 0; k < b.nmodes; k++) {
        double ex = 0;
        for (int i = 0; i < m.nnodes; i++) ex += m.node_mass[i] * b.phi[(3 * (size_t)i) * 12 + k] * b.phi[(3 * (size_t)i) * 12 + k];
        if (ex > axial_share) axial = k, axial_share = ex;
    }
    ENSURE(axial >= 0);
    /* free-free bar, L = 0.6 m: second axial mode c / L with c = sqrt(E / rho) = 10 m/s (Poisson 0: no
       lateral coupling); first bending (4.730^2 / 2 pi) sqrt(E I / (rho A L^4)), I = a^4 / 12 */
    const double L = 0.6, f_axial = 10 / L, f_bend = 4.730 * 4.730 / (2 * SC_PI) * sqrt(1e5 * pow(0.1, 4) / 12 / (1000 * 0.01 * pow(L, 4)));
    /* K u against the FEM's forces at X + eps u (the corotated force is -K u to first order) */
    sc_fem fem;
    ENSURE_OK(sc_fem_init(&fem, &m, &err), &err);
    double *warm = malloc(sizeof(double) * sc_fem_warm_size(&fem)), *x = malloc(sizeof(double) * 3 * m.nnodes),
           *f = calloc(3 * (size_t)m.nnodes, sizeof(double)), *ku = malloc(sizeof(double) * 3 * m.nnodes), *u = malloc(sizeof(double) * 3 * m.nnodes);
    sc_fem_warm_reset(&fem, warm);
    const double eps = 1e-7;
    for (int i = 0; i < 3 * m.nnodes; i++) {
        u[i] = sin(1.7 * i) + 0.3 * cos(0.3 * i * i);
        x[i] = m.rest_pos[i] + eps * u[i];
    }
    sc_fem_elastic_forces(&fem, x, NULL, warm, f, NULL);
    sc_reduced_stiffness_apply(&m, u, ku);
    double kdiff = 0, knorm = 0;
    for (int i = 0; i < 3 * m.nnodes; i++) {
        kdiff = fmax(kdiff, fabs(-f[i] / eps - ku[i]));
        knorm = fmax(knorm, fabs(ku[i]));
    }
    sc_test_report("bar 0.6 x 0.1 x 0.1 m (%d nodes, %d tets), 12 modes in %.3f s (%d Krylov vectors, %d solves): frequencies %.3f %.3f %.3f "
                   "%.3f %.3f %.3f ... %.3f Hz; purest axial mode %d (%.3f of its energy along x) at %.3f Hz (theory c / L = %.3f), first bending "
                   "%.3f Hz (Euler-Bernoulli %.3f, linear tets "
                   "are stiff in bending); |phi^T M phi - I| %.1e, rigid leak %.1e, max residual %.1e; K u against the FEM force off by %.1e of "
                   "its largest",
                   m.nnodes, m.ntets, st.seconds, st.subspace, st.solves, b.frequency[0], b.frequency[1], b.frequency[2], b.frequency[3],
                   b.frequency[4], b.frequency[5], b.frequency[11], axial, axial_share, b.frequency[axial], f_axial, b.frequency[0], f_bend,
                   st.orthonormality, st.rigid_leak, st.max_residual, kdiff / knorm);
    ENSURE(st.orthonormality < 1e-10 && st.rigid_leak < 1e-10 && st.max_residual <= SC_REDUCED_RESIDUAL_TOL);
    for (int k = 1; k < b.nmodes; k++) ENSURE(b.eigenvalue[k] >= b.eigenvalue[k - 1] && b.eigenvalue[0] > 0);
    ENSURE(axial_share > 0.95 && fabs(b.frequency[axial] / f_axial - 1) < 0.03);
    ENSURE(b.frequency[0] > f_bend && b.frequency[0] < 1.5 * f_bend);
    ENSURE(kdiff < 1e-5 * knorm);
    ENSURE_NEAR(b.mass, 1000 * 0.6 * 0.1 * 0.1, 1e-9);
    free(warm);
    free(x);
    free(f);
    free(ku);
    free(u);
    sc_fem_free(&fem);
    sc_reduced_basis_free(&b);
    sc_model_free(&m);
}

/* ---- the reduced body against the full FEM (muscle/softbody: corotated FEM, symplectic Euler) ---- */

typedef struct run_spec {
    double dt_full, dt_reduced, seconds;
    double beta;        /* Rayleigh beta of both */
    double spin[3];     /* rad/s: an initial rigid spin about the centre of mass ... */
    double velocity[3]; /* m/s: ... and velocity */
    sc_fluid_opts fluid;
    int samples; /* comparisons, evenly spaced */
    int dropped; /* 1: gravity and the ground (y = 0, mu 0.8): each model's own inelastic contact */
} run_spec;

typedef struct run_result {
    double err_rms;             /* the largest RMS nodal distance between the two over the samples (m) */
    double motion_rms;          /* the largest RMS nodal displacement of the full run from its start, less its rigid part ... (m) */
    double full_us, reduced_us; /* per step */
    double com_full[3], com_reduced[3];
} run_result;

/* m from nodal positions x0 (and the spin and velocity of spec) by the full FEM and by the
   reduced body of basis b, compared at spec->samples times */
static int compare_runs(const sc_model *m, const sc_reduced_basis *b, const double *x0, const run_spec *spec, run_result *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    sc_softbody_opts so;
    sc_softbody_default_opts(&so);
    so.dt = spec->dt_full;
    if (!spec->dropped) memset(so.gravity, 0, sizeof so.gravity);
    so.contact.enabled = spec->dropped;
    so.contact.mu = 0.8;
    so.rayleigh_beta = spec->beta;
    so.max_speed = 1e3;
    so.fluid = spec->fluid;
    sc_softbody *s;
    int rc = sc_softbody_create(m, NULL, &so, &s, err);
    if (rc) return rc;
    sc_reduced_opts ro;
    sc_reduced_default_opts(&ro);
    ro.dt = spec->dt_reduced;
    if (!spec->dropped) memset(ro.gravity, 0, sizeof ro.gravity);
    ro.ground.enabled = spec->dropped;
    ro.ground.mu = 0.8;
    ro.rayleigh_beta = spec->beta;
    ro.fluid = spec->fluid;
    sc_reduced_model rm;
    sc_reduced_state st;
    if ((rc = sc_reduced_model_create(m, b, &ro, &rm, err))) {
        sc_softbody_free(s);
        return rc;
    }
    if ((rc = sc_reduced_state_create(&rm, &st, err))) {
        sc_reduced_model_free(&rm);
        sc_softbody_free(s);
        return rc;
    }
    const int nn = m->nnodes;
    double *xr = malloc(sizeof(double) * 3 * nn), *x_start = malloc(sizeof(double) * 3 * nn);
    /* the initial state: x0 moving rigidly (spin about the centre of mass plus velocity) */
    double c[3] = {0, 0, 0}, mass = 0;
    for (int i = 0; i < nn; i++) {
        mass += m->node_mass[i];
        for (int a = 0; a < 3; a++) c[a] += m->node_mass[i] * x0[3 * i + a];
    }
    for (int a = 0; a < 3; a++) c[a] /= mass;
    memcpy(s->x, x0, sizeof(double) * 3 * nn);
    for (int i = 0; i < nn; i++) {
        const sc_vec3 v =
            sc_v3_add(sc_v3_load(spec->velocity), sc_v3_cross(sc_v3_load(spec->spin), sc_v3_sub(sc_v3_load(x0 + 3 * i), sc_v3_load(c))));
        sc_v3_store(s->v + 3 * i, v);
    }
    sc_reduced_set_nodes(&rm, &st, s->x, s->v);
    memcpy(x_start, x0, sizeof(double) * 3 * nn);
    const long full_steps = lround(spec->seconds / spec->dt_full), per_reduced = lround(spec->dt_reduced / spec->dt_full);
    const long every = full_steps / spec->samples;
    double t_full = 0, t_red = 0;
    for (long k = 1; k <= full_steps && !rc; k++) {
        double t0 = sc_wall_time();
        rc = sc_softbody_step(s, err);
        t_full += sc_wall_time() - t0;
        if (!rc && k % per_reduced == 0) {
            t0 = sc_wall_time();
            rc = sc_reduced_step(&rm, &st, err);
            t_red += sc_wall_time() - t0;
        }
        if (!rc && k % every == 0 && k % per_reduced == 0) {
            sc_reduced_nodes(&rm, &st, xr, NULL);
            r->err_rms = fmax(r->err_rms, rms_diff(nn, xr, s->x));
            /* the full run's deformation: its distance from the start pose carried rigidly by the best frame */
            sc_reduced_state fit = st;
            double *q = malloc(sizeof(double) * rm.nmodes), *qd = malloc(sizeof(double) * rm.nmodes), *xf = malloc(sizeof(double) * 3 * nn);
            fit.q = q;
            fit.qd = qd;
            sc_reduced_set_nodes(&rm, &fit, s->x, NULL);
            memset(q, 0, sizeof(double) * rm.nmodes);
            sc_reduced_nodes(&rm, &fit, xf, NULL);
            r->motion_rms = fmax(r->motion_rms, rms_diff(nn, xf, s->x));
            free(q);
            free(qd);
            free(xf);
        }
    }
    sc_softbody_diag d;
    sc_softbody_diagnostics(s, &d);
    memcpy(r->com_full, d.com, sizeof d.com);
    memcpy(r->com_reduced, st.pos, sizeof st.pos);
    r->full_us = 1e6 * t_full / full_steps;
    r->reduced_us = 1e6 * t_red / (full_steps / per_reduced);
    free(xr);
    free(x_start);
    sc_reduced_state_free(&st);
    sc_reduced_model_free(&rm);
    sc_softbody_free(s);
    return rc;
}

/* the bar's size: the diagonal of its rest bounding box */
static double body_size(const sc_model *m)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < m->nnodes; i++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fmin(lo[a], m->rest_pos[3 * i + a]);
            hi[a] = fmax(hi[a], m->rest_pos[3 * i + a]);
        }
    return sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) + (hi[2] - lo[2]) * (hi[2] - lo[2]));
}

TEST(reduced_all_modes_match_linear_fem)
{
    /* 3 x 2 x 2 nodes: 12 nodes, 36 unknowns, 30 non-rigid modes, all kept */
    sc_model m;
    ENSURE(sc_fixture_column(&m, 3, 2, 2, 0.05, 1e5, 0.3));
    sc_reduced_basis b;
    sc_reduced_basis_stats bs;
    sc_err err;
    ENSURE_OK(sc_reduced_basis_compute(&m, 30, &b, &bs, &err), &err);
    ENSURE(sc_reduced_max_modes(&m) == 30 && bs.max_residual < 1e-12);
    /* a small random deformation (1e-5 m on 5 cm elements: strains ~ 2e-4, where the corotated
       FEM is linear to ~1e-4 of the motion) */
    double *x0 = malloc(sizeof(double) * 3 * m.nnodes);
    sc_rng rng;
    sc_rng_init(&rng, 31, 1, 0);
    for (int i = 0; i < 3 * m.nnodes; i++) x0[i] = m.rest_pos[i] + 1e-5 * (sc_rng_uniform(&rng) - 0.5);
    /* both steps 2e-5 s: omega_max dt = 2 pi 100.8 Hz x 2e-5 = 0.013; the two schemes' phase errors
       ((omega dt)^2 / 24 and / 12 per radian) stay below 1e-3 of the motion over 0.1 s */
    const run_spec spec = {2e-5, 2e-5, 0.1, 0, {0, 0, 0}, {0, 0, 0}, {0, 0, {0, 0, 0}}, 50, 0};
    run_result r;
    ENSURE_OK(compare_runs(&m, &b, x0, &spec, &r, &err), &err);
    /* large steps: implicit midpoint keeps the undamped modes' energy at any step */
    sc_reduced_opts ro;
    sc_reduced_default_opts(&ro);
    ro.dt = 5e-3;
    ro.rayleigh_beta = 0;
    memset(ro.gravity, 0, sizeof ro.gravity);
    sc_reduced_model rm;
    sc_reduced_state st;
    ENSURE_OK(sc_reduced_model_create(&m, &b, &ro, &rm, &err), &err);
    ENSURE_OK(sc_reduced_state_create(&rm, &st, &err), &err);
    sc_reduced_set_nodes(&rm, &st, x0, NULL);
    sc_reduced_diag d0, d1;
    sc_reduced_diagnostics(&rm, &st, &d0);
    for (int k = 0; k < 2000; k++) ENSURE_OK(sc_reduced_step(&rm, &st, &err), &err);
    sc_reduced_diagnostics(&rm, &st, &d1);
    const double e0 = d0.kinetic + d0.elastic, e1 = d1.kinetic + d1.elastic;
    sc_test_report("all 30 modes of a 12-node block (%.1f..%.1f Hz), 1e-5 m random deformation, 0.1 s at dt 2e-5 s: reduced against the "
                   "full corotated FEM off by %.2e m RMS at worst, %.2e of the motion (%.2e m RMS); at dt 5e-3 s (omega_max dt = %.1f) "
                   "10 s: energy %.6e -> %.6e J (relative change %.1e)",
                   b.frequency[0], b.frequency[29], r.err_rms, r.err_rms / r.motion_rms, r.motion_rms, 2 * SC_PI * b.frequency[29] * 5e-3, e0, e1,
                   fabs(e1 - e0) / e0);
    ENSURE(r.motion_rms > 2e-6);
    ENSURE(r.err_rms < 1e-2 * r.motion_rms);
    ENSURE(fabs(e1 - e0) < 1e-9 * e0);
    free(x0);
    sc_reduced_state_free(&st);
    sc_reduced_model_free(&rm);
    sc_reduced_basis_free(&b);
    sc_model_free(&m);
}

/* the bar's static deflection under three-point bending (the end sections pushed up, the middle
   one down, no net force or moment) with the ends 2 cm above the middle: u = sum_k phi_k phi_k^T f /
   lambda_k over every non-rigid mode (the pseudo-inverse of K on the non-rigid space) */
static int bent_bar(const sc_model *m, double deflection, double *x0, sc_err *err)
{
    sc_reduced_basis all;
    int rc = sc_reduced_basis_compute(m, sc_reduced_max_modes(m), &all, NULL, err);
    if (rc) return rc;
    double L = 0;
    for (int i = 0; i < m->nnodes; i++) L = fmax(L, 2 * fabs(m->rest_pos[3 * i]));
    int ends = 0, mids = 0;
    for (int i = 0; i < m->nnodes; i++) {
        ends += fabs(fabs(m->rest_pos[3 * i]) - L / 2) < 1e-9;
        mids += fabs(m->rest_pos[3 * i]) < 1e-9;
    }
    const int K = all.nmodes, n3 = 3 * m->nnodes;
    double *f = calloc((size_t)n3, sizeof(double)), *u = calloc((size_t)n3, sizeof(double));
    for (int i = 0; i < m->nnodes; i++) {
        if (fabs(fabs(m->rest_pos[3 * i]) - L / 2) < 1e-9) f[3 * i + 1] = 1.0 / ends;
        if (fabs(m->rest_pos[3 * i]) < 1e-9) f[3 * i + 1] = -2.0 / mids;
    }
    for (int k = 0; k < K; k++) {
        double p = 0;
        for (int j = 0; j < n3; j++) p += all.phi[(size_t)j * K + k] * f[j];
        for (int j = 0; j < n3; j++) u[j] += all.phi[(size_t)j * K + k] * p / all.eigenvalue[k];
    }
    double end_u = 0, mid_u = 0; /* the mean deflection of the end and middle sections */
    for (int i = 0; i < m->nnodes; i++) {
        if (fabs(fabs(m->rest_pos[3 * i]) - L / 2) < 1e-9) end_u += u[3 * i + 1] / ends;
        if (fabs(m->rest_pos[3 * i]) < 1e-9) mid_u += u[3 * i + 1] / mids;
    }
    for (int j = 0; j < n3; j++) x0[j] = m->rest_pos[j] + deflection / (end_u - mid_u) * u[j];
    free(f);
    free(u);
    sc_reduced_basis_free(&all);
    return SC_OK;
}

TEST(reduced_bar_released_against_full_fem)
{
    sc_model m;
    ENSURE(bar(&m, 13, 0.3));
    const double size = body_size(&m);
    double *x0 = malloc(sizeof(double) * 3 * m.nnodes);
    static const int modes[] = {5, 10, 20};
    static const double bends[] = {2e-4, 2e-3, 2e-2}; /* m at the ends: 0.03 %, 0.3 % and 3 % of the length */
    double err[3][3][2], motion[3], full_us = 0, red_us[3] = {0}, f0 = 0;
    sc_reduced_basis b[3];
    sc_err e;
    for (int j = 0; j < 3; j++) ENSURE_OK(sc_reduced_basis_compute(&m, modes[j], &b[j], NULL, &e), &e);
    f0 = b[0].frequency[0];
    for (int a = 0; a < 3; a++) {
        ENSURE_OK(bent_bar(&m, bends[a], x0, &e), &e);
        for (int j = 0; j < 3; j++)
            for (int big = 0; big < 2; big++) { /* the full FEM's step, and ten times it */
                const run_spec spec = {5e-4, big ? 5e-3 : 5e-4, 1.0, 2e-4, {0, 0, 0}, {0, 0, 0}, {0, 0, {0, 0, 0}}, 100, 0};
                run_result r;
                ENSURE_OK(compare_runs(&m, &b[j], x0, &spec, &r, &e), &e);
                err[a][j][big] = r.err_rms / size;
                if (!big) red_us[j] = r.reduced_us;
                full_us = r.full_us;
                motion[a] = r.motion_rms;
            }
    }
    char table[2048] = "";
    for (int a = 0; a < 3; a++)
        snprintf(table + strlen(table), sizeof table - strlen(table),
                 "\n      bent %.0e m (deformation %.2e m RMS): K = 5, 10, 20: %.2e %.2e %.2e at dt 5e-4 s, %.2e %.2e %.2e at dt 5e-3 s "
                 "(K = 20 off by %.1f %% of the motion)",
                 bends[a], motion[a], err[a][0][0], err[a][1][0], err[a][2][0], err[a][0][1], err[a][1][1], err[a][2][1],
                 100 * err[a][2][0] * size / motion[a]);
    sc_test_report("bar 0.6 x 0.1 x 0.1 m (%d nodes, %d tets, first mode %.2f Hz) bent statically (three-point load) and released, 1 s, "
                   "Rayleigh beta 2e-4, against the full corotated FEM at dt 5e-4 s: nodal error RMS / body size (%.3f m):%s"
                   "\n      the error grows about with the square of the bend: the corotated FEM is geometrically nonlinear (its force has "
                   "terms quadratic in the displacement), linear modes are not ([P17]'s rotation-strain basis addresses this); per step without drag "
                   "or ground: full FEM %.1f us, reduced %.2f, %.2f, %.2f us",
                   m.nnodes, m.ntets, f0, size, table, full_us, red_us[0], red_us[1], red_us[2]);
    ENSURE(motion[0] > 5e-5 && motion[2] > 5e-3);
    ENSURE(err[0][2][0] < err[0][0][0]);                              /* more modes, closer, where the model is linear */
    ENSURE(err[0][2][0] * size < 0.03 * motion[0]);                   /* small bend, 20 modes: within 3 % of the motion */
    ENSURE(err[0][1][1] * size < 0.1 * motion[0]);                    /* ten times the step, 10 modes: within 10 % */
    ENSURE(err[2][2][0] / err[0][2][0] > 10 * (bends[2] / bends[0])); /* the nonlinear error: faster than linear in the bend */
    for (int j = 0; j < 3; j++) sc_reduced_basis_free(&b[j]);
    free(x0);
    sc_model_free(&m);
}

TEST(reduced_free_body_in_fluid_against_full_fem)
{
    /* the bar thrown through still water, spinning: 1 m/s along x and 0.5 m/s up, 3 rad/s about
       the diagonal (1, 1, 1), no gravity (a body as dense as water floats) */
    sc_model m;
    ENSURE(bar(&m, 13, 0.3));
    sc_reduced_basis b;
    sc_err e;
    ENSURE_OK(sc_reduced_basis_compute(&m, 10, &b, NULL, &e), &e);
    const double w = 3 / sqrt(3), size = body_size(&m);
    double err[2], com_err[2], travel = 0, full_us = 0, red_us[2];
    for (int big = 0; big < 2; big++) {
        const run_spec spec = {5e-4, big ? 5e-3 : 5e-4, 1.0, 2e-4, {w, w, w}, {1, 0.5, 0}, {1000, 1, {0, 0, 0}}, 100, 0};
        run_result r;
        ENSURE_OK(compare_runs(&m, &b, m.rest_pos, &spec, &r, &e), &e);
        err[big] = r.err_rms / size;
        com_err[big] = sc_v3_dist(sc_v3_load(r.com_full), sc_v3_load(r.com_reduced));
        travel = sc_v3_norm(sc_v3_sub(sc_v3_load(r.com_full), sc_v3_load(b.com)));
        full_us = r.full_us;
        red_us[big] = r.reduced_us;
    }
    sc_test_report("bar thrown through water (1.12 m/s, 3 rad/s), 1 s, 10 modes: the centre of mass travels %.3f m; the reduced body's nodal "
                   "error RMS / body size %.2e at dt 5e-4 s, %.2e at dt 5e-3 s; its centre of mass %.1e and %.1e m off the full FEM's; per step "
                   "with the drag: full %.1f us, reduced %.1f us (%.1f x; at dt 5e-3 s %.0f x per simulated second)",
                   travel, err[0], err[1], com_err[0], com_err[1], full_us, red_us[0], full_us / red_us[0], 10 * full_us / red_us[1]);
    ENSURE(travel > 0.3 && travel < 1.12); /* the drag slowed it */
    ENSURE(err[0] < 0.01 && err[1] < 0.02);
    ENSURE(com_err[0] < 0.005 * travel);
    sc_reduced_basis_free(&b);
    sc_model_free(&m);
}

/* a reduced body of the bar (10 modes) with options o, set in motion: velocity v, spin w and the
   modes bent (q_k = 0.01 / (k + 1)) */
static int launch(sc_model *m, sc_reduced_basis *b, sc_reduced_model *rm, sc_reduced_state *s, const sc_reduced_opts *o, const double v[3],
                  const double w[3], sc_err *err)
{
    int rc;
    if (!bar(m, 13, 0.3)) return sc_fail(err, SC_EIO, "the bar fixture failed");
    if ((rc = sc_reduced_basis_compute(m, 10, b, NULL, err)) || (rc = sc_reduced_model_create(m, b, o, rm, err)) ||
        (rc = sc_reduced_state_create(rm, s, err)))
        return rc;
    memcpy(s->vel, v, 3 * sizeof(double));
    sc_mat3 J;
    memcpy(J.m, b->inertia, sizeof J.m);
    sc_v3_store(s->ang_mom, sc_m3_mulv(J, sc_v3_load(w)));
    memcpy(s->omega, w, 3 * sizeof(double));
    for (int k = 0; k < rm->nmodes; k++) s->q[k] = 0.01 / (k + 1);
    return SC_OK;
}

static void land(sc_model *m, sc_reduced_basis *b, sc_reduced_model *rm, sc_reduced_state *s)
{
    sc_reduced_state_free(s);
    sc_reduced_model_free(rm);
    sc_reduced_basis_free(b);
    sc_model_free(m);
}

/* the nodal linear and angular momentum (about the centre of mass) of a reduced state */
static void nodal_momentum(const sc_model *m, const sc_reduced_model *rm, const sc_reduced_state *s, double *x, double *v, sc_vec3 *p, sc_vec3 *L)
{
    sc_reduced_nodes(rm, s, x, v);
    *p = *L = sc_v3(0, 0, 0);
    for (int i = 0; i < m->nnodes; i++) {
        const sc_vec3 vi = sc_v3_scale(sc_v3_load(v + 3 * i), m->node_mass[i]);
        *p = sc_v3_add(*p, vi);
        *L = sc_v3_add(*L, sc_v3_cross(sc_v3_sub(sc_v3_load(x + 3 * i), sc_v3_load(s->pos)), vi));
    }
}

TEST(reduced_free_body_conserves_momentum)
{
    sc_reduced_opts o;
    sc_reduced_default_opts(&o);
    memset(o.gravity, 0, sizeof o.gravity);
    o.rayleigh_beta = 0;
    sc_model m;
    sc_reduced_basis b;
    sc_reduced_model rm;
    sc_reduced_state s;
    sc_err err;
    const double v[3] = {0.3, -0.2, 0.1}, w[3] = {1, 2, -0.5}; /* a spin about no principal axis: it tumbles */
    ENSURE_OK(launch(&m, &b, &rm, &s, &o, v, w, &err), &err);
    double *x = malloc(sizeof(double) * 3 * m.nnodes), *vn = malloc(sizeof(double) * 3 * m.nnodes);
    sc_vec3 p0, L0, p1, L1;
    nodal_momentum(&m, &rm, &s, x, vn, &p0, &L0);
    const sc_vec3 frame_L0 = sc_v3_load(s.ang_mom);
    sc_reduced_diag d0, d1;
    sc_reduced_diagnostics(&rm, &s, &d0);
    double worst_p = 0, worst_L = 0;
    for (int k = 0; k < 2000; k++) { /* 10 s at dt 5e-3 */
        ENSURE_OK(sc_reduced_step(&rm, &s, &err), &err);
        nodal_momentum(&m, &rm, &s, x, vn, &p1, &L1);
        worst_p = fmax(worst_p, sc_v3_dist(p1, p0));
        worst_L = fmax(worst_L, sc_v3_dist(L1, L0));
    }
    sc_reduced_diagnostics(&rm, &s, &d1);
    const double frame_drift = sc_v3_dist(sc_v3_load(s.ang_mom), frame_L0);
    sc_test_report("free bar, 10 modes bent, tumbling at |w| %.2f rad/s, 10 s at dt 5e-3 s: the frame's L %.6f kg m^2/s unchanged to %.1e; "
                   "the nodes' linear momentum %.4f kg m/s off by %.1e at most, their angular momentum %.6f off by %.1e at most (%.1e of it: "
                   "the modes' own momentum, second order in q, which the frame does not see); energy %.6f -> %.6f J",
                   sc_v3_norm(sc_v3_load(w)), sc_v3_norm(frame_L0), frame_drift, sc_v3_norm(p0), worst_p, sc_v3_norm(L0), worst_L,
                   worst_L / sc_v3_norm(L0), d0.kinetic + d0.elastic, d1.kinetic + d1.elastic);
    ENSURE(frame_drift == 0);
    ENSURE(worst_p < 1e-12 * sc_v3_norm(p0));
    ENSURE(worst_L < 0.02 * sc_v3_norm(L0));
    /* the energy is not conserved exactly: the centrifugal load works on the modes while the frame's
       inertia stays the rest one (body.h's simplification) */
    ENSURE(fabs(d1.kinetic + d1.elastic - d0.kinetic - d0.elastic) < 0.1 * (d0.kinetic + d0.elastic));
    free(x);
    free(vn);
    land(&m, &b, &rm, &s);
}

/* the bar dropped from 0.3 m, tumbling, onto the ground, in water (drag) and under gravity: the
   state's hash after 2 s */
static int drop(uint64_t *hash, double *rest_height, double *lowest, int *contacts, sc_err *err)
{
    sc_reduced_opts o;
    sc_reduced_default_opts(&o);
    o.ground.enabled = 1;
    o.fluid.density = 1000;
    o.fluid.drag = 1;
    sc_model m;
    sc_reduced_basis b;
    sc_reduced_model rm;
    sc_reduced_state s;
    const double v[3] = {0.5, 0, 0}, w[3] = {0, 1, 2};
    int rc = launch(&m, &b, &rm, &s, &o, v, w, err);
    s.pos[1] += 0.3;
    for (int k = 0; k < 400 && !rc; k++) rc = sc_reduced_step(&rm, &s, err);
    double *x = malloc(sizeof(double) * 3 * m.nnodes);
    sc_reduced_nodes(&rm, &s, x, NULL);
    *lowest = INFINITY;
    for (int i = 0; i < m.nnodes; i++) *lowest = fmin(*lowest, x[3 * i + 1]);
    *hash = sc_reduced_state_hash(&rm, &s);
    *rest_height = s.pos[1];
    *contacts = s.contacts;
    free(x);
    land(&m, &b, &rm, &s);
    return rc;
}

TEST(reduced_runs_are_bit_identical)
{
    uint64_t h1, h2;
    double y1, y2, low1, low2;
    int c1, c2;
    sc_err err;
    ENSURE_OK(drop(&h1, &y1, &low1, &c1, &err), &err);
    ENSURE_OK(drop(&h2, &y2, &low2, &c2, &err), &err);
    /* at rest on a side, the centre 5 cm up (the bar is 10 cm thick), no node below the ground by more than a
       fifth of a step's sinking */
    sc_test_report("the bar dropped from 0.3 m into water onto the ground, tumbling, 2 s at dt 5e-3 s: twice %016llx and %016llx; it lies with "
                   "its centre of mass %.4f m up, its lowest node %.4f m, %d boundary nodes in contact",
                   (unsigned long long)h1, (unsigned long long)h2, y1, low1, c1);
    ENSURE(h1 == h2 && y1 == y2);
    ENSURE(fabs(y1 - 0.05) < 0.001 && low1 > -1e-4 && c1 >= 3);
}

/* mesh-prep with `reduced: {modes: 8}` on the letter I: character.h5's /reduced read back and
   checked against the character's masses; a /reduced of another mesh and a basis of the wrong
   shape refused naming the HDF5 path */
TEST(reduced_meshprep_writes_the_basis)
{
    const char *cfg = sc_test_write("reduced_I.yaml", "body: {letter: I}\ntetgen: {target_tets: 300}\nreduced:\n  modes: 8\n");
    const char *ch = sc_test_tmp("reduced_I.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s", sc_test_tool("mesh-prep"), cfg, ch);
    ENSURE_MSG(rc == 0 && strstr(out, "reduced       8 modes"), "exit %d: %s", rc, out);
    sc_model m;
    sc_reduced_basis b;
    int present;
    sc_err err;
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    ENSURE_OK(sc_character_read_reduced(ch, &m, &b, &present, &err), &err);
    ENSURE(present && b.nmodes == 8 && b.nnodes == m.nnodes);
    double ortho = 0, worst_res = 0;
    for (int p = 0; p < 8; p++) {
        for (int q = 0; q < 8; q++) {
            double s = 0;
            for (int i = 0; i < 3 * m.nnodes; i++) s += m.node_mass[i / 3] * b.phi[(size_t)i * 8 + p] * b.phi[(size_t)i * 8 + q];
            ortho = fmax(ortho, fabs(s - (p == q)));
        }
        worst_res = fmax(worst_res, b.residual[p]);
    }
    /* recomputed from the file's mesh: the same modes */
    sc_reduced_basis again;
    ENSURE_OK(sc_reduced_basis_compute(&m, 8, &again, NULL, &err), &err);
    double df = 0;
    for (int k = 0; k < 8; k++) df = fmax(df, fabs(again.frequency[k] - b.frequency[k]) / b.frequency[k]);
    sc_test_report("letter I (%d nodes, %d tets, %.1f kg): 8 modes %.3f, %.3f, %.3f, %.3f, %.3f, %.3f, %.3f, %.3f Hz; read back: |phi^T M phi - I| "
                   "%.1e with the file's masses, residuals <= %.1e, recomputed frequencies agree to %.1e",
                   m.nnodes, m.ntets, b.mass, b.frequency[0], b.frequency[1], b.frequency[2], b.frequency[3], b.frequency[4], b.frequency[5],
                   b.frequency[6], b.frequency[7], ortho, worst_res, df);
    ENSURE(ortho < 1e-10 && worst_res <= SC_REDUCED_RESIDUAL_TOL && df < 1e-9);
    /* a /reduced made for another mesh, and one whose basis has a column too few */
    sc_model other;
    ENSURE(bar(&other, 5, 0.3));
    sc_reduced_basis ob;
    ENSURE_OK(sc_reduced_basis_compute(&other, 4, &ob, NULL, &err), &err);
    const char *bad1 = sc_test_tmp("reduced_other.h5"), *bad2 = sc_test_tmp("reduced_shape.h5");
    sc_h5 *f;
    ENSURE_OK(sc_h5_create_from(ch, bad1, &f, &err), &err);
    ENSURE_OK(sc_h5_delete(f, "/reduced", &err), &err);
    ENSURE_OK(sc_character_write_reduced(f, &ob, &err), &err);
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    ENSURE_OK(sc_h5_create_from(ch, bad2, &f, &err), &err);
    ENSURE_OK(sc_h5_delete(f, "/reduced/basis", &err), &err);
    const size_t dims[2] = {3 * (size_t)m.nnodes, 7};
    ENSURE_OK(sc_h5_write_f64(f, "/reduced/basis", 2, dims, b.phi, "1/sqrt(kg)", "a column short", &err), &err);
    ENSURE_OK(sc_h5_commit(f, &err), &err);
    sc_reduced_basis r;
    sc_err e1, e2;
    const int rc1 = sc_character_read_reduced(bad1, &m, &r, &present, &e1), rc2 = sc_character_read_reduced(bad2, &m, &r, &present, &e2);
    sc_test_report("refused: %s; %s", e1.msg, e2.msg);
    ENSURE(rc1 == SC_EINPUT && strstr(e1.msg, "reduced_other.h5:/reduced") && strstr(e1.msg, "nodes"));
    ENSURE(rc2 == SC_EINPUT && strstr(e2.msg, "reduced_shape.h5") && strstr(e2.msg, "/reduced/basis"));
    sc_reduced_basis_free(&ob);
    sc_reduced_basis_free(&again);
    sc_reduced_basis_free(&b);
    sc_model_free(&other);
    sc_model_free(&m);
}

/* `reduced:` values refused by mesh-prep, exit 2 naming the line, nothing written; and more modes
   than a mesh has (a 2 x 2 x 2 node cube: 18), or a character with bones, refused naming the line */
TEST(reduced_config_errors)
{
    static const struct {
        const char *section, *want;
    } bad[] = {
        {"{modes: 0}", ":4:18: key 'reduced.modes' = 0 is outside [1, 30]"},
        {"{modes: -3}", "'reduced.modes' = -3 is outside [1, 30]"},
        {"{modes: 31}", "'reduced.modes' = 31 is outside [1, 30]"},
        {"{modes: many}", "'reduced.modes'"},
        {"{mode: 5}", "unknown key 'mode' in 'reduced' (did you mean 'modes'?)"},
        {"7", "'reduced' must be a mapping"},
    };
    char said[4096] = "";
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char name[64], text[256];
        snprintf(name, sizeof name, "reduced_bad_%zu.yaml", k);
        snprintf(text, sizeof text, "body: {letter: I}\ntetgen: {target_tets: 300}\n# the basis\nreduced: %s\n", bad[k].section);
        const char *cfg = sc_test_write(name, text), *o = sc_test_tmp("reduced_bad.h5");
        const int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s", sc_test_tool("mesh-prep"), cfg, o);
        ENSURE_MSG(rc == 2 && strstr(out, ".yaml:4:") && strstr(out, bad[k].want), "reduced: %s: exit %d: %s", bad[k].section, rc, out);
        ENSURE_MSG(!sc_test_file_exists(o), "reduced: %s left output", bad[k].section);
        const char *msg = strstr(out, ".yaml:4:");
        snprintf(said + strlen(said), sizeof said - strlen(said), "\n      %.*s", (int)strcspn(msg, "\n"), msg);
    }
    sc_test_report("%zu bad reduced sections: exit 2 naming line 4, no output:%s", sizeof bad / sizeof *bad, said);
    /* against the mesh: the library's check, as mesh-prep runs it once the tet mesh exists */
    sc_model cube, block;
    ENSURE(sc_fixture_column(&cube, 2, 2, 2, 0.1, 1e5, 0.3));
    ENSURE(sc_fixture_block(&block, 3, 0.05, 1e5));
    sc_cfg *cfg;
    sc_err err;
    ENSURE_OK(sc_cfg_load_string("body: {letter: I}\nreduced:\n  modes: 20\n", "reduced_cube.yaml", &cfg, &err), &err);
    sc_reduced_settings rs;
    int present;
    ENSURE_OK(sc_reduced_settings_read(cfg, &rs, &present, &err), &err);
    ENSURE(present && rs.modes == 20);
    sc_err e1, e2;
    const int rc1 = sc_reduced_settings_check(&rs, &cube, &e1), rc2 = sc_reduced_settings_check(&rs, &block, &e2);
    sc_test_report("%s; %s", e1.msg, e2.msg);
    ENSURE(rc1 == SC_EINPUT && strstr(e1.msg, "reduced_cube.yaml:3:10") && strstr(e1.msg, "only 18 non-rigid modes"));
    ENSURE(rc2 == SC_EINPUT && strstr(e2.msg, "reduced_cube.yaml:3:10") && strstr(e2.msg, "boneless"));
    /* and the library refuses what the config cannot say */
    sc_reduced_basis b;
    ENSURE(sc_reduced_basis_compute(&cube, 19, &b, NULL, &err) == SC_EINPUT && sc_reduced_basis_compute(&cube, 0, &b, NULL, &err) == SC_EINPUT);
    sc_cfg_free(cfg);
    sc_model_free(&cube);
    sc_model_free(&block);
}

/* a modal control force (an internal force: the frame stays) holds its mode at u / lambda; under
   backward Euler a free vibration loses energy every step, at any step */
TEST(reduced_modal_control_and_backward_euler)
{
    sc_reduced_opts o;
    sc_reduced_default_opts(&o);
    memset(o.gravity, 0, sizeof o.gravity);
    o.scheme = SC_REDUCED_BACKWARD_EULER;
    o.rayleigh_beta = 0;
    sc_model m;
    sc_reduced_basis b;
    sc_reduced_model rm;
    sc_reduced_state s;
    sc_err err;
    const double zero[3] = {0, 0, 0};
    ENSURE_OK(launch(&m, &b, &rm, &s, &o, zero, zero, &err), &err);
    sc_reduced_diag d;
    sc_reduced_diagnostics(&rm, &s, &d);
    double e_prev = d.kinetic + d.elastic, rises = 0;
    const double e0 = e_prev;
    for (int k = 0; k < 400; k++) {
        ENSURE_OK(sc_reduced_step(&rm, &s, &err), &err);
        sc_reduced_diagnostics(&rm, &s, &d);
        rises += d.kinetic + d.elastic > e_prev;
        e_prev = d.kinetic + d.elastic;
    }
    sc_reduced_state_reset(&rm, &s);
    const double u = 2.0; /* N/sqrt(kg) on mode 0 */
    s.control[0] = u;
    for (int k = 0; k < 4000; k++) ENSURE_OK(sc_reduced_step(&rm, &s, &err), &err);
    const double want = u / b.eigenvalue[0], moved = sc_v3_dist(sc_v3_load(s.pos), sc_v3_load(b.com));
    double others = 0;
    for (int k = 1; k < rm.nmodes; k++) others = fmax(others, fabs(s.q[k]));
    sc_test_report("backward Euler at dt 5e-3 s: the free vibration's energy %.4f -> %.4f J in 2 s, rising in %.0f of 400 steps; a control force "
                   "%.1f N/sqrt(kg) on mode 0 (%.3f Hz) holds q_0 = %.6e m sqrt(kg) after 20 s (u / lambda = %.6e), the other modes <= %.1e, "
                   "the frame %.1e m from where it was",
                   e0, e_prev, rises, u, b.frequency[0], s.q[0], want, others, moved);
    ENSURE(rises == 0 && e_prev < 0.5 * e0);
    ENSURE(fabs(s.q[0] - want) < 1e-6 * want && others == 0 && moved == 0);
    land(&m, &b, &rm, &s);
}

/* the bar dropped flat from 10 cm onto the ground, tilted 10 degrees about z so one end lands
   first: the full FEM with [T12]'s per-node contact, the reduced body with its coupled impulses */
TEST(reduced_bar_dropped_against_full_fem)
{
    sc_model m;
    ENSURE(bar(&m, 13, 0.3));
    sc_reduced_basis b;
    sc_err e;
    ENSURE_OK(sc_reduced_basis_compute(&m, 10, &b, NULL, &e), &e);
    double *x0 = malloc(sizeof(double) * 3 * m.nnodes);
    const double a = 10 * SC_PI / 180;
    for (int i = 0; i < m.nnodes; i++) {
        const double *X = m.rest_pos + 3 * i, y = X[1] - 0.05;
        x0[3 * i] = cos(a) * X[0] - sin(a) * y;
        x0[3 * i + 1] = sin(a) * X[0] + cos(a) * y + 0.05 + 0.1 + 0.3 * sin(a);
        x0[3 * i + 2] = X[2];
    }
    double err[2], com_err[2], rest_full = 0, rest_red[2], full_us = 0, red_us[2];
    for (int big = 0; big < 2; big++) {
        const run_spec spec = {5e-4, big ? 5e-3 : 5e-4, 1.5, 2e-4, {0, 0, 0}, {0, 0, 0}, {0, 0, {0, 0, 0}}, 150, 1};
        run_result r;
        ENSURE_OK(compare_runs(&m, &b, x0, &spec, &r, &e), &e);
        err[big] = r.err_rms / body_size(&m);
        com_err[big] = sc_v3_dist(sc_v3_load(r.com_full), sc_v3_load(r.com_reduced));
        rest_full = r.com_full[1];
        rest_red[big] = r.com_reduced[1];
        full_us = r.full_us;
        red_us[big] = r.reduced_us;
    }
    sc_test_report("bar dropped from 10 cm, tilted 10 deg, 1.5 s, 10 modes: at rest the full FEM's centre of mass %.4f m up, the reduced "
                   "body's %.4f (dt 5e-4 s) and %.4f m (dt 5e-3 s); nodal error RMS / body size over the fall, the impact and the rest %.2e and "
                   "%.2e, the centres of mass %.1e and %.1e m apart at the end; per step with the ground: full %.1f us, reduced %.1f and %.1f us",
                   rest_full, rest_red[0], rest_red[1], err[0], err[1], com_err[0], com_err[1], full_us, red_us[0], red_us[1]);
    ENSURE(fabs(rest_full - 0.05) < 0.002 && fabs(rest_red[0] - 0.05) < 0.002 && fabs(rest_red[1] - 0.05) < 0.002);
    /* the two contacts differ (per node and inelastic against coupled through the body): the slide after the
       impact differs by a few cm, the fall and the rest agree */
    ENSURE(err[0] < 0.1 && err[1] < 0.1 && com_err[0] < 0.06 && com_err[1] < 0.06);
    free(x0);
    sc_reduced_basis_free(&b);
    sc_model_free(&m);
}

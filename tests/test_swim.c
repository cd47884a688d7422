/* [P17]'s swimming controllers (lib/reduced/dmp, lib/reduced/swim) and their optimiser
 * (lib/optim/lbfgs): L-BFGS on problems of known minimum, the DMPs' phase and periodicity, a
 * short optimisation of a small bar's swim, and the threads' determinism. reduced-opt's tool
 * tests are at the end. */
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "fixtures.h"
#include "optim/lbfgs.h"
#include "reduced/basis.h"
#include "reduced/body.h"
#include "reduced/dmp.h"
#include "reduced/swim.h"
#include "test.h"

/* ---- L-BFGS ---- */

/* the extended Rosenbrock function: sum over pairs of 100 (x2 - x1^2)^2 + (1 - x1)^2, minimum 0 at (1, ..., 1) */
static int rosenbrock(void *ctx, const double *x, double *f, double *g, sc_err *err)
{
    (void)err;
    const int n = *(const int *)ctx;
    *f = 0;
    for (int i = 0; i < n; i += 2) {
        const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
        *f += 100 * a * a + b * b;
        g[i] = -400 * a * x[i] - 2 * b;
        g[i + 1] = 200 * a;
    }
    return 0;
}

/* 1/2 x'Ax - b'x with A = Q diag(1 .. 1e4) Q' (Q a product of Givens rotations), minimum at A^-1 b */
#define QUAD_N 20
typedef struct quad {
    double A[QUAD_N * QUAD_N], b[QUAD_N];
} quad;

static int quadratic(void *ctx, const double *x, double *f, double *g, sc_err *err)
{
    (void)err;
    const quad *q = ctx;
    *f = 0;
    for (int i = 0; i < QUAD_N; i++) {
        double ax = 0;
        for (int j = 0; j < QUAD_N; j++) ax += q->A[i * QUAD_N + j] * x[j];
        g[i] = ax - q->b[i];
        *f += 0.5 * x[i] * ax - q->b[i] * x[i];
    }
    return 0;
}

TEST(lbfgs_rosenbrock_and_convex_quadratic)
{
    sc_lbfgs_opts o;
    sc_lbfgs_default_opts(&o);
    o.max_iterations = 500;
    o.gtol = 1e-10;
    o.ftol = 0;
    sc_lbfgs_result r2, r10, rq;
    sc_err err;
    int n = 2;
    double x2[2] = {-1.2, 1};
    ENSURE_OK(sc_lbfgs_minimize(2, x2, rosenbrock, &n, &o, NULL, &r2, &err), &err);
    int n10 = 10;
    double x10[10];
    for (int i = 0; i < 10; i++) x10[i] = i % 2 ? 1 : -1.2;
    ENSURE_OK(sc_lbfgs_minimize(10, x10, rosenbrock, &n10, &o, NULL, &r10, &err), &err);
    double e10 = 0;
    for (int i = 0; i < 10; i++) e10 = fmax(e10, fabs(x10[i] - 1));
    /* the quadratic: eigenvalues 10^(4 i / (n - 1)), eigenvectors rotated by Givens pairs; x* = Q diag^-1 Q' b */
    static quad q;
    double Q[QUAD_N * QUAD_N] = {0}, lam[QUAD_N], xstar[QUAD_N], x[QUAD_N] = {0};
    for (int i = 0; i < QUAD_N; i++) Q[i * QUAD_N + i] = 1, lam[i] = pow(10, 4.0 * i / (QUAD_N - 1)), q.b[i] = sin(1.3 * i + 0.2);
    for (int k = 0; k < 3 * QUAD_N; k++) {
        const int i = k % QUAD_N, j = (7 * k + 3) % QUAD_N;
        if (i == j) continue;
        const double c = cos(0.37 * k + 0.1), s = sin(0.37 * k + 0.1);
        for (int r = 0; r < QUAD_N; r++) {
            const double a = Q[r * QUAD_N + i], b = Q[r * QUAD_N + j];
            Q[r * QUAD_N + i] = c * a - s * b;
            Q[r * QUAD_N + j] = s * a + c * b;
        }
    }
    for (int i = 0; i < QUAD_N; i++)
        for (int j = 0; j < QUAD_N; j++) {
            double s = 0;
            for (int k = 0; k < QUAD_N; k++) s += Q[i * QUAD_N + k] * lam[k] * Q[j * QUAD_N + k];
            q.A[i * QUAD_N + j] = s;
        }
    double fstar = 0;
    for (int i = 0; i < QUAD_N; i++) {
        double s = 0;
        for (int k = 0; k < QUAD_N; k++) {
            double qb = 0;
            for (int j = 0; j < QUAD_N; j++) qb += Q[j * QUAD_N + k] * q.b[j];
            s += Q[i * QUAD_N + k] * qb / lam[k];
        }
        xstar[i] = s;
    }
    for (int i = 0; i < QUAD_N; i++) fstar -= 0.5 * q.b[i] * xstar[i];
    o.max_iterations = 2000; /* Wolfe steps with c2 = 0.9 are far from exact: many more than n iterations */
    ENSURE_OK(sc_lbfgs_minimize(QUAD_N, x, quadratic, &q, &o, NULL, &rq, &err), &err);
    double eq = 0, xs = 0;
    for (int i = 0; i < QUAD_N; i++) eq = fmax(eq, fabs(x[i] - xstar[i])), xs = fmax(xs, fabs(xstar[i]));
    sc_test_report("Rosenbrock 2-D from (-1.2, 1): (%.9f, %.9f), f %.2e in %d iterations, %d evaluations (%s); 10-D: |x - 1| %.1e in %d "
                   "iterations; quadratic of %d variables, condition 1e4: |x - x*| %.1e (|x*| %.2f), f - f* %.1e in %d iterations (%s)",
                   x2[0], x2[1], r2.f, r2.iterations, r2.evaluations, sc_lbfgs_stop_name(r2.stop), e10, r10.iterations, QUAD_N, eq, xs, rq.f - fstar,
                   rq.iterations, sc_lbfgs_stop_name(rq.stop));
    ENSURE(fabs(x2[0] - 1) < 1e-6 && fabs(x2[1] - 1) < 1e-6 && r2.f < 1e-12 && r2.iterations < 60);
    ENSURE(e10 < 1e-6 && r10.f < 1e-12);
    /* f's rounding (1e-16 of |f|) bounds |x - x*| along the flattest direction to about sqrt(2e-16 |f| / 1): 1e-7 */
    ENSURE((rq.stop == SC_LBFGS_GRADIENT || rq.stop == SC_LBFGS_LINE_SEARCH) && eq < 1e-6 * xs && fabs(rq.f - fstar) < 1e-12 * fabs(fstar));
    /* a start that is already the minimum: no step, stopped on the gradient */
    double one[2] = {1, 1};
    ENSURE_OK(sc_lbfgs_minimize(2, one, rosenbrock, &n, &o, NULL, &r2, &err), &err);
    ENSURE(r2.stop == SC_LBFGS_GRADIENT && r2.iterations == 0 && one[0] == 1 && one[1] == 1);
}

/* ---- DMPs ---- */

TEST(dmp_periodic_phase_and_period)
{
    sc_dmp d, e;
    sc_err err;
    ENSURE_OK(sc_dmp_create(SC_DMP_PERIODIC, 3, 8, 0.8, &d, &err), &err);
    for (int i = 0; i < 24; i++) d.weight[i] = sin(0.7 * i + 0.3);
    const double T = d.period;
    ENSURE_NEAR(sc_dmp_phase(&d, 0), 0, 0);
    ENSURE_NEAR(sc_dmp_phase(&d, T / 4), SC_PI / 2, 1e-15);
    ENSURE_NEAR(sc_dmp_phase(&d, 3 * T / 4 + 5 * T), 3 * SC_PI / 2, 1e-12);
    double worst = 0, peak = 0, u0[3], u1[3];
    for (int j = 0; j < 200; j++) {
        const double t = 0.013 * j;
        sc_dmp_eval(&d, t, u0);
        for (int c = 1; c <= 50; c++) {
            sc_dmp_eval(&d, t + c * T, u1);
            for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(u1[k] - u0[k]));
        }
        for (int k = 0; k < 3; k++) peak = fmax(peak, fabs(u0[k]));
    }
    /* each basis function peaks (at 1) on its centre; its neighbours are at exp(-1/2) there */
    double psi[8], mid[8];
    sc_dmp_basis(&d, 3 * T / 8, psi);
    sc_dmp_basis(&d, 3.5 * T / 8, mid); /* halfway between centres 3 and 4 */
    /* a discrete DMP: Gaussians on t / T that peak at their centres and fade after T */
    ENSURE_OK(sc_dmp_create(SC_DMP_DISCRETE, 1, 5, 2.0, &e, &err), &err);
    for (int i = 0; i < 5; i++) e.weight[i] = 1;
    double pd[5], pmid[5], late;
    sc_dmp_basis(&e, 1.0, pd);
    sc_dmp_basis(&e, 1.25, pmid); /* halfway between centres 2 and 3 */
    sc_dmp_eval(&e, 4.0, &late);
    sc_test_report("periodic DMP, T = %.2f s, 8 basis functions (width h = %.3f): phase pi/2 at T/4, u(t + c T) - u(t) <= %.1e over 50 periods "
                   "(|u| <= %.2f); basis 3 at its centre %.3f, neighbours %.4f %.4f; halfway to centre 4 both %.4f %.4f (exp(-1/2) = %.4f); "
                   "discrete, T = 2 s: at t = 1 s basis 2 is %.3f, halfway to centre 3 both %.4f %.4f; output at 4 s %.1e",
                   T, d.width, worst, peak, psi[3], psi[2], psi[4], mid[3], mid[4], exp(-0.5), pd[2], pmid[2], pmid[3], late);
    ENSURE(worst < 1e-12 * peak);
    ENSURE(psi[3] == 1 && fabs(psi[2] - psi[4]) < 1e-15 && psi[2] < 0.2);
    ENSURE(fabs(mid[3] - exp(-0.5)) < 1e-12 && fabs(mid[4] - exp(-0.5)) < 1e-12);
    ENSURE(pd[2] == 1 && fabs(pmid[2] - exp(-0.5)) < 1e-12 && fabs(pmid[3] - exp(-0.5)) < 1e-12 && late < 1e-6);
    sc_dmp_free(&d);
    sc_dmp_free(&e);
    ENSURE(sc_dmp_create(SC_DMP_PERIODIC, 1, 0, 1, &e, &err) == SC_EINPUT && sc_dmp_create(SC_DMP_PERIODIC, 1, 4, -1, &e, &err) == SC_EINPUT);
}

/* ---- swimming ---- */

/* a small bar to swim: 7 x 3 x 2 nodes 5 cm apart (0.3 x 0.1 x 0.05 m, 42 nodes), soft (E 2e4 Pa)
   so its first modes are slow, its reduced body in still water without gravity */
typedef struct swimmer {
    sc_model m;
    sc_reduced_basis b;
    sc_reduced_model rm;
} swimmer;

static int swimmer_create(swimmer *w, int modes, sc_err *err)
{
    if (!sc_fixture_column(&w->m, 7, 3, 2, 0.05, 2e4, 0.3)) return sc_fail(err, SC_EIO, "fixture");
    int rc = sc_reduced_basis_compute(&w->m, modes, &w->b, NULL, err);
    if (rc) return rc;
    sc_reduced_opts o;
    sc_reduced_default_opts(&o);
    o.dt = 5e-3;
    memset(o.gravity, 0, sizeof o.gravity);
    o.fluid.density = 1000;
    o.fluid.drag = 1;
    o.ground.enabled = 0;
    return sc_reduced_model_create(&w->m, &w->b, &o, &w->rm, err);
}

static void swimmer_free(swimmer *w)
{
    sc_reduced_model_free(&w->rm);
    sc_reduced_basis_free(&w->b);
    sc_model_free(&w->m);
}

static sc_swim_objective swim_objective(double speed)
{
    sc_swim_objective o = {.duration = 1.5,
                           .warmup = 0.5,
                           .direction = {1, 0, 0},
                           .target_speed = speed,
                           .speed_weight = 1,
                           .effort_weight = 1e-3,
                           .balance_weight = 0,
                           .balance_axis = {0, 1, 0}};
    return o;
}

/* L-BFGS on the weights and period of a 4-basis DMP on 4 modes (17 variables, 35 forward runs of
   1.5 s a gradient): the objective never rises and the bar, at rest under the small random start,
   swims along x */
TEST(swim_short_optimisation_speeds_up)
{
    swimmer w;
    sc_err err;
    ENSURE_OK(swimmer_create(&w, 4, &err), &err);
    const sc_swim_objective obj = swim_objective(0.05);
    sc_swim_problem p;
    const double period0 = 1 / w.b.frequency[0];
    ENSURE_OK(sc_swim_problem_create(&w.rm, &obj, SC_DMP_PERIODIC, 4, period0, 1, 2, &p, &err), &err);
    double x[17];
    ENSURE(p.nvars == 17);
    sc_swim_initial_guess(&p, 1, 0.05, x);
    sc_lbfgs_opts o;
    sc_lbfgs_default_opts(&o);
    o.max_iterations = 8;
    sc_swim_history h;
    sc_lbfgs_result r;
    ENSURE_OK(sc_swim_optimise(&p, &o, x, &h, &r, &err), &err);
    int rises = 0;
    for (int i = 1; i < h.n; i++) rises += h.objective[i] > h.objective[i - 1];
    sc_dmp d;
    ENSURE_OK(sc_dmp_create(SC_DMP_PERIODIC, 4, 4, period0, &d, &err), &err);
    sc_swim_to_dmp(&p, x, &d);
    sc_swim_terms t;
    ENSURE_OK(sc_swim_simulate(&p, &p.states[0], &d, &t, NULL, 1, &err), &err);
    sc_test_report("bar of %d nodes, modes %.2f %.2f %.2f %.2f Hz, target 0.05 m/s: objective %.4f -> %.4f in %d iterations (%d evaluations "
                   "of f and g, %ld forward runs, %.1f s, stop: %s), rising %d times; speed %.4f -> %.4f m/s, drift %.4f m/s, period %.3f -> %.3f "
                   "s, RMS modal force %.3g N/sqrt(kg)",
                   w.m.nnodes, w.b.frequency[0], w.b.frequency[1], w.b.frequency[2], w.b.frequency[3], h.objective[0], h.objective[h.n - 1],
                   r.iterations, r.evaluations, p.evaluations, h.seconds[h.n - 1], sc_lbfgs_stop_name(r.stop), rises, h.achieved[0],
                   h.achieved[h.n - 1], t.drift, period0, d.period, t.control_rms);
    ENSURE(rises == 0 && h.n == r.iterations + 1);
    ENSURE(h.objective[h.n - 1] < 0.5 * h.objective[0]);
    ENSURE(t.achieved > 0.5 * obj.target_speed && fabs(t.achieved - h.achieved[h.n - 1]) < 1e-12);
    sc_dmp_free(&d);
    sc_swim_history_free(&h);
    sc_swim_problem_free(&p);
    swimmer_free(&w);
}

/* the gradient and a short optimisation give the same bits on 1, 2 and 3 threads; the optimised
   controller replayed in the full FEM (f = M R Phi u) swims the same way */
TEST(swim_threads_bit_identical_and_full_fem_replay)
{
    swimmer w;
    sc_err err;
    ENSURE_OK(swimmer_create(&w, 4, &err), &err);
    const sc_swim_objective obj = swim_objective(0.05);
    const double period0 = 1 / w.b.frequency[0];
    double x[3][17], g[3][17], f[3];
    sc_swim_problem p[3];
    for (int t = 0; t < 3; t++) {
        ENSURE_OK(sc_swim_problem_create(&w.rm, &obj, SC_DMP_PERIODIC, 4, period0, 1, t + 1, &p[t], &err), &err);
        sc_swim_initial_guess(&p[t], 7, 0.05, x[t]);
        ENSURE_OK(sc_swim_objective_gradient(&p[t], x[t], &f[t], g[t], &err), &err);
    }
    const int grad_same = !memcmp(g[0], g[1], sizeof g[0]) && !memcmp(g[0], g[2], sizeof g[0]) && f[0] == f[1] && f[0] == f[2];
    sc_lbfgs_opts o;
    sc_lbfgs_default_opts(&o);
    o.max_iterations = 3;
    sc_lbfgs_result r[3];
    for (int t = 0; t < 3; t++) ENSURE_OK(sc_swim_optimise(&p[t], &o, x[t], NULL, &r[t], &err), &err);
    const int opt_same = !memcmp(x[0], x[1], sizeof x[0]) && !memcmp(x[0], x[2], sizeof x[0]) && r[0].f == r[1].f && r[0].f == r[2].f;
    /* on to a swimming controller (8 more iterations), run in the reduced body and in the full FEM */
    o.max_iterations = 8;
    ENSURE_OK(sc_swim_optimise(&p[1], &o, x[0], NULL, &r[1], &err), &err);
    sc_dmp d;
    ENSURE_OK(sc_dmp_create(SC_DMP_PERIODIC, 4, 4, period0, &d, &err), &err);
    sc_swim_to_dmp(&p[0], x[0], &d);
    sc_swim_terms tr, tf;
    ENSURE_OK(sc_swim_simulate(&p[0], &p[0].states[0], &d, &tr, NULL, 1, &err), &err);
    sc_softbody_opts so;
    sc_softbody_default_opts(&so);
    so.dt = 5e-4;
    memset(so.gravity, 0, sizeof so.gravity);
    so.contact.enabled = 0;
    so.rayleigh_beta = w.rm.o.rayleigh_beta;
    so.fluid = w.rm.o.fluid;
    sc_swim_trace trace;
    ENSURE_OK(sc_swim_trace_create(40, 4, &trace, &err), &err);
    ENSURE_OK(sc_swim_replay_full(&p[0], &w.m, &so, &d, &tf, &trace, 100, &err), &err);
    sc_test_report("gradient of %d variables: %s on 1, 2 and 3 threads; 3 iterations of L-BFGS: %s (objective %.6f); after 8 more (objective %.4f) the controller (period "
                   "%.3f s) in the reduced body: %.4f m/s, drift %.4f m/s; in the full FEM (dt 5e-4 s, f = M R Phi u): %.4f m/s, drift %.4f "
                   "m/s, objective %.4f against %.4f; %d frames recorded",
                   p[0].nvars, grad_same ? "the same bits" : "DIFFERENT", opt_same ? "the same bits" : "DIFFERENT", r[0].f, r[1].f, d.period, tr.achieved,
                   tr.drift, tf.achieved, tf.drift, tf.total, tr.total, trace.nframes);
    ENSURE(grad_same && opt_same);
    ENSURE(tr.achieved > 0.01 && tf.achieved > 0.5 * tr.achieved && tf.achieved < 2 * tr.achieved && trace.nframes == 31);
    sc_swim_trace_free(&trace);
    sc_dmp_free(&d);
    for (int t = 0; t < 3; t++) sc_swim_problem_free(&p[t]);
    swimmer_free(&w);
}

/* ---- reduced-opt ---- */

#include "io/h5.h"

static char out[16384];

/* a letter I of about 300 tets with 4 modes (mesh-prep), made once */
static const char *swim_character(void)
{
    static char path[1024];
    if (path[0]) return path;
    const char *cfg = sc_test_write("swim_I.yaml", "body: {letter: I}\ntetgen: {target_tets: 300}\nreduced: {modes: 4}\n");
    const char *ch = sc_test_tmp("swim_I.h5");
    if (sc_test_sh(out, sizeof out, "%s -q -c %s -o %s", sc_test_tool("mesh-prep"), cfg, ch)) return NULL;
    snprintf(path, sizeof path, "%s", ch);
    return path;
}

#define SWIM_CFG                                                                  \
    "reduced_body: {dt: 0.01, gravity: [0, 0, 0]}\n"                             \
    "fluid: {density: 1000, drag: 1}\n"                                           \
    "swim: {direction: [0, 1, 0], target_speed: 0.05, duration: 1.0, warmup: 0.3}\n"

/* the tool end to end on a small I: optimise 3 iterations (objective down, the swim.h5 complete),
   the same output on 1 and 2 threads, the result replayed in the full FEM */
TEST(reduced_opt_optimises_and_replays)
{
    const char *ch = swim_character();
    ENSURE_MSG(ch, "mesh-prep: %s", out);
    const char *cfg = sc_test_write("swim_opt.yaml", SWIM_CFG "dmp: {basis: 3}\noptimise: {iterations: 3}\nreplay: {every: 10}\n");
    const char *o1 = sc_fixture_keep(sc_test_tmp("swim_opt1.h5")), *o2 = sc_fixture_keep(sc_test_tmp("swim_opt2.h5"));
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s --threads 1 %s", sc_test_tool("reduced-opt"), cfg, o1, ch);
    ENSURE_MSG(rc == 0, "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s --threads 2 %s", sc_test_tool("reduced-opt"), cfg, o2, ch);
    ENSURE_MSG(rc == 0, "exit %d: %s", rc, out);
    char said[4096];
    const int same = sc_test_h5_same(said, sizeof said, o1, o2, "/controller,/objective,/trajectory");
    sc_h5 *f;
    sc_err err;
    ENSURE_OK(sc_h5_open(o1, &f, &err), &err);
    size_t dw[2] = {0, 0}, dh[1] = {0}, dt[2] = {0, 0};
    double *w, *hist, *com, speed0, f0, f1;
    char *schema;
    long long iters;
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "schema", &schema, &err), &err);
    ENSURE_OK(sc_h5_read_f64(f, "/controller/weights", 2, dw, &w, &err), &err);
    ENSURE_OK(sc_h5_read_f64(f, "/optimisation/objective", 1, dh, &hist, &err), &err);
    ENSURE_OK(sc_h5_read_f64(f, "/trajectory/com", 2, dt, &com, &err), &err);
    ENSURE_OK(sc_h5_read_attr_i64(f, "/optimisation", "iterations", &iters, &err), &err);
    ENSURE_OK(sc_h5_read_attr_f64(f, "/optimisation", "initial_objective", &f0, &err), &err);
    ENSURE_OK(sc_h5_read_attr_f64(f, "/optimisation", "final_objective", &f1, &err), &err);
    sc_h5_close(f);
    /* replayed in the full FEM from the file */
    const char *full = sc_test_write("swim_full.yaml", SWIM_CFG "replay: {model: full, dt: 0.0005, every: 200}\n");
    const char *o3 = sc_test_tmp("swim_full.h5");
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s %s", sc_test_tool("reduced-opt"), full, o3, ch, o1);
    ENSURE_MSG(rc == 0, "exit %d: %s", rc, out);
    ENSURE_OK(sc_h5_open(o3, &f, &err), &err);
    char *model;
    size_t d1[1] = {0};
    double *speed;
    ENSURE_OK(sc_h5_read_attr_str(f, "/", "model", &model, &err), &err);
    ENSURE_OK(sc_h5_read_f64(f, "/objective/achieved_speed", 1, d1, &speed, &err), &err);
    speed0 = speed[0];
    const int has_opt = sc_h5_exists(f, "/optimisation");
    sc_h5_close(f);
    sc_test_report("%s: weights %zu x %zu, %lld iterations, objective %.4f -> %.4f (history of %zu), %zu frames; 1 and 2 threads: %s; "
                   "replayed in the %s FEM: %.4f m/s",
                   schema, dw[0], dw[1], iters, f0, f1, dh[0], dt[0], same ? "the same file" : "DIFFERENT", model, speed0);
    ENSURE(!strcmp(schema, "softcon.swim/1") && dw[0] == 4 && dw[1] == 3 && iters == 3 && dh[0] == 4 && dt[0] == 11);
    ENSURE(f1 < f0 && hist[3] == f1 && same);
    ENSURE(!strcmp(model, "full") && !has_opt && isfinite(speed0));
    free(schema);
    free(model);
    free(w);
    free(hist);
    free(com);
    free(speed);
}

/* bad configs and inputs: exit 2 naming the line (or the file), no output */
TEST(reduced_opt_config_errors)
{
    const char *ch = swim_character();
    ENSURE_MSG(ch, "mesh-prep: %s", out);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"fluid: {density: -1}\n", ":2:18: key 'fluid.density' = -1 is outside [0, 100000]"},
        {"fluid: {density: 0}\n", ":2:8: reduced-opt swims: give `fluid:` with density > 0"},
        {"fluid: {density: 1000}\nswim: {target_speed: -0.1}\n", ":3:22: key 'swim.target_speed' = -0.1 is outside"},
        {"fluid: {density: 1000}\nswim: {duration: 1, warmup: 2}\n", ":3:29: swim.warmup = 2 s must be shorter than swim.duration = 1 s"},
        {"fluid: {density: 1000}\nswim: {direction: [0, 0, 0]}\n", ":3:19: direction must not be zero"},
        {"fluid: {density: 1000}\ndmp: {basis: 0}\n", ":3:14: key 'dmp.basis' = 0 is outside [1, 64]"},
        {"fluid: {density: 1000}\noptimise: {iteration: 3}\n", ":3:12: unknown key 'iteration' in 'optimise' (did you mean 'iterations'?)"},
        {"fluid: {density: 1000}\nreplay: {model: fem}\n", ":3:17: 'replay.model' must be one of 'reduced', 'full'"},
        {"fluid: {density: 1000}\nreplay: {dt: 0.001}\n", ":3:14: replay.dt is the full FEM's step"},
    };
    char said[8192] = "";
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char name[64], text[512];
        snprintf(name, sizeof name, "swim_bad_%zu.yaml", k);
        snprintf(text, sizeof text, "# a bad swim\n%s", bad[k].text);
        const char *cfg = sc_test_write(name, text), *o = sc_test_tmp("swim_bad.h5");
        const int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("reduced-opt"), cfg, o, ch);
        ENSURE_MSG(rc == 2 && strstr(out, bad[k].want), "%s: exit %d: %s", bad[k].text, rc, out);
        ENSURE_MSG(!sc_test_file_exists(o), "%s left output", bad[k].text);
        const char *msg = strstr(out, ".yaml:");
        snprintf(said + strlen(said), sizeof said - strlen(said), "\n      %.*s", (int)strcspn(msg ? msg : out, "\n"), msg ? msg : out);
    }
    /* a replay refuses `optimise:`, a character without /reduced and a controller that is not one */
    const char *cfg = sc_test_write("swim_replay_opt.yaml", "fluid: {density: 1000}\noptimise: {iterations: 2}\n"), *o = sc_test_tmp("swim_bad.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s %s", sc_test_tool("reduced-opt"), cfg, o, ch, ch);
    ENSURE_MSG(rc == 2 && strstr(out, ":2:11: `optimise:` does not apply when a controller is given"), "exit %d: %s", rc, out);
    const char *plain = sc_test_write("swim_plain.yaml", "body: {letter: I}\ntetgen: {target_tets: 300}\n"), *pch = sc_test_tmp("swim_plain.h5");
    ENSURE(sc_test_sh(out, sizeof out, "%s -q -c %s -o %s", sc_test_tool("mesh-prep"), plain, pch) == 0);
    const char *ok = sc_test_write("swim_ok.yaml", "fluid: {density: 1000}\n");
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s", sc_test_tool("reduced-opt"), ok, o, pch);
    ENSURE_MSG(rc == 2 && strstr(out, "swim_plain.h5:/reduced: missing"), "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -c %s -o %s %s %s", sc_test_tool("reduced-opt"), ok, o, ch, ch);
    ENSURE_MSG(rc == 2 && strstr(out, "not a controller of reduced-opt"), "exit %d: %s", rc, out);
    ENSURE(!sc_test_file_exists(o));
    sc_test_report("%zu bad configs: exit 2 naming the line, no output:%s", sizeof bad / sizeof *bad, said);
}

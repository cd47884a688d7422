/* [T12] 8 and Table 2: the QPCC pivoting solver (lib/optim/qpcc.h) against the static-contact QP
 * and the global minimum, on ten random QPCCs of [T12]'s size: 98 variables and 40
 * complementarity pairs, shaped like [T12] eq. 11.
 *
 * Each problem (seeded: sc_rng_init(seed, problem, 0)):
 *   - 58 muscle lengths l_d, 0.5 l0 <= l_d <= l0, l0 uniform in [0.5, 1.5];
 *   - 4 frictional contacts, each f_n, 8 friction impulses f_t,j along d_j = (cos a_j, 0, sin a_j),
 *     a_j = 2 pi j / 8 (as sc_qpcc_contact expects), and lambda: 10 variables and 10 pairs each;
 *   - the contact points' velocities after the step, in impulse form,
 *       v = v0 + B (l_d - l_ref) + W f,   l_ref = 0.75 l0 (the middle of the range),
 *     f the 12 contact impulses (f_n along the normal (0, 1, 0), f_t,j along d_j), W = J M^-1 J'
 *     a random SPD 12 x 12 (G G'/12 + 0.1 I, G standard normal), B 12 x 58 normal with standard
 *     deviation 0.2, v0's tangential parts normal (sd 0.5), its normal parts -U(0.2, 1) for
 *     contacts approaching the ground and +U(0.05, 0.3) for the 1 or 2 (at random) separating;
 *   - the pairs of [T12] eq. 11 (mu = 0.6): f_n _|_ v_n; f_t,j _|_ d_j.v + lambda;
 *     lambda _|_ mu f_n - sum_j f_t,j;
 *   - the objective G, a convex quadratic like [T12] 5.2 (a sum of squares, reported with its
 *     constant so that G >= 0 as in [T12] Table 2):
 *       ||sum_c f_c - Ldot||^2                      the change of linear momentum from the contacts,
 *                                                   Ldot = (N(0, 0.3), U(0.5, 2.5), N(0, 0.3)) (eq. 12)
 *     + sum_{i<8} (a_i.(l_d - l_ref) + b_i.v - t_i)^2  tracking of linear functionals of the muscle
 *                                                   lengths and the contact velocities (eq. 17-18),
 *                                                   a_i, b_i normal / sqrt(size), t_i standard normal
 *     + 1e-6 ||x||^2                                a ridge on every variable (--ridge), so that the
 *                                                   Hessian is positive definite (sc_qp needs it; its
 *                                                   condition number is then about 1e8: sc_qp holds its
 *                                                   rows to 1e-15 down to this ridge, see qp.h).
 * The sizes were chosen so that the static state is feasible in most problems and the targets
 * are out of the controls' reach (G > 0 at the optimum in most).
 *
 * Per problem: (a) the static-contact QP ([T12] eq. 19-22: sc_qpcc_static_state and
 * sc_qpcc_solve_state), (b) the pivoting solver sc_qpcc_solve from the static state (at most
 * --pivot-nodes QPs, default 200), (c) the ground truth by branch and bound, sc_qpcc_exact (at
 * most --exact-nodes QPs, default 3000; "proven" when it finished, else the best it found).
 * Reported: the objective G, QPs solved, the distance ||x - x_truth|| of (a) and (b), their ratio,
 * [T12]'s gap ratio (G_static - G_truth) / (G_qpcc - G_truth), the worst complementarity (and
 * bound) residual of the three answers and the wall time per solve (the static QP: median of 9
 * solves; the others solved once); then avg / best / worst over the problems (best and worst by
 * the gap ratio, as [T12] Table 2), and anomalies: the pivoting solver above its static start or
 * below a proven global minimum, an answer that is not complementary. Lines "@ metric value unit"
 * are what scripts/bench.sh records. About 45 s on a 2-core VM.
 * Usage: bench_qpcc [--problems N] [--pivot-nodes N] [--exact-nodes N] [--seed S] [--ridge R] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "core/log.h"
#include "core/rng.h"
#include "optim/qpcc.h"

#define NL      58              /* muscle lengths */
#define NC      4               /* contacts */
#define NT      8               /* friction directions per contact */
#define PER     (NT + 2)        /* f_n, f_t[NT], lambda */
#define NV      (NL + NC * PER) /* 98 variables */
#define NP      (NC * PER)      /* 40 pairs */
#define NVEL    (3 * NC)        /* contact velocity components */
#define NF      8               /* tracked functionals */
#define NR      (3 + NF)        /* residuals of G */
#define MU      0.6
#define MAXPROB 64

typedef struct problem {
    double H[NV * NV], g[NV], cst;
    double Ain[2 * NL * NV], bin[2 * NL];
    int var[NP];
    double row[NP * NV], off[NP];
    sc_qpcc_contact contacts[NC];
    sc_qpcc q;
    int separating; /* contacts moving away from the ground */
} problem;

static int fn_var(int c) { return NL + c * PER; }
static int ft_var(int c, int j) { return NL + c * PER + 1 + j; }
static int lambda_var(int c) { return NL + c * PER + PER - 1; }

static double ridge = 1e-6; /* --ridge */

static void make_problem(problem *p, uint64_t seed, int index)
{
    sc_rng r;
    sc_rng_init(&r, seed, (uint32_t)index, 0);
    memset(p, 0, sizeof *p);
    double l0[NL], lref[NL];
    for (int i = 0; i < NL; i++) {
        l0[i] = 0.5 + sc_rng_uniform(&r);
        lref[i] = 0.75 * l0[i];
    }
    /* v = v0 + V x with V = [B | W Phi]: Phi maps the contact variables to the 12 impulses */
    static double V[NVEL * NV], G[NVEL * NVEL], W[NVEL * NVEL], Phi[NVEL * NV];
    double v0[NVEL];
    memset(V, 0, sizeof V);
    memset(Phi, 0, sizeof Phi);
    for (int k = 0; k < NVEL; k++)
        for (int i = 0; i < NL; i++) V[k * NV + i] = 0.2 * sc_rng_normal(&r);
    for (int k = 0; k < NVEL * NVEL; k++) G[k] = sc_rng_normal(&r);
    for (int a = 0; a < NVEL; a++)
        for (int b = 0; b < NVEL; b++) {
            double s = 0;
            for (int k = 0; k < NVEL; k++) s += G[a * NVEL + k] * G[b * NVEL + k];
            W[a * NVEL + b] = s / NVEL + (a == b ? 0.1 : 0);
        }
    double d[NT][3];
    for (int j = 0; j < NT; j++) {
        d[j][0] = cos(2 * M_PI * j / NT);
        d[j][1] = 0;
        d[j][2] = sin(2 * M_PI * j / NT);
    }
    for (int c = 0; c < NC; c++) {
        Phi[(3 * c + 1) * NV + fn_var(c)] = 1;
        for (int j = 0; j < NT; j++)
            for (int k = 0; k < 3; k++) Phi[(3 * c + k) * NV + ft_var(c, j)] = d[j][k];
    }
    for (int a = 0; a < NVEL; a++)
        for (int i = NL; i < NV; i++) {
            double s = 0;
            for (int b = 0; b < NVEL; b++) s += W[a * NVEL + b] * Phi[b * NV + i];
            V[a * NV + i] = s;
        }
    /* 1 or 2 contacts separate, the others approach the ground */
    p->separating = 1 + (sc_rng_uniform(&r) < 0.5);
    int sep[NC] = {0};
    for (int n = 0; n < p->separating;) {
        int c = (int)(sc_rng_uniform(&r) * NC);
        if (!sep[c]) sep[c] = 1, n++;
    }
    for (int c = 0; c < NC; c++) {
        v0[3 * c] = 0.5 * sc_rng_normal(&r);
        v0[3 * c + 1] = sep[c] ? 0.05 + 0.25 * sc_rng_uniform(&r) : -(0.2 + 0.8 * sc_rng_uniform(&r));
        v0[3 * c + 2] = 0.5 * sc_rng_normal(&r);
    }
    for (int k = 0; k < NVEL; k++) /* v0 + B (l_d - l_ref) = (v0 - B l_ref) + B l_d */
        for (int i = 0; i < NL; i++) v0[k] -= V[k * NV + i] * lref[i];
    /* the pairs of [T12] eq. 11 */
    for (int c = 0; c < NC; c++) {
        const int k0 = c * PER;
        p->contacts[c] = (sc_qpcc_contact){.normal = k0, .tangent = k0 + 1, .ntangent = NT, .slide = k0 + PER - 1};
        p->var[k0] = fn_var(c);
        memcpy(p->row + (size_t)k0 * NV, V + (3 * c + 1) * NV, NV * sizeof(double));
        p->off[k0] = v0[3 * c + 1];
        for (int j = 0; j < NT; j++) {
            const int k = k0 + 1 + j;
            p->var[k] = ft_var(c, j);
            double *row = p->row + (size_t)k * NV;
            for (int i = 0; i < NV; i++) row[i] = d[j][0] * V[3 * c * NV + i] + d[j][2] * V[(3 * c + 2) * NV + i];
            row[lambda_var(c)] += 1;
            p->off[k] = d[j][0] * v0[3 * c] + d[j][2] * v0[3 * c + 2];
        }
        const int k = k0 + PER - 1;
        p->var[k] = lambda_var(c);
        double *row = p->row + (size_t)k * NV;
        row[fn_var(c)] = MU;
        for (int j = 0; j < NT; j++) row[ft_var(c, j)] = -1;
        p->off[k] = 0;
    }
    /* G = ||A x - t||^2 + ridge ||x||^2 = 1/2 x'Hx + g'x + cst */
    static double A[NR * NV];
    double t[NR] = {0};
    memset(A, 0, sizeof A);
    for (int k = 0; k < 3; k++) /* the sum of the contact impulses: the change of linear momentum */
        for (int c = 0; c < NC; c++)
            for (int i = 0; i < NV; i++) A[k * NV + i] += Phi[(3 * c + k) * NV + i];
    t[0] = 0.3 * sc_rng_normal(&r);
    t[1] = 0.5 + 2 * sc_rng_uniform(&r);
    t[2] = 0.3 * sc_rng_normal(&r);
    for (int f = 0; f < NF; f++) {
        double *a = A + (3 + f) * NV, shift = 0;
        for (int i = 0; i < NL; i++) {
            a[i] = sc_rng_normal(&r) / sqrt(NL);
            shift += a[i] * lref[i];
        }
        double vw[NVEL];
        for (int k = 0; k < NVEL; k++) {
            vw[k] = sc_rng_normal(&r) / sqrt(NVEL);
            shift -= vw[k] * v0[k];
        }
        for (int k = 0; k < NVEL; k++)
            for (int i = 0; i < NV; i++) a[i] += vw[k] * V[k * NV + i];
        t[3 + f] = sc_rng_normal(&r) + shift; /* a.(l_d - l_ref) + b.v - t_f = a.l_d + b.V x - (t_f + a.l_ref - b.v0) */
    }
    p->cst = 0;
    for (int k = 0; k < NR; k++) p->cst += t[k] * t[k];
    for (int i = 0; i < NV; i++) {
        double s = 0;
        for (int k = 0; k < NR; k++) s += A[k * NV + i] * t[k];
        p->g[i] = -2 * s;
        for (int j = 0; j < NV; j++) {
            double h = 0;
            for (int k = 0; k < NR; k++) h += A[k * NV + i] * A[k * NV + j];
            p->H[i * NV + j] = 2 * h + (i == j ? 2 * ridge : 0);
        }
    }
    /* 0.5 l0 <= l_d <= l0 */
    for (int i = 0; i < NL; i++) {
        p->Ain[(2 * i) * NV + i] = 1;
        p->bin[2 * i] = 0.5 * l0[i];
        p->Ain[(2 * i + 1) * NV + i] = -1;
        p->bin[2 * i + 1] = -l0[i];
    }
    p->q = (sc_qpcc){.base = {.n = NV, .nin = 2 * NL, .H = p->H, .g = p->g, .Ain = p->Ain, .bin = p->bin},
                     .npairs = NP,
                     .var = p->var,
                     .row = p->row,
                     .off = p->off,
                     .ncontacts = NC,
                     .contacts = p->contacts};
}

/* The largest violation of the pairs at x: sides below 0, and min(|x_var|, |row|) of each pair. */
static double complementarity_residual(const problem *p, const double *x)
{
    double worst = 0;
    for (int k = 0; k < NP; k++) {
        const double *row = p->row + (size_t)k * NV;
        double s = p->off[k];
        for (int i = 0; i < NV; i++) s += row[i] * x[i];
        const double a = x[p->var[k]];
        worst = fmax(worst, fmax(fmax(-a, -s), fmin(fabs(a), fabs(s))));
    }
    for (int j = 0; j < 2 * NL; j++) worst = fmax(worst, p->bin[j] - p->Ain[j * NV + j / 2] * x[j / 2]);
    return worst;
}

static double distance(const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < NV; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

/* Contacts by state: 's'tatic, s'l'iding, 'b'roken (from the pairs' states). */
static void describe_state(const unsigned char *st, char *out)
{
    for (int c = 0; c < NC; c++) {
        const int k0 = c * PER;
        out[c] = st[k0] == 0 ? 'b' : st[k0 + PER - 1] ? 'l' : 's';
    }
    out[NC] = 0;
}

typedef struct outcome {
    int static_ok, pivot_ok, exact_ok, proven, separating;
    double f_static, f_pivot, f_exact;
    int n_pivot, n_exact;
    double d_static, d_pivot;
    double residual;                   /* the worst complementarity residual of the three answers */
    double t_static, t_pivot, t_exact; /* seconds per solve */
    char st_static[NC + 1], st_pivot[NC + 1];
} outcome;

static int compared(const outcome *o) { return o->static_ok && o->pivot_ok && o->exact_ok; }
static double tol_of(double f) { return 1e-6 * (1 + fabs(f)); }

/* [T12]'s gap ratio (G_static - G_truth) / (G_qpcc - G_truth): infinite when the pivoting solver
 * reached the truth's objective */
static double gap_ratio(const outcome *o)
{
    const double gp = o->f_pivot - o->f_exact;
    return gp <= tol_of(o->f_exact) ? INFINITY : (o->f_static - o->f_exact) / gp;
}
static double dist_ratio(const outcome *o) { return o->d_pivot > 1e-9 ? o->d_static / o->d_pivot : INFINITY; }

static const char *fmt_ratio(char *buf, size_t n, double v)
{
    if (isinf(v)) snprintf(buf, n, "reached");
    else if (isnan(v)) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.2f", v);
    return buf;
}

static double median_of(const double *v, int n)
{
    double tmp[MAXPROB];
    memcpy(tmp, v, (size_t)n * sizeof *v);
    return n ? bench_median(tmp, n) : NAN;
}

int main(int argc, char **argv)
{
    int nprob = 10, pivot_nodes = 200, exact_nodes = 3000;
    uint64_t seed = 2012;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--problems") && i + 1 < argc) nprob = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pivot-nodes") && i + 1 < argc) pivot_nodes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--exact-nodes") && i + 1 < argc) exact_nodes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--ridge") && i + 1 < argc) ridge = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_qpcc [--problems N] [--pivot-nodes N] [--exact-nodes N] [--seed S] [--ridge R]\n");
            return 1;
        }
    }
    if (nprob < 1 || nprob > MAXPROB || pivot_nodes < 1 || exact_nodes < 1 || !(ridge > 0)) {
        fprintf(stderr, "bench_qpcc: 1 <= problems <= %d, node caps >= 1, ridge > 0\n", MAXPROB);
        return 1;
    }
    sc_log_set_level(SC_LOG_WARN);
    sc_err err = {0};
    sc_qpcc_work *w = NULL;
    if (sc_qpcc_work_create(NV, 2 * NL, NP, pivot_nodes, &w, &err)) {
        fprintf(stderr, "bench_qpcc: %s\n", err.msg);
        return 1;
    }
    problem *p = malloc(sizeof *p);
    outcome *res = calloc((size_t)nprob, sizeof *res);
    if (!p || !res) return 1;
    printf("bench_qpcc: [T12] 8 / Table 2: %d random QPCCs of %d variables (%d muscle lengths, %d contacts x %d) and %d pairs, mu %.1f, "
           "ridge %.0e (seed %llu)\n"
           "bench_qpcc: static = the static-contact QP; qpcc = pivoting from the static state, at most %d QPs; truth = branch and bound, at "
           "most %d QPs; G = the objective (>= 0); dist = ||x - x_truth||; state per contact: s static, l sliding, b broken\n",
           nprob, NV, NL, NC, PER, NP, MU, ridge, (unsigned long long)seed, pivot_nodes, exact_nodes);
    printf("bench_qpcc: %4s %3s | %9s %5s %7s | %9s %4s %7s %5s | %9s %5s %6s | %8s %8s | %7s | %9s %8s %7s\n", "prob", "sep", "G static", "state",
           "dist", "G qpcc", "QPs", "dist", "state", "G truth", "QPs", "proven", "dist rat", "gap rat", "resid", "ms static", "ms qpcc", "s truth");
    double x_static[NV], x_pivot[NV], x_exact[NV], t[16];
    unsigned char start[NP], st[NP];
    int anomalies = 0;
    for (int n = 0; n < nprob; n++) {
        outcome *o = &res[n];
        make_problem(p, seed, n);
        o->separating = p->separating;
        sc_qpcc_static_state(&p->q, start);
        describe_state(start, o->st_static);
        sc_qpcc_result r;
        /* (a) the static-contact QP: the median of 9 solves */
        const int reps = 9;
        for (int k = 0; k < reps; k++) {
            const double t0 = sc_wall_time();
            o->static_ok = sc_qpcc_solve_state(&p->q, w, start, x_static, &r, &err) == SC_OK;
            t[k] = sc_wall_time() - t0;
        }
        o->t_static = bench_median(t, reps);
        o->f_static = o->static_ok ? r.objective + p->cst : NAN;
        if (!o->static_ok) snprintf(o->st_static, sizeof o->st_static, "inf.");
        /* (b) the pivoting solver from the static state (when that is infeasible, the solver starts
           from the state of the relaxed problem's minimizer) */
        r = (sc_qpcc_result){0};
        double t0 = sc_wall_time();
        o->pivot_ok = sc_qpcc_solve(&p->q, w, start, x_pivot, st, &r, &err) == SC_OK;
        o->t_pivot = sc_wall_time() - t0;
        o->n_pivot = r.nodes;
        if (o->pivot_ok) {
            o->f_pivot = r.objective + p->cst;
            describe_state(st, o->st_pivot);
        } else {
            printf("bench_qpcc: problem %d: the pivoting solver failed: %s\n", n, err.msg);
            o->f_pivot = NAN;
            snprintf(o->st_pivot, sizeof o->st_pivot, "-");
        }
        /* (c) the ground truth */
        r = (sc_qpcc_result){0};
        t0 = sc_wall_time();
        o->exact_ok = sc_qpcc_exact(&p->q, exact_nodes, x_exact, &r, &err) == SC_OK;
        o->t_exact = sc_wall_time() - t0;
        o->n_exact = r.nodes;
        if (o->exact_ok) {
            o->f_exact = r.objective + p->cst;
            o->proven = r.proven;
        } else {
            printf("bench_qpcc: problem %d: branch and bound failed: %s\n", n, err.msg);
            o->f_exact = NAN;
        }
        o->residual = 0;
        if (o->static_ok) o->residual = fmax(o->residual, complementarity_residual(p, x_static));
        if (o->pivot_ok) o->residual = fmax(o->residual, complementarity_residual(p, x_pivot));
        if (o->exact_ok) o->residual = fmax(o->residual, complementarity_residual(p, x_exact));
        o->d_static = o->static_ok && o->exact_ok ? distance(x_static, x_exact) : NAN;
        o->d_pivot = o->pivot_ok && o->exact_ok ? distance(x_pivot, x_exact) : NAN;
        char dr[16], gr[16];
        printf("bench_qpcc: %4d %3d | %9.4f %5s %7.4f | %9.4f %4d %7.4f %5s | %9.4f %5d %6s | %8s %8s | %7.1e | %9.2f %8.1f %7.2f\n", n,
               o->separating, o->f_static, o->st_static, o->d_static, o->f_pivot, o->n_pivot, o->d_pivot, o->st_pivot, o->f_exact, o->n_exact,
               o->exact_ok ? (o->proven ? "yes" : "no") : "-", fmt_ratio(dr, sizeof dr, compared(o) ? dist_ratio(o) : NAN),
               fmt_ratio(gr, sizeof gr, compared(o) ? gap_ratio(o) : NAN), o->residual, 1e3 * o->t_static, 1e3 * o->t_pivot, o->t_exact);
        /* what must hold: the search returns its best node, the static one among them; no
           complementary point beats a proven global minimum */
        if (o->static_ok && o->pivot_ok && o->f_pivot > o->f_static + tol_of(o->f_static)) {
            printf("bench_qpcc: problem %d: ANOMALY: the pivoting solver ends above its static start\n", n);
            anomalies++;
        }
        if (o->exact_ok && o->proven && o->pivot_ok && o->f_pivot < o->f_exact - tol_of(o->f_exact)) {
            printf("bench_qpcc: problem %d: ANOMALY: the pivoting solver beats the proven global minimum\n", n);
            anomalies++;
        }
        if (o->residual > 1e-6) {
            printf("bench_qpcc: problem %d: ANOMALY: an answer is not complementary (residual %.1e)\n", n, o->residual);
            anomalies++;
        }
        fflush(stdout);
    }
    /* [T12] Table 2: avg, and the problems of the best and the worst gap ratio, over the problems
       all three solved */
    int idx[MAXPROB], m = 0, best = -1, worst = -1, reached = 0, proven = 0, static_infeasible = 0, pivot_failed = 0;
    for (int n = 0; n < nprob; n++) {
        proven += res[n].exact_ok && res[n].proven;
        static_infeasible += !res[n].static_ok;
        pivot_failed += !res[n].pivot_ok;
        if (!compared(&res[n])) continue;
        idx[m++] = n;
        const double g = gap_ratio(&res[n]);
        reached += isinf(g);
        if (best < 0 || g > gap_ratio(&res[best])) best = n;
        if (worst < 0 || g < gap_ratio(&res[worst])) worst = n;
    }
    double fs = 0, fp = 0, fe = 0, np_ = 0, ne = 0, ds = 0, dp = 0, gs = 0, gp = 0, gr_sum = 0, dr_sum = 0;
    int gr_n = 0, dr_n = 0;
    double ts[MAXPROB], tp[MAXPROB], te[MAXPROB], tq[MAXPROB], gr_all[MAXPROB], dr_all[MAXPROB];
    for (int k = 0; k < m; k++) {
        const outcome *o = &res[idx[k]];
        fs += o->f_static;
        fp += o->f_pivot;
        fe += o->f_exact;
        np_ += o->n_pivot;
        ne += o->n_exact;
        ds += o->d_static;
        dp += o->d_pivot;
        gs += o->f_static - o->f_exact;
        gp += fmax(o->f_pivot - o->f_exact, 0);
        gr_all[k] = gap_ratio(o); /* "reached" sorts above every ratio */
        dr_all[k] = dist_ratio(o);
        if (isfinite(gap_ratio(o))) gr_sum += gap_ratio(o), gr_n++;
        if (isfinite(dist_ratio(o))) dr_sum += dist_ratio(o), dr_n++;
    }
    for (int n = 0; n < nprob; n++) {
        ts[n] = res[n].t_static;
        tp[n] = res[n].t_pivot;
        te[n] = res[n].t_exact;
        tq[n] = res[n].t_pivot / (res[n].n_pivot > 0 ? res[n].n_pivot : 1);
    }
    const double med_gr = median_of(gr_all, m), med_dr = median_of(dr_all, m);
    const double med_ts = median_of(ts, nprob), med_tp = median_of(tp, nprob), med_te = median_of(te, nprob), med_tq = median_of(tq, nprob);
    printf("bench_qpcc: %d of %d problems compared (static QP infeasible in %d, pivoting failed in %d); ground truth proven in %d of %d\n", m, nprob,
           static_infeasible, pivot_failed, proven, nprob);
    if (m > 0) {
        const outcome *b = &res[best], *wo = &res[worst];
        printf("bench_qpcc: Table 2    %29s | %29s | %29s\n", "QPCC (pivoting)", "QP (static contact)", "ground truth (B&B)");
        printf("bench_qpcc: %-10s %9s %9s %9s | %9s %9s %9s | %9s %9s %9s\n", "", "avg", "best", "worst", "avg", "best", "worst", "avg", "best",
               "worst");
        printf("bench_qpcc: %-10s %9.4f %9.4f %9.4f | %9.4f %9.4f %9.4f | %9.4f %9.4f %9.4f\n", "objective", fp / m, b->f_pivot, wo->f_pivot, fs / m,
               b->f_static, wo->f_static, fe / m, b->f_exact, wo->f_exact);
        printf("bench_qpcc: %-10s %9.1f %9d %9d | %9d %9d %9d | %9.1f %9d %9d\n", "QPs", np_ / m, b->n_pivot, wo->n_pivot, 1, 1, 1, ne / m,
               b->n_exact, wo->n_exact);
        printf("bench_qpcc: %-10s %9.4f %9.4f %9.4f | %9.4f %9.4f %9.4f | %9s %9s %9s\n", "dist", dp / m, b->d_pivot, wo->d_pivot, ds / m,
               b->d_static, wo->d_static, "0", "0", "0");
        printf("bench_qpcc: best = problem %d, worst = problem %d by the gap ratio; [T12] Table 2: objective 1483.16 / 5222.84 / 772.85 "
               "avg, QPs 17 / 1 / 10000 avg\n",
               best, worst);
        char mg[16], md[16];
        printf("bench_qpcc: gap ratio (G_static - G_truth) / (G_qpcc - G_truth) ([T12]: 6.29 on average): the pivoting solver reached the "
               "truth's objective in %d of %d; the other %d ratios: mean %.2f; median of all %s; summed gaps static / qpcc %.2f\n",
               reached, m, gr_n, gr_n ? gr_sum / gr_n : NAN, fmt_ratio(mg, sizeof mg, med_gr), gp > 0 ? gs / gp : INFINITY);
        printf("bench_qpcc: distance to the truth: static %.4f, qpcc %.4f on average (%.2f x closer); per-problem ratios: mean %.2f, median "
               "%s\n",
               ds / m, dp / m, dp > 0 ? ds / dp : INFINITY, dr_n ? dr_sum / dr_n : NAN, fmt_ratio(md, sizeof md, med_dr));
    }
    printf("bench_qpcc: wall time per solve, median over the problems: static QP %.2f ms, pivoting %.1f ms (%.2f ms per QP), branch and "
           "bound %.2f s\n",
           1e3 * med_ts, 1e3 * med_tp, 1e3 * med_tq, med_te);
    printf("@ qpcc_problems_compared %d count\n@ qpcc_static_infeasible %d count\n@ qpcc_truth_proven %d count\n", m, static_infeasible, proven);
    if (m > 0) {
        printf("@ qpcc_pivot_objective_avg %.6g 1\n@ qpcc_static_objective_avg %.6g 1\n@ qpcc_truth_objective_avg %.6g 1\n", fp / m, fs / m, fe / m);
        printf("@ qpcc_pivot_qps_avg %.1f count\n@ qpcc_truth_qps_avg %.1f count\n", np_ / m, ne / m);
        printf("@ qpcc_pivot_reached_truth %d count\n", reached);
        if (gr_n) printf("@ qpcc_gap_ratio_avg %.3f x\n", gr_sum / gr_n);
        if (isfinite(med_gr)) printf("@ qpcc_gap_ratio_median %.3f x\n", med_gr);
        if (gp > 0) printf("@ qpcc_gap_ratio_of_sums %.3f x\n", gs / gp);
        printf("@ qpcc_dist_static_avg %.4f 1\n@ qpcc_dist_pivot_avg %.4f 1\n", ds / m, dp / m);
        if (dp > 0) printf("@ qpcc_dist_ratio_of_avgs %.3f x\n", ds / dp);
    }
    printf("@ qpcc_static_solve_median %.3f ms\n@ qpcc_pivot_solve_median %.1f ms\n@ qpcc_pivot_qp_median %.3f ms\n@ qpcc_truth_solve_median "
           "%.3f s\n@ qpcc_anomalies %d count\n",
           1e3 * med_ts, 1e3 * med_tp, 1e3 * med_tq, med_te, anomalies);
    free(res);
    free(p);
    sc_qpcc_work_free(w);
    return 0;
}

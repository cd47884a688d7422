/* Goldfarb-Idnani dual active-set QP (see qp.h). With L the Cholesky factor of H, the active
 * rows' normals are kept as W = L^-1 N (one row of Wa per active row) and the Gram matrix
 * W'W by its own Cholesky factor, extended in O(nq) when a row is added and refactored when one
 * is dropped. For a row n to add, w = L^-1 n, r = (W'W)^-1 W'w is the dual step and
 * z = L^-T (w - W r) = H^-1 (n - N r) the primal step; z.n = |w - W r|^2. */
#include "optim/qp.h"
#include "core/mathx.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct sc_qp_work {
    int nmax, mmax;
    double *L;         /* [nmax*nmax] Cholesky factor of H, lower, row-major */
    double *Wa;        /* [nmax*nmax] row i = L^-1 (normal of active row i) */
    double *LG;        /* [nmax*nmax] Cholesky factor of the active Gram matrix Wa Wa' */
    double *u;         /* [nmax] multipliers of the active rows */
    int *active;       /* [nmax] row index (0..neq-1 equalities, then inequalities) */
    signed char *sign; /* [nmax] +1, or -1 for an equality added with its sign flipped */
    double *w, *c, *r, *res, *z, *x0, *u0;
    double *Hs, *As, *bs, *gs, *d, *rs; /* the problem equilibrated (see sc_qp_solve) */
    double *an;                         /* [mmax] each row's norm, for the scan for the most violated */
};

int sc_qp_work_create(int nmax, int mmax, sc_qp_work **out, sc_err *err)
{
    *out = NULL;
    if (nmax < 1 || mmax < 0) return sc_fail(err, SC_EINPUT, "qp: workspace of %d variables and %d rows", nmax, mmax);
    sc_qp_work *w = sc_alloc(err, 1, sizeof *w);
    if (!w) return SC_EIO;
    size_t nn = (size_t)nmax * (size_t)nmax;
    w->nmax = nmax;
    w->mmax = mmax;
    w->L = sc_alloc(err, nn, sizeof(double));
    w->Wa = sc_alloc(err, nn, sizeof(double));
    w->LG = sc_alloc(err, nn, sizeof(double));
    w->u = sc_alloc(err, (size_t)nmax, sizeof(double));
    w->active = sc_alloc(err, (size_t)nmax, sizeof(int));
    w->sign = sc_alloc(err, (size_t)nmax, 1);
    w->w = sc_alloc(err, (size_t)nmax * 7, sizeof(double));
    w->Hs = sc_alloc(err, nn, sizeof(double));
    w->As = sc_alloc(err, (size_t)(mmax > 0 ? mmax : 1) * (size_t)nmax, sizeof(double));
    w->bs = sc_alloc(err, (size_t)mmax + 1, sizeof(double));
    w->rs = sc_alloc(err, (size_t)mmax + 1, sizeof(double));
    w->an = sc_alloc(err, (size_t)mmax + 1, sizeof(double));
    w->gs = sc_alloc(err, 2 * (size_t)nmax, sizeof(double));
    if (!w->L || !w->Wa || !w->LG || !w->u || !w->active || !w->sign || !w->w || !w->Hs || !w->As || !w->bs || !w->rs || !w->an || !w->gs) {
        sc_qp_work_free(w);
        return SC_EIO;
    }
    w->c = w->w + nmax;
    w->r = w->c + nmax;
    w->res = w->r + nmax;
    w->z = w->res + nmax;
    w->x0 = w->z + nmax;
    w->u0 = w->x0 + nmax;
    w->d = w->gs + nmax;
    *out = w;
    return SC_OK;
}

void sc_qp_work_free(sc_qp_work *w)
{
    if (!w) return;
    free(w->L);
    free(w->Wa);
    free(w->LG);
    free(w->u);
    free(w->active);
    free(w->sign);
    free(w->w);
    free(w->Hs);
    free(w->As);
    free(w->bs);
    free(w->rs);
    free(w->an);
    free(w->gs);
    free(w);
}

/* In-place Cholesky of the leading n x n block of a (row stride ld): lower factor. 0 when not
 * positive definite. */
static int cholesky(int n, int ld, double *a)
{
    for (int j = 0; j < n; j++) {
        double d = a[j * ld + j] - sc_dot(j, a + j * ld, a + j * ld);
        if (!(d > 0)) return 0;
        d = sqrt(d);
        a[j * ld + j] = d;
        for (int i = j + 1; i < n; i++) a[i * ld + j] = (a[i * ld + j] - sc_dot(j, a + i * ld, a + j * ld)) / d;
        for (int i = 0; i < j; i++) a[i * ld + j] = 0;
    }
    return 1;
}

/* y = L^-1 b (forward) and y = L^-T b (backward), L lower with row stride ld; y may be b. */
static void solve_lower(int n, int ld, const double *L, const double *b, double *y)
{
    for (int i = 0; i < n; i++) y[i] = (b[i] - sc_dot(i, L + i * ld, y)) / L[i * ld + i];
}
static void solve_upper_t(int n, int ld, const double *L, const double *b, double *y)
{
    if (y != b) memcpy(y, b, (size_t)n * sizeof(double));
    for (int i = n - 1; i >= 0; i--) { /* column-oriented: row i of L is contiguous */
        const double *li = L + (size_t)i * ld;
        const double yi = y[i] /= li[i];
        for (int k = 0; k < i; k++) y[k] -= li[k] * yi;
    }
}

static const double *row_of(const sc_qp *p, int j) { return j < p->neq ? p->Aeq + (size_t)j * p->n : p->Ain + (size_t)(j - p->neq) * p->n; }
static double rhs_of(const sc_qp *p, int j) { return j < p->neq ? p->beq[j] : p->bin[j - p->neq]; }
/* A row holds when its slack, divided by the row's norm, is within this of 0 (or above). */
static double row_tol(double b, double anorm) { return 1e-8 * (1 + fabs(b) / (anorm > 0 ? anorm : 1)); }

/* Drops active row k. The Gram factor loses row and column k: the rows below move up and their
   trailing block takes the rank-one update by the dropped column (O(q^2), where refactoring is
   O(q^2 n)): L33' L33'^T = L33 L33^T + l32 l32^T. */
static void drop(sc_qp_work *w, int n, int *q, int k)
{
    const int ld = w->nmax, m = *q - 1 - k;
    double *v = w->x0, *L = w->LG; /* x0: free outside refine */
    for (int i = 0; i < m; i++) v[i] = L[(size_t)(k + 1 + i) * ld + k];
    for (int i = k; i + 1 < *q; i++) {
        w->active[i] = w->active[i + 1];
        w->sign[i] = w->sign[i + 1];
        w->u[i] = w->u[i + 1];
        memcpy(w->Wa + (size_t)i * ld, w->Wa + (size_t)(i + 1) * ld, (size_t)n * sizeof(double));
        double *row = L + (size_t)i * ld;
        const double *below = L + (size_t)(i + 1) * ld;
        memmove(row, below, (size_t)k * sizeof(double));
        memmove(row + k, below + k + 1, (size_t)(i + 1 - k) * sizeof(double));
    }
    (*q)--;
    for (int i = 0; i < m; i++) { /* the rank-one update of the trailing block (rows and columns k..q-1) */
        double *d = L + (size_t)(k + i) * ld + k + i;
        const double r = hypot(*d, v[i]), c = r / *d, sn = v[i] / *d;
        *d = r;
        for (int j = i + 1; j < m; j++) {
            double *e = L + (size_t)(k + j) * ld + k + i;
            *e = (*e + sn * v[j]) / c;
            v[j] = c * v[j] - sn * *e;
        }
    }
}

/* The largest residual of the q active rows at x, each row's into w->c. */
static double active_residual(const sc_qp *p, sc_qp_work *w, const double *x, int q)
{
    double worst = 0;
    for (int i = 0; i < q; i++) {
        const int j = w->active[i];
        w->c[i] = w->sign[i] * (sc_dot(p->n, row_of(p, j), x) - rhs_of(p, j));
        worst = fmax(worst, fabs(w->c[i]));
    }
    return worst;
}

/* The active rows drift off 0 by rounding where H is ill-conditioned (a tiny ridge on a
 * semi-definite H: 1.6e-4 of a row's scale was seen with a ridge of 1e-6). Up to two steps of
 * least H-norm back onto them: x -= H^-1 N r with (N'H^-1 N) r = N'x - b, which keeps
 * H x + g = N u with u -= r (up to rounding where an inequality's multiplier would dip below 0).
 * A step that does not reduce the residual, or (at a feasible x) that violates any row more, is
 * undone (the Gram factor itself has lost its digits when H is much worse conditioned). */
static void refine(const sc_qp *p, sc_qp_work *w, double *x, int q, int feasible)
{
    const int n = p->n, ld = w->nmax;
    double before = active_residual(p, w, x, q), violation = feasible && q > 0 ? sc_qp_violation(p, x) : 0;
    for (int step = 0; step < 2 && q > 0 && before > 0; step++) {
        memcpy(w->x0, x, (size_t)n * sizeof(double));
        memcpy(w->u0, w->u, (size_t)q * sizeof(double));
        solve_lower(q, ld, w->LG, w->c, w->r);
        solve_upper_t(q, ld, w->LG, w->r, w->r);
        memset(w->res, 0, (size_t)n * sizeof(double));
        for (int i = 0; i < q; i++)
            for (int k = 0; k < n; k++) w->res[k] += w->r[i] * w->Wa[(size_t)i * ld + k];
        solve_upper_t(n, ld, w->L, w->res, w->z);
        for (int i = 0; i < n; i++) x[i] -= w->z[i];
        for (int i = 0; i < q; i++) {
            w->u[i] -= w->r[i];
            if (w->active[i] >= p->neq && w->u[i] < 0) w->u[i] = 0; /* an inequality's stays >= 0 */
        }
        const double after = active_residual(p, w, x, q), after_violation = feasible ? sc_qp_violation(p, x) : 0;
        if (!(after < before) || !(after_violation <= fmax(violation, 1e-12))) {
            memcpy(x, w->x0, (size_t)n * sizeof(double));
            memcpy(w->u, w->u0, (size_t)q * sizeof(double));
            return;
        }
        before = after;
        violation = after_violation;
    }
}

/* Makes row j (with sign s) active, stepping x and the multipliers; 1 on success, 0 when the
 * problem is infeasible, -1 when the iterations ran out. */
static int add_row(const sc_qp *p, sc_qp_work *w, double *x, int *q, int j, int s, int *iters, int max_iters)
{
    const int n = p->n, ld = w->nmax;
    const double *a = row_of(p, j);
    const double b = s * rhs_of(p, j);
    double up = 0; /* the new row's multiplier, grown by partial steps */
    int refined = 0;
    const double anorm = sqrt(sc_dot(n, a, a));
    for (;;) {
        if (++*iters > max_iters) return -1;
        double slack = s * sc_dot(n, a, x) - b;
        for (int i = 0; i < n; i++) w->res[i] = s * a[i];
        solve_lower(n, ld, w->L, w->res, w->w);
        for (int i = 0; i < *q; i++) w->c[i] = sc_dot(n, w->Wa + (size_t)i * ld, w->w);
        solve_lower(*q, ld, w->LG, w->c, w->r);
        solve_upper_t(*q, ld, w->LG, w->r, w->r);
        memcpy(w->res, w->w, (size_t)n * sizeof(double));
        for (int i = 0; i < *q; i++)
            for (int k = 0; k < n; k++) w->res[k] -= w->r[i] * w->Wa[(size_t)i * ld + k];
        const double delta2 = sc_dot(n, w->res, w->res), w2 = sc_dot(n, w->w, w->w);
        /* a row within 1e-10 (relative) of the active rows' span counts as in it (at 1e-12 such
           rows were added and left a Gram factor singular to rounding: a node of bench_qpcc, at a
           degenerate vertex, was called infeasible); with n rows active, every row is (adding an
           (n+1)-th wrote past the arrays) */
        const int dependent = *q >= n || !(delta2 > 1e-20 * w2);
        double t2 = dependent ? INFINITY : -slack / delta2;
        double t1 = INFINITY;
        int k = -1;
        for (int i = 0; i < *q; i++)
            if (w->active[i] >= p->neq && w->r[i] > 0 && w->u[i] / w->r[i] < t1) {
                t1 = w->u[i] / w->r[i];
                k = i;
            }
        if (dependent && -slack / (anorm > 0 ? anorm : 1) <= row_tol(b, anorm)) return 1; /* implied by the active rows */
        if (!isfinite(t1) && !isfinite(t2)) {
            /* a dependent row that no drop makes room for: infeasible, unless its violation is the
               active rows' drift (a degenerate vertex, more rows through it than variables) */
            if (refined) return 0;
            refine(p, w, x, *q, 0);
            refined = 1;
            continue;
        }
        const double t = t1 < t2 ? t1 : t2;
        if (!dependent) {
            solve_upper_t(n, ld, w->L, w->res, w->z);
            for (int i = 0; i < n; i++) x[i] += t * w->z[i];
        }
        for (int i = 0; i < *q; i++) w->u[i] -= t * w->r[i];
        up += t;
        if (t2 <= t1) {
            /* extend the Gram factor by the new row: l = LG^-1 c, diagonal sqrt(|w|^2 - |l|^2) */
            double *lg = w->LG + (size_t)*q * ld;
            solve_lower(*q, ld, w->LG, w->c, lg);
            double d2 = w2 - sc_dot(*q, lg, lg);
            lg[*q] = sqrt(d2 > delta2 ? d2 : delta2);
            memcpy(w->Wa + (size_t)*q * ld, w->w, (size_t)n * sizeof(double));
            w->active[*q] = j;
            w->sign[*q] = (signed char)s;
            w->u[*q] = up;
            (*q)++;
            return 1;
        }
        w->u[k] = 0;
        drop(w, n, q, k);
    }
}

static int solve_scaled(const sc_qp *p, sc_qp_work *w, double *x, double *ueq, double *uin, int *iterations, int *nactive, sc_err *err)
{
    const int n = p->n, m = p->neq + p->nin, ld = w->nmax;
    for (int i = 0; i < n; i++) memcpy(w->L + (size_t)i * ld, p->H + (size_t)i * n, (size_t)n * sizeof(double));
    if (!cholesky(n, ld, w->L)) return sc_fail(err, SC_EINPUT, "qp: the Hessian is not positive definite");
    /* unconstrained minimum x = -H^-1 g */
    for (int i = 0; i < n; i++) w->res[i] = -p->g[i];
    solve_lower(n, ld, w->L, w->res, x);
    solve_upper_t(n, ld, w->L, x, x);
    int q = 0, iters = 0;
    const int max_iters = 10 * (n + m) + 50;
    for (int j = 0; j < p->neq; j++) {
        const double *a = row_of(p, j);
        int rc = add_row(p, w, x, &q, j, sc_dot(n, a, x) - p->beq[j] > 0 ? -1 : 1, &iters, max_iters);
        if (rc <= 0)
            return sc_fail(err, SC_ENUMERIC, rc < 0 ? "qp: no solution after %d iterations" : "qp: the equality rows contradict each other (row %d)",
                           rc < 0 ? iters : j);
    }
    /* then the most violated row until none is: inequalities, and equalities found implied by
       the others at the start that the steps since have moved off (rounding) */
    for (int j = 0; j < m; j++) w->an[j] = sqrt(sc_dot(n, row_of(p, j), row_of(p, j)));
    for (;;) {
        int worst = -1, worst_sign = 1;
        double worst_slack = 0;
        for (int j = 0; j < m; j++) {
            const double *a = row_of(p, j), b = rhs_of(p, j);
            const double an = w->an[j];
            double s = (sc_dot(n, a, x) - b) / (an > 0 ? an : 1);
            const int sign = j < p->neq && s > 0 ? -1 : 1;
            s *= sign;
            if (s < -row_tol(b, an) && s < worst_slack) {
                int is_active = 0;
                for (int i = 0; i < q && !is_active; i++) is_active = w->active[i] == j;
                if (is_active) continue;
                worst_slack = s;
                worst = j;
                worst_sign = sign;
            }
        }
        if (worst < 0) break;
        int rc = add_row(p, w, x, &q, worst, worst_sign, &iters, max_iters);
        if (rc < 0) return sc_fail(err, SC_ENUMERIC, "qp: no solution after %d iterations", iters);
        if (rc == 0)
            return sc_fail(err, SC_ENUMERIC, "qp: infeasible (%s row %d cannot hold with the active rows)",
                           worst < p->neq ? "equality" : "inequality", worst < p->neq ? worst : worst - p->neq);
    }
    refine(p, w, x, q, 1);
    if (ueq) memset(ueq, 0, (size_t)p->neq * sizeof(double));
    if (uin) memset(uin, 0, (size_t)p->nin * sizeof(double));
    for (int i = 0; i < q; i++) {
        const int j = w->active[i];
        if (j < p->neq) {
            if (ueq) ueq[j] = w->sign[i] * w->u[i];
        } else if (uin) uin[j - p->neq] = w->u[i];
    }
    *iterations = iters;
    *nactive = q;
    return SC_OK;
}

/* The problem is equilibrated first: variables scaled by D = diag(H)^-1/2 (so the scaled H
 * has a unit diagonal) and each row to unit norm, which keeps the active-set decisions sound
 * when the variables differ by orders of magnitude in scale (muscle lengths in metres against
 * contact impulses in N s); x and the multipliers are scaled back. */
int sc_qp_solve(const sc_qp *p, sc_qp_work *w, double *x, double *ueq, double *uin, sc_qp_result *res, sc_err *err)
{
    const int n = p->n, m = p->neq + p->nin;
    if (n < 1 || n > w->nmax || p->neq < 0 || p->nin < 0 || m > w->mmax)
        return sc_fail(err, SC_EINPUT, "qp: %d variables and %d rows exceed the workspace (%d, %d)", n, m, w->nmax, w->mmax);
    for (int i = 0; i < n; i++) {
        const double hii = p->H[(size_t)i * n + i];
        if (!(hii > 0)) return sc_fail(err, SC_EINPUT, "qp: the Hessian is not positive definite (diagonal %d is %g)", i, hii);
        w->d[i] = 1 / sqrt(hii);
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) w->Hs[(size_t)i * n + j] = w->d[i] * p->H[(size_t)i * n + j] * w->d[j];
        w->gs[i] = w->d[i] * p->g[i];
    }
    for (int j = 0; j < m; j++) {
        const double *a = row_of(p, j);
        double *as = w->As + (size_t)j * n, nrm = 0;
        for (int i = 0; i < n; i++) {
            as[i] = a[i] * w->d[i];
            nrm += as[i] * as[i];
        }
        nrm = sqrt(nrm);
        w->rs[j] = nrm > 0 ? 1 / nrm : 1;
        for (int i = 0; i < n; i++) as[i] *= w->rs[j];
        w->bs[j] = rhs_of(p, j) * w->rs[j];
    }
    sc_qp sp = {.n = n,
                .neq = p->neq,
                .nin = p->nin,
                .H = w->Hs,
                .g = w->gs,
                .Aeq = w->As,
                .beq = w->bs,
                .Ain = w->As + (size_t)p->neq * n,
                .bin = w->bs + p->neq};
    int iters = 0, nactive = 0;
    int rc = solve_scaled(&sp, w, x, ueq, uin, &iters, &nactive, err);
    if (rc) return rc;
    for (int i = 0; i < n; i++) x[i] *= w->d[i];
    if (ueq)
        for (int j = 0; j < p->neq; j++) ueq[j] *= w->rs[j];
    if (uin)
        for (int j = 0; j < p->nin; j++) uin[j] *= w->rs[p->neq + j];
    if (res) {
        double f = sc_dot(n, p->g, x);
        for (int i = 0; i < n; i++) f += 0.5 * x[i] * sc_dot(n, p->H + (size_t)i * n, x);
        res->objective = f;
        res->iterations = iters;
        res->nactive = nactive;
    }
    return SC_OK;
}

double sc_qp_violation(const sc_qp *p, const double *x)
{
    double v = 0;
    for (int j = 0; j < p->neq + p->nin; j++) {
        const double *a = row_of(p, j);
        const double an = sqrt(sc_dot(p->n, a, a));
        double s = (sc_dot(p->n, a, x) - rhs_of(p, j)) / (an > 0 ? an : 1);
        s = j < p->neq ? fabs(s) : -s;
        if (s > v) v = s;
    }
    return v;
}

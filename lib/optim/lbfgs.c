/* L-BFGS with a strong Wolfe line search (lbfgs.h). */
#include "optim/lbfgs.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WOLFE_C1        1e-4
#define WOLFE_C2        0.9
#define LINE_SEARCH_MAX 30

void sc_lbfgs_default_opts(sc_lbfgs_opts *o)
{
    o->memory = 8;
    o->max_iterations = 100;
    o->max_evaluations = 1000;
    o->gtol = 1e-6;
    o->ftol = 1e-10;
}

const char *sc_lbfgs_stop_name(int stop)
{
    static const char *const names[] = {"gradient", "stalled", "iterations", "evaluations", "line search"};
    return stop >= 0 && stop <= SC_LBFGS_LINE_SEARCH ? names[stop] : "?";
}

static double dot(int n, const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static double norm_inf(int n, const double *a)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
    return m;
}

static int all_finite(int n, const double *a)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(a[i])) return 0;
    return 1;
}

typedef struct line_point {
    double a, f, d; /* step, value, directional derivative */
} line_point;

typedef struct searcher {
    int n;
    const double *x0, *p;
    double *x, *g; /* trial point and its gradient */
    sc_lbfgs_fn fn;
    void *ctx;
    int *evaluations;
} searcher;

/* f and its slope along p at step a (a non-finite value counts as +inf: the step is too long) */
static int probe(searcher *s, double a, line_point *pt, sc_err *err)
{
    for (int i = 0; i < s->n; i++) s->x[i] = s->x0[i] + a * s->p[i];
    int rc = s->fn(s->ctx, s->x, &pt->f, s->g, err);
    (*s->evaluations)++;
    if (rc) return rc;
    pt->a = a;
    if (!isfinite(pt->f) || !all_finite(s->n, s->g)) {
        pt->f = INFINITY;
        pt->d = 0;
    } else pt->d = dot(s->n, s->g, s->p);
    return 0;
}

/* The minimiser of the cubic through lo and hi (value and slope at each), kept inside the middle
   80 % of the bracket; bisection when the cubic has none (Nocedal and Wright eq. 3.59). */
static double interpolate(const line_point *lo, const line_point *hi)
{
    const double mid = 0.5 * (lo->a + hi->a);
    if (!isfinite(hi->f)) return lo->a + 0.25 * (hi->a - lo->a);
    const double d1 = lo->d + hi->d - 3 * (lo->f - hi->f) / (lo->a - hi->a), disc = d1 * d1 - lo->d * hi->d;
    if (disc < 0) return mid;
    const double d2 = copysign(sqrt(disc), hi->a - lo->a);
    const double a = hi->a - (hi->a - lo->a) * (hi->d + d2 - d1) / (hi->d - lo->d + 2 * d2);
    const double left = fmin(lo->a, hi->a), width = fabs(hi->a - lo->a);
    if (!isfinite(a) || a < left + 0.1 * width || a > left + 0.9 * width) return mid;
    return a;
}

/* Algorithm 3.5 and 3.6 of Nocedal and Wright: *found = 1 with the accepted point in s->x, s->g
   and *best; 0 when no step met the conditions (then *best is the lowest point seen, x and g at it
   when it lowered f) */
static int wolfe_search(searcher *s, double f0, double d0, double a1, line_point *best, int *found, sc_err *err)
{
    line_point prev = {0, f0, d0}, cur, lo, hi;
    *found = 0;
    best->a = 0;
    best->f = f0;
    double a = a1;
    int rc, bracketed = 0;
    for (int k = 0; k < LINE_SEARCH_MAX && !bracketed; k++) {
        if ((rc = probe(s, a, &cur, err))) return rc;
        if (cur.f > f0 + WOLFE_C1 * a * d0 || (k > 0 && cur.f >= prev.f)) {
            lo = prev, hi = cur, bracketed = 1;
            break;
        }
        if (cur.f < best->f) *best = cur;
        if (fabs(cur.d) <= -WOLFE_C2 * d0) {
            *found = 1;
            return 0;
        }
        if (cur.d >= 0) {
            lo = cur, hi = prev, bracketed = 1;
            break;
        }
        prev = cur;
        a *= 2;
    }
    if (!bracketed) return 0;
    for (int k = 0; k < LINE_SEARCH_MAX; k++) {
        const double at = interpolate(&lo, &hi);
        if ((rc = probe(s, at, &cur, err))) return rc;
        if (cur.f > f0 + WOLFE_C1 * at * d0 || cur.f >= lo.f) hi = cur;
        else {
            if (cur.f < best->f) *best = cur;
            if (fabs(cur.d) <= -WOLFE_C2 * d0) {
                *found = 1;
                return 0;
            }
            if (cur.d * (hi.a - lo.a) >= 0) hi = lo;
            lo = cur;
        }
        if (fabs(hi.a - lo.a) <= 1e-14 * fmax(1, fabs(lo.a))) break;
    }
    /* no Wolfe point: accept the best that lowered f (sufficient decrease holds for it) */
    if (best->a > 0) {
        if ((rc = probe(s, best->a, &cur, err))) return rc;
        *found = 1;
    }
    return 0;
}

int sc_lbfgs_minimize(int n, double *x, sc_lbfgs_fn fn, void *ctx, const sc_lbfgs_opts *o, sc_lbfgs_progress progress, sc_lbfgs_result *r,
                      sc_err *err)
{
    memset(r, 0, sizeof *r);
    if (n < 1 || o->memory < 1 || o->max_iterations < 0 || o->max_evaluations < 1 || !(o->gtol >= 0) || !(o->ftol >= 0))
        return sc_fail(err, SC_EINPUT, "lbfgs: bad problem or options (n %d, memory %d)", n, o->memory);
    const int m = o->memory;
    /* g, d (direction), xt, gt (trial), then m pairs s and y */
    double *w = sc_alloc(err, (size_t)(4 + 2 * m) * n + 2 * (size_t)m, sizeof(double));
    if (!w) return SC_EIO;
    double *g = w, *d = g + n, *xt = d + n, *gt = xt + n, *S = gt + n, *Y = S + (size_t)m * n, *rho = Y + (size_t)m * n, *alpha = rho + m;
    double f;
    int rc = fn(ctx, x, &f, g, err);
    r->evaluations = 1;
    if (rc) goto done;
    if (!isfinite(f) || !all_finite(n, g)) {
        rc = sc_fail(err, SC_ENUMERIC, "lbfgs: the objective or its gradient is not finite at the start (f = %g)", f);
        goto done;
    }
    int npairs = 0, newest = -1;
    searcher s = {n, x, d, xt, gt, fn, ctx, &r->evaluations};
    r->stop = SC_LBFGS_ITERATIONS;
    for (int it = 1; it <= o->max_iterations; it++) {
        const double gnorm = norm_inf(n, g);
        if (gnorm <= o->gtol * fmax(1, fabs(f))) {
            r->stop = SC_LBFGS_GRADIENT;
            break;
        }
        if (r->evaluations >= o->max_evaluations) {
            r->stop = SC_LBFGS_EVALUATIONS;
            break;
        }
        /* two-loop recursion: d = -H g, newest pair first */
        for (int i = 0; i < n; i++) d[i] = -g[i];
        for (int k = 0; k < npairs; k++) {
            const int j = ((newest - k) % m + m) % m;
            alpha[j] = rho[j] * dot(n, S + (size_t)j * n, d);
            for (int i = 0; i < n; i++) d[i] -= alpha[j] * Y[(size_t)j * n + i];
        }
        double gamma = 1;
        if (npairs) {
            const double *sn = S + (size_t)newest * n, *yn = Y + (size_t)newest * n;
            gamma = dot(n, sn, yn) / dot(n, yn, yn);
        }
        for (int i = 0; i < n; i++) d[i] *= gamma;
        for (int k = npairs - 1; k >= 0; k--) {
            const int j = ((newest - k) % m + m) % m;
            const double beta = rho[j] * dot(n, Y + (size_t)j * n, d);
            for (int i = 0; i < n; i++) d[i] += (alpha[j] - beta) * S[(size_t)j * n + i];
        }
        double d0 = dot(n, g, d);
        if (!(d0 < 0)) { /* not a descent direction (rounding): restart from steepest descent */
            npairs = 0;
            for (int i = 0; i < n; i++) d[i] = -g[i];
            d0 = dot(n, g, d);
        }
        /* the first step has no curvature to go by: one of length 1 in the inf-norm */
        const double a1 = npairs ? 1.0 : 1.0 / norm_inf(n, d);
        line_point best;
        int found;
        if ((rc = wolfe_search(&s, f, d0, a1, &best, &found, err))) goto done;
        if (!found) {
            r->stop = SC_LBFGS_LINE_SEARCH;
            break;
        }
        /* the new pair s = x+ - x, y = g+ - g, kept when its curvature is positive (it would
           otherwise take the slot of the oldest pair, which stays) */
        double sy = 0, ss = 0, yy = 0;
        for (int i = 0; i < n; i++) {
            const double si = xt[i] - x[i], yi = gt[i] - g[i];
            sy += si * yi, ss += si * si, yy += yi * yi;
        }
        const double decrease = f - best.f;
        if (sy > 1e-12 * sqrt(ss * yy)) {
            newest = (newest + 1) % m;
            double *sn = S + (size_t)newest * n, *yn = Y + (size_t)newest * n;
            for (int i = 0; i < n; i++) {
                sn[i] = xt[i] - x[i];
                yn[i] = gt[i] - g[i];
            }
            rho[newest] = 1 / sy;
            if (npairs < m) npairs++;
        }
        memcpy(x, xt, sizeof(double) * n);
        memcpy(g, gt, sizeof(double) * n);
        f = best.f;
        r->iterations = it;
        if (progress) progress(ctx, it, x, f, norm_inf(n, g));
        if (decrease <= o->ftol * fmax(1, fabs(f))) {
            r->stop = SC_LBFGS_STALLED;
            break;
        }
    }
done:
    r->f = f;
    r->gnorm = norm_inf(n, g);
    free(w);
    return rc;
}

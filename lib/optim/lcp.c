/* Lemke's method (lcp.h). The tableau holds w - M z - e z0 = q with one row per basic
 * variable; columns 0..n-1 are w, n..2n-1 are z, 2n is z0 and 2n+1 the right-hand side. */
#include "optim/lcp.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int sc_lcp_lemke(int n, const double *M, const double *q, double *z, int max_pivots, sc_err *err)
{
    double *T = malloc(SC_LCP_TABLEAU(n > 0 ? n : 1) * sizeof(double));
    int *basic = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    int rc = T && basic ? sc_lcp_lemke_in(n, M, q, z, max_pivots, T, basic, err) : sc_fail(err, SC_EIO, "lcp: out of memory");
    free(T);
    free(basic);
    return rc;
}

int sc_lcp_lemke_in(int n, const double *M, const double *q, double *z, int max_pivots, double *T, int *basic, sc_err *err)
{
    memset(z, 0, (size_t)n * sizeof(double));
    int t = -1;
    for (int i = 0; i < n; i++)
        if (q[i] < 0 && (t < 0 || q[i] < q[t])) t = i;
    if (t < 0) return SC_OK; /* z = 0 */
    const int cols = 2 * n + 2, rhs = 2 * n + 1, z0 = 2 * n;
    double scale = 0;
    for (int i = 0; i < n; i++) {
        double *r = T + (size_t)i * cols;
        memset(r, 0, (size_t)cols * sizeof(double));
        r[i] = 1;
        for (int j = 0; j < n; j++) {
            r[n + j] = -M[(size_t)i * n + j];
            scale = fmax(scale, fabs(M[(size_t)i * n + j]));
        }
        r[z0] = -1;
        r[rhs] = q[i];
        basic[i] = i;
    }
    const double eps = 1e-12 * (1 + scale);
    int row = t, col = z0, rc = SC_ENUMERIC, pivots = 0, ray = 0;
    for (int it = 0; it < max_pivots; it++) {
        pivots = it + 1;
        /* pivot on (row, col) */
        double *pr = T + (size_t)row * cols;
        const double piv = pr[col];
        for (int j = 0; j < cols; j++) pr[j] /= piv;
        for (int i = 0; i < n; i++) {
            if (i == row) continue;
            double *ri = T + (size_t)i * cols;
            const double f = ri[col];
            if (f == 0) continue;
            for (int j = 0; j < cols; j++) ri[j] -= f * pr[j];
        }
        const int leaving = basic[row];
        basic[row] = col;
        if (leaving == z0) {
            rc = SC_OK;
            break;
        }
        /* the complement of the leaving variable enters */
        col = leaving < n ? leaving + n : leaving - n;
        /* ratio test: basic variables fall as the entering one grows where T[i][col] > 0 (they
           equal rhs - T x); ties are broken lexicographically on the rows of B^-1 (the w
           columns) over the pivot, which rules out cycling on degenerate problems, and z0
           leaves first when it can */
        row = -1;
        double best = INFINITY;
        for (int i = 0; i < n; i++) {
            const double a = T[(size_t)i * cols + col];
            if (a <= eps) continue;
            const double ratio = T[(size_t)i * cols + rhs] / a;
            if (row < 0 || ratio < best - 1e-12 * (1 + fabs(best))) {
                best = ratio;
                row = i;
                continue;
            }
            if (ratio > best + 1e-12 * (1 + fabs(best))) continue;
            if (basic[row] == z0) continue;
            if (basic[i] == z0) {
                row = i;
                continue;
            }
            const double ar = T[(size_t)row * cols + col];
            for (int j = 0; j < n; j++) {
                const double vi = T[(size_t)i * cols + j] / a, vr = T[(size_t)row * cols + j] / ar;
                if (vi < vr - 1e-14) {
                    row = i;
                    break;
                }
                if (vi > vr + 1e-14) break;
            }
        }
        if (row < 0) { /* a ray: Lemke cannot solve this one */
            ray = 1;
            break;
        }
    }
    if (rc == SC_OK) {
        for (int i = 0; i < n; i++)
            if (basic[i] >= n && basic[i] < 2 * n) z[basic[i] - n] = fmax(0, T[(size_t)i * cols + rhs]);
    } else
        rc = sc_fail(err, SC_ENUMERIC,
                     ray ? "lcp: Lemke's method ended on a ray after %d pivots (no solution found)" : "lcp: no solution in %d pivots", pivots);
    return rc;
}

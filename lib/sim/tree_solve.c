/* Linear-time constraint solve over a tree of rigid bodies. See tree_solve.h.
 *
 * Elimination order: for b = n-1 .. 1 the body b (its child joints are already eliminated:
 * children have larger indices), then the joint b; the root body last. With
 * K = [M J^T; J -Sigma] a node's pivot block is
 *     body b:  D_b = M_b + sum over child joints c of Jp_c^T N_c^-1 Jp_c       (positive definite)
 *     joint b: D_j = -Sigma - Jc D_b^-1 Jc^T = -N_b                            (negative definite)
 * so both are factored as Cholesky blocks (N_b for the joint), at most 6 x 6 each. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim/tree_solve.h"

_Static_assert(SC_TREE_MAX_ROWS == 6, "the blocks are 6 x 6");

struct sc_tree_solver {
    int n;
    int *parent;
    double (*d)[6][6];      /* [n] body pivot D_b, then its Cholesky factor */
    double (*lb)[6][6];     /* [n] D_b^-1 Jc^T (6 x rows) */
    double (*nf)[6][6];     /* [n] Cholesky factor of N_b */
    double (*nj)[6][6];     /* [n] N_b^-1 Jp (rows x 6) */
    double (*bb)[6], (*bj)[6], (*xb)[6];
};

void sc_tree_solver_free(sc_tree_solver *t)
{
    if (!t) return;
    free(t->parent); free(t->d); free(t->lb); free(t->nf); free(t->nj); free(t->bb); free(t->bj); free(t->xb);
    free(t);
}

int sc_tree_solver_create(int n, const int *parent, sc_tree_solver **out, sc_err *err)
{
    *out = NULL;
    if (n < 1) return sc_fail(err, SC_EINPUT, "tree solver: %d bodies", n);
    for (int b = 0; b < n; b++)
        if (b == 0 ? parent[0] != -1 : (parent[b] < 0 || parent[b] >= b))
            return sc_fail(err, SC_EINPUT, "tree solver: body %d has parent %d (needs a tree numbered from its root)", b, parent[b]);
    sc_tree_solver *t = sc_alloc(err, 1, sizeof *t);
    if (!t) return SC_EIO;
    t->n = n;
    t->parent = sc_alloc(err, n, sizeof *t->parent);
    t->d = sc_alloc(err, n, sizeof *t->d);
    t->lb = sc_alloc(err, n, sizeof *t->lb);
    t->nf = sc_alloc(err, n, sizeof *t->nf);
    t->nj = sc_alloc(err, n, sizeof *t->nj);
    t->bb = sc_alloc(err, n, sizeof *t->bb);
    t->bj = sc_alloc(err, n, sizeof *t->bj);
    t->xb = sc_alloc(err, n, sizeof *t->xb);
    if (!t->parent || !t->d || !t->lb || !t->nf || !t->nj || !t->bb || !t->bj || !t->xb) {
        sc_tree_solver_free(t);
        return SC_EIO;
    }
    for (int b = 0; b < n; b++) t->parent[b] = parent[b];
    *out = t;
    return SC_OK;
}

/* The blocks are all 6 x 6 (a joint's rows past its m are zero with Sigma 1, so their lambda
 * is 0): fixed sizes let the compiler unroll and vectorize every loop. */
typedef double mat6[6][6];

/* In-place lower Cholesky factor of a (lower triangle read), its diagonal replaced by the
 * reciprocals; -1 if not positive definite. */
static int cholesky6(mat6 a)
{
    for (int j = 0; j < 6; j++) {
        double d = a[j][j];
        for (int p = 0; p < j; p++) d -= a[j][p] * a[j][p];
        if (!(d > 0) || !isfinite(d)) return -1;
        double inv = 1 / sqrt(d);
        a[j][j] = inv;
        for (int i = j + 1; i < 6; i++) {
            double v = a[i][j];
            for (int p = 0; p < j; p++) v -= a[i][p] * a[j][p];
            a[i][j] = v * inv;
        }
    }
    return 0;
}

/* x <- (L L^T)^-1 x, every column of x at once. */
static void cholesky6_solve(const mat6 l, mat6 x)
{
    for (int i = 0; i < 6; i++) {
        for (int p = 0; p < i; p++)
            for (int c = 0; c < 6; c++) x[i][c] -= l[i][p] * x[p][c];
        for (int c = 0; c < 6; c++) x[i][c] *= l[i][i];
    }
    for (int i = 5; i >= 0; i--) {
        for (int p = i + 1; p < 6; p++)
            for (int c = 0; c < 6; c++) x[i][c] -= l[p][i] * x[p][c];
        for (int c = 0; c < 6; c++) x[i][c] *= l[i][i];
    }
}

static void cholesky6_solve_vec(const mat6 l, double *x)
{
    for (int i = 0; i < 6; i++) {
        double v = x[i];
        for (int p = 0; p < i; p++) v -= l[i][p] * x[p];
        x[i] = v * l[i][i];
    }
    for (int i = 5; i >= 0; i--) {
        double v = x[i];
        for (int p = i + 1; p < 6; p++) v -= l[p][i] * x[p];
        x[i] = v * l[i][i];
    }
}

int sc_tree_solve(sc_tree_solver *t, const double *mass, const double *inertia, const sc_tree_rows *rows, double *lambda)
{
    const int n = t->n;
    for (int b = 0; b < n; b++) {
        double(*d)[6] = t->d[b];
        memset(d, 0, sizeof(mat6));
        d[0][0] = d[1][1] = d[2][2] = mass[b];
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) d[3 + i][3 + k] = inertia[9 * b + 3 * i + k];
        memset(t->bb[b], 0, sizeof t->bb[b]);
    }
    /* factor, leaves first; the forward substitution of rhs goes along */
    for (int b = n - 1; b >= 1; b--) {
        const sc_tree_rows *j = &rows[b];
        const int m = j->m, p = t->parent[b];
        mat6 c, pj; /* Jc^T (column r = child row r) and Jp (row r), zero past m */
        double rhs[6], sig[6];
        for (int r = 0; r < 6; r++) {
            const int on = r < m;
            for (int k = 0; k < 6; k++) {
                c[k][r] = on ? j->child[r][k] : 0;
                pj[r][k] = on ? j->parent[r][k] : 0;
            }
            rhs[r] = on ? j->rhs[r] : 0;
            sig[r] = on ? j->sigma[r] : 1;
        }
        if (cholesky6(t->d[b])) return -1;
        double(*lb)[6] = t->lb[b]; /* D_b^-1 Jc^T */
        memcpy(lb, c, sizeof(mat6));
        cholesky6_solve(t->d[b], lb);
        double(*nf)[6] = t->nf[b]; /* N = Sigma + Jc D_b^-1 Jc^T */
        for (int r = 0; r < 6; r++)
            for (int s = 0; s < 6; s++) {
                double v = r == s ? sig[r] : 0;
                for (int k = 0; k < 6; k++) v += c[k][r] * lb[k][s];
                nf[r][s] = v;
            }
        if (cholesky6(nf)) return -1;
        double(*nj)[6] = t->nj[b]; /* N^-1 Jp */
        memcpy(nj, pj, sizeof(mat6));
        cholesky6_solve(nf, nj);
        double(*dp)[6] = t->d[p];
        for (int r = 0; r < 6; r++)
            for (int i = 0; i < 6; i++)
                for (int k = 0; k < 6; k++) dp[i][k] += pj[r][i] * nj[r][k];
        for (int r = 0; r < 6; r++) {
            double v = rhs[r];
            for (int k = 0; k < 6; k++) v -= lb[k][r] * t->bb[b][k];
            t->bj[b][r] = v;
        }
        for (int r = 0; r < 6; r++)
            for (int k = 0; k < 6; k++) t->bb[p][k] += nj[r][k] * t->bj[b][r];
    }
    if (cholesky6(t->d[0])) return -1;
    /* back substitution, root first */
    memcpy(t->xb[0], t->bb[0], sizeof t->xb[0]);
    cholesky6_solve_vec(t->d[0], t->xb[0]);
    for (int b = 1; b < n; b++) {
        const int p = t->parent[b];
        double xj[6];
        memcpy(xj, t->bj[b], sizeof xj);
        cholesky6_solve_vec(t->nf[b], xj);
        for (int r = 0; r < 6; r++) {
            double v = -xj[r]; /* -N^-1 bj + N^-1 Jp x_p */
            for (int k = 0; k < 6; k++) v += t->nj[b][r][k] * t->xb[p][k];
            xj[r] = v;
        }
        for (int r = 0; r < rows[b].m; r++) lambda[6 * b + r] = -xj[r];
        double *xb = t->xb[b];
        memcpy(xb, t->bb[b], sizeof t->xb[b]);
        cholesky6_solve_vec(t->d[b], xb);
        for (int r = 0; r < 6; r++)
            for (int k = 0; k < 6; k++) xb[k] -= t->lb[b][k][r] * xj[r];
    }
    return 0;
}

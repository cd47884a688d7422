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

/* A 6 x 6 block is 6 rows of 8 lanes (the last two 0): every row operation is a vector one. */
typedef double row8 __attribute__((vector_size(64)));
typedef row8 mat6[6];

struct sc_tree_solver {
    int n;
    int *parent;
    mat6 *d;  /* [n] body pivot D_b, then its Cholesky factor */
    mat6 *lb; /* [n] D_b^-1 Jc^T (6 x rows) */
    mat6 *nf; /* [n] Cholesky factor of N_b */
    mat6 *nj; /* [n] N_b^-1 Jp (rows x 6) */
    row8 *bb, *bj, *xb;
};

void sc_tree_solver_free(sc_tree_solver *t)
{
    if (!t) return;
    free(t->parent);
    free(t->d);
    free(t->lb);
    free(t->nf);
    free(t->nj);
    free(t->bb);
    free(t->bj);
    free(t->xb);
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
    /* row8 wants 64-byte alignment */
    t->d = aligned_alloc(64, n * sizeof *t->d);
    t->lb = aligned_alloc(64, n * sizeof *t->lb);
    t->nf = aligned_alloc(64, n * sizeof *t->nf);
    t->nj = aligned_alloc(64, n * sizeof *t->nj);
    t->bb = aligned_alloc(64, n * sizeof *t->bb);
    t->bj = aligned_alloc(64, n * sizeof *t->bj);
    t->xb = aligned_alloc(64, n * sizeof *t->xb);
    if (!t->parent || !t->d || !t->lb || !t->nf || !t->nj || !t->bb || !t->bj || !t->xb) {
        sc_tree_solver_free(t);
        return sc_fail(err, SC_EIO, "tree solver: out of memory for %d bodies", n);
    }
    for (int b = 0; b < n; b++) t->parent[b] = parent[b];
    *out = t;
    return SC_OK;
}

/* The blocks are all 6 x 6 (a joint's rows past its m are zero with Sigma 1, so their lambda
 * is 0): fixed sizes and 8-lane rows let every inner loop be a vector operation. */

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

/* x <- (L L^T)^-1 x, the 6 columns of x at once. */
static void cholesky6_solve(const mat6 l, mat6 x)
{
    for (int i = 0; i < 6; i++) {
        row8 v = x[i];
        for (int p = 0; p < i; p++) v -= l[i][p] * x[p];
        x[i] = v * l[i][i];
    }
    for (int i = 5; i >= 0; i--) {
        row8 v = x[i];
        for (int p = i + 1; p < 6; p++) v -= l[p][i] * x[p];
        x[i] = v * l[i][i];
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

static double dot8(const row8 *a, const row8 *b) /* by pointer: a 64-byte vector argument's ABI depends on AVX-512 */
{
    row8 c = *a * *b;
    return ((c[0] + c[1]) + (c[2] + c[3])) + ((c[4] + c[5]) + (c[6] + c[7]));
}

int sc_tree_solve(sc_tree_solver *t, const double *mass, const double *inertia, const sc_tree_rows *rows, double *lambda)
{
    const int n = t->n;
    const row8 zero = {0};
    for (int b = 0; b < n; b++) {
        row8 *d = t->d[b];
        for (int i = 0; i < 6; i++) d[i] = zero;
        d[0][0] = d[1][1] = d[2][2] = mass[b];
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) d[3 + i][3 + k] = inertia[9 * b + 3 * i + k];
        t->bb[b] = zero;
    }
    /* factor, leaves first; the forward substitution of rhs goes along */
    for (int b = n - 1; b >= 1; b--) {
        const sc_tree_rows *j = &rows[b];
        const int m = j->m, p = t->parent[b];
        mat6 jc, jp; /* Jc and Jp, row r, zero past m */
        row8 rhs = zero, sig = zero;
        for (int r = 0; r < 6; r++) {
            jc[r] = jp[r] = zero;
            for (int k = 0; k < 6 && r < m; k++) {
                jc[r][k] = j->child[r][k];
                jp[r][k] = j->parent[r][k];
            }
            rhs[r] = r < m ? j->rhs[r] : 0;
            sig[r] = r < m ? j->sigma[r] : 1;
        }
        row8 *db = t->d[b], *lb = t->lb[b], *nf = t->nf[b], *nj = t->nj[b], *dp = t->d[p];
        if (cholesky6(db)) return -1;
        for (int k = 0; k < 6; k++) /* Jc^T */
            for (int r = 0; r < 6; r++) lb[k][r] = jc[r][k];
        for (int k = 6; k < 8; k++)
            for (int r = 0; r < 6; r++) lb[r][k] = 0;
        cholesky6_solve(db, lb);      /* D_b^-1 Jc^T */
        for (int r = 0; r < 6; r++) { /* N = Sigma + Jc D_b^-1 Jc^T */
            row8 v = zero;
            v[r] = sig[r];
            for (int k = 0; k < 6; k++) v += jc[r][k] * lb[k];
            nf[r] = v;
        }
        if (cholesky6(nf)) return -1;
        for (int r = 0; r < 6; r++) nj[r] = jp[r];
        cholesky6_solve(nf, nj);      /* N^-1 Jp */
        for (int i = 0; i < 6; i++) { /* D_p += Jp^T N^-1 Jp */
            row8 v = dp[i];
            for (int r = 0; r < 6; r++) v += jp[r][i] * nj[r];
            dp[i] = v;
        }
        row8 bj = rhs; /* rhs - (D_b^-1 Jc^T)^T bb_b */
        for (int k = 0; k < 6; k++) bj -= t->bb[b][k] * lb[k];
        t->bj[b] = bj;
        row8 bp = t->bb[p];
        for (int r = 0; r < 6; r++) bp += bj[r] * nj[r];
        t->bb[p] = bp;
    }
    if (cholesky6(t->d[0])) return -1;
    /* back substitution, root first */
    double x[8];
    memcpy(x, &t->bb[0], sizeof x);
    cholesky6_solve_vec(t->d[0], x);
    memcpy(&t->xb[0], x, sizeof x);
    for (int b = 1; b < n; b++) {
        const row8 xp = t->xb[t->parent[b]];
        double xj[8];
        memcpy(xj, &t->bj[b], sizeof xj);
        cholesky6_solve_vec(t->nf[b], xj);
        for (int r = 0; r < 6; r++) xj[r] = dot8(&t->nj[b][r], &xp) - xj[r]; /* -N^-1 bj + N^-1 Jp x_p */
        for (int r = 0; r < rows[b].m; r++) lambda[6 * b + r] = -xj[r];
        row8 xjv = {xj[0], xj[1], xj[2], xj[3], xj[4], xj[5], 0, 0};
        memcpy(x, &t->bb[b], sizeof x);
        cholesky6_solve_vec(t->d[b], x);
        for (int k = 0; k < 6; k++) x[k] -= dot8(&t->lb[b][k], &xjv);
        memcpy(&t->xb[b], x, sizeof x);
    }
    return 0;
}

/* Bounded biharmonic weights (Jacobson, Baran, Popovic, Sorkine 2011) on a tet mesh, the
 * skinning weights of [L13] eq. 13 (section 4.2.2): the fixed nodes of each bone are its handles.
 *
 * Per bone j, independently:  minimize 1/2 w^T Q w,  Q = K M^-1 K,
 *   K  linear-FEM (cotangent) stiffness matrix of the scalar Laplacian, K_ab = sum_t V_t grad(phi_a).grad(phi_b)
 *   M  lumped mass matrix (V_t / 4 per node of each tet),
 *   w = 1 on bone j's handle nodes, w = 0 on every other handle node, 0 <= w <= 1 on free nodes.
 * The rows are then divided by their sums (partition of unity).
 *
 * Solver: the exact optimum of each bound-constrained QP, by a primal-dual active set method
 * (Hintermueller, Ito, Kunisch 2003) warm-started from the clamped unconstrained solution. One
 * fill-reducing ordering (CHOLMOD analysis) of the full free block serves every bone; each iteration
 * factorizes only the principal submatrix of the currently inactive nodes in that ordering restricted
 * (symbolic steps redone, no new ordering). If the method cycles or stalls it falls back to a primal
 * (feasible) active set method whose LDL' factor is modified in place by CHOLMOD row additions and
 * deletions, which terminates. The solve runs on one core: it sets OpenMP max-active-levels to 0 and
 * OpenBLAS to one thread for its duration (restored on return; see bbw.c), so it must not run while
 * other threads use OpenMP or BLAS.
 *
 * Relative KKT residual (certificate, per bone). With F the free nodes, g = (Q w)_F the gradient,
 *   viol_i = |g_i|           if 0 < w_i < 1
 *          = max(0, -g_i)    if w_i = 0
 *          = max(0,  g_i)    if w_i = 1
 *   kkt = max( max_i viol_i / (||Q_F,:||_inf * max(1, ||w||_inf)),  max_i dist(w_i, [0,1]) )
 * where ||Q_F,:||_inf = max over free rows of sum_j |Q_ij| (all columns, handles included) is the
 * size of the gradient that an O(1) change of w could produce. The solve fails with SC_ENUMERIC if a
 * bone cannot reach opts->tol. */
#ifndef SC_BBW_H
#define SC_BBW_H
#include "core/status.h"

enum { SC_BBW_AUTO = 0, SC_BBW_PRIMAL = 1 };

typedef struct sc_bbw_opts {
    double tol;   /* relative KKT residual target, default 1e-8 (<= 0 selects it) */
    int max_iter; /* per bone, primal-dual iterations (factorizations), default 100 (<= 0 selects it);
                     the primal fallback may add up to 4 * (free nodes) + max_iter working-set changes */
    int method;   /* SC_BBW_AUTO, or SC_BBW_PRIMAL: primal active set only (a slow reference) */
    int raw;      /* nonzero: skip the normalization, return each bone's QP solution as is */
} sc_bbw_opts;

typedef struct sc_bbw_bone_stats {
    int iterations;             /* primal-dual iterations + primal active-set changes */
    int fallback;               /* 1 if the primal active set method was used */
    double kkt_residual;        /* relative, see above */
    int nactive_lo, nactive_hi; /* free nodes at 0 / at 1 at the solution */
    double seconds;
} sc_bbw_bone_stats;

typedef struct sc_bbw_stats {
    double max_rowsum_dev_before_norm; /* max_i |sum_j w_ij - 1| of the raw solve */
    double max_change_by_norm;         /* max_ij |w_ij(normalized) - w_ij(raw)| */
    double max_kkt_residual;           /* over bones */
    int nfree;                         /* free (non-handle) nodes */
    long factor_nnz;                   /* nonzeros of the Cholesky factor of the free block */
    double seconds;
} sc_bbw_stats;

sc_bbw_opts sc_bbw_default_opts(void);

/* nnodes rest positions (3n), ntets tets (4 per tet, either orientation), handle_bone[i] = bone index
 * of node i if node i is a handle (fixed node), else -1. weights out: nnodes*nbones row-major (node i,
 * bone j). opts, bone_stats ([nbones]) and stats may be NULL. Errors (SC_EINPUT): no handles at all; a
 * bone with no handle node; disconnected tet mesh; degenerate tets; indices out of range.
 * SC_ENUMERIC: a bone's QP could not be solved to opts->tol. */
int sc_bbw_solve(int nnodes, const double *rest_pos, int ntets, const int *tets, int nbones, const int *handle_bone, const sc_bbw_opts *opts,
                 double *weights, sc_bbw_bone_stats *bone_stats, sc_bbw_stats *stats, sc_err *err);

/* Sparse top-k form: for each node the k largest weights (descending), renormalized to sum 1;
 * unused slots (k > nbones, or zero weights) have bone -1 and w 0. */
void sc_bbw_topk(int nnodes, int nbones, const double *weights, int k, int *topk_bone, double *topk_w);

#endif

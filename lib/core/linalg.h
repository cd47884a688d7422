/* Dense linear algebra on LAPACKE/OpenBLAS (the only file that includes them). */
#ifndef SC_LINALG_H
#define SC_LINALG_H
#include "core/status.h"

/* Ridge regression: W (p x q, row-major) minimizing |X W - Y|^2 + lambda |W|^2 for X (n x p) and
 * Y (n x q) row-major, by a Cholesky solve of (X^T X + lambda I) W = X^T Y. The caller centres
 * and scales the columns. SC_ENUMERIC when the system is not positive definite (lambda 0 and
 * fewer independent rows than p). */
int sc_ridge(int n, int p, int q, const double *X, const double *Y, double lambda, double *W, sc_err *err);

/* Solves S X = B in place (B becomes X) for a symmetric positive definite S (n x n, row-major;
 * overwritten) and B (n x q, row-major). SC_ENUMERIC when S is not positive definite. */
int sc_spd_solve(int n, int q, double *S, double *B, sc_err *err);

/* Solves A X = B in place (B becomes X) for a general square A (n x n, row-major; overwritten
 * by its LU factors) and B (n x q, row-major), with partial pivoting. SC_ENUMERIC when A is
 * singular. */
int sc_solve(int n, int q, double *A, double *B, sc_err *err);

/* OpenMP (max-active-levels 0) and OpenBLAS (one thread) serialized for a caller whose solves are
 * too small for their threads, and restored. The setters are looked up at run time (libgomp and
 * OpenBLAS come in through libcholmod and LAPACK; absent ones are skipped). Changes process-wide
 * settings: not for use while other threads run OpenMP or BLAS code. */
typedef struct sc_threads_saved {
    int omp_levels, blas_threads;
} sc_threads_saved;
sc_threads_saved sc_threads_serialize(void);
void sc_threads_restore(sc_threads_saved saved);

/* Eigen-decomposition of a symmetric matrix S (n x n, row-major; overwritten by the
 * eigenvectors, column j the one of w[j]): eigenvalues w[n] ascending (LAPACK dsyev).
 * SC_ENUMERIC when the iteration does not converge. */
int sc_sym_eigen(int n, double *S, double *w, sc_err *err);

/* The periodic discrete-time linear-quadratic regulator. For x_{j+1} = A_j x_j + B_j u_j over a
 * cycle of m stages (A: m blocks of n x n, B: m blocks of n x q, row-major) with the stage cost
 * x'Qx + u'Ru (Q n x n, R q x q, symmetric; R positive definite), the gains K (m blocks of q x n)
 * of u_j = -K_j x_j: the Riccati recursion P_j = Q + A_j' P_{j+1} (A_j - B_j K_j),
 * K_j = (R + B_j' P_{j+1} B_j)^-1 B_j' P_{j+1} A_j, run backwards over `cycles` cycles from
 * P = Q; K is that of the first cycle (the periodic solution as cycles grows). */
int sc_lqr_periodic(int n, int q, int m, const double *A, const double *B, const double *Q, const double *R, int cycles, double *K, sc_err *err);
/* The same for an ensemble of `models` systems (A: models x m blocks, B likewise): the gains that
 * minimise the expected cost when each stage's system is drawn from the ensemble, K_j = (R +
 * E[B'PB])^-1 E[B'PA], P_j = Q + E[A'PA] - E[B'PA]' K_j (the LQR of multiplicative noise): a
 * direction the models disagree on is weighed by its spread, so gains stay small where the fit
 * is uncertain. One model: sc_lqr_periodic bit for bit. */
int sc_lqr_periodic_ensemble(int n, int q, int m, int models, const double *A, const double *B, const double *Q, const double *R, int cycles,
                             double *K, sc_err *err);

#endif

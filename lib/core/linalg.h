/* Dense linear algebra on LAPACKE/OpenBLAS (the only file that includes them). */
#ifndef SC_LINALG_H
#define SC_LINALG_H
#include "core/status.h"

/* Ridge regression: W (p x q, row-major) minimizing |X W - Y|^2 + lambda |W|^2 for X (n x p) and
 * Y (n x q) row-major, by a Cholesky solve of (X^T X + lambda I) W = X^T Y. The caller centres
 * and scales the columns. SC_ENUMERIC when the system is not positive definite (lambda 0 and
 * fewer independent rows than p). */
int sc_ridge(int n, int p, int q, const double *X, const double *Y, double lambda, double *W, sc_err *err);

#endif

#include <lapacke.h>
#include <stdlib.h>
#include <string.h>
#include "core/linalg.h"

int sc_ridge(int n, int p, int q, const double *X, const double *Y, double lambda, double *W, sc_err *err)
{
    double *A = calloc((size_t)p * p, sizeof(double));
    if (!A) return sc_fail(err, SC_EIO, "out of memory");
    /* normal equations, accumulated in a fixed order (results do not depend on BLAS threading) */
    for (int r = 0; r < n; r++) {
        const double *x = X + (size_t)r * p;
        for (int i = 0; i < p; i++)
            for (int j = 0; j <= i; j++) A[(size_t)i * p + j] += x[i] * x[j];
    }
    for (int i = 0; i < p; i++) {
        A[(size_t)i * p + i] += lambda;
        for (int j = 0; j < i; j++) A[(size_t)j * p + i] = A[(size_t)i * p + j];
    }
    memset(W, 0, sizeof(double) * (size_t)p * q);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++) W[(size_t)i * q + j] += X[(size_t)r * p + i] * Y[(size_t)r * q + j];
    lapack_int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', p, q, A, p, W, q);
    free(A);
    if (info > 0) return sc_fail(err, SC_ENUMERIC, "ridge regression: the %d x %d normal matrix is not positive definite (minor %d)", p, p, (int)info);
    if (info < 0) return sc_fail(err, SC_EINPUT, "ridge regression: LAPACKE_dposv argument %d", (int)-info);
    return SC_OK;
}

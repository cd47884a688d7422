#include <dlfcn.h>
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
    int rc = sc_spd_solve(p, q, A, W, err);
    free(A);
    if (rc) sc_err_prefix(err, "ridge regression, normal equations: ");
    return rc;
}

int sc_spd_solve(int n, int q, double *S, double *B, sc_err *err)
{
    lapack_int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, q, S, n, B, q);
    if (info > 0) return sc_fail(err, SC_ENUMERIC, "the %d x %d matrix is not positive definite (minor %d)", n, n, (int)info);
    if (info < 0) return sc_fail(err, SC_EINPUT, "LAPACKE_dposv argument %d", (int)-info);
    return SC_OK;
}

int sc_solve(int n, int q, double *A, double *B, sc_err *err)
{
    lapack_int *piv = malloc(((size_t)n + 1) * sizeof *piv);
    if (!piv) return sc_fail(err, SC_EIO, "out of memory");
    lapack_int info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, n, q, A, n, piv, B, q);
    free(piv);
    if (info > 0) return sc_fail(err, SC_ENUMERIC, "the %d x %d matrix is singular (pivot %d)", n, n, (int)info);
    if (info < 0) return sc_fail(err, SC_EINPUT, "LAPACKE_dgesv argument %d", (int)-info);
    return SC_OK;
}

static void *fn_lookup(const char *name, size_t size, void *fn)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p) memcpy(fn, &p, size); /* object to function pointer without a cast */
    return p;
}

sc_threads_saved sc_threads_serialize(void)
{
    sc_threads_saved s = {-1, -1};
    int (*get)(void);
    void (*set)(int);
    if (fn_lookup("omp_get_max_active_levels", sizeof get, &get) && fn_lookup("omp_set_max_active_levels", sizeof set, &set)) {
        s.omp_levels = get();
        set(0);
    }
    if (fn_lookup("openblas_get_num_threads", sizeof get, &get) && fn_lookup("openblas_set_num_threads", sizeof set, &set)) {
        s.blas_threads = get();
        if (s.blas_threads != 1) set(1);
    }
    return s;
}

void sc_threads_restore(sc_threads_saved s)
{
    void (*set)(int);
    if (s.omp_levels >= 0 && fn_lookup("omp_set_max_active_levels", sizeof set, &set)) set(s.omp_levels);
    if (s.blas_threads > 1 && fn_lookup("openblas_set_num_threads", sizeof set, &set)) set(s.blas_threads);
}

int sc_sym_eigen(int n, double *S, double *w, sc_err *err)
{
    /* OpenBLAS's woken threads spin on after the call: on 2 cores they slowed the next steps 2-5 x */
    sc_threads_saved threads = sc_threads_serialize();
    lapack_int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'L', n, S, n, w);
    sc_threads_restore(threads);
    if (info > 0) return sc_fail(err, SC_ENUMERIC, "symmetric eigenproblem of size %d: %d off-diagonal elements did not converge", n, (int)info);
    if (info < 0) return sc_fail(err, SC_EINPUT, "LAPACKE_dsyev argument %d", (int)-info);
    return SC_OK;
}

int sc_lqr_periodic(int n, int q, int m, const double *A, const double *B, const double *Q, const double *R, int cycles, double *K, sc_err *err)
{
    size_t nn = (size_t)n * n, nq = (size_t)n * q;
    double *P = malloc(sizeof(double) * nn), *Pn = malloc(sizeof(double) * nn), *PA = malloc(sizeof(double) * nn), *PB = malloc(sizeof(double) * nq),
           *S = malloc(sizeof(double) * (size_t)q * q), *G = malloc(sizeof(double) * nq), *Kj = malloc(sizeof(double) * nq);
    int rc = SC_OK;
    if (!P || !Pn || !PA || !PB || !S || !G || !Kj) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    memcpy(P, Q, sizeof(double) * nn);
    for (long h = (long)cycles * m - 1; h >= 0 && !rc; h--) {
        int j = (int)(h % m);
        const double *Aj = A + (size_t)j * nn, *Bj = B + (size_t)j * nq;
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < n; k++) {
                double v = 0;
                for (int l = 0; l < n; l++) v += P[i * n + l] * Aj[l * n + k];
                PA[i * n + k] = v;
            }
            for (int a = 0; a < q; a++) {
                double v = 0;
                for (int l = 0; l < n; l++) v += P[i * n + l] * Bj[l * q + a];
                PB[i * q + a] = v;
            }
        }
        for (int a = 0; a < q; a++) {
            for (int b = 0; b < q; b++) {
                double v = R[a * q + b];
                for (int l = 0; l < n; l++) v += Bj[l * q + a] * PB[l * q + b];
                S[a * q + b] = v;
            }
            for (int k = 0; k < n; k++) {
                double v = 0;
                for (int l = 0; l < n; l++) v += Bj[l * q + a] * PA[l * n + k];
                G[a * n + k] = Kj[a * n + k] = v;
            }
        }
        if ((rc = sc_spd_solve(q, n, S, Kj, err))) break;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++) {
                double v = Q[i * n + k];
                for (int l = 0; l < n; l++) v += Aj[l * n + i] * PA[l * n + k];
                for (int a = 0; a < q; a++) v -= G[a * n + i] * Kj[a * n + k];
                Pn[i * n + k] = v;
            }
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++) P[i * n + k] = 0.5 * (Pn[i * n + k] + Pn[k * n + i]);
        if (h < m) memcpy(K + (size_t)j * nq, Kj, sizeof(double) * nq);
    }
done:
    free(P);
    free(Pn);
    free(PA);
    free(PB);
    free(S);
    free(G);
    free(Kj);
    return rc;
}

#include <math.h>
#include <string.h>
#include "core/linalg.h"
#include "network/rbf.h"

static double dist3(const double *a, const double *b, int dim)
{
    double s = 0;
    for (int k = 0; k < dim; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
    return s * sqrt(s);
}

int sc_rbf_fit(int n, int dim, const double *centres, int nval, const double *values, sc_rbf *r, sc_err *err)
{
    if (n < 1 || n > SC_RBF_MAX || dim < 1 || dim > SC_RBF_MAX_DIM || nval < 1 || nval > SC_RBF_MAX_VALS)
        return sc_fail(err, SC_EINPUT, "rbf: %d centres in %d dimensions with %d values is outside the limits", n, dim, nval);
    memset(r, 0, sizeof *r);
    r->dim = dim;
    r->nval = nval;
    double y[SC_RBF_MAX * SC_RBF_MAX_VALS];
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int j = 0; j < r->n && !dup; j++) dup = dist3(centres + i * dim, r->centre + j * dim, dim) < 1e-36;
        if (dup) continue;
        memcpy(r->centre + r->n * dim, centres + i * dim, (size_t)dim * sizeof *centres);
        memcpy(y + r->n * nval, values + i * nval, (size_t)nval * sizeof *values);
        r->n++;
    }
    r->linear = r->n >= dim + 2;
    const int m = r->n, np = r->linear ? dim + 1 : 1, size = m + np;
    double a[(SC_RBF_MAX + SC_RBF_MAX_DIM + 1) * (SC_RBF_MAX + SC_RBF_MAX_DIM + 1)];
    memset(a, 0, sizeof(double) * (size_t)size * size);
    memset(r->w, 0, sizeof(double) * (size_t)size * nval);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < m; j++) a[i * size + j] = dist3(r->centre + i * dim, r->centre + j * dim, dim);
        for (int k = 0; k < np; k++) a[i * size + m + k] = a[(m + k) * size + i] = k ? r->centre[i * dim + k - 1] : 1;
        memcpy(r->w + i * nval, y + i * nval, (size_t)nval * sizeof *y);
    }
    int rc = sc_solve(size, nval, a, r->w, err);
    if (rc) return sc_err_prefix(err, "rbf through %d centres: ", m);
    return SC_OK;
}

void sc_rbf_eval(const sc_rbf *r, const double *d, double *out)
{
    const int m = r->n, np = r->linear ? r->dim + 1 : 1;
    for (int v = 0; v < r->nval; v++) out[v] = 0;
    for (int i = 0; i < m + np; i++) {
        const double phi = i < m ? dist3(d, r->centre + i * r->dim, r->dim) : i == m ? 1 : d[i - m - 1];
        for (int v = 0; v < r->nval; v++) out[v] += phi * r->w[i * r->nval + v];
    }
}

/* Radial basis interpolation ([BK] 7: a controller for a new objective from the k successes
 * nearest to it): the polyharmonic spline f(d) = sum_i w_i |d - d_i|^3 + c_0 + c^T d through n
 * centres d_i (dim coordinates each) with values y_i (nval per centre), the linear term kept
 * only when n >= dim + 2 (a constant otherwise). It reproduces its samples exactly and is free
 * of a shape parameter. Centres closer than 1e-12 to an earlier one are dropped (the system
 * would be singular). */
#ifndef SC_NETWORK_RBF_H
#define SC_NETWORK_RBF_H
#include "core/status.h"

#define SC_RBF_MAX      32 /* centres */
#define SC_RBF_MAX_DIM  4
#define SC_RBF_MAX_VALS 32

typedef struct sc_rbf {
    int n, dim, nval, linear;
    double centre[SC_RBF_MAX * SC_RBF_MAX_DIM];
    double w[(SC_RBF_MAX + SC_RBF_MAX_DIM + 1) * SC_RBF_MAX_VALS]; /* row per basis, nval columns */
} sc_rbf;

/* SC_EINPUT for sizes outside the limits or no centre; SC_ENUMERIC for centres the spline
 * cannot pass through (all on a line in 2-D, say, with the linear term). */
int sc_rbf_fit(int n, int dim, const double *centres, int nval, const double *values, sc_rbf *r, sc_err *err);
void sc_rbf_eval(const sc_rbf *r, const double *d, double *out);

#endif

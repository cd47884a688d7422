/* Linear complementarity problems by Lemke's complementary pivoting (covering vector of ones):
 * find z >= 0 with w = M z + q >= 0 and z'w = 0. Lemke's method solves every LCP whose M is
 * copositive-plus and feasible, which includes the frictional contact LCPs of Anitescu and
 * Potra ([T12] eq. 11 with the controls held). Dense, deterministic (ties go to the lowest
 * row). */
#ifndef SC_LCP_H
#define SC_LCP_H
#include "core/status.h"

/* M: n x n row-major; z[n] receives the solution. SC_ENUMERIC on ray termination (no solution
 * found) or after max_pivots. Allocates its tableau; sc_lcp_lemke_in does not. */
int sc_lcp_lemke(int n, const double *M, const double *q, double *z, int max_pivots, sc_err *err);
/* The same in caller's memory: tableau[SC_LCP_TABLEAU(n)] doubles, basic[n] ints. */
#define SC_LCP_TABLEAU(n) ((size_t)(n) * (2 * (size_t)(n) + 2))
int sc_lcp_lemke_in(int n, const double *M, const double *q, double *z, int max_pivots, double *tableau, int *basic, sc_err *err);

#endif

/* Sparse symmetric positive definite systems by an envelope (skyline) Cholesky factor in
 * reverse Cuthill-McKee order: the stiffness-like matrices of small tet meshes (a few thousand
 * unknowns, 3 per node), factored once and solved many times. Plain C, deterministic. */
#ifndef SC_SKYLINE_H
#define SC_SKYLINE_H
#include <stddef.h>
#include "core/status.h"

typedef struct sc_skyline {
    int n;         /* unknowns: 3 per node */
    int *perm;     /* [n] perm[new] = old unknown */
    int *iperm;    /* [n] iperm[old] = new */
    int *first;    /* [n] first column stored in (permuted) row i */
    size_t *start; /* [n + 1] offset of row i's first entry in val */
    double *val;   /* the lower envelope, row by row; the factor after sc_skyline_factor */
} sc_skyline;

/* The envelope of a matrix with 3x3 blocks coupling the nodes of each element: nelem elements
 * of `per` nodes (elem[per * e + k]) over nnodes nodes. The nodes are reordered by reverse
 * Cuthill-McKee. Values start at zero. */
int sc_skyline_create(int nnodes, int nelem, int per, const int *elem, sc_skyline *s, sc_err *err);
void sc_skyline_free(sc_skyline *s);
void sc_skyline_zero(sc_skyline *s);
/* Adds v to entry (i, j) and, by symmetry, (j, i) (original numbering, i and j in one element's
 * block or on the diagonal; entries outside the envelope are ignored: add only what
 * sc_skyline_create's pattern holds). */
void sc_skyline_add(sc_skyline *s, int i, int j, double v);
/* In-place Cholesky; SC_ENUMERIC naming the row when the matrix is not positive definite. */
int sc_skyline_factor(sc_skyline *s, sc_err *err);
/* Solves A x = b in place (original numbering); work[n]. */
void sc_skyline_solve(const sc_skyline *s, double *b, double *work);
/* Entries stored (the envelope's size). */
size_t sc_skyline_size(const sc_skyline *s);

#endif

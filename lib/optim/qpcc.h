/* Quadratic programs with linear complementarity constraints (QPCC), the contact-planning
 * problem of [T12] eq. 11, and the pivoting solver of [T12] 6:
 *
 *   min 1/2 x'Hx + g'x   subject to  the rows of a QP (qp.h) that always hold, and for each pair k
 *   0 <= x[var_k]  _|_  row_k . x + off_k >= 0      (one of the two is 0)
 *
 * A pivot state gives each pair one side at 0: state 1 keeps x[var_k] >= 0 and holds its row at
 * 0 (a contact's force may push, its velocity is held), state 0 sets x[var_k] = 0 and keeps the
 * row >= 0. Each state is a convex QP. The solver starts from a state (the static-contact
 * assumption of [T12] eq. 19-22, or the last step's), and explores the states it reaches by
 * pivoting the pairs whose inequality side lies on its boundary at a node's minimizer, best
 * objective first (the graph expansion with a priority queue of [T12] 6); a contact's pairs
 * pivot together between static, sliding (along the two friction directions that carry the
 * static friction) and broken. The best minimizer found is returned: a local method, as
 * [T12] says; sc_qpcc_exact finds the global minimum by branch and bound, for comparison. */
#ifndef SC_QPCC_H
#define SC_QPCC_H
#include "optim/qp.h"

/* One frictional contact's pairs ([T12] eq. 11): the normal force f_n against the normal
 * velocity (or gap), ntangent friction forces f_t,j along directions evenly spaced in angle
 * (j * 2 pi / ntangent) against d_j'v + lambda, and lambda against mu f_n - sum_j f_t,j. */
typedef struct sc_qpcc_contact {
    int normal;  /* pair index */
    int tangent; /* first of ntangent consecutive pair indices */
    int ntangent;
    int slide; /* pair index of lambda */
} sc_qpcc_contact;

typedef struct sc_qpcc {
    sc_qp base; /* objective, and the rows that hold in every state */
    int npairs;
    const int *var;    /* [npairs] */
    const double *row; /* [npairs * base.n] */
    const double *off; /* [npairs] */
    int ncontacts;     /* may be 0: then every pair pivots alone */
    const sc_qpcc_contact *contacts;
} sc_qpcc;

typedef struct sc_qpcc_result {
    double objective; /* of the returned minimizer */
    int nodes;        /* QPs solved ([T12] Table 2's iterations) */
    int feasible;     /* of those, the feasible ones */
    int proven;       /* sc_qpcc_exact: 1 when the search finished, so the minimum is global */
} sc_qpcc_result;

typedef struct sc_qpcc_work sc_qpcc_work;

/* A workspace for problems of up to nmax variables, mmax base rows and pmax pairs, exploring at
 * most max_nodes states per solve. */
int sc_qpcc_work_create(int nmax, int mmax, int pmax, int max_nodes, sc_qpcc_work **out, sc_err *err);
void sc_qpcc_work_free(sc_qpcc_work *w);

/* The static-contact state of [T12] eq. 20-22: every contact's normal and friction pairs in
 * state 1, its lambda in state 0; pairs outside contacts in state 1. */
void sc_qpcc_static_state(const sc_qpcc *p, unsigned char *state);

/* Solves the one QP of a state (the static-contact baseline when state is the static state):
 * x[n], objective in res. SC_ENUMERIC when that QP is infeasible. */
int sc_qpcc_solve_state(const sc_qpcc *p, sc_qpcc_work *w, const unsigned char *state, double *x, sc_qpcc_result *res, sc_err *err);

/* [T12] 6's pivoting solver from `start` (npairs states). x[n] and state (may be NULL: the
 * state of the returned minimizer, a warm start for the next step) receive the best node.
 * When the start is infeasible, it starts from the state of the pairs' LCP with the other
 * variables held at the relaxed problem's minimizer ([T12] 6's fallback; lcp.h); SC_ENUMERIC
 * when that fails too.
 * Deterministic. */
int sc_qpcc_solve(const sc_qpcc *p, sc_qpcc_work *w, const unsigned char *start, double *x, unsigned char *state, sc_qpcc_result *res, sc_err *err);

/* The global minimum by best-first branch and bound over the pairs (each node a QP with the
 * unbranched pairs relaxed to both sides >= 0: a lower bound), stopping after max_nodes QPs
 * (res->proven 0 then: x is the best found). Allocates; for experiments, not for a step. */
int sc_qpcc_exact(const sc_qpcc *p, int max_nodes, double *x, sc_qpcc_result *res, sc_err *err);

#endif

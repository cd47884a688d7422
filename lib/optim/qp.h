/* Dense strictly convex quadratic programs, by the dual active-set method of Goldfarb and
 * Idnani (1983): start at the unconstrained minimum, then add the most violated constraint,
 * dropping active inequalities whose multipliers would turn negative, until every constraint
 * holds. No phase 1 (no feasible start is needed) and an infeasible problem is detected.
 *
 *   min 1/2 x'Hx + g'x   subject to   Aeq x = beq,   Ain x >= bin
 *
 * H must be symmetric positive definite (add a small ridge to a semi-definite one: down to about
 * 1e-6 of H's scale; the active rows are kept through the Cholesky factor of their Gram matrix
 * N'H^-1 N, which squares H's condition number, and much below that ridge a solution may violate
 * its rows by 1e-2 or a feasible problem be called infeasible: check sc_qp_violation). Sized for
 * the per-step problems of [T12] 5 (about 100 variables and 200 rows); everything is dense and
 * deterministic (no BLAS). A workspace is made once and reused: a solve never allocates. */
#ifndef SC_QP_H
#define SC_QP_H
#include "core/status.h"

typedef struct sc_qp {
    int n;                   /* variables */
    int neq, nin;            /* equality and inequality rows */
    const double *H;         /* [n*n] row-major, symmetric positive definite */
    const double *g;         /* [n] */
    const double *Aeq, *beq; /* [neq*n], [neq] */
    const double *Ain, *bin; /* [nin*n], [nin] */
} sc_qp;

typedef struct sc_qp_result {
    double objective; /* 1/2 x'Hx + g'x at the solution */
    int iterations;   /* constraints added or dropped */
    int nactive;      /* rows active at the solution (equalities included) */
} sc_qp_result;

typedef struct sc_qp_work sc_qp_work;

/* A workspace for problems of up to nmax variables and mmax rows (neq + nin). */
int sc_qp_work_create(int nmax, int mmax, sc_qp_work **out, sc_err *err);
void sc_qp_work_free(sc_qp_work *w);

/* Solves p into x[n]. Multipliers (may be NULL): ueq[neq] and uin[nin] (>= 0, zero for an
 * inactive row), with H x + g = Aeq' ueq + Ain' uin at the solution. Returns SC_OK;
 * SC_EINPUT when the problem exceeds the workspace or H is not positive definite;
 * SC_ENUMERIC when the constraints cannot all hold (infeasible, or dependent equalities that
 * contradict each other) or the iterations run out. */
int sc_qp_solve(const sc_qp *p, sc_qp_work *w, double *x, double *ueq, double *uin, sc_qp_result *res, sc_err *err);

/* The largest violation of p's rows at x (0 when x is feasible): max |Aeq x - beq| and
 * max(bin - Ain x), scaled by each row's norm. */
double sc_qp_violation(const sc_qp *p, const double *x);

#endif

/* Unconstrained minimisation by limited-memory BFGS (Liu and Nocedal 1989; Nocedal and Wright,
 * Numerical Optimization, Algorithm 7.4 and 7.5): the two-loop recursion on the last `memory`
 * pairs (s, y), the first step scaled by 1 / |g| and each later one by s.y / y.y, and a line
 * search that brackets and bisects until the strong Wolfe conditions hold (c1 1e-4, c2 0.9).
 * A pair whose curvature s.y is not positive is skipped (the memory keeps the older pairs), so
 * the direction stays a descent one. This is [P17] 5's baseline optimiser ("LBFGS alone",
 * [P17] Table 1) and the one [P17] Algorithm 2 uses for the DMP weights. Deterministic: no
 * randomness, and the callers' function decides its own reduction order. The workspace is
 * allocated once per minimisation, before the first evaluation. */
#ifndef SC_OPTIM_LBFGS_H
#define SC_OPTIM_LBFGS_H
#include "core/status.h"

/* f(x) and its gradient g (n values) at x; a non-zero return (an sc_code, err set) stops the
 * minimisation with that code. */
typedef int (*sc_lbfgs_fn)(void *ctx, const double *x, double *f, double *g, sc_err *err);
/* Called after every accepted iteration (it = 1, 2, ...) with the new point; may be NULL. */
typedef void (*sc_lbfgs_progress)(void *ctx, int it, const double *x, double f, double gnorm);

typedef struct sc_lbfgs_opts {
    int memory;         /* pairs kept (5-20 is usual) */
    int max_iterations; /* accepted steps */
    int max_evaluations;
    double gtol; /* stop when |g|_inf <= gtol max(1, |f|) */
    double ftol; /* stop when the last step lowered f by less than ftol max(1, |f|) */
} sc_lbfgs_opts;

typedef enum {
    SC_LBFGS_GRADIENT = 0,   /* |g| small: a stationary point */
    SC_LBFGS_STALLED = 1,    /* f no longer decreases by ftol */
    SC_LBFGS_ITERATIONS = 2, /* max_iterations reached */
    SC_LBFGS_EVALUATIONS = 3,
    SC_LBFGS_LINE_SEARCH = 4 /* no step along the direction met the Wolfe conditions (kept the best point) */
} sc_lbfgs_stop;

typedef struct sc_lbfgs_result {
    int iterations, evaluations;
    double f, gnorm; /* at the returned x; gnorm is |g|_inf */
    int stop;        /* sc_lbfgs_stop */
} sc_lbfgs_result;

void sc_lbfgs_default_opts(sc_lbfgs_opts *o);
/* Minimises fn from x (n values, overwritten by the best point found, whose f never exceeds the
 * start's). SC_EINPUT for n < 1 or bad options; SC_ENUMERIC when f or g is not finite at the
 * start; an error of fn is passed on (x is then the last accepted point). */
const char *sc_lbfgs_stop_name(int stop);
int sc_lbfgs_minimize(int n, double *x, sc_lbfgs_fn fn, void *ctx, const sc_lbfgs_opts *o, sc_lbfgs_progress progress, sc_lbfgs_result *r,
                      sc_err *err);

#endif

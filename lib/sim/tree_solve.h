/* The exact step's constraint forces for a tree of rigid bodies in time linear in the bodies
 * (Baraff 1996, "Linear-time dynamics using Lagrange multipliers"). It solves the same system
 * as ODE's dWorldStep for unbounded rows ([L13] eq. 3-5 with the servos' motor rows):
 *     (J M^-1 J^T + Sigma) lambda = rhs
 * not as a dense 6(n-1)-square matrix but through the sparse quasi-definite system
 *     [ M   J^T   ] [ y  ]   [ 0   ]
 *     [ J  -Sigma ] [ -l ] = [ rhs ]
 * factored block by block leaves first over the tree whose nodes are the bodies and the joints
 * (no fill-in: every block has one parent). Pure arithmetic, no ODE: skeleton.c fills the rows. */
#ifndef SC_TREE_SOLVE_H
#define SC_TREE_SOLVE_H
#include "core/status.h"

#define SC_TREE_MAX_ROWS 6

/* Rows of the joint between body b (the child) and parent[b]. Row r's Jacobian is
 * child[r] = (linear 3, angular 3) on the child's (com velocity, angular velocity) and
 * parent[r] likewise, so J v = child[r].v_b + parent[r].v_parent. */
typedef struct {
    int m; /* rows, 0..SC_TREE_MAX_ROWS */
    double child[SC_TREE_MAX_ROWS][6];
    double parent[SC_TREE_MAX_ROWS][6];
    double sigma[SC_TREE_MAX_ROWS]; /* CFM / h, > 0 */
    double rhs[SC_TREE_MAX_ROWS];
} sc_tree_rows;

typedef struct sc_tree_solver sc_tree_solver;

/* parent[0] == -1 and 0 <= parent[b] < b for b > 0. */
int sc_tree_solver_create(int nbodies, const int *parent, sc_tree_solver **out, sc_err *err);
void sc_tree_solver_free(sc_tree_solver *t);

/* mass[b] and world inertia about the com inertia[9b] (row-major) of every body, rows[b] for
 * b >= 1 (rows[0] unused). Writes lambda[6b + r] for the rows of joint b. Returns 0, or -1
 * when a pivot is not positive (a singular system: the caller falls back to a general
 * solver). No allocation. */
int sc_tree_solve(sc_tree_solver *t, const double *mass, const double *inertia, const sc_tree_rows *rows, double *lambda);

#endif

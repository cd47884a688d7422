/* The deformation basis of a reduced body ([P17] 3.3, eq. 2 and its Fig. 21 alternative: linear modes
 * with a rigid frame, the floating-frame modal model): the K lowest non-rigid vibration modes
 * of the tet mesh's linear elastic stiffness K and its lumped mass M,
 *     K phi = lambda M phi,    phi^T M phi = I,    phi^T M r = 0 for the 6 rigid modes r,
 * frequencies sqrt(lambda) / 2 pi. K is the linearisation at rest of sim/fem.h's corotated
 * element (P = 2 mu eps + lambda tr(eps) I, eps = sym(F - I)): the full FEM and the reduced
 * body share the material, the mesh and the masses.
 *
 * Eigensolver: shift-invert block Krylov with Rayleigh-Ritz. The operator (K + sigma M)^-1 M
 * (sigma a small positive shift, so the factor exists although K is singular) is factored
 * once by optim/skyline's envelope Cholesky; blocks of 6 vectors (so a mode of multiplicity up
 * to 6, a symmetric bar's two bending directions, is not missed) are M-orthogonalised twice
 * against every earlier vector and against the rigid modes; the Rayleigh-Ritz step uses K
 * itself (V^T K V, V M-orthonormal) so the shift only sets the speed. The subspace grows until
 * every kept mode's residual |K phi - lambda M phi| / |K phi| is below 1e-9, or spans the
 * whole non-rigid space (then the modes are exact to rounding). Deterministic: the start
 * block comes from a fixed random stream. */
#ifndef SC_REDUCED_BASIS_H
#define SC_REDUCED_BASIS_H
#include "core/status.h"
#include "model/model.h"

#define SC_REDUCED_MAX_MODES    30 /* what the config accepts: [P17] uses 5-15 */
#define SC_REDUCED_RESIDUAL_TOL 1e-9

typedef struct sc_reduced_basis {
    int nnodes, nmodes; /* nmodes: K */
    double *eigenvalue; /* [K] lambda = omega^2 (1/s^2), ascending */
    double *frequency;  /* [K] Hz */
    double *residual;   /* [K] |K phi - lambda M phi|_2 / |K phi|_2 of each mode as computed */
    double *phi;        /* [3 nnodes x K] row-major: phi[(3 i + c) K + k], node i, axis c, mode k (1/sqrt(kg)) */
    double mass;        /* kg: the sum of the node masses */
    double com[3];      /* m: the rest centre of mass */
    double inertia[9];  /* kg m^2: the rest inertia about com, world axes, row-major */
} sc_reduced_basis;

typedef struct sc_reduced_basis_stats {
    int subspace;          /* Krylov vectors at convergence */
    int solves;            /* solves with the factor */
    double max_residual;   /* over the kept modes */
    double orthonormality; /* max |phi^T M phi - I| */
    double rigid_leak;     /* max |phi^T M r| over the M-normalised rigid modes */
    double factor_entries; /* envelope size of the factor */
    double seconds;
} sc_reduced_basis_stats;

/* The most non-rigid modes a mesh has: 3 nnodes - 6 (0 below 4 nodes). */
int sc_reduced_max_modes(const sc_model *m);
/* The K = nmodes lowest modes of m (above). SC_EINPUT when nmodes is not in 1..max modes or
 * the mesh has zero-energy motions besides the rigid ones (disconnected parts, a loose node);
 * SC_ENUMERIC when the eigensolver does not converge. stats may be NULL. */
int sc_reduced_basis_compute(const sc_model *m, int nmodes, sc_reduced_basis *b, sc_reduced_basis_stats *stats, sc_err *err);
void sc_reduced_basis_free(sc_reduced_basis *b);
/* Allocates the arrays for nnodes x nmodes (zeroed); SC_EIO when out of memory. */
int sc_reduced_basis_alloc(sc_reduced_basis *b, int nnodes, int nmodes, sc_err *err);

/* f = K u: the linear elastic stiffness of m at rest applied to the displacement u (3 per
 * node), matrix-free, element by element (OVERWRITES f). */
void sc_reduced_stiffness_apply(const sc_model *m, const double *u, double *f);
/* The rest centre of mass, total mass and inertia about it (world axes) of the lumped masses. */
void sc_reduced_rest_inertia(const sc_model *m, double *mass, double com[3], double inertia[9]);

#endif

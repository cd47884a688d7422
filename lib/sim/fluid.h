/* Fluid drag on a body's surface ([P17] 4.2.2, after Yuksel, House and Keyser 2007, "Wave
 * particles"): an environment force, so that a body moves as if under water. Per surface
 * triangle, with n its area-weighted outward normal (|n| = area A) and u the velocity of its
 * centre relative to the fluid (u = c' - flow), Yuksel's quadratic drag
 *     f = -zeta max(n.u, 0) u,                       zeta = density * drag / 2   ([P17] eq. 6)
 * acts only on a face moving into the fluid and has a kink where n.u changes sign (its
 * derivative jumps by zeta |u_t| n u_t^T there). [P17] makes it C1 by keeping only the normal
 * component of u:
 *     f = -zeta max(n.u, 0)^2 n / |n|^2  = -zeta A max(n^.u, 0)^2 n^   (n^ = n / |n|)
 * which is what softcon applies, as a point force at the triangle's centre, a third on each
 * corner. f.u <= 0: in still fluid the drag only takes energy away. A degenerate triangle
 * (|n| = 0) gets the formula's limit, 0 ([P17] adds an epsilon to |n| instead). */
#ifndef SC_FLUID_H
#define SC_FLUID_H
#include <stdint.h>
#include "core/mathx.h"
#include "core/status.h"

typedef struct sc_fluid_opts {
    double density; /* kg/m^3; 0: no fluid */
    double drag;    /* the drag coefficient C_d (1) */
    double flow[3]; /* m/s: the fluid's velocity, the same everywhere */
} sc_fluid_opts;

/* 1 when the options put the body in a fluid. */
int sc_fluid_enabled(const sc_fluid_opts *o);
/* SC_OK, or SC_EINPUT when a value is not finite or density or drag is negative. */
int sc_fluid_check(const sc_fluid_opts *o, sc_err *err);
/* h with the options mixed in when they put the body in a fluid; h itself otherwise, so a run out
 * of the fluid keeps its hash. */
uint64_t sc_fluid_hash(uint64_t h, const sc_fluid_opts *o);
/* [P17]'s C1 drag (above) on one triangle of area-weighted normal n moving at u relative to
 * the fluid, for zeta = density * drag / 2 (N s^2/m^4). */
sc_vec3 sc_fluid_drag(double zeta, sc_vec3 n, sc_vec3 u);
/* Yuksel's original drag ([P17] eq. 6), for comparison: kinked at n.u = 0. */
sc_vec3 sc_fluid_drag_yuksel(double zeta, sc_vec3 n, sc_vec3 u);

/* The drag on every triangle (3 point indices each, counter-clockwise seen from outside) of
 * points at p moving at pv (3 per point), ACCUMULATED onto the points' forces pf (3 per point),
 * triangle by triangle in order (bit-identical for the same inputs); *total (may be NULL) gets
 * their sum (N). Allocates nothing. */
void sc_fluid_forces(const sc_fluid_opts *o, int ntris, const int *tris, const double *p, const double *pv, double *pf, sc_vec3 *total);

#endif

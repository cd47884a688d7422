/* A reduced deformable body ([P17] 3.3, eq. 2, Fig. 21's alternative: linear modes with a rigid
 * frame): a floating frame (centre of mass c, orientation R, linear velocity v, angular
 * momentum L and velocity w) carrying the K vibration modes of basis.h,
 *     x_i = c + R (Xbar_i + Phi_i q),      Xbar_i = X_i - C (rest position about the rest centre of mass),
 *     v_i = v + w x R (Xbar_i + Phi_i q) + R Phi_i q'.
 * The modes are M-orthogonal to the rigid motions (sum m_i Phi_i = 0, sum m_i Xbar_i x Phi_i = 0),
 * so c stays the centre of mass and the frame follows the body's mean axes (Buckens' frame):
 * to first order in q the frame and the modes decouple.
 *
 * Equations (per step of dt; forces from the state at the step's start):
 *   frame:  M v' = sum f_i + M g;   L' = sum (x_i - c) x f_i;   w = R I0^-1 R^T L
 *   modes:  q'' + (alpha + beta lambda_k) q' + lambda_k q = Phi^T R^T f + u + centrifugal load
 * with f the nodal external forces ([P17] 4.2's environment): 4.2.2's fluid drag (sim/fluid.h) on the boundary
 * faces of the tet mesh reconstructed from the modes, and ground contact impulses with Coulomb
 * friction on its boundary nodes (below); gravity acts on the frame alone (its
 * projection on the modes and its torque about c vanish by the M-orthogonality); u is a modal
 * control force (the input of [P17] 5's controllers).
 *
 * Integration ([P17] 4.1.1 steps its reduced coordinates by implicit Euler, stable at any step):
 * the modes implicitly, each a scalar oscillator (diagonal in the modal basis),
 * by implicit midpoint (energy-conserving for the undamped linear part, unconditionally
 * stable; the default) or backward Euler (unconditionally stable, numerically damped); the
 * frame by symplectic Euler, the rotation through the angular momentum (L is conserved to
 * rounding by a free body) and R <- exp(dt w) R. No step allocates.
 *
 * Simplifications of the floating-frame coupling (say so wherever results are quoted): the
 * inertia is the rest inertia I0 (not the deformed one); the modes feel the centrifugal load
 * of the rest shape, |w|^2 tr(S_k) - w^T S_k w with S_k = sum m_i Phi_ik Xbar_i^T (w in the
 * body frame), but not its change with q, nor the Coriolis force 2 w x Phi q' nor the Euler
 * force on Phi q; the frame feels no reaction of the modes' momentum. All are second order in
 * q (or in q w). The drag is explicit: the step must resolve its rate (dt zeta A |v| / M << 1);
 * the elastic modes and the contact need no step bound. */
#ifndef SC_REDUCED_BODY_H
#define SC_REDUCED_BODY_H
#include <stdint.h>
#include "core/mathx.h"
#include "core/status.h"
#include "model/model.h"
#include "reduced/basis.h"
#include "sim/contact.h"
#include "sim/fluid.h"

typedef enum { SC_REDUCED_MIDPOINT = 0, SC_REDUCED_BACKWARD_EULER = 1 } sc_reduced_scheme;

/* Contact of the boundary nodes with the ground at the velocity level, as the boneless body's
 * ([T12], muscle/softbody.h: inelastic, Coulomb friction, Moreau's time stepping), but coupled:
 * an impulse on one node moves the frame and every mode, so the impulses of the nodes that would
 * end the step below the ground are found together by projected Gauss-Seidel (normal impulse
 * >= 0 bringing the node to the ground at the step's end, or lifting one already below by a
 * fifth of its depth; friction within mu times it), on the end-of-step velocities of the frame
 * and of the implicit modes (an impulse J on mode k changes its rate by J / (1 + e_k), the
 * implicit update's divisor). No stiffness: stable at any step. */
typedef struct sc_reduced_ground_opts {
    int enabled;
    double mu;      /* Coulomb friction coefficient */
    int iterations; /* the most Gauss-Seidel sweeps per step (fewer when a sweep changes no impulse) */
    sc_ground ground;
} sc_reduced_ground_opts;

typedef struct sc_reduced_opts {
    double dt;                            /* s */
    int scheme;                           /* sc_reduced_scheme, of the modes */
    double gravity[3];                    /* m/s^2 */
    double rayleigh_alpha, rayleigh_beta; /* 1/s, s: mode k is damped by alpha + beta lambda_k (as sim/fem.h's C = alpha M + beta K) */
    sc_fluid_opts fluid;                  /* drag on the reconstructed boundary faces; density 0: none */
    sc_reduced_ground_opts ground;
    double max_speed; /* m/s: a frame or a mode faster than this is a blow-up */
} sc_reduced_opts;

void sc_reduced_default_opts(sc_reduced_opts *o);

/* What a step reads and never changes: the character, its basis, the options and what create
   derives from them (MuJoCo's mjModel). */
typedef struct sc_reduced_model {
    const sc_model *m;
    const sc_reduced_basis *b;
    sc_reduced_opts o;
    int nmodes;
    int nbound, *bound;    /* the tet mesh's boundary nodes, ascending */
    int nfaces, *faces;    /* its boundary faces, outward (3 nodes each) */
    double *bound_rest;    /* [3 nbound] Xbar of each boundary node */
    double *bound_phi;     /* [3 nbound x K] its rows of Phi */
    double *centrifugal;   /* [K x 9] S_k (row-major 3 x 3 each) */
    double *modal_damping; /* [K] alpha + beta lambda_k */
    double inertia_inv[9]; /* I0^-1 (body frame = world at rest) */
    uint64_t hash;         /* of the basis and options: two runs of equal hashes and states step alike */
} sc_reduced_model;

/* Everything that determines the future (MuJoCo's mjData), and the step's scratch. */
typedef struct sc_reduced_state {
    double t;
    long step;
    double pos[3];     /* m: the centre of mass */
    sc_quat rot;       /* the frame's orientation */
    double vel[3];     /* m/s */
    double ang_mom[3]; /* kg m^2/s about the centre of mass, world */
    double omega[3];   /* rad/s, world: R I0^-1 R^T L (derived, kept for the reconstruction) */
    double *q, *qd;    /* [K] modal coordinates (m sqrt(kg)) and their rates */
    double *control;   /* [K] input: modal control forces u (N/sqrt(kg)), zero at creation */
    /* the last step's figures */
    int contacts;   /* boundary nodes touching the ground */
    double drag[3]; /* N: the fluid's total force */
    double ground_force[3];
    /* scratch (3 per node: the boundary nodes' entries are the ones used) */
    double *x, *v, *f, *gen, *qd1, *resp;                              /* resp [K]: each mode's response to an impulse */
    int *cand;                                                         /* contact candidates (boundary indices), their depth, normal, impulses */
    double *cgap, *cnormal, *cimpulse, *cdelassus, *cjac, *cgain, *cu; /* cjac, cgain: J and G of each (body.c), cu: (v, w, q'1) */
} sc_reduced_state;

/* SC_EINPUT when the basis is not m's (node count), the options are out of range (dt <= 0, a
 * bad fluid, negative contact values); SC_EIO when out of memory. m and b must outlive rm. */
int sc_reduced_model_create(const sc_model *m, const sc_reduced_basis *b, const sc_reduced_opts *o, sc_reduced_model *rm, sc_err *err);
void sc_reduced_model_free(sc_reduced_model *rm);
/* A state at rest in the rest pose (c = C, R = I, q = 0). */
int sc_reduced_state_create(const sc_reduced_model *rm, sc_reduced_state *s, sc_err *err);
void sc_reduced_state_free(sc_reduced_state *s);
void sc_reduced_state_reset(const sc_reduced_model *rm, sc_reduced_state *s);

/* One step of dt; SC_ENUMERIC naming the step, the time and what diverged (non-finite, or
 * faster than max_speed). */
int sc_reduced_step(const sc_reduced_model *rm, sc_reduced_state *s, sc_err *err);

/* The node positions (and velocities, when v is not NULL) of the state, 3 per node. */
void sc_reduced_nodes(const sc_reduced_model *rm, const sc_reduced_state *s, double *x, double *v);
/* The state closest to nodal positions x and velocities v (v NULL: at rest): c the centre of
 * mass, R the polar factor of sum m_i (x_i - c) Xbar_i^T, q = Phi^T M (R^T (x - c) - Xbar), v the
 * mean velocity, L the angular momentum about c, q' = Phi^T M R^T (v_i - v - w x (x_i - c)).
 * Exact for a motion in the span of the frame and the modes. */
void sc_reduced_set_nodes(const sc_reduced_model *rm, sc_reduced_state *s, const double *x, const double *v);

typedef struct sc_reduced_diag {
    double mass;       /* kg */
    double linear[3];  /* kg m/s */
    double angular[3]; /* kg m^2/s: the frame's L */
    double kinetic;    /* J: the frame's 1/2 M v^2 + 1/2 w.L and the modes' 1/2 |q'|^2 */
    double elastic;    /* J: 1/2 sum lambda_k q_k^2 */
    double potential;  /* J: -M g.c */
} sc_reduced_diag;
void sc_reduced_diagnostics(const sc_reduced_model *rm, const sc_reduced_state *s, sc_reduced_diag *d);
/* A hash of the state's bits (determinism checks). */
uint64_t sc_reduced_state_hash(const sc_reduced_model *rm, const sc_reduced_state *s);

#endif

/* Dynamic movement primitives as [P17] 4.3.1 uses them: open-loop controllers of the reduced
 * body's K modal control forces u_k (body.h's `control`), one primitive per mode sharing one
 * phase, each a one-input one-output network of N basis functions (Schaal 2006; Ijspeert,
 * Nakanishi and Schaal 2002 for the periodic kind).
 *
 * Periodic ([P17] eq. 7): a phase oscillator phi' = 2 pi / T (the canonical system of Ijspeert's
 * rhythmic DMP, run at a constant rate: the controller is open loop) and von Mises basis functions
 * on the phase, evenly spaced,
 *     u_k(t) = sum_i w_ki psi_i(phi(t)),   psi_i(phi) = exp(h (cos(phi - c_i) - 1)),   c_i = 2 pi i / N,
 *     phi(t) = phi_0 + 2 pi t / T  (mod 2 pi),
 * so u(t + T) = u(t) exactly in phase and to rounding in value. The width h is chosen so that
 * neighbouring functions cross at exp(-1/2) of their peak: one bump per 2 pi / N of phase.
 * Non-periodic ([P17] eq. 8): Gaussians on the normalised time s = t / T (T the primitive's
 * duration), u_k(t) = sum_i w_ki exp(-h (s - c_i)^2 / 2), c_i = i / (N - 1), the same crossing;
 * they fade out after T (a jump's push, then nothing).
 *
 * The output is the modal force itself, not a target coordinate tracked by a PD servo: [P17]'s
 * control input is the generalised force in its equations of motion (eq. 10's u), its effort
 * term is on that force, and a force needs no servo gains that would add stiffness the
 * optimiser then has to fight. [P17] also optimises the centres (phase shifts) c_i; here they
 * stay evenly spaced (weights of both signs span every phase shift with N >= 3), and the period
 * T is optimised with the weights. Evaluation allocates nothing. */
#ifndef SC_REDUCED_DMP_H
#define SC_REDUCED_DMP_H
#include "core/status.h"

#define SC_DMP_MAX_BASIS 64

typedef enum { SC_DMP_PERIODIC = 0, SC_DMP_DISCRETE = 1 } sc_dmp_kind;

typedef struct sc_dmp {
    int kind;       /* sc_dmp_kind */
    int nmodes;     /* K: outputs */
    int nbasis;     /* N: basis functions per output */
    double period;  /* s: T, the oscillator's period (periodic) or the primitive's duration (discrete) */
    double phase0;  /* rad: the phase at t = 0 (periodic) */
    double width;   /* h (1): the basis functions' concentration */
    double *weight; /* [K x N] row-major: w_ki, mode k, basis i (N/sqrt(kg), the modal force's unit) */
} sc_dmp;

/* A DMP of K outputs and N basis functions with zero weights and the default width; SC_EINPUT for
 * K < 1, N outside 1..SC_DMP_MAX_BASIS (2.. for discrete) or a period that is not positive. */
int sc_dmp_create(int kind, int nmodes, int nbasis, double period, sc_dmp *d, sc_err *err);
void sc_dmp_free(sc_dmp *d);
/* The width whose neighbouring basis functions cross at exp(-1/2) of their peak. */
double sc_dmp_default_width(int kind, int nbasis);
/* The phase at time t in [0, 2 pi) (periodic), or the normalised time t / T (discrete). */
double sc_dmp_phase(const sc_dmp *d, double t);
/* The N basis values at time t (psi[N]). */
void sc_dmp_basis(const sc_dmp *d, double t, double *psi);
/* The K outputs u[K] at time t. */
void sc_dmp_eval(const sc_dmp *d, double t, double *u);

#endif

/* A boneless soft body ([T12] 4): a corotated FEM tet mesh with no skeleton and no fixed
 * nodes, moved by its muscle fibres (fibre.h), touching the ground with Coulomb friction. The state is mutable and separate from the immutable model
 * and muscles (MuJoCo's mjData); a step never allocates.
 *
 * Step (dt, symplectic Euler, as sim.h's flesh): corotated elastic forces ([L13] eq. 7-11;
 * [T12] eq. 2 is the same element force), Rayleigh damping (alpha M + beta K_R, the C of
 * [T12] eq. 7), muscle forces for the desired lengths ld (eq. 3-6), gravity and the external
 * forces `ext` and the fluid's drag on the tet mesh's boundary faces ([P17] 4.2.2,
 * sim/fluid.h; the faces the contact's nodes span) give v* = v + dt f / m; then ground contact,
 * and x += dt v. The controller plans without the drag.
 *
 * Contact is [T12]'s: inelastic, non-penetrating, Coulomb friction,
 * solved exactly. With lumped masses and an explicit step the contact LCP of [T12] eq. 11
 * decouples per node (an impulse on node i changes v_i only), so each boundary node that
 * would end the step below the ground gets the normal impulse that brings it to the ground
 * and the friction impulse that stops its sliding, or, beyond mu times the normal impulse,
 * slows it by that much (Moreau's time stepping). Anisotropic friction ([T12] 7's scales of
 * a crawler): a node sliding with unit tangential velocity u meets mu (1 + (b - 1) max(0,
 * -u . forward)), b = backward_friction. The controller (control.h) plans with the same
 * contact. */
#ifndef SC_SOFTBODY_H
#define SC_SOFTBODY_H
#include "model/model.h"
#include "muscle/fibre.h"
#include "sim/contact.h"
#include "sim/fem.h"
#include "sim/fluid.h"

typedef struct sc_softbody_opts {
    double dt;                            /* s */
    double gravity[3];                    /* m/s^2 */
    double rayleigh_alpha, rayleigh_beta; /* 1/s, s */
    sc_contact_opts contact;              /* enabled, mu and the ground are read */
    double forward[3];                    /* unit, in the ground plane: the body's forward */
    double backward_friction;             /* mu is this times larger against sliding backward ([T12] 7's crawl: 10), 1: isotropic */
    double max_speed;                     /* m/s: a node faster than this is a blow-up */
    sc_fluid_opts fluid;                  /* drag on the boundary faces; density 0: none */
} sc_softbody_opts;

void sc_softbody_default_opts(sc_softbody_opts *o);

typedef struct sc_softbody_diag {
    double com[3], mass;                /* m, kg */
    double linear[3];                   /* kg m/s */
    double angular[3];                  /* kg m^2/s about the centre of mass */
    double kinetic, elastic, potential; /* J */
    double volume_ratio;                /* current volume / rest volume */
    double min_det, max_det;            /* the smallest and largest tet volume ratio det F */
} sc_softbody_diag;

typedef struct sc_softbody {
    const sc_model *m;
    const sc_muscles *mu; /* may be NULL: a passive body */
    sc_softbody_opts o;
    sc_fem fem;
    double t;
    long step;
    double *x, *v; /* [3 nn] */
    double *warm;
    double *ld;            /* [nsegs] input: desired muscle lengths (rest lengths at creation) */
    double *ext;           /* [3 nn] input: external forces on the nodes (N) */
    double *f_elastic;     /* [3 nn] the last step's elastic forces (the controller's f_e) */
    int nbound, *bound;    /* the tet mesh's boundary nodes (the contact's) */
    int nfaces, *faces;    /* with a fluid: the tet mesh's boundary faces, outward (3 nodes each) */
    double *f, *rot, *len; /* scratch: forces, tet rotations [9 ntets], segment lengths */
    sc_fem_stats fem_stats;
    sc_contact_result contact;
    uint64_t model_hash, setup_hash; /* for snapshot headers: the model; the muscles and options */
} sc_softbody;

/* The factor on mu for a friction impulse along unit direction dir: backward_friction for one
 * pushing forward (it resists sliding backward), blending to 1 at right angles. The soft body's
 * contact and the controller's friction cone both use it. */
double sc_softbody_friction_scale(const sc_softbody_opts *o, const double dir[3]);

/* The nodes on the tet mesh's boundary (on faces of one tet only), ascending (malloc'd). */
int sc_tet_boundary_nodes(const sc_model *m, int **nodes, int *count, sc_err *err);

int sc_softbody_create(const sc_model *m, const sc_muscles *mu, const sc_softbody_opts *o, sc_softbody **out, sc_err *err);
void sc_softbody_free(sc_softbody *s);
/* One step; SC_ENUMERIC naming the step, time and node on a blow-up (non-finite or faster
 * than max_speed). */
int sc_softbody_step(sc_softbody *s, sc_err *err);
/* Each tet's rotation R (row-major, 9 per tet) from the last elastic pass. */
void sc_softbody_rotations(const sc_softbody *s, double *rot);
void sc_softbody_diagnostics(const sc_softbody *s, sc_softbody_diag *d);
/* The body's best-fit rotation from rest: the polar factor of sum m (x - c)(X - C)' (c, C: the
 * current and rest centres of mass). */
sc_mat3 sc_softbody_orientation(const sc_softbody *s);

/* ---- checked snapshots (as sim.h's) ----
 * Everything that determines the body's future: time, step, positions, velocities, FEM warm
 * starts, desired lengths and the last step's elastic forces (the controller's f_e), with the
 * last step's FEM and contact diagnostics. Restoring into a body of the same model, muscles,
 * options and build and stepping (or planning) reproduces the original run bit for bit. */
size_t sc_softbody_snapshot_size(const sc_softbody *s);
/* Writes exactly sc_softbody_snapshot_size(s) bytes. */
void sc_softbody_snapshot_save(const sc_softbody *s, void *buf);
/* SC_EINPUT, saying what differs, for a buffer that is not a snapshot of this body (another
 * model, muscles, options or build; truncated or damaged); s is untouched then. */
int sc_softbody_snapshot_restore(sc_softbody *s, const void *buf, size_t size, sc_err *err);

#endif

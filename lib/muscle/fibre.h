/* Muscle fibres of [T12] 4.2: polylines of independently contracting segments embedded in a
 * boneless tet mesh, bundled in groups. Each segment is a spring of adjustable rest length
 * l_d; its tension acts on the elements near it as a stress along the segment (eq. 3-4) with
 * Gaussian influence weights normalised over its group (eq. 5), turned into nodal forces
 * linear in l_d (eq. 6, f_m = A (l_d - l)).
 *
 * Units and sign: a segment of current length l, rest length l0 and desired length l_d pulls
 * with the tensile stress s = k (l - l_d) / l0 (Pa; k is `stiffness`, the stress per unit
 * strain), so a segment asked to be shorter than it is contracts. Weights: with h(d) =
 * exp(-d^2 / sigma^2), w_ij = h(d_ij) / max(1, sum_{k in group(j)} h(d_ik)): eq. 5 where the
 * group's fibres cover an element (the sum is at least 1) and a Gaussian fall-off away from
 * them, so that a leg's muscles do not pull on the far side of the body (eq. 5 alone gives every
 * element the weight 1 from its nearest fibre, however far). */
#ifndef SC_FIBRE_H
#define SC_FIBRE_H
#include "core/mathx.h"
#include "core/status.h"
#include "model/model.h"

typedef enum { SC_MUSCLE_LONGITUDINAL = 0, SC_MUSCLE_RADIAL = 1, SC_MUSCLE_HELICAL = 2 } sc_muscle_kind;
#define SC_MUSCLE_NAME 32

/* What a designer writes (or the letter generator makes): fibres as polylines in rest
 * coordinates. A closed fibre repeats its first point last. */
typedef struct sc_fibre_def {
    int group;
    int npoints;     /* >= 2: npoints - 1 segments */
    double *points;  /* [3 npoints] m */
    char where[160]; /* its config entry ("file:line:col: muscles.fibres[i]"), "" when generated: for messages */
} sc_fibre_def;

typedef struct sc_muscle_defs {
    int ngroups;
    char (*group_name)[SC_MUSCLE_NAME];
    int *group_kind; /* sc_muscle_kind */
    int nfibres;
    sc_fibre_def *fibres;
    double stiffness; /* Pa per unit strain */
    double sigma;     /* m, the influence width */
    double min_ratio; /* lower bound of l_d / l0 ([T12] 5.1: 0.5) */
} sc_muscle_defs;

void sc_muscle_defs_free(sc_muscle_defs *d);

/* The muscles of one model, immutable once built (the model's companion). */
typedef struct sc_muscles {
    int ngroups, nfibres, nsegs, npoints;
    char (*group_name)[SC_MUSCLE_NAME];
    int *group_kind;
    int *fibre_group;   /* [nfibres] */
    int *fibre_first;   /* [nfibres + 1] first segment of each fibre */
    int *seg_a, *seg_b; /* [nsegs] its end points */
    double *rest_len;   /* [nsegs] l0 (m) */
    double *rest_dir;   /* [3 nsegs] unit direction at rest */
    double *point_rest; /* [3 npoints] m */
    int *point_tet;     /* [npoints] enclosing tet */
    double *point_bary; /* [4 npoints] */
    /* influence, by tet (CSR): tet t meets segments inf_seg[inf_first[t] .. inf_first[t+1]) */
    int *inf_first, *inf_seg;
    double *inf_w;
    double stiffness, sigma, min_ratio;
} sc_muscles;

/* Builds the muscles of defs in model m: embeds each polyline point in the tet that holds it
 * (SC_EINPUT naming the fibre's config entry and its point when a point lies outside the body,
 * a fibre has fewer than 2 points or a segment has no length), then the weights of eq. 5
 * (weights below 1e-4 are dropped). */
int sc_muscles_build(const sc_model *m, const sc_muscle_defs *defs, sc_muscles *out, sc_err *err);
void sc_muscles_free(sc_muscles *mu);

/* Current segment lengths (m) at node positions x. */
void sc_muscle_lengths(const sc_muscles *mu, const sc_model *m, const double *x, double *len);

/* Muscle forces at node positions x for desired lengths ld, ACCUMULATED into force[3 nnodes]:
 * per tet P = R sum_j w_tj s_j d_j d_j' (R the tet's rotation, R d_j the segment's rest
 * direction carried with the tet, eq. 4) and nodal forces -V P Bm^-T, as the elastic forces
 * are. rot[9 ntets] holds each tet's R (row-major). len: the current lengths (scratch,
 * [nsegs]). */
void sc_muscle_forces(const sc_muscles *mu, const sc_model *m, const double *x, const double *rot, const double *ld, double *len, double *force);

/* The muscle force matrix of eq. 6 at x: A (3 nnodes x nsegs, row-major, overwritten) with
 * f_m = A (l_d - l). */
void sc_muscle_matrix(const sc_muscles *mu, const sc_model *m, const double *rot, double *A);

#endif

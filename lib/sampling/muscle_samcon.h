/* Long-horizon control of a boneless body ([T12] Limitations; "beyond [T12]" in issue 30): the
 * greedy QPCC controller (muscle/control.h) plans one period at a time, which cannot make the I
 * cartwheel. Here its objectives' targets become the controls of a SAMCON search (Liu et al.
 * 2010, as sampling/samcon.h does it for skeletons): time is cut into segments; for segment k,
 * N samples start from the K elite end states of segment k - 1 (sample i from elite i mod K)
 * and each draws, from its own Philox stream keyed by (seed, k, i), offsets uniform in
 * [-half_width, half_width] for the sampled target components, except the first of each elite
 * (i < K), which keeps the controller's own targets (offset 0); the QPCC controller then runs
 * the segment with those targets. A sample fails when the body blows up or, at the end of a
 * control period, its volume differs from the rest volume by more than max_volume_change. The
 * K samples of least path cost (the parent's plus the segment's) are segment k's elites, the
 * greedy path's sample (every offset 0 so far) among them while it has not failed: the path
 * found never costs more than the controller's own. When every sample fails the search stops
 * and keeps the path found so far. The cheapest path is traced back through the elites' parents; following it
 * from the start (sc_muscle_follow) reproduces every sampled segment bit for bit.
 *
 * Segment cost: the mean over the segment's control periods of sum_j w_j e_j^2, each term
 * active for from <= t < to:
 *   turn:         the body's rotation about `axis` since the start (its best-fit rotation,
 *                 unwrapped, degrees) against a ramp from `start` at `from` to `target` at `to`
 *   com:          per-axis weighted distance of the centre of mass to `target` (m)
 *   com_velocity: the same for its velocity (m/s)
 *
 * Every rank runs the same loop; samples are spread by sc_par_map and the elites' end states
 * broadcast by the ranks that simulated them, so the result does not depend on the number of
 * ranks or threads. */
#ifndef SC_MUSCLE_SAMCON_H
#define SC_MUSCLE_SAMCON_H
#include <stdint.h>
#include "muscle/run.h"

#define SC_MSAMCON_MAX_CONTROLS 16
#define SC_MSAMCON_MAX_TERMS    16

typedef enum { SC_MCOST_TURN = 0, SC_MCOST_COM = 1, SC_MCOST_COM_VELOCITY = 2 } sc_mcost_type;

typedef struct sc_msamcon_control {
    int objective; /* index into the run's objectives */
    int axis;      /* 0, 1, 2: the target component sampled */
    double half_width;
} sc_msamcon_control;

typedef struct sc_mcost_term {
    int type; /* sc_mcost_type */
    double weight, from, to;
    double axis[3];   /* turn: unit axis */
    double start;     /* turn: the angle at `from` (deg) */
    double target[3]; /* turn: target[0], the angle at `to` (deg); com*: the target */
    double axes[3];   /* com*: per-axis weights */
} sc_mcost_term;

typedef struct sc_msamcon_config {
    double segment;  /* s */
    double duration; /* s of the whole search */
    int samples, elites;
    uint64_t seed;
    double max_volume_change; /* a sample beyond this |V / V0 - 1| fails */
    int ncontrols;
    sc_msamcon_control controls[SC_MSAMCON_MAX_CONTROLS];
    int nterms;
    sc_mcost_term terms[SC_MSAMCON_MAX_TERMS];
} sc_msamcon_config;

void sc_msamcon_default_config(sc_msamcon_config *c);

/* A path's running measures: the unwrapped turn (rad, about every axis) and the last rotation. */
typedef struct sc_mpath {
    double turn[3];
    double R[9];
    double cost; /* path cost so far */
} sc_mpath;

typedef struct sc_msamcon_segment {
    double t0, t1;
    double cost, path_cost; /* the chosen path's */
    int failures;           /* of this segment's samples */
    double best_elite, median_elite;
} sc_msamcon_segment;

typedef struct sc_msamcon_result {
    int nseg_total, nseg, completed;
    sc_msamcon_segment *seg; /* [nseg] */
    double *offset;          /* [nseg * ncontrols] the chosen path's */
    long samples, failures;
    double greedy_cost; /* the path cost of the unsampled controller (every offset 0), for comparison */
    double wall_seconds;
    int ranks, threads;
} sc_msamcon_result;
void sc_msamcon_result_free(sc_msamcon_result *r);

/* Checks the config against the run's options (controls name existing objectives, terms are
   sane, no objective is anchored: a restored snapshot would plan with another path's anchor);
   SC_EINPUT saying which. */
int sc_msamcon_check(const sc_msamcon_config *c, const sc_muscle_run_opts *o, sc_err *err);

struct sc_par;
/* The search. Same result on every rank. stop (may be NULL) is polled between samples. */
int sc_msamcon_search(struct sc_par *par, const sc_model *m, const sc_muscles *mu, const sc_muscle_run_opts *o, const sc_msamcon_config *c,
                      int (*stop)(void), sc_msamcon_result *res, sc_err *err);

/* Following a path step by step, as the search ran it (mj_step's callers record between steps):
 * the run must be fresh, created from options whose objectives array is `objectives` (a copy
 * of o->control.objectives the follower sets targets in). */
typedef struct sc_muscle_follow {
    const sc_msamcon_config *c;
    const sc_msamcon_result *res;
    const sc_muscle_run_opts *o;
    sc_objective *objectives;
    sc_mpath path;
    int seg;
    long seg_steps, steps_in_seg;
    double seg_cost;
} sc_muscle_follow;
void sc_muscle_follow_init(sc_muscle_follow *f, const sc_msamcon_config *c, const sc_msamcon_result *res, const sc_muscle_run_opts *o,
                           sc_objective *objectives, const sc_muscle_run *r);
/* One step of the run, with the path's targets set at each segment's start; *done once the
 * last segment ends. SC_ENUMERIC when a segment's cost differs from the search's (the run does
 * not reproduce the search bit for bit), or the step's own error. */
int sc_muscle_follow_step(sc_muscle_follow *f, sc_muscle_run *r, int *done, sc_err *err);

#endif

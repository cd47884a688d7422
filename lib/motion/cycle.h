/* Gait cycles of a reference (Liu et al. 2012, 2016; mass-SAMCON's loops): a cycle is a span
 * [t0, t1) of the reference whose end state matches its start state up to where the character
 * is and which way it faces, so the cycle can follow itself. A controller built for the cycle
 * repeated n times has segments that are fragments of one cycle, each able to follow the last. */
#ifndef SC_CYCLE_H
#define SC_CYCLE_H
#include "motion/reference.h"

typedef struct sc_cycle {
    int i0, i1;            /* reference samples: the cycle is [i0, i1) */
    double t0, t1;         /* their times (s) */
    double pose_error;     /* rad: RMS over joints (and the root's tilt) of the angle between the poses at i0 and i1 */
    double velocity_error; /* RMS difference of the joints' angular velocities (rad/s) */
    double mean_error;     /* the same pose measure averaged over every start of a span of this period */
} sc_cycle;

/* The period (in [min_period, max_period] s) that best repeats over the whole clip (the mean
 * root-relative mismatch of every frame with the frame one period later; the shortest period
 * within 15 % of the best, so a double cycle is not taken for one), then the start frame with
 * the best match at that period. Root-relative: joint rotations, the root's tilt away from
 * vertical (its heading and place do not matter), angular velocities (weighted 0.1 s), the
 * root's height (0.1 rad per cm) and its velocity in its heading frame (0.1 s). */
int sc_cycle_find(const sc_reference *r, double min_period, double max_period, sc_cycle *c, sc_err *err);
/* The cycle [t0, t1] given by a user: snapped to samples, with its errors measured. */
int sc_cycle_from_times(const sc_reference *r, double t0, double t1, sc_cycle *c, sc_err *err);
/* The cycle repeated n times: repetition k is the cycle moved by k times the horizontal rigid
 * motion (heading turn and displacement) that takes the state at i0 to the state at i1; local
 * joint rotations and PD targets are unchanged; world quantities (root and bone poses,
 * velocities, centre of mass, contact forces) are moved. n * (i1 - i0) + 1 samples from t = 0. */
int sc_cycle_repeat(const sc_reference *r, const sc_cycle *c, int n, sc_reference *out, sc_err *err);

#endif

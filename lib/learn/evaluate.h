/* Judging a simulated motion against its reference: when did the character fall, and how
 * well did it track until then ([L13] 5: the cost sampling and feedback will use). */
#ifndef SC_EVALUATE_H
#define SC_EVALUATE_H
#include "core/status.h"

typedef struct sc_fall_report {
    double fall_time;        /* s; the simulated duration when it never fell */
    int fell;
    char reason[128];        /* "pelvis below half its reference height" or "torso tilted 63 deg" */
    double tracking_rms;     /* rad, RMS over joints and frames of the angle between the simulated and
                                the reference local rotations, until the fall */
    double pelvis_min_ratio; /* lowest pelvis height / reference pelvis height until the fall */
    double max_tilt_deg;     /* largest torso tilt until the fall */
} sc_fall_report;

/* Reads sim.h5 and the reference.h5 it tracked. Falling: the pelvis (bone 0) lower than half
 * its reference height at the same time, or the torso (bone named "spine", else the root)
 * tilted more than max_tilt_deg from vertical. */
int sc_evaluate_fall(const char *sim_path, const char *ref_path, double max_tilt_deg, sc_fall_report *r, sc_err *err);
/* relative = 1: the torso's tilt is measured from the reference torso at the same time instead
 * of from the vertical (a jump, a kick or a cartwheel bends or turns the torso over by itself). */
int sc_evaluate_fall_ex(const char *sim_path, const char *ref_path, double max_tilt_deg, int relative, sc_fall_report *r, sc_err *err);

#endif

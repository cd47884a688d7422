/* Judging a simulated motion against its reference: when did the character fall, and how
 * well did it track until then ([L13] 5: the cost sampling and feedback will use). The fall is
 * model/world.h's sc_fall_test. store/sim.h's sc_sim_judge_fall judges a sim.h5 file. */
#ifndef SC_EVALUATE_H
#define SC_EVALUATE_H
#include <stddef.h>
#include "core/status.h"

typedef struct sc_fall_report {
    double fall_time; /* s; the simulated duration when it never fell */
    int fell;
    char reason[128];        /* "pelvis below half its reference height" or "torso tilted 63 deg" */
    double tracking_rms;     /* rad, RMS over joints and frames of the angle between the simulated and
                                the reference local rotations, until the fall */
    double pelvis_min_ratio; /* lowest pelvis height / reference pelvis height until the fall */
    double max_tilt_deg;     /* largest torso tilt until the fall */
} sc_fall_report;

/* The simulated bones over time (what store/sim reads from a sim.h5). */
typedef struct sc_fall_motion {
    size_t nframes, nbones;
    const double *time, *pos, *quat; /* [nframes], [nframes*nbones*3], [nframes*nbones*4] (w, x, y, z) */
    const int *parents;
    char *const *names;
} sc_fall_motion;

/* The reference it tracked: the samples of a reference.h5 (motion/reference.h; store/sim reads
 * it), in the simulation's bone order. */
typedef struct sc_fall_reference {
    size_t nframes, nbones;
    const double *time, *root_pos, *local_quat; /* [nframes], [nframes*3], [nframes*nbones*4] */
    const double *bone_quat;                    /* [nframes*nbones*4] world rotations, or NULL */
} sc_fall_reference;

/* Falling: the pelvis (bone 0) lower than half its reference height at the same time, or the
 * torso (bone named "spine", else the root) tilted more than max_tilt_deg from vertical, or with
 * ref->bone_quat from the reference torso at the same time (a jump, a kick or a cartwheel bends
 * or turns the torso over by itself). */
void sc_evaluate_fall_motion(const sc_fall_motion *sim, const sc_fall_reference *ref, double max_tilt_deg, sc_fall_report *r);

#endif

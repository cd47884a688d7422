/* How far a simulated state is from the reference at a reference time, and whether a sample
 * has failed ([L13] 5; Liu et al. 2010; the terms of mass-SAMCON). Everything a tracker needs
 * from the model and the reference (end effectors, surface vertices that may not touch the
 * ground, the character's height) is derived once by sc_tracker_init.
 *
 * Terms (radians, metres, seconds; their weighted sum is the cost):
 *   pose     mean over non-root joints of the angle between simulated and reference local
 *            rotations + 0.1 s x |relative angular velocity difference|
 *   root     angle between the root's world rotations + 0.1 s x |angular velocity difference|
 *   ee       mean over end effectors (leaf bones' tips) of the height difference (m)
 *   balance  mean over end effectors of |(c - p_e)_xz - (c_ref - p_e,ref)_xz| x 1.6 m / height
 *            (the horizontal centre of mass to end-effector vectors, for a 1.6 m character)
 *            + 0.1 s x |centre-of-mass velocity difference|
 *   com      |c - c_ref| (m)
 *   heading  |heading - heading_ref| (rad), with frame: heading only
 * With frame: heading (SC_COST_FRAME_HEADING) the root term compares the tilts (each rotation
 * with its own heading removed) and the balance vectors and centre-of-mass velocities are taken
 * in each one's heading frame, so a character that walks a few degrees off the reference's
 * direction is not pushed to lean sideways to match world-frame offsets; the heading error is
 * then its own term. */
#ifndef SC_COST_H
#define SC_COST_H
#include "motion/reference.h"
#include "sim/sim.h"

enum { SC_COST_POSE = 0, SC_COST_ROOT, SC_COST_EE, SC_COST_BALANCE, SC_COST_COM, SC_COST_HEADING, SC_COST_TERMS };
enum { SC_COST_FRAME_WORLD = 0, SC_COST_FRAME_HEADING = 1 };
extern const char *const sc_cost_term_names[SC_COST_TERMS];

/* Why a sample failed (0: it did not). */
enum { SC_FAIL_NONE = 0, SC_FAIL_ROOT_LOW, SC_FAIL_TILT, SC_FAIL_CONTACT, SC_FAIL_NUMERIC, SC_FAIL_COST, SC_FAIL_KINDS };
extern const char *const sc_failure_names[SC_FAIL_KINDS];

typedef struct sc_tracker_opts {
    double weights[SC_COST_TERMS];           /* defaults 5, 3, 30, 10, 0, 0 */
    int frame;                               /* SC_COST_FRAME_*: where root and balance are compared */
    double min_root_height;                  /* fail below this fraction of the reference root height (0.7), never
                                                within 5 % of the character's height of it */
    double max_tilt;                         /* rad: fail when the root's up axis is further than this from
                                       the reference root's (40 deg) */
    int allowed_from_reference;              /* 1: bones the reference has in contact may touch the ground, */
    double allowed_margin;                   /* m: and those whose lowest point comes this close to it (0.03):
                                                a contact the estimation dropped (a roll's back) is no failure */
    unsigned char allowed[SC_SIM_MAX_BONES]; /* and these (1 = may touch) */
    int obstacles_forbidden;                 /* 1: touching a ground box is a forbidden contact (stepping over it) */
} sc_tracker_opts;
void sc_tracker_default_opts(sc_tracker_opts *o);

typedef struct sc_tracker {
    const sc_model *m;
    const sc_reference *r;
    sc_tracker_opts o;
    int nee;
    int ee[SC_SIM_MAX_BONES];                /* end-effector bones (leaves) */
    sc_vec3 ee_tip[SC_SIM_MAX_BONES];        /* their tips in bone coordinates */
    double height;                           /* rest height of the character (m) */
    unsigned char allowed[SC_SIM_MAX_BONES]; /* resolved: bones that may touch the ground */
    int nwatch;                              /* surface vertices whose dominant bone may not touch */
    int *watch;
    int *vert_bone; /* [nsurf_verts] dominant bone of each surface vertex */
} sc_tracker;

/* SC_EINPUT when r was made for another character (bone names or order differ). */
int sc_tracker_init(sc_tracker *t, const sc_model *m, const sc_reference *r, const sc_tracker_opts *o, sc_err *err);
void sc_tracker_free(sc_tracker *t);

/* The reference state interpolated at reference time tr. */
typedef struct sc_ref_state {
    sc_vec3 root_pos, root_vel, com, com_vel;
    sc_quat local[SC_SIM_MAX_BONES];
    sc_vec3 local_w[SC_SIM_MAX_BONES];
    sc_vec3 ee[SC_SIM_MAX_BONES]; /* end-effector tips, world */
} sc_ref_state;
void sc_tracker_reference(const sc_tracker *t, double tr, sc_ref_state *rs);
/* The reference's world bone poses (origin and rotation) at tr. */
void sc_tracker_reference_bones(const sc_tracker *t, double tr, sc_xform *bones);

/* The cost terms of s against the reference at tr; returns the weighted total. */
double sc_tracker_cost(const sc_tracker *t, const sc_sim *s, double tr, double terms[SC_COST_TERMS]);
/* A failure of s at reference time tr (root too low, tilted, a forbidden bone on the ground or,
 * when forbidden, anything on a ground box),
 * or SC_FAIL_NONE. Cheap enough for every step: uses the nearest reference sample. */
int sc_tracker_failure(const sc_tracker *t, const sc_sim *s, double tr);
/* Joint-angle error (rad, RMS over non-root joints) of s against the reference at tr. */
double sc_tracker_joint_rms(const sc_tracker *t, const sc_sim *s, double tr);

#endif

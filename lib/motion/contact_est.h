/* Ground contact estimation for inverse dynamics ([L13] eq. 25-31): the resultant contact force
 * and torque from the whole-body momentum rate, split over the bones in contact by inverse
 * horizontal distance, then clamped to push-only, the friction cone and a torque bound.
 * Contact is detected from the height and speed of each bone's lowest point. The ground is the
 * plane y = 0. */
#ifndef SC_CONTROL_CONTACT_EST_H
#define SC_CONTROL_CONTACT_EST_H
#include "motion/kinematics.h"
#include "motion/rnea.h"

/* The contact geometry of each bone: the fine-surface vertices (tet nodes when the character has
 * no surface) whose dominant skinning weight is that bone's (nearest bone without weights),
 * reduced to the support points of 256 directions, i.e. (nearly) the vertices of the convex hull:
 * the lowest point in any pose is among them. Coordinates in the bone frame. */
typedef struct sc_gc_geom {
    int nb, npts;
    int *start;  /* [nb+1] bone j owns points start[j] .. start[j+1]-1 */
    double *pts; /* [npts*3] */
    int nsource; /* vertices (or nodes) the points were taken from */
} sc_gc_geom;

int sc_gc_geom_build(const sc_model *m, sc_gc_geom *g, sc_err *err);
void sc_gc_geom_free(sc_gc_geom *g);

/* Lowest point of bone j in the pose k: its height, position and velocity, and r_max of eq. 31:
 * the largest distance from the bone's centre of mass `com` to a point of its contact patch (its
 * points within patch_tol of the lowest one). Returns 0 if the bone has no points. */
typedef struct sc_gc_probe {
    double height, speed, r_max;
    sc_vec3 point, vel;
} sc_gc_probe;
int sc_gc_lowest(const sc_gc_geom *g, int j, const sc_bone_kin *k, sc_vec3 com, double patch_tol, sc_gc_probe *out);

enum { SC_SPLIT_RESIDUAL = 0, SC_SPLIT_PAPER = 1 };

typedef struct sc_gc_opts {
    double mu;                    /* friction coefficient, eq. 30 (default SC_DEFAULT_FRICTION) */
    double height_tol;            /* m: a bone is in contact when its lowest point is below this ... (0.03;
                           sc_id_compute sets both from the character, sc_gc_auto_tolerances) */
    double speed_tol;             /* m/s: ... and moves slower than this (0.6), or is below the floor */
    double min_dist;              /* m: lower bound on d_i in eq. 27 (0.01) */
    int torque_split;             /* SC_SPLIT_RESIDUAL (default) or SC_SPLIT_PAPER, see sc_gc_estimate */
    const unsigned char *allowed; /* [nb] bones that may touch the ground; NULL = all */
    /* the consistency check: when no bone touches but the resultant needs more than `support`
       x the weight upwards, the lowest bones (within height_tol of the lowest) do, if the lowest
       is within rescue_band of the floor (a filtered landing asks for support a few frames
       before the foot arrives) */
    double support;     /* fraction of the weight (0.1; 0: off) */
    double rescue_band; /* m (0.1) */
    double weight;      /* N: m g, set by the caller */
} sc_gc_opts;
void sc_gc_default_opts(sc_gc_opts *o);

typedef struct sc_gc_stats {
    long push_only, friction, torque; /* clamps applied, eq. 29, 30, 31 (bone-steps) */
    long contact_steps;               /* bone-steps in contact */
    long lost_steps;                  /* steps with a resultant force but no bone in contact */
    long rescued_steps;               /* steps whose contact came from the consistency check */
} sc_gc_stats;

/* One step. fc, tc: the resultant contact force and the torque about the whole-body centre of
 * mass `com` (eq. 25-26). given[nb]: the bones in contact (sc_gc_detect), or NULL to decide
 * here from each bone's lowest point (height_tol, speed_tol); then the consistency check (see
 * sc_gc_opts.support). Outputs per bone (world): force f[3nb] at the bone's centre of mass,
 * torque tau[3nb], flag[nb] (1 in contact), probe[nb] (may be NULL). Returns the number of bones
 * in contact.
 * Split, eq. 27: f_i = s_i f_c, s_i = (1/d_i) / sum_k (1/d_k), d_i the horizontal distance from
 * the com to bone i's centre of mass. Torques about each bone's centre of mass:
 *   SC_SPLIT_PAPER, eq. 28 as printed: tau_i = s_i tau_c - d_i x f_i;
 *   SC_SPLIT_RESIDUAL: tau_i = s_i (tau_c - sum_k d_k x f_k).
 * Both give the same total wrench, and are identical with one bone in contact. With two feet
 * apart the printed form gives each foot a large torque that cancels only in the sum (each foot
 * carries minus the moment of its own force about the com), which loads the legs with opposite
 * internal torques and trips eq. 31 when simply standing; the residual form lets the forces'
 * positions carry their moments and splits only what is left.
 * Clamps per bone: eq. 29 f_y >= 0 (else f = tau = 0), eq. 30 |f_xz| <= mu f_y, eq. 31
 * |tau| <= r_max sqrt(1 + mu^2) f_y. */
int sc_gc_estimate(const sc_body *b, const sc_gc_geom *g, const sc_bone_kin *k, sc_vec3 com, sc_vec3 fc, sc_vec3 tc, const sc_gc_opts *o,
                   const unsigned char *given, double *f, double *tau, int *flag, sc_gc_probe *probe, sc_gc_stats *st);

/* Puts a keyframe motion on the floor y = 0. Per frame the lowest point over the allowed bones
 * whose lowest point moves slower than speed_tol (the supporting points) is found. With `level`,
 * a plane is fitted to the lower envelope of those points (least squares, then refitted 4 times
 * to the half below the previous fit), with a slope only along those of their two principal
 * horizontal directions that they span by at least 1 m, and the whole motion is rotated about
 * the origin so that the plane becomes horizontal (capture floors are often tilted by a degree
 * or so).
 * Then the root is shifted vertically so that the given percentile (0..100) of the per-frame
 * lowest heights is 0, plus height_offset. */
typedef struct sc_gc_floor_info {
    double tilt_deg; /* angle of the levelling rotation */
    double slope[2]; /* fitted dy/dx, dy/dz before levelling */
    double shift;    /* m added to the root height */
} sc_gc_floor_info;
int sc_gc_floor(const sc_body *b, const sc_gc_geom *g, sc_motion *m, const unsigned char *allowed, double speed_tol, int level, double percentile,
                double height_offset, sc_gc_floor_info *info, sc_err *err);

/* Contact detection over a whole keyframe motion, with no per-clip thresholds: what touches the
 * floor (y = 0) in frame f, as flags[f*nb + j].
 *  1. a bone whose lowest point is at most height_tol above the floor and moves slower than
 *     speed_tol, or is below the floor;
 *  2. the resultant as a consistency check: in a frame where the whole body needs an upward
 *     force above `support` x its weight ((a_com,y + g) / g, second differences over ~25 ms)
 *     and no bone touches, the lowest bones (within height_tol of the lowest) that are slow or
 *     within 2 height_tol of the floor touch it (a capture's hands in a handstand can sit
 *     10 cm above the floor its feet define); and in a frame where the body is down and still
 *     (centre of mass below half its standing height, slower than speed_tol / 4) and the centre
 *     of pressure the resultant needs lies over 6 height_tol outside what touches (a body lying
 *     on its back with only its heels lowest), the slow bones within 2 height_tol of the floor
 *     touch it too;
 *  3. gaps shorter than min_time between two contacts of a bone are filled, then contacts
 *     shorter than min_time dropped.
 * The tolerances come from the character (sc_gc_auto_tolerances), not from the clip. */
typedef struct sc_gc_detect_opts {
    double height_tol, speed_tol; /* m, m/s */
    double support;               /* fraction of m g (0.1) */
    double min_time;              /* s (0.03) */
    double gravity;               /* m/s^2 along -y (SC_STANDARD_GRAVITY) */
    const unsigned char *allowed; /* [nb] bones that may touch; NULL = all */
} sc_gc_detect_opts;
void sc_gc_detect_default_opts(sc_gc_detect_opts *o); /* tolerances 0: set them */

typedef struct sc_gc_detect_info {
    int intervals; /* contact intervals over all bones */
    int bone_intervals[SC_BODY_MAX_BONES];
    long frames_rescued;     /* frames whose contact came from the resultant (step 2) */
    long frames_unsupported; /* frames needing support with no contact at the end */
} sc_gc_detect_info;

int sc_gc_detect(const sc_body *b, const sc_gc_geom *g, const sc_motion *m, const sc_gc_detect_opts *o, unsigned char *flags, sc_gc_detect_info *info,
                 sc_err *err);

/* The default tolerances, from the character's size: height 0.04 x its leg length (hip to
 * ankle; 3.4 cm for a 0.84 m leg), speed sqrt(2 g height) (0.81 m/s: what a point falling from
 * that height reaches). */
void sc_gc_auto_tolerances(const sc_model *m, double gravity, double *height_tol, double *speed_tol);

#endif

/* The inverse-dynamics reference ([L13] 5.1): a reference motion at simulation rate with its
 * estimated ground contact, joint torques and the PD targets of eq. 32; the driver that computes
 * it, and reference.h5 (schema softcon.reference/1) on disk.
 *
 * reference.h5 (every time series has /time as its HDF5 dimension scale; w,x,y,z quaternions):
 *   /time [T] s                        simulation-rate sample times, from the first frame used
 *   /bones/names [nb]                  the character's bone names, character order
 *   /reference/root_pos [T,3] m        root bone origin, world
 *   /reference/root_lin_vel, root_lin_acc [T,3]
 *   /reference/local_quat [T,nb,4]     rotation relative to the parent (root: world); identity at rest
 *   /reference/local_ang_vel [T,nb,3] rad/s   relative angular velocity in the parent frame
 *   /reference/local_ang_acc [T,nb,3] rad/s^2 time derivative of local_ang_vel's components
 *   /reference/bone_pos [T,nb,3], bone_quat [T,nb,4]   world pose of every bone origin
 *   /reference/com, com_vel [T,3]      whole-body centre of mass (ID mass model)
 *   /targets/local_quat [T,nb,4]       PD targets, eq. 32, in sim/skeleton.c's servo convention
 *                                      (ball: target = reference exp(delta), delta in the joint
 *                                      frame; hinge: rotation about the axis); root: identity
 *   /contact/force, torque [T,nb,3]    per-bone ground force at the bone's centre of mass and
 *                                      torque about it (after the clamps of eq. 29-31)
 *   /contact/flag [T,nb] int           1 in contact (the bones the force of that sample may act on)
 *   /contact/captured [T,nb] int       1 where the capture touches the floor with that bone (the
 *                                      contacts retargeting kept; a subset of flag, which adds the
 *                                      keyframe interval around them and the consistency check)
 *   /contact/allowed [nb] int          1 for the bones that touch the floor anywhere in the clip
 *   /contact/lowest_height [T,nb] m    height of each bone's lowest point
 *   /contact/lowest_speed [T,nb] m/s   speed of that (material) point
 *   /contact/resultant [T,6]           f_c, tau_c of eq. 25-26 (about the com), before the split
 *   /torques/joint [T,nb,3] N m        servo torque on each bone (world; the parent gets minus it;
 *                                      hinges: the axial part); root: 0
 *   /torques/root_residual [T,6]       force and torque (about the root origin) the floating
 *                                      base would still need: ~0 when the contact is consistent
 *   /report (attributes)               see sc_reference_write_report */
#ifndef SC_CONTROL_REFERENCE_H
#define SC_CONTROL_REFERENCE_H
#include <stdint.h>
#include "motion/contact_est.h"
#include "motion/retarget.h"
#include "io/h5.h"

#define SC_REFERENCE_SCHEMA "softcon.reference/1"

typedef struct sc_reference {
    int n, nb;
    double dt;
    char (*names)[SC_NAME_LEN];
    double *time;                                    /* [n] */
    double *root_pos, *root_vel, *root_acc;          /* [n*3] */
    double *local_quat;                              /* [n*nb*4] */
    double *local_ang_vel, *local_ang_acc;           /* [n*nb*3] */
    double *bone_pos;                                /* [n*nb*3] */
    double *bone_quat;                               /* [n*nb*4] */
    double *com, *com_vel;                           /* [n*3] */
    double *target_quat;                             /* [n*nb*4] */
    double *contact_force, *contact_torque;          /* [n*nb*3] */
    int *contact_flag;                               /* [n*nb] */
    int *captured;                                   /* [n*nb] the capture's contacts (may be all 0) */
    double *contact_height, *contact_speed;          /* [n*nb] */
    double *contact_resultant;                       /* [n*6] */
    double *joint_torque;                            /* [n*nb*3] */
    double *root_residual;                           /* [n*6] */
    uint64_t character_hash;                         /* sc_model_hash of the character it was made for (0: unknown) */
} sc_reference;

int sc_reference_alloc(sc_reference *r, int n, int nb, sc_err *err);
void sc_reference_free(sc_reference *r);
/* The reference state at time t (the sample at or just before t): root origin position and
 * velocity, local rotations and local angular velocities (each in the parent's frame), in the
 * character's bone order (matched by name). Outputs but local may be NULL. */
int sc_reference_state_at(const sc_reference *r, const sc_model *m, double t, double root_pos[3], sc_quat *local,
                          double root_vel[3], double *local_ang_vel, sc_err *err);

enum { SC_RATE_ANALYTIC = 0, SC_RATE_DIFFERENCE = 1 };

typedef struct sc_id_opts {
    double gravity[3];        /* default {0, -9.81, 0} */
    int momentum_rate;        /* SC_RATE_ANALYTIC: dP, dH from the same accelerations as the RNEA
                                 (the root residual then vanishes unless a clamp fires);
                                 SC_RATE_DIFFERENCE: eq. 25-26 literally, (P_t+1 - P_t)/dt */
    double max_target_offset; /* rad, bound on |delta| of eq. 32 (default 1.5) */
    sc_gc_opts contact;
    const unsigned char *contact_flags; /* [n*nb] the bones in contact per sample (sc_gc_detect),
                                           NULL: each sample decides (sc_gc_estimate) */
} sc_id_opts;
void sc_id_default_opts(sc_id_opts *o);

typedef struct sc_id_report {
    int nb;
    double peak_torque[SC_BODY_MAX_BONES], rms_torque[SC_BODY_MAX_BONES]; /* |servo torque|, N m */
    double duty[SC_BODY_MAX_BONES];         /* fraction of samples in contact */
    long limit_exceeded[SC_BODY_MAX_BONES]; /* samples with |servo torque| > the torque limit */
    sc_gc_stats contact;
    long target_clamps;                     /* eq. 32 offsets clamped to max_target_offset */
    double total_mass;
    int mass_source;                        /* sc_mass_source */
    double residual_force_rms, residual_force_max, residual_torque_rms, residual_torque_max;
    double mean_contact_fy, mean_resultant_fy, peak_contact_fy, weight; /* N */
    /* acceptance figures */
    double expected_fy;          /* N: m g + m (v_end - v_start) / T, v the com's vertical velocity */
    double com_vel_start, com_vel_end;
    long unsupported;            /* samples whose resultant needs more than 0.1 m g up with no bone in contact */
    double peak_contact_fy_start; /* N, in the first 0.2 s */
    int contact_intervals, contacts_kept; /* given contacts (o->contact_flags), those within 2 cm of the floor */
    double max_contact_gap;      /* m, largest |height| of a bone's lowest point while given in contact */
    int max_gap_bone;
} sc_id_report;

/* Runs eq. 25-32 on every sample of t: forward kinematics, momentum rate, contact estimate (none
 * when g is NULL: airborne), recursive Newton-Euler, PD targets with m's gains. out is allocated
 * here. rep may be NULL. */
int sc_id_run(const sc_model *m, const sc_body *b, const sc_gc_geom *g, const sc_traj *t, const sc_id_opts *o,
              sc_reference *out, sc_id_report *rep, sc_err *err);

/* The whole-body balance at the simulation rate: the centre-of-mass acceleration of every
 * sample (as sc_id_run will compute it) must be one the ground can give - in the friction cone
 * ([L13] eq. 29-30 applied to the resultant of eq. 25) where a bone touches (flags[k*nb + j]),
 * free fall where none does. A smooth root translation d (least squares: its second
 * differences match the missing accelerations, a penalty 1/offset^2 keeps it small; repeated
 * projection) is added to the trajectory's root position, velocity and acceleration. It removes
 * what the keyframe-rate fit (sc_retarget_fit_contacts) leaves: the differences between
 * keyframe and interpolated accelerations (millimetres). */
typedef struct sc_id_balance_info {
    double misfit_before, misfit_after; /* RMS distance of the com acceleration from the feasible set, m/s^2 */
    double max_offset;                  /* m */
} sc_id_balance_info;
int sc_id_balance(const sc_body *b, sc_traj *t, const unsigned char *flags, double mu, double gravity, double offset,
                  sc_id_balance_info *info, sc_err *err);

/* ---- configuration (configs/walk.yaml documents every key) ---- */
struct sc_cfg;
typedef struct sc_id_config {
    char bvh[1024];          /* resolved path of motion.bvh */
    char bvh_where[160];     /* its config location */
    sc_retarget_opts retarget;
    int filter;              /* motion.filter: 0 none, 1 moving_average, 2 butterworth */
    int filter_window;       /* motion.filter_window (frames, moving average) */
    double filter_cutoff;    /* motion.filter_cutoff (Hz, Butterworth) */
    char filter_cutoff_where[160];
    int floor_mode;          /* retarget.floor: 0 keep, 1 flat (shift only), 2 auto (level + shift) */
    double floor_percentile, height_offset;
    double dt;               /* kinematics.dt */
    int scheme;              /* kinematics.differences: SC_DIFF_FORWARD | SC_DIFF_CENTRAL */
    int mass_model;          /* dynamics.mass_model: SC_MASS_SKIN | SC_MASS_FIXED */
    sc_id_opts id;
    double height_tol, speed_tol; /* contact_estimation.height_tol / speed_tol; 0 = auto (sc_gc_auto_tolerances) */
    int fit_contacts;        /* retarget.contacts: the contact-preserving fit */
    int balance;             /* retarget.balance: the centre of mass made carriable (fit and sc_id_balance) */
    int all_bones;           /* contact_estimation.bones: all, or the list below */
    int nallowed;
    char allowed[SC_BODY_MAX_BONES][SC_NAME_LEN];
    char bones_where[160];
} sc_id_config;
/* Reads the sections motion, retarget, kinematics, contact, dynamics (and resolves motion.bvh
 * next to the config, in mocap/, then $SOFTCON_MOCAP_PATH). Leaves other sections alone, so a
 * later tool sharing the config can read its own and then call sc_cfg_check_unknown. */
int sc_id_read_config(struct sc_cfg *cfg, sc_id_config *c, sc_err *err);
/* contact_estimation.bones as a mask over the character's bones (unknown names are SC_EINPUT). */
int sc_id_allowed_mask(const sc_id_config *c, const sc_model *m, unsigned char *mask, sc_err *err);

/* Content hash of everything a controller tracks in a reference (poses, velocities, targets,
 * contact flags): identifies the reference a controller was made for. */
uint64_t sc_reference_hash(const sc_reference *r);
/* Root attribute character_hash (hex): the character a reference is made for, so that a later
 * stage refuses a reference made for another one (sc_reference_check_character). */
int sc_reference_write_character(sc_h5 *f, const sc_model *m, sc_err *err);
/* SC_EINPUT when r records a character other than m (references without the record pass). */
int sc_reference_check_character(const sc_reference *r, const char *path, const sc_model *m, sc_err *err);
/* The whole inverse-dynamics pipeline on a character: reads the BVH, retargets it (rest-pose
 * alignment, limb IK), filters, levels the floor, detects the capture's contacts (sc_gc_detect,
 * tolerances from the character unless given), fits them (sc_retarget_fit_contacts: contacts
 * on the floor, a settled first frame, a carriable centre of mass), samples at the simulation
 * rate, balances (sc_id_balance) and runs eq. 25-32 with those contacts (sc_id_run); the
 * capture's contacts per sample go to out->captured (nearest keyframe), and the report gets
 * how far they stay from the floor. */
typedef struct sc_id_pipeline_info {
    sc_retarget_info retarget;
    sc_gc_floor_info floor;
    sc_gc_detect_info detect;
    sc_contact_fit_info fit;
    sc_id_balance_info balance;
    double height_tol, speed_tol;  /* used */
    double frame_time;
    double seconds;
} sc_id_pipeline_info;
int sc_id_compute(const sc_id_config *c, const sc_model *m, sc_reference *out, sc_id_report *rep, sc_id_pipeline_info *info,
                  sc_err *err);
/* /report attributes of the pipeline: contact tolerances, contact intervals, fit and balance. */
int sc_id_write_pipeline_report(sc_h5 *f, const sc_id_pipeline_info *info, sc_err *err);

/* Writes /time, /bones and every dataset above (not the root attributes). */
int sc_reference_write(sc_h5 *f, const sc_reference *r, sc_err *err);
/* /report attributes: per-joint arrays peak_torque_Nm, rms_torque_Nm, torque_limit_exceeded,
 * contact_duty_factor and the string joint_names (comma-separated, character order), duty_<bone>
 * for every bone that touched the ground, clamp counts, total mass and its source ("skin weights",
 * "nearest bone" or "fixed nodes"), root residual, mean forces. */
int sc_reference_write_report(sc_h5 *f, const sc_reference *r, const sc_id_report *rep, sc_err *err);
/* Reads a reference.h5 (every dataset above that is present; /time, /bones/names,
 * /reference/root_pos, /reference/local_quat and /targets/local_quat are required) through
 * sc_h5_read_file (guarded), and checks it: unique bone names, /time finite and increasing,
 * quaternions of norm 0.5..2, positions within 10 km, every series finite, speeds >= 0,
 * contact flags 0/1 (SC_EINPUT naming the dataset and element). */
int sc_reference_read(const char *path, sc_reference *r, sc_err *err);
/* The same from an in-memory image, and on an open file (unguarded). */
int sc_reference_read_image(const void *data, size_t size, const char *name, sc_reference *r, sc_err *err);
int sc_reference_read_h5(sc_h5 *f, sc_reference *r, sc_err *err);
/* PD targets at time t (slerp between the samples around it; clamped to the ends). out[nb]. */
void sc_reference_targets_at(const sc_reference *r, double t, sc_quat *out);

#endif

/* Inverse dynamics ([L13] 5.1, eq. 19-32): the driver that turns a retargeted motion into a
 * reference (motion/reference.h) - momentum rates, contact estimate, recursive Newton-Euler,
 * PD targets - the whole-body balance at the simulation rate, and the pipeline from a BVH clip
 * to that reference. Its settings are read by settings/motion.h, its file written by
 * store/reference.h. */
#ifndef SC_MOTION_INVERSE_DYNAMICS_H
#define SC_MOTION_INVERSE_DYNAMICS_H
#include "motion/contact_est.h"
#include "motion/reference.h"
#include "motion/retarget.h"

enum { SC_RATE_ANALYTIC = 0, SC_RATE_DIFFERENCE = 1 };

typedef struct sc_id_opts {
    double gravity[3];        /* default {0, -SC_STANDARD_GRAVITY, 0} */
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
    double duty[SC_BODY_MAX_BONES];                                       /* fraction of samples in contact */
    long limit_exceeded[SC_BODY_MAX_BONES];                               /* samples with |servo torque| > the torque limit */
    sc_gc_stats contact;
    long target_clamps; /* eq. 32 offsets clamped to max_target_offset */
    double total_mass;
    int mass_source; /* sc_mass_source */
    double residual_force_rms, residual_force_max, residual_torque_rms, residual_torque_max;
    double mean_contact_fy, mean_resultant_fy, peak_contact_fy, weight; /* N */
    /* acceptance figures */
    double expected_fy; /* N: m g + m (v_end - v_start) / T, v the com's vertical velocity */
    double com_vel_start, com_vel_end;
    long unsupported;                     /* samples whose resultant needs more than 0.1 m g up with no bone in contact */
    double peak_contact_fy_start;         /* N, in the first 0.2 s */
    int contact_intervals, contacts_kept; /* given contacts (o->contact_flags), those within 2 cm of the floor */
    double max_contact_gap;               /* m, largest |height| of a bone's lowest point while given in contact */
    int max_gap_bone;
} sc_id_report;

/* Runs eq. 25-32 on every sample of t: forward kinematics, momentum rate, contact estimate (none
 * when g is NULL: airborne), recursive Newton-Euler, PD targets with m's gains. out is allocated
 * here. rep may be NULL. */
int sc_id_run(const sc_model *m, const sc_body *b, const sc_gc_geom *g, const sc_traj *t, const sc_id_opts *o, sc_reference *out, sc_id_report *rep,
              sc_err *err);

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
int sc_id_balance(const sc_body *b, sc_traj *t, const unsigned char *flags, double mu, double gravity, double offset, sc_id_balance_info *info,
                  sc_err *err);

/* The pipeline's settings (settings/motion.h reads them; configs/walk.yaml documents every key). */
typedef struct sc_id_config {
    char bvh[1024];      /* resolved path of motion.bvh */
    char bvh_where[160]; /* its config location */
    sc_retarget_opts retarget;
    int filter;           /* motion.filter: 0 none, 1 moving_average, 2 butterworth */
    int filter_window;    /* motion.filter_window (frames, moving average) */
    double filter_cutoff; /* motion.filter_cutoff (Hz, Butterworth) */
    char filter_cutoff_where[160];
    char frames_where[160]; /* motion.frames' config location */
    int floor_mode;         /* retarget.floor: 0 keep, 1 flat (shift only), 2 auto (level + shift) */
    double floor_percentile, height_offset;
    double dt;                    /* kinematics.dt */
    int scheme;                   /* kinematics.differences: SC_DIFF_FORWARD | SC_DIFF_CENTRAL */
    int mass_model;               /* dynamics.mass_model: SC_MASS_SKIN | SC_MASS_FIXED */
    sc_id_opts id;                /* id.gravity: simulation.gravity; id.contact.mu: contact.friction */
    double height_tol, speed_tol; /* contact_estimation.height_tol / speed_tol; 0 = auto (sc_gc_auto_tolerances) */
    int fit_contacts;             /* retarget.contacts: the contact-preserving fit */
    int balance;                  /* retarget.balance: the centre of mass made carriable (fit and sc_id_balance) */
    int all_bones;                /* contact_estimation.bones: all, or the list below */
    int nallowed;
    char allowed[SC_BODY_MAX_BONES][SC_NAME_LEN];
    char bones_where[160];
    sc_limb_edit edit; /* motion.edit ([BK] 8): limb ends moved after the contact fit; no moves: none */
} sc_id_config;
/* Frees what sc_id_read_config allocated (the edit's offsets). */
void sc_id_config_free(sc_id_config *c);
/* The fewest keyframes the pipeline's stencils need with these settings (kinematics.h: the
 * accelerations' differences, the filter, the balance fits), and *why (a phrase naming the
 * stage that needs most). sc_id_compute refuses a shorter motion.frames range. */
int sc_id_min_frames(const sc_id_config *c, const char **why);
/* contact_estimation.bones as a mask over the character's bones (unknown names are SC_EINPUT). */
int sc_id_allowed_mask(const sc_id_config *c, const sc_model *m, unsigned char *mask, sc_err *err);

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
    double height_tol, speed_tol; /* used */
    double edit_miss;             /* m: the largest distance of an edited limb end from where motion.edit asked it */
    double frame_time;
    double seconds;
    int nwarnings; /* the figures beyond the limits below, one line each in warnings */
    char warnings[2048];
} sc_id_pipeline_info;
/* What makes a reference implausible (a warning each; of the shipped clips only the jump kick
 * exceeds two: its clamps and its left foot's torque):
 * contacts given but not kept within 2 cm of the floor, or a gap over 3 cm; a peak vertical
 * contact force over 8 m g; a root residual force over 0.05 m g or a torque over 0.25 m g x leg
 * length (RMS over the clip: what no contact explains); PD target offsets clamped in over 0.1 %
 * of the bone-samples; a joint over its torque limit in over 2 % of the samples. */
#define SC_ID_WARN_GAP           0.03
#define SC_ID_WARN_PEAK_FORCE    8.0
#define SC_ID_WARN_RESIDUAL      0.05
#define SC_ID_WARN_RESIDUAL_TORQ 0.25
#define SC_ID_WARN_CLAMPS        0.001
#define SC_ID_WARN_TORQUE_LIMIT  0.02
int sc_id_compute(const sc_id_config *c, const sc_model *m, sc_reference *out, sc_id_report *rep, sc_id_pipeline_info *info, sc_err *err);

#endif

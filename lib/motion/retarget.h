/* Retargeting a BVH motion onto the character's skeleton ([L13] 5.1 takes captured motion as
 * its reference).
 *
 * Each character bone j names a BVH joint J (whose world rotation drives the bone) and a BVH joint
 * or End Site T at its tail. Rest-pose alignment: A_j is the smallest rotation taking the
 * character's rest bone direction (bone_end - joint_pos) to the BVH's rest segment direction
 * (T - J with every channel zero), so the bone's world rotation in frame f is
 *     Q_j(f) = R_J(f) A_j
 * and the bone points where the BVH segment points. Local rotations are Q_parent^-1 Q_j.
 * A hinge can only turn about its axis, so hinge limbs are fitted: a hinge whose parent is a ball
 * joint (knee, elbow) is solved with that parent by two-bone IK, putting the hinge bone's tail
 * (ankle, wrist) where the BVH has it relative to the parent's joint (distances scaled by the
 * ratio of the limbs' full reaches), bending to the side the BVH bends, with the swivel that keeps
 * the hinge axis nearest where the BVH holds it; other hinges take the rotation about their axis
 * that points the bone nearest to the BVH's direction (or the swing-twist twist). Children of a
 * hinge keep their BVH world orientation (a foot stays flat). Mirroring uses, for each bone,
 * the BVH joints of its left/right counterpart reflected through the x = 0 plane (x -> -x: the
 * lateral axis of the CMU data; rotations (w,x,y,z) -> (w,x,-y,-z)).
 *
 * Root translation: the root joint's BVH position in metres (unit), scaled by root_scale, the
 * ratio of leg lengths (hip to ankle, along the character's bones and along the mapped BVH
 * joints) unless given; optionally recentred so the first frame's root is above the origin.
 * The floor is set afterwards by the caller (sc_gc_floor). */
#ifndef SC_CONTROL_RETARGET_H
#define SC_CONTROL_RETARGET_H
#include "motion/contact_est.h"
#include "motion/kinematics.h"
#include "io/bvh.h"

#define SC_RETARGET_MAX 64

typedef struct sc_retarget_entry {
    char bone[SC_NAME_LEN], joint[SC_NAME_LEN], tail[SC_NAME_LEN]; /* tail "" = the joint's first child */
    char where[128];                                               /* config location, for messages */
} sc_retarget_entry;

enum { SC_HINGE_DIRECTION = 0, SC_HINGE_TWIST = 1 };

typedef struct sc_retarget_opts {
    double unit;     /* m per BVH length unit (CMU: 0.056444) */
    int first, last; /* frame range, 0-based inclusive; last < 0 counts from the end (-1 = last) */
    int mirror;
    double root_scale; /* <= 0: the ratio of leg lengths */
    int recentre;      /* 1: first frame's root at x = z = 0 */
    int hinge_ik;      /* 1 (default): a hinge whose parent is a ball joint (knee, elbow) is solved
                           with its parent by two-bone IK so the hinge bone's tail (ankle, wrist)
                           lands where the BVH puts it (scaled by the limb length ratio) */
    int hinge_fit;     /* other hinges: SC_HINGE_DIRECTION (default) or SC_HINGE_TWIST */
    int nmap;
    sc_retarget_entry map[SC_RETARGET_MAX];
    char map_where[128]; /* where the map came from ("default CMU map" or file:line:col) */
} sc_retarget_opts;

/* The defaults, with the default CMU map: sc_retarget_default_opts (settings/motion.h). */

typedef struct sc_retarget_info {
    int first, last;            /* the frame range used */
    double root_scale;          /* used */
    double leg_char, leg_bvh;   /* m */
    double max_align_deg;       /* largest rest-pose alignment angle over the bones */
    double max_hinge_swing_deg; /* largest rotation dropped from a hinge's local rotation */
    int hinge_bone;             /* ... at this bone */
    double max_hinge_tip_error; /* m: largest distance of a hinge bone's tip from the BVH's */
    int align_bone;             /* bone of max_align_deg */
} sc_retarget_info;

/* bvh_name is used in messages. Errors (SC_EINPUT): a character bone without a map entry, a map
 * entry naming a bone the character lacks or a BVH joint the file lacks, a frame range outside
 * the clip, fewer than two frames. */
int sc_retarget(const sc_bvh *bvh, const char *bvh_name, const sc_model *m, const sc_retarget_opts *o, sc_motion *out, sc_retarget_info *info,
                sc_err *err);

/* Contact-preserving fit: what touched the floor in the capture touches it on the character.
 * flags[f*nb + j] are the contacts (sc_gc_detect on the retargeted motion). The motion is changed
 * in place, keeping the rest of the pose:
 *  1. the root height: per frame the offset that keeps the limbs in contact as long as they are
 *     (averaged), within the corridor from which every limb end can reach the floor (its hip or
 *     shoulder within the limb's reach); where other bones touch (knee, back, upper arm: a body
 *     lying on the floor) the offset that puts them on it, least squares over them, and the
 *     limbs bend to what remains; made smooth (box
 *     filters of half-width smooth_time, lowered where it would leave a corridor; the reach is
 *     taken 0.5 % short, so a straight stance leg bends a few degrees rather than jerk at full
 *     extension): the handstand of a cartwheel lowers the body onto its hands;
 *  2. limb ends (a foot under a knee, a hand under an elbow) in contact turn `flatten` of the way
 *     level (keeping their heading; a contact the clip starts in fully level at first, back to
 *     `flatten` over start_level_time), then move - by two-bone IK - vertically until their
 *     lowest point is on the floor; corrections fade in and out over ramp_time around each
 *     contact and are low-passed over settle_time, so a clip that starts in contact starts
 *     settled (its contacts on the floor, soles level, nothing to jolt);
 *  3. balance (optional): a root translation that makes the centre of mass accelerate as the
 *     contacts can push it (friction cone when something touches, free fall otherwise), the
 *     limbs in contact kept where they were, the height kept where bones other than limb ends
 *     touch (3 rounds).
 * A knee or elbow bent past full extension is straightened first (IK bends limbs to the side
 * they usually bend to only). info: contact intervals, those whose lowest point stays within
 * keep_tol of the floor, the largest distance from the floor (m), the root offsets. */
typedef struct sc_contact_fit_opts {
    double ramp_time;        /* s (0.15) */
    double smooth_time;      /* s (0.1) */
    double settle_time;      /* s: the limb corrections are low-passed over this (0.1) */
    double keep_tol;         /* m: a contact is kept when its gap stays below this (0.02) */
    int balance;             /* 1: make the centre of mass carriable by the contacts (step 3) */
    double mu, gravity;      /* friction coefficient, m/s^2 (SC_DEFAULT_FRICTION, SC_STANDARD_GRAVITY) */
    double balance_offset;   /* m of root translation worth a 1 m/s^2 misfit (0.03) */
    double flatten;          /* 0..1: how far a limb end in contact turns level (0.5) */
    double start_level_time; /* s: a contact the clip starts in is fully level at first, then
                                turns back to `flatten` over this time (0.3): a start on a heel
                                edge alone drops the simulated body onto it */
} sc_contact_fit_opts;
void sc_contact_fit_default_opts(sc_contact_fit_opts *o);

typedef struct sc_contact_fit_info {
    int intervals, kept;
    double max_gap; /* m */
    int max_gap_bone;
    double max_root_offset;    /* m, largest change of the root height (step 1) */
    double max_balance_offset; /* m, largest root translation of the balance step */
    double balance_misfit;     /* m/s^2, largest remaining distance from a feasible acceleration */
} sc_contact_fit_info;

int sc_retarget_fit_contacts(const sc_model *m, const sc_body *b, const sc_gc_geom *g, const unsigned char *flags, const sc_contact_fit_opts *o,
                             sc_motion *mo, sc_contact_fit_info *info, sc_err *err);

/* A motion edit ([BK] 8's motion-capture editing): limb ends (a foot under a knee, a hand under
 * an elbow) moved by offsets over the clip's time, each by two-bone IK keeping its world
 * orientation (a raised foot stays as it was turned). The offsets are sampled every dt from the
 * clip's first frame (linear in between, held past the last sample). */
#define SC_LIMB_EDIT_MAX 8
typedef struct sc_limb_edit {
    int nmoves;
    char bone[SC_LIMB_EDIT_MAX][SC_NAME_LEN];
    char where[SC_LIMB_EDIT_MAX][128]; /* config locations, for messages */
    double dt;                         /* s */
    int nsamples;
    double *offset; /* [nsamples][nmoves][3] m, world */
} sc_limb_edit;
/* Move k's offset at time t (s from the clip's first frame): linear between the samples, held
 * past the last. */
sc_vec3 sc_limb_edit_offset(const sc_limb_edit *ed, int k, double t);
/* Applies the edit with its bones resolved (bones[k] the character's bone of ed->bone[k]);
 * SC_EINPUT naming the config line for a bone that is no limb end. *miss: the largest distance
 * of a moved end from where the edit asked it (beyond the limb's reach it stretches out). */
int sc_retarget_edit_limbs(const sc_model *m, const sc_body *b, const sc_limb_edit *ed, const int *bones, sc_motion *mo, double *miss, sc_err *err);

/* "l_foot" <-> "r_foot", "left..." <-> "right...", "LeftFoot" <-> "RightFoot", "LHipJoint" <->
 * "RHipJoint"; a name without a side is its own mirror. */
void sc_retarget_mirror_name(const char *name, char *out, size_t size);

#endif

/* reference.h5 (schema softcon.reference/1): the one reader and writer of the inverse-dynamics
 * reference ([L13] 5.1, motion/reference.h in memory) on disk.
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
 *   /report (attributes)               see sc_reference_write_report and sc_reference_write_pipeline_report
 *   root attributes                    provenance (sc_h5_provenance), character (its path),
 *                                      character_hash, motion (the BVH), frame_range, first_frame,
 *                                      last_frame, frame_time, root_scale, floor_shift_m,
 *                                      floor_tilt_deg, max_rest_alignment_deg,
 *                                      max_hinge_tip_error_m, differences (forward | central) */
#ifndef SC_STORE_REFERENCE_H
#define SC_STORE_REFERENCE_H
#include "io/h5.h"
#include "sampling/controller.h"
#include "motion/inverse_dynamics.h"

#define SC_REFERENCE_SCHEMA "softcon.reference/1"

/* Where a reference came from: what inverse-dynamics records in the root attributes. */
typedef struct sc_reference_source {
    int argc;
    char *const *argv;
    const char *config_text; /* the resolved config (sc_cfg_resolved_text) */
    const char *character;   /* the character.h5 it was made from */
    const char *motion;      /* the BVH clip */
    int scheme;              /* SC_DIFF_FORWARD | SC_DIFF_CENTRAL */
} sc_reference_source;
/* The whole file at path, written atomically (sc_h5_create ... sc_h5_commit): provenance and the
 * root attributes, every dataset, /report with the pipeline's figures. */
int sc_reference_save(const char *path, const sc_reference_source *src, const sc_model *m, const sc_reference *r, const sc_id_report *rep,
                      const sc_id_pipeline_info *info, sc_err *err);

/* Writes /time, /bones and every dataset above (not the root attributes). */
int sc_reference_write(sc_h5 *f, const sc_reference *r, sc_err *err);
/* /report attributes: per-joint arrays peak_torque_Nm, rms_torque_Nm, torque_limit_exceeded,
 * contact_duty_factor and the string joint_names (comma-separated, character order), duty_<bone>
 * for every bone that touched the ground, clamp counts, total mass and its source ("skin weights",
 * "nearest bone" or "fixed nodes"), root residual, mean forces. */
int sc_reference_write_report(sc_h5 *f, const sc_reference *r, const sc_id_report *rep, sc_err *err);
/* /report attributes of the pipeline: contact tolerances, contact intervals, fit and balance. */
int sc_reference_write_pipeline_report(sc_h5 *f, const sc_id_pipeline_info *info, sc_err *err);
/* SC_EINPUT when r records a character other than m (sc_character_hash_check: references
 * without the record pass). */
int sc_reference_check_character(const sc_reference *r, const char *path, const sc_model *m, sc_err *err);

/* Reads a reference.h5 (every dataset above that is present; /time, /bones/names,
 * /reference/root_pos, /reference/local_quat and /targets/local_quat are required) through
 * sc_h5_read_file (guarded), and checks it: unique bone names, /time finite and increasing,
 * quaternions of norm 0.5..2, positions within 10 km, every series finite, speeds >= 0,
 * contact flags 0/1 (SC_EINPUT naming the dataset and element). r->time and r->target_quat are
 * what a replay of the PD targets needs (sc_reference_targets_at). */
int sc_reference_read(const char *path, sc_reference *r, sc_err *err);
/* The same from an in-memory image, and on an open file (unguarded). */
int sc_reference_read_image(const void *data, size_t size, const char *name, sc_reference *r, sc_err *err);
int sc_reference_read_h5(sc_h5 *f, sc_reference *r, sc_err *err);

/* Where a reference came from, from its root attributes (each empty or -1 when the file does
 * not record it): the clip (motion), the frames used (first_frame, last_frame) and the resolved
 * config inverse-dynamics ran with (config, malloc'd or NULL). */
typedef struct sc_reference_origin {
    char motion[512];
    long long first_frame, last_frame;
    char *config;
} sc_reference_origin;
int sc_reference_read_origin(const char *path, sc_reference_origin *o, sc_err *err);
void sc_reference_origin_free(sc_reference_origin *o);

/* A reference.h5 as simulate replays it (store/trajectory.h): /time, /bones/names and `dataset`
 * (NULL: /targets/local_quat, the PD targets; /reference/local_quat the raw poses), playing its
 * own time. */
int sc_reference_read_trajectory_h5(sc_h5 *f, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err);
/* The world pose of every bone over time (/time, /bones/names, /reference/bone_pos and
 * /reference/bone_quat), shapes checked: the skeleton render draws as a ghost. */
int sc_reference_read_poses(const char *path, sc_h5_poses *p, sc_err *err);

#endif

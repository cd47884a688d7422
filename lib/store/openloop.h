/* openloop.h5 (schema softcon.openloop/1), read and written only here: the open-loop controller sample-openloop found, what
 * it achieves, and how the search went. Every time series has its timeline as an HDF5 dimension
 * scale; w, x, y, z quaternions; SI units.
 *
 *   /time [T] s                      simulation time of every step from the start (t = 0)
 *   /bones/names [nb]                the character's bones
 *   /targets/local_quat [T,nb,4]     the PD targets applied at each step (what simulate
 *                                    --trajectory replays: at the exact step times it returns
 *                                    these samples bit for bit)
 *   /targets/reference_time [T] s    the reference time each step plays (time scaling)
 *   /start/root_pos, root_vel [3], local_quat [nb,4], local_ang_vel [nb,3]
 *                                    the start state (the reference's at sampling.start)
 *   /segments/ref_t0, ref_t1 [S] s   reference span of each segment
 *   /segments/start_step, steps [S]  simulated span (steps of dt)
 *   /segments/time_scale [S]         steps dt / (ref_t1 - ref_t0)
 *   /segments/offsets [S,D] rad      PD target offsets per control DoF, held over the segment
 *   /segments/dof_names [D]          "bone.x|y|z" (ball joints: joint-frame rotation vector) or
 *                                    "bone" (hinge angle)
 *   /segments/cost, path_cost [S]    segment cost and its sum along the path
 *   /segments/cost_terms [S,5]       pose, root, end_effector, balance, com (unweighted)
 *   /segments/samples, failures, attempts [S], failure_kinds [S,K]
 *   /segments/elite_best, elite_median [S], elite_time_scale [S]
 *   /achieved/time [F] s             frames every output.every steps
 *   /achieved/bone_position [F,nb,3] m, bone_orientation [F,nb,4], com [F,3] m
 *   /achieved/reference_time [F] s, joint_error [F] rad (RMS over joints against the reference)
 *   /achieved/reference_bone_position [F,nb,3] m, reference_bone_orientation [F,nb,4]
 *                                    the tracked reference's pose at the played time (render's ghost)
 *   /cycle (attributes, when a gait cycle was tracked): t0, t1, period, cycles, fragments, errors
 *   /segments/fragment [S]           with a cycle: the fragment of the cycle each segment plays
 *   / attributes: status ("completed", "partial: reached t = ... s" or, stopped by a signal,
 *                                    "interrupted: reached t = ... s"), seed, base, reference
 *                                    (the reference.h5 as named on the command line), reference_path
 *                                    (absolute), reference_hash (sc_reference_hash, hex), character_hash
 *                                    (sc_character_hash_write: simulate refuses the file for another
 *                                    character), fem_kernel
 *                                    (the FEM kernel the search ran, e.g. avx512-f32x16: a run's bits
 *                                    depend on it), ...
 *   /report attributes: rms_joint_error_rad, root_drift_m, root_height_error_m, final_cost, ...
 *   /run attributes: samples, samples_per_second, wall_seconds, ranks, mpi_library (these vary
 *                    from run to run; everything else is identical for identical inputs) */
#ifndef SC_STORE_OPENLOOP_H
#define SC_STORE_OPENLOOP_H
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "io/h5.h"
#include "model/model.h"
#include "sampling/controller.h"
#include "sampling/openloop.h"
#include "sampling/samcon.h"
#include "store/reference.h"

#define SC_OPENLOOP_SCHEMA "softcon.openloop/1"

/* ---- writing ---- */
/* Where an openloop.h5 came from: its root provenance attributes. */
typedef struct sc_openloop_provenance {
    int argc;
    char *const *argv;
    const char *config_text; /* the resolved config */
    const char *character;   /* the character.h5 as named on the command line */
    const char *reference;   /* the reference.h5 as named on the command line */
    const sc_reference *ref; /* its content (hashed) */
    const char *fem_kernel;  /* the FEM kernel the search ran */
    const char *mpi_library;
    uint64_t character_hash; /* sc_model_hash of the character as loaded (before the scenario's changes) */
} sc_openloop_provenance;
/* Writes the whole file at path (through a tmp file renamed on success). */
int sc_openloop_save(const char *path, const sc_openloop_provenance *p, const sc_samcon_run *run, const sc_samcon_result *r,
                     const sc_openloop_trace *t, sc_err *err);
/* Its parts, for a writer that adds its own provenance (the fuzz seeds): the root attributes
 * naming the reference (path as given, absolute path, content hash), and every dataset and
 * attribute above but the root provenance and the reference's name. */
int sc_openloop_write_reference(sc_h5 *f, const char *path, const sc_reference *r, sc_err *err);
int sc_openloop_write(sc_h5 *f, const sc_samcon_run *run, const sc_samcon_result *r, const sc_openloop_trace *t, sc_err *err);

/* ---- reading ---- */
/* SC_EINPUT (naming the HDF5 path) when the file is not an openloop.h5 of a cycle for this
 * character's control DoFs. */
int sc_openloop_cycle_read(const char *path, const sc_model *m, const sc_control_dofs *dofs, sc_openloop_cycle *o, sc_err *err);
/* The same on an in-memory image (`name` in messages): the fuzz harness's entry point. */
int sc_openloop_cycle_read_image(const void *data, size_t size, const char *name, const sc_model *m, const sc_control_dofs *dofs,
                                 sc_openloop_cycle *o, sc_err *err);

/* The reference poses the search tracked (/achieved/time, /achieved/reference_bone_position and
 * _orientation with /bones/names: render's ghost); *found = 0 when the file has none. */
int sc_openloop_read_reference_poses(const char *path, sc_h5_poses *p, int *found, sc_err *err);
/* The targets as simulate replays them (store/trajectory.h): /time, /bones/names, `dataset` (NULL:
 * /targets/local_quat) and the reference time each step plays (/targets/reference_time). */
int sc_openloop_read_trajectory_h5(sc_h5 *f, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err);
/* The state the controller starts from (/start, its bones in /bones/names' order matched by
 * name); *found = 0 when the file has no /start. */
int sc_openloop_read_start_h5(sc_h5 *f, const sc_model *m, double root_pos[3], sc_quat *local, double root_vel[3], double *local_ang_vel, int *found,
                              sc_err *err);

#endif

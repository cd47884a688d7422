/* sim.h5 (schema softcon.sim/1), the record of one simulation: the only writer (simulate's
 * frames, through sc_sim_record) and the only readers (render's animation, the fall judge).
 *
 * The format: `/time` (s, the dimension scale of every series);
 * `/bones/names`, `parents`, `position` [T, nb, 3] m (bone origins), `orientation` [T, nb, 4]
 * (w, x, y, z), `linear_velocity`, `angular_velocity`; `/nodes/position` [T, nn, 3] m (when the
 * config's output.nodes is on); `/energy/kinetic`, `elastic`, `potential`, `total` J;
 * `/momentum/linear` kg m/s, `angular` kg m^2/s (about the centre of mass), `com` m;
 * `/contact/force` N, `count`, `max_depth` m (attribute `max_depth_m`); `/fem/inverted`,
 * attribute `polar_fallbacks`; `/control/tracking_error` rad, `push_force` N, `reference_time` s
 * (when the controller follows a reference: the reference time it plays, so render's ghost
 * follows time scaling); `/timing/step` s and per-stage mean attributes (`mean_step_s`,
 * `mean_fem_s`, ...); `/mesh` the topology (tets, rest_pos, node_bone, surface_faces,
 * surface_tet, surface_bary) so the file stands alone; `/frames/NNNNNN/nodes` [nn, 3] m, frame
 * NNNNNN of `/nodes/position` as an HDF5 virtual dataset (nothing copied: about 1.4 KB per
 * frame), what `sim.xdmf` shows; root attributes `status` (`completed` or `failed: ...`),
 * `steps`, `dt`, `character`, `fem_kernel` (the FEM kernel that ran, e.g. `avx512-f64x8`, or
 * `avx512-f32x16` with `fem_precision: single`), `start_sink_m` (when the start pose sank),
 * `ode_warnings` (counted per simulation), `/fall` with a policy (sc_sim_writer_fall), and the provenance of io/h5.h (`config`: the resolved
 * config, which render reads for the ground and the pushes). `sim.xdmf` beside it plays the tet
 * mesh over time in ParaView. Virtual datasets need HDF5 1.10 or later to read. */
#ifndef SC_STORE_SIM_H
#define SC_STORE_SIM_H
#include "core/status.h"
#include "io/h5.h"
#include "learn/evaluate.h"
#include "learn/policy.h"
#include "model/model.h"
#include "muscle/run.h"
#include "sampling/controller.h"
#include "sampling/muscle_samcon.h"
#include "sampling/rollout.h"
#include "sim/sim.h"

#define SC_SIM_SCHEMA "softcon.sim/1"

/* ---- writing ---- */

typedef struct sc_sim_file_info {
    int argc;
    char **argv;             /* the command line, for the provenance */
    const char *config_text; /* the resolved config */
    const char *character;   /* the character.h5 it simulates */
    double dt;
    int store_nodes;       /* write /nodes/position (and the /frames views) */
    int follows_reference; /* write /control/reference_time */
    long max_frames;
} sc_sim_file_info;

typedef struct sc_sim_series sc_sim_series;

typedef struct sc_sim_writer {
    int nframes;
    double *frame_times; /* [nframes] s, for sim.xdmf */
    double max_depth;    /* deepest ground penetration over the frames, m */
    /* private */
    sc_h5 *f;
    const sc_model *m;
    int store_nodes;
    sc_sim_series *s;
    sc_quat *local;
    double *bp, last_wall, first_wall;
    long last_step;
} sc_sim_writer;

/* Creates sim.h5: the provenance, the root attributes, the empty series and the mesh of m. */
int sc_sim_writer_create(const char *path, const sc_sim_file_info *info, const sc_model *m, const sc_sim *sim, sc_sim_writer *w, sc_err *err);
/* Appends one frame: k is the step since the recording began (the wall time per step is taken
   since the previous frame); reference_time is stored when the file follows a reference. */
int sc_sim_writer_frame(sc_sim_writer *w, const sc_sim *sim, const sc_quat *targets, const double push_total[3], long k, double reference_time,
                        sc_err *err);
/* The closing attributes (status, steps, timing, warnings), the /frames views, the commit. */
int sc_sim_writer_commit(sc_sim_writer *w, const sc_sim *sim, const char *status, sc_err *err);
/* Drops an uncommitted file. */
void sc_sim_writer_abort(sc_sim_writer *w);
/* sim.xdmf for the committed file (h5_name: sim.h5 as seen from the XDMF's folder). */
int sc_sim_writer_xdmf(const sc_sim_writer *w, const char *xdmf_path, const char *h5_name, sc_err *err);
void sc_sim_writer_free(sc_sim_writer *w);

/* Simulates nsteps from sim's state under src and pert, one frame every `every` steps into w,
   with a progress line. Returns SC_ENUMERIC with step_err when the simulation failed (w keeps
   the frames so far); a frame that could not be written stops it: res->stopped, the error in
   *err. ctrl gives the reference time when w follows a reference. */
/* A policy's run: its fall judged at every state by the test learn-feedback's evaluation uses
 * (learn/policy.h), and pushes given at a phase of its cycle started when due. */
enum { SC_SIM_FALL_FAILED = 3 }; /* beside SC_FALL_LOW and SC_FALL_TILT: a numerical failure */
typedef struct sc_sim_watch {
    const sc_policy *policy; /* NULL: no fall judged */
    double max_tilt;         /* rad */
    long step0, cycle_steps; /* the controller's start step and cycle (0: no cycle) */
    /* found: the first state that fell (cause: SC_FALL_LOW, SC_FALL_TILT, SC_SIM_FALL_FAILED; 0:
       none), its step, and the root's height (m) and tilt (rad) there */
    int cause;
    long step;
    double root_height, tilt;
} sc_sim_watch;
/* pert: pushes in the heading frame or at a phase are started in place when due
   (sampling/scenario.h). watch may be NULL. */
int sc_sim_record(sc_sim *sim, sc_target_source src, sc_perturbations *pert, long nsteps, int every, const sc_controller *ctrl, sc_sim_watch *watch,
                  sc_sim_writer *w, sc_rollout_result *res, sc_err *step_err, sc_err *err);
/* /fall: what watch found (attributes fell, cause, step, time_s, root_height_m,
   fall_root_height_m, tilt_deg, max_tilt_deg); time_s is the step times dt, as learn-feedback's
   evaluation reports it, or the steps simulated when it did not fall. */
int sc_sim_writer_fall(sc_sim_writer *w, const sc_sim_watch *watch, const sc_sim *sim, sc_err *err);
/* "fell at 2.345 s: the root tilted 61.2 deg (the limit: 60 deg)" or "did not fall in 5.000 s". */
void sc_sim_fall_describe(const sc_sim_watch *watch, const sc_sim *sim, char *buf, size_t n);

/* A boneless body's record (muscle-sim, [T12]): no /bones; /nodes/position always; the
   character's /muscles (store/muscles.h) with the series /muscles/desired_length and
   /muscles/length [T, nsegs] m; /fem/volume_ratio, min_det, max_det (attributes over the run:
   max_volume_change, min_det, max_det); /control/objective, qps, sliding, broken, failed (of the
   last plan; attributes solver, period_s, plans, failed_plans, mean_qps); /timing attribute
   mean_plan_s. Frames as sc_sim_writer_frame's; the same commit and sim.xdmf. */
int sc_sim_writer_create_soft(const char *path, const sc_sim_file_info *info, const sc_muscle_run *r, const char *solver, sc_sim_writer *w,
                              sc_err *err);
int sc_sim_writer_soft_frame(sc_sim_writer *w, const sc_muscle_run *r, const sc_softbody_diag *d, long k, sc_err *err);
/* muscle-sample's search (/sampling): its settings, the chosen path's offsets and costs per
   segment, and the greedy controller's cost beside it. */
int sc_sim_writer_soft_sampling(sc_sim_writer *w, const sc_msamcon_config *c, const sc_msamcon_result *res, sc_err *err);
int sc_sim_writer_soft_commit(sc_sim_writer *w, const sc_muscle_run *r, const char *status, sc_err *err);

/* ---- reading ---- */

/* What render draws from a sim.h5, checked (shapes, indices, finiteness, ranges); every
   array malloc'd, taken over by the caller or freed by sc_sim_data_free. */
typedef struct sc_sim_data {
    int nframes, nbones; /* nbones 0: a boneless body's record (then has_nodes) */
    double *time;        /* [nframes] s, non-decreasing */
    char (*bone_name)[SC_NAME_LEN];
    int *parent;
    double *bone_pos, *bone_quat; /* [nframes*nbones*3], [nframes*nbones*4] (normalized) */
    int nnodes, ntets, nsv, nsf;
    int *tets, *node_bone, *faces, *surf_tet;
    double *rest_pos, *surf_bary;
    double *com, *contact_force, *push_force; /* [nframes*3], zeros when absent */
    double *ref_time;                         /* [nframes] or NULL */
    double *tracking_error;                   /* [nframes] rad (/control/tracking_error) or NULL */
    int has_nodes;                            /* /nodes/position, every frame readable */
    int muscle_npoints, muscle_nsegs;         /* a boneless body's muscles (0 when none) */
    int *muscle_point_tet, *muscle_seg;       /* [npoints], [2 nsegs] */
    double *muscle_point_bary;                /* [4 npoints] */
    double *muscle_rest_len, *muscle_ld;      /* [nsegs] l0, [nframes * nsegs] l_d (m) */
    char *config;                             /* the root `config` attribute, or NULL */
    char status[256];                         /* the root `status` attribute, "" if none */
} sc_sim_data;

/* An open sim.h5 whose node frames are read on demand. */
typedef struct sc_sim_file sc_sim_file;

/* Opens path: a sim.h5 (*is_sim = 1, d read and *file open) or a character.h5 (*is_sim = 0,
   nothing read: the file is closed), told apart by the root `schema` attribute or by content.
   Errors name the file and the HDF5 path: SC_EINPUT for missing/mis-shaped/out-of-range data,
   SC_EIO for unreadable files or data. */
int sc_sim_open(const char *path, int *is_sim, sc_sim_file **file, sc_sim_data *d, sc_err *err);
/* n node frames from frame k on, unchecked (rows: n*nnodes*3). */
int sc_sim_read_node_rows(sc_sim_file *file, int nnodes, int k, int n, double *rows, sc_err *err);
/* Node frame k, its values checked. */
int sc_sim_read_node_frame(sc_sim_file *file, int nnodes, int k, double *x, sc_err *err);
void sc_sim_close(sc_sim_file *file);
void sc_sim_data_free(sc_sim_data *d);

/* The bones of a sim.h5 as read plainly (what judging a fall needs). */
typedef struct sc_sim_bones {
    size_t nframes, nbones;
    double *time, *pos, *quat; /* [nframes], [nframes*nbones*3], [nframes*nbones*4] */
    int *parents;
    char **names;
} sc_sim_bones;
int sc_sim_read_bones(const char *path, sc_sim_bones *b, sc_err *err);
void sc_sim_bones_free(sc_sim_bones *b);

/* Judges the simulation in sim_path against the reference.h5 it tracked (learn/evaluate.h):
   the torso's tilt from the vertical, or with relative = 1 from the reference torso. */
int sc_sim_judge_fall(const char *sim_path, const char *ref_path, double max_tilt_deg, int relative, sc_fall_report *r, sc_err *err);

#endif

/* PD target sources for simulate: hold the rest pose, YAML keyframes, or a target trajectory
 * from HDF5 (/time and /targets/local_quat, as inverse-dynamics and sample-openloop write
 * them), interpolated by slerp between samples. Targets are local joint rotations relative
 * to the parent bone (identity = rest pose). */
#ifndef SC_CONTROLLER_H
#define SC_CONTROLLER_H
#include "core/mathx.h"
#include "core/status.h"
#include "model/model.h"
#include "model/targets.h"

/* SC_CTRL_POLICY: a feedback policy file (learn-feedback's policy.h5), which the caller loads
 * (store/policy.h): only `source` and `cycles` are filled here. */
typedef enum { SC_CTRL_HOLD = 0, SC_CTRL_KEYFRAMES = 1, SC_CTRL_TRAJECTORY = 2, SC_CTRL_POLICY = 3 } sc_ctrl_kind;

typedef struct sc_controller {
    int kind;
    int nbones, nkeys;
    double *times;     /* [nkeys], increasing */
    sc_quat *keys;     /* [nkeys * nbones] */
    double *ref_time;  /* [nkeys] reference time each key plays (trajectories; NULL otherwise) */
    int loop;          /* repeat the keys after the last one */
    double offset;     /* time shift: targets at t are the keys at t + offset */
    char source[1024];
    char dataset[128];
    long cycles;       /* policy: gait cycles to run (0: the simulation's duration) */
    int feedback;      /* policy: 1 closed loop, 0 its open loop */
} sc_controller;

struct sc_cfg_node;
int sc_controller_from_config(struct sc_cfg_node *ctrl, const sc_model *m, const char *config_path,
                              sc_controller *c, sc_err *err);
/* Reads a target trajectory file: /time, /bones/names (matched to the character by name) and
 * `dataset` (NULL: /targets/local_quat, the PD targets; /reference/local_quat gives the raw
 * reference poses as targets). */
int sc_controller_load_trajectory(const char *path, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err);
/* The same from an in-memory image and on an open file (unguarded). Every read goes through
 * sc_h5_read_file / the checks of io/h5.h: /time finite and increasing, unique bone names,
 * rotations of norm ~1. */
struct sc_h5;
int sc_controller_load_trajectory_image(const void *data, size_t size, const char *name, const char *dataset,
                                        const sc_model *m, sc_controller *c, sc_err *err);
int sc_controller_load_trajectory_h5(struct sc_h5 *f, const char *dataset, const sc_model *m, sc_controller *c, sc_err *err);
/* The state a target trajectory file starts from: its /start group when it has one (an
 * openloop.h5: the sampler's exact start), else the reference state at time t of a
 * reference.h5 (sc_reference_read). */
int sc_trajectory_start(const char *path, const sc_model *m, double t, double root_pos[3], sc_quat *local, double root_vel[3],
                        double *local_ang_vel, sc_err *err);
void sc_controller_targets(const sc_controller *c, double t, sc_quat *out);
double sc_controller_duration(const sc_controller *c);
/* The reference time a trajectory plays at time t (its /targets/reference_time, which
 * sample-openloop writes under time scaling; a reference.h5 plays its own time); NAN when the
 * controller does not follow a reference. */
double sc_controller_reference_time(const sc_controller *c, double t);
void sc_controller_free(sc_controller *c);

#endif

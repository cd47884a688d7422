/* PD target sources for simulate: hold the rest pose, YAML keyframes (read by
 * settings/controller.h), or a target trajectory from HDF5 (/time and /targets/local_quat, as
 * inverse-dynamics and sample-openloop write them; read by store/openloop.h), interpolated by
 * slerp between samples. Targets are local joint rotations relative to the parent bone
 * (identity = rest pose). */
#ifndef SC_CONTROLLER_H
#define SC_CONTROLLER_H
#include "core/mathx.h"
#include "core/status.h"
#include "model/model.h"
#include "model/targets.h"

/* SC_CTRL_POLICY: a feedback policy file (learn-feedback's policy.h5), which the caller loads
 * (store/policy.h): only `source` and `cycles` are filled here. SC_CTRL_SIMBICON: the caller
 * reads controller.simbicon (settings/simbicon.h) and runs simbicon/simbicon.h. SC_CTRL_NETWORK:
 * the caller reads controller.network (settings/network.h) and runs network/controller.h. */
typedef enum {
    SC_CTRL_HOLD = 0,
    SC_CTRL_KEYFRAMES = 1,
    SC_CTRL_TRAJECTORY = 2,
    SC_CTRL_POLICY = 3,
    SC_CTRL_SIMBICON = 4,
    SC_CTRL_NETWORK = 5
} sc_ctrl_kind;

typedef struct sc_controller {
    int kind;
    int nbones, nkeys;
    double *times;    /* [nkeys], increasing */
    sc_quat *keys;    /* [nkeys * nbones] */
    double *ref_time; /* [nkeys] reference time each key plays (trajectories; NULL otherwise) */
    int loop;         /* repeat the keys after the last one */
    double offset;    /* time shift: targets at t are the keys at t + offset */
    char source[1024];
    char dataset[128];
    long cycles;  /* policy: gait cycles to run (0: the simulation's duration) */
    int feedback; /* policy: 1 closed loop, 0 its open loop */
} sc_controller;

void sc_controller_targets(const sc_controller *c, double t, sc_quat *out);
double sc_controller_duration(const sc_controller *c);
/* The reference time a trajectory plays at time t (its /targets/reference_time, which
 * sample-openloop writes under time scaling; a reference.h5 plays its own time); NAN when the
 * controller does not follow a reference. */
double sc_controller_reference_time(const sc_controller *c, double t);
/* A target trajectory from bone rotations in memory: n keys at increasing times[n], nnames bones
 * (names[j], matched to the character by name) of quats [n, nnames, 4] (w, x, y, z; norm ~1:
 * samples of unit norm are kept as stored, so a recorded trajectory replays bit for bit). The
 * keys play their own time unless ref_time [n] is given. source and dataset name the file (in
 * messages too). */
int sc_controller_from_rotations(const sc_model *m, const char *source, const char *dataset, int n, const double *times, char *const *names,
                                 int nnames, const double *quats, const double *ref_time, sc_controller *c, sc_err *err);
void sc_controller_free(sc_controller *c);

#endif

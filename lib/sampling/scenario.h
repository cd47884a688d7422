/* The simulation scenario of a config file: the sections `simulation`, `contact`, `ground`,
 * the gain scales of `controller`, `perturbations` and `output` (configs/stand.yaml documents
 * every key), read once (settings/scenario.h) into plain structs that simulate, sample-openloop
 * and learn-feedback share. The controller's target source (`controller.type` ...) is read
 * separately (settings/controller.h), because the sampler brings its own. */
#ifndef SC_SCENARIO_H
#define SC_SCENARIO_H
#include "sim/sim.h"

#define SC_MAX_PERTURBATIONS 64

typedef enum { SC_PERTURB_PUSH = 0, SC_PERTURB_VELOCITY = 1 } sc_perturb_kind;
typedef enum { SC_FRAME_WORLD = 0, SC_FRAME_HEADING = 1 } sc_push_frame;

typedef struct sc_perturbation {
    int kind;        /* sc_perturb_kind */
    int bone;        /* push: the bone pushed at its centre of mass */
    double time;     /* s of simulated time */
    double duration; /* push: s */
    double v[3];     /* push: force (N); velocity: the change of velocity (m/s) */
    /* push: SC_FRAME_HEADING gives v in the root's heading frame when it starts (x left, y up,
       z forward); at_phase starts it at `phase` of cycle `cycle` (0: the first) of a cyclic
       controller instead of at `time`. Either makes it pending until sc_push_start. */
    int frame, at_phase;
    long cycle;
    double phase;
} sc_perturbation;

typedef struct sc_perturbations {
    int n;
    sc_perturbation p[SC_MAX_PERTURBATIONS];
} sc_perturbations;

typedef enum { SC_START_REST = 0, SC_START_REFERENCE = 1 } sc_start_kind;

typedef struct sc_scenario {
    sc_sim_opts sim;
    double duration;    /* s; 0: the length of a tracked trajectory */
    double drop_height; /* m */
    double init_vel[3]; /* m/s, with a rest start */
    int initial_pose;   /* sc_start_kind */
    /* model overrides (sc_scenario_model) */
    double youngs, poisson, kp_scale, kd_scale, limit_scale;
    int every, store_nodes; /* output */
    sc_perturbations pert;
} sc_scenario;

/* A copy of m with the scenario's overrides (Young's modulus, Poisson ratio, gain scales)
 * applied: the loaded model is never edited. */
int sc_scenario_model(const sc_model *m, const sc_scenario *sc, sc_model *out, sc_err *err);
/* Applies the perturbations due at the simulation's current time: pushes in force are written
 * to s->push (the others zeroed) and summed into push_total (may be NULL); a velocity kick is
 * applied at the first step whose start time reaches its time. A function of s->t alone, so
 * a restored snapshot continues exactly. */
void sc_perturbations_apply(const sc_perturbations *p, sc_sim *s, double push_total[3]);

/* A push in the heading frame or at a phase waits for its start state (applying skips it). */
int sc_push_pending(const sc_perturbation *p);
/* The step, since the controller's start, at `phase` (in [0, 1)) of cycle `cycle` of a cycle
 * of cycle_steps steps: rounded down, so phase k / n lands on cycle_steps * k / n exactly. */
long sc_cycle_phase_step(long cycle_steps, long cycle, double phase);
/* Starts a pending push at s, as learn-feedback's evaluation does: the force turned from the
 * heading frame into the world's, the time s->t, the duration whole steps. */
void sc_push_start(sc_perturbation *p, const sc_sim *s);
/* Starts the pending pushes due at s (a phase counted from step0 in cycles of cycle_steps;
 * 0: none, the phase pushes then never start). A function of the states visited. */
void sc_perturbations_start_due(sc_perturbations *p, const sc_sim *s, long step0, long cycle_steps);

#endif

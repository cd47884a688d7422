/* Robust and parameterized controllers by sampling ([BK] 7): a motion network's exposed control
 * points (knobs: a constant's value or a spline point's value) are sampled, each sample run as
 * a trial of the character under the network, scored by a success test (no fall: the root
 * stays above half its start height and within max_tilt of upright; no bad contact: only the
 * feet touch; optionally at rest at the end) and described by the objectives it reached.
 *
 * Round 0 samples the knobs uniformly within their bounds in batches; a batch without a success
 * widens the bounds by `grow` about their centres ([BK] 7: "the sampling bounds are enlarged and
 * the process re-starts"), until `min_success` successes or `max_batches` batches. Each later
 * round draws `targets` new objectives in the objectives' ranges; for each, the knobs come from
 * radial basis interpolation (network/rbf.h) of the k successes nearest to it in objective space
 * (each objective scaled by its range; the knobs kept within those successes' own box), and that
 * interpolated controller is tried, then `local`
 * samples about it (Gaussian, sigma times each knob's range). A trial hits a target when every
 * objective lies within its tolerance of it; every success in range becomes an example for the
 * rounds after. The trials of a batch or round run through sc_par_map, each a function of its
 * index and the seed alone: the same results for any number of ranks and threads. */
#ifndef SC_NETWORK_EXPLORE_H
#define SC_NETWORK_EXPLORE_H
#include <stdint.h>
#include "network/controller.h"
#include "par/par.h"
#include "sampling/scenario.h"

#define SC_EXPLORE_MAX_KNOBS 16
#define SC_EXPLORE_MAX_OBJ   3

/* What a trial measures (units): distance (m, forward along the start heading, the root's),
 * speed (m/s, the root's speed along its own heading over [measure_from, duration], so that a
 * turning walk's counts), turn_rate (deg/s, the
 * root's heading change over that window, left positive), jump_distance (m, the feet's midpoint
 * forward from the start to where the feet first touch down after a flight of at least 0.05 s:
 * what the jump covered, not a shuffle after the landing; 0 without a flight), jump_height (m,
 * the centre of mass's highest rise over its start). */
enum { SC_MEASURE_DISTANCE, SC_MEASURE_SPEED, SC_MEASURE_TURN_RATE, SC_MEASURE_JUMP_DISTANCE, SC_MEASURE_JUMP_HEIGHT, SC_MEASURES };
extern const char *const sc_measure_names[SC_MEASURES];
extern const char *const sc_measure_units[SC_MEASURES];

typedef struct sc_knob {
    int node, point; /* point -1: a constant's value */
    double lo, hi;   /* the initial bounds */
} sc_knob;

typedef struct sc_objective_spec {
    int measure;
    double lo, hi, tolerance;
} sc_objective_spec;

typedef struct sc_explore_config {
    int nknobs, nobj;
    sc_knob knob[SC_EXPLORE_MAX_KNOBS];
    sc_objective_spec obj[SC_EXPLORE_MAX_OBJ];
    double duration, measure_from; /* s */
    double max_tilt;               /* rad */
    int bad_contacts;              /* 1: a contact of any bone but the feet fails the trial */
    double settle_speed;           /* m/s: the centre of mass must end slower than this (0: no test) */
    int batch, max_batches, min_success;
    double grow;
    int rounds, targets, k, local;
    double sigma;
    uint64_t seed;
} sc_explore_config;

enum { SC_TRIAL_INITIAL = 0, SC_TRIAL_INTERPOLATED = 1, SC_TRIAL_LOCAL = 2 };
enum { SC_TRIAL_OK = 0, SC_TRIAL_FELL = 1, SC_TRIAL_BAD_CONTACT = 2, SC_TRIAL_MOVING = 3, SC_TRIAL_FAILED = 4 };

typedef struct sc_trial {
    double x[SC_EXPLORE_MAX_KNOBS];
    double d[SC_EXPLORE_MAX_OBJ];      /* what it reached (NAN after a failure) */
    double target[SC_EXPLORE_MAX_OBJ]; /* its round's target (NAN in round 0) */
    int round, kind, target_index;
    int outcome; /* SC_TRIAL_OK ... */
    int success; /* OK and every objective in range */
    int hit;     /* success within tolerance of the target */
    double fail_time;
} sc_trial;

typedef struct sc_explore_round {
    int trials, successes;
    int interp_hits, targets_hit;            /* targets hit by the interpolated controller / by it or a local sample */
    double interp_error[SC_EXPLORE_MAX_OBJ]; /* mean |reached - target| of the interpolated controllers that did not fail */
    double best_error[SC_EXPLORE_MAX_OBJ];   /* mean over targets of the smallest |reached - target| of a success */
} sc_explore_round;

typedef struct sc_explore_result {
    int ntrials, cap;
    sc_trial *trial;
    int grows;
    double lo[SC_EXPLORE_MAX_KNOBS], hi[SC_EXPLORE_MAX_KNOBS]; /* the bounds at the end of round 0 */
    int nrounds;
    sc_explore_round round[64];
    double wall_seconds;
    int ranks, threads;
} sc_explore_result;

/* Where the search is saved after every completed round (rank 0 writes it; schema
 * softcon.explore_checkpoint/1, io/checkpoint.h), and whether to continue from it. A search
 * continued from a checkpoint ends with the result an uninterrupted one gets. */
typedef struct sc_explore_checkpoint {
    const char *path; /* NULL: none */
    int resume;
    uint64_t run_hash; /* sampling/run_hash.h: the config, the network's config, the character, the seed */
} sc_explore_checkpoint;

/* Runs the search (collective: every rank calls it and gets the whole result). m: the character
 * as simulated; sc: its scenario (simulation options, start height and velocity); base: the
 * network's params; ck may be NULL. SC_EINPUT for knobs or objectives the network cannot take,
 * or a damaged checkpoint (named); SC_EINTERRUPTED when stop() asked (the checkpoint holds the
 * rounds done). */
int sc_explore_run(sc_par *par, const sc_model *m, const sc_scenario *sc, const sc_net_params *base, const sc_explore_config *cfg,
                   const sc_explore_checkpoint *ck, int (*stop)(void), sc_explore_result *res, sc_err *err);
void sc_explore_result_free(sc_explore_result *res);
/* The checkpoint reader on a sealed dataset's bytes, for the fuzz harness: SC_OK or SC_EINPUT
 * (SC_EIO: out of memory), never a crash. */
int sc_explore_checkpoint_check(const unsigned char *blob, size_t n, uint64_t run_hash, const sc_explore_config *cfg, sc_err *err);
/* A sealed checkpoint of `rounds` rounds of three trials each for cfg (malloc'd: its seeds). */
int sc_explore_checkpoint_example(uint64_t run_hash, const sc_explore_config *cfg, int rounds, unsigned char **blob, size_t *n, sc_err *err);

#endif

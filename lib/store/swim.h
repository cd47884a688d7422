/* swim.h5 (schema "softcon.swim/1"), reduced-opt's output ([P17] 5-6: a swimming controller and
 * its run; lib/reduced/swim.h). Self-describing (docs/formats.md#swimh5):
 *   /                       provenance (softcon_version, schema, created_by, created_at, host,
 *                           config), seed, character (path), model ("reduced" | "full": what the
 *                           trajectory ran in), controller_source ("optimised" | the input's path)
 *   /controller             attributes kind ("periodic"), modes (K), basis (N), period (s), phase0
 *                           (rad), width (1), formula; datasets weights [K, N] (N/sqrt(kg)),
 *                           mode_frequencies [K] (Hz), weight_scale [K] (N/sqrt(kg): s_k)
 *   /objective              attributes target_speed (m/s), direction [3], duration, warmup (s),
 *                           weights (speed, effort, balance), balance_axis [3]; total, speed, effort,
 *                           balance (1), achieved_speed, drift (m/s), control_rms (N/sqrt(kg)) of the
 *                           recorded run
 *   /optimisation           (when optimised) objective, achieved_speed, seconds [iterations + 1];
 *                           attributes iterations, evaluations, forward_runs, variables, threads,
 *                           stop, seconds, initial_objective, final_objective
 *   /trajectory             time [F] (s), com [F, 3] (m), velocity [F, 3] (m/s), orientation [F, 4]
 *                           (w x y z), modes [F, K] (m sqrt(kg)), control [F, K] (N/sqrt(kg));
 *                           attribute dt (s) of the model that ran, every (steps per frame)
 * The reader takes the controller back (a controller input of reduced-opt), checking the schema,
 * the shapes against the character's modes and the values, naming the HDF5 path. */
#ifndef SC_STORE_SWIM_H
#define SC_STORE_SWIM_H
#include "reduced/dmp.h"
#include "reduced/swim.h"

#define SC_SWIM_SCHEMA "softcon.swim/1"

typedef struct sc_swim_file_info {
    int argc;
    char **argv;
    const char *config_text, *character, *controller_source;
    unsigned long seed;
    const char *model; /* "reduced" | "full" */
    double dt;         /* s: the trajectory's step */
    int every;
    int threads;
} sc_swim_file_info;

/* Writes path atomically (a temporary renamed into place; nothing at path on failure). history and
   lr may be NULL (a replayed controller). */
int sc_swim_write(const char *path, const sc_swim_file_info *info, const sc_swim_problem *p, const sc_dmp *d, const sc_swim_terms *terms,
                  const sc_swim_trace *trace, const sc_swim_history *history, const sc_lbfgs_result *lr, sc_err *err);
/* The controller of path into d (allocated), for a character of nmodes modes. */
int sc_swim_read_controller(const char *path, int nmodes, sc_dmp *d, sc_err *err);

#endif

/* reduced-opt's config ([P17] 5-6's swimming: a reduced body driven by a periodic DMP, its
 * weights optimised by L-BFGS; lib/reduced/swim.h). The character (mesh-prep with `reduced:
 * {modes: K}`) gives the body and its K modes; every key below is optional except `fluid`.
 *
 *   reduced_body:                 # the reduced body's simulation (lib/reduced/body.h)
 *     dt: 0.005                   # s
 *     scheme: midpoint            # the modes' implicit scheme: midpoint | backward_euler
 *     rayleigh: {alpha: 0, beta: 2.0e-4}
 *     gravity: [0, 0, 0]          # m/s^2 ([P17] swims without gravity)
 *   fluid: {density: 1000, drag: 1, flow: [0, 0, 0]}   # as simulate's; density > 0 to swim
 *   swim:                         # the objective ([P17] eq. 11, 12 and the effort term)
 *     direction: [1, 0, 0]        # d
 *     target_speed: 0.1           # m/s: v*
 *     duration: 4.0               # s simulated per evaluation
 *     warmup: 1.0                 # s from rest not scored
 *     weights: {speed: 1, effort: 0.001, balance: 0}
 *     balance_axis: [0, 1, 0]     # a body axis kept fixed in the world (balance weight > 0)
 *   dmp:                          # the controller ([P17] eq. 7); absent with a controller input
 *     basis: 6                    # N von Mises basis functions per mode
 *     period: 0                   # s: T0; 0: one over the lowest mode's frequency
 *     free_period: true           # optimise T with the weights
 *   optimise:                     # L-BFGS ([P17] Table 1's baseline); absent with a controller input
 *     iterations: 40
 *     memory: 8
 *     initial_amplitude: 0.05     # the random start's weights, in units of each mode's scale
 *   replay:                       # the recorded run of the controller
 *     model: reduced              # reduced | full (the full FEM with the same fluid, f = M R Phi u)
 *     dt: 0.0005                  # s: the full FEM's step
 *     every: 10                   # steps between recorded frames
 *
 * Errors name the config line. */
#ifndef SC_SETTINGS_SWIM_H
#define SC_SETTINGS_SWIM_H
#include "io/config.h"
#include "optim/lbfgs.h"
#include "reduced/body.h"
#include "reduced/swim.h"

typedef enum { SC_REPLAY_REDUCED = 0, SC_REPLAY_FULL = 1 } sc_replay_model;

typedef struct sc_swim_config {
    sc_reduced_opts body;
    sc_swim_objective objective;
    int basis;
    double period; /* s; 0: from the lowest mode */
    int free_period;
    int optimise; /* 1: the `optimise` section applies (no controller input) */
    sc_lbfgs_opts lbfgs;
    double initial_amplitude;
    int replay_model; /* sc_replay_model */
    double full_dt;
    int every;
} sc_swim_config;

/* Reads the sections above. with_controller: a controller is an input, so `optimise` and `dmp`
 * are refused (naming their lines) and nothing is optimised. */
int sc_swim_config_read(sc_cfg *cfg, int with_controller, sc_swim_config *c, sc_err *err);

#endif

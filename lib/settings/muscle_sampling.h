/* muscle-sample's config: the SAMCON search over a muscle run's targets (sampling/muscle_samcon.h).
 * The rest of the config is muscle-sim's (settings/muscle_run.h).
 *
 *   muscle_sampling:
 *     segment: 0.1        # s per segment (a whole number of control periods)
 *     duration: 2.5       # s searched (default: simulation.duration)
 *     samples: 100        # per segment
 *     elites: 10
 *     max_volume_change: 0.15   # a sample whose |V / V0 - 1| exceeds this fails
 *     controls:           # the sampled target components: an offset uniform in [-half_width,
 *                         # half_width] per segment, added to muscle_control.objectives[objective]
 *                         # (0-based) target's axis (a regularise's: its contraction, axis x)
 *       - {objective: 0, axis: z, half_width: 300}
 *     cost:               # per segment: the mean over its periods of sum weight e^2
 *       - {type: turn, axis: [0, 0, -1], target: 360, from: 0.3, to: 2.3, weight: 1}
 *         # turn: the body's rotation about axis since the start (deg) against a ramp from
 *         # `start` (default 0) at `from` to `target` at `to`
 *       - {type: com, target: [0, 0.5, 0], axes: [0, 1, 0], from: 0, to: 1e9, weight: 1}
 *         # com, com_velocity: per-axis weighted squared distance to target (m, m/s)
 *
 * The seed is the tool's --seed. Errors name the config line. */
#ifndef SC_SETTINGS_MUSCLE_SAMPLING_H
#define SC_SETTINGS_MUSCLE_SAMPLING_H
#include "io/config.h"
#include "sampling/muscle_samcon.h"
#include "settings/muscle_run.h"

/* Reads the section for the run rc (its duration and objectives). */
int sc_msamcon_read(sc_cfg *cfg, const sc_muscle_run_config *rc, sc_msamcon_config *c, sc_err *err);

#endif

/* muscle-sim's config ([T12] 6's behaviours): how a boneless character is simulated and
 * controlled. Every key is optional except the objectives of a controlled run.
 *
 *   simulation:
 *     duration: 5.0            # s
 *     dt: 0.0005               # s, the soft body's explicit step
 *     rayleigh: {alpha: 0, beta: 2.0e-4}   # C = alpha M + beta K ([T12] eq. 7)
 *     gravity: [0, -9.81, 0]   # m/s^2
 *   contact:
 *     friction: 0.8            # Coulomb mu of the ground (the plan's too)
 *     backward_friction: 1     # mu times this against sliding backward ([T12] 7's crawl: 10)
 *     forward: [1, 0, 0]       # the body's forward, in the ground plane
 *   ground: ...                # as simulate's (slope, height, bumps, tiles)
 *   fluid: ...                 # as simulate's: drag on the tet mesh's boundary faces (absent: none)
 *   muscle_control:
 *     solver: qpcc             # qpcc ([T12] 6) | qp (static contact, eq. 19-22) | none (passive)
 *     period: 0.01             # s between plans (a whole number of steps)
 *     patches: 4               # contact patches planned, at most
 *     contact_margin: 0.01     # m: boundary nodes this close to the ground after a period are in contact
 *     max_states: 64           # QPCC: contact states (QPs) explored per plan
 *     ridge: 1.0e-4            # relative Hessian ridge
 *     locked: {group: NAME, region: {min: [x, y, z], max: [x, y, z]}}   # the group's (default
 *                              # all) segments whose rest midpoints lie in the region are held at
 *                              # rest length: they cannot contract ([T12] 7's inchworm)
 *     objectives:              # [T12] 5.2, summed; each active for from <= t < to and `when`
 *       - {type: angular_momentum, weight: 1, kd: 30, target: [0, 0, 0]}
 *     # type: momentum (kp, kd, target: the COM target; support: true, its x and z are offsets
 *     #   from the centre of support), angular_momentum (target: the rate dH/dt in N m, kd), com,
 *     #   com_velocity, point, point_velocity (region: the node set), regularise (contraction:
 *     #   c, towards (1 - c) l0, default 0; relative: towards the last plan; region and group:
 *     #   only the segments whose rest midpoints lie there), kinetic; common keys: weight, from, to, when (always |
 *     #   contact | airborne), axes [x, y, z] weights, target, amplitude + period (a sine
 *     #   added to the target), region {min: [x, y, z], max: [x, y, z]} (rest coordinates, m),
 *     #   ramp (none | linear | smooth: the target grows from 0 at `from` to itself at `to`);
 *     #   anchored: true (point, com, momentum: the target is an offset from where the region's
 *     #   centre, or the COM, was at the window's first plan: a stance foot held, a step taken)
 *   forces:                    # external forces, shared by the nodes of a region (ramp: true grows
 *                              # the force linearly from 0 at `from` to `force` at `to`)
 *     - {from: 1.0, to: 1.1, force: [300, 0, 0], region: {min: [-1, 0.93, -1], max: [1, 2, 1]}}
 *   output: {every: 20}        # steps between recorded frames
 *
 * Errors name the config line; a region with no node is an error. */
#ifndef SC_SETTINGS_MUSCLE_RUN_H
#define SC_SETTINGS_MUSCLE_RUN_H
#include "io/config.h"
#include "muscle/run.h"

typedef struct sc_muscle_run_config {
    sc_muscle_run_opts run;
    double duration;       /* s */
    int every;             /* steps per frame */
    unsigned char *locked; /* [nsegs] (run.control.locked) or NULL */
} sc_muscle_run_config;

/* Reads the sections above for model m and its muscles mu (may be NULL; regions resolve to the
   nodes, `locked`'s and a regularise's to the segments); arrays malloc'd. */
int sc_muscle_run_read(sc_cfg *cfg, const sc_model *m, const sc_muscles *mu, sc_muscle_run_config *rc, sc_err *err);
void sc_muscle_run_config_free(sc_muscle_run_config *rc);

#endif

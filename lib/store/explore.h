/* explore.h5 (schema softcon.explore/1): network-sample's output, the one writer of it
 * ([BK] 7's parameterized controller: every trial with its knobs and what it reached).
 *
 *   / attributes            provenance (softcon_version, schema, created_by, created_at, host,
 *                           config), character and its hash, network (the config the trials
 *                           ran), seed, ranks, threads, wall_seconds, status
 *   /knobs/names [K]        "node" or "node[point]": the control points varied
 *   /knobs/initial_bounds, bounds [K,2]
 *                           the bounds given, and those after round 0's widening
 *   /objectives/measures, units [O]; ranges [O,2]; tolerances [O]
 *   /trials/x [N,K]         each trial's knob values
 *   /trials/reached [N,O]   what it reached (NaN when it failed)
 *   /trials/target [N,O]    its round's target (NaN in round 0)
 *   /trials/round, kind, target_index, outcome, success, hit [N]
 *                           kind 0 initial, 1 interpolated, 2 local; outcome 0 ok, 1 fell,
 *                           2 bad contact, 3 still moving at the end, 4 numerical failure
 *   /trials/fail_time [N] s the time of the fall or contact
 *   /rounds/trials, successes, interpolated_hits, targets_hit [R]
 *   /rounds/interpolated_error, best_error [R,O]
 *                           mean |reached - target| of the interpolated controllers that
 *                           stood, and per target the smallest of a success (round 0: NaN)
 *   /controllers/x [S,K], reached [S,O]
 *                           the parameterization: every success, the examples a new objective
 *                           is interpolated from */
#ifndef SC_STORE_EXPLORE_H
#define SC_STORE_EXPLORE_H
#include <stdint.h>
#include "network/explore.h"

#define SC_EXPLORE_SCHEMA "softcon.explore/1"

typedef struct sc_explore_provenance {
    int argc;
    char *const *argv;
    const char *config_text, *character, *network;
    uint64_t character_hash;
    const sc_network *net;
} sc_explore_provenance;

int sc_explore_save(const char *path, const sc_explore_provenance *p, const sc_explore_config *cfg, const sc_explore_result *res, const char *status,
                    sc_err *err);

#endif

/* mesh-prep's `muscles:` section ([T12] 4.2): the fibres of a boneless character, from the
 * built-in letter's layout (`letter:`, [T12] Figure 10) and/or given as polylines (`fibres:`).
 *
 *   muscles:
 *     stiffness: 2.0e5        # Pa: a segment's tension per unit strain (l - l_d) / l0
 *     sigma: 0.05             # m: the Gaussian influence width of eq. 5
 *     min_ratio: 0.5          # l_d >= min_ratio l0 ([T12] 5.1), in (0, 1)
 *     letter:                 # the letter's fibres (body.letter only)
 *       strokes: [0, 1]       # which strokes (default all)
 *       longitudinal_segments: 12
 *       radial: {count: 1, segments: 6}
 *       helical: {fibres: 4, segments: 8, turns: 0.5}
 *       ring_segments: 20     # per loop of the O
 *     fibres:                 # polylines in the config's frame (m); closed: repeat the first point
 *       - {group: belly, kind: radial, points: [[0, 0.2, 0.1], [0.1, 0.2, 0], ...]}
 *
 * A fibre's errors (a point outside the body, a repeated point) name its config entry. */
#ifndef SC_SETTINGS_MUSCLE_H
#define SC_SETTINGS_MUSCLE_H
#include "io/config.h"
#include "mesh/letters.h"
#include "muscle/fibre.h"

/* *present = 0 and nothing read when the config has no `muscles:` section. letter: the body's
 * built-in letter, or NULL (then a `letter:` subsection is SC_EINPUT). */
int sc_muscle_settings_read(sc_cfg *cfg, const sc_letter *letter, sc_muscle_defs *defs, int *present, sc_err *err);

#endif

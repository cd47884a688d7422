/* The built-in letters' muscle fibres, laid out as [T12] Figure 10 shows: four longitudinal
 * fibres along each box stroke near its four edges, radial loops around a stroke's
 * cross-section, helical fibres winding round it (both handednesses), and two concentric
 * loops along the O. Groups by kind (longitudinal, radial, helical), as [T12] 4.2 bundles
 * them. */
#ifndef SC_LETTER_FIBRES_H
#define SC_LETTER_FIBRES_H
#include "mesh/letters.h"
#include "muscle/fibre.h"

typedef struct sc_letter_muscle_opts {
    unsigned strokes;          /* bit i: stroke i gets muscles (0: all) */
    int longitudinal_segments; /* per longitudinal fibre; 0: none */
    int radial_count;          /* loops per stroke, evenly spaced along it */
    int radial_segments;
    int helical_fibres; /* per stroke, alternating handedness */
    int helical_segments;
    double helical_turns; /* turns over the stroke's length */
    int ring_segments;    /* per loop of a ring stroke */
    double inset;         /* fibres at this fraction of the half-width and half-depth from the centre line */
    double margin;        /* m kept free at each end of a stroke */
    double stiffness, sigma, min_ratio;
} sc_letter_muscle_opts;

/* [T12] Table 1's muscle counts where it gives them: 12 longitudinal segments, no radial or
 * helical fibres, 20 per ring loop, inset 0.55, margin 3 cm; stiffness 2e5 Pa, sigma 5 cm,
 * min_ratio 0.5. */
void sc_letter_muscle_default_opts(sc_letter_muscle_opts *o);
/* The fibres of letter l (defs is overwritten; free with sc_muscle_defs_free). */
int sc_letter_muscles(const sc_letter *l, const sc_letter_muscle_opts *o, sc_muscle_defs *defs, sc_err *err);

#endif

/* [T12]'s boneless characters: letters of the alphabet built of strokes, each a box of
 * rectangular cross-section along a straight centre line (or, for the O, an annulus), standing
 * on y = 0 and facing +z. The strokes are also where the built-in muscle fibres run
 * (muscle/fibre.c, [T12] Figure 10). Sizes in metres, chosen so that target_tets of about 1000
 * gives [T12] Table 1's meshes (620-1901 tets). */
#ifndef SC_LETTERS_H
#define SC_LETTERS_H
#include "core/mathx.h"
#include "core/status.h"
#include "mesh/isosurface.h"

#define SC_LETTER_MAX_STROKES 8

typedef enum { SC_STROKE_BOX = 0, SC_STROKE_RING = 1 } sc_stroke_type;

typedef struct sc_stroke {
    int type;
    sc_vec3 a, b;        /* BOX: the centre line's ends (the box's end faces); RING: a = centre */
    double width, depth; /* BOX: across the line along `side`, and along `across`; RING: radial and along the axis */
    sc_vec3 across;      /* BOX: unit, perpendicular to b - a (default +z); RING: the ring's axis */
    double radius;       /* RING: of the centre circle */
} sc_stroke;

typedef struct sc_letter {
    char name[16];
    int nstrokes;
    sc_stroke stroke[SC_LETTER_MAX_STROKES];
    double round; /* edge radius (m) */
    sc_vec3 lo, hi;
} sc_letter;

/* The built-in letter called name (I, H, F, T, O, X, I_flat); SC_EINPUT naming the known ones. */
int sc_letter_get(const char *name, sc_letter *out, sc_err *err);
/* "I, H, F, T, O, X, I_flat" */
const char *sc_letter_names(void);
/* The stroke's frame: unit axis along the stroke (BOX: a to b), `side` across it in the letter
 * plane and `across` (BOX); its length. */
double sc_stroke_frame(const sc_stroke *s, sc_vec3 *axis, sc_vec3 *side, sc_vec3 *across);
/* Signed distance to the letter's surface (negative inside): the union of its strokes. */
double sc_letter_eval(const sc_letter *l, sc_vec3 p);
/* The letter as a field for sc_isosurface (ctx = l, which must outlive the field). */
sc_field sc_letter_field(const sc_letter *l);

#endif

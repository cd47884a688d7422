/* The coarse envelope ([L13] section 6): a closed offset surface that encloses every vertex of
 * the fine surface, extracted from a signed distance grid of the fine mesh, so built-in and
 * OBJ bodies take the same path. Also the checks a given envelope must pass. */
#ifndef SC_ENVELOPE_H
#define SC_ENVELOPE_H
#include "io/obj.h"

typedef struct sc_envelope_opts {
    double offset;        /* distance beyond the fine surface (m) */
    int target_vertices;  /* sets the grid spacing when spacing <= 0 */
    double spacing;       /* grid spacing (m); must be below offset */
} sc_envelope_opts;

int sc_envelope_build(const sc_trimesh *fine, const sc_envelope_opts *o, sc_trimesh *out, double *spacing_used, sc_err *err);
/* Closed (every edge shared by two consistently oriented faces), outward oriented and free of
 * self-intersections; `name` is used in messages. */
int sc_surface_validate(const sc_trimesh *m, const char *name, sc_err *err);
/* Closed (every edge matched by an opposite one; pinched edges allowed, as surface nets make
 * them) and outward; cheap enough for any body surface. */
int sc_surface_validate_closed(const sc_trimesh *m, const char *name, sc_err *err);
/* Generalized winding number of the closed mesh around p (1 inside, 0 outside). */
double sc_winding_number(const sc_trimesh *m, const double *p);
double sc_trimesh_area(const sc_trimesh *m);
double sc_trimesh_volume(const sc_trimesh *m);

#endif

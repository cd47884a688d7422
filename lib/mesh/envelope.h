/* The coarse envelope ([L13] section 6): a closed offset surface that encloses every vertex of
 * the fine surface, extracted from a signed distance grid of the fine mesh, so built-in and
 * OBJ bodies take the same path. Also the checks a given envelope must pass. */
#ifndef SC_ENVELOPE_H
#define SC_ENVELOPE_H
#include "core/mathx.h"
#include "io/obj.h"

typedef struct sc_envelope_opts {
    double offset;       /* distance beyond the fine surface (m) */
    int target_vertices; /* sets the grid spacing when spacing <= 0 */
    double spacing;      /* grid spacing (m); must be below offset */
} sc_envelope_opts;

int sc_envelope_build(const sc_trimesh *fine, const sc_envelope_opts *o, sc_trimesh *out, double *spacing_used, sc_err *err);
/* Closed (every edge shared by two consistently oriented faces), outward oriented and free of
 * self-intersections; `name` is used in messages. */
int sc_surface_validate(const sc_trimesh *m, const char *name, sc_err *err);
/* Closed (every edge matched by an opposite one; pinched edges allowed, as surface nets make
 * them) and outward; cheap enough for any body surface. */
int sc_surface_validate_closed(const sc_trimesh *m, const char *name, sc_err *err);
/* Generalized winding number of the closed mesh around p (1 inside, 0 outside). */
/* A signed distance grid of a closed surface: exact unsigned distance up to `reach`, negative
 * inside (the sign from a flood fill of the outside through samples farther than h from the
 * surface); deeper than reach it is -reach, beyond the grid +1 m. Trilinear evaluation. */
typedef struct sc_sdf {
    int nx, ny, nz;
    sc_vec3 origin;
    double h;
    float *val; /* m, negative inside */
} sc_sdf;
int sc_sdf_build(const sc_trimesh *m, double h, double reach, sc_sdf *g, sc_err *err);
double sc_sdf_eval(const sc_sdf *g, sc_vec3 p);
void sc_sdf_free(sc_sdf *g);
double sc_winding_number(const sc_trimesh *m, const double *p);
double sc_trimesh_area(const sc_trimesh *m);
double sc_trimesh_volume(const sc_trimesh *m);

#endif

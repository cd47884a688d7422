/* Surface extraction from an implicit function by surface nets on a regular grid: one
 * vertex per cell the surface crosses, one quad (two triangles) per crossed grid edge.
 * Closed, outward-oriented; vertices optionally projected onto the level set. */
#ifndef SC_ISOSURFACE_H
#define SC_ISOSURFACE_H
#include "io/obj.h"
#include "core/mathx.h"

/* A scalar field, negative inside, sampled by surface extraction. */
typedef struct sc_field {
    double (*eval)(const void *ctx, sc_vec3 p);
    const void *ctx;
    sc_vec3 lo, hi; /* bounding box of the zero set */
} sc_field;

typedef struct sc_iso_opts {
    double spacing; /* grid spacing (m) */
    double level;   /* extract f = level (an offset surface for level > 0) */
    double shift;   /* grid origin offset as a fraction of spacing (retries use others) */
    int project;    /* Newton projections onto the level set */
    int smooth;     /* Laplacian smoothing passes before projection */
    int tangential; /* smoothing moves vertices only within their tangent plane */
} sc_iso_opts;

int sc_isosurface(const sc_field *f, const sc_iso_opts *o, sc_trimesh *out, sc_err *err);
/* Topology checks of a closed triangle mesh. Returns the number of edges not shared by exactly
 * two oppositely oriented triangles; *first_bad gets one such edge's triangle (or -1). */
int sc_trimesh_open_edges(const sc_trimesh *m, int *first_bad);
/* Half-edges (a,b) that occur more or less often than (b,a): an open boundary, a repeated or
 * flipped face; pinched (non-manifold but closed) edges pass. -1: out of memory. */
int sc_trimesh_unmatched_edges(const sc_trimesh *m, int *first_bad);
/* Grid size that gives about `target` vertices, from one probe extraction at `probe_spacing`. */
double sc_iso_spacing_for(const sc_field *f, double level, int target, double probe_spacing, sc_err *err);

#endif

/* Coarsening a closed surface: quadric error edge collapses (Garland and Heckbert 1997). Each
 * collapse moves the edge's two vertices to the point that keeps closest to the planes of the
 * triangles they stood for, so flat faces, sharp edges and a flat base stay where they are; a
 * collapse is refused when it would break the surface's manifold form (the link condition),
 * turn a triangle by more than 45 degrees or leave one with an angle below min_angle (or worse
 * than it was); when no collapse is left, edges between two triangles in one plane are flipped
 * where that makes the pair better, and the collapses go on. mesh-prep makes a boneless body's
 * envelope this way ([T12]: the tet mesh is the body itself). */
#ifndef SC_DECIMATE_H
#define SC_DECIMATE_H
#include "core/status.h"
#include "io/obj.h"
#include "mesh/isosurface.h"

typedef struct sc_decimate_info {
    int collapses; /* edges collapsed */
} sc_decimate_info;

typedef struct sc_decimate_opts {
    int target_verts;        /* stop at this many vertices (at least 4) */
    double min_angle_deg;    /* no new triangle's angle below this, unless it was no better before */
    double max_error;        /* m: without a surface, the root mean square distance to the planes of
                             the triangles a vertex stands for; with one, how far outside it
                             (surface > 0) a new triangle may reach */
    const sc_field *surface; /* NULL, or the surface the collapses keep to: the planes are its
                                tangent planes at the vertices, and each new vertex and each new
                                triangle's centre and edge middles keep within
                                [-max_inside, max_error] of it */
    double max_inside;       /* m */
} sc_decimate_opts;

/* Decimates m in place to at most o->target_verts vertices, or as near as the checks allow. m
 * must be closed and manifold (every edge shared by exactly two triangles, oriented alike:
 * SC_EINPUT otherwise). info may be NULL. */
int sc_trimesh_decimate(sc_trimesh *m, const sc_decimate_opts *o, sc_decimate_info *info, sc_err *err);

#endif

/* Wavefront OBJ triangle meshes: reader (v and f only) and writer. */
#ifndef SC_IO_OBJ_H
#define SC_IO_OBJ_H
#include <stddef.h>
#include "core/status.h"

/* The largest file the loader reads (a body of 10 million triangles is ~0.5 GB). */
#define SC_OBJ_MAX_BYTES (1ULL << 31)

typedef struct sc_trimesh {
    int nverts, ntris;
    double *verts; /* 3*nverts */
    int *tris;     /* 3*ntris, 0-based */
} sc_trimesh;

/* What the reader did besides filling the mesh. */
typedef struct sc_obj_info {
    int nfaces;    /* f lines read */
    int npolygons; /* f lines with more than 3 vertices (fan-triangulated) */
    int ndropped;  /* degenerate triangles (a repeated vertex index) dropped */
} sc_obj_info;

/* Reads "v x y z [w | r g b]" and "f" lines with v, v/vt, v//vn or v/vt/vn references
 * (negative = relative to the last vertex so far). Polygons with n > 3 vertices are
 * fan-triangulated from their first vertex, (0,i,i+1): exact for convex (and star-shaped
 * from vertex 0) polygons, which is what exporters produce; a non-convex polygon may give
 * overlapping triangles. Triangles with a repeated index are dropped and counted (info,
 * plus one sc_log_warn). vn, vt, vp, g, o, s, l, p, usemtl, mtllib lines are ignored; any other
 * statement, a malformed number, an index that is zero or out of range, or a file without
 * faces is SC_EINPUT "file:line: ...". Line continuations ('\') are not supported.
 * On failure *out is zeroed. */
int sc_obj_load(const char *path, sc_trimesh *out, sc_err *err);
int sc_obj_parse(const char *text, size_t len, const char *name_for_errors, sc_trimesh *out, sc_err *err);
/* Same, also reporting counts in *info (may be NULL). */
int sc_obj_load_ex(const char *path, sc_trimesh *out, sc_obj_info *info, sc_err *err);
int sc_obj_parse_ex(const char *text, size_t len, const char *name_for_errors, sc_trimesh *out, sc_obj_info *info, sc_err *err);
/* Writes v and f lines (1-based), numbers in the shortest form that reads back exactly;
 * a temporary then rename. SC_EINPUT for an index out of range or a non-finite coordinate. */
int sc_obj_write(const char *path, const sc_trimesh *m, sc_err *err);
void sc_trimesh_free(sc_trimesh *m);

#endif

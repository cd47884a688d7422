/* Embedding of the fine surface in the tet mesh ([L13] 4.2): each vertex gets an enclosing
 * tet and barycentric coordinates; a vertex outside every tet is mapped to the nearest tet
 * (its barycentrics then extrapolate) and counted. */
#ifndef SC_EMBED_H
#define SC_EMBED_H
#include "mesh/tetmesh.h"

typedef struct sc_embed_stats {
    int inside;                   /* vertices inside a tet */
    int fallback;                 /* vertices mapped to the nearest tet */
    double max_fallback_distance; /* m */
} sc_embed_stats;

int sc_embed_points(const sc_tetmesh *m, int npts, const double *pts, int *tet, double *bary, sc_embed_stats *stats, sc_err *err);
/* Barycentric coordinates of p in tet t (sum to 1; negative outside). */
void sc_tet_barycentric(const sc_tetmesh *m, int t, const double *p, double bary[4]);

#endif

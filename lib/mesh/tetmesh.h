/* Tetrahedral mesh geometry: orientation, volumes, Bm^-1, lumped masses, quality figures. */
#ifndef SC_TETMESH_H
#define SC_TETMESH_H
#include "core/status.h"

typedef struct sc_tetmesh {
    int nnodes, ntets;
    double *pos; /* 3 * nnodes (m) */
    int *tets;   /* 4 * ntets */
} sc_tetmesh;

typedef struct sc_tet_quality {
    double min_dihedral, max_dihedral;        /* degrees */
    double min_volume, max_volume;            /* m^3 */
    double radius_edge_mean, radius_edge_max; /* circumradius / shortest edge */
    int nonpositive;                          /* tets with volume <= 0 */
    int worst_tet;                            /* the tet with the smallest dihedral angle */
} sc_tet_quality;

void sc_tetmesh_free(sc_tetmesh *m);
double sc_tet_signed_volume(const double *a, const double *b, const double *c, const double *d);
/* Swaps two nodes of every negatively oriented tet; returns how many were flipped. */
int sc_tetmesh_orient(sc_tetmesh *m);
void sc_tetmesh_quality(const sc_tetmesh *m, sc_tet_quality *q);
/* Volumes, Bm^-1 ([L13] eq. 11) and lumped node masses (density * adjacent volume / 4).
 * Fails with SC_EINPUT naming the tet when one is degenerate. */
int sc_tetmesh_geometry(const sc_tetmesh *m, double density, double *volume, double *bm_inv, double *node_mass, sc_err *err);
/* Number of connected components (through shared nodes); comp[n] gets each node's component
 * (unreferenced nodes count as their own component). */
int sc_tetmesh_components(int nnodes, int ntets, const int *tets, int *comp);
/* Boundary faces (outward oriented triangles); returns count, *faces malloc'd (3 per face). */
int sc_tetmesh_boundary(const sc_tetmesh *m, int **faces, sc_err *err);

#endif

#ifndef SC_TETMESH_IMPROVE
#define SC_TETMESH_IMPROVE
typedef struct sc_improve_stats {
    int peeled;         /* boundary slivers removed */
    int smoothed_moves; /* accepted node moves */
    int removed_nodes;  /* nodes left without a tet after peeling */
    double min_dihedral_before, min_dihedral_after;
} sc_improve_stats;
/* TetGen leaves slivers next to the boundary. Peels slivers (min dihedral < min_angle) that
 * have a boundary face, then moves free interior nodes (not locked, not on the boundary)
 * towards positions that raise the smallest dihedral angle around them. Unreferenced nodes
 * are dropped; remap[old] = new index or -1 (remap has the old node count). locked[n] (may be
 * NULL): 1 the node neither moves nor loses a tet to peeling; 2 (pinned) it does not move. */
int sc_tetmesh_improve(sc_tetmesh *m, const unsigned char *locked, double min_angle, int *remap, sc_improve_stats *st, sc_err *err);
double sc_tet_min_dihedral(const double *a, const double *b, const double *c, const double *d);
#endif

/* Penalty contact with Coulomb friction on the fine-surface vertices against the ground: a
 * plane (possibly tilted, for slopes) plus optional height-field bumps ([L13] 4.2.4, like Kim
 * and Pollard 2011), optional bumpy tiles ([J11] 6: a triangulated grid whose vertices are
 * raised by seeded uniform offsets) and optional box obstacles. Friction uses a tangential anchor spring per vertex, so static friction
 * really sticks below mu and slides (the anchor follows) above it. Forces on the surface are
 * mapped to tet nodes by the embedding Jacobian transpose, f_c = J_phi^T f~_c. */
#ifndef SC_CONTACT_H
#define SC_CONTACT_H
#include <stdint.h>
#include "core/mathx.h"
#include "core/status.h"

#define SC_GROUND_MAX_BOXES 8

/* The height fields are functions of the world x and z, added along the base normal (exact on
 * a level base, a small-slope field on a tilted one). */
typedef struct sc_ground {
    sc_vec3 normal;     /* unit, of the base plane */
    double offset;      /* plane: normal . x = offset */
    double bump_height; /* height field: bump_height * sin(2 pi x / L) * sin(2 pi z / L) along normal */
    double bump_length; /* L (m); 0 = flat */
    /* tiles: vertex (i, j) at (x, z) = (i, j) tile_size is raised by tile_height u(i, j, seed),
     * u uniform in [0, 1) from a counter-based hash (an infinite floor, no table); each cell is
     * two triangles split along (i, j)-(i+1, j+1), the height inside one its plane */
    double tile_size;   /* m; 0 = no tiles */
    double tile_height; /* m, >= 0: the largest raise */
    uint64_t tile_seed;
    /* obstacles: axis-aligned boxes (world, m) joined to the ground; their sides push back
     * horizontally, so a foot that does not clear one trips on it */
    int nboxes;
    double box_lo[SC_GROUND_MAX_BOXES][3], box_hi[SC_GROUND_MAX_BOXES][3];
} sc_ground;

typedef struct sc_contact_opts {
    int enabled;
    double stiffness;                          /* N/m per vertex */
    double damping;                            /* N s/m per vertex (normal direction) */
    double mu;                                 /* Coulomb friction coefficient */
    double tangent_stiffness, tangent_damping; /* anchor spring, per vertex */
    sc_ground ground;
} sc_contact_opts;

void sc_contact_default_opts(sc_contact_opts *o);
/* Signed height of p above the ground along the local normal; *normal gets that normal. On
 * tiles the normal is the triangle's and the height the exact distance to its plane (the sine
 * bumps keep their small-slope height, the base-normal component). */
double sc_ground_height(const sc_ground *g, sc_vec3 p, sc_vec3 *normal);
/* The raise of tile vertex (i, j) along the base normal (m, in [0, tile_height)); 0 without tiles. */
double sc_ground_tile_vertex(const sc_ground *g, long i, long j);
/* 1 when the ground is its base plane (no bumps, no tiles, no boxes). */
int sc_ground_is_flat(const sc_ground *g);
/* How far the ground can rise above its base plane (m, >= 0): tiles plus the bumps' amplitude,
 * or a box's top if higher. */
double sc_ground_max_rise(const sc_ground *g);
/* Corner k (0..7: bit 0 x, bit 1 y, bit 2 z, set for the max side) of box b. */
sc_vec3 sc_ground_box_corner(const sc_ground *g, int b, int k);
/* The box whose surface is the ground's nearest to p (sc_ground_height's), -1 for the floor. */
int sc_ground_nearest_box(const sc_ground *g, sc_vec3 p);
/* The height (y) of the ground's top surface over (x, z): what a picture of it draws. */
double sc_ground_top(const sc_ground *g, double x, double z);

typedef struct sc_contact_result {
    sc_vec3 total_force; /* N, on the body */
    int count;           /* vertices in contact */
    int sliding;         /* of those, sliding */
    int obstacles;       /* of those, against a ground box */
    double max_depth;    /* m */
    double normal_force; /* N: the sum of the normal loads ... */
    sc_vec3 load_moment; /* N m: ... and of each times its point: the centre of pressure is their ratio */
} sc_contact_result;

/* The centre of pressure of a contact result (NAN without load). */
void sc_contact_cop(const sc_contact_result *r, double cop[3]);

/* The embedding of the fine surface: vertex i moves with tet tet[i] by weights bary[4 i..]. */
typedef struct sc_embedding {
    int nverts;
    const int *tets;    /* the tet mesh, 4 nodes per tet */
    const int *tet;     /* [nverts] */
    const double *bary; /* [4 nverts] */
} sc_embedding;
/* f_c = J_phi^T f~_c ([L13] 4.2.4): vertex i's force ACCUMULATED onto its tet's nodes */
static inline void sc_embedding_to_nodes(const sc_embedding *e, int i, sc_vec3 f, double *node_force)
{
    const int *t = e->tets + 4 * e->tet[i];
    const double *w = e->bary + 4 * i;
    for (int k = 0; k < 4; k++) sc_v3_store(node_force + 3 * t[k], sc_v3_axpy(w[k], f, sc_v3_load(node_force + 3 * t[k])));
}

/* Contact of the surface points p (3 per vertex, from the node positions by the embedding)
 * with the ground; a vertex's velocity is interpolated from the node velocities only when it
 * touches. The forces are ACCUMULATED onto the tet nodes (node_force, 3 per node) by
 * J_phi^T. anchor (3 per vertex) and in_contact (per vertex) are state: a vertex entering
 * contact anchors where it touched. */
void sc_contact_forces(const sc_contact_opts *o, const sc_embedding *e, const double *p, const double *node_v, double *anchor,
                       unsigned char *in_contact, double *node_force, sc_contact_result *res);

/* Contact culling: the same forces, anchors and contact flags as sc_contact_forces, to the
 * bit, without visiting the vertices that cannot reach the ground. A vertex inside its tet
 * lies above the lowest of the tet's nodes (over the base plane), and the ground rises above
 * that plane by at most sc_ground_max_rise; vertices outside their tet (the nearest-tet fallback of
 * the embedding) are always tested. Built once per simulation; no allocation per step. */
typedef struct sc_contact_cull {
    int nverts, nnodes, ntets;
    int *tets;                   /* [ntets] the distinct tets of the embedding */
    int *vert_start, *verts;     /* the vertices of tets[k]: verts[vert_start[k] .. vert_start[k+1]), ascending */
    int *node_start, *node_tets; /* the embedding tets (indices into tets) of node i: node_tets[node_start[i] ..] */
    unsigned long long *always;  /* [nverts/64+1] bitmap of the vertices outside their tet */
    unsigned long long *bits;    /* scratch: bitmap of the candidates */
    int *cand;                   /* [nverts] scratch: candidates, ascending */
    unsigned char *prev;         /* [nverts] scratch: their contact flags */
    sc_vec3 *force;              /* [nverts] scratch: their contact forces */
    int candidates;              /* vertices tested in the last call */
} sc_contact_cull;

int sc_contact_cull_init(sc_contact_cull *c, const sc_embedding *e, int ntets, int nnodes, sc_err *err);
void sc_contact_cull_free(sc_contact_cull *c);
/* As sc_contact_forces, with the surface points computed from the node positions x (3 per
 * node) only where a vertex can touch. */
void sc_contact_forces_culled(const sc_contact_opts *o, const sc_embedding *e, sc_contact_cull *c, const double *x, const double *node_v,
                              double *anchor, unsigned char *in_contact, double *node_force, sc_contact_result *res);

#endif

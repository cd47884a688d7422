/* Penalty contact with Coulomb friction on the fine-surface vertices against the ground: a
 * plane (possibly tilted, for slopes) plus optional height-field bumps ([L13] 4.2.4, like Kim
 * and Pollard 2011). Friction uses a tangential anchor spring per vertex, so static friction
 * really sticks below mu and slides (the anchor follows) above it. Forces on the surface are
 * mapped to tet nodes by the embedding Jacobian transpose, f_c = J_phi^T f~_c. */
#ifndef SC_CONTACT_H
#define SC_CONTACT_H
#include "core/mathx.h"
#include "core/status.h"

typedef struct sc_ground {
    sc_vec3 normal;     /* unit, of the base plane */
    double offset;      /* plane: normal . x = offset */
    double bump_height; /* height field: bump_height * sin(2 pi x / L) * sin(2 pi z / L) along normal */
    double bump_length; /* L (m); 0 = flat */
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
/* Signed height of p above the ground along the local normal; *normal gets that normal. */
double sc_ground_height(const sc_ground *g, sc_vec3 p, sc_vec3 *normal);

typedef struct sc_contact_result {
    sc_vec3 total_force; /* N, on the body */
    int count;           /* vertices in contact */
    int sliding;         /* of those, sliding */
    double max_depth;    /* m */
} sc_contact_result;

/* The embedding of the fine surface: vertex i moves with tet tet[i] by weights bary[4 i..]. */
typedef struct sc_embedding {
    int nverts;
    const int *tets;    /* the tet mesh, 4 nodes per tet */
    const int *tet;     /* [nverts] */
    const double *bary; /* [4 nverts] */
} sc_embedding;

/* Contact of the surface points p (3 per vertex, from the node positions by the embedding)
 * with the ground; a vertex's velocity is interpolated from the node velocities only when it
 * touches. The forces are ACCUMULATED onto the tet nodes (node_force, 3 per node) by
 * J_phi^T. anchor (3 per vertex) and in_contact (per vertex) are state: a vertex entering
 * contact anchors where it touched. */
void sc_contact_forces(const sc_contact_opts *o, const sc_embedding *e, const double *p, const double *node_v, double *anchor,
                       unsigned char *in_contact, double *node_force, sc_contact_result *res);

/* Contact culling: the same forces, anchors and contact flags as sc_contact_forces, to the
 * bit, without visiting the vertices that cannot reach the ground. A vertex inside its tet
 * lies above the lowest of the tet's nodes (over the base plane), and the bumps lower the
 * ground by at most |bump_height|; vertices outside their tet (the nearest-tet fallback of
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

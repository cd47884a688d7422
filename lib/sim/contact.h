/* Penalty contact with Coulomb friction on the fine-surface vertices against the ground: a
 * plane (possibly tilted, for slopes) plus optional height-field bumps ([L13] 4.2.4, like Kim
 * and Pollard 2011). Friction uses a tangential anchor spring per vertex, so static friction
 * really sticks below mu and slides (the anchor follows) above it. Forces on the surface are
 * mapped to tet nodes by the embedding Jacobian transpose, f_c = J_phi^T f~_c. */
#ifndef SC_CONTACT_H
#define SC_CONTACT_H
#include "core/mathx.h"

typedef struct sc_ground {
    sc_vec3 normal;       /* unit, of the base plane */
    double offset;        /* plane: normal . x = offset */
    double bump_height;   /* height field: bump_height * sin(2 pi x / L) * sin(2 pi z / L) along normal */
    double bump_length;   /* L (m); 0 = flat */
} sc_ground;

typedef struct sc_contact_opts {
    int enabled;
    double stiffness;     /* N/m per vertex */
    double damping;       /* N s/m per vertex (normal direction) */
    double mu;            /* Coulomb friction coefficient */
    double tangent_stiffness, tangent_damping; /* anchor spring, per vertex */
    sc_ground ground;
} sc_contact_opts;

void sc_contact_default_opts(sc_contact_opts *o);
/* Signed height of p above the ground along the local normal; *normal gets that normal. */
double sc_ground_height(const sc_ground *g, sc_vec3 p, sc_vec3 *normal);

typedef struct sc_contact_result {
    sc_vec3 total_force;  /* N, on the body */
    int count;            /* vertices in contact */
    int sliding;          /* of those, sliding */
    double max_depth;     /* m */
} sc_contact_result;

/* The embedding of the fine surface: vertex i moves with tet tet[i] by weights bary[4 i..]. */
typedef struct sc_embedding {
    int nverts;
    const int *tets;     /* the tet mesh, 4 nodes per tet */
    const int *tet;      /* [nverts] */
    const double *bary;  /* [4 nverts] */
} sc_embedding;

/* Contact of the surface points p (3 per vertex, from the node positions by the embedding)
 * with the ground; a vertex's velocity is interpolated from the node velocities only when it
 * touches. The forces are ACCUMULATED onto the tet nodes (node_force, 3 per node) by
 * J_phi^T. anchor (3 per vertex) and in_contact (per vertex) are state: a vertex entering
 * contact anchors where it touched. */
void sc_contact_forces(const sc_contact_opts *o, const sc_embedding *e, const double *p, const double *node_v,
                       double *anchor, unsigned char *in_contact, double *node_force, sc_contact_result *res);

#endif

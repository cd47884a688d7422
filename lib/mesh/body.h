/* Built-in procedural bodies: a smooth union of primitives placed around the skeleton and
 * sized from its bone lengths, evaluated as an implicit function (negative inside,
 * approximately a signed distance in metres). */
#ifndef SC_BODY_H
#define SC_BODY_H
#include "core/status.h"
#include "mesh/isosurface.h"
#include "mesh/rig.h"

typedef enum { SC_BODY_MICHELIN = 0, SC_BODY_PANDA = 1 } sc_body_kind;

typedef enum { SC_PRIM_CAPSULE = 0, SC_PRIM_ELLIPSOID = 1, SC_PRIM_ROUNDBOX = 2 } sc_prim_type;

typedef struct sc_prim {
    int type;
    sc_vec3 a, b;   /* capsule: segment ends; ellipsoid: a = centre */
    double ra, rb;  /* capsule: radius at a and at b (tapered) */
    sc_mat3 frame;  /* ellipsoid: columns are its axes */
    sc_vec3 radii;  /* ellipsoid radii / box half-extents along the frame axes */
    double round;   /* rounded box: edge radius (m) */
    int group;      /* primitives of one group blend with `ring_blend`, groups with `blend` */
    sc_vec3 lo, hi; /* bounding box */
} sc_prim;

typedef struct sc_implicit {
    int nprims, cap;
    sc_prim *prims;
    double blend;      /* smooth-union radius between groups (m) */
    double ring_blend; /* inside a group (m): small keeps Michelin's rings visible */
    int has_floor;     /* 1: the body is cut by the plane y = floor (flat soles) */
    double floor;      /* m */
    sc_vec3 lo, hi;    /* bounding box of the surface */
} sc_implicit;

typedef struct sc_body_params {
    int kind;     /* sc_body_kind */
    double girth; /* radius scale, 1 = default proportions */
} sc_body_params;

int sc_body_build(const sc_rig *rig, const sc_body_params *p, sc_implicit *out, sc_err *err);
void sc_implicit_free(sc_implicit *f);
double sc_implicit_eval(const sc_implicit *f, sc_vec3 p);
sc_field sc_implicit_field(const sc_implicit *f);

#endif

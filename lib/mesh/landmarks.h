/* Landmarks of a humanoid body found from its surface alone (no skeleton): cross-sections of
 * the body by a plane (their closed curves, centroids and sizes), horizontal slices as clusters
 * along x, and the places where limbs leave the trunk: the crotch (the lowest point of the
 * trunk's outline in the sagittal plane), the armpits (where the upper arm's horizontal section
 * separates from the trunk's, scanning down from the shoulders) and the neck (its shortest
 * horizontal section above the armpits, and its base where the shoulders widen the section). The body stands on its
 * lowest point, y up, facing +z, its left at +x. Deterministic: no sampling, no randomness. */
#ifndef SC_MESH_LANDMARKS_H
#define SC_MESH_LANDMARKS_H
#include "core/mathx.h"
#include "io/obj.h"

/* One closed curve of a plane section. */
typedef struct sc_section {
    sc_vec3 centre; /* centroid of the curve (by length) */
    double radius;  /* perimeter / 2 pi: the radius of a circle as long */
    sc_vec3 lowest; /* the curve's point of least y */
} sc_section;

/* The body's section by the plane through p with normal n: its closed curves (segments joined
 * where they cross the same triangle edge); of the curves that enclose p the smallest, else the
 * one whose centroid is nearest p within `reach`. 1 when found, 0 when none, -1 out of memory. */
int sc_body_section(const sc_trimesh *m, sc_vec3 p, sc_vec3 n, double reach, sc_section *s);

/* A horizontal slice as clusters along x: the points where triangle edges cross the plane,
 * sorted by x, split where consecutive x differ by more than a gap. */
typedef struct sc_slice_cluster {
    double x0, x1; /* extent along x */
    double z0, z1; /* z of the points at x0 and x1 */
    double cx, cz; /* mean of the points */
    int n;
} sc_slice_cluster;

/* The clusters of the slice at height y (at most cap; pts: scratch of 2 x (2 ntris + 16)
 * doubles). Returns their count, ordered by x. */
int sc_body_slice(const sc_trimesh *m, double y, double gap, double *pts, sc_slice_cluster *cl, int cap);

typedef struct sc_body_landmarks {
    double ground, crown, height, cx; /* lowest and highest y, their difference, centre x (m) */
    int have_crotch;
    sc_vec3 crotch; /* the lowest point of the trunk between the legs */
    int have_armpit[2];
    sc_vec3 armpit[2]; /* [0] left (+x), [1] right: the top of the gap between arm and trunk */
    int have_neck;
    sc_vec3 neck_narrowest; /* centroid of the neck's shortest (by perimeter) horizontal section */
    sc_vec3 neck_base;      /* under it, where the section has widened 1.5 times (the shoulders) */
} sc_body_landmarks;

/* Finds what the body has of them (a T-pose body has no armpit gap to scan, legs that touch
 * no crotch below the trunk: have_* 0). SC_OK, or SC_EIO when out of memory. */
int sc_body_landmarks_find(const sc_trimesh *m, sc_body_landmarks *lm, sc_err *err);

#endif

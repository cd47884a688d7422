/* The character's skeleton as mesh-prep builds it: bones with world rest head (the joint)
 * and tail, from a BVH hierarchy and a bone map, or from an inline YAML list. */
#ifndef SC_RIG_H
#define SC_RIG_H
#include "core/mathx.h"
#include "model/model.h"

#define SC_MAX_BONES 64

/* sole: a flat box parallel to the ground under the bone (feet), see fixed_clearance */
typedef enum { SC_FIXED_BOX = 0, SC_FIXED_CAPSULE = 1, SC_FIXED_SOLE = 2 } sc_fixed_shape;

typedef struct sc_rig_bone {
    char name[SC_NAME_LEN];
    char source[SC_NAME_LEN]; /* BVH joint it came from, "" when inline */
    int parent;               /* -1 for the root */
    int joint_type;           /* sc_joint_type */
    sc_vec3 head, tail;       /* world rest positions (m); head is the joint */
    sc_vec3 hinge_axis;       /* unit, bone frame (= world axes at rest) */
    double kp, kd, torque_limit;
    double lo[3], hi[3]; /* joint limits (rad), lo > hi: none */
    /* fixed nodes ([L13] Figure 4, blue boxes) */
    int fixed_shape;
    double fixed_radius;         /* half-width of the box / capsule radius (m) */
    double fixed_from, fixed_to; /* the fixed nodes span this fraction range of the bone, head = 0,
                                    tail = 1; beyond [0, 1] extends past the ends (feet: the heel) */
    double fixed_spacing;        /* node spacing along the bone (m) */
    int fixed_given;             /* the config sets this bone's fixed_* itself (else mesh-prep sizes them) */
    double fixed_clearance;      /* sole: height of its bottom nodes above the ground (m); the box
                                   is 2 fixed_radius wide and fixed_radius tall, its length is
                                   fixed_from..fixed_to of the bone's horizontal length */
    double fixed_height;         /* sole: height of its top nodes over its bottom ones (m); 0: fixed_radius */
} sc_rig_bone;

typedef struct sc_rig {
    int nbones;
    sc_rig_bone bone[SC_MAX_BONES];
} sc_rig;

static inline double sc_rig_length(const sc_rig_bone *b) { return sc_v3_dist(b->head, b->tail); }
int sc_rig_find(const sc_rig *rig, const char *name);
/* Height of the rig: max y - min y over heads and tails. */
double sc_rig_height(const sc_rig *rig);
/* Turns every hinge axis perpendicular to its limb (the parent's head to the hinge bone's
 * tail) in the rest pose, within the plane of the given axis: a knee or elbow whose axis leans
 * along the limb cannot fold it (a CMU thigh splays 10-20 deg, and a fixed x axis left the
 * folded knee of a kick 8 cm short of the captured ankle). BVH skeletons get this; axes of an
 * inline skeleton are taken as given. */
void sc_rig_hinge_axes_to_limbs(sc_rig *rig);
/* Checks: names unique, parents before children, non-zero lengths, unit hinge axes. */
int sc_rig_validate(const sc_rig *rig, const char *where, sc_err *err);

/* A bone of a bone map: name, BVH joint (head, drives the rotation), BVH joint or End Site at the
 * tail, parent, joint type, hinge axis. */
typedef struct sc_rig_map_entry {
    const char *name, *joint, *tail, *parent;
    int type;
    double axis[3];
} sc_rig_map_entry;
/* The default CMU bone map (16 bones, 15 joints; left is +x, forward +z in the CMU rest pose). */
const sc_rig_map_entry *sc_rig_cmu_map(int *n);
/* ... as YAML, for documentation and tests. */
const char *sc_rig_cmu_map_yaml(void);
extern const char *const sc_rig_joint_names[3]; /* "free", "ball", "hinge" by SC_JOINT_* */

#endif

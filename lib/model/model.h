/* The immutable character model: what mesh-prep and skin-weights produce (character.h5),
 * in the way MuJoCo separates mjModel from mjData. All arrays are owned by the model,
 * structure-of-arrays, SI units, y up. At rest every bone frame is world-axis aligned with
 * its origin at the bone's joint, so a bone-local coordinate is (rest world - joint). */
#ifndef SC_MODEL_H
#define SC_MODEL_H
#include <stdint.h>
#include "core/mathx.h"
#include "core/status.h"

#define SC_NAME_LEN 64

typedef enum { SC_JOINT_FREE = 0, SC_JOINT_BALL = 1, SC_JOINT_HINGE = 2 } sc_joint_type;

typedef struct sc_model {
    /* skeleton: bone 0 is the root (free joint); parent[b] < b for b > 0 */
    int nbones;
    char (*bone_name)[SC_NAME_LEN];
    int *parent;                 /* [nbones], -1 for the root */
    int *joint_type;             /* [nbones] sc_joint_type */
    double *joint_pos;           /* [nbones*3] world rest position of the joint = bone origin (m) */
    double *bone_end;            /* [nbones*3] world rest position of the bone's tip (m) */
    double *hinge_axis;          /* [nbones*3] unit axis in the bone frame (hinges only) */
    double *joint_lo, *joint_hi; /* [nbones*3] limits (rad), per axis; lo > hi means none */
    double *kp, *kd;             /* [nbones] PD gains (N m/rad, N m s/rad) */
    double *torque_limit;        /* [nbones] (N m) */
    double *bone_mass;           /* [nbones] (kg), from the bone's fixed nodes ([L13] 4.3) */
    double *bone_com;            /* [nbones*3] world rest centre of mass (m) */
    double *bone_inertia;        /* [nbones*9] inertia about the com, world rest axes (kg m^2) */

    /* tetrahedral mesh */
    int nnodes, ntets;
    double *rest_pos;   /* [nnodes*3] X (m) */
    double *node_mass;  /* [nnodes] lumped mass (kg) */
    int *tets;          /* [ntets*4] positively oriented */
    double *tet_volume; /* [ntets] (m^3) */
    double *bm_inv;     /* [ntets*9] Bm^-1 row-major ([L13] eq. 11) */

    /* fixed nodes ([L13] 4.3) */
    int nfixed;
    int *fixed_node;     /* [nfixed] */
    int *fixed_bone;     /* [nfixed] */
    double *fixed_local; /* [nfixed*3] bone-local rest coordinates (m) */
    int *node_bone;      /* [nnodes] bone a node is fixed to, -1 if free */

    /* fine surface and its embedding ([L13] 4.2) */
    int nsurf_verts, nsurf_tris;
    double *surf_rest; /* [nsurf_verts*3] (m) */
    int *surf_tris;    /* [nsurf_tris*3] */
    int *surf_tet;     /* [nsurf_verts] enclosing (or nearest) tet */
    double *surf_bary; /* [nsurf_verts*4] barycentric weights */

    /* skinning weights ([L13] eq. 13), sparse top-k form; skin_k == 0 when absent */
    int skin_k;
    int *skin_bone; /* [nnodes*skin_k], -1 for unused slots */
    double *skin_w; /* [nnodes*skin_k] */

    /* material */
    double density; /* kg/m^3 */
    double youngs;  /* Pa */
    double poisson;
} sc_model;

void sc_model_free(sc_model *m);
/* Deep copy (for overrides: a tool edits the copy, never the loaded model). SC_EIO when out of
 * memory; *dst is then empty. */
int sc_model_clone(const sc_model *src, sc_model *dst, sc_err *err);
/* Content hash of everything a simulation reads from the model (checked snapshot headers). */
uint64_t sc_model_hash(const sc_model *m);
/* Index of the bone called name, -1 if none: the one bone-name lookup of the library. */
int sc_model_bone_index(const sc_model *m, const char *name);
/* The bone whose segment (joint to tip, at rest) lies nearest to the rest point p. */
int sc_model_nearest_bone(const sc_model *m, const double p[3]);
/* The bone that moves each fine-surface vertex most (out[nsurf_verts]): by skin weight through
 * its tet, or the nearest bone when the model has no skin weights. */
void sc_model_surface_bones(const sc_model *m, int *out);
/* The bone that carries node i rigidly: its own when fixed, else its largest skin weight, else
 * the nearest bone segment (rigid contact lumps the flesh by it). */
int sc_model_node_carrier(const sc_model *m, int i);
/* A neutral standing pose (local rotations; the root's identity) that SIMBICON and motion
 * networks build their targets on: each leg (thigh[k], the chain down to foot[k]) turned so that
 * its hip-to-ankle line hangs straight down (-y) and its foot level as at rest; each upper arm
 * (arm[k]; -1: none) hanging straight down, turned arm_down rad outward (along +-left, the
 * character's left); every other joint as at rest. Needs a rest pose whose shins are straight in
 * line with their thighs' joints (the knee's local rotation is identity). */
void sc_model_stand_pose(const sc_model *m, const int thigh[2], const int foot[2], const int arm[2], const double left[3], double arm_down,
                         sc_quat *out);
/* Leaf bones (no child), e.g. hands, feet and head: the end effectors. Returns their count. */
int sc_model_leaf_bones(const sc_model *m, int *leaves);

#endif

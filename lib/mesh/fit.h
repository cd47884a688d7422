/* Fitting a skeleton into a user's humanoid body, and the checks and poses around it:
 * - sc_rig_arms_down: the A-pose of the built-in generator (arm chains turned down);
 * - sc_body_size_check: a body whose height is implausible for a person in the declared unit
 *   is refused with the body.scale that would make it plausible;
 * - sc_rig_fit_body: a BVH skeleton (T-pose) fitted into a body in T- or A-pose;
 * - sc_rig_fit_fixed: fixed-node boxes sized to the body (soles under the feet, every box
 *   inside the flesh) for the bones the config does not size itself. */
#ifndef SC_MESH_FIT_H
#define SC_MESH_FIT_H
#include "io/obj.h"
#include "mesh/landmarks.h"
#include "mesh/rig.h"

/* Arm chains: a bone pointing sideways (|x| >= 0.7 of its length) whose parent does not (a
 * clavicle-like first bone with a sideways child is skipped), with everything below it. Turns
 * each chain down by `angle` (radians) about its first joint, hinge axes with it. Returns the
 * number of chains turned. */
int sc_rig_arms_down(sc_rig *rig, double angle);

/* The body's height (y extent, m after body.scale) must be that of a person or a character:
 * 0.25 m .. 4 m. Otherwise SC_EINPUT naming the height and the body.scale of the unit (mm, cm,
 * inch, dm, foot, m) that makes it plausible and nearest 1.7 m, or else the factor to 1.7 m. */
int sc_body_size_check(const sc_trimesh *body, double scale, const char *where, sc_err *err);

typedef struct sc_fit_info {
    double body_height, scale;                                       /* m; skeleton scale applied */
    double arm_down_deg[2], arm_forward_deg[2], arm_length_scale[2]; /* per arm chain (left, right) */
    int arms;
    double leg_shift[2]; /* m, horizontal move of each leg onto the body's leg */
    int legs;
    sc_body_landmarks landmarks; /* what the joints were placed by (found from the body alone) */
    /* per bone (its head: the joint): where it went, where the skeleton scaled to the body (step
       1) had it and how far it moved from there, and the rule that placed it last (or why the
       body's landmark could not place it) */
    int njoints;
    char joint_name[SC_MAX_BONES][SC_NAME_LEN];
    double joint_pos[3 * SC_MAX_BONES], joint_scaled[3 * SC_MAX_BONES], joint_moved[SC_MAX_BONES];
    const char *joint_how[SC_MAX_BONES];
    int foot_turned[SC_MAX_BONES]; /* this bone (a foot) was turned about the vertical along the body's foot */
} sc_fit_info;

/* Fits a T-pose skeleton into a closed body surface standing on its lowest point, facing +z:
 * 1. uniform scale and offset from the body's height (the skeleton's lowest joint 2 % of the
 *    height above the floor, its top 2.5 % below the crown) and centre;
 * 2. each leg (a bone below the root pointing down, with its chain) moved horizontally onto
 *    the centre of the body's leg cross-section at the knee;
 * 3. each arm chain turned (down from the horizontal, and forwards) to where its bones lie
 *    deepest inside the body (a signed distance grid), then laid along the body's arm (below),
 *    its forearm and hand scaled about the elbow to end 1 cm inside the fingertips;
 * 4. each leg laid along the body's leg. Laying a limb along the body's: its two long bones
 *    re-aimed along the axes through the centres of the body's cross-sections at 30, 50 and
 *    70 % of them, the joints moved across onto those axes (a shoulder or hip the skeleton puts
 *    above or beside the body's limb comes down onto it), the middle joint where the axes meet
 *    when the limb bends;
 * 5. with joints_at_landmarks, the joints placed at the body's own joint centres (landmarks.h
 *    finds the landmarks), on the limbs' axes, bones re-aimed and re-lengthened to them (topology
 *    and names kept): hip: on the thigh's axis 0.045 H above the crotch (ANSUR II men:
 *    trochanterion height 0.519 H, crotch height 0.474 H); ankle: on the line through the centres
 *    of the leg's horizontal sections at 8 and 15 % of H, 0.04 H above the sole (lateral malleolus
 *    height); knee: on the leg's axes between hip and ankle in the skeleton's thigh : shin
 *    proportion; shoulder: on the upper arm's axis 0.05 H above the armpit (acromion 0.818 H,
 *    axilla about 0.745 H, the joint centre about 4 cm below the acromion); wrist: the centre of
 *    the forearm's narrowest section between 45 and 80 % of the way from the elbow to the
 *    fingertips (a man's: 57 %), where it is over 10 % narrower than at 45 %; elbow: where the
 *    upper arm's and forearm's axes meet when they bend by over 20 degrees, else between shoulder
 *    and wrist in the skeleton's proportion; the root moved down or up with the hips; neck and
 *    head: the neck's base and its narrowest section. Where a landmark is missing (a T-pose has no
 *    armpit gap) the joint stays where step 3 or 4 put it and the report says why.
 * Then hinge axes are made perpendicular to their limbs. info records every joint (H: the body's
 * height). */
int sc_rig_fit_body(sc_rig *rig, const sc_trimesh *body, int joints_at_landmarks, sc_fit_info *info, sc_err *err);

/* Moves every position info holds by dy along y (mesh-prep stands the body on y = 0). */
void sc_fit_info_shift_y(sc_fit_info *info, double dy);

/* Fixed-node boxes for bones whose config sets none of fixed_shape / fixed_radius / fixed_from /
 * fixed_to / fixed_clearance (sc_rig_bone.fixed_given == 0): a foot (a bone without children
 * whose joint is in the lowest eighth of the body and that points more sideways than up)
 * gets a sole box spanning its part of the body from heel to toe, half as wide as it, and
 * every box is shrunk until all its nodes lie inside the body surface. radius, radius_min,
 * radius_max: the defaults of the `fixed:` section. Returns the number of boxes changed. */
int sc_rig_fit_fixed(sc_rig *rig, const sc_trimesh *body, double radius, double radius_min, double radius_max, int shape);

/* The fixed nodes of one bone ([L13] Figure 4): a box (4 corners per layer) or a capsule (6 around
 * the axis per layer) between the bone's fixed_from and fixed_to, layers about fixed_spacing
 * apart, half-width fixed_radius (0: radius x length clamped to [radius_min, radius_max]); or
 * a sole: a box parallel to the ground (per layer 3 nodes across its bottom, 2 on top) whose
 * bottom is fixed_clearance above `ground`. Returns the count written to pts (at most cap). */
int sc_rig_fixed_points(const sc_rig_bone *b, double radius, double radius_min, double radius_max, int default_shape, double ground, double *pts,
                        int cap);

#endif

/* Segment controllers ([L13] 5, 5.2; Liu et al. 2010): a controller is a sequence of segments,
 * each a span of reference time [ref_t0, ref_t1] played over `steps` simulation steps (time
 * scaling: steps * dt may differ from ref_t1 - ref_t0) with PD target offsets added to the base
 * targets (the inverse-dynamics targets of eq. 32, or the raw reference poses).
 *
 * Within a segment, step j of `steps` plays reference time ref_t0 + (j / steps)(ref_t1 - ref_t0):
 * the base targets follow the reference stretched to the segment's length, and the segment's
 * offsets are HELD constant (no interpolation across segment boundaries), so a sample's
 * offsets act on its own segment only.
 *
 * Offsets act on control DoFs: a ball joint has 3 (the components of a rotation vector in the
 * joint's own frame: target = base exp(offset), as eq. 32's delta), a hinge 1 (an angle about
 * its axis); the root has none (it has no servo). Everything here is evaluated in memory. */
#ifndef SC_SEGMENTS_H
#define SC_SEGMENTS_H
#include "sampling/rollout.h"

#define SC_MAX_DOFS (3 * SC_SIM_MAX_BONES)

typedef struct sc_control_dofs {
    int n;
    int bone[SC_MAX_DOFS];
    int axis[SC_MAX_DOFS];                   /* 0, 1, 2: x, y, z of a ball joint's rotation vector; -1: a hinge */
    char name[SC_MAX_DOFS][SC_NAME_LEN + 4]; /* "l_thigh.x", "l_shin" */
    int first[SC_SIM_MAX_BONES];             /* first DoF of each bone, -1 for the root */
} sc_control_dofs;

/* Joint classes, recognised from bone names (CMU and built-in names: thigh, shin, foot, spine,
 * upperarm, ...): the sampler's default offset boxes and the feedback's default actions. */
enum { SC_JOINT_HIPS, SC_JOINT_KNEES, SC_JOINT_ANKLES, SC_JOINT_SPINE, SC_JOINT_SHOULDERS, SC_JOINT_OTHERS, SC_JOINT_CLASSES };
extern const char *const sc_joint_class_names[SC_JOINT_CLASSES];
int sc_joint_class(const char *bone_name);

/* Every DoF of every non-root joint, in bone order. */
void sc_control_dofs_init(const sc_model *m, sc_control_dofs *d);
/* Index of a DoF by name ("l_thigh.x" or "l_shin"), -1 if none. */
int sc_control_dof_index(const sc_control_dofs *d, const char *name);

typedef struct sc_segment {
    double ref_t0, ref_t1; /* s of reference time */
    long start_step;       /* simulation step at which the segment starts */
    long steps;            /* its simulated length in steps */
    const double *offset;  /* [dofs->n] PD target offsets (rad) */
} sc_segment;

typedef struct sc_segment_controller {
    const sc_model *m;
    const sc_control_dofs *dofs;
    const double *times; /* [n] base target times (s of reference time) */
    const double *base;  /* [n * nb * 4] base local rotations */
    int n;
    const sc_segment *seg; /* [nseg], consecutive: seg[i+1].start_step = seg[i].start_step + seg[i].steps */
    int nseg;
} sc_segment_controller;

/* The reference time played at a simulation step (clamped to the first and last segment). */
double sc_segment_ref_time(const sc_segment_controller *c, long step, int *segment);
/* Targets at a simulation step: base at the played reference time, composed with the offsets. */
void sc_segment_targets(const sc_segment_controller *c, long step, sc_quat *out);
/* Composes offsets onto base targets (nb rotations in place). */
void sc_apply_offsets(const sc_model *m, const sc_control_dofs *d, const double *offset, sc_quat *targets);
/* The target source of a segment controller, evaluated at s->step. */
sc_target_source sc_segment_source(const sc_segment_controller *c);

#endif

/* The inverse-dynamics reference ([L13] 5.1) in memory: a reference motion at simulation rate
 * with its estimated ground contact, joint torques and the PD targets of eq. 32
 * (motion/inverse_dynamics.h computes it; store/reference.h is its file, reference.h5). */
#ifndef SC_MOTION_REFERENCE_H
#define SC_MOTION_REFERENCE_H
#include <stdint.h>
#include "core/mathx.h"
#include "core/status.h"
#include "model/model.h"

typedef struct sc_reference {
    int n, nb;
    double dt;
    char (*names)[SC_NAME_LEN];
    double *time;                           /* [n] */
    double *root_pos, *root_vel, *root_acc; /* [n*3] */
    double *local_quat;                     /* [n*nb*4] */
    double *local_ang_vel, *local_ang_acc;  /* [n*nb*3] */
    double *bone_pos;                       /* [n*nb*3] */
    double *bone_quat;                      /* [n*nb*4] */
    double *com, *com_vel;                  /* [n*3] */
    double *target_quat;                    /* [n*nb*4] */
    double *contact_force, *contact_torque; /* [n*nb*3] */
    int *contact_flag;                      /* [n*nb] */
    int *captured;                          /* [n*nb] the capture's contacts (may be all 0) */
    double *contact_height, *contact_speed; /* [n*nb] */
    double *contact_resultant;              /* [n*6] */
    double *joint_torque;                   /* [n*nb*3] */
    double *root_residual;                  /* [n*6] */
    uint64_t character_hash;                /* sc_model_hash of the character it was made for (0: unknown) */
} sc_reference;

int sc_reference_alloc(sc_reference *r, int n, int nb, sc_err *err);
void sc_reference_free(sc_reference *r);
/* The reference state at time t (the sample at or just before t): root origin position and
 * velocity, local rotations and local angular velocities (each in the parent's frame), in the
 * character's bone order (matched by name). Outputs but local may be NULL. */
int sc_reference_state_at(const sc_reference *r, const sc_model *m, double t, double root_pos[3], sc_quat *local, double root_vel[3],
                          double *local_ang_vel, sc_err *err);
/* Content hash of everything a controller tracks in a reference (poses, velocities, targets,
 * contact flags): identifies the reference a controller was made for. */
uint64_t sc_reference_hash(const sc_reference *r);
/* PD targets at time t (slerp between the samples around it; clamped to the ends). out[nb]. */
void sc_reference_targets_at(const sc_reference *r, double t, sc_quat *out);

#endif

/* SIMBICON (Yin, Loken, van de Panne 2007), the biped controller [J11] 6 runs unchanged on
 * rigid and soft contact: per step a finite state machine of target poses (state 0 lasts a
 * fixed time after a foot strike, state 1 until the swing foot touches down, then the legs
 * swap), the swing hip placed by balance feedback theta = theta_0 + c_d d + c_v v (Yin 2007
 * eq. 1; d, v: the centre of mass from the stance ankle and its velocity, in the heading frame)
 * in the sagittal and coronal planes, the torso and the swing hip controlled in the world frame,
 * every other joint in its parent's.
 *
 * softcon's joints are stable-PD servos tracking targets ([L13] eq. 1-5), so the world-frame
 * parts become targets: the swing hip's is the pelvis's inverse times the wanted world
 * orientation, and the stance hip's is the one that puts the pelvis (the root, SIMBICON's torso
 * here) at its wanted world orientation given where the stance thigh is: the stance hip's servo
 * then applies the torso torque, as Yin 2007 closes it through the stance hip (tau_A = -tau_torso
 * - tau_B); the swing hip's reaction on the pelvis is countered by that servo's feedback rather
 * than subtracted in advance.
 *
 * Angles here are anatomical, whatever the character's axes: hip flexion (the leg forward) +,
 * knee flexion +, ankle dorsiflexion (toes up) +, hip abduction (the leg outward) +, torso lean
 * forward +. Yin 2007's walk (state 0: swing hip 0.5, knee -1.1, ankle 0.6, stance knee -0.05 in
 * its counter-clockwise sagittal angles) is swing hip 0.5, swing knee 1.1, swing ankle 0.6,
 * stance knee 0.05 here. The character's up is +y, its forward the model's
 * `forward` at rest, its left = up x forward. */
#ifndef SC_SIMBICON_H
#define SC_SIMBICON_H
#include "model/model.h"
#include "sampling/rollout.h"
#include "sim/sim.h"

typedef struct sc_simbicon_state {
    double duration;                                                             /* s; 0: until the swing foot touches down */
    double swing_hip, swing_knee, swing_ankle, stance_knee, stance_ankle, torso; /* rad */
    double cd_sagittal, cv_sagittal, cd_coronal, cv_coronal;                     /* rad/m, rad s/m */
} sc_simbicon_state;

enum { SC_LEFT = 0, SC_RIGHT = 1 };
#define SC_SIMBICON_MAX_GAINS 64

typedef struct sc_simbicon_params {
    sc_simbicon_state state[2];
    char pelvis[SC_NAME_LEN];
    char thigh[2][SC_NAME_LEN], shin[2][SC_NAME_LEN], foot[2][SC_NAME_LEN], upperarm[2][SC_NAME_LEN]; /* [SC_LEFT], [SC_RIGHT] */
    double forward[3]; /* the character's forward at rest (unit, horizontal) */
    double arm_down;   /* rad: the upper arms held this far out from hanging straight down */
    double heading;    /* rad about up: the wanted heading, from the rest forward */
    int first_stance;  /* SC_LEFT or SC_RIGHT */
    /* PD gains SIMBICON sets on its joints (Yin 2007 tunes its own), over the character's */
    int ngains;
    char gain_bone[SC_SIMBICON_MAX_GAINS][SC_NAME_LEN];
    double gain_kp[SC_SIMBICON_MAX_GAINS], gain_kd[SC_SIMBICON_MAX_GAINS]; /* N m/rad, N m s/rad */
} sc_simbicon_params;

void sc_simbicon_default_params(sc_simbicon_params *p);

typedef struct sc_simbicon {
    sc_simbicon_params p;
    int nb, pelvis, thigh[2], shin[2], foot[2], arm[2];
    double knee_sign[2]; /* hinge angle of a knee flexion */
    sc_vec3 up, fwd, left;
    sc_quat *stand; /* [nb] the neutral stance every target starts from: legs straight down, feet
                       level, arms hanging arm_down out */
    /* the state machine */
    int stance, state;
    double state_start; /* s; NAN before the first step */
    long steps;         /* foot strikes so far */
} sc_simbicon;

/* Resolves the bones by name and builds the neutral stance; SC_EINPUT naming a missing bone or
 * a joint of the wrong kind (knees must be hinges). */
int sc_simbicon_init(sc_simbicon *c, const sc_model *m, const sc_simbicon_params *p, sc_err *err);
void sc_simbicon_free(sc_simbicon *c);
/* Writes the params' gains into m (the caller's copy of the character); SC_EINPUT naming an
 * unknown bone. */
int sc_simbicon_set_gains(const sc_simbicon_params *p, sc_model *m, sc_err *err);
/* Puts the character in the neutral stance, its lowest surface point `height` above the ground,
 * everything moving at vel (m/s); the caller settles it (sc_sim_settle). */
int sc_simbicon_start(const sc_simbicon *c, sc_sim *s, double height, const double vel[3], sc_err *err);
/* The PD targets of the current state, advancing the state machine (once per step). */
sc_target_source sc_simbicon_source(sc_simbicon *c);

#endif

/* A motion network as a character's controller ([BK] 3-6). Every step the feedback variables
 * are measured, the network is evaluated, and its outputs drive the physics module ([BK] 4):
 *   targets     joint angles from a neutral stance (sc_model_stand_pose: legs straight down,
 *               feet level, arms hanging), tracked by the PD servos, in the parent's frame or
 *               the heading frame ([BK] 4.1: the root's heading, the world's up);
 *   gains       servo gain multipliers (sc_sim_set_gain_scale);
 *   torso       a virtual torque that turns the root to a wanted lean and heading, handed to the
 *               stance legs ([BK] 4.2: the stance hip carries it; in double support both, by
 *               their loads);
 *   com         a virtual force on the centre of mass toward a wanted offset from the support
 *               and a wanted speed, through the stance legs ([BK] 4.2);
 *   effectors   height goals for a bone's tip through the chain up to a base bone (a swing foot
 *               lifted over an obstacle);
 *   legs        the root's pose over the feet, solved for by inverse kinematics ([BK] 8's jump:
 *               "the root joint position and orientation in the sagittal plane ... while the
 *               feet were stationary and solved for with IK"): the root lowered by `drop`,
 *               moved `forward` and pitched by `pitch` over feet that stay where the neutral
 *               stance has them, the feet turned `toe` from level; hip, knee and ankle flex
 *               targets of both legs, in the parent's frame;
 *   gravity     compensation of the weight below the listed joints.
 *
 * Angles are about the character's axes (up +y, forward as configured, left = up x forward),
 * each bone's as it points in the neutral stance: `flex` swings the bone's tip forward (a bone that points forward: up), `abduct`
 * swings it outward (away from the midline; a midline bone: to the left), `twist` turns it
 * about itself (right-handed about its tip; mirrored on the right side). So one node can drive
 * both sides of a symmetric motion ([BK] 6: one trajectory connected to both feet).
 *
 * The stance: the stance foot becomes the swing foot when the other touches down at least
 * `min_step` seconds after the stance began ([BK] 8's stance state step function).
 *
 * Feedback variables (sc_net_feedback_names): stance (1 while the left foot stands), step_time
 * (s since the stance began), com_forward / com_left (m: the centre of mass from the stance
 * ankle, heading frame), com_vel_forward / com_vel_left (m/s), left_load / right_load (each
 * foot's ground load over the body weight), pitch / roll (rad: the root's lean forward and to
 * the left), heading (rad about up, from the rest forward), swing_height (m: the swing foot's
 * tip above the ground). */
#ifndef SC_NETWORK_CONTROLLER_H
#define SC_NETWORK_CONTROLLER_H
#include "network/tdag.h"
#include "sampling/rollout.h"
#include "sim/sim.h"

enum {
    SC_FB_STANCE = 0,
    SC_FB_STEP_TIME,
    SC_FB_COM_FORWARD,
    SC_FB_COM_LEFT,
    SC_FB_COM_VEL_FORWARD,
    SC_FB_COM_VEL_LEFT,
    SC_FB_LEFT_LOAD,
    SC_FB_RIGHT_LOAD,
    SC_FB_PITCH,
    SC_FB_ROLL,
    SC_FB_HEADING,
    SC_FB_SWING_HEIGHT,
    SC_FB_COUNT
};
extern const char *const sc_net_feedback_names[SC_FB_COUNT];

enum { SC_NET_FLEX = 0, SC_NET_ABDUCT = 1, SC_NET_TWIST = 2 };

typedef struct sc_net_target {
    int bone;
    int node[3]; /* [SC_NET_FLEX..TWIST]: the node giving that angle (rad), -1: none */
    int heading; /* 1: relative to the heading frame, 0: to the parent */
} sc_net_target;

typedef struct sc_net_gain {
    int bone; /* -1: every servo */
    int node;
} sc_net_gain;

typedef struct sc_net_effector {
    int bone, base;
    int node;      /* the wanted height of the bone's tip above the ground (m) */
    double kp, kd; /* N/m, N s/m */
} sc_net_effector;

#define SC_NET_MAX_OUTPUTS 64

/* What simulate reads from controller.network (settings/network.h); immutable once read. */
typedef struct sc_net_params {
    sc_network net;
    int foot[2];       /* [SC_LEFT = 0], [SC_RIGHT = 1] */
    int arm[2];        /* the upper arms hung in the neutral stance (-1: none) */
    double arm_down;   /* rad: how far out they hang */
    double forward[3]; /* the character's forward at rest */
    double min_step;   /* s */
    int first_stance;  /* 0 left, 1 right */
    int ntargets, ngains, neffectors;
    sc_net_target target[SC_NET_MAX_OUTPUTS];
    sc_net_gain gain[SC_NET_MAX_OUTPUTS];
    sc_net_effector effector[SC_NET_MAX_OUTPUTS];
    /* torso: wanted lean forward, lean left and heading, and a gain multiplier (nodes, -1: 0 rad,
       a multiplier of 1); kp 0: off */
    int torso_node[4];
    double torso_kp, torso_kd; /* N m/rad, N m s/rad */
    /* com: wanted offset forward / left of the support, speed forward / left, and a gain
       multiplier (nodes, -1: 0, a multiplier of 1); kp and kd 0: off */
    int com_node[5];
    double com_kp, com_kd; /* N/m, N s/m */
    /* legs: the root's drop (m), forward offset (m), pitch (rad) over the feet and the feet's
       turn (rad) (nodes, -1: 0); legs 0: off */
    int legs, legs_node[4];
    unsigned char gravity[SC_SIM_MAX_BONES]; /* 1: compensate below this joint */
    double torque_scale;                     /* the virtual torques' bound, times each joint's torque limit */
} sc_net_params;

typedef struct sc_net_controller {
    const sc_net_params *p;
    const sc_model *m;
    int nb;
    sc_vec3 up, fwd, left;
    double side[SC_SIM_MAX_BONES];         /* +1 left of the midline, -1 right, 0 on it (rest) */
    sc_quat stand[SC_SIM_MAX_BONES];       /* the neutral stance: local rotations ... */
    sc_quat stand_world[SC_SIM_MAX_BONES]; /* ... and world ones, the root upright */
    sc_vec3 axis[SC_SIM_MAX_BONES][3];     /* each bone's flex, abduct, twist axes in the stance (world) */
    int top[2];                            /* each leg's bone below the root (the hip) */
    int shin[2];                           /* legs: the bone between the hip's and the foot */
    double thigh_len[2], shin_len[2];      /* legs: hip to knee, knee to ankle (m) */
    double hip_at[2][2], ankle_at[2][2];   /* legs: forward, up from the root in the stance (m) */
    double leg_rest[2][2];                 /* legs: the IK's hip and knee angles in the stance */
    int *carrier;                          /* [nnodes] the bone that carries each node */
    double body_mass;                      /* kg: the whole body, flesh included */
    /* state */
    sc_network_state ns;
    int stance;
    double stance_start; /* s; NAN before the first step */
    long steps;          /* stance changes so far */
    double feedback[SC_FB_COUNT];
    double tau[3 * SC_SIM_MAX_BONES], scale[SC_SIM_MAX_BONES];
    sc_vec3 com_now;                                                 /* the centre of mass this step (measured once) */
    double mass[SC_SIM_MAX_BONES];                                   /* kg each bone carries, flesh included */
    double com[3 * SC_SIM_MAX_BONES], scratch[4 * SC_SIM_MAX_BONES]; /* their centres this step */
} sc_net_controller;

/* Binds the params to the character (m: the simulated one); SC_EINPUT when a foot is not below
 * the root by way of a child of the root, or the forward is not horizontal. */
int sc_net_controller_init(sc_net_controller *c, const sc_net_params *p, const sc_model *m, sc_err *err);
void sc_net_controller_free(sc_net_controller *c);
/* Puts the character in the neutral stance, its lowest point `height` above the ground, moving
 * at vel (m/s); the caller settles it (sc_sim_settle). */
int sc_net_controller_start(const sc_net_controller *c, sc_sim *s, double height, const double vel[3], sc_err *err);
void sc_net_params_free(sc_net_params *p);
/* The target source: eval measures, evaluates and sets the targets; actuate sets the joint
 * torques and gain multipliers it decided. */
sc_target_source sc_net_controller_source(sc_net_controller *c);

#endif

/* Motion networks ([BK]): every operation node against values computed by hand, read from YAML
 * as a designer writes them; bad networks (a cycle, an unknown node or feedback variable, a node
 * of two kinds) are refused naming the line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/rng.h"
#include "fixtures.h"
#include "io/config.h"
#include "io/h5.h"
#include "network/controller.h"
#include "network/physics.h"
#include "network/rbf.h"
#include "sampling/rollout.h"
#include "settings/scenario.h"
#include "settings/network.h"
#include "sim/sim.h"
#include "sim/skeleton.h"
#include "store/character.h"
#include "test.h"

static const char *const feedback_names[] = {"stance", "com_forward"};
static char out_text[16384];

static int load(const char *yaml, sc_cfg **cfg, sc_network *n, sc_err *err)
{
    sc_network_init(n, 0);
    *cfg = NULL;
    int rc = sc_cfg_load_string(yaml, "net.yaml", cfg, err);
    if (rc) return rc;
    return sc_network_read(sc_cfg_get(sc_cfg_root(*cfg), "nodes"), feedback_names, 2, n, err);
}

/* value of node `name` after evaluating at t with the given feedback */
static double at(const sc_network *n, sc_network_state *s, const char *name, double t, double stance)
{
    const double fb[2] = {stance, 0.25};
    sc_network_eval(n, s, t, fb);
    return s->value[sc_network_find(n, name)];
}

/* The Hermite basis by hand: h(s) = (2s^3 - 3s^2 + 1) v0 + (s^3 - 2s^2 + s) h m0 + (3s^2 - 2s^3) v1 +
   (s^3 - s^2) h m1 */
static double hermite(double s, double h, double v0, double m0, double v1, double m1)
{
    return (2 * s * s * s - 3 * s * s + 1) * v0 + (s * s * s - 2 * s * s + s) * h * m0 + (3 * s * s - 2 * s * s * s) * v1 +
        (s * s * s - s * s) * h * m1;
}

TEST(network_nodes_match_hand_computed_values)
{
    const char *yaml = "nodes:\n"
                       "  - {name: sum, add: [k, fb, ease]}\n" /* declared before its inputs */
                       "  - {name: k, const: 0.5}\n"
                       "  - {name: fb, feedback: com_forward}\n"
                       "  - {name: ease, spline: [[0, 0, 0], [1, 1, 0]]}\n"
                       "  - {name: hat, spline: [[0, 0], [1, 1], [2, 0]]}\n"
                       "  - {name: ring, spline: [[0, 0], [1, 1], [2, 0]], loop: true}\n"
                       "  - {name: ramp, spline: [[0, 2], [2, 4]]}\n"
                       "  - {name: prod, multiply: [k, ring]}\n"
                       "  - {name: beat, step: [[0, 1], [0.4, 0], [1.0, 0]], loop: true}\n"
                       "  - {name: stance, feedback: stance}\n"
                       "  - {name: pick, switch: [beat, ease, ramp]}\n"
                       "  - {name: gate, switch: [stance, k]}\n"
                       "  - {name: swing, modulate: [beat, ease, ramp]}\n"
                       "  - {name: felt, modulate: [stance, ease], expected: 0.5}\n";
    sc_cfg *cfg;
    sc_network n;
    sc_network_state s;
    sc_err err = {0};
    ENSURE_OK(load(yaml, &cfg, &n, &err), &err);
    ENSURE_OK(sc_network_state_init(&n, &s, &err), &err);
    /* add (three inputs, one a feedback variable), const, a spline with given tangents */
    ENSURE_NEAR(at(&n, &s, "sum", 0.25, 1), 0.5 + 0.25 + hermite(0.25, 1, 0, 0, 1, 0), 1e-15);
    ENSURE_NEAR(hermite(0.25, 1, 0, 0, 1, 0), 0.15625, 1e-15);
    /* Catmull-Rom tangents: the ends one-sided (1, -1), the middle (0 - 0) / 2 = 0 */
    ENSURE_NEAR(s.value[sc_network_find(&n, "hat")], hermite(0.25, 1, 0, 1, 1, 0), 1e-15);
    ENSURE_NEAR(at(&n, &s, "hat", 1.5, 1), hermite(0.5, 1, 1, 0, 0, -1), 1e-15);
    ENSURE_NEAR(at(&n, &s, "hat", 7, 1), 0, 0); /* held at its last value */
    /* a two-point spline is a straight line */
    ENSURE_NEAR(at(&n, &s, "ramp", 0.5, 1), 2.5, 1e-15);
    /* a loop: period 2, tangents wrapped (0 at the ends), so 0.5, 2.5 and -1.5 agree */
    const double ring = hermite(0.5, 1, 0, 0, 1, 0);
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "ring", 0.5, 1), ring, 1e-15);
    ENSURE_NEAR(at(&n, &s, "ring", 2.5, 1), ring, 1e-15);
    ENSURE_NEAR(s.value[sc_network_find(&n, "prod")], 0.5 * ring, 1e-15);
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "ring", -1.5, 1), ring, 1e-15);
    /* step function: high in [0, 0.4) of every second, low in [0.4, 1) */
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "beat", 0.1, 1), 1, 0);
    ENSURE_NEAR(at(&n, &s, "beat", 0.45, 1), 0, 0);
    ENSURE_NEAR(at(&n, &s, "beat", 1.05, 1), 1, 0);
    /* switch: the first input while high, the second while low, 0 without one */
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "pick", 0.2, 1), hermite(0.2, 1, 0, 0, 1, 0), 1e-15);
    ENSURE_NEAR(at(&n, &s, "pick", 0.5, 1), 2.5, 1e-15);
    ENSURE_NEAR(at(&n, &s, "gate", 0.6, 1), 0.5, 0);
    ENSURE_NEAR(at(&n, &s, "gate", 0.7, 0), 0, 0);
    /* modulate over a step function: each step's trajectory scaled to the step's known length:
       the high step [0, 0.4) plays ease's [0, 1], the low step [0.4, 1) ramp's [0, 2] */
    sc_network_state_reset(&n, &s);
    ENSURE_NEAR(at(&n, &s, "swing", 0.1, 1), hermite(0.25, 1, 0, 0, 1, 0), 1e-15);
    ENSURE_NEAR(at(&n, &s, "swing", 0.2, 1), 0.5, 1e-15);
    ENSURE_NEAR(at(&n, &s, "swing", 0.7, 1), 3, 1e-14);
    ENSURE_NEAR(at(&n, &s, "swing", 1.3, 1), hermite(0.75, 1, 0, 0, 1, 0), 1e-14); /* the next period */
    /* modulate over a feedback step: the first high step is expected to last 0.5 s, later ones
       as long as the last did (0.3 s here); a step that lasts longer holds the end value */
    sc_network_state_reset(&n, &s);
    double t = 0;
    for (; t < 0.15 - 1e-9; t += 0.01) at(&n, &s, "felt", t, 1);
    ENSURE_NEAR(at(&n, &s, "felt", 0.15, 1), hermite(0.3, 1, 0, 0, 1, 0), 1e-12);
    for (t = 0.16; t < 0.3 - 1e-9; t += 0.01) at(&n, &s, "felt", t, 1);
    for (t = 0.3; t < 0.5 - 1e-9; t += 0.01) ENSURE_NEAR(at(&n, &s, "felt", t, 0), 0, 0); /* low: no second trajectory */
    ENSURE_NEAR(at(&n, &s, "felt", 0.5, 1), 0, 1e-15);                                    /* a new high step begins */
    ENSURE_NEAR(at(&n, &s, "felt", 0.65, 1), 0.5, 1e-12);                                 /* half of 0.3 s */
    ENSURE_NEAR(at(&n, &s, "felt", 0.95, 1), 1, 0);                                       /* past its length: held */
    sc_network_state_free(&s);
    sc_network_free(&n);
    sc_cfg_free(cfg);
}

/* each bad network names the line of the culprit */
TEST(network_bad_configs_name_the_line)
{
    static const struct {
        const char *yaml, *expect;
    } cases[] = {
        {"nodes:\n  - {name: a, add: [b]}\n  - {name: b, multiply: [a, c]}\n  - {name: c, const: 1}\n",
         "net.yaml:2:5: node 'a' is on a cycle (a <- b <- a)"},
        {"nodes:\n  - {name: a, const: 1}\n  - {name: b, add: [a,\n        ghost]}\n",
         "net.yaml:4:9: 'ghost' is not a node of the network (its nodes: a, b)"},
        {"nodes:\n  - {name: f, feedback: stanse}\n", "did you mean 'stance'"},
        {"nodes:\n  - {name: a, const: 1, spline: [[0, 1], [1, 2]]}\n", "net.yaml:2:5: node 'a' is both a const and a spline"},
        {"nodes:\n  - {name: a, const: 1}\n  - {name: a, const: 2}\n", "net.yaml:3:5: a second node called 'a' (the first at net.yaml:2:5)"},
        {"nodes:\n  - {name: s, spline: [[0, 1], [0, 2]]}\n", "net.yaml:2:5: spline 's': point 1's time 0 does not follow 0"},
        {"nodes:\n  - {name: s, step: [[0, 1], [1, 0.5]]}\n", "point 1's value 0.5 is neither 0 nor 1"},
        {"nodes:\n  - {name: k, const: 1}\n  - {name: m, modulate: [k, k]}\n",
         "net.yaml:3:5: modulate 'm' scales trajectories in time: 'k' is a constant"},
        {"nodes:\n  - {name: k, const: 1}\n  - {name: p, multiply: [k]}\n", "net.yaml:3:5: multiply 'p' takes 2 inputs, not 1"},
        {"nodes:\n  - {name: k}\n", "net.yaml:2:5: node 'k' has no kind"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sc_cfg *cfg = NULL;
        sc_network n;
        sc_err err = {0};
        const int rc = load(cases[i].yaml, &cfg, &n, &err);
        ENSURE_MSG(rc == SC_EINPUT && strstr(err.msg, cases[i].expect), "case %zu: rc %d, message: %s", i, rc, err.msg);
        sc_network_free(&n);
        sc_cfg_free(cfg);
    }
}

/* ---- the physics module ([BK] 4) against finite differences ---- */

/* world frames from the root's and the joints' local rotations (bone frames at rest are world
   aligned with their origin at the joint) */
static void forward_kinematics(const sc_model *m, sc_xform root, const sc_quat *local, sc_xform *pose)
{
    pose[0] = root;
    for (int b = 1; b < m->nbones; b++) {
        const sc_xform *p = &pose[m->parent[b]];
        const sc_vec3 off = sc_v3_sub(sc_v3_load(m->joint_pos + 3 * b), sc_v3_load(m->joint_pos + 3 * m->parent[b]));
        pose[b].q = sc_q_mul(p->q, local[b]);
        pose[b].p = sc_v3_add(p->p, sc_q_rotate(p->q, off));
    }
}

/* the pose with bone b's subtree turned by angle about world axis a through b's joint, then the
   whole body moved rigidly so that bone `fixed` stays where it was */
static void turn_joint(const sc_model *m, sc_xform root, const sc_quat *local, int b, sc_vec3 a, double angle, int fixed, sc_xform *pose,
                       sc_quat *scratch)
{
    sc_xform ref[64];
    forward_kinematics(m, root, local, ref);
    memcpy(scratch, local, (size_t)m->nbones * sizeof *scratch);
    const sc_quat parent = ref[m->parent[b]].q; /* a world turn as a change of the local rotation */
    scratch[b] = sc_q_mul(sc_q_mul(sc_q_conj(parent), sc_q_mul(sc_q_axis_angle(a, angle), parent)), local[b]);
    forward_kinematics(m, root, scratch, pose);
    /* the rigid motion taking the turned `fixed` back to where it was */
    const sc_quat back = sc_q_mul(ref[fixed].q, sc_q_conj(pose[fixed].q));
    const sc_vec3 at = pose[fixed].p;
    for (int k = 0; k < m->nbones; k++) {
        pose[k].q = sc_q_mul(back, pose[k].q);
        pose[k].p = sc_v3_add(ref[fixed].p, sc_q_rotate(back, sc_v3_sub(pose[k].p, at)));
    }
}

TEST(network_virtual_force_torques_are_the_jacobian_transpose)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_model m;
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    ENSURE(m.nbones <= 64);
    const int hand = sc_model_bone_index(&m, "l_hand"), foot = sc_model_bone_index(&m, "r_foot"), spine = sc_model_bone_index(&m, "spine");
    ENSURE(hand > 0 && foot > 0 && spine > 0);
    /* a pose away from rest: every joint turned, hinges about their axes only */
    sc_rng rng;
    sc_rng_init(&rng, 7, 0, 0);
    sc_quat local[64], scratch[64];
    for (int b = 0; b < m.nbones; b++) {
        sc_vec3 a = m.joint_type[b] == SC_JOINT_HINGE ? sc_v3_load(m.hinge_axis + 3 * b)
                                                      : sc_v3_normalize(sc_v3(sc_rng_normal(&rng), sc_rng_normal(&rng), sc_rng_normal(&rng)));
        local[b] = sc_q_axis_angle(a, 0.5 * sc_rng_normal(&rng));
    }
    const sc_xform root = {local[0], sc_v3(0.3, 1.0, -0.2)};
    sc_xform pose[64], moved[64];
    forward_kinematics(&m, root, local, pose);
    const sc_vec3 f = sc_v3(12, -30, 7); /* N */
    double worst = 0, scale = 0;
    for (int mode = 0; mode < 2; mode++) {
        /* 0: the hand pushed with the spine as base; 1: the root pushed over the standing foot */
        const int effector = mode ? 0 : hand, fixed = mode ? foot : spine;
        const sc_vec3 local_p = sc_v3(0.05, -0.02, 0.03); /* the point, in the effector's frame */
        const sc_vec3 p = sc_v3_add(pose[effector].p, sc_q_rotate(pose[effector].q, local_p));
        double tau[3 * 64] = {0};
        if (mode) sc_vf_support(&m, pose, foot, p, f, tau);
        else sc_vf_chain(&m, pose, hand, spine, p, f, tau);
        /* virtual work: turning joint b by eps about a moves p by dp, and tau_b . a = f . dp / eps */
        int joints = 0;
        for (int b = 1; b < m.nbones; b++) {
            const int on_chain = mode ? sc_bone_is_below(&m, foot, b) : sc_bone_is_below(&m, hand, b) && !sc_bone_is_below(&m, spine, b);
            for (int k = 0; k < 3; k++) {
                sc_vec3 a = sc_v3(k == 0, k == 1, k == 2);
                if (m.joint_type[b] == SC_JOINT_HINGE) {
                    if (k) continue;
                    a = sc_q_rotate(pose[b].q, sc_v3_load(m.hinge_axis + 3 * b));
                }
                const double eps = 1e-6;
                double fd = 0;
                if (on_chain) {
                    double side[2];
                    for (int s = 0; s < 2; s++) {
                        turn_joint(&m, root, local, b, a, s ? -eps : eps, fixed, moved, scratch);
                        side[s] = sc_v3_dot(f, sc_v3_add(moved[effector].p, sc_q_rotate(moved[effector].q, local_p)));
                    }
                    fd = (side[0] - side[1]) / (2 * eps);
                    joints++;
                }
                const double analytic = sc_v3_dot(sc_v3_load(tau + 3 * b), a);
                worst = fmax(worst, fabs(analytic - fd));
                scale = fmax(scale, fabs(fd));
                ENSURE_MSG(fabs(analytic - fd) < 1e-6 * (1 + fabs(fd)), "mode %d bone %s axis %d: J^T f %.9g, finite difference %.9g", mode,
                           m.bone_name[b], k, analytic, fd);
            }
            if (m.joint_type[b] == SC_JOINT_HINGE) { /* a hinge carries its axis' component only */
                const sc_vec3 a = sc_q_rotate(pose[b].q, sc_v3_load(m.hinge_axis + 3 * b)), t = sc_v3_load(tau + 3 * b);
                ENSURE(sc_v3_norm(sc_v3_sub(t, sc_v3_scale(a, sc_v3_dot(t, a)))) < 1e-12);
            }
        }
        ENSURE(joints >= (mode ? 5 : 6));
    }
    /* gravity compensation: the torque that holds each joint is the gradient of the potential
       energy of what lies below it */
    double mass[64], com[3 * 64], tau[3 * 64] = {0}, scratch4[4 * 64];
    unsigned char all[64];
    const double g[3] = {0, -9.81, 0};
    for (int b = 0; b < m.nbones; b++) {
        mass[b] = m.bone_mass[b];
        all[b] = 1;
        const sc_vec3 c = sc_v3_sub(sc_v3_load(m.bone_com + 3 * b), sc_v3_load(m.joint_pos + 3 * b));
        sc_v3_store(com + 3 * b, sc_v3_add(pose[b].p, sc_q_rotate(pose[b].q, c)));
    }
    sc_vf_gravity(&m, pose, mass, com, all, g, scratch4, tau);
    for (int b = 1; b < m.nbones; b++)
        for (int k = 0; k < 3; k++) {
            sc_vec3 a = sc_v3(k == 0, k == 1, k == 2);
            if (m.joint_type[b] == SC_JOINT_HINGE) {
                if (k) continue;
                a = sc_q_rotate(pose[b].q, sc_v3_load(m.hinge_axis + 3 * b));
            }
            double energy[2];
            for (int s = 0; s < 2; s++) {
                turn_joint(&m, root, local, b, a, s ? -1e-6 : 1e-6, 0, moved, scratch);
                energy[s] = 0;
                for (int d = 0; d < m.nbones; d++) {
                    const sc_vec3 c = sc_v3_sub(sc_v3_load(m.bone_com + 3 * d), sc_v3_load(m.joint_pos + 3 * d));
                    energy[s] -= mass[d] * sc_v3_dot(sc_v3_load(g), sc_v3_add(moved[d].p, sc_q_rotate(moved[d].q, c)));
                }
            }
            const double fd = (energy[0] - energy[1]) / 2e-6, analytic = sc_v3_dot(sc_v3_load(tau + 3 * b), a);
            ENSURE_MSG(fabs(analytic - fd) < 1e-5 * (1 + fabs(fd)), "gravity, bone %s axis %d: %.9g against %.9g", m.bone_name[b], k, analytic, fd);
        }
    sc_test_report("J^T f against central differences over %d bones: worst difference %.2g N m (torques up to %.3g N m)", m.nbones, worst, scale);
    sc_model_free(&m);
}

/* The step's joint torques are internal (no momentum from them, soft or rigid), a servo's gain
 * multiplier changes how hard it pulls, and a snapshot carries both. */
TEST(network_joint_torques_are_internal_and_gains_scale)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_model m;
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    const int knee = sc_model_bone_index(&m, "l_shin"), arm = sc_model_bone_index(&m, "r_upperarm");
    ENSURE(knee > 0 && arm > 0 && m.nbones <= 64);
    for (int model = SC_CONTACT_SOFT; model <= SC_CONTACT_RIGID; model++) {
        sc_sim_opts o;
        sc_sim_default_opts(&o);
        o.contact_model = model;
        o.contact.enabled = 0;
        o.gravity[1] = 0;
        sc_sim *s;
        ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
        double tau[3 * 64] = {0};
        tau[3 * knee + 0] = 150; /* against the servo holding it straight (kp 1500) */
        tau[3 * arm + 1] = -25;
        tau[3 * arm + 2] = 10;
        sc_sim_set_joint_torques(s, tau);
        sc_sim_diag d0, d1;
        sc_sim_diagnostics(s, &d0);
        for (int k = 0; k < 200; k++) ENSURE_OK(sc_sim_step(s, &err), &err);
        sc_sim_diagnostics(s, &d1);
        double dl = 0, da = 0, moved = 0;
        for (int k = 0; k < 3; k++) {
            dl = fmax(dl, fabs(d1.linear[k] - d0.linear[k]));
            da = fmax(da, fabs(d1.angular[k] - d0.angular[k]));
        }
        sc_quat local[64];
        sc_skeleton_local_rotations(s->skel, local);
        moved = sc_q_angle_between(local[knee], sc_q_identity());
        sc_test_report("%s: 0.2 s of joint torques turned the knee %.3f rad; momentum change %.2g kg m/s, angular %.2g kg m^2/s",
                       model == SC_CONTACT_RIGID ? "rigid" : "soft", moved, dl, da);
        ENSURE(moved > 0.05);
        ENSURE(dl < 1e-9 && da < 1e-6);
        sc_sim_free(s);
    }
    /* the knee pulled toward 0.05 rad for 20 ms with its gains x 0.01, x 1 and x 4 (kp x a, kd x sqrt a:
       the stable servo's pull goes as kp / kd, sqrt a) */
    double turned[3];
    const double scales[3] = {0.01, 1, 4};
    size_t cap = 0, size = 0;
    unsigned char *snap = NULL;
    for (int i = 0; i < 3; i++) {
        sc_sim_opts o;
        sc_sim_default_opts(&o);
        o.contact_model = SC_CONTACT_RIGID;
        o.contact.enabled = 0;
        o.gravity[1] = 0;
        sc_sim *s;
        ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
        sc_quat target[64];
        double scale[64];
        for (int b = 0; b < m.nbones; b++) {
            target[b] = sc_q_identity();
            scale[b] = scales[i];
        }
        target[knee] = sc_q_axis_angle(sc_v3_load(m.hinge_axis + 3 * knee), 0.05);
        sc_sim_set_targets(s, target);
        sc_sim_set_gain_scale(s, scale);
        for (int k = 0; k < 20; k++) ENSURE_OK(sc_sim_step(s, &err), &err);
        sc_quat local[64];
        sc_skeleton_local_rotations(s->skel, local);
        turned[i] = sc_q_angle_between(local[knee], sc_q_identity());
        if (i == 2) { /* a snapshot restores the scaled gains: the same future, bit for bit */
            cap = sc_sim_snapshot_capacity(s);
            snap = malloc(cap);
            ENSURE(snap && (size = sc_sim_snapshot_save(s, snap, cap)) > 0);
            double x1[3];
            for (int k = 0; k < 20; k++) ENSURE_OK(sc_sim_step(s, &err), &err);
            memcpy(x1, s->x, sizeof x1);
            sc_skeleton_local_rotations(s->skel, local);
            const sc_quat after = local[knee];
            sc_sim *r;
            ENSURE_OK(sc_sim_create(&m, &o, &r, &err), &err);
            ENSURE_OK(sc_sim_snapshot_restore(r, snap, size, &err), &err);
            for (int k = 0; k < 20; k++) ENSURE_OK(sc_sim_step(r, &err), &err);
            sc_skeleton_local_rotations(r->skel, local);
            ENSURE(!memcmp(&after, &local[knee], sizeof after) && !memcmp(x1, r->x, sizeof x1));
            sc_sim_free(r);
            free(snap);
        }
        sc_sim_free(s);
    }
    sc_test_report("knee turned in 20 ms toward 0.05 rad with gains x 0.01 / 1 / 4: %.4f / %.4f / %.4f rad", turned[0], turned[1], turned[2]);
    ENSURE(turned[0] < 0.2 * turned[1] && turned[2] > 1.5 * turned[1]);
    sc_model_free(&m);
}

/* ---- the network as a controller: [BK] 8's walker ---- */

typedef struct {
    double start[3], min_height, max_heading;
    int bone;   /* >= 0: follow this bone's tip height */
    double tip; /* m above the ground, at the last state */
    double max_height;
} walk_watch;

static int watch_walk(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    walk_watch *w = ctx;
    w->min_height = fmin(w->min_height, s->pose[0].p.y);
    w->max_height = fmax(w->max_height, s->pose[0].p.y);
    w->max_heading = fmax(w->max_heading, fabs(sc_q_heading(s->pose[0].q)));
    if (w->bone >= 0) {
        const int b = w->bone;
        const sc_vec3 r = sc_v3_sub(sc_v3_load(s->m->bone_end + 3 * b), sc_v3_load(s->m->joint_pos + 3 * b));
        w->tip = sc_ground_height(&s->o.contact.ground, sc_v3_add(s->pose[b].p, sc_q_rotate(s->pose[b].q, r)), NULL);
    }
    return 0;
}

/* configs/networks/NAME.yaml (or the config at path NAME) on the CMU Michelin for `seconds`: the
   root's way and extremes */
static int run_walker(const sc_model *loaded, const char *name, double seconds, walk_watch *w, double end[3], sc_quat *last_pose)
{
    sc_err err = {0};
    sc_cfg *cfg;
    sc_cfg_node *ctl;
    char path[4096];
    snprintf(path, sizeof path, "configs/networks/%s.yaml", name);
    CHECK(!sc_cfg_load_file(strchr(name, '/') ? name : sc_test_repo(path), &cfg, &err), "%s", err.msg);
    sc_scenario sc;
    sc_net_params p;
    CHECK(!sc_scenario_read(cfg, loaded, &sc, &err) && !sc_cfg_section(sc_cfg_root(cfg), "controller", &ctl, &err) &&
              !sc_net_params_read(ctl, loaded, &p, &err),
          "%s", err.msg);
    sc_cfg_free(cfg);
    sc_sim *s;
    sc_net_controller c;
    CHECK(!sc_sim_create(loaded, &sc.sim, &s, &err) && !sc_net_controller_init(&c, &p, s->m, &err) &&
              !sc_net_controller_start(&c, s, sc.drop_height, sc.init_vel, &err) && !sc_sim_settle(s, &err),
          "%s", err.msg);
    *w = (walk_watch){{s->pose[0].p.x, s->pose[0].p.y, s->pose[0].p.z}, INFINITY, 0, w->bone, NAN, -INFINITY};
    sc_quat targets[64];
    sc_rollout_result res;
    CHECK(!sc_rollout(s, sc_net_controller_source(&c), NULL, s->step + lround(seconds / sc.sim.dt), watch_walk, w, targets, &res, &err), "%s",
          err.msg);
    sc_v3_store(end, s->pose[0].p);
    for (int b = 0; b < s->nb; b++) last_pose[b] = s->pose[b].q;
    sc_net_controller_free(&c);
    sc_net_params_free(&p);
    sc_sim_free(s);
    return 1;
}

/* the same network file walks the rigid and the soft character, upright and on its heading, and
   a second run is bit-identical */
TEST(network_walker_walks_rigid_and_soft)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_model m;
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    static const struct {
        const char *name;
        double seconds, min_distance;
    } runs[] = {{"walker_rigid", 10, 7}, {"walker_soft", 4, 2}};
    for (int r = 0; r < 2; r++) {
        walk_watch w = {.bone = -1};
        double end[3];
        sc_quat pose[64], again[64];
        ENSURE(run_walker(&m, runs[r].name, runs[r].seconds, &w, end, pose));
        const double forward = end[2] - w.start[2], sideways = end[0] - w.start[0];
        sc_test_report("%s, %.0f s: %.2f m forward, %.2f m sideways, the root never below %.3f m (%.3f at the start), heading within %.1f deg",
                       runs[r].name, runs[r].seconds, forward, sideways, w.min_height, w.start[1], w.max_heading * 180 / SC_PI);
        ENSURE(forward > runs[r].min_distance && fabs(sideways) < 0.1 * forward);
        ENSURE(w.min_height > 0.9 * w.start[1] && w.max_heading < 10 * SC_PI / 180);
        if (r == 0) { /* determinism */
            double end2[3];
            walk_watch w2 = {.bone = -1};
            ENSURE(run_walker(&m, runs[r].name, runs[r].seconds, &w2, end2, again));
            ENSURE(!memcmp(end, end2, sizeof end) && !memcmp(pose, again, (size_t)m.nbones * sizeof *pose));
        }
    }
    /* the torso's gain node at 0: no torso torque, and the walker falls within 5 s */
    FILE *src = fopen(sc_test_repo("configs/networks/walker_rigid.yaml"), "r");
    ENSURE(src);
    char text[8192], edited[8192];
    const size_t len = fread(text, 1, sizeof text - 1, src);
    fclose(src);
    text[len] = 0;
    const char *from = "heading: heading}", *at = strstr(text, from), *nodes = strstr(text, "    nodes:\n");
    ENSURE(at && nodes && nodes < at);
    snprintf(edited, sizeof edited, "%.*s      - {name: off, const: 0}\n%.*sheading: heading, gain: off}%s", (int)(nodes - text + 11), text,
             (int)(at - nodes - 11), nodes + 11, at + strlen(from));
    walk_watch w = {.bone = -1};
    double end[3];
    sc_quat pose[64];
    ENSURE(run_walker(&m, sc_test_write("walker_no_torso.yaml", edited), 5, &w, end, pose));
    sc_test_report("the torso's gain at 0: the root down to %.3f m within 5 s", w.min_height);
    ENSURE(w.min_height < 0.8 * w.start[1]);
    sc_model_free(&m);
}

/* [BK] 8's jump (configs/networks/jump.yaml: the root's pose over the feet by IK, a push of the
 * centre of mass): the root rises well above standing, the character lands ahead and stands
 * upright at the end */
TEST(network_jump_lands_ahead_and_stands)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_model m;
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    walk_watch w = {.bone = -1};
    double end[3];
    sc_quat pose[64];
    ENSURE(run_walker(&m, "jump", 5, &w, end, pose));
    const double forward = end[2] - w.start[2], rise = w.max_height - w.start[1];
    const double tilt = acos(fmin(1, sc_q_rotate(pose[0], sc_v3(0, 1, 0)).y));
    sc_test_report("jump: the root %.3f m above its start at the top, %.2f m forward after 5 s, tilted %.3f rad, %.3f m high (%.3f at the start)",
                   rise, forward, tilt, end[1], w.start[1]);
    ENSURE(rise > 0.25 && forward > 0.5 && forward < 1.0);
    ENSURE(tilt < 0.15 && end[1] > 0.95 * w.start[1]);
    sc_model_free(&m);
}

/* An effector's height goal through its chain ([BK] 4.2): the left foot, lifted with a bent
 * knee on softened servos, rises toward a goal of 0.1 or 0.3 m, and the higher goal lifts it
 * higher. */
TEST(network_effector_lifts_a_foot_to_its_goal)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_model m;
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    const double goals[2] = {0.1, 0.3};
    double tip[2];
    for (int k = 0; k < 2; k++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "simulation: {duration: 1, settle: 0.3}\ncontact: {model: rigid}\ncontroller:\n  type: network\n  network:\n"
                 "    feet: [l_foot, r_foot]\n    arms: [l_upperarm, r_upperarm]\n    nodes:\n"
                 "      - {name: lift, const: %g}\n      - {name: zero, const: 0}\n      - {name: hip, const: 0.6}\n"
                 "      - {name: knee, const: -1.2}\n      - {name: soft, const: 0.1}\n"
                 "    targets: [{bone: l_thigh, flex: hip}, {bone: l_shin, flex: knee}]\n"
                 "    gains: [{bone: l_thigh, node: soft}, {bone: l_shin, node: soft}]\n"
                 "    torso: {kp: 800, kd: 80, pitch: zero}\n"
                 "    effectors: [{bone: l_foot, base: pelvis, height: lift, kp: 1500, kd: 100}]\n",
                 goals[k]);
        walk_watch w = {.bone = sc_model_bone_index(&m, "l_foot")};
        double end[3];
        sc_quat pose[64];
        ENSURE(w.bone > 0 && run_walker(&m, sc_test_write("effector.yaml", text), 0.6, &w, end, pose));
        tip[k] = w.tip;
        ENSURE(w.min_height > 0.95 * w.start[1]); /* still standing on the other foot */
    }
    sc_test_report("the left foot's tip, goal 0.1 m: %.3f m; goal 0.3 m: %.3f m (servos at 0.1 x their gains)", tip[0], tip[1]);
    ENSURE(tip[0] > 0.05 && tip[0] < 0.15 && tip[1] > tip[0] + 0.05);
    sc_model_free(&m);
}

/* Gravity compensation below the listed joints: an arm raised on servos at 0.02 x their gains
 * sags without it and holds up with it; torque_scale bounds it (and every virtual torque) to a
 * share of each joint's torque limit. */
TEST(network_gravity_compensation_holds_a_weak_arm_up)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_model m;
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    double elbow[3];
    for (int k = 0; k < 3; k++) { /* without compensation, with it, with it bounded by torque_scale */
        char text[2048];
        snprintf(text, sizeof text,
                 "simulation: {duration: 1, settle: 0.3}\ncontact: {model: rigid}\ncontroller:\n  type: network\n  network:\n"
                 "    feet: [l_foot, r_foot]\n    arms: [l_upperarm, r_upperarm]\n    nodes:\n"
                 "      - {name: raise, const: 1.2}\n      - {name: soft, const: 0.02}\n      - {name: zero, const: 0}\n"
                 "    targets: [{bone: l_upperarm, abduct: raise}]\n    gains: [{bone: l_upperarm, node: soft}]\n"
                 "    torso: {kp: 800, kd: 80, pitch: zero}\n%s%s",
                 k ? "    gravity: [l_upperarm, l_forearm]\n" : "", k == 2 ? "    torque_scale: 0.01\n" : "");
        walk_watch w = {.bone = sc_model_bone_index(&m, "l_upperarm")};
        double end[3];
        sc_quat pose[64];
        ENSURE(w.bone > 0 && run_walker(&m, sc_test_write("gravity.yaml", text), 1, &w, end, pose));
        elbow[k] = w.tip;
    }
    sc_test_report("the raised left elbow after 1 s: %.3f m above the ground without gravity compensation, %.3f m with it, "
                   "%.3f m with it bounded to 1 %% of the joints' torque limits (torque_scale 0.01)",
                   elbow[0], elbow[1], elbow[2]);
    ENSURE(elbow[1] > elbow[0] + 0.06);
    ENSURE(elbow[2] < elbow[1] - 0.04);
    sc_model_free(&m);
}

/* network.legs ([BK] 8's jump: the root's pose over stationary feet, by IK): the targets put
   together by forward kinematics from the wanted root leave each ankle where the neutral stance
   has it and each foot level (then turned by toe); a leg asked past its reach stays straight */
TEST(network_legs_ik_keeps_the_feet_where_they_stand)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_model m;
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    ENSURE(m.nbones <= 64);
    static const double cases[][4] = {{0.15, 0, 0, 0},      {0.1, 0.1, 0, 0},        {0, 0, 0.3, 0},       {0, 0, 0, 0.3},
                                      {0.15, 0.08, 0.3, 0}, {0.25, -0.1, 0.5, -0.4}, {0.05, 0, -0.1, 0.2}, {-0.3, 0, 0, 0}};
    double worst = 0, worst_level = 0, worst_far = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "controller:\n  type: network\n  network:\n    feet: [l_foot, r_foot]\n    nodes:\n"
                 "      - {name: d, const: %g}\n      - {name: f, const: %g}\n      - {name: p, const: %g}\n      - {name: t, const: %g}\n"
                 "    legs: {drop: d, forward: f, pitch: p, toe: t}\n",
                 cases[i][0], cases[i][1], cases[i][2], cases[i][3]);
        sc_cfg *cfg;
        sc_cfg_node *ctl;
        sc_net_params p;
        ENSURE_OK(sc_cfg_load_file(sc_test_write("legs.yaml", text), &cfg, &err), &err);
        ENSURE_OK(sc_cfg_section(sc_cfg_root(cfg), "controller", &ctl, &err), &err);
        ENSURE_OK(sc_net_params_read(ctl, &m, &p, &err), &err);
        sc_cfg_free(cfg);
        sc_sim_opts o;
        sc_sim_default_opts(&o);
        sc_sim *s;
        sc_net_controller c;
        ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
        ENSURE_OK(sc_net_controller_init(&c, &p, s->m, &err), &err);
        sc_quat local[64];
        sc_target_source src = sc_net_controller_source(&c);
        src.eval(src.ctx, s, local);
        /* the stance with the root upright at the origin, and the targets from the wanted root */
        sc_xform stance[64], pose[64];
        forward_kinematics(&m, (sc_xform){c.stand[0], sc_v3(0, 0, 0)}, c.stand, stance);
        const sc_vec3 root_at = sc_v3_add(sc_v3_scale(c.fwd, cases[i][1]), sc_v3_scale(c.up, -cases[i][0]));
        forward_kinematics(&m, (sc_xform){sc_q_mul(sc_q_axis_angle(c.left, cases[i][2]), c.stand[0]), root_at}, local, pose);
        for (int k = 0; k < 2; k++) {
            const int foot = p.foot[k];
            const double miss = sc_v3_norm(sc_v3_sub(pose[foot].p, stance[foot].p));
            /* the foot's turn from its stance orientation: toe about -left */
            const sc_quat want = sc_q_mul(sc_q_axis_angle(sc_v3_scale(c.left, -1), cases[i][3]), stance[foot].q);
            const double level = sc_q_angle_between(pose[foot].q, want);
            if (cases[i][0] >= 0) {
                worst = fmax(worst, miss);
                worst_level = fmax(worst_level, level);
            } else { /* raised past the legs' reach: straight legs, the ankles below the hips */
                worst_far = fmax(worst_far, sc_q_angle_between(local[m.parent[foot]], c.stand[m.parent[foot]]));
            }
        }
        sc_net_controller_free(&c);
        sc_net_params_free(&p);
        sc_sim_free(s);
    }
    sc_test_report("the ankles from the IK's targets: %.2g m from where they stand, the feet %.2g rad from their wanted turn; "
                   "a root raised 0.3 m: knees bent %.3f rad",
                   worst, worst_level, worst_far);
    ENSURE(worst < 1e-6 && worst_level < 1e-6);
    ENSURE(worst_far < 1e-9);
    /* the legs' flex is the IK's: a target on a thigh's flex is refused */
    const char *both = sc_test_write("legs_both.yaml",
                                     "simulation: {duration: 0.1}\ncontroller:\n  type: network\n  network:\n"
                                     "    feet: [l_foot, r_foot]\n    nodes: [{name: d, const: 0.1}]\n"
                                     "    legs: {drop: d}\n    targets: [{bone: l_thigh, flex: d}]\n");
    int rc = sc_test_sh(out_text, sizeof out_text, "%s -c %s -o %s %s", sc_test_tool("simulate"), both, sc_test_tmp("legs_both.h5"), ch);
    ENSURE_MSG(rc == 2 && strstr(out_text, "'l_thigh' flexes by network.legs"), "exit %d: %s", rc, out_text);
    sc_model_free(&m);
}

/* a bad network in simulate's config: exit 2 naming the line, no output */
TEST(network_bad_controller_exits_2)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    static const struct {
        const char *body, *want;
    } bad[] = {
        {"    nodes:\n      - {name: a, add: [b]}\n      - {name: b, add: [a]}\n", "bad_net.yaml:8:9: node 'a' is on a cycle"},
        {"    nodes:\n      - {name: a, feedback: com_fwd}\n", "bad_net.yaml:8:29: 'controller.network.nodes[0].feedback' must be one of"},
        {"    nodes:\n      - {name: a, const: 1}\n    targets:\n      - {bone: l_knee, flex: a}\n", "bad_net.yaml:10:16: 'l_knee' is not a bone"},
        {"    nodes:\n      - {name: a, const: 1}\n    gains:\n      - {bone: all, node: b}\n", "bad_net.yaml:10:27: 'b' is not a node"},
        {"    nodes:\n      - {name: a, const: 1}\n    effectors:\n      - {bone: l_foot, base: r_thigh, height: a}\n", "must hang below its base"},
    };
    char text[1024];
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        snprintf(text, sizeof text,
                 "simulation: {duration: 0.01}\ncontact: {model: rigid}\ncontroller:\n  type: network\n  network:\n    feet: [l_foot, r_foot]\n%s",
                 bad[k].body);
        const char *cfg = sc_test_write("bad_net.yaml", text), *o = sc_test_tmp("bad_net.h5");
        const int rc = sc_test_sh(out_text, sizeof out_text, "%s -c %s -o %s %s", sc_test_tool("simulate"), cfg, o, ch);
        ENSURE_MSG(rc == 2 && strstr(out_text, bad[k].want) && !sc_test_file_exists(o), "case %zu: exit %d: %s", k, rc, out_text);
    }
    sc_test_report("%zu bad controller.network: exit 2 naming the line, no output; e.g. %s", sizeof bad / sizeof *bad, out_text);
}

/* [BK] 7's interpolation: through every sample exactly, linear functions everywhere, one sample
   as a constant, a repeated centre dropped */
TEST(network_rbf_reproduces_its_samples)
{
    sc_rng rng;
    sc_rng_init(&rng, 3, 0, 0);
    double c[8 * 2], y[8 * 3], out[3];
    for (int i = 0; i < 16; i++) c[i] = sc_rng_normal(&rng);
    for (int i = 0; i < 24; i++) y[i] = sc_rng_normal(&rng);
    sc_rbf r;
    sc_err err = {0};
    ENSURE_OK(sc_rbf_fit(8, 2, c, 3, y, &r, &err), &err);
    double worst = 0;
    for (int i = 0; i < 8; i++) {
        sc_rbf_eval(&r, c + 2 * i, out);
        for (int v = 0; v < 3; v++) worst = fmax(worst, fabs(out[v] - y[3 * i + v]));
    }
    ENSURE(worst < 1e-12);
    /* f(d) = 2 - 3 d through 4 points is f everywhere, between and beyond them */
    const double d1[4] = {0.1, 0.4, 0.5, 1.3}, y1[4] = {2 - 0.3, 2 - 1.2, 2 - 1.5, 2 - 3.9};
    ENSURE_OK(sc_rbf_fit(4, 1, d1, 1, y1, &r, &err), &err);
    for (double d = -1; d <= 2; d += 0.25) {
        sc_rbf_eval(&r, &d, out);
        ENSURE_NEAR(out[0], 2 - 3 * d, 1e-12);
    }
    const double one = 0.7, two[2] = {0.7, 0.7}, vals[2] = {5, 5};
    ENSURE_OK(sc_rbf_fit(1, 1, &one, 1, vals, &r, &err), &err);
    sc_rbf_eval(&r, d1, out);
    ENSURE_NEAR(out[0], 5, 1e-15);
    ENSURE_OK(sc_rbf_fit(2, 1, two, 1, vals, &r, &err), &err);
    ENSURE(r.n == 1);
    sc_test_report("polyharmonic RBF through 8 random 2-D centres: largest miss %.2g", worst);
}

/* ---- network-sample ([BK] 7) ---- */

static const char *explore_config(const char *name, const char *extra)
{
    char text[2048], network[4096];
    if (!realpath(sc_test_repo("configs/networks/walker_rigid.yaml"), network)) return NULL;
    snprintf(text, sizeof text,
             "parameterize:\n"
             "  network: %s\n"
             "  duration: 2\n"
             "  measure_from: 1\n"
             "  knobs:\n"
             "    - {node: lean, bounds: [0.1, 0.3]}\n"
             "    - {node: swing_hip, point: 1, bounds: [0.4, 0.6]}\n"
             "  objectives:\n"
             "    - {measure: speed, range: [0.5, 1.5], tolerance: 0.1}\n"
             "  initial: {batch: 4, max_batches: 2, min_success: 2}\n"
             "  rounds: 1\n"
             "  round: {targets: 2, k: 3, local: 1}\n%s",
             network, extra);
    return sc_test_write(name, text);
}

/* the walk's speed parameterized: trials that stand, speeds that follow the knobs, and the same
   explore.h5 from one process and from two ranks */
TEST(network_sample_is_rank_independent)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    const char *cfg = explore_config("explore.yaml", ""), *a = sc_test_tmp("explore_1.h5"), *b = sc_test_tmp("explore_2.h5");
    ENSURE(cfg);
    int rc = sc_test_sh(out_text, sizeof out_text, "%s -c %s -o %s %s", sc_test_tool("network-sample"), cfg, a, ch);
    ENSURE_MSG(rc == 0, "exit %d: %s", rc, out_text);
    rc = sc_test_sh(out_text, sizeof out_text, "mpiexec.mpich -n 2 %s -c %s -o %s %s", sc_test_tool("network-sample"), cfg, b, ch);
    ENSURE_MSG(rc == 0, "2 ranks: exit %d: %s", rc, out_text);
    ENSURE_MSG(sc_test_h5_same(out_text, sizeof out_text, a, b, "/trials,/rounds,/controllers,/knobs,/objectives"), "1 and 2 ranks differ: %s",
               out_text);
    sc_h5 *f;
    sc_err err = {0};
    ENSURE_OK(sc_h5_open(a, &f, &err), &err);
    size_t dims[2] = {0, 0}, n = 0;
    double *x = NULL, *reached = NULL;
    int *success = NULL;
    ENSURE_OK(sc_h5_read_f64(f, "/trials/x", 2, dims, &x, &err), &err);
    n = dims[0];
    dims[0] = dims[1] = 0;
    ENSURE_OK(sc_h5_read_f64(f, "/trials/reached", 2, dims, &reached, &err), &err);
    dims[0] = 0;
    ENSURE_OK(sc_h5_read_i32(f, "/trials/success", 1, dims, &success, &err), &err);
    sc_h5_close(f);
    /* the leanest and the most leaning success: more lean, more speed */
    int lo = -1, hi = -1, ok = 0;
    for (size_t i = 0; i < n; i++) {
        if (!success[i]) continue;
        ok++;
        if (lo < 0 || x[2 * i] < x[2 * lo]) lo = (int)i;
        if (hi < 0 || x[2 * i] > x[2 * hi]) hi = (int)i;
    }
    ENSURE(ok >= 2);
    sc_test_report("%zu trials, %d succeeded; lean %.3f rad walks %.3f m/s, lean %.3f rad %.3f m/s; explore.h5 the same on 1 and 2 ranks", n, ok,
                   x[2 * lo], reached[lo], x[2 * hi], reached[hi]);
    ENSURE(reached[hi] > reached[lo]);
    free(x);
    free(reached);
    free(success);
    /* bad configs: exit 2 naming the line, no output */
    char text[2048];
    static const struct {
        const char *from, *to, *want;
    } edits[] = {
        {"{node: lean, bounds: [0.1, 0.3]}", "{node: stance, bounds: [0.1, 0.3]}", "explore_bad.yaml:6:7: knob 'stance' is not a constant"},
        {"{node: lean, bounds: [0.1, 0.3]}", "{node: swing_hip, point: 9, bounds: [0.1, 0.3]}", "knob 'swing_hip' has no point 9"},
        {"range: [0.5, 1.5]", "range: [1.5, 0.5]", "explore_bad.yaml:9:7: objective range [1.5, 0.5] must increase"},
        {"measure: speed", "measure: sped", "did you mean 'speed'"},
        {"{node: lean, bounds: [0.1, 0.3]}", "{node: lean, bounds: [0.3, 0.1]}", "bounds [0.3, 0.1] must increase"},
    };
    FILE *src = fopen(cfg, "r");
    ENSURE(src);
    const size_t len = fread(text, 1, sizeof text - 1, src);
    fclose(src);
    text[len] = 0;
    for (size_t k = 0; k < sizeof edits / sizeof *edits; k++) {
        char edited[2048];
        const char *at = strstr(text, edits[k].from);
        ENSURE(at);
        snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - text), text, edits[k].to, at + strlen(edits[k].from));
        const char *bcfg = sc_test_write("explore_bad.yaml", edited), *o = sc_test_tmp("explore_bad.h5");
        rc = sc_test_sh(out_text, sizeof out_text, "%s -c %s -o %s %s", sc_test_tool("network-sample"), bcfg, o, ch);
        ENSURE_MSG(rc == 2 && strstr(out_text, edits[k].want) && !sc_test_file_exists(o), "edit %zu: exit %d: %s", k, rc, out_text);
    }
    sc_test_report("%zu bad parameterize sections: exit 2 naming the line; e.g. %s", sizeof edits / sizeof *edits, out_text);
}

/* A restored snapshot of rigid contact gives the feet's loads of its own moment, not those of
 * whatever the simulation ran last (the contact joints' feedback is another run's): a sampler's
 * trials start from one snapshot on whichever thread, and must not see each other. */
TEST(network_rigid_snapshot_restores_the_feet_loads)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    sc_model m;
    sc_err err = {0};
    ENSURE_OK(sc_character_read(ch, &m, 0, &err), &err);
    sc_sim_opts o;
    sc_sim_default_opts(&o);
    o.contact_model = SC_CONTACT_RIGID;
    sc_sim *s;
    ENSURE_OK(sc_sim_create(&m, &o, &s, &err), &err);
    const int lf = sc_model_bone_index(&m, "l_foot"), rf = sc_model_bone_index(&m, "r_foot");
    const double lift[3] = {0, 0.005, 0}, still[3] = {0, 0, 0};
    sc_sim_translate(s, lift, still);
    for (int k = 0; k < 400; k++) ENSURE_OK(sc_sim_step(s, &err), &err);
    const double load[2] = {sc_sim_bone_load(s, lf), sc_sim_bone_load(s, rf)};
    const size_t cap = sc_sim_snapshot_capacity(s);
    unsigned char *snap = malloc(cap);
    ENSURE(snap);
    const size_t size = sc_sim_snapshot_save(s, snap, cap);
    const double up[3] = {0, 2, 0};
    sc_sim_add_velocity(s, up, NULL); /* thrown up: no load */
    for (int k = 0; k < 100; k++) ENSURE_OK(sc_sim_step(s, &err), &err);
    const double flying = sc_sim_bone_load(s, lf) + sc_sim_bone_load(s, rf);
    ENSURE_OK(sc_sim_snapshot_restore(s, snap, size, &err), &err);
    sc_test_report("feet loads standing %.1f / %.1f N, in flight %.1f N, restored %.1f / %.1f N", load[0], load[1], flying, sc_sim_bone_load(s, lf),
                   sc_sim_bone_load(s, rf));
    ENSURE(load[0] > 50 && load[1] > 50 && flying == 0);
    ENSURE(sc_sim_bone_load(s, lf) == load[0] && sc_sim_bone_load(s, rf) == load[1]);
    free(snap);
    sc_sim_free(s);
    sc_model_free(&m);
}

static int file_exists(const void *path) { return sc_test_file_exists(path); }

/* network-sample stopped by SIGTERM after a round's checkpoint and continued with --resume ends
 * with the trials an uninterrupted run gets; a damaged checkpoint is refused naming it */
TEST(network_sample_resumes_to_the_same_result)
{
    const char *ch = sc_fixture_michelin_cmu();
    ENSURE_MSG(ch, "building the character failed: %s", sc_fixture_log());
    const char *cfg = sc_fixture_keep(explore_config("explore_resume.yaml", "")), *a = sc_fixture_keep(sc_test_tmp("explore_whole.h5"));
    ENSURE(cfg);
    /* more rounds than the first test: time to stop it between them */
    char text[4096];
    FILE *src = fopen(cfg, "r");
    ENSURE(src);
    size_t len = fread(text, 1, sizeof text - 1, src);
    fclose(src);
    text[len] = 0;
    char *rounds = strstr(text, "rounds: 1");
    ENSURE(rounds);
    rounds[8] = '4';
    cfg = sc_fixture_keep(sc_test_write("explore_resume.yaml", text));
    int rc = sc_test_sh(out_text, sizeof out_text, "%s -q -c %s -o %s %s", sc_test_tool("network-sample"), cfg, a, ch);
    char ck[4200];
    snprintf(ck, sizeof ck, "%s.ckpt", a);
    ENSURE_MSG(rc == 0 && !sc_test_file_exists(ck), "exit %d (a finished run leaves no checkpoint): %s", rc, out_text);
    const char *b = sc_fixture_keep(sc_test_tmp("explore_stopped.h5")), *log = sc_fixture_keep(sc_test_tmp("explore_stopped.log"));
    snprintf(ck, sizeof ck, "%s.ckpt", b);
    char command[4400];
    snprintf(command, sizeof command, "%s -q -c %s -o %s", sc_test_tool("network-sample"), cfg, b);
    sc_test_sh(NULL, 0, "(%s %s > %s 2>&1; echo $? >> %s) > /dev/null 2>&1 &", command, ch, log, log);
    const int seen = sc_test_wait_while_running(file_exists, ck, command, 1800);
    sc_test_sh(NULL, 0, "pkill -TERM -f '^%s'", command);
    for (int i = 0; i < 400 && !sc_test_sh(NULL, 0, "pgrep -f '^%s' > /dev/null", command); i++) usleep(50000);
    const int finished = sc_test_file_exists(b);
    ENSURE_MSG(seen || finished, "no checkpoint appeared");
    if (!finished) { /* stopped: exit 6, the checkpoint kept, no output */
        ENSURE(sc_test_file_exists(ck));
        /* the exit status comes from the shell around it, after the tool is gone */
        for (int i = 0; i < 600 && sc_test_sh(NULL, 0, "tail -1 %s | grep -qx '[0-9][0-9]*'", log); i++) usleep(50000);
        rc = sc_test_sh(out_text, sizeof out_text, "tail -1 %s", log);
        ENSURE_MSG(atoi(out_text) == 6, "stopped run: exit %s", out_text);
        /* a damaged copy is refused naming it */
        char bad[4300];
        snprintf(bad, sizeof bad, "%s.damaged.ckpt", b);
        ENSURE(sc_test_sh(NULL, 0, "cp %s %s && printf '\\377' | dd of=%s bs=1 seek=$(($(stat -c %%s %s) - 64)) conv=notrunc 2>/dev/null", ck, bad,
                          bad, bad) == 0);
        rc = sc_test_sh(out_text, sizeof out_text, "%s -q -c %s -o %s --resume --checkpoint %s %s", sc_test_tool("network-sample"), cfg,
                        sc_test_tmp("explore_bad_ck.h5"), bad, ch);
        ENSURE_MSG(rc == 2 && strstr(out_text, bad), "damaged checkpoint: exit %d: %s", rc, out_text);
        sc_test_report("a damaged checkpoint: %s", out_text);
        rc = sc_test_sh(out_text, sizeof out_text, "%s --resume %s", command, ch);
        ENSURE_MSG(rc == 0 && !sc_test_file_exists(ck), "resume: exit %d: %s", rc, out_text);
    }
    ENSURE_MSG(sc_test_h5_same(out_text, sizeof out_text, a, b, "/trials,/rounds,/controllers,/knobs,/objectives"), "resumed run differs: %s",
               out_text);
    sc_test_report("stopped by SIGTERM %s, resumed: the same trials as one run; a damaged checkpoint: exit 2",
                   finished ? "too late (it had finished)" : "after a round");
}

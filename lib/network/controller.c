#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "network/controller.h"
#include "network/physics.h"

const char *const sc_net_feedback_names[SC_FB_COUNT] = {"stance",    "step_time",  "com_forward", "com_left", "com_vel_forward", "com_vel_left",
                                                        "left_load", "right_load", "pitch",       "roll",     "heading",         "swing_height"};

void sc_net_params_free(sc_net_params *p) { sc_network_free(&p->net); }

static sc_vec3 unit_or(sc_vec3 v, sc_vec3 fallback) { return sc_v3_norm(v) > 1e-9 ? sc_v3_normalize(v) : fallback; }

/* A two-link leg in the sagittal plane: the thigh's angle a (from hanging down, forward
 * positive) and the knee's k (the shin's from the thigh's; negative: bent back) that put the
 * ankle at (fw, up) from the hip, lengths l1 and l2; an ankle out of reach is aimed at (the
 * leg straight), one nearer than 30 % of the leg's length is held at that. */
static void leg_ik(double l1, double l2, double fw, double up, double *a, double *k)
{
    const double reach = fmin(l1 + l2, fmax(0.3 * (l1 + l2), hypot(fw, up)));
    *k = -acos(fmax(-1, fmin(1, (reach * reach - l1 * l1 - l2 * l2) / (2 * l1 * l2))));
    *a = atan2(fw, -up) - atan2(l2 * sin(*k), l1 + l2 * cos(*k));
}

/* the legs' chains (hip, knee, ankle) and where the stance puts their joints, in the sagittal
   plane (forward, up): the IK turns all three joints about the side axis, so what lies off
   that plane stays where it is */
static int legs_init(sc_net_controller *c, sc_err *err)
{
    const sc_net_params *p = c->p;
    const sc_model *m = c->m;
    sc_vec3 at[SC_SIM_MAX_BONES]; /* each joint in the stance, from the root's */
    for (int b = 0; b < m->nbones; b++) {
        const int pa = m->parent[b];
        at[b] = b ? sc_v3_add(at[pa], sc_q_rotate(c->stand_world[pa], sc_v3_sub(sc_v3_load(m->joint_pos + 3 * b), sc_v3_load(m->joint_pos + 3 * pa))))
                  : sc_v3(0, 0, 0);
    }
    for (int k = 0; k < 2; k++) {
        const int foot = p->foot[k], shin = m->parent[foot], thigh = c->top[k];
        if (shin <= 0 || m->parent[shin] != thigh)
            return sc_fail(err, SC_EINPUT, "network.legs: the %s leg is not hip, knee, ankle (thigh '%s', then one bone, then the foot '%s')",
                           k ? "right" : "left", m->bone_name[thigh], m->bone_name[foot]);
        for (int i = 0; i < p->ntargets; i++) {
            const int b = p->target[i].bone;
            if ((b == thigh || b == shin || b == foot) && p->target[i].node[SC_NET_FLEX] >= 0)
                return sc_fail(err, SC_EINPUT, "network: '%s' flexes by network.legs; a target cannot also set its flex", m->bone_name[b]);
        }
        c->shin[k] = shin;
        const sc_vec3 upper = sc_v3_sub(at[shin], at[thigh]), lower = sc_v3_sub(at[foot], at[shin]);
        const double ufw = sc_v3_dot(upper, c->fwd), uup = sc_v3_dot(upper, c->up), lfw = sc_v3_dot(lower, c->fwd), lup = sc_v3_dot(lower, c->up);
        c->thigh_len[k] = hypot(ufw, uup);
        c->shin_len[k] = hypot(lfw, lup);
        if (c->thigh_len[k] < 1e-3 || c->shin_len[k] < 1e-3)
            return sc_fail(err, SC_EINPUT, "network.legs: the %s leg's thigh or shin is shorter than 1 mm", k ? "right" : "left");
        c->hip_at[k][0] = sc_v3_dot(at[thigh], c->fwd);
        c->hip_at[k][1] = sc_v3_dot(at[thigh], c->up);
        c->ankle_at[k][0] = sc_v3_dot(at[foot], c->fwd);
        c->ankle_at[k][1] = sc_v3_dot(at[foot], c->up);
        c->leg_rest[k][0] = atan2(ufw, -uup);
        c->leg_rest[k][1] = atan2(lfw, -lup) - c->leg_rest[k][0];
    }
    return SC_OK;
}

int sc_net_controller_init(sc_net_controller *c, const sc_net_params *p, const sc_model *m, sc_err *err)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    c->m = m;
    c->nb = m->nbones;
    if (m->nbones > SC_SIM_MAX_BONES) return sc_fail(err, SC_EINPUT, "network: %d bones, more than %d", m->nbones, SC_SIM_MAX_BONES);
    c->up = sc_v3(0, 1, 0);
    c->fwd = sc_v3_load(p->forward);
    c->fwd.y = 0;
    if (sc_v3_norm(c->fwd) < 1e-6) return sc_fail(err, SC_EINPUT, "network: forward must be horizontal and non-zero");
    c->fwd = sc_v3_normalize(c->fwd);
    c->left = sc_v3_cross(c->up, c->fwd);
    for (int k = 0; k < 2; k++) {
        int b = p->foot[k];
        if (b <= 0) return sc_fail(err, SC_EINPUT, "network: the %s foot must be a bone below the root", k ? "right" : "left");
        while (m->parent[b] != 0) b = m->parent[b];
        c->top[k] = b;
    }
    if (c->top[0] == c->top[1]) return sc_fail(err, SC_EINPUT, "network: the two feet hang from the same hip '%s'", m->bone_name[c->top[0]]);
    const int thigh[2] = {c->top[0], c->top[1]};
    const double left[3] = {c->left.x, c->left.y, c->left.z};
    sc_model_stand_pose(m, thigh, p->foot, p->arm, left, p->arm_down, c->stand);
    const sc_vec3 root = sc_v3_load(m->joint_pos);
    for (int b = 0; b < m->nbones; b++) {
        c->stand_world[b] = b ? sc_q_mul(c->stand_world[m->parent[b]], c->stand[b]) : c->stand[0];
        const double x = sc_v3_dot(sc_v3_sub(sc_v3_load(m->bone_com + 3 * b), root), c->left);
        c->side[b] = x > 0.01 ? 1 : x < -0.01 ? -1 : 0;
        const sc_vec3 rest = sc_v3_sub(sc_v3_load(m->bone_end + 3 * b), sc_v3_load(m->joint_pos + 3 * b));
        const sc_vec3 d = unit_or(sc_q_rotate(c->stand_world[b], rest), c->up);
        const sc_vec3 out = c->side[b] < 0 ? sc_v3_scale(c->left, -1) : c->left;
        /* flex: the tip forward, or up for a bone along forward; abduct: the tip outward, or up
           for a bone pointing outward; twist about the bone, mirrored on the right */
        sc_vec3 a = sc_v3_cross(d, c->fwd);
        c->axis[b][SC_NET_FLEX] = sc_v3_norm(a) > 0.3 ? sc_v3_normalize(a) : sc_v3_normalize(sc_v3_cross(d, c->up));
        a = sc_v3_cross(d, out);
        c->axis[b][SC_NET_ABDUCT] = sc_v3_norm(a) > 0.3 ? sc_v3_normalize(a) : unit_or(sc_v3_cross(d, c->up), c->fwd);
        c->axis[b][SC_NET_TWIST] = sc_v3_scale(d, c->side[b] < 0 ? -1 : 1);
    }
    if (p->legs) {
        int rc = legs_init(c, err);
        if (rc) return rc;
    }
    if (!(c->carrier = malloc(((size_t)m->nnodes + 1) * sizeof *c->carrier))) return sc_fail(err, SC_EIO, "out of memory");
    double mass = 0;
    for (int i = 0; i < m->nnodes; i++) {
        c->carrier[i] = sc_model_node_carrier(m, i);
        c->mass[c->carrier[i]] += m->node_mass[i];
        mass += m->node_mass[i];
    }
    c->body_mass = mass;
    int rc = sc_network_state_init(&p->net, &c->ns, err);
    if (rc) {
        sc_net_controller_free(c);
        return rc;
    }
    c->stance = p->first_stance;
    c->stance_start = NAN;
    return SC_OK;
}

int sc_net_controller_start(const sc_net_controller *c, sc_sim *s, double height, const double vel[3], sc_err *err)
{
    return sc_sim_set_pose_above_ground(s, c->stand, height, vel, err);
}

void sc_net_controller_free(sc_net_controller *c)
{
    free(c->carrier);
    c->carrier = NULL;
    sc_network_state_free(&c->ns);
}

static double node_value(const sc_net_controller *c, int node) { return node >= 0 ? c->ns.value[node] : 0; }

/* bone b's tip (its rest end) in the world, relative to its origin */
static sc_vec3 tip_offset(const sc_model *m, const sc_sim *s, int b)
{
    return sc_q_rotate(s->pose[b].q, sc_v3_sub(sc_v3_load(m->bone_end + 3 * b), sc_v3_load(m->joint_pos + 3 * b)));
}

/* the stance state, then every feedback variable ([BK] 6's feedback channels) */
static void measure(sc_net_controller *c, const sc_sim *s, sc_vec3 *f_h, sc_vec3 *l_h, double load[2])
{
    const sc_net_params *p = c->p;
    const sc_model *m = c->m;
    if (isnan(c->stance_start)) c->stance_start = s->t;
    if (s->t - c->stance_start >= p->min_step && sc_sim_bone_touches(s, p->foot[1 - c->stance])) {
        c->stance = 1 - c->stance;
        c->stance_start = s->t;
        c->steps++;
    }
    const sc_quat root = s->pose[0].q;
    sc_vec3 f = sc_q_rotate(root, c->fwd);
    f.y = 0;
    *f_h = unit_or(f, c->fwd);
    *l_h = sc_v3_cross(c->up, *f_h);
    sc_sim_diag d;
    sc_sim_diagnostics(s, &d);
    const sc_vec3 com = c->com_now = sc_v3_load(d.com), v = sc_v3_scale(sc_v3_load(d.linear), 1 / d.mass);
    const sc_vec3 off = sc_v3_sub(com, s->pose[p->foot[c->stance]].p);
    const double weight = c->body_mass * sc_v3_norm(sc_v3_load(s->o.gravity));
    for (int k = 0; k < 2; k++) load[k] = weight > 0 ? sc_sim_bone_load(s, p->foot[k]) / weight : 0;
    const sc_vec3 u = sc_q_rotate(root, c->up);
    const int swing = p->foot[1 - c->stance];
    const sc_vec3 tip = sc_v3_add(s->pose[swing].p, tip_offset(m, s, swing));
    double *fb = c->feedback;
    fb[SC_FB_STANCE] = c->stance == 0;
    fb[SC_FB_STEP_TIME] = s->t - c->stance_start;
    fb[SC_FB_COM_FORWARD] = sc_v3_dot(off, *f_h);
    fb[SC_FB_COM_LEFT] = sc_v3_dot(off, *l_h);
    fb[SC_FB_COM_VEL_FORWARD] = sc_v3_dot(v, *f_h);
    fb[SC_FB_COM_VEL_LEFT] = sc_v3_dot(v, *l_h);
    fb[SC_FB_LEFT_LOAD] = load[0];
    fb[SC_FB_RIGHT_LOAD] = load[1];
    fb[SC_FB_PITCH] = atan2(sc_v3_dot(u, *f_h), u.y);
    fb[SC_FB_ROLL] = atan2(sc_v3_dot(u, *l_h), u.y);
    fb[SC_FB_HEADING] = atan2(sc_v3_dot(sc_v3_cross(c->fwd, *f_h), c->up), sc_v3_dot(c->fwd, *f_h));
    fb[SC_FB_SWING_HEIGHT] = sc_ground_height(&s->o.contact.ground, tip, NULL);
}

/* each leg's share of what the stance carries: by load when both feet carry weight, else all
   on the stance leg */
static void leg_shares(const sc_net_controller *c, const double load[2], double w[2])
{
    const double both = 0.05; /* of the body weight, on each foot */
    if (load[0] > both && load[1] > both) {
        w[0] = load[0] / (load[0] + load[1]);
        w[1] = 1 - w[0];
    } else {
        w[c->stance] = 1;
        w[1 - c->stance] = 0;
    }
}

/* R = R_abduct R_flex R_twist about the bone's stance axes, turning its stance orientation
   (world: from the heading; parent: from the parent's stance orientation) */
static void targets(sc_net_controller *c, const sc_sim *s, double heading, sc_quat *out)
{
    const sc_net_params *p = c->p;
    const sc_model *m = c->m;
    memcpy(out, c->stand, (size_t)c->nb * sizeof *out);
    const sc_quat h = sc_q_axis_angle(c->up, heading);
    for (int i = 0; i < p->ntargets; i++) {
        const sc_net_target *t = &p->target[i];
        const int b = t->bone;
        sc_quat r = sc_q_identity();
        static const int order[3] = {SC_NET_TWIST, SC_NET_FLEX, SC_NET_ABDUCT};
        for (int k = 0; k < 3; k++) {
            const int a = order[k];
            if (t->node[a] >= 0) r = sc_q_mul(sc_q_axis_angle(c->axis[b][a], node_value(c, t->node[a])), r);
        }
        const sc_quat world = sc_q_mul(r, c->stand_world[b]);
        out[b] =
            t->heading ? sc_q_mul(sc_q_conj(s->pose[m->parent[b]].q), sc_q_mul(h, world)) : sc_q_mul(sc_q_conj(c->stand_world[m->parent[b]]), world);
    }
}

/* legs: the hip, knee and ankle flex that put the root at its wanted drop, offset and pitch
   over the feet where the stance has them: each joint turned about the side axis (flex: -left)
   from its stance, in its parent's stance frame */
static void leg_targets(const sc_net_controller *c, sc_quat *out)
{
    const sc_net_params *p = c->p;
    const sc_model *m = c->m;
    const double drop = node_value(c, p->legs_node[0]), fw = node_value(c, p->legs_node[1]), pitch = node_value(c, p->legs_node[2]),
                 toe = node_value(c, p->legs_node[3]);
    const double cp = cos(pitch), sp = sin(pitch);
    const sc_vec3 side = sc_v3_scale(c->left, -1);
    for (int k = 0; k < 2; k++) {
        /* the hip where the lowered, moved and pitched root puts it (pitch forward: the parts above
           the root move forward, those below it back) */
        const double hx = fw + cp * c->hip_at[k][0] + sp * c->hip_at[k][1], hy = -drop - sp * c->hip_at[k][0] + cp * c->hip_at[k][1];
        double a, kn;
        leg_ik(c->thigh_len[k], c->shin_len[k], c->ankle_at[k][0] - hx, c->ankle_at[k][1] - hy, &a, &kn);
        a -= c->leg_rest[k][0];
        kn -= c->leg_rest[k][1];
        /* the thigh from the pitched root, the foot level (then turned by toe) */
        const int bone[3] = {c->top[k], c->shin[k], p->foot[k]};
        const double angle[3] = {a + pitch, kn, toe - a - kn};
        for (int j = 0; j < 3; j++) {
            const int b = bone[j];
            out[b] = sc_q_mul(sc_q_conj(c->stand_world[m->parent[b]]), sc_q_mul(sc_q_axis_angle(side, angle[j]), c->stand_world[b]));
        }
    }
}

static void torques(sc_net_controller *c, const sc_sim *s, sc_vec3 f_h, sc_vec3 l_h, const double load[2])
{
    const sc_net_params *p = c->p;
    const sc_model *m = c->m;
    const int nb = c->nb;
    double *tau = c->tau, w[2];
    memset(tau, 0, 3 * (size_t)nb * sizeof *tau);
    leg_shares(c, load, w);
    if (p->torso_kp > 0) { /* the root's virtual torque, carried by the stance hips */
        const sc_quat want =
            sc_q_mul(sc_q_axis_angle(c->up, node_value(c, p->torso_node[2])),
                     sc_q_mul(sc_q_axis_angle(c->fwd, -node_value(c, p->torso_node[1])), sc_q_axis_angle(c->left, node_value(c, p->torso_node[0]))));
        const sc_vec3 e = sc_q_log(sc_q_mul(want, sc_q_conj(s->pose[0].q)));
        const double g = p->torso_node[3] >= 0 ? fmax(0, node_value(c, p->torso_node[3])) : 1;
        const sc_vec3 t = sc_v3_scale(sc_v3_sub(sc_v3_scale(e, p->torso_kp), sc_v3_scale(sc_v3_load(s->ang_vel), p->torso_kd)), g);
        for (int k = 0; k < 2; k++) sc_v3_store(tau + 3 * c->top[k], sc_v3_axpy(-w[k], t, sc_v3_load(tau + 3 * c->top[k])));
    }
    if (p->com_kp > 0 || p->com_kd > 0) { /* the centre of mass pushed over the support, at a speed */
        const double *fb = c->feedback;
        double dfw = fb[SC_FB_COM_FORWARD], dlf = fb[SC_FB_COM_LEFT];
        if (w[0] > 0 && w[1] > 0) { /* from the load-weighted middle of both ankles */
            const sc_vec3 mid = sc_v3_add(sc_v3_scale(s->pose[p->foot[0]].p, w[0]), sc_v3_scale(s->pose[p->foot[1]].p, w[1]));
            const sc_vec3 shift = sc_v3_sub(s->pose[p->foot[c->stance]].p, mid);
            dfw += sc_v3_dot(shift, f_h);
            dlf += sc_v3_dot(shift, l_h);
        }
        const double ff = p->com_kp * (node_value(c, p->com_node[0]) - dfw) + p->com_kd * (node_value(c, p->com_node[2]) - fb[SC_FB_COM_VEL_FORWARD]);
        const double fl = p->com_kp * (node_value(c, p->com_node[1]) - dlf) + p->com_kd * (node_value(c, p->com_node[3]) - fb[SC_FB_COM_VEL_LEFT]);
        const double g = p->com_node[4] >= 0 ? fmax(0, node_value(c, p->com_node[4])) : 1;
        const sc_vec3 force = sc_v3_scale(sc_v3_add(sc_v3_scale(f_h, ff), sc_v3_scale(l_h, fl)), g);
        for (int k = 0; k < 2; k++)
            if (w[k] > 0) sc_vf_support(m, s->pose, p->foot[k], c->com_now, sc_v3_scale(force, w[k]), tau);
    }
    for (int i = 0; i < p->neffectors; i++) { /* a tip lifted to a height */
        const sc_net_effector *e = &p->effector[i];
        const int b = e->bone;
        const sc_vec3 r = tip_offset(m, s, b), tip = sc_v3_add(s->pose[b].p, r);
        const double vy = s->lin_vel[3 * b + 1] + sc_v3_cross(sc_v3_load(s->ang_vel + 3 * b), r).y;
        const double height = sc_ground_height(&s->o.contact.ground, tip, NULL);
        sc_vf_chain(m, s->pose, b, e->base, tip, sc_v3(0, e->kp * (node_value(c, e->node) - height) - e->kd * vy, 0), tau);
    }
    int any = 0;
    for (int b = 0; b < nb; b++) any |= p->gravity[b];
    if (any) { /* where the weight each bone carries is now, flesh included */
        for (int b = 0; b < nb; b++) c->com[3 * b] = c->com[3 * b + 1] = c->com[3 * b + 2] = 0;
        for (int i = 0; i < m->nnodes; i++)
            for (int k = 0; k < 3; k++) c->com[3 * c->carrier[i] + k] += m->node_mass[i] * s->x[3 * i + k];
        for (int b = 0; b < nb; b++)
            for (int k = 0; k < 3 && c->mass[b] > 0; k++) c->com[3 * b + k] /= c->mass[b];
        sc_vf_gravity(m, s->pose, c->mass, c->com, p->gravity, s->o.gravity, c->scratch, tau);
    }
    for (int b = 1; b < nb; b++) { /* within the joint's strength */
        const double limit = m->torque_limit ? p->torque_scale * m->torque_limit[b] : 0, n = sc_v3_norm(sc_v3_load(tau + 3 * b));
        if (limit > 0 && isfinite(limit) && n > limit)
            for (int k = 0; k < 3; k++) tau[3 * b + k] *= limit / n;
    }
}

static void net_eval(void *ctx, const sc_sim *s, sc_quat *out)
{
    sc_net_controller *c = ctx;
    const sc_net_params *p = c->p;
    sc_vec3 f_h, l_h;
    double load[2];
    measure(c, s, &f_h, &l_h, load);
    sc_network_eval(&p->net, &c->ns, s->t, c->feedback);
    targets(c, s, c->feedback[SC_FB_HEADING], out);
    if (p->legs) leg_targets(c, out);
    for (int b = 0; b < c->nb; b++) c->scale[b] = 1;
    for (int i = 0; i < p->ngains; i++) {
        const double g = fmin(100, fmax(0, node_value(c, p->gain[i].node)));
        for (int b = 1; b < c->nb; b++)
            if (p->gain[i].bone < 0 || p->gain[i].bone == b) c->scale[b] *= g;
    }
    torques(c, s, f_h, l_h, load);
}

static void net_actuate(void *ctx, sc_sim *s)
{
    sc_net_controller *c = ctx;
    sc_sim_set_joint_torques(s, c->tau);
    sc_sim_set_gain_scale(s, c->scale);
}

sc_target_source sc_net_controller_source(sc_net_controller *c) { return (sc_target_source){.eval = net_eval, .ctx = c, .actuate = net_actuate}; }

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "simbicon/simbicon.h"
#include "sim/sim.h"

void sc_simbicon_default_params(sc_simbicon_params *p)
{
    memset(p, 0, sizeof *p);
    /* Yin 2007's walk in anatomical angles (simbicon.h), with c_d = 0.5, c_v = 0.2 in both planes */
    p->state[0] = (sc_simbicon_state){0.3, 0.5, 1.1, 0.6, 0.05, 0, 0, 0.5, 0.2, 0.5, 0.2};
    p->state[1] = (sc_simbicon_state){0, -0.1, 0.05, 0.15, 0.1, 0, 0, 0.5, 0.2, 0.5, 0.2};
    strcpy(p->pelvis, "pelvis");
    static const char *side[2] = {"l_", "r_"};
    for (int k = 0; k < 2; k++) {
        snprintf(p->thigh[k], SC_NAME_LEN, "%sthigh", side[k]);
        snprintf(p->shin[k], SC_NAME_LEN, "%sshin", side[k]);
        snprintf(p->foot[k], SC_NAME_LEN, "%sfoot", side[k]);
        snprintf(p->upperarm[k], SC_NAME_LEN, "%supperarm", side[k]);
    }
    p->forward[2] = 1;
    p->arm_down = 0.15;
    p->first_stance = SC_RIGHT;
}

static int bone(const sc_model *m, const char *name, const char *role, int *out, sc_err *err)
{
    if ((*out = sc_model_bone_index(m, name)) < 0)
        return sc_fail(err, SC_EINPUT, "simbicon: the %s bone '%s' is not a bone of the character", role, name);
    return SC_OK;
}

int sc_simbicon_init(sc_simbicon *c, const sc_model *m, const sc_simbicon_params *p, sc_err *err)
{
    const sc_simbicon_params params = *p; /* p may be c->p */
    memset(c, 0, sizeof *c);
    c->p = params;
    p = &c->p;
    c->nb = m->nbones;
    int rc;
    if ((rc = bone(m, p->pelvis, "pelvis", &c->pelvis, err))) return rc;
    if (c->pelvis != 0) return sc_fail(err, SC_EINPUT, "simbicon: the pelvis '%s' must be the root bone", p->pelvis);
    for (int k = 0; k < 2; k++) {
        const char *side = k == SC_LEFT ? "left" : "right";
        char role[32];
        snprintf(role, sizeof role, "%s thigh", side);
        if ((rc = bone(m, p->thigh[k], role, &c->thigh[k], err))) return rc;
        snprintf(role, sizeof role, "%s shin", side);
        if ((rc = bone(m, p->shin[k], role, &c->shin[k], err))) return rc;
        snprintf(role, sizeof role, "%s foot", side);
        if ((rc = bone(m, p->foot[k], role, &c->foot[k], err))) return rc;
        snprintf(role, sizeof role, "%s upper arm", side);
        if ((rc = bone(m, p->upperarm[k], role, &c->arm[k], err))) return rc;
        if (m->joint_type[c->shin[k]] != SC_JOINT_HINGE) return sc_fail(err, SC_EINPUT, "simbicon: the knee of '%s' must be a hinge", p->shin[k]);
        if (m->parent[c->shin[k]] != c->thigh[k] || m->parent[c->foot[k]] != c->shin[k] || m->parent[c->thigh[k]] != c->pelvis)
            return sc_fail(err, SC_EINPUT, "simbicon: the %s leg must be the chain pelvis - '%s' - '%s' - '%s'", side, p->thigh[k], p->shin[k],
                           p->foot[k]);
    }
    c->up = sc_v3(0, 1, 0);
    c->fwd = sc_v3_load(p->forward);
    c->fwd.y = 0;
    if (sc_v3_norm(c->fwd) < 1e-6) return sc_fail(err, SC_EINPUT, "simbicon: forward must be horizontal and non-zero");
    c->fwd = sc_v3_normalize(c->fwd);
    c->left = sc_v3_cross(c->up, c->fwd);
    if (!(c->stand = malloc((size_t)c->nb * sizeof *c->stand))) return sc_fail(err, SC_EIO, "out of memory");
    const double left[3] = {c->left.x, c->left.y, c->left.z};
    sc_model_stand_pose(m, c->thigh, c->foot, c->arm, left, p->arm_down, c->stand);
    for (int k = 0; k < 2; k++) /* the knee's hinge angle that swings the shin backwards (about +left, see simbicon.h) */
        c->knee_sign[k] = sc_v3_dot(sc_v3_load(m->hinge_axis + 3 * c->shin[k]), c->left) >= 0 ? 1 : -1;
    for (int i = 0; i < p->ngains; i++)
        if (sc_model_bone_index(m, p->gain_bone[i]) < 0)
            return sc_fail(err, SC_EINPUT, "simbicon: gains of '%s', which is not a bone of the character", p->gain_bone[i]);
    c->stance = p->first_stance;
    c->state_start = NAN;
    return SC_OK;
}

int sc_simbicon_start(const sc_simbicon *c, sc_sim *s, double height, const double vel[3], sc_err *err)
{
    return sc_sim_set_pose_above_ground(s, c->stand, height, vel, err);
}

int sc_simbicon_set_gains(const sc_simbicon_params *p, sc_model *m, sc_err *err)
{
    for (int i = 0; i < p->ngains; i++) {
        const int b = sc_model_bone_index(m, p->gain_bone[i]);
        if (b < 0) return sc_fail(err, SC_EINPUT, "simbicon: gains of '%s', which is not a bone of the character", p->gain_bone[i]);
        m->kp[b] = p->gain_kp[i];
        m->kd[b] = p->gain_kd[i];
    }
    return SC_OK;
}

void sc_simbicon_free(sc_simbicon *c)
{
    free(c->stand);
    c->stand = NULL;
}

/* The state machine: state 0 for its duration, state 1 until the swing foot touches down (or
   for its duration when it has one); then the legs swap. */
static void advance(sc_simbicon *c, const sc_sim *s)
{
    if (isnan(c->state_start)) c->state_start = s->t;
    const double elapsed = s->t - c->state_start, d = c->p.state[c->state].duration;
    if (c->state == 0) {
        if (elapsed >= d) {
            c->state = 1;
            c->state_start = s->t;
        }
    } else if (d > 0 ? elapsed >= d : sc_sim_bone_touches(s, c->foot[1 - c->stance])) {
        c->stance = 1 - c->stance;
        c->state = 0;
        c->state_start = s->t;
        c->steps++;
    }
}

static void simbicon_eval(void *ctx, const sc_sim *s, sc_quat *out)
{
    sc_simbicon *c = ctx;
    advance(c, s);
    const sc_simbicon_state *st = &c->p.state[c->state];
    const int stance = c->stance, swing = 1 - stance;
    memcpy(out, c->stand, (size_t)c->nb * sizeof *out);

    /* the heading frame of the pelvis, and the balance feedback of Yin 2007 eq. 1 */
    const sc_quat pelvis = s->pose[c->pelvis].q;
    sc_vec3 f = sc_q_rotate(pelvis, c->fwd);
    f.y = 0;
    f = sc_v3_norm(f) > 1e-9 ? sc_v3_normalize(f) : c->fwd;
    const sc_vec3 l = sc_v3_cross(c->up, f);
    sc_sim_diag dg;
    sc_sim_diagnostics(s, &dg);
    const sc_vec3 d = sc_v3_sub(sc_v3_load(dg.com), s->pose[c->foot[stance]].p), v = sc_v3_scale(sc_v3_load(dg.linear), 1 / dg.mass);
    const double out_sign = swing == SC_LEFT ? 1 : -1; /* the swing leg's outward, along left */
    const double flex = st->swing_hip + st->cd_sagittal * sc_v3_dot(d, f) + st->cv_sagittal * sc_v3_dot(v, f);
    const double abduct = st->cd_coronal * out_sign * sc_v3_dot(d, l) + st->cv_coronal * out_sign * sc_v3_dot(v, l);

    /* wanted world orientations: the pelvis upright at the wanted heading leaning `torso`, the
       swing thigh flexed and abducted from hanging straight down */
    const sc_quat heading = sc_q_axis_angle(c->up, c->p.heading);
    const sc_quat want_pelvis = sc_q_mul(heading, sc_q_axis_angle(c->left, st->torso));
    const sc_quat swing_world =
        sc_q_mul(heading, sc_q_mul(sc_q_axis_angle(c->fwd, out_sign * abduct), sc_q_mul(sc_q_axis_angle(c->left, -flex), c->stand[c->thigh[swing]])));
    out[c->thigh[swing]] = sc_q_mul(sc_q_conj(pelvis), swing_world);
    out[c->thigh[stance]] = sc_q_mul(sc_q_conj(want_pelvis), s->pose[c->thigh[stance]].q);

    /* knees about their hinge, ankles about left in the shin's frame (dorsiflexion lifts the toes) */
    for (int k = 0; k < 2; k++) {
        const int sh = c->shin[k], ft = c->foot[k];
        const double bend = k == swing ? st->swing_knee : st->stance_knee, dorsi = k == swing ? st->swing_ankle : st->stance_ankle;
        out[sh] = sc_q_axis_angle(sc_v3_load(s->m->hinge_axis + 3 * sh), c->knee_sign[k] * bend);
        out[ft] = sc_q_mul(sc_q_axis_angle(c->left, -dorsi), c->stand[ft]);
    }
}

sc_target_source sc_simbicon_source(sc_simbicon *c) { return (sc_target_source){.eval = simbicon_eval, .ctx = c}; }

#include <stdlib.h>
#include <string.h>
#include "sampling/controller.h"
#include "learn/policy.h"

const char *const sc_feature_names[SC_FEATURES] = {"root_pitch", "root_roll",  "root_height", "com_stance_x", "com_stance_y", "com_stance_z",
                                                   "com_vel_x",  "com_vel_y",  "com_vel_z",   "lfoot_x",      "lfoot_y",      "lfoot_z",
                                                   "rfoot_x",    "rfoot_y",    "rfoot_z",     "angmom_x",     "angmom_y",     "angmom_z"};
const char *const sc_feature_units[SC_FEATURES] = {"rad", "rad", "m",   "m", "m", "m", "m/s",   "m/s",   "m/s",
                                                   "m",   "m",   "m",   "m", "m", "m", "m^2/s", "m^2/s", "m^2/s"};
const double sc_feature_scale[SC_FEATURES] = {0.1, 0.1, 0.05, 0.1, 0.05, 0.1, 0.2, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1};

int sc_feature_index(const char *name)
{
    for (int k = 0; k < SC_FEATURES; k++)
        if (!strcmp(name, sc_feature_names[k])) return k;
    return -1;
}

int sc_features_init(sc_features *f, const sc_model *m, sc_err *err)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    int leaves[SC_SIM_MAX_BONES], nl = sc_model_leaf_bones(m, leaves);
    f->lfoot = f->rfoot = -1;
    for (int i = 0; i < nl; i++) { /* the two lowest leaves are the feet */
        int b = leaves[i];
        double y = m->bone_end[3 * b + 1];
        if (f->lfoot < 0 || y < m->bone_end[3 * f->lfoot + 1]) { f->rfoot = f->lfoot; f->lfoot = b; }
        else if (f->rfoot < 0 || y < m->bone_end[3 * f->rfoot + 1]) f->rfoot = b;
    }
    if (f->lfoot < 0 || f->rfoot < 0) return sc_fail(err, SC_EINPUT, "feedback: the character has %d leaf bones, two feet are needed", nl);
    if (m->joint_pos[3 * f->lfoot] < m->joint_pos[3 * f->rfoot]) { int t = f->lfoot; f->lfoot = f->rfoot; f->rfoot = t; } /* left is +x */
    f->vert_bone = malloc(((size_t)m->nsurf_verts + 1) * sizeof(int));
    if (!f->vert_bone) return sc_fail(err, SC_EIO, "out of memory");
    sc_model_surface_bones(m, f->vert_bone);
    return SC_OK;
}

void sc_features_free(sc_features *f)
{
    free(f->vert_bone);
    memset(f, 0, sizeof *f);
}

void sc_features_eval(const sc_features *f, const sc_sim *s, double out[SC_FEATURES])
{
    sc_quat root = s->pose[0].q, h = sc_q_axis_angle(sc_v3(0, 1, 0), -sc_q_heading(root));
    sc_vec3 tilt = sc_q_log(sc_q_mul(h, root));
    sc_sim_diag d;
    sc_sim_diagnostics(s, &d);
    sc_vec3 c = sc_v3_load(d.com), cv = sc_v3_scale(sc_v3_load(d.linear), 1 / d.mass), L = sc_v3_scale(sc_v3_load(d.angular), 1 / d.mass);
    int nl = 0, nr = 0;
    for (int i = 0; i < s->nv; i++) {
        if (!s->in_contact[i]) continue;
        nl += f->vert_bone[i] == f->lfoot;
        nr += f->vert_bone[i] == f->rfoot;
    }
    sc_vec3 pl = s->pose[f->lfoot].p, pr = s->pose[f->rfoot].p;
    sc_vec3 stance = nl > nr ? pl : nr > nl ? pr : pl.y <= pr.y ? pl : pr;
    sc_vec3 v[5] = {sc_v3_sub(c, stance), cv, sc_v3_sub(pl, c), sc_v3_sub(pr, c), L};
    out[0] = tilt.x;
    out[1] = tilt.z;
    out[2] = s->pose[0].p.y;
    for (int k = 0; k < 5; k++) sc_v3_store(out + 3 + 3 * k, sc_q_rotate(h, v[k]));
}

/* ---- the policy ---- */

int sc_policy_alloc(sc_policy *p, int nb, int ndof, int nact, int nfrag, int nbase, sc_err *err)
{
    memset(p, 0, sizeof *p);
    if (nact > SC_MAX_ACTIONS || ndof > SC_MAX_DOFS || nfrag < 1 || nbase < 2)
        return sc_fail(err, SC_EINPUT, "policy: %d actions (at most %d), %d DoFs, %d fragments, %d cycle samples", nact, SC_MAX_ACTIONS, ndof, nfrag, nbase);
    p->nb = nb;
    p->ndof = ndof;
    p->nact = nact;
    p->nfrag = nfrag;
    p->nbase = nbase;
    size_t F = (size_t)nfrag;
    p->steps = calloc(F, sizeof(long));
    p->ref_t0 = calloc(F, sizeof(double));
    p->ref_t1 = calloc(F, sizeof(double));
    p->offset = calloc(F * (size_t)(ndof ? ndof : 1), sizeof(double));
    p->s_bar = calloc(F * SC_FEATURES, sizeof(double));
    p->a_bar = calloc(F * (size_t)(nact ? nact : 1), sizeof(double));
    p->M = calloc(F * (size_t)(nact ? nact : 1) * SC_FEATURES, sizeof(double));
    p->base_time = calloc((size_t)nbase, sizeof(double));
    p->base_quat = calloc((size_t)nbase * (size_t)nb * 4, sizeof(double));
    p->ref_quat = calloc((size_t)nbase * (size_t)nb * 4, sizeof(double));
    p->start_quat = calloc((size_t)nb * 4, sizeof(double));
    p->start_w = calloc((size_t)nb * 3, sizeof(double));
    if (!p->steps || !p->ref_t0 || !p->ref_t1 || !p->offset || !p->s_bar || !p->a_bar || !p->M || !p->base_time || !p->base_quat ||
        !p->start_quat || !p->start_w || !p->ref_quat) {
        sc_policy_free(p);
        return sc_fail(err, SC_EIO, "out of memory for the policy");
    }
    p->max_action = 1.0;
    return SC_OK;
}

void sc_policy_free(sc_policy *p)
{
    void *a[] = {p->steps, p->ref_t0, p->ref_t1, p->offset, p->s_bar, p->a_bar, p->M, p->base_time, p->base_quat, p->start_quat, p->start_w, p->ref_quat};
    for (size_t i = 0; i < sizeof a / sizeof *a; i++) free(a[i]);
    memset(p, 0, sizeof *p);
}

void sc_policy_actions(const sc_policy *p, int j, const double s[SC_FEATURES], int feedback, double *a)
{
    const double *abar = p->a_bar + (size_t)j * p->nact, *sbar = p->s_bar + (size_t)j * SC_FEATURES;
    for (int i = 0; i < p->nact; i++) {
        double da = 0;
        if (feedback) {
            const double *Mi = p->M + ((size_t)j * p->nact + i) * SC_FEATURES;
            for (int k = 0; k < SC_FEATURES; k++) da += Mi[k] * (s[k] - sbar[k]);
            da = da > p->max_action ? p->max_action : da < -p->max_action ? -p->max_action : da;
        }
        a[i] = abar[i] + da;
    }
}

void sc_policy_controller_init(sc_policy_controller *c, const sc_policy *p, const sc_features *f, const sc_control_dofs *dofs, long step,
                               int feedback)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    c->f = f;
    c->dofs = dofs;
    c->feedback = feedback;
    c->frag = -1;
    c->next_step = step;
}

double sc_policy_controller_cycle_time(const sc_policy_controller *c, long step)
{
    const sc_policy *p = c->p;
    int j = c->frag < 0 ? 0 : c->frag;
    double u = (double)(step - c->frag_start) / (double)p->steps[j];
    return p->ref_t0[j] + u * (p->ref_t1[j] - p->ref_t0[j]);
}

static void policy_eval(void *ctx, const sc_sim *s, sc_quat *out)
{
    sc_policy_controller *c = ctx;
    const sc_policy *p = c->p;
    if (c->frag < 0 || s->step >= c->next_step) { /* a fragment starts: read the state, decide its offsets */
        if (++c->frag == p->nfrag) { c->frag = 0; c->cycles++; }
        c->frag_start = s->step;
        c->next_step = s->step + p->steps[c->frag];
        sc_features_eval(c->f, s, c->s);
        memcpy(c->offset, p->offset + (size_t)c->frag * p->ndof, sizeof(double) * (size_t)p->ndof);
        double a[SC_MAX_ACTIONS];
        sc_policy_actions(p, c->frag, c->s, c->feedback, a);
        for (int i = 0; i < p->nact; i++) c->offset[p->act[i]] = a[i];
    }
    sc_targets_interpolate(p->base_time, p->nbase, p->base_quat, p->nb, sc_policy_controller_cycle_time(c, s->step), out);
    sc_apply_offsets(c->f->m, c->dofs, c->offset, out);
}

sc_target_source sc_policy_source(sc_policy_controller *c) { return (sc_target_source){policy_eval, c}; }

long sc_policy_cycle_steps(const sc_policy *p)
{
    long n = 0;
    for (int j = 0; j < p->nfrag; j++) n += p->steps[j];
    return n;
}

int sc_policy_start(const sc_policy *p, sc_sim *s, sc_err *err)
{
    sc_sim_set_pose(s, p->start_root, (const sc_quat *)(const void *)p->start_quat, p->start_vel, p->start_w);
    return sc_sim_settle(s, err);
}

int sc_policy_fallen(const sc_policy *p, const sc_sim *s, double max_tilt)
{
    sc_vec3 up = sc_q_rotate(s->pose[0].q, sc_v3(0, 1, 0));
    return s->pose[0].p.y < 0.5 * p->mean_root_height || up.y < cos(max_tilt);
}

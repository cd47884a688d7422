/* Linear feedback policies (learn/policy.h): the features, the law, the policy as a controller, and
 * the open-loop policy of a cycle controller that learning starts from. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/controller.h"
#include "learn/policy.h"
#include "core/rng.h"
#include "model/world.h"
#include "sampling/samcon.h"

const char *const sc_feature_names[SC_FEATURES] = {
    "root_pitch", "root_roll", "root_height", "com_stance_x", "com_stance_y", "com_stance_z", "com_vel_x", "com_vel_y", "com_vel_z", "lfoot_x",
    "lfoot_y",    "lfoot_z",   "rfoot_x",     "rfoot_y",      "rfoot_z",      "angmom_x",     "angmom_y",  "angmom_z",  "heading"};
const char *const sc_feature_units[SC_FEATURES] = {"rad", "rad", "m", "m", "m", "m",     "m/s",   "m/s",   "m/s", "m",
                                                   "m",   "m",   "m", "m", "m", "m^2/s", "m^2/s", "m^2/s", "rad"};
const double sc_feature_scale[SC_FEATURES] = {0.1, 0.1, 0.05, 0.1, 0.05, 0.1, 0.2, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0};

int sc_feature_index(const char *name)
{
    for (int k = 0; k < SC_FEATURES; k++)
        if (!strcmp(name, sc_feature_names[k])) return k;
    return -1;
}

static sc_quat root_quat(const double *q) { return (sc_quat){q[0], q[1], q[2], q[3]}; }

int sc_features_init(sc_features *f, const sc_model *m, const sc_policy *p, sc_err *err)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    f->heading0 = p ? sc_q_heading(root_quat(p->start_quat)) : 0;
    int leaves[SC_SIM_MAX_BONES], nl = sc_model_leaf_bones(m, leaves);
    f->lfoot = f->rfoot = -1;
    for (int i = 0; i < nl; i++) { /* the two lowest leaves are the feet */
        int b = leaves[i];
        double y = m->bone_end[3 * b + 1];
        if (f->lfoot < 0 || y < m->bone_end[3 * f->lfoot + 1]) {
            f->rfoot = f->lfoot;
            f->lfoot = b;
        } else if (f->rfoot < 0 || y < m->bone_end[3 * f->rfoot + 1]) f->rfoot = b;
    }
    if (f->lfoot < 0 || f->rfoot < 0) return sc_fail(err, SC_EINPUT, "feedback: the character has %d leaf bones, two feet are needed", nl);
    if (m->joint_pos[3 * f->lfoot] < m->joint_pos[3 * f->rfoot]) {
        int t = f->lfoot;
        f->lfoot = f->rfoot;
        f->rfoot = t;
    } /* left is +x */
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
    out[SC_FEATURE_HEADING] = sc_wrap_angle(sc_q_heading(root) - f->heading0);
}

double sc_policy_heading_target(const sc_policy *p, int j)
{
    int k = 0; /* the cycle's sample nearest the fragment's start */
    for (int i = 1; i < p->nbase; i++)
        if (fabs(p->base_time[i] - p->ref_t0[j]) < fabs(p->base_time[k] - p->ref_t0[j])) k = i;
    return sc_wrap_angle(sc_q_heading(root_quat(p->ref_quat + (size_t)k * p->nb * 4)) - sc_q_heading(root_quat(p->ref_quat)));
}

/* ---- the policy ---- */

int sc_policy_alloc(sc_policy *p, int nb, int ndof, int nact, int nfrag, int nbase, sc_err *err)
{
    memset(p, 0, sizeof *p);
    if (nact > SC_MAX_ACTIONS || ndof > SC_MAX_DOFS || nfrag < 1 || nbase < 2)
        return sc_fail(err, SC_EINPUT, "policy: %d actions (at most %d), %d DoFs, %d fragments, %d cycle samples", nact, SC_MAX_ACTIONS, ndof, nfrag,
                       nbase);
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
    if (!p->steps || !p->ref_t0 || !p->ref_t1 || !p->offset || !p->s_bar || !p->a_bar || !p->M || !p->base_time || !p->base_quat || !p->start_quat ||
        !p->start_w || !p->ref_quat) {
        sc_policy_free(p);
        return sc_fail(err, SC_EIO, "out of memory for the policy");
    }
    p->max_action = 1.0;
    return SC_OK;
}

void sc_policy_free(sc_policy *p)
{
    void *a[] = {p->steps, p->ref_t0,    p->ref_t1,    p->offset,     p->s_bar,   p->a_bar,
                 p->M,     p->base_time, p->base_quat, p->start_quat, p->start_w, p->ref_quat};
    for (size_t i = 0; i < sizeof a / sizeof *a; i++) free(a[i]);
    memset(p, 0, sizeof *p);
}

int sc_policy_copy(const sc_policy *src, sc_policy *dst, sc_err *err)
{
    int rc = sc_policy_alloc(dst, src->nb, src->ndof, src->nact, src->nfrag, src->nbase, err);
    if (rc) return rc;
    size_t F = (size_t)src->nfrag, B = (size_t)src->nbase * (size_t)src->nb * 4;
    memcpy(dst->act, src->act, sizeof src->act);
    memcpy(dst->steps, src->steps, sizeof(long) * F);
    memcpy(dst->ref_t0, src->ref_t0, sizeof(double) * F);
    memcpy(dst->ref_t1, src->ref_t1, sizeof(double) * F);
    memcpy(dst->offset, src->offset, sizeof(double) * F * (size_t)src->ndof);
    memcpy(dst->s_bar, src->s_bar, sizeof(double) * F * SC_FEATURES);
    memcpy(dst->a_bar, src->a_bar, sizeof(double) * F * (size_t)src->nact);
    memcpy(dst->M, src->M, sizeof(double) * F * (size_t)src->nact * SC_FEATURES);
    memcpy(dst->base_time, src->base_time, sizeof(double) * (size_t)src->nbase);
    memcpy(dst->base_quat, src->base_quat, sizeof(double) * B);
    memcpy(dst->ref_quat, src->ref_quat, sizeof(double) * B);
    memcpy(dst->start_quat, src->start_quat, sizeof(double) * 4 * (size_t)src->nb);
    memcpy(dst->start_w, src->start_w, sizeof(double) * 3 * (size_t)src->nb);
    dst->max_action = src->max_action;
    dst->period = src->period;
    dst->mean_root_height = src->mean_root_height;
    memcpy(dst->start_root, src->start_root, sizeof src->start_root);
    memcpy(dst->start_vel, src->start_vel, sizeof src->start_vel);
    return SC_OK;
}

void sc_policy_actions(const sc_policy *p, int j, const double s[SC_FEATURES], int feedback, double *a)
{
    const double *abar = p->a_bar + (size_t)j * p->nact, *sbar = p->s_bar + (size_t)j * SC_FEATURES;
    for (int i = 0; i < p->nact; i++) {
        double da = 0;
        if (feedback) {
            const double *Mi = p->M + ((size_t)j * p->nact + i) * SC_FEATURES;
            for (int k = 0; k < SC_FEATURES; k++) da += Mi[k] * (k == SC_FEATURE_HEADING ? sc_wrap_angle(s[k] - sbar[k]) : s[k] - sbar[k]);
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
        if (++c->frag == p->nfrag) {
            c->frag = 0;
            c->cycles++;
        }
        c->frag_start = s->step;
        c->next_step = s->step + p->steps[c->frag];
        sc_features_eval(c->f, s, c->s);
        memcpy(c->offset, p->offset + (size_t)c->frag * p->ndof, sizeof(double) * (size_t)p->ndof);
        double a[SC_MAX_ACTIONS];
        sc_policy_actions(p, c->frag, c->s, c->feedback, a);
        if (c->explore) {
            sc_rng rng;
            sc_rng_init(&rng, c->explore_seed, (uint32_t)(c->cycles * p->nfrag + c->frag), 0);
            for (int i = 0; i < p->nact; i++) a[i] += c->explore[i] * (2 * sc_rng_uniform(&rng) - 1);
        }
        for (int i = 0; i < p->nact; i++) c->offset[p->act[i]] = a[i];
    }
    sc_targets_interpolate(p->base_time, p->nbase, p->base_quat, p->nb, sc_policy_controller_cycle_time(c, s->step), out);
    sc_apply_offsets(c->f->m, c->dofs, c->offset, out);
}

sc_target_source sc_policy_source(sc_policy_controller *c) { return (sc_target_source){.eval = policy_eval, .ctx = c}; }

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

/* sc_fall_test against world up: its dot product with up is up.y exactly (the products with 0
   are zeros), the comparison the policies have always made */
int sc_policy_fallen(const sc_policy *p, const sc_sim *s, double max_tilt)
{
    sc_vec3 up = sc_q_rotate(s->pose[0].q, sc_v3(0, 1, 0));
    return sc_fall_test(s->pose[0].p.y, p->mean_root_height, 0.5, up, sc_v3(0, 1, 0), max_tilt);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int sc_policy_from_openloop(const sc_openloop_cycle *o, const sc_reference *ref, const sc_model *m, const sc_control_dofs *dofs, int nact,
                            const int *act, double max_action, sc_policy *p, sc_err *err)
{
    sc_cycle cy;
    int rc = sc_cycle_from_times(ref, o->cycle.t0, o->cycle.t1, &cy, err);
    if (rc) return rc;
    int nb = m->nbones, nfrag = o->fragments, P = cy.i1 - cy.i0, ndof = dofs->n;
    if ((rc = sc_policy_alloc(p, nb, ndof, nact, nfrag, P + 1, err))) return rc;
    memcpy(p->act, act, sizeof(int) * (size_t)nact);
    p->max_action = max_action;
    p->period = ref->time[cy.i1] - ref->time[cy.i0];
    const double *base = o->base == SC_BASE_ID ? ref->target_quat : ref->local_quat;
    double h = 0;
    for (int s = 0; s <= P; s++) {
        p->base_time[s] = ref->time[cy.i0 + s] - ref->time[cy.i0];
        memcpy(p->base_quat + (size_t)s * nb * 4, base + (size_t)(cy.i0 + s) * nb * 4, sizeof(double) * 4 * (size_t)nb);
        memcpy(p->ref_quat + (size_t)s * nb * 4, ref->local_quat + (size_t)(cy.i0 + s) * nb * 4, sizeof(double) * 4 * (size_t)nb);
        h += ref->root_pos[3 * (cy.i0 + s) + 1];
    }
    p->mean_root_height = h / (P + 1);
    long *st = malloc(sizeof(long) * (size_t)(o->nseg / nfrag + 1));
    if (!st) {
        sc_policy_free(p);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int j = 0; j < nfrag; j++) {
        p->ref_t0[j] = p->period * j / nfrag;
        p->ref_t1[j] = p->period * (j + 1) / nfrag;
        int n = 0;
        for (int k = j; k < o->nseg; k += nfrag) {
            st[n++] = o->steps[k];
            for (int d = 0; d < ndof; d++) p->offset[(size_t)j * ndof + d] += o->offsets[(size_t)k * ndof + d];
        }
        for (int d = 0; d < ndof; d++) p->offset[(size_t)j * ndof + d] /= n;
        qsort(st, (size_t)n, sizeof *st, cmp_long);
        p->steps[j] = st[n / 2];
        for (int i = 0; i < nact; i++) p->a_bar[(size_t)j * nact + i] = p->offset[(size_t)j * ndof + act[i]];
        p->s_bar[(size_t)j * SC_FEATURES + SC_FEATURE_HEADING] = sc_policy_heading_target(p, j);
    }
    free(st);
    memcpy(p->start_root, o->start_root, sizeof p->start_root);
    memcpy(p->start_vel, o->start_vel, sizeof p->start_vel);
    memcpy(p->start_quat, o->start_quat, sizeof(double) * 4 * (size_t)nb);
    memcpy(p->start_w, o->start_w, sizeof(double) * 3 * (size_t)nb);
    return SC_OK;
}

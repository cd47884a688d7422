#include <stdlib.h>
#include <string.h>
#include "model/world.h"
#include "sampling/cost.h"

const char *const sc_cost_term_names[SC_COST_TERMS] = {"pose", "root", "end_effector", "balance", "com", "heading"};
const char *const sc_failure_names[SC_FAIL_KINDS] = {
    "none", "root too low", "tilted", "forbidden contact", "numerical failure", "cost above max_cost"};

void sc_tracker_default_opts(sc_tracker_opts *o)
{
    memset(o, 0, sizeof *o);
    double w[SC_COST_TERMS] = {5, 3, 30, 10, 0, 0};
    memcpy(o->weights, w, sizeof w);
    o->min_root_height = 0.7;
    o->max_tilt = 40 * SC_PI / 180;
    o->allowed_from_reference = 1;
    o->allowed_margin = 0.03;
}

void sc_tracker_free(sc_tracker *t)
{
    free(t->watch);
    free(t->vert_bone);
    memset(t, 0, sizeof *t);
}

int sc_tracker_init(sc_tracker *t, const sc_model *m, const sc_reference *r, const sc_tracker_opts *o, sc_err *err)
{
    memset(t, 0, sizeof *t);
    if (r->nb != m->nbones)
        return sc_fail(err, SC_EINPUT, "the reference has %d bones and the character %d: it was made for another character", r->nb, m->nbones);
    for (int b = 0; b < m->nbones; b++)
        if (strcmp(r->names[b], m->bone_name[b]))
            return sc_fail(err, SC_EINPUT, "the reference's bone %d is '%s' where the character has '%s': it was made for another character", b,
                           r->names[b], m->bone_name[b]);
    if (r->n < 2) return sc_fail(err, SC_EINPUT, "the reference has %d sample(s), at least 2 are needed", r->n);
    t->m = m;
    t->r = r;
    if (o) t->o = *o;
    else sc_tracker_default_opts(&t->o);
    t->nee = sc_model_leaf_bones(m, t->ee);
    for (int e = 0; e < t->nee; e++) t->ee_tip[e] = sc_v3_sub(sc_v3_load(m->bone_end + 3 * t->ee[e]), sc_v3_load(m->joint_pos + 3 * t->ee[e]));
    double lo = 1e300, hi = -1e300;
    for (int i = 0; i < m->nsurf_verts; i++) {
        lo = fmin(lo, m->surf_rest[3 * i + 1]);
        hi = fmax(hi, m->surf_rest[3 * i + 1]);
    }
    for (int b = 0; b < m->nbones; b++) {
        lo = fmin(lo, fmin(m->joint_pos[3 * b + 1], m->bone_end[3 * b + 1]));
        hi = fmax(hi, fmax(m->joint_pos[3 * b + 1], m->bone_end[3 * b + 1]));
    }
    t->height = hi - lo;
    for (int b = 0; b < m->nbones; b++) {
        t->allowed[b] = t->o.allowed[b];
        if (t->o.allowed_from_reference)
            for (int k = 0; k < r->n && !t->allowed[b]; k++)
                t->allowed[b] = r->contact_flag[(size_t)k * r->nb + b] != 0 ||
                    (r->contact_height && r->contact_height[(size_t)k * r->nb + b] < t->o.allowed_margin);
    }
    t->vert_bone = malloc(((size_t)m->nsurf_verts + 1) * sizeof(int));
    t->watch = malloc(((size_t)m->nsurf_verts + 1) * sizeof(int));
    if (!t->vert_bone || !t->watch) {
        sc_tracker_free(t);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    sc_model_surface_bones(m, t->vert_bone);
    for (int i = 0; i < m->nsurf_verts; i++)
        if (!t->allowed[t->vert_bone[i]]) t->watch[t->nwatch++] = i;
    return SC_OK;
}

/* The reference sample interval around tr: tr = time[k] + a (time[k+1] - time[k]). */
static void locate(const sc_reference *r, double tr, int *k, double *a)
{
    if (tr <= r->time[0]) {
        *k = 0;
        *a = 0;
        return;
    }
    if (tr >= r->time[r->n - 1]) {
        *k = r->n - 2;
        *a = 1;
        return;
    }
    int lo = 0, hi = r->n - 1;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (r->time[mid] <= tr) lo = mid;
        else hi = mid;
    }
    *k = lo;
    *a = (tr - r->time[lo]) / (r->time[hi] - r->time[lo]);
}

static sc_vec3 lerp3(const double *p, int k, double a, size_t stride)
{
    sc_vec3 x = sc_v3_load(p + stride * (size_t)k), y = sc_v3_load(p + stride * (size_t)(k + 1));
    return a == 0 ? x : sc_v3_add(sc_v3_scale(x, 1 - a), sc_v3_scale(y, a));
}

static sc_quat slerp4(const double *p, int k, double a, size_t stride)
{
    const double *x = p + stride * (size_t)k, *y = p + stride * (size_t)(k + 1);
    sc_quat qx = {x[0], x[1], x[2], x[3]};
    return a == 0 ? qx : sc_q_slerp(qx, (sc_quat){y[0], y[1], y[2], y[3]}, a);
}

void sc_tracker_reference(const sc_tracker *t, double tr, sc_ref_state *rs)
{
    const sc_reference *r = t->r;
    int k, nb = r->nb;
    double a;
    locate(r, tr, &k, &a);
    rs->root_pos = lerp3(r->root_pos, k, a, 3);
    rs->root_vel = lerp3(r->root_vel, k, a, 3);
    rs->com = lerp3(r->com, k, a, 3);
    rs->com_vel = lerp3(r->com_vel, k, a, 3);
    for (int b = 0; b < nb; b++) {
        rs->local[b] = slerp4(r->local_quat + 4 * b, k, a, 4 * (size_t)nb);
        rs->local_w[b] = lerp3(r->local_ang_vel + 3 * b, k, a, 3 * (size_t)nb);
    }
    for (int e = 0; e < t->nee; e++) {
        int b = t->ee[e];
        sc_vec3 p = lerp3(r->bone_pos + 3 * b, k, a, 3 * (size_t)nb);
        sc_quat q = slerp4(r->bone_quat + 4 * b, k, a, 4 * (size_t)nb);
        rs->ee[e] = sc_v3_add(p, sc_q_rotate(q, t->ee_tip[e]));
    }
}

void sc_tracker_reference_bones(const sc_tracker *t, double tr, sc_xform *bones)
{
    const sc_reference *r = t->r;
    int k, nb = r->nb;
    double a;
    locate(r, tr, &k, &a);
    for (int b = 0; b < nb; b++) {
        bones[b].p = lerp3(r->bone_pos + 3 * b, k, a, 3 * (size_t)nb);
        bones[b].q = slerp4(r->bone_quat + 4 * b, k, a, 4 * (size_t)nb);
    }
}

/* local rotation and relative angular velocity (parent frame) of bone b in the simulation */
static void sim_local(const sc_sim *s, int b, sc_quat *q, sc_vec3 *w)
{
    int p = s->m->parent[b];
    sc_vec3 wb = sc_v3_load(s->ang_vel + 3 * b);
    if (p < 0) {
        *q = s->pose[b].q;
        *w = wb;
        return;
    }
    sc_quat qp = s->pose[p].q;
    *q = sc_q_mul(sc_q_conj(qp), s->pose[b].q);
    *w = sc_q_rotate(sc_q_conj(qp), sc_v3_sub(wb, sc_v3_load(s->ang_vel + 3 * p)));
}

/* the rotation about +y that takes a heading h back to 0 */
static sc_quat unturn(double h) { return sc_q_axis_angle(sc_v3(0, 1, 0), -h); }

double sc_tracker_cost(const sc_tracker *t, const sc_sim *s, double tr, double terms[SC_COST_TERMS])
{
    const sc_model *m = t->m;
    sc_ref_state rs;
    sc_tracker_reference(t, tr, &rs);
    int in_heading = t->o.frame == SC_COST_FRAME_HEADING;
    sc_quat to_sim = sc_q_identity(), to_ref = sc_q_identity(); /* world to each heading frame */
    double pose = 0;
    int nj = 0;
    terms[SC_COST_HEADING] = 0;
    for (int b = 0; b < m->nbones; b++) {
        sc_quat q, qr = rs.local[b];
        sc_vec3 w, wr = rs.local_w[b];
        sim_local(s, b, &q, &w);
        if (m->parent[b] < 0 && in_heading) {
            double hs = sc_q_heading(q), hr = sc_q_heading(qr), dh = fabs(hs - hr);
            terms[SC_COST_HEADING] = dh > SC_PI ? 2 * SC_PI - dh : dh;
            to_sim = unturn(hs);
            to_ref = unturn(hr);
            q = sc_q_mul(to_sim, q);
            qr = sc_q_mul(to_ref, qr);
            w = sc_q_rotate(to_sim, w);
            wr = sc_q_rotate(to_ref, wr);
        }
        double d = sc_q_angle_between(q, qr) + 0.1 * sc_v3_dist(w, wr);
        if (m->parent[b] < 0) {
            terms[SC_COST_ROOT] = d;
        } else {
            pose += d;
            nj++;
        }
    }
    terms[SC_COST_POSE] = nj ? pose / nj : 0;
    sc_sim_diag d;
    sc_sim_diagnostics(s, &d);
    sc_vec3 c = sc_v3_load(d.com), cv = sc_v3_scale(sc_v3_load(d.linear), 1 / d.mass);
    double ee = 0, bal = 0;
    for (int e = 0; e < t->nee; e++) {
        int b = t->ee[e];
        sc_vec3 p = sc_v3_add(s->pose[b].p, sc_q_rotate(s->pose[b].q, t->ee_tip[e]));
        ee += fabs(p.y - rs.ee[e].y);
        sc_vec3 dv = sc_v3_sub(sc_q_rotate(to_sim, sc_v3_sub(c, p)), sc_q_rotate(to_ref, sc_v3_sub(rs.com, rs.ee[e])));
        bal += sqrt(dv.x * dv.x + dv.z * dv.z);
    }
    terms[SC_COST_EE] = t->nee ? ee / t->nee : 0;
    terms[SC_COST_BALANCE] =
        (t->nee ? bal / t->nee : 0) * 1.6 / t->height + 0.1 * sc_v3_dist(sc_q_rotate(to_sim, cv), sc_q_rotate(to_ref, rs.com_vel));
    terms[SC_COST_COM] = sc_v3_dist(c, rs.com);
    double total = 0;
    for (int i = 0; i < SC_COST_TERMS; i++) total += t->o.weights[i] * terms[i];
    return total;
}

int sc_tracker_failure(const sc_tracker *t, const sc_sim *s, double tr)
{
    const sc_reference *r = t->r;
    int k;
    double a;
    locate(r, tr, &k, &a);
    if (a > 0.5) k++;
    const double *q = r->local_quat + 4 * (size_t)k * r->nb; /* the root's local rotation is its world rotation */
    sc_vec3 up = sc_q_rotate(s->pose[0].q, sc_v3(0, 1, 0)), up_ref = sc_q_rotate((sc_quat){q[0], q[1], q[2], q[3]}, sc_v3(0, 1, 0));
    /* a drop of less than 5 % of the character's height is no fall: a body lying on the floor
       (its root 15 cm up) sinks that far into its own flesh */
    double ref_y = r->root_pos[3 * k + 1], ratio = t->o.min_root_height;
    if (ref_y > 0) ratio = fmin(ratio, 1 - 0.05 * t->height / ref_y);
    int fall = sc_fall_test(s->pose[0].p.y, ref_y, ratio, up, up_ref, t->o.max_tilt);
    if (fall == SC_FALL_LOW) return SC_FAIL_ROOT_LOW;
    if (fall == SC_FALL_TILT) return SC_FAIL_TILT;
    for (int i = 0; i < t->nwatch; i++)
        if (s->in_contact[t->watch[i]]) return SC_FAIL_CONTACT;
    if (t->o.obstacles_forbidden && s->contact.obstacles > 0) return SC_FAIL_CONTACT;
    return SC_FAIL_NONE;
}

double sc_tracker_joint_rms(const sc_tracker *t, const sc_sim *s, double tr)
{
    sc_ref_state rs;
    sc_tracker_reference(t, tr, &rs);
    double se = 0;
    int n = 0;
    for (int b = 0; b < t->m->nbones; b++) {
        if (t->m->parent[b] < 0) continue;
        sc_quat q;
        sc_vec3 w;
        sim_local(s, b, &q, &w);
        double d = sc_q_angle_between(q, rs.local[b]);
        se += d * d;
        n++;
    }
    return n ? sqrt(se / n) : 0;
}

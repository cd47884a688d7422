/* Gait cycles of a reference: detection and the cycle record (see cycle.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "motion/cycle.h"

static sc_quat qload(const double *a) { return (sc_quat){a[0], a[1], a[2], a[3]}; }
static void qstore(double *a, sc_quat q)
{
    a[0] = q.w;
    a[1] = q.x;
    a[2] = q.y;
    a[3] = q.z;
}

/* What makes two samples the same state of a gait, wherever the character is and faces. */
typedef struct {
    double pose, vel, root;
} mismatch;

static mismatch compare(const sc_reference *r, int a, int b)
{
    int nb = r->nb;
    mismatch d = {0, 0, 0};
    for (int j = 0; j < nb; j++) {
        sc_quat qa = qload(r->local_quat + 4 * ((size_t)a * nb + j)), qb = qload(r->local_quat + 4 * ((size_t)b * nb + j));
        sc_vec3 wa = sc_v3_load(r->local_ang_vel + 3 * ((size_t)a * nb + j)), wb = sc_v3_load(r->local_ang_vel + 3 * ((size_t)b * nb + j));
        if (j == 0) { /* the root: its tilt, and its angular velocity, in its heading frame */
            sc_quat ha = sc_q_axis_angle(sc_v3(0, 1, 0), -sc_q_heading(qa)), hb = sc_q_axis_angle(sc_v3(0, 1, 0), -sc_q_heading(qb));
            qa = sc_q_mul(ha, qa);
            qb = sc_q_mul(hb, qb);
            wa = sc_q_rotate(ha, wa);
            wb = sc_q_rotate(hb, wb);
        }
        double ang = sc_q_angle_between(qa, qb);
        d.pose += ang * ang;
        sc_vec3 dw = sc_v3_sub(wa, wb);
        d.vel += sc_v3_dot(dw, dw);
    }
    d.pose /= nb;
    d.vel /= nb;
    sc_quat qa = qload(r->local_quat + 4 * (size_t)a * nb), qb = qload(r->local_quat + 4 * (size_t)b * nb);
    sc_vec3 va = sc_q_rotate(sc_q_axis_angle(sc_v3(0, 1, 0), -sc_q_heading(qa)), sc_v3_load(r->root_vel + 3 * a));
    sc_vec3 vb = sc_q_rotate(sc_q_axis_angle(sc_v3(0, 1, 0), -sc_q_heading(qb)), sc_v3_load(r->root_vel + 3 * b));
    double dh = 10 * (r->root_pos[3 * a + 1] - r->root_pos[3 * b + 1]); /* 1 cm counts as 0.1 rad */
    sc_vec3 dv = sc_v3_sub(va, vb);
    d.root = dh * dh + 0.01 * sc_v3_dot(dv, dv);
    return d;
}

static double total(mismatch d) { return d.pose + 0.01 * d.vel + d.root; }

static void describe(const sc_reference *r, int i0, int i1, double mean, sc_cycle *c)
{
    mismatch d = compare(r, i0, i1);
    c->i0 = i0;
    c->i1 = i1;
    c->t0 = r->time[i0];
    c->t1 = r->time[i1];
    c->pose_error = sqrt(d.pose);
    c->velocity_error = sqrt(d.vel);
    c->mean_error = mean;
}

int sc_cycle_find(const sc_reference *r, double min_period, double max_period, sc_cycle *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    if (r->n < 3 || !(r->dt > 0)) return sc_fail(err, SC_EINPUT, "cycle: the reference has %d samples", r->n);
    int st = (int)lround(0.004 / r->dt); /* search on a 4 ms grid, refine at full resolution */
    if (st < 1) st = 1;
    int pmin = (int)ceil(min_period / r->dt), pmax = (int)floor(max_period / r->dt);
    int last = r->n - 1 - (int)lround(0.2 / r->dt); /* a period leaves at least 0.2 s of starts to average */
    if (pmax > last) pmax = last;
    if (pmin < 2 * st) pmin = 2 * st;
    if (pmax < pmin)
        return sc_fail(err, SC_EINPUT, "cycle: the %.3f s reference is too short for a period in [%g, %g] s", r->time[r->n - 1] - r->time[0],
                       min_period, max_period);
    int np = (pmax - pmin) / st + 1;
    double *mean = malloc((size_t)np * sizeof *mean);
    if (!mean) return sc_fail(err, SC_EIO, "out of memory");
    double best = INFINITY;
    for (int q = 0; q < np; q++) {
        int p = pmin + q * st, cnt = 0;
        double sum = 0;
        for (int a = 0; a + p < r->n; a += st, cnt++) sum += total(compare(r, a, a + p));
        mean[q] = sum / cnt;
        if (mean[q] < best) best = mean[q];
    }
    /* the shortest period at a local minimum within 15 % of the best: not a multiple of it */
    int pick = -1;
    for (int q = 0; q < np && pick < 0; q++) {
        int is_min = (q == 0 || mean[q] <= mean[q - 1]) && (q == np - 1 || mean[q] <= mean[q + 1]);
        if (is_min && mean[q] <= 1.15 * best) pick = q;
    }
    int p0 = pmin + pick * st, period = p0;
    double pbest = INFINITY;
    for (int p = p0 - st + 1; p <= p0 + st - 1; p++) { /* refine at full resolution */
        if (p < pmin || p > pmax) continue;
        double sum = 0;
        int cnt = 0;
        for (int a = 0; a + p < r->n; a += st, cnt++) sum += total(compare(r, a, a + p));
        if (sum / cnt < pbest) {
            pbest = sum / cnt;
            period = p;
        }
    }
    free(mean);
    int i0 = 0;
    double dbest = INFINITY;
    for (int a = 0; a + period < r->n; a++) {
        double d = total(compare(r, a, a + period));
        if (d < dbest) {
            dbest = d;
            i0 = a;
        }
    }
    /* the mean pose mismatch at this period, for the report */
    double pose = 0;
    int cnt = 0;
    for (int a = 0; a + period < r->n; a += st, cnt++) pose += compare(r, a, a + period).pose;
    describe(r, i0, i0 + period, sqrt(pose / cnt), c);
    return SC_OK;
}

int sc_cycle_from_times(const sc_reference *r, double t0, double t1, sc_cycle *c, sc_err *err)
{
    memset(c, 0, sizeof *c);
    double base = r->time[0];
    int i0 = (int)lround((t0 - 0) / r->dt), i1 = (int)lround((t1 - 0) / r->dt);
    if (!(t1 > t0) || i0 < 0 || i1 >= r->n || i1 - i0 < 2)
        return sc_fail(err, SC_EINPUT, "cycle [%g, %g] s is not a span of the %.3f s reference", t0, t1, r->time[r->n - 1] - base);
    describe(r, i0, i1, NAN, c);
    return SC_OK;
}

/* x -> R x + t, R a turn about +y, t horizontal */
typedef struct {
    sc_quat q;
    sc_vec3 t;
} plane_motion;

static sc_vec3 move_point(plane_motion m, sc_vec3 x) { return sc_v3_add(sc_q_rotate(m.q, x), m.t); }

int sc_cycle_repeat(const sc_reference *r, const sc_cycle *c, int n, sc_reference *out, sc_err *err)
{
    int P = c->i1 - c->i0, nb = r->nb;
    if (n < 1 || P < 1 || c->i0 < 0 || c->i1 >= r->n) return sc_fail(err, SC_EINPUT, "cycle: %d repetitions of samples [%d, %d)", n, c->i0, c->i1);
    int N = n * P + 1, rc = sc_reference_alloc(out, N, nb, err);
    if (rc) return rc;
    out->dt = r->dt;
    out->character_hash = r->character_hash;
    memcpy(out->names, r->names, sizeof *r->names * (size_t)nb);
    /* G takes the state at i0 to the state at i1 */
    double h0 = sc_q_heading(qload(r->local_quat + 4 * (size_t)c->i0 * nb)), h1 = sc_q_heading(qload(r->local_quat + 4 * (size_t)c->i1 * nb));
    sc_quat qg = sc_q_axis_angle(sc_v3(0, 1, 0), h1 - h0);
    sc_vec3 p0 = sc_v3_load(r->root_pos + 3 * c->i0), p1 = sc_v3_load(r->root_pos + 3 * c->i1);
    p0.y = p1.y = 0;
    plane_motion G = {qg, sc_v3_sub(p1, sc_q_rotate(qg, p0))}, T = {sc_q_identity(), sc_v3(0, 0, 0)};
    for (int k = 0; k < n; k++) {
        for (int s = c->i0; s <= c->i1; s++) {
            int o = k * P + (s - c->i0);
            if (s == c->i1 && k < n - 1) break; /* the next repetition starts there */
            out->time[o] = o * r->dt;
            sc_v3_store(out->root_pos + 3 * o, move_point(T, sc_v3_load(r->root_pos + 3 * s)));
            sc_v3_store(out->root_vel + 3 * o, sc_q_rotate(T.q, sc_v3_load(r->root_vel + 3 * s)));
            sc_v3_store(out->root_acc + 3 * o, sc_q_rotate(T.q, sc_v3_load(r->root_acc + 3 * s)));
            sc_v3_store(out->com + 3 * o, move_point(T, sc_v3_load(r->com + 3 * s)));
            sc_v3_store(out->com_vel + 3 * o, sc_q_rotate(T.q, sc_v3_load(r->com_vel + 3 * s)));
            for (int q = 0; q < 2; q++) {
                sc_v3_store(out->contact_resultant + 6 * o + 3 * q, sc_q_rotate(T.q, sc_v3_load(r->contact_resultant + 6 * s + 3 * q)));
                sc_v3_store(out->root_residual + 6 * o + 3 * q, sc_q_rotate(T.q, sc_v3_load(r->root_residual + 6 * s + 3 * q)));
            }
            size_t so = (size_t)s * nb, oo = (size_t)o * nb;
            memcpy(out->local_quat + 4 * oo, r->local_quat + 4 * so, 4 * sizeof(double) * (size_t)nb);
            memcpy(out->local_ang_vel + 3 * oo, r->local_ang_vel + 3 * so, 3 * sizeof(double) * (size_t)nb);
            memcpy(out->local_ang_acc + 3 * oo, r->local_ang_acc + 3 * so, 3 * sizeof(double) * (size_t)nb);
            memcpy(out->target_quat + 4 * oo, r->target_quat + 4 * so, 4 * sizeof(double) * (size_t)nb);
            memcpy(out->contact_flag + oo, r->contact_flag + so, sizeof(int) * (size_t)nb);
            memcpy(out->contact_height + oo, r->contact_height + so, sizeof(double) * (size_t)nb);
            memcpy(out->contact_speed + oo, r->contact_speed + so, sizeof(double) * (size_t)nb);
            /* the root's world rotation and angular velocity (its local ones) turn with the cycle */
            qstore(out->local_quat + 4 * oo, sc_q_mul(T.q, qload(r->local_quat + 4 * so)));
            sc_v3_store(out->local_ang_vel + 3 * oo, sc_q_rotate(T.q, sc_v3_load(r->local_ang_vel + 3 * so)));
            sc_v3_store(out->local_ang_acc + 3 * oo, sc_q_rotate(T.q, sc_v3_load(r->local_ang_acc + 3 * so)));
            for (int j = 0; j < nb; j++) {
                size_t a = so + (size_t)j, b = oo + (size_t)j;
                sc_v3_store(out->bone_pos + 3 * b, move_point(T, sc_v3_load(r->bone_pos + 3 * a)));
                qstore(out->bone_quat + 4 * b, sc_q_mul(T.q, qload(r->bone_quat + 4 * a)));
                sc_v3_store(out->contact_force + 3 * b, sc_q_rotate(T.q, sc_v3_load(r->contact_force + 3 * a)));
                sc_v3_store(out->contact_torque + 3 * b, sc_q_rotate(T.q, sc_v3_load(r->contact_torque + 3 * a)));
                sc_v3_store(out->joint_torque + 3 * b, sc_q_rotate(T.q, sc_v3_load(r->joint_torque + 3 * a)));
            }
        }
        T = (plane_motion){sc_q_mul(G.q, T.q), move_point(G, T.t)};
    }
    return SC_OK;
}

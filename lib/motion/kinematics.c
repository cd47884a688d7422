/* Reference kinematics: the body model, forward kinematics, finite differences and filters (see kinematics.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "motion/kinematics.h"
#include "core/log.h"

/* ---- keyframe motion -------------------------------------------------------------------- */

int sc_motion_alloc(sc_motion *m, int nframes, int nbones, double frame_time, sc_err *err)
{
    memset(m, 0, sizeof *m);
    if (nframes < 1 || nbones < 1) return sc_fail(err, SC_EINPUT, "motion: %d frames, %d bones", nframes, nbones);
    m->nframes = nframes;
    m->nbones = nbones;
    m->frame_time = frame_time;
    m->root_pos = sc_alloc(err, (size_t)nframes * 3, sizeof(double));
    m->local = sc_alloc(err, (size_t)nframes * nbones, sizeof(sc_quat));
    if (!m->root_pos || !m->local) {
        sc_motion_free(m);
        return SC_EIO;
    }
    return SC_OK;
}

void sc_motion_free(sc_motion *m)
{
    if (!m) return;
    free(m->root_pos);
    free(m->local);
    memset(m, 0, sizeof *m);
}

static double qdot(sc_quat a, sc_quat b) { return a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z; }
static sc_quat qneg(sc_quat a)
{
    sc_quat r = {-a.w, -a.x, -a.y, -a.z};
    return r;
}

void sc_motion_make_continuous(sc_motion *m)
{
    for (int f = 1; f < m->nframes; f++)
        for (int j = 0; j < m->nbones; j++) {
            sc_quat *q = &m->local[(size_t)f * m->nbones + j];
            if (qdot(*q, m->local[(size_t)(f - 1) * m->nbones + j]) < 0) *q = qneg(*q);
        }
}

int sc_motion_smooth(sc_motion *m, int window, sc_err *err)
{
    if (window < 1 || window % 2 == 0) return sc_fail(err, SC_EINPUT, "motion filter window %d (must be odd and >= 1)", window);
    if (window == 1 || m->nframes < SC_FILTER_MIN_FRAMES) return SC_OK;
    int n = m->nframes, nb = m->nbones, half = window / 2;
    double *pos = sc_alloc(err, (size_t)n * 3, sizeof(double));
    sc_quat *loc = sc_alloc(err, (size_t)n * nb, sizeof(sc_quat));
    if (!pos || !loc) {
        free(pos);
        free(loc);
        return SC_EIO;
    }
    for (int f = 0; f < n; f++) {
        int h = half;
        if (h > f) h = f;
        if (h > n - 1 - f) h = n - 1 - f; /* symmetric at the ends: zero phase */
        sc_vec3 s = {0, 0, 0};
        for (int k = -h; k <= h; k++) s = sc_v3_add(s, sc_v3_load(m->root_pos + 3 * (f + k)));
        sc_v3_store(pos + 3 * f, sc_v3_scale(s, 1.0 / (2 * h + 1)));
        for (int j = 0; j < nb; j++) {
            sc_quat q = m->local[(size_t)f * nb + j], qi = sc_q_conj(q);
            sc_vec3 r = {0, 0, 0};
            for (int k = -h; k <= h; k++) r = sc_v3_add(r, sc_q_log(sc_q_mul(qi, m->local[(size_t)(f + k) * nb + j])));
            loc[(size_t)f * nb + j] = sc_q_normalize(sc_q_mul(q, sc_q_exp(sc_v3_scale(r, 1.0 / (2 * h + 1)))));
        }
    }
    memcpy(m->root_pos, pos, (size_t)n * 3 * sizeof(double));
    memcpy(m->local, loc, (size_t)n * nb * sizeof(sc_quat));
    free(pos);
    free(loc);
    sc_motion_make_continuous(m);
    return SC_OK;
}

/* One signal x[n] (stride `stride`) through a 2nd-order Butterworth low-pass forwards and
 * backwards; work holds n + 2 pad doubles. */
static void filtfilt(double *x, int n, size_t stride, const double b[3], const double a[3], int pad, double *work)
{
    int N = n + 2 * pad;
    for (int i = 0; i < n; i++) work[pad + i] = x[(size_t)i * stride];
    for (int i = 1; i <= pad; i++) { /* odd reflection keeps value and slope at the ends */
        work[pad - i] = 2 * work[pad] - work[pad + i];
        work[pad + n - 1 + i] = 2 * work[pad + n - 1] - work[pad + n - 1 - i];
    }
    for (int pass = 0; pass < 2; pass++) {
        double x1 = work[0], x2 = work[0], y1 = work[0], y2 = work[0]; /* steady state of the first sample */
        for (int i = 0; i < N; i++) {
            double xi = work[i], y = b[0] * xi + b[1] * x1 + b[2] * x2 - a[1] * y1 - a[2] * y2;
            x2 = x1;
            x1 = xi;
            y2 = y1;
            y1 = y;
            work[i] = y;
        }
        for (int i = 0; i < N / 2; i++) { /* reverse for the backward pass (and back at the end) */
            double t = work[i];
            work[i] = work[N - 1 - i];
            work[N - 1 - i] = t;
        }
    }
    for (int i = 0; i < n; i++) x[(size_t)i * stride] = work[pad + i];
}

int sc_motion_lowpass(sc_motion *m, double cutoff_hz, sc_err *err)
{
    double fs = 1.0 / m->frame_time;
    if (!(cutoff_hz > 0) || !(cutoff_hz < 0.5 * fs))
        return sc_fail(err, SC_EINPUT, "motion filter cutoff %g Hz must be in (0, %g) (half the frame rate)", cutoff_hz, 0.5 * fs);
    int n = m->nframes, nb = m->nbones;
    if (n < SC_FILTER_MIN_FRAMES) return SC_OK;
    double K = tan(SC_PI * cutoff_hz / fs), nrm = 1.0 / (1 + sqrt(2.0) * K + K * K);
    double b[3] = {K * K * nrm, 2 * K * K * nrm, K * K * nrm};
    double a[3] = {1, 2 * (K * K - 1) * nrm, (1 - sqrt(2.0) * K + K * K) * nrm};
    int pad = (int)ceil(3 * fs / cutoff_hz);
    if (pad > n - 1) pad = n - 1;
    double *work = malloc((size_t)(n + 2 * pad) * sizeof(double));
    if (!work) return sc_fail(err, SC_EIO, "out of memory");
    sc_motion_make_continuous(m);
    for (int c = 0; c < 3; c++) filtfilt(m->root_pos + c, n, 3, b, a, pad, work);
    for (int j = 0; j < nb; j++)
        for (int c = 0; c < 4; c++) filtfilt(&m->local[j].w + c, n, (size_t)nb * 4, b, a, pad, work);
    for (size_t i = 0; i < (size_t)n * nb; i++) m->local[i] = sc_q_normalize(m->local[i]);
    free(work);
    return SC_OK;
}

/* ---- rigid-body model ------------------------------------------------------------------- */

void sc_body_free(sc_body *b)
{
    if (!b) return;
    free(b->parent);
    free(b->type);
    free(b->offset);
    free(b->axis);
    free(b->mass);
    free(b->com);
    free(b->inertia);
    memset(b, 0, sizeof *b);
}

int sc_nearest_bone(const sc_model *m, sc_vec3 x)
{
    int best = 0;
    double bd = INFINITY;
    for (int j = m->nbones - 1; j >= 0; j--) { /* ties (a joint's own point) go to the child */
        double d = sc_point_segment_dist2(x, sc_v3_load(m->joint_pos + 3 * j), sc_v3_load(m->bone_end + 3 * j));
        if (d < bd) {
            bd = d;
            best = j;
        }
    }
    return best;
}

int sc_node_weights(const sc_model *m, int *k, int **bone, double **w, int *source, sc_err *err)
{
    int n = m->nnodes, kk = m->skin_k > 0 ? m->skin_k : 1;
    *bone = sc_alloc(err, (size_t)n * kk, sizeof(int));
    *w = sc_alloc(err, (size_t)n * kk, sizeof(double));
    if (!*bone || !*w) {
        free(*bone);
        free(*w);
        *bone = NULL;
        *w = NULL;
        return SC_EIO;
    }
    *k = kk;
    if (m->skin_k > 0) {
        memcpy(*bone, m->skin_bone, (size_t)n * kk * sizeof(int));
        memcpy(*w, m->skin_w, (size_t)n * kk * sizeof(double));
        *source = SC_MASS_SKIN;
    } else {
        for (int i = 0; i < n; i++) {
            (*bone)[i] = sc_nearest_bone(m, sc_v3_load(m->rest_pos + 3 * i));
            (*w)[i] = 1;
        }
        *source = SC_MASS_NEAREST;
    }
    return SC_OK;
}

int sc_body_from_model(const sc_model *m, int want, sc_body *b, sc_err *err)
{
    memset(b, 0, sizeof *b);
    int nb = m->nbones;
    if (nb < 1 || !m->parent || !m->joint_type || !m->joint_pos) return sc_fail(err, SC_EINPUT, "body model: the character has no skeleton");
    if (nb > SC_BODY_MAX_BONES) return sc_fail(err, SC_EINPUT, "body model: %d bones (at most %d)", nb, SC_BODY_MAX_BONES);
    b->nb = nb;
    b->parent = sc_alloc(err, nb, sizeof(int));
    b->type = sc_alloc(err, nb, sizeof(int));
    b->offset = sc_alloc(err, (size_t)nb * 3, sizeof(double));
    b->axis = sc_alloc(err, (size_t)nb * 3, sizeof(double));
    b->mass = sc_alloc(err, nb, sizeof(double));
    b->com = sc_alloc(err, (size_t)nb * 3, sizeof(double));
    b->inertia = sc_alloc(err, (size_t)nb * 9, sizeof(double));
    if (!b->parent || !b->type || !b->offset || !b->axis || !b->mass || !b->com || !b->inertia) {
        sc_body_free(b);
        return SC_EIO;
    }
    for (int j = 0; j < nb; j++) {
        b->parent[j] = m->parent[j];
        b->type[j] = m->joint_type[j];
        if (j > 0 && (m->parent[j] < 0 || m->parent[j] >= j)) {
            sc_body_free(b);
            return sc_fail(err, SC_EINPUT, "body model: bone %d has parent %d (parents must come first)", j, m->parent[j]);
        }
        sc_vec3 o = sc_v3_load(m->joint_pos + 3 * j);
        if (j > 0) o = sc_v3_sub(o, sc_v3_load(m->joint_pos + 3 * m->parent[j]));
        sc_v3_store(b->offset + 3 * j, o);
        if (m->joint_type[j] == SC_JOINT_HINGE && m->hinge_axis) sc_v3_store(b->axis + 3 * j, sc_v3_normalize(sc_v3_load(m->hinge_axis + 3 * j)));
    }
    if (want == SC_MASS_FIXED) {
        if (!m->bone_mass || !m->bone_com || !m->bone_inertia) {
            sc_body_free(b);
            return sc_fail(err, SC_EINPUT, "body model: the character has no bone masses");
        }
        for (int j = 0; j < nb; j++) {
            b->mass[j] = m->bone_mass[j];
            sc_v3_store(b->com + 3 * j, sc_v3_sub(sc_v3_load(m->bone_com + 3 * j), sc_v3_load(m->joint_pos + 3 * j)));
            memcpy(b->inertia + 9 * j, m->bone_inertia + 9 * j, 9 * sizeof(double));
            b->total_mass += b->mass[j];
        }
        b->source = SC_MASS_FIXED;
        return SC_OK;
    }
    if (m->nnodes < 1 || !m->rest_pos || !m->node_mass) {
        sc_body_free(b);
        return sc_fail(err, SC_EINPUT, "body model: the character has no tet nodes to take masses from");
    }
    /* [L13] 5.1: m_j = sum_i w_ij m_i, and the centre of mass and inertia likewise, every node
       moving rigidly with bone j at the reference pose. */
    int k, *wb, src;
    double *ww;
    int rc = sc_node_weights(m, &k, &wb, &ww, &src, err);
    if (rc) {
        sc_body_free(b);
        return rc;
    }
    double *first = calloc((size_t)nb * 3, sizeof(double));
    if (!first) {
        free(wb);
        free(ww);
        sc_body_free(b);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int i = 0; i < m->nnodes; i++)
        for (int s = 0; s < k; s++) {
            int j = wb[i * k + s];
            double mw = ww[i * k + s] * m->node_mass[i];
            if (j < 0 || j >= nb || !(mw > 0)) continue;
            b->mass[j] += mw;
            for (int c = 0; c < 3; c++) first[3 * j + c] += mw * m->rest_pos[3 * i + c];
        }
    for (int j = 0; j < nb; j++) {
        sc_vec3 c;
        if (b->mass[j] > 0) c = sc_v3_scale(sc_v3_load(first + 3 * j), 1.0 / b->mass[j]);
        else {
            c = sc_v3_scale(sc_v3_add(sc_v3_load(m->joint_pos + 3 * j), sc_v3_load(m->bone_end + 3 * j)), 0.5);
            sc_log_warn("inverse dynamics: bone '%s' receives no node mass", m->bone_name ? m->bone_name[j] : "?");
        }
        sc_v3_store(first + 3 * j, c); /* now the world rest com */
        sc_v3_store(b->com + 3 * j, sc_v3_sub(c, sc_v3_load(m->joint_pos + 3 * j)));
        b->total_mass += b->mass[j];
    }
    for (int i = 0; i < m->nnodes; i++)
        for (int s = 0; s < k; s++) {
            int j = wb[i * k + s];
            double mw = ww[i * k + s] * m->node_mass[i];
            if (j < 0 || j >= nb || !(mw > 0)) continue;
            sc_vec3 r = sc_v3_sub(sc_v3_load(m->rest_pos + 3 * i), sc_v3_load(first + 3 * j));
            double r2 = sc_v3_dot(r, r), rv[3] = {r.x, r.y, r.z};
            for (int a = 0; a < 3; a++)
                for (int c = 0; c < 3; c++) b->inertia[9 * j + 3 * a + c] += mw * ((a == c) * r2 - rv[a] * rv[c]);
        }
    free(first);
    free(wb);
    free(ww);
    b->source = src;
    return SC_OK;
}

/* ---- simulation-rate trajectory --------------------------------------------------------- */

void sc_traj_free(sc_traj *t)
{
    if (!t) return;
    free(t->root_pos);
    free(t->root_vel);
    free(t->root_acc);
    free(t->local);
    free(t->ang_vel);
    free(t->ang_acc);
    memset(t, 0, sizeof *t);
}

/* Channel c of keyframe interval T: c = 0 the root's translation, c = 1 + j bone j's rotation,
 * as a parent-frame velocity: d = (p_T+1 - p_T)/dT, or R(q_T) log(q_T^-1 q_T+1)/dT. The
 * rotation vector of q_T^-1 q_T+1 is the constant body-frame angular velocity of the slerp
 * between them times dT; q_T maps it into the parent frame, where it is constant too. */
static sc_vec3 interval_rate(const sc_motion *m, int c, int T)
{
    double inv = 1.0 / m->frame_time;
    if (c == 0) return sc_v3_scale(sc_v3_sub(sc_v3_load(m->root_pos + 3 * (T + 1)), sc_v3_load(m->root_pos + 3 * T)), inv);
    int nb = m->nbones, j = c - 1;
    sc_quat a = m->local[(size_t)T * nb + j], b = m->local[(size_t)(T + 1) * nb + j];
    return sc_v3_scale(sc_q_rotate(a, sc_q_log(sc_q_mul(sc_q_conj(a), b))), inv);
}

int sc_traj_from_motion(const sc_motion *m, double dt, int scheme, sc_traj *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    int N = m->nframes, nb = m->nbones, nc = nb + 1;
    double DT = m->frame_time;
    if (N < 2) return sc_fail(err, SC_EINPUT, "kinematics: the motion has %d frame(s), at least 2 are needed", N);
    if (!(DT > 0) || !(dt > 0) || !isfinite(DT) || !isfinite(dt))
        return sc_fail(err, SC_EINPUT, "kinematics: frame time %g s and step %g s must be > 0", DT, dt);
    if (scheme != SC_DIFF_FORWARD && scheme != SC_DIFF_CENTRAL) return sc_fail(err, SC_EINPUT, "kinematics: unknown scheme %d", scheme);
    double span = (N - 1) * DT;
    double ns = floor(span / dt + 1e-9) + 1;
    if (ns > 5e7) return sc_fail(err, SC_EINPUT, "kinematics: %.0f samples (%.3g s at %g s) is too many", ns, span, dt);
    int n = (int)ns;
    /* d: interval rates; v, a: nodal velocities and accelerations */
    sc_vec3 *d = sc_alloc(err, (size_t)(N - 1) * nc, sizeof(sc_vec3));
    sc_vec3 *v = sc_alloc(err, (size_t)N * nc, sizeof(sc_vec3));
    sc_vec3 *a = sc_alloc(err, (size_t)N * nc, sizeof(sc_vec3));
    out->root_pos = sc_alloc(err, (size_t)n * 3, sizeof(double));
    out->root_vel = sc_alloc(err, (size_t)n * 3, sizeof(double));
    out->root_acc = sc_alloc(err, (size_t)n * 3, sizeof(double));
    out->local = sc_alloc(err, (size_t)n * nb, sizeof(sc_quat));
    out->ang_vel = sc_alloc(err, (size_t)n * nb * 3, sizeof(double));
    out->ang_acc = sc_alloc(err, (size_t)n * nb * 3, sizeof(double));
    if (!d || !v || !a || !out->root_pos || !out->root_vel || !out->root_acc || !out->local || !out->ang_vel || !out->ang_acc) {
        free(d);
        free(v);
        free(a);
        sc_traj_free(out);
        return SC_EIO;
    }
    out->n = n;
    out->nb = nb;
    out->dt = dt;
    for (int T = 0; T < N - 1; T++)
        for (int c = 0; c < nc; c++) d[(size_t)T * nc + c] = interval_rate(m, c, T);
    sc_vec3 zero = {0, 0, 0};
#define D(T, c) d[(size_t)(T)*nc + (c)]
    for (int T = 0; T < N; T++)
        for (int c = 0; c < nc; c++) {
            sc_vec3 vv, aa = zero;
            if (scheme == SC_DIFF_FORWARD) {
                vv = D(T < N - 1 ? T : N - 2, c);                                           /* eq. 20 */
                int Ta = T < N - 2 ? T : N - 3;                                             /* last intervals reuse a_N-3 */
                if (Ta >= 0) aa = sc_v3_scale(sc_v3_sub(D(Ta + 1, c), D(Ta, c)), 1.0 / DT); /* eq. 21 */
            } else {
                if (T == 0) vv = D(0, c);
                else if (T == N - 1) vv = D(N - 2, c);
                else vv = sc_v3_scale(sc_v3_add(D(T - 1, c), D(T, c)), 0.5);
                int Ta = T < 1 ? 1 : T > N - 2 ? N - 2 : T;
                if (N >= 3) aa = sc_v3_scale(sc_v3_sub(D(Ta, c), D(Ta - 1, c)), 1.0 / DT);
            }
            v[(size_t)T * nc + c] = vv;
            a[(size_t)T * nc + c] = aa;
        }
#undef D
    for (int k = 0; k < n; k++) {
        /* sample k lies in keyframe interval T; a sample on a keyframe (up to rounding: k dt / dT
           may come out as 2.9999999) belongs to the interval it starts, whose acceleration
           eq. 22 holds */
        double u = k * dt / DT;
        int T = (int)floor(u + 1e-9);
        if (T > N - 2) T = N - 2;
        if (T < 0) T = 0;
        double al = u - T;
        al = al < 0 ? 0 : al > 1 ? 1 : al;
        const sc_vec3 *v0 = v + (size_t)T * nc, *v1 = v0 + nc, *a0 = a + (size_t)T * nc, *a1 = a0 + nc;
        for (int c = 0; c < nc; c++) {
            sc_vec3 vk = sc_v3_add(sc_v3_scale(v0[c], 1 - al), sc_v3_scale(v1[c], al)); /* eq. 23 */
            sc_vec3 ak = scheme == SC_DIFF_FORWARD ? a0[c]                              /* eq. 22 */
                                                   : sc_v3_add(sc_v3_scale(a0[c], 1 - al), sc_v3_scale(a1[c], al));
            if (c == 0) {
                sc_vec3 p0 = sc_v3_load(m->root_pos + 3 * T), p1 = sc_v3_load(m->root_pos + 3 * (T + 1));
                sc_v3_store(out->root_pos + 3 * k, sc_v3_add(sc_v3_scale(p0, 1 - al), sc_v3_scale(p1, al))); /* eq. 24 */
                sc_v3_store(out->root_vel + 3 * k, vk);
                sc_v3_store(out->root_acc + 3 * k, ak);
            } else {
                int j = c - 1;
                out->local[(size_t)k * nb + j] = sc_q_slerp(m->local[(size_t)T * nb + j], m->local[(size_t)(T + 1) * nb + j], al);
                sc_v3_store(out->ang_vel + 3 * ((size_t)k * nb + j), vk);
                sc_v3_store(out->ang_acc + 3 * ((size_t)k * nb + j), ak);
            }
        }
    }
    /* keep every bone's samples in one hemisphere, as the keyframes are */
    for (int k = 1; k < n; k++)
        for (int j = 0; j < nb; j++) {
            sc_quat *q = &out->local[(size_t)k * nb + j];
            if (qdot(*q, out->local[(size_t)(k - 1) * nb + j]) < 0) *q = qneg(*q);
        }
    free(d);
    free(v);
    free(a);
    return SC_OK;
}

/* ---- forward kinematics ----------------------------------------------------------------- */

void sc_kin_forward_raw(const sc_body *b, sc_vec3 root_p, sc_vec3 root_v, sc_vec3 root_a, const sc_quat *local, const double *w_local,
                        const double *dw_local, sc_bone_kin *out)
{
    sc_vec3 zero = {0, 0, 0};
    for (int j = 0; j < b->nb; j++) {
        sc_vec3 wl = w_local ? sc_v3_load(w_local + 3 * j) : zero, dwl = dw_local ? sc_v3_load(dw_local + 3 * j) : zero;
        sc_bone_kin *o = &out[j];
        if (j == 0) {
            o->q = sc_q_normalize(local[0]);
            o->p = root_p;
            o->v = root_v;
            o->a = root_a;
            o->w = wl;
            o->dw = dwl;
            continue;
        }
        const sc_bone_kin *pa = &out[b->parent[j]];
        sc_vec3 r = sc_q_rotate(pa->q, sc_v3_load(b->offset + 3 * j));
        sc_vec3 wrel = sc_q_rotate(pa->q, wl);
        o->q = sc_q_normalize(sc_q_mul(pa->q, local[j]));
        o->p = sc_v3_add(pa->p, r);
        o->w = sc_v3_add(pa->w, wrel);
        /* d/dt (R_p w_rel) = w_p x (R_p w_rel) + R_p dw_rel */
        o->dw = sc_v3_add(sc_v3_add(pa->dw, sc_v3_cross(pa->w, wrel)), sc_q_rotate(pa->q, dwl));
        o->v = sc_v3_add(pa->v, sc_v3_cross(pa->w, r));
        o->a = sc_v3_add(sc_v3_add(pa->a, sc_v3_cross(pa->dw, r)), sc_v3_cross(pa->w, sc_v3_cross(pa->w, r)));
    }
}

void sc_kin_forward(const sc_body *b, const sc_traj *t, int k, sc_bone_kin *out)
{
    size_t o = (size_t)k * t->nb;
    sc_kin_forward_raw(b, sc_v3_load(t->root_pos + 3 * k), sc_v3_load(t->root_vel + 3 * k), sc_v3_load(t->root_acc + 3 * k), t->local + o,
                       t->ang_vel + 3 * o, t->ang_acc + 3 * o, out);
}

sc_vec3 sc_kin_com(const sc_body *b, const sc_bone_kin *k, int j) { return sc_v3_add(k[j].p, sc_q_rotate(k[j].q, sc_v3_load(b->com + 3 * j))); }

sc_vec3 sc_kin_com_vel(const sc_body *b, const sc_bone_kin *k, int j)
{
    sc_vec3 rc = sc_q_rotate(k[j].q, sc_v3_load(b->com + 3 * j));
    return sc_v3_add(k[j].v, sc_v3_cross(k[j].w, rc));
}

sc_vec3 sc_kin_com_acc(const sc_body *b, const sc_bone_kin *k, int j)
{
    sc_vec3 rc = sc_q_rotate(k[j].q, sc_v3_load(b->com + 3 * j));
    return sc_v3_add(sc_v3_add(k[j].a, sc_v3_cross(k[j].dw, rc)), sc_v3_cross(k[j].w, sc_v3_cross(k[j].w, rc)));
}

sc_mat3 sc_kin_inertia_world(const sc_body *b, const sc_bone_kin *k, int j)
{
    sc_mat3 I, R = sc_q_to_m3(k[j].q);
    for (int i = 0; i < 9; i++) I.m[i / 3][i % 3] = b->inertia[9 * j + i];
    return sc_m3_mul_nt(sc_m3_mul(R, I), R);
}

sc_quat sc_kin_twist(sc_quat q, sc_vec3 a)
{
    double p = q.x * a.x + q.y * a.y + q.z * a.z;
    sc_quat t = {q.w, p * a.x, p * a.y, p * a.z};
    double n = sqrt(t.w * t.w + p * p);
    if (n < 1e-12) return sc_q_identity(); /* a half-turn swing: the twist is undefined */
    t.w /= n;
    t.x /= n;
    t.y /= n;
    t.z /= n;
    return t;
}

double sc_kin_twist_angle(sc_quat q, sc_vec3 a)
{
    double p = q.x * a.x + q.y * a.y + q.z * a.z;
    return remainder(2 * atan2(p, q.w), 2 * SC_PI);
}

/* ---- smooth offsets --------------------------------------------------------------------- */

void sc_offset_fit(int n, double h, double lambda, const double *weight, const double *t, double *x, double *a0, double *a1, double *a2)
{
    double w = 1 / (h * h * h * h);
    for (int i = 0; i < n; i++) a0[i] = lambda * (weight ? weight[i] : 1), a1[i] = a2[i] = x[i] = 0;
    for (int f = 1; f < n - 1; f++) { /* row f of D2: (1, -2, 1) at f-1, f, f+1 */
        int idx[3] = {f - 1, f, f + 1};
        double c[3] = {1, -2, 1};
        for (int p = 0; p < 3; p++) {
            x[idx[p]] += c[p] * t[f] / (h * h);
            for (int q = p; q < 3; q++) {
                double v = w * c[p] * c[q];
                int d = q - p, i = idx[p];
                if (d == 0) a0[i] += v;
                else if (d == 1) a1[i] += v;
                else a2[i] += v;
            }
        }
    }
    /* L D L^T with L unit lower banded: l1[i] = L(i+1, i), l2[i] = L(i+2, i); a0 becomes D */
    for (int i = 0; i < n; i++) {
        if (i >= 1) a0[i] -= a1[i - 1] * a1[i - 1] * a0[i - 1];
        if (i >= 2) a0[i] -= a2[i - 2] * a2[i - 2] * a0[i - 2];
        if (i + 1 < n) {
            double v = a1[i];
            if (i >= 1) v -= a2[i - 1] * a1[i - 1] * a0[i - 1];
            a1[i] = v / a0[i];
        }
        if (i + 2 < n) a2[i] = a2[i] / a0[i];
    }
    for (int i = 0; i < n; i++) { /* forward: L y = b */
        if (i >= 1) x[i] -= a1[i - 1] * x[i - 1];
        if (i >= 2) x[i] -= a2[i - 2] * x[i - 2];
    }
    for (int i = 0; i < n; i++) x[i] /= a0[i];
    for (int i = n - 1; i >= 0; i--) { /* backward: L^T x = y */
        if (i + 1 < n) x[i] -= a1[i] * x[i + 1];
        if (i + 2 < n) x[i] -= a2[i] * x[i + 2];
    }
}

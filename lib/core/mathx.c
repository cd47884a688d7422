#include <string.h>
#include "mathx.h"

sc_mat3 sc_m3_zero(void)
{
    sc_mat3 a;
    memset(&a, 0, sizeof a);
    return a;
}
sc_mat3 sc_m3_identity(void)
{
    sc_mat3 a = sc_m3_zero();
    a.m[0][0] = a.m[1][1] = a.m[2][2] = 1;
    return a;
}
sc_mat3 sc_m3_from_cols(sc_vec3 c0, sc_vec3 c1, sc_vec3 c2)
{
    sc_mat3 a = {{{c0.x, c1.x, c2.x}, {c0.y, c1.y, c2.y}, {c0.z, c1.z, c2.z}}};
    return a;
}
sc_mat3 sc_m3_mul(sc_mat3 a, sc_mat3 b)
{
    sc_mat3 c;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) c.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return c;
}
sc_mat3 sc_m3_transpose(sc_mat3 a)
{
    sc_mat3 t;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) t.m[i][j] = a.m[j][i];
    return t;
}
sc_mat3 sc_m3_mul_tn(sc_mat3 a, sc_mat3 b) { return sc_m3_mul(sc_m3_transpose(a), b); }
sc_mat3 sc_m3_mul_nt(sc_mat3 a, sc_mat3 b) { return sc_m3_mul(a, sc_m3_transpose(b)); }
sc_mat3 sc_m3_add(sc_mat3 a, sc_mat3 b)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] += b.m[i][j];
    return a;
}
sc_mat3 sc_m3_sub(sc_mat3 a, sc_mat3 b) { return sc_m3_add(a, sc_m3_scale(b, -1)); }
sc_mat3 sc_m3_scale(sc_mat3 a, double s)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] *= s;
    return a;
}
sc_vec3 sc_m3_mulv(sc_mat3 a, sc_vec3 v)
{
    return sc_v3(a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z, a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
                 a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z);
}
sc_vec3 sc_m3_mulv_t(sc_mat3 a, sc_vec3 v) { return sc_m3_mulv(sc_m3_transpose(a), v); }
sc_vec3 sc_m3_col(sc_mat3 a, int j) { return sc_v3(a.m[0][j], a.m[1][j], a.m[2][j]); }
double sc_m3_det(sc_mat3 a)
{
    return a.m[0][0] * (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) - a.m[0][1] * (a.m[1][0] * a.m[2][2] - a.m[1][2] * a.m[2][0]) +
        a.m[0][2] * (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]);
}
double sc_m3_trace(sc_mat3 a) { return a.m[0][0] + a.m[1][1] + a.m[2][2]; }
double sc_m3_frob(sc_mat3 a)
{
    double s = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) s += a.m[i][j] * a.m[i][j];
    return sqrt(s);
}
int sc_m3_inverse(sc_mat3 a, sc_mat3 *out)
{
    double d = sc_m3_det(a);
    double scale = sc_m3_frob(a);
    if (!(fabs(d) > 1e-300) || fabs(d) <= 1e-14 * scale * scale * scale) return 0;
    sc_mat3 c;
    c.m[0][0] = a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1];
    c.m[0][1] = a.m[0][2] * a.m[2][1] - a.m[0][1] * a.m[2][2];
    c.m[0][2] = a.m[0][1] * a.m[1][2] - a.m[0][2] * a.m[1][1];
    c.m[1][0] = a.m[1][2] * a.m[2][0] - a.m[1][0] * a.m[2][2];
    c.m[1][1] = a.m[0][0] * a.m[2][2] - a.m[0][2] * a.m[2][0];
    c.m[1][2] = a.m[0][2] * a.m[1][0] - a.m[0][0] * a.m[1][2];
    c.m[2][0] = a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0];
    c.m[2][1] = a.m[0][1] * a.m[2][0] - a.m[0][0] * a.m[2][1];
    c.m[2][2] = a.m[0][0] * a.m[1][1] - a.m[0][1] * a.m[1][0];
    *out = sc_m3_scale(c, 1.0 / d);
    return 1;
}
sc_mat3 sc_m3_skew(sc_vec3 v)
{
    sc_mat3 a = {{{0, -v.z, v.y}, {v.z, 0, -v.x}, {-v.y, v.x, 0}}};
    return a;
}

void sc_m3_sym_eigen(sc_mat3 a, double e[3], sc_mat3 *vout)
{
    sc_mat3 v = sc_m3_identity();
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = fabs(a.m[0][1]) + fabs(a.m[0][2]) + fabs(a.m[1][2]);
        double diag = fabs(a.m[0][0]) + fabs(a.m[1][1]) + fabs(a.m[2][2]);
        if (off <= 1e-300 || off < 1e-17 * diag) break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                double apq = a.m[p][q];
                if (apq == 0) continue;
                double theta = (a.m[q][q] - a.m[p][p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 3; k++) { /* A = J^T A J */
                    double akp = a.m[k][p], akq = a.m[k][q];
                    a.m[k][p] = c * akp - s * akq;
                    a.m[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = a.m[p][k], aqk = a.m[q][k];
                    a.m[p][k] = c * apk - s * aqk;
                    a.m[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; k++) {
                    double vkp = v.m[k][p], vkq = v.m[k][q];
                    v.m[k][p] = c * vkp - s * vkq;
                    v.m[k][q] = s * vkp + c * vkq;
                }
            }
    }
    int idx[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++) /* sort descending */
        for (int j = i + 1; j < 3; j++)
            if (a.m[idx[j]][idx[j]] > a.m[idx[i]][idx[i]]) {
                int t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
            }
    sc_mat3 vs;
    for (int j = 0; j < 3; j++) {
        e[j] = a.m[idx[j]][idx[j]];
        for (int k = 0; k < 3; k++) vs.m[k][j] = v.m[k][idx[j]];
    }
    if (vout) *vout = vs;
}

sc_quat sc_q_identity(void)
{
    sc_quat q = {1, 0, 0, 0};
    return q;
}
sc_quat sc_q_mul(sc_quat a, sc_quat b)
{
    sc_quat r = {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                 a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
    return r;
}
sc_quat sc_q_conj(sc_quat a)
{
    sc_quat r = {a.w, -a.x, -a.y, -a.z};
    return r;
}
sc_quat sc_q_normalize(sc_quat a)
{
    double n = sqrt(a.w * a.w + a.x * a.x + a.y * a.y + a.z * a.z);
    if (!(n > 0)) return sc_q_identity();
    sc_quat r = {a.w / n, a.x / n, a.y / n, a.z / n};
    return r;
}
sc_quat sc_q_axis_angle(sc_vec3 axis, double angle)
{
    sc_vec3 u = sc_v3_normalize(axis);
    double s = sin(0.5 * angle);
    sc_quat q = {cos(0.5 * angle), u.x * s, u.y * s, u.z * s};
    return q;
}
sc_vec3 sc_q_rotate(sc_quat q, sc_vec3 v)
{
    sc_vec3 u = sc_v3(q.x, q.y, q.z);
    sc_vec3 t = sc_v3_scale(sc_v3_cross(u, v), 2.0);
    return sc_v3_add(sc_v3_add(v, sc_v3_scale(t, q.w)), sc_v3_cross(u, t));
}
sc_mat3 sc_q_to_m3(sc_quat q)
{
    double w = q.w, x = q.x, y = q.y, z = q.z;
    sc_mat3 r = {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                  {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                  {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
    return r;
}
sc_quat sc_q_from_m3(sc_mat3 r)
{
    sc_quat q;
    double tr = sc_m3_trace(r);
    if (tr > 0) {
        double s = sqrt(tr + 1.0) * 2;
        q.w = 0.25 * s;
        q.x = (r.m[2][1] - r.m[1][2]) / s;
        q.y = (r.m[0][2] - r.m[2][0]) / s;
        q.z = (r.m[1][0] - r.m[0][1]) / s;
    } else if (r.m[0][0] > r.m[1][1] && r.m[0][0] > r.m[2][2]) {
        double s = sqrt(1.0 + r.m[0][0] - r.m[1][1] - r.m[2][2]) * 2;
        q.w = (r.m[2][1] - r.m[1][2]) / s;
        q.x = 0.25 * s;
        q.y = (r.m[0][1] + r.m[1][0]) / s;
        q.z = (r.m[0][2] + r.m[2][0]) / s;
    } else if (r.m[1][1] > r.m[2][2]) {
        double s = sqrt(1.0 + r.m[1][1] - r.m[0][0] - r.m[2][2]) * 2;
        q.w = (r.m[0][2] - r.m[2][0]) / s;
        q.x = (r.m[0][1] + r.m[1][0]) / s;
        q.y = 0.25 * s;
        q.z = (r.m[1][2] + r.m[2][1]) / s;
    } else {
        double s = sqrt(1.0 + r.m[2][2] - r.m[0][0] - r.m[1][1]) * 2;
        q.w = (r.m[1][0] - r.m[0][1]) / s;
        q.x = (r.m[0][2] + r.m[2][0]) / s;
        q.y = (r.m[1][2] + r.m[2][1]) / s;
        q.z = 0.25 * s;
    }
    return sc_q_normalize(q);
}
sc_vec3 sc_q_log(sc_quat q)
{
    if (q.w < 0) {
        q.w = -q.w;
        q.x = -q.x;
        q.y = -q.y;
        q.z = -q.z;
    }
    double s = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    if (s < 1e-12) return sc_v3(2 * q.x, 2 * q.y, 2 * q.z); /* first order, exact to 1e-24 */
    double angle = 2 * atan2(s, q.w);
    return sc_v3_scale(sc_v3(q.x, q.y, q.z), angle / s);
}
sc_quat sc_q_exp(sc_vec3 w)
{
    double angle = sc_v3_norm(w);
    if (angle < 1e-12) {
        sc_quat q = {1, 0.5 * w.x, 0.5 * w.y, 0.5 * w.z};
        return sc_q_normalize(q);
    }
    return sc_q_axis_angle(w, angle);
}
sc_quat sc_q_slerp(sc_quat a, sc_quat b, double t)
{
    double d = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
    if (d < 0) {
        b.w = -b.w;
        b.x = -b.x;
        b.y = -b.y;
        b.z = -b.z;
    }
    sc_vec3 w = sc_q_log(sc_q_mul(sc_q_conj(a), b));
    return sc_q_normalize(sc_q_mul(a, sc_q_exp(sc_v3_scale(w, t))));
}
double sc_q_angle_between(sc_quat a, sc_quat b) { return sc_v3_norm(sc_q_log(sc_q_mul(sc_q_conj(a), b))); }
double sc_point_segment_dist2(sc_vec3 p, sc_vec3 a, sc_vec3 b)
{
    sc_vec3 ab = sc_v3_sub(b, a);
    double l2 = sc_v3_dot(ab, ab), u = l2 > 0 ? sc_v3_dot(sc_v3_sub(p, a), ab) / l2 : 0;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    sc_vec3 d = sc_v3_sub(p, sc_v3_axpy(u, ab, a));
    return sc_v3_dot(d, d);
}

double sc_q_heading(sc_quat q)
{
    sc_vec3 f = sc_q_rotate(q, sc_v3(0, 0, 1));
    return atan2(f.x, f.z);
}
double sc_wrap_angle(double a)
{
    a = fmod(a, 2 * M_PI);
    return a > M_PI ? a - 2 * M_PI : a <= -M_PI ? a + 2 * M_PI : a;
}
sc_quat sc_q_from_euler_deg(const char order[3], const double deg[3])
{
    sc_quat q = sc_q_identity();
    for (int i = 0; i < 3; i++) {
        sc_vec3 ax = order[i] == 'X' ? sc_v3(1, 0, 0) : order[i] == 'Y' ? sc_v3(0, 1, 0) : sc_v3(0, 0, 1);
        q = sc_q_mul(q, sc_q_axis_angle(ax, deg[i] * SC_PI / 180.0));
    }
    return q;
}

sc_xform sc_xf_identity(void)
{
    sc_xform t = {sc_q_identity(), {0, 0, 0}};
    return t;
}
sc_xform sc_xf_mul(sc_xform a, sc_xform b)
{
    sc_xform c = {sc_q_normalize(sc_q_mul(a.q, b.q)), sc_v3_add(sc_q_rotate(a.q, b.p), a.p)};
    return c;
}
sc_xform sc_xf_inverse(sc_xform a)
{
    sc_quat qi = sc_q_conj(a.q);
    sc_xform c = {qi, sc_v3_scale(sc_q_rotate(qi, a.p), -1)};
    return c;
}
sc_vec3 sc_xf_apply(sc_xform a, sc_vec3 v) { return sc_v3_add(sc_q_rotate(a.q, v), a.p); }

int sc_polar(sc_mat3 f, sc_mat3 *r_out, sc_mat3 *s_out)
{
    /* F^T F = V diag(s^2) V^T, U_i = F v_i / s_i; R = U V^T with det(U V^T) = +1. */
    double e[3];
    sc_mat3 v;
    sc_m3_sym_eigen(sc_m3_mul_tn(f, f), e, &v);
    double scale = sqrt(fmax(e[0], 0));
    int ok = 1;
    sc_vec3 u[3];
    for (int i = 0; i < 2; i++) {
        sc_vec3 fv = sc_m3_mulv(f, sc_m3_col(v, i));
        double n = sc_v3_norm(fv);
        if (!(n > 1e-12 * scale) || (i == 1 && sc_v3_norm(sc_v3_cross(u[0], fv)) < 1e-12 * n)) {
            ok = 0; /* degenerate: complete an orthonormal frame */
            sc_vec3 a = i == 0 ? sc_v3(1, 0, 0) : u[0];
            sc_vec3 t = fabs(a.x) < 0.9 ? sc_v3(1, 0, 0) : sc_v3(0, 1, 0);
            fv = i == 0 ? a : sc_v3_cross(a, t);
            n = sc_v3_norm(fv);
        }
        if (i == 1) fv = sc_v3_sub(fv, sc_v3_scale(u[0], sc_v3_dot(u[0], fv))); /* Gram-Schmidt */
        u[i] = sc_v3_normalize(fv);
    }
    if (!(sqrt(fmax(e[2], 0)) > 1e-12 * scale)) ok = 0; /* rank < 3 */
    u[2] = sc_v3_cross(u[0], u[1]);
    if (sc_m3_det(v) < 0) u[2] = sc_v3_scale(u[2], -1); /* so that det(U V^T) = +1 */
    sc_mat3 um = sc_m3_from_cols(u[0], u[1], u[2]);
    sc_mat3 r = sc_m3_mul_nt(um, v);
    if (r_out) *r_out = r;
    if (s_out) {
        sc_mat3 s = sc_m3_mul_tn(r, f);
        *s_out = sc_m3_scale(sc_m3_add(s, sc_m3_transpose(s)), 0.5);
    }
    return ok;
}

int sc_polar_rotation_warm(sc_mat3 f, sc_quat *qio, int max_iter, double tol)
{
    sc_quat q = sc_q_normalize(*qio);
    int it;
    for (it = 0; it < max_iter; it++) {
        sc_mat3 r = sc_q_to_m3(q);
        sc_vec3 num = sc_v3(0, 0, 0);
        double den = 0;
        for (int i = 0; i < 3; i++) {
            sc_vec3 ri = sc_m3_col(r, i), fi = sc_m3_col(f, i);
            num = sc_v3_add(num, sc_v3_cross(ri, fi));
            den += sc_v3_dot(ri, fi);
        }
        sc_vec3 omega = sc_v3_scale(num, 1.0 / (fabs(den) + 1e-9));
        double w = sc_v3_norm(omega);
        if (w < tol) break;
        q = sc_q_normalize(sc_q_mul(sc_q_axis_angle(omega, w), q));
    }
    *qio = q;
    return it;
}

sc_vec3 sc_closest_on_triangle(sc_vec3 p, sc_vec3 a, sc_vec3 b, sc_vec3 c)
{
    sc_vec3 ab = sc_v3_sub(b, a), ac = sc_v3_sub(c, a), ap = sc_v3_sub(p, a);
    double d1 = sc_v3_dot(ab, ap), d2 = sc_v3_dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) return a;
    sc_vec3 bp = sc_v3_sub(p, b);
    double d3 = sc_v3_dot(ab, bp), d4 = sc_v3_dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) return b;
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) return sc_v3_add(a, sc_v3_scale(ab, d1 / (d1 - d3)));
    sc_vec3 cp = sc_v3_sub(p, c);
    double d5 = sc_v3_dot(ab, cp), d6 = sc_v3_dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) return c;
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) return sc_v3_add(a, sc_v3_scale(ac, d2 / (d2 - d6)));
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return sc_v3_add(b, sc_v3_scale(sc_v3_sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6))));
    double den = 1 / (va + vb + vc);
    return sc_v3_add(a, sc_v3_add(sc_v3_scale(ab, vb * den), sc_v3_scale(ac, vc * den)));
}

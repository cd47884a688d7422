/* Soft-body force kernels ([L13] 4.2, eq. 6-17). See fem.h for the model and the layout.
 *
 * The element loops run over SIMD groups of VW tets (4 with AVX, 2 with SSE) written with GCC
 * vector extensions, so they are vectorized at -O2 whatever the cost model says: gather the 4
 * nodes of each lane, do all per-tet algebra lane-parallel, then scatter-add the 12 force
 * components lane by lane in tet order (so the summation order, hence every bit, does not
 * depend on which tets took the fallback). The rotation fit runs the same number of steps on
 * all lanes of a group (1 when the predictor is good, at most POLAR_KMAX), so the only
 * branches are per group. */
#include <stdlib.h>
#include <string.h>
#include "sim/fem.h"

#if defined(__AVX__)
#include <immintrin.h>
#define VW 4
#elif defined(__SSE2__)
#include <emmintrin.h>
#define VW 2
#else
#define VW 2
#endif

typedef double vd __attribute__((vector_size(8 * VW)));
typedef long long vm __attribute__((vector_size(8 * VW))); /* lane masks: 0 or -1 */
typedef double v2d __attribute__((vector_size(16)));
#define INL static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 9") /* keep the small loops' arrays in registers at -O2 */

#define WARM_RS 7       /* warm rows: 0-3 q of R, 4-6 its predictor, 7-10 q of R*, 11-13 its predictor */
#define POLAR_KMAX 3     /* Newton steps at most in the fast path */
#define POLAR_TOL2 4e-6  /* last step below 2e-3 rad: the error left is O(|w|^5) ~ 1e-14 */

INL vd v_load(const double *p) { vd v; memcpy(&v, p, sizeof v); return v; }
INL void v_store(double *p, vd v) { memcpy(p, &v, sizeof v); }
INL vd v_splat(double a) { vd z = {0}; return z + a; }
INL vd v_sqrt(vd a)
{
#if VW == 4 && defined(__AVX__)
    return (vd)_mm256_sqrt_pd((__m256d)a);
#elif VW == 2 && defined(__SSE2__)
    return (vd)_mm_sqrt_pd((__m128d)a);
#else
    for (int l = 0; l < VW; l++) a[l] = sqrt(a[l]);
    return a;
#endif
}
INL int v_all(vm m)
{
#if VW == 4 && defined(__AVX__)
    return _mm256_movemask_pd((__m256d)m) == 0xF;
#elif VW == 2 && defined(__SSE2__)
    return _mm_movemask_pd((__m128d)m) == 0x3;
#else
    long long r = -1;
    for (int l = 0; l < VW; l++) r &= m[l];
    return r != 0;
#endif
}
INL vd v_select(vm m, vd a, vd b) { return (vd)(((vm)a & m) | ((vm)b & ~m)); }

/* ---- 3x3 matrices of lanes, row-major, written out so they live in registers at -O2 ---- */

#define RC(A, i, B, j) (A[3 * (i)] * B[(j)] + A[3 * (i) + 1] * B[3 + (j)] + A[3 * (i) + 2] * B[6 + (j)])
#define RR(A, i, B, j) (A[3 * (i)] * B[3 * (j)] + A[3 * (i) + 1] * B[3 * (j) + 1] + A[3 * (i) + 2] * B[3 * (j) + 2])
#define CC(A, i, B, j) (A[(i)] * B[(j)] + A[3 + (i)] * B[3 + (j)] + A[6 + (i)] * B[6 + (j)])

INL void m_mul(vd *restrict c, const vd *a, const vd *b) /* c = a b */
{
    c[0] = RC(a, 0, b, 0); c[1] = RC(a, 0, b, 1); c[2] = RC(a, 0, b, 2);
    c[3] = RC(a, 1, b, 0); c[4] = RC(a, 1, b, 1); c[5] = RC(a, 1, b, 2);
    c[6] = RC(a, 2, b, 0); c[7] = RC(a, 2, b, 1); c[8] = RC(a, 2, b, 2);
}
INL void m_mul_nt(vd *restrict c, const vd *a, const vd *b) /* c = a b^T */
{
    c[0] = RR(a, 0, b, 0); c[1] = RR(a, 0, b, 1); c[2] = RR(a, 0, b, 2);
    c[3] = RR(a, 1, b, 0); c[4] = RR(a, 1, b, 1); c[5] = RR(a, 1, b, 2);
    c[6] = RR(a, 2, b, 0); c[7] = RR(a, 2, b, 1); c[8] = RR(a, 2, b, 2);
}
INL void m_mul_tn(vd *restrict c, const vd *a, const vd *b) /* c = a^T b */
{
    c[0] = CC(a, 0, b, 0); c[1] = CC(a, 0, b, 1); c[2] = CC(a, 0, b, 2);
    c[3] = CC(a, 1, b, 0); c[4] = CC(a, 1, b, 1); c[5] = CC(a, 1, b, 2);
    c[6] = CC(a, 2, b, 0); c[7] = CC(a, 2, b, 1); c[8] = CC(a, 2, b, 2);
}
INL vd m_det(const vd *a)
{
    return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
           a[2] * (a[3] * a[7] - a[4] * a[6]);
}

/* |q|^2 R(q) for any q (homogeneous form: no normalization needed). */
INL void q_to_mat_h(const vd *q, vd *r)
{
    vd w = q[0], x = q[1], y = q[2], z = q[3];
    vd ww = w * w, xx = x * x, yy = y * y, zz = z * z;
    vd xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z;
    r[0] = (ww + xx) - (yy + zz); r[1] = 2.0 * (xy - wz); r[2] = 2.0 * (xz + wy);
    r[3] = 2.0 * (xy + wz); r[4] = (ww - xx) + (yy - zz); r[5] = 2.0 * (yz - wx);
    r[6] = 2.0 * (xz - wy); r[7] = 2.0 * (yz + wx); r[8] = (ww - xx) - (yy - zz);
}
/* R(q) for unit q. */
INL void q_to_mat(const vd *q, vd *r)
{
    vd w = q[0], x = q[1], y = q[2], z = q[3];
    vd x2 = x + x, y2 = y + y, z2 = z + z;
    vd xx = x * x2, yy = y * y2, zz = z * z2, xy = x * y2, xz = x * z2, yz = y * z2;
    vd wx = w * x2, wy = w * y2, wz = w * z2;
    r[0] = 1.0 - (yy + zz); r[1] = xy - wz; r[2] = xz + wy;
    r[3] = xy + wz; r[4] = 1.0 - (xx + zz); r[5] = yz - wx;
    r[6] = xz - wy; r[7] = yz + wx; r[8] = 1.0 - (xx + yy);
}
INL void q_normalize(vd *q)
{
    vd inv = 1.0 / v_sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    q[0] *= inv; q[1] *= inv; q[2] *= inv; q[3] *= inv;
}

/* q <- q (1, h): body-frame rotation by the Cayley half-vector h (angle 2 atan|h|). */
INL void q_mul_cayley(vd *q, vd h0, vd h1, vd h2)
{
    vd qw = q[0], qx = q[1], qy = q[2], qz = q[3];
    q[0] = qw - qx * h0 - qy * h1 - qz * h2;
    q[1] = qx + qw * h0 + qy * h2 - qz * h1;
    q[2] = qy + qw * h1 - qx * h2 + qz * h0;
    q[3] = qz + qw * h2 + qx * h1 - qy * h0;
}

/* One step on max_R tr(R^T G) around R = R(q), in the body-frame Cayley parameter w
 * (R' = R cay(w), q' = q (1, w/2)). With M = R^T G, exactly
 *   tr(R'^T G) = tr M + (g.w - w^T H w / 2) / (1 + |w|^2/4),
 *   g = (M21 - M12, M02 - M20, M10 - M01),  H = tr(sym M) I - sym M,
 * so the Newton step w = H^-1 g is off the optimum by O(|w|^3), and with the correction below
 * by O(|w|^5) (~0.5 |w|^5 measured: 5e-11 from 0.01 rad, 1e-13 from 0.003 rad). At the maximum
 * H is positive definite unless the (signed) singular values are degenerate. h receives w/2;
 * *ok flags the lanes whose step was below 2e-3 rad on a positive definite H. */
INL void newton_step(const vd *g, vd *q, vd *h, vm *ok)
{
    vd r[9], m[9];
    q_to_mat_h(q, r); /* M is off by the factor |q|^2 > 0: the step and the tests do not see it */
    m_mul_tn(m, r, g);
    vd g0 = m[7] - m[5], g1 = m[2] - m[6], g2 = m[3] - m[1];
    vd a = m[4] + m[8], b = m[0] + m[8], c = m[0] + m[4];
    vd d = -0.5 * (m[1] + m[3]), e = -0.5 * (m[2] + m[6]), f = -0.5 * (m[5] + m[7]);
    vd a00 = b * c - f * f, a11 = a * c - e * e, a22 = a * b - d * d;
    vd a01 = e * f - d * c, a02 = d * f - b * e, a12 = d * e - a * f;
    vd det = a * a00 + d * a01 + e * a02;
    vd inv = 0.5 / det; /* half: the quaternion increment is w/2 */
    vd h0 = (a00 * g0 + a01 * g1 + a02 * g2) * inv;
    vd h1 = (a01 * g0 + a11 * g1 + a12 * g2) * inv;
    vd h2 = (a02 * g0 + a12 * g1 + a22 * g2) * inv;
    /* the exact stationarity is (H + cI) w = g with c = g.w/4 + O(|w|^4): one correction
     * w -= c H^-1 w leaves an O(|w|^5) error instead of Newton's O(|w|^3) */
    vd k = (g0 * h0 + g1 * h1 + g2 * h2) * inv;
    vd u0 = a00 * h0 + a01 * h1 + a02 * h2, u1 = a01 * h0 + a11 * h1 + a12 * h2, u2 = a02 * h0 + a12 * h1 + a22 * h2;
    h0 -= k * u0;
    h1 -= k * u1;
    h2 -= k * u2;
    q_mul_cayley(q, h0, h1, h2);
    h[0] = h0; h[1] = h1; h[2] = h2;
    *ok = (a > 0) & (a22 > 0) & (det > 0) & (4.0 * (h0 * h0 + h1 * h1 + h2 * h2) < POLAR_TOL2);
}

/* Fast path. The warm start q is first advanced by the previous call's increment hp (constant
 * body-frame angular velocity), then 1..POLAR_KMAX Newton steps run until every lane of the
 * group has converged. hp receives this call's increment (first order sum of the steps; only
 * a predictor), dropped when above 0.1 rad. Returns the lanes that did not converge. */
INL vm polar_fast(const vd *g, vd *q, vd *hp, long *iters)
{
    vd s0 = hp[0], s1 = hp[1], s2 = hp[2], h[3];
    vm ok;
    q_mul_cayley(q, s0, s1, s2);
    int it = 0;
    do {
        newton_step(g, q, h, &ok);
        s0 += h[0]; s1 += h[1]; s2 += h[2];
        it++;
    } while (it < POLAR_KMAX && !v_all(ok));
    *iters += it;
    vd zero = {0};
    vm keep = (s0 * s0 + s1 * s1 + s2 * s2) < 0.0025;
    hp[0] = v_select(keep, s0, zero);
    hp[1] = v_select(keep, s1, zero);
    hp[2] = v_select(keep, s2, zero);
    return ~ok;
}

/* Exact fallback for one lane: eigen-based polar (max-trace rotation, robust for inverted and
 * degenerate G), kept in the warm start's hemisphere, then polished by Newton steps when they
 * are well posed. q0 is the warm start, q the result (unit). */
static void polar_exact(const double *g, const double *q0, double *q)
{
    sc_mat3 gm, r;
    memcpy(gm.m, g, sizeof gm.m);
    sc_polar(gm, &r, NULL);
    sc_quat p = sc_q_from_m3(r);
    double s = (p.w * q0[0] + p.x * q0[1] + p.y * q0[2] + p.z * q0[3]) < 0 ? -1 : 1;
    double res[4] = {s * p.w, s * p.x, s * p.y, s * p.z};
    vd gv[9], qv[4], h[3];
    vm ok;
    for (int k = 0; k < 9; k++) gv[k] = v_splat(g[k]);
    for (int k = 0; k < 4; k++) qv[k] = v_splat(res[k]);
    for (int it = 0; it < 2; it++) {
        newton_step(gv, qv, h, &ok);
        if (!ok[0]) break; /* ill-posed (rank <= 1, s2 = s3): keep sc_polar's */
        for (int k = 0; k < 4; k++) res[k] = qv[k][0];
    }
    double n = sqrt(res[0] * res[0] + res[1] * res[1] + res[2] * res[2] + res[3] * res[3]);
    if (!(n > 0) || !isfinite(n)) { res[0] = 1; res[1] = res[2] = res[3] = 0; n = 1; } /* NaN input */
    for (int k = 0; k < 4; k++) q[k] = res[k] / n;
}

/* Runs polar_exact on the flagged lanes of (g, q) and clears their predictor hp; q0 holds
 * the warm starts. */
static int polar_fix_lanes(vm bad, const vd *g, const vd *q0, vd *q, vd *hp)
{
    int nfix = 0;
    for (int l = 0; l < VW; l++) {
        if (!bad[l]) continue;
        double gl[9], q0l[4], ql[4];
        for (int k = 0; k < 9; k++) gl[k] = g[k][l];
        for (int k = 0; k < 4; k++) q0l[k] = q0[k][l];
        polar_exact(gl, q0l, ql);
        for (int k = 0; k < 4; k++) q[k][l] = ql[k];
        for (int k = 0; k < 3; k++) hp[k][l] = 0;
        nfix++;
    }
    return nfix;
}

/* Node positions p[3*idx[l] + (0, 1, 2)] of the group's lanes as three vectors: (x, y) pairs
 * are loaded 2-wide and de-interleaved by shuffles. */
INL v2d load2(const double *p) { v2d v; memcpy(&v, p, sizeof v); return v; }
INL void gather3(const double *p, const int *idx, vd *vx, vd *vy, vd *vz)
{
#if VW == 4
    const double *p0 = p + 3 * idx[0], *p1 = p + 3 * idx[1], *p2 = p + 3 * idx[2], *p3 = p + 3 * idx[3];
    vd lo = __builtin_shufflevector(load2(p0), load2(p2), 0, 1, 2, 3); /* x0 y0 x2 y2 */
    vd hi = __builtin_shufflevector(load2(p1), load2(p3), 0, 1, 2, 3); /* x1 y1 x3 y3 */
    *vx = __builtin_shuffle(lo, hi, (vm){0, 4, 2, 6});
    *vy = __builtin_shuffle(lo, hi, (vm){1, 5, 3, 7});
    *vz = (vd){p0[2], p1[2], p2[2], p3[2]};
#else
    const double *p0 = p + 3 * idx[0], *p1 = p + 3 * idx[1];
    vd a = load2(p0), b = load2(p1);
    *vx = __builtin_shuffle(a, b, (vm){0, 2});
    *vy = __builtin_shuffle(a, b, (vm){1, 3});
    *vz = (vd){p0[2], p1[2]};
#endif
}

/* D = [x1 - x0, x2 - x0, x3 - x0] for the group's tets, then F = D Bm^-1 ([L13] eq. 9-10). */
INL void def_grad(const double *x, const int *n0, int stride, const vd *bm, vd *f)
{
    vd a[3], b[3], d[9];
    gather3(x, n0, &a[0], &a[1], &a[2]);
    UNROLL
    for (int j = 0; j < 3; j++) {
        gather3(x, n0 + (j + 1) * stride, &b[0], &b[1], &b[2]);
        d[j] = b[0] - a[0];
        d[3 + j] = b[1] - a[1];
        d[6 + j] = b[2] - a[2];
    }
    m_mul(f, d, bm);
}

INL void load_bm(const sc_fem *fem, int t0, vd *bm)
{
    const double *p = fem->bm + t0;
    const size_t s = (size_t)fem->stride;
    bm[0] = v_load(p); bm[1] = v_load(p + s); bm[2] = v_load(p + 2 * s);
    bm[3] = v_load(p + 3 * s); bm[4] = v_load(p + 4 * s); bm[5] = v_load(p + 5 * s);
    bm[6] = v_load(p + 6 * s); bm[7] = v_load(p + 7 * s); bm[8] = v_load(p + 8 * s);
}

/* Adds the node forces of the group (h = -V P Bm^-T: column j is node j+1's force, node 0
 * gets minus the sum) lane by lane, in tet order. (x, y) pairs are interleaved by shuffles so
 * each node takes one 2-wide and one scalar add. */
INL void scatter(const sc_fem *fem, int t0, const vd *h, double *force)
{
    double xy[4][2 * VW], z[4][VW];
#if VW == 4
    const vm lo = {0, 4, 2, 6}, hi = {1, 5, 3, 7};
#else
    const vm lo = {0, 2}, hi = {1, 3};
#endif
    vd fx = -(h[0] + h[1] + h[2]), fy = -(h[3] + h[4] + h[5]), fz = -(h[6] + h[7] + h[8]);
    v_store(xy[0], __builtin_shuffle(fx, fy, lo));
    v_store(xy[0] + VW, __builtin_shuffle(fx, fy, hi));
    v_store(z[0], fz);
    UNROLL
    for (int j = 0; j < 3; j++) {
        v_store(xy[j + 1], __builtin_shuffle(h[j], h[3 + j], lo));
        v_store(xy[j + 1] + VW, __builtin_shuffle(h[j], h[3 + j], hi));
        v_store(z[j + 1], h[6 + j]);
    }
    const int s = fem->stride, nl = fem->ntets - t0 < VW ? fem->ntets - t0 : VW;
    const int *nd = fem->node + t0;
    for (int l = 0; l < nl; l++) {
        const int o = (l & 1) * VW + (l >> 1) * 2;
        UNROLL
        for (int k = 0; k < 4; k++) {
            double *p = force + 3 * nd[k * s + l];
            v2d a, b;
            memcpy(&a, p, sizeof a);
            memcpy(&b, xy[k] + o, sizeof b);
            a += b;
            memcpy(p, &a, sizeof a);
            p[2] += z[k][l];
        }
    }
}

typedef struct {
    vd energy, min_det, min_idx; /* per lane: energy sum, smallest det F and its tet */
    vm inverted;                 /* per lane: minus the count of det F <= 0 */
    int fallbacks;
    long iters;
} elastic_acc;

/* One SIMD group of the elastic pass ([L13] eq. 7-11, 14-16). plastic is a compile-time
 * constant at both call sites, so each variant is specialized. */
static inline __attribute__((always_inline)) void elastic_group(const sc_fem *fem, int t0, const double *x,
                                                                const double *xp, double *warm, double *force,
                                                                elastic_acc *acc, const int plastic)
{
    const size_t s = (size_t)fem->stride;
    const int *nd = fem->node + t0;
    vd bm[9], f[9], fp[9], a[9], q[4], q0[4], qs[4], qs0[4], hp[3], hs[3];
    double *wr = warm + t0, *ws = warm + WARM_RS * s + t0;
    load_bm(fem, t0, bm);
    def_grad(x, nd, fem->stride, bm, f);
    UNROLL
    for (int k = 0; k < 4; k++) q0[k] = q[k] = v_load(wr + k * s);
    UNROLL
    for (int k = 0; k < 3; k++) hp[k] = v_load(wr + (4 + k) * s);
    vm bad = polar_fast(f, q, hp, &acc->iters), bads = {0};
    if (plastic) {
        def_grad(xp, nd, fem->stride, bm, fp);
        m_mul_nt(a, fp, f); /* R* = rot(Fp F^T) makes P F^T symmetric ([L13] 4.2.2) */
        UNROLL
        for (int k = 0; k < 4; k++) qs0[k] = qs[k] = v_load(ws + k * s);
        UNROLL
        for (int k = 0; k < 3; k++) hs[k] = v_load(ws + (4 + k) * s);
        bads = polar_fast(a, qs, hs, &acc->iters);
    }
    if (__builtin_expect(!v_all(~(bad | bads)), 0)) {
        int nl = fem->ntets - t0 < VW ? fem->ntets - t0 : VW;
        acc->fallbacks += polar_fix_lanes(bad, f, q0, q, hp);
        if (plastic) acc->fallbacks += polar_fix_lanes(bads, a, qs0, qs, hs);
        /* padding lanes were fixed too (they repeat tet 0) but are not counted */
        for (int l = nl; l < VW; l++) acc->fallbacks -= (bad[l] != 0) + (bads[l] != 0);
    }
    q_normalize(q);
    UNROLL
    for (int k = 0; k < 4; k++) v_store(wr + k * s, q[k]);
    UNROLL
    for (int k = 0; k < 3; k++) v_store(wr + (4 + k) * s, hp[k]);
    vd r[9], e[9];
    q_to_mat(q, r);
    if (plastic) {
        q_normalize(qs);
        UNROLL
        for (int k = 0; k < 4; k++) v_store(ws + k * s, qs[k]);
        UNROLL
        for (int k = 0; k < 3; k++) v_store(ws + (4 + k) * s, hs[k]);
        vd rs[9], b[9];
        q_to_mat(qs, rs);
        m_mul_tn(b, rs, fp); /* R R_p^T Fp = R*^T Fp */
        UNROLL
        for (int k = 0; k < 9; k++) e[k] = f[k] - b[k];
    } else {
        UNROLL
        for (int k = 0; k < 9; k++) e[k] = f[k] - r[k];
    }
    /* P = 2 mu E + lambda tr(R^T E) R, E = F - R*^T Fp (eq. 16) or F - R (eq. 8) */
    vd tr = r[0] * e[0] + r[1] * e[1] + r[2] * e[2] + r[3] * e[3] + r[4] * e[4] + r[5] * e[5] +
            r[6] * e[6] + r[7] * e[7] + r[8] * e[8];
    vd e2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3] + e[4] * e[4] + e[5] * e[5] +
            e[6] * e[6] + e[7] * e[7] + e[8] * e[8];
    vd vol = v_load(fem->vol + t0);
    acc->energy += vol * (fem->mu * e2 + 0.5 * fem->lambda * tr * tr);
    vd c1 = -2.0 * fem->mu * vol, c2 = -fem->lambda * vol * tr, p[9], h[9];
    UNROLL
    for (int k = 0; k < 9; k++) p[k] = c1 * e[k] + c2 * r[k]; /* -V P */
    m_mul_nt(h, p, bm);
    scatter(fem, t0, h, force);

    /* stats, lane-parallel; padding lanes (t >= ntets) are masked out */
    vd det = m_det(f), tidx = v_splat((double)t0);
#if VW == 4
    tidx += (vd){0, 1, 2, 3};
#else
    tidx += (vd){0, 1};
#endif
    vm valid = tidx < (double)fem->ntets;
    acc->inverted += ~(det > 0) & valid;
    vm better = (det < acc->min_det) & valid;
    acc->min_det = v_select(better, det, acc->min_det);
    acc->min_idx = v_select(better, tidx, acc->min_idx);
}

void sc_fem_elastic_forces(const sc_fem *fem, const double *x, const double *pose_rest, double *warm,
                           double *force, sc_fem_stats *stats)
{
    elastic_acc acc;
    memset(&acc, 0, sizeof acc);
    acc.min_det = v_splat(INFINITY);
    acc.min_idx = v_splat(-1);
    if (pose_rest)
        for (int t0 = 0; t0 < fem->ntets; t0 += VW) elastic_group(fem, t0, x, pose_rest, warm, force, &acc, 1);
    else
        for (int t0 = 0; t0 < fem->ntets; t0 += VW) elastic_group(fem, t0, x, NULL, warm, force, &acc, 0);
    if (stats) {
        double en = 0, wd = INFINITY, wi = -1;
        int inv = 0;
        for (int l = 0; l < VW; l++) {
            en += acc.energy[l];
            inv -= (int)acc.inverted[l];
            double d = acc.min_det[l], i = acc.min_idx[l];
            if (i >= 0 && (wi < 0 || d < wd || (d == wd && i < wi))) { wd = d; wi = i; }
        }
        stats->elastic_energy = en;
        stats->inverted = inv;
        stats->worst_tet = (int)wi;
        stats->worst_det = wi < 0 ? 0 : wd;
        stats->fallbacks = acc.fallbacks;
        stats->newton_steps = acc.iters;
    }
}

void sc_fem_rayleigh_damping(const sc_fem *fem, const double *mass, const double *v, const double *warm,
                             double alpha, double beta, double *force)
{
    if (alpha != 0)
        for (int i = 0; i < fem->nnodes; i++)
            for (int k = 0; k < 3; k++) force[3 * i + k] -= alpha * mass[i] * v[3 * i + k];
    if (beta == 0) return;
    const size_t s = (size_t)fem->stride;
    for (int t0 = 0; t0 < fem->ntets; t0 += VW) {
        vd bm[9], fd[9], q[4], r[9], g[9];
        load_bm(fem, t0, bm);
        def_grad(v, fem->node + t0, fem->stride, bm, fd); /* dF/dt */
        UNROLL
        for (int k = 0; k < 4; k++) q[k] = v_load(warm + k * s + t0);
        q_to_mat(q, r); /* unit: sc_fem_elastic_forces stores it normalized */
        m_mul_tn(g, r, fd);
        /* sigma = 2 mu sym(G) + lambda tr(G) I; -beta V R sigma */
        vd vol = v_load(fem->vol + t0), mu = v_splat(fem->mu);
        vd trg = (g[0] + g[4] + g[8]) * fem->lambda;
        vd sg[9];
        sg[0] = 2.0 * mu * g[0] + trg; sg[4] = 2.0 * mu * g[4] + trg; sg[8] = 2.0 * mu * g[8] + trg;
        sg[1] = sg[3] = mu * (g[1] + g[3]);
        sg[2] = sg[6] = mu * (g[2] + g[6]);
        sg[5] = sg[7] = mu * (g[5] + g[7]);
        vd c = -beta * vol, p[9], h[9];
        m_mul(p, r, sg);
        UNROLL
        for (int k = 0; k < 9; k++) p[k] *= c;
        m_mul_nt(h, p, bm);
        scatter(fem, t0, h, force);
    }
}

void sc_fem_pose_damping(int nnodes, const double *mass, const double *x, const double *v, const double *xbar,
                         const double *xbar_dot, double c, double *force, double *reaction)
{
    for (int i = 0; i < nnodes; i++) {
        const int o = 3 * i;
        double dx[3], dv[3];
        for (int k = 0; k < 3; k++) {
            dx[k] = xbar[o + k] - x[o + k];
            dv[k] = xbar_dot[o + k] - v[o + k];
        }
        double d2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2];
        double s = 0;
        if (d2 > 1e-24) s = c * mass[i] * (dv[0] * dx[0] + dv[1] * dx[1] + dv[2] * dx[2]) / d2;
        for (int k = 0; k < 3; k++) {
            double f = s * dx[k];
            force[o + k] += f;
            if (reaction) reaction[o + k] = -f;
        }
    }
}

int sc_fem_polar_batch(int n, const double *f, double *q, double *h, int *fallback, long *iters)
{
    int nfix = 0;
    long its = 0;
    for (int i0 = 0; i0 < n; i0 += VW) {
        vd g[9], qv[4], q0[4], hv[3];
        for (int l = 0; l < VW; l++) {
            int i = i0 + l < n ? i0 + l : n - 1; /* pad with the last matrix */
            for (int k = 0; k < 9; k++) g[k][l] = f[9 * i + k];
            for (int k = 0; k < 4; k++) q0[k][l] = qv[k][l] = q[4 * i + k];
            for (int k = 0; k < 3; k++) hv[k][l] = h ? h[3 * i + k] : 0;
        }
        vm bad = polar_fast(g, qv, hv, &its);
        for (int l = 0; l < VW; l++)
            if (i0 + l >= n) bad[l] = 0;
        nfix += polar_fix_lanes(bad, g, q0, qv, hv);
        q_normalize(qv);
        for (int l = 0; l < VW && i0 + l < n; l++) {
            for (int k = 0; k < 4; k++) q[4 * (i0 + l) + k] = qv[k][l];
            if (h)
                for (int k = 0; k < 3; k++) h[3 * (i0 + l) + k] = hv[k][l];
            if (fallback) fallback[i0 + l] = bad[l] != 0;
        }
    }
    if (iters) *iters = its;
    return nfix;
}

int sc_fem_simd_width(void) { return VW; }

size_t sc_fem_warm_size(const sc_fem *fem) { return SC_FEM_WARM_PER_TET * (size_t)fem->stride; }

void sc_fem_warm_reset(const sc_fem *fem, double *warm)
{
    const size_t s = (size_t)fem->stride;
    memset(warm, 0, SC_FEM_WARM_PER_TET * s * sizeof *warm);
    for (size_t t = 0; t < s; t++) warm[t] = warm[WARM_RS * s + t] = 1;
}

sc_quat sc_fem_warm_get(const sc_fem *fem, const double *warm, int t, int which)
{
    const size_t s = (size_t)fem->stride, o = (size_t)(which ? WARM_RS : 0) * s + (size_t)t;
    sc_quat q = {warm[o], warm[o + s], warm[o + 2 * s], warm[o + 3 * s]};
    return q;
}

static void *alloc64(size_t bytes, sc_err *err)
{
    size_t n = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, n ? n : 64);
    if (!p) sc_fail(err, SC_EIO, "out of memory allocating %zu bytes for the FEM mesh", n);
    else memset(p, 0, n);
    return p;
}

void sc_fem_free(sc_fem *fem)
{
    if (!fem) return;
    free(fem->node);
    free(fem->bm);
    free(fem->vol);
    memset(fem, 0, sizeof *fem);
}

int sc_fem_init(sc_fem *fem, const sc_model *m, sc_err *err)
{
    memset(fem, 0, sizeof *fem);
    if (!m || m->ntets <= 0 || m->nnodes <= 0 || !m->tets || !m->rest_pos)
        return sc_fail(err, SC_EINPUT, "/tetmesh: the model has no tetrahedra");
    if (!(m->youngs > 0) || !isfinite(m->youngs))
        return sc_fail(err, SC_EINPUT, "/material/youngs: Young's modulus must be > 0 (got %g)", m->youngs);
    if (!(m->poisson > -1 && m->poisson < 0.5))
        return sc_fail(err, SC_EINPUT, "/material/poisson: Poisson's ratio must be in (-1, 0.5) (got %g)", m->poisson);
    const int nt = m->ntets, s = (nt + SC_FEM_PAD - 1) / SC_FEM_PAD * SC_FEM_PAD;
    fem->ntets = nt;
    fem->nnodes = m->nnodes;
    fem->stride = s;
    fem->mu = m->youngs / (2 * (1 + m->poisson));
    fem->lambda = m->youngs * m->poisson / ((1 + m->poisson) * (1 - 2 * m->poisson));
    fem->node = alloc64(4 * (size_t)s * sizeof(int), err);
    fem->bm = alloc64(9 * (size_t)s * sizeof(double), err);
    fem->vol = alloc64((size_t)s * sizeof(double), err);
    if (!fem->node || !fem->bm || !fem->vol) { sc_fem_free(fem); return SC_EIO; }
    for (int t = 0; t < s; t++) {
        const int src = t < nt ? t : 0; /* padding repeats tet 0 with zero volume */
        const int *tn = m->tets + 4 * src;
        for (int k = 0; k < 4; k++) {
            if (tn[k] < 0 || tn[k] >= m->nnodes) {
                int code = sc_fail(err, SC_EINPUT, "/tetmesh/tets[%d]: node %d out of range [0, %d)", src, tn[k],
                                   m->nnodes);
                sc_fem_free(fem);
                return code;
            }
            for (int j = 0; j < k; j++)
                if (tn[j] == tn[k]) {
                    int code = sc_fail(err, SC_EINPUT, "/tetmesh/tets[%d]: node %d repeated", src, tn[k]);
                    sc_fem_free(fem);
                    return code;
                }
            fem->node[k * s + t] = tn[k];
        }
        sc_mat3 dm;
        sc_vec3 x0 = sc_v3_load(m->rest_pos + 3 * tn[0]);
        for (int j = 0; j < 3; j++) {
            sc_vec3 e = sc_v3_sub(sc_v3_load(m->rest_pos + 3 * tn[j + 1]), x0);
            dm.m[0][j] = e.x;
            dm.m[1][j] = e.y;
            dm.m[2][j] = e.z;
        }
        double vol = m->tet_volume ? m->tet_volume[src] : sc_m3_det(dm) / 6;
        sc_mat3 inv;
        int ok = 1;
        if (m->bm_inv) memcpy(inv.m, m->bm_inv + 9 * src, sizeof inv.m);
        else ok = sc_m3_inverse(dm, &inv);
        for (int k = 0; k < 9; k++) ok &= isfinite(inv.m[k / 3][k % 3]);
        if (!ok || !(vol > 0) || !isfinite(vol)) {
            int code = sc_fail(err, SC_EINPUT,
                               "/tetmesh: tet %d (nodes %d %d %d %d) is inverted or degenerate in the rest pose "
                               "(volume %g m^3)", src, tn[0], tn[1], tn[2], tn[3], vol);
            sc_fem_free(fem);
            return code;
        }
        for (int k = 0; k < 9; k++) fem->bm[k * s + t] = inv.m[k / 3][k % 3];
        fem->vol[t] = t < nt ? vol : 0;
    }
    return SC_OK;
}

/* The SIMD element kernels of the FEM pass ([L13] 4.2, eq. 7-17), written once and compiled
 * once per instruction set and precision: lib/sim/fem_avx2.c (4 doubles or 8 floats, the
 * build's baseline x86-64-v3) and lib/sim/fem_avx512.c (8 doubles or 16 floats, compiled for
 * x86-64-v4 and only ever called after sc_fem_init found AVX-512 on the CPU). Private to
 * lib/sim: include it once per variant, after defining
 *   FK_VW     lanes per group (4 or 8 doubles, 8 or 16 floats),
 *   FK_F32    1 for single precision (default 0),
 *   FK_ID     the kernel id (SC_FEM_KERNEL_*),
 *   FK_TABLE  the name of the sc_fem_kernel table the file exports.
 * Single precision (a config choice, simulation.fem_precision) keeps its warm starts as floats
 * in the same buffer and reads the float copies of Bm^-1, volumes and tet ids (sc_fem's *32
 * arrays); with plasticity it gathers x~ and the displacement x - x~, so that the strain
 * E = F - R*^T Fp = (I - R*^T) Fp + (Dx - Dp) Bm^-1 does not carry the rounding of absolute
 * positions (about 1e-7 m) at full weight: that rounding enters Fp and F alike and E only
 * through (I - R*^T), which is of the order of the strain.
 *
 * The element loop runs over groups of FK_VW tets in GCC vector extensions, so it is
 * vectorized whatever the cost model says: gather the 4 nodes of each lane, do all per-tet
 * algebra lane-parallel, then scatter-add the 12 force components lane by lane in a fixed
 * order (so the summation order, hence every bit, does not depend on which tets took the
 * fallback).
 * The rotation fit runs the same number of steps on all lanes of a group (1 when the
 * predictor is good, at most POLAR_KMAX), so the only branches are per group. A run's bits
 * depend on the lane count (groups take their Newton steps together): hence the kernel id in
 * snapshots. */
#include <immintrin.h>
#include <string.h>
#include "sim/fem_internal.h"

#define VW FK_VW
#ifndef FK_F32
#define FK_F32 0
#endif
#if FK_F32
typedef float fk_t;
typedef int fk_int;
#define FK_BM(fem)     ((fem)->bm32)
#define FK_VOL(fem)    ((fem)->vol32)
#define FK_TET_ID(fem) ((fem)->tet_id32)
#else
typedef double fk_t;
typedef long long fk_int;
#define FK_BM(fem)     ((fem)->bm)
#define FK_VOL(fem)    ((fem)->vol)
#define FK_TET_ID(fem) ((fem)->tet_id)
#endif
typedef fk_t vd __attribute__((vector_size(sizeof(fk_t) * VW)));
typedef fk_int vm __attribute__((vector_size(sizeof(fk_t) * VW))); /* lane masks: 0 or -1 */
#define INL    static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 9") /* keep the small loops' arrays in registers */

#define WARM_RS    7    /* warm rows: 0-3 q of R, 4-6 its predictor, 7-10 q of R*, 11-13 its predictor */
#define POLAR_KMAX 3    /* Newton steps at most in the fast path */
#define POLAR_TOL2 4e-6 /* last step below 2e-3 rad: the error left is O(|w|^5) ~ 1e-14 */

INL vd v_load(const fk_t *p)
{
    vd v;
    memcpy(&v, p, sizeof v);
    return v;
}
INL void v_store(fk_t *p, vd v) { memcpy(p, &v, sizeof v); }
INL vd v_splat(fk_t a)
{
    vd z = {0};
    return z + a;
}
INL vd v_iota(void)
{
    vd v;
    for (int l = 0; l < VW; l++) v[l] = l;
    return v;
}
#if FK_F32 && VW == 16
INL vd v_sqrt(vd a) { return (vd)_mm512_sqrt_ps((__m512)a); }
INL int v_all(vm m) { return _mm512_movepi32_mask((__m512i)m) == 0xFFFF; }
#elif FK_F32 && VW == 8
INL vd v_sqrt(vd a) { return (vd)_mm256_sqrt_ps((__m256)a); }
INL int v_all(vm m) { return _mm256_movemask_ps((__m256)m) == 0xFF; }
#elif !FK_F32 && VW == 8
INL vd v_sqrt(vd a) { return (vd)_mm512_sqrt_pd((__m512d)a); }
INL int v_all(vm m) { return _mm512_movepi64_mask((__m512i)m) == 0xFF; }
#elif !FK_F32 && VW == 4
INL vd v_sqrt(vd a) { return (vd)_mm256_sqrt_pd((__m256d)a); }
INL int v_all(vm m) { return _mm256_movemask_pd((__m256d)m) == 0xF; }
#else
#error "FK_VW must be 4 or 8 doubles, or 8 or 16 floats"
#endif
#if VW > SC_FEM_PAD || SC_FEM_PAD % VW
#error "a SIMD group must lie within one block of SC_FEM_PAD slots"
#endif
INL vd v_select(vm m, vd a, vd b) { return (vd)(((vm)a & m) | ((vm)b & ~m)); }

/* ---- 3x3 matrices of lanes, row-major, written out so they live in registers ---- */

#define RC(A, i, B, j) (A[3 * (i)] * B[(j)] + A[3 * (i) + 1] * B[3 + (j)] + A[3 * (i) + 2] * B[6 + (j)])
#define RR(A, i, B, j) (A[3 * (i)] * B[3 * (j)] + A[3 * (i) + 1] * B[3 * (j) + 1] + A[3 * (i) + 2] * B[3 * (j) + 2])
#define CC(A, i, B, j) (A[(i)] * B[(j)] + A[3 + (i)] * B[3 + (j)] + A[6 + (i)] * B[6 + (j)])

INL void m_mul(vd *restrict c, const vd *a, const vd *b) /* c = a b */
{
    c[0] = RC(a, 0, b, 0);
    c[1] = RC(a, 0, b, 1);
    c[2] = RC(a, 0, b, 2);
    c[3] = RC(a, 1, b, 0);
    c[4] = RC(a, 1, b, 1);
    c[5] = RC(a, 1, b, 2);
    c[6] = RC(a, 2, b, 0);
    c[7] = RC(a, 2, b, 1);
    c[8] = RC(a, 2, b, 2);
}
INL void m_mul_nt(vd *restrict c, const vd *a, const vd *b) /* c = a b^T */
{
    c[0] = RR(a, 0, b, 0);
    c[1] = RR(a, 0, b, 1);
    c[2] = RR(a, 0, b, 2);
    c[3] = RR(a, 1, b, 0);
    c[4] = RR(a, 1, b, 1);
    c[5] = RR(a, 1, b, 2);
    c[6] = RR(a, 2, b, 0);
    c[7] = RR(a, 2, b, 1);
    c[8] = RR(a, 2, b, 2);
}
INL void m_mul_tn(vd *restrict c, const vd *a, const vd *b) /* c = a^T b */
{
    c[0] = CC(a, 0, b, 0);
    c[1] = CC(a, 0, b, 1);
    c[2] = CC(a, 0, b, 2);
    c[3] = CC(a, 1, b, 0);
    c[4] = CC(a, 1, b, 1);
    c[5] = CC(a, 1, b, 2);
    c[6] = CC(a, 2, b, 0);
    c[7] = CC(a, 2, b, 1);
    c[8] = CC(a, 2, b, 2);
}
INL vd m_det(const vd *a) { return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]); }

/* |q|^2 R(q) for any q (homogeneous form: no normalization needed). */
INL void q_to_mat_h(const vd *q, vd *r)
{
    vd w = q[0], x = q[1], y = q[2], z = q[3];
    vd ww = w * w, xx = x * x, yy = y * y, zz = z * z;
    vd xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z;
    r[0] = (ww + xx) - (yy + zz);
    r[1] = 2.0 * (xy - wz);
    r[2] = 2.0 * (xz + wy);
    r[3] = 2.0 * (xy + wz);
    r[4] = (ww - xx) + (yy - zz);
    r[5] = 2.0 * (yz - wx);
    r[6] = 2.0 * (xz - wy);
    r[7] = 2.0 * (yz + wx);
    r[8] = (ww - xx) - (yy - zz);
}
/* R(q) for unit q. */
INL void q_to_mat(const vd *q, vd *r)
{
    vd w = q[0], x = q[1], y = q[2], z = q[3];
    vd x2 = x + x, y2 = y + y, z2 = z + z;
    vd xx = x * x2, yy = y * y2, zz = z * z2, xy = x * y2, xz = x * z2, yz = y * z2;
    vd wx = w * x2, wy = w * y2, wz = w * z2;
    r[0] = 1.0 - (yy + zz);
    r[1] = xy - wz;
    r[2] = xz + wy;
    r[3] = xy + wz;
    r[4] = 1.0 - (xx + zz);
    r[5] = yz - wx;
    r[6] = xz - wy;
    r[7] = yz + wx;
    r[8] = 1.0 - (xx + yy);
}
INL void q_normalize(vd *q)
{
    vd inv = 1.0 / v_sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    q[0] *= inv;
    q[1] *= inv;
    q[2] *= inv;
    q[3] *= inv;
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
    vd d = (fk_t)-0.5 * (m[1] + m[3]), e = (fk_t)-0.5 * (m[2] + m[6]), f = (fk_t)-0.5 * (m[5] + m[7]);
    vd a00 = b * c - f * f, a11 = a * c - e * e, a22 = a * b - d * d;
    vd a01 = e * f - d * c, a02 = d * f - b * e, a12 = d * e - a * f;
    vd det = a * a00 + d * a01 + e * a02;
    vd inv = 0.5 / det; /* half: the quaternion increment is w/2 */
    vd h0 = (a00 * g0 + a01 * g1 + a02 * g2) * inv;
    vd h1 = (a01 * g0 + a11 * g1 + a12 * g2) * inv;
    vd h2 = (a02 * g0 + a12 * g1 + a22 * g2) * inv;
    /* the exact stationarity is (H + cI) w = g with c = g.w/4 + O(|w|^4): one correction
     * w -= c H^-1 w leaves an O(|w|^5) error instead of Newton's O(|w|^3) */
#if !FK_F32 /* single precision: a converged step (below 2e-3 rad) leaves O(|w|^3) < 1e-8 rad, under float rounding */
    vd k = (g0 * h0 + g1 * h1 + g2 * h2) * inv;
    vd u0 = a00 * h0 + a01 * h1 + a02 * h2, u1 = a01 * h0 + a11 * h1 + a12 * h2, u2 = a02 * h0 + a12 * h1 + a22 * h2;
    h0 -= k * u0;
    h1 -= k * u1;
    h2 -= k * u2;
#endif
    q_mul_cayley(q, h0, h1, h2);
    h[0] = h0;
    h[1] = h1;
    h[2] = h2;
    *ok = (a > 0) & (a22 > 0) & (det > 0) & (4.0 * (h0 * h0 + h1 * h1 + h2 * h2) < (fk_t)POLAR_TOL2);
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
        s0 += h[0];
        s1 += h[1];
        s2 += h[2];
        it++;
    } while (it < POLAR_KMAX && !v_all(ok));
    *iters += it;
    vd zero = {0};
    vm keep = (s0 * s0 + s1 * s1 + s2 * s2) < (fk_t)0.0025;
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
    double res[4];
    sc_fem_polar_exact_start(g, q0, res);
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
    if (!(n > 0) || !isfinite(n)) {
        res[0] = 1;
        res[1] = res[2] = res[3] = 0;
        n = 1;
    } /* NaN input */
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

/* The padded node arrays (x, y, z, 0 per node: 32 bytes in double, 16 in float) of the elastic
 * pass: one 4-wide load or read-modify-write per node and lane, and a register transpose
 * between them and the lane vectors. Node offsets are in elements (4 x node), the same for
 * both precisions. */
typedef fk_t v4t __attribute__((vector_size(4 * sizeof(fk_t))));
INL v4t load4(const fk_t *p)
{
    v4t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#if FK_F32 /* shuffle indices (a, b, c, d) repeated in every 128-bit block of 4 lanes */
#if VW == 8
#define FK_B4(a, b, c, d) a, b, c, d, a + 4, b + 4, c + 4, d + 4
#else
#define FK_B4(a, b, c, d) a, b, c, d, a + 4, b + 4, c + 4, d + 4, a + 8, b + 8, c + 8, d + 8, a + 12, b + 12, c + 12, d + 12
#endif
#endif
#if FK_F32
/* c[l] holds the nodes (x y z 0) of lanes l, l+4, ... one per 128-bit block: a 4 x 4 transpose
 * inside every block leaves lane 4b+l of vx, vy, vz in block b, position l. */
INL void block_transpose(const vd *c, vd *vx, vd *vy, vd *vz)
{
    vd t0 = __builtin_shufflevector(c[0], c[1], FK_B4(0, VW, 1, VW + 1));     /* x0 x1 y0 y1 per block */
    vd t1 = __builtin_shufflevector(c[2], c[3], FK_B4(0, VW, 1, VW + 1));     /* x2 x3 y2 y3 */
    vd t2 = __builtin_shufflevector(c[0], c[1], FK_B4(2, VW + 2, 3, VW + 3)); /* z0 z1 . . */
    vd t3 = __builtin_shufflevector(c[2], c[3], FK_B4(2, VW + 2, 3, VW + 3)); /* z2 z3 . . */
    *vx = __builtin_shufflevector(t0, t1, FK_B4(0, 1, VW, VW + 1));
    *vy = __builtin_shufflevector(t0, t1, FK_B4(2, 3, VW + 2, VW + 3));
    *vz = __builtin_shufflevector(t2, t3, FK_B4(0, 1, VW, VW + 1));
}
#endif

INL void gather4(const fk_t *p4, const unsigned *idx, vd *vx, vd *vy, vd *vz)
{
#if !FK_F32 && VW == 4
    v4t a0 = load4(p4 + idx[0]), a1 = load4(p4 + idx[1]), a2 = load4(p4 + idx[2]), a3 = load4(p4 + idx[3]);
    vd u0 = __builtin_shufflevector(a0, a1, 0, 4, 2, 6), u1 = __builtin_shufflevector(a0, a1, 1, 5, 3, 7); /* x0 x1 z0 z1, y0 y1 . . */
    vd u2 = __builtin_shufflevector(a2, a3, 0, 4, 2, 6), u3 = __builtin_shufflevector(a2, a3, 1, 5, 3, 7);
    *vx = __builtin_shufflevector(u0, u2, 0, 1, 4, 5);
    *vy = __builtin_shufflevector(u1, u3, 0, 1, 4, 5);
    *vz = __builtin_shufflevector(u0, u2, 2, 3, 6, 7);
#elif !FK_F32 && VW == 8
    vd c[4];
    for (int l = 0; l < 4; l++) c[l] = __builtin_shufflevector(load4(p4 + idx[l]), load4(p4 + idx[l + 4]), 0, 1, 2, 3, 4, 5, 6, 7);
    vd u0 = __builtin_shufflevector(c[0], c[1], 0, 8, 2, 10, 4, 12, 6, 14), u1 = __builtin_shufflevector(c[0], c[1], 1, 9, 3, 11, 5, 13, 7, 15);
    vd u2 = __builtin_shufflevector(c[2], c[3], 0, 8, 2, 10, 4, 12, 6, 14), u3 = __builtin_shufflevector(c[2], c[3], 1, 9, 3, 11, 5, 13, 7, 15);
    *vx = __builtin_shufflevector(u0, u2, 0, 1, 8, 9, 4, 5, 12, 13);
    *vy = __builtin_shufflevector(u1, u3, 0, 1, 8, 9, 4, 5, 12, 13);
    *vz = __builtin_shufflevector(u0, u2, 2, 3, 10, 11, 6, 7, 14, 15);
#else
    /* floats: c[l] holds the nodes of lanes l, l+4, ... one per 128-bit block */
    vd c[4];
#if VW == 8
    for (int l = 0; l < 4; l++) c[l] = __builtin_shufflevector(load4(p4 + idx[l]), load4(p4 + idx[l + 4]), 0, 1, 2, 3, 4, 5, 6, 7);
#else
    typedef fk_t v8t __attribute__((vector_size(8 * sizeof(fk_t))));
    for (int l = 0; l < 4; l++) {
        v8t lo = __builtin_shufflevector(load4(p4 + idx[l]), load4(p4 + idx[l + 4]), 0, 1, 2, 3, 4, 5, 6, 7);
        v8t hi = __builtin_shufflevector(load4(p4 + idx[l + 8]), load4(p4 + idx[l + 12]), 0, 1, 2, 3, 4, 5, 6, 7);
        c[l] = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    }
#endif
    block_transpose(c, vx, vy, vz);
#endif
}

#if FK_F32
/* The gather of two padded node arrays stored interleaved, one 8-float record per node
 * (a: x y z 0, b: x y z 0; offsets 2 idx): one 256-bit load per node and lane instead of two
 * 128-bit ones (single precision with plasticity: x~ and x - x~). */
INL void gather_pair(const fk_t *p8, const unsigned *idx, vd *a, vd *b)
{
    typedef fk_t v8t __attribute__((vector_size(8 * sizeof(fk_t))));
    vd ca[4], cb[4];
    for (int l = 0; l < 4; l++) {
        v8t r0, r1;
        memcpy(&r0, p8 + 2 * idx[l], sizeof r0);
        memcpy(&r1, p8 + 2 * idx[l + 4], sizeof r1);
#if VW == 8
        ca[l] = __builtin_shufflevector(r0, r1, 0, 1, 2, 3, 8, 9, 10, 11);
        cb[l] = __builtin_shufflevector(r0, r1, 4, 5, 6, 7, 12, 13, 14, 15);
#else
        v8t r2, r3;
        memcpy(&r2, p8 + 2 * idx[l + 8], sizeof r2);
        memcpy(&r3, p8 + 2 * idx[l + 12], sizeof r3);
        vd lo = __builtin_shufflevector(r0, r1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        vd hi = __builtin_shufflevector(r2, r3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        ca[l] = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
        cb[l] = __builtin_shufflevector(lo, hi, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
#endif
    }
    block_transpose(ca, &a[0], &a[1], &a[2]);
    block_transpose(cb, &b[0], &b[1], &b[2]);
}

/* The edge matrices of both arrays of gather_pair. */
INL void edges_pair(const fk_t *p8, const unsigned *n0, vd *da, vd *db)
{
    vd a0[3], b0[3], a[3], b[3];
    gather_pair(p8, n0, a0, b0);
    UNROLL
    for (int j = 0; j < 3; j++) {
        gather_pair(p8, n0 + (j + 1) * SC_FEM_PAD, a, b);
        UNROLL
        for (int k = 0; k < 3; k++) {
            da[3 * k + j] = a[k] - a0[k];
            db[3 * k + j] = b[k] - b0[k];
        }
    }
}
#endif

/* The edge matrix D = [x1 - x0, x2 - x0, x3 - x0] (row-major) from the padded positions. */
INL void edges4(const fk_t *x4, const unsigned *n0, vd *d)
{
    vd a[3], b[3];
    gather4(x4, n0, &a[0], &a[1], &a[2]);
    UNROLL
    for (int j = 0; j < 3; j++) {
        gather4(x4, n0 + (j + 1) * SC_FEM_PAD, &b[0], &b[1], &b[2]);
        d[j] = b[0] - a[0];
        d[3 + j] = b[1] - a[1];
        d[6 + j] = b[2] - a[2];
    }
}

/* F = D Bm^-1 from the padded positions. */
INL void def_grad4(const fk_t *x4, const unsigned *n0, const vd *bm, vd *f)
{
    vd d[9];
    edges4(x4, n0, d);
    m_mul(f, d, bm);
}

/* f4[idx[l] + 0..3] += (fx, fy, fz, 0)[l] for the first nl lanes, in lane order (a full float
 * group: in the order below). */
INL void scatter_node4(fk_t *f4, const unsigned *idx, int nl, vd fx, vd fy, vd fz)
{
    const vd zero = {0};
    v4t a[VW];
#if !FK_F32 && VW == 4
    vd u0 = __builtin_shufflevector(fx, fz, 0, 1, 4, 5), u2 = __builtin_shufflevector(fx, fz, 2, 3, 6, 7);     /* x0 x1 z0 z1 */
    vd u1 = __builtin_shufflevector(fy, zero, 0, 1, 4, 4), u3 = __builtin_shufflevector(fy, zero, 2, 3, 4, 4); /* y0 y1 0 0 */
    a[0] = __builtin_shufflevector(u0, u1, 0, 4, 2, 6);
    a[1] = __builtin_shufflevector(u0, u1, 1, 5, 3, 7);
    a[2] = __builtin_shufflevector(u2, u3, 0, 4, 2, 6);
    a[3] = __builtin_shufflevector(u2, u3, 1, 5, 3, 7);
#elif !FK_F32 && VW == 8
    vd u0 = __builtin_shufflevector(fx, fz, 0, 1, 8, 9, 4, 5, 12, 13), u2 = __builtin_shufflevector(fx, fz, 2, 3, 10, 11, 6, 7, 14, 15);
    vd u1 = __builtin_shufflevector(fy, zero, 0, 1, 8, 8, 4, 5, 8, 8), u3 = __builtin_shufflevector(fy, zero, 2, 3, 8, 8, 6, 7, 8, 8);
    vd c0 = __builtin_shufflevector(u0, u1, 0, 8, 2, 10, 4, 12, 6, 14), c1 = __builtin_shufflevector(u0, u1, 1, 9, 3, 11, 5, 13, 7, 15);
    vd c2 = __builtin_shufflevector(u2, u3, 0, 8, 2, 10, 4, 12, 6, 14), c3 = __builtin_shufflevector(u2, u3, 1, 9, 3, 11, 5, 13, 7, 15);
    a[0] = __builtin_shufflevector(c0, c0, 0, 1, 2, 3), a[4] = __builtin_shufflevector(c0, c0, 4, 5, 6, 7);
    a[1] = __builtin_shufflevector(c1, c1, 0, 1, 2, 3), a[5] = __builtin_shufflevector(c1, c1, 4, 5, 6, 7);
    a[2] = __builtin_shufflevector(c2, c2, 0, 1, 2, 3), a[6] = __builtin_shufflevector(c2, c2, 4, 5, 6, 7);
    a[3] = __builtin_shufflevector(c3, c3, 0, 1, 2, 3), a[7] = __builtin_shufflevector(c3, c3, 4, 5, 6, 7);
#else
    /* the gather's transpose backwards: lane 4b+l ends in block b of c[l] */
    vd t0 = __builtin_shufflevector(fx, fy, FK_B4(0, VW, 1, VW + 1));     /* x0 y0 x1 y1 per block */
    vd t1 = __builtin_shufflevector(fx, fy, FK_B4(2, VW + 2, 3, VW + 3)); /* x2 y2 x3 y3 */
    vd t2 = __builtin_shufflevector(fz, zero, FK_B4(0, VW, 1, VW));       /* z0 0 z1 0 */
    vd t3 = __builtin_shufflevector(fz, zero, FK_B4(2, VW, 3, VW));       /* z2 0 z3 0 */
    vd c[4];
    c[0] = __builtin_shufflevector(t0, t2, FK_B4(0, 1, VW, VW + 1));
    c[1] = __builtin_shufflevector(t0, t2, FK_B4(2, 3, VW + 2, VW + 3));
    c[2] = __builtin_shufflevector(t1, t3, FK_B4(0, 1, VW, VW + 1));
    c[3] = __builtin_shufflevector(t1, t3, FK_B4(2, 3, VW + 2, VW + 3));
    for (int b = 0; b < VW / 4; b++)
        for (int l = 0; l < 4; l++) memcpy(&a[4 * b + l], (const fk_t *)&c[l] + 4 * b, sizeof a[0]);
#endif
#if FK_F32
    if (nl == VW) { /* lanes 0, 4, 8, ..., 1, 5, ...: a node shared by neighbouring lanes (17 % of
                       them on the character, Morton order) is not read back right after its store */
        UNROLL
        for (int j = 0; j < 4; j++)
            for (int b = 0; b < VW / 4; b++) {
                fk_t *p = f4 + idx[4 * b + j];
                v4t v = load4(p) + a[4 * b + j];
                memcpy(p, &v, sizeof v);
            }
        return;
    }
#endif
    for (int l = 0; l < nl; l++) {
        fk_t *p = f4 + idx[l];
        v4t v = load4(p) + a[l];
        memcpy(p, &v, sizeof v);
    }
}

/* Adds the group's node forces (h = -V P Bm^-T: column j is node j+1's force, node 0 gets
 * minus the sum) to the padded force array, node by node, lane by lane (scatter_node4). */
INL void scatter4(const sc_fem *fem, int t0, const vd *h, fk_t *f4)
{
    const unsigned *nd = fem->node + sc_fem_index(t0, 0, 4);
    const vd f0x = -(h[0] + h[1] + h[2]), f0y = -(h[3] + h[4] + h[5]), f0z = -(h[6] + h[7] + h[8]);
    if (__builtin_expect(fem->ntets - t0 >= VW, 1)) { /* a full group: the lane loops unroll without tests */
        scatter_node4(f4, nd, VW, f0x, f0y, f0z);
        UNROLL
        for (int j = 0; j < 3; j++) scatter_node4(f4, nd + (j + 1) * SC_FEM_PAD, VW, h[j], h[3 + j], h[6 + j]);
    } else {
        const int nl = fem->ntets - t0;
        scatter_node4(f4, nd, nl, f0x, f0y, f0z);
        for (int j = 0; j < 3; j++) scatter_node4(f4, nd + (j + 1) * SC_FEM_PAD, nl, h[j], h[3 + j], h[6 + j]);
    }
}

/* dst4 = src padded, in the FEM's node order. */
static void pack4(int n, const int *order, const double *src, fk_t *dst4)
{
    for (int i = 0; i < n; i++) {
        fk_t *d = dst4 + 4 * order[i];
        for (int k = 0; k < 3; k++) d[k] = (fk_t)src[3 * i + k];
        d[3] = 0;
    }
}

#if FK_F32
/* The records of gather_pair: x~ and x - x~ (the difference taken in double). */
static void pack_pair(int n, const int *order, const double *x, const double *xp, fk_t *dst8)
{
    for (int i = 0; i < n; i++) {
        fk_t *d = dst8 + 8 * order[i];
        for (int k = 0; k < 3; k++) {
            d[k] = (fk_t)xp[3 * i + k];
            d[4 + k] = (fk_t)(x[3 * i + k] - xp[3 * i + k]);
        }
        d[3] = d[7] = 0;
    }
}
#endif

static void unpack4_add(int n, const int *order, const fk_t *src4, double *dst)
{
    for (int i = 0; i < n; i++) {
        const fk_t *s4 = src4 + 4 * order[i];
        dst[3 * i] += s4[0];
        dst[3 * i + 1] += s4[1];
        dst[3 * i + 2] += s4[2];
    }
}

INL void load_bm(const sc_fem *fem, int t0, vd *bm)
{
    const fk_t *p = FK_BM(fem) + sc_fem_index(t0, 0, 9);
    UNROLL
    for (int k = 0; k < 9; k++) bm[k] = v_load(p + k * SC_FEM_PAD);
}

typedef struct {
    vd energy, min_det, min_idx; /* per lane: energy sum, smallest det F and its tet (model index) */
    vm inverted;                 /* per lane: minus the count of det F <= 0 */
    int fallbacks;
    long iters;
} elastic_acc;

/* The elastic pass ([L13] eq. 7-11, 14-16) runs over blocks of BLOCK tets in three phases,
 * each a short loop over the block's SIMD groups: (1) gather the nodes and form F (and Fp)
 * into a scratch block; (2) fit the rotations R and R*; (3) stresses,
 * node forces and statistics. One group's work is a long chain of dependent operations (a
 * Newton step, a square root, two divisions); shorter loops over independent groups let the
 * out-of-order core overlap several groups, which one long loop body does not (measured: the
 * phases take about 0.85 of the time of the fused loop). The scratch block stays in L1. */
#define BLOCK (8 * VW)

typedef struct {
    fk_t f[9][BLOCK], fp[9][BLOCK]; /* F and Fp of the block's tets, SoA */
} elastic_scratch;

INL vd s_load(const fk_t (*a)[BLOCK], int k, int g) { return v_load(&a[k][g]); }
INL void s_store(fk_t (*a)[BLOCK], int k, int g, vd v) { v_store(&a[k][g], v); }

/* Phase 2: the rotation of g (row-major, 9 lanes) for the group at slot t0, warm rows
 * row..row+6 (quaternion, predictor). Counts fallbacks (padding lanes excluded). */
INL void fit_rotation(const sc_fem *fem, int t0, const vd *g, fk_t *warm, int row, elastic_acc *acc)
{
    const size_t s = SC_FEM_PAD;
    fk_t *w = warm + sc_fem_index(t0, row, SC_FEM_WARM_PER_TET);
    vd q[4], q0[4], hp[3];
    UNROLL
    for (int k = 0; k < 4; k++) q0[k] = q[k] = v_load(w + k * s);
    UNROLL
    for (int k = 0; k < 3; k++) hp[k] = v_load(w + (4 + k) * s);
    vm bad = polar_fast(g, q, hp, &acc->iters);
    if (__builtin_expect(!v_all(~bad), 0)) {
        int nl = fem->ntets - t0 < VW ? fem->ntets - t0 : VW;
        acc->fallbacks += polar_fix_lanes(bad, g, q0, q, hp);
        /* padding lanes were fixed too (they repeat the first tet) but are not counted */
        for (int l = nl; l < VW; l++) acc->fallbacks -= bad[l] != 0;
    }
    q_normalize(q);
    UNROLL
    for (int k = 0; k < 4; k++) v_store(w + k * s, q[k]);
    UNROLL
    for (int k = 0; k < 3; k++) v_store(w + (4 + k) * s, hp[k]);
}

INL void load_rotation(const sc_fem *fem, int t0, const fk_t *warm, int row, vd *r)
{
    const size_t s = SC_FEM_PAD;
    const fk_t *w = warm + sc_fem_index(t0, row, SC_FEM_WARM_PER_TET);
    vd q[4];
    UNROLL
    for (int k = 0; k < 4; k++) q[k] = v_load(w + k * s);
    q_to_mat(q, r);
}

/* x4: the padded positions, or (single precision with plasticity) the records of pack_pair */
INL void elastic_block(const sc_fem *fem, int b0, int nt, const fk_t *x4, const fk_t *xp4, fk_t *warm, fk_t *f4, elastic_acc *acc,
                       elastic_scratch *sc, const int plastic)
{
    /* phase 1: F = Ds Bm^-1 and Fp = Dp Bm^-1 */
    for (int g = 0; g < nt; g += VW) {
        const int t0 = b0 + g;
        const unsigned *nd = fem->node + sc_fem_index(t0, 0, 4);
        vd bm[9], f[9];
        load_bm(fem, t0, bm);
#if FK_F32
        if (plastic) { /* Ds = Dp + (Ds - Dp) */
            vd dp[9], du[9];
            edges_pair(x4, nd, dp, du);
            m_mul(f, dp, bm);
            UNROLL
            for (int k = 0; k < 9; k++) s_store(sc->fp, k, g, f[k]);
            UNROLL
            for (int k = 0; k < 9; k++) du[k] += dp[k];
            m_mul(f, du, bm);
            UNROLL
            for (int k = 0; k < 9; k++) s_store(sc->f, k, g, f[k]);
            continue;
        }
#endif
        def_grad4(x4, nd, bm, f);
        UNROLL
        for (int k = 0; k < 9; k++) s_store(sc->f, k, g, f[k]);
        if (plastic) {
            def_grad4(xp4, nd, bm, f);
            UNROLL
            for (int k = 0; k < 9; k++) s_store(sc->fp, k, g, f[k]);
        }
    }
    /* phase 2: R = rot(F); R* = rot(Fp F^T), which makes P F^T symmetric ([L13] 4.2.2) */
    for (int g = 0; g < nt; g += VW) {
        vd f[9], fp[9], a[9];
        UNROLL
        for (int k = 0; k < 9; k++) f[k] = s_load(sc->f, k, g);
        fit_rotation(fem, b0 + g, f, warm, 0, acc);
        if (plastic) {
            UNROLL
            for (int k = 0; k < 9; k++) fp[k] = s_load(sc->fp, k, g);
            m_mul_nt(a, fp, f);
            fit_rotation(fem, b0 + g, a, warm, WARM_RS, acc);
        }
    }
    /* phase 3: P = 2 mu E + lambda tr(R^T E) R, E = F - R*^T Fp (eq. 16) or F - R (eq. 8);
     * node forces -V P Bm^-T */
    for (int g = 0; g < nt; g += VW) {
        const int t0 = b0 + g;
        vd f[9], r[9], e[9], bm[9];
        UNROLL
        for (int k = 0; k < 9; k++) f[k] = s_load(sc->f, k, g);
        load_rotation(fem, t0, warm, 0, r);
        if (plastic) {
            vd rs[9], fp[9], b[9];
            UNROLL
            for (int k = 0; k < 9; k++) fp[k] = s_load(sc->fp, k, g);
            load_rotation(fem, t0, warm, WARM_RS, rs);
            m_mul_tn(b, rs, fp); /* R R_p^T Fp = R*^T Fp */
            UNROLL
            for (int k = 0; k < 9; k++) e[k] = f[k] - b[k];
        } else {
            UNROLL
            for (int k = 0; k < 9; k++) e[k] = f[k] - r[k];
        }
        vd tr = r[0] * e[0] + r[1] * e[1] + r[2] * e[2] + r[3] * e[3] + r[4] * e[4] + r[5] * e[5] + r[6] * e[6] + r[7] * e[7] + r[8] * e[8];
        vd e2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3] + e[4] * e[4] + e[5] * e[5] + e[6] * e[6] + e[7] * e[7] + e[8] * e[8];
        vd vol = v_load(FK_VOL(fem) + t0);
        acc->energy += vol * ((fk_t)fem->mu * e2 + (fk_t)(0.5 * fem->lambda) * tr * tr);
        vd c1 = (fk_t)(-2.0 * fem->mu) * vol, c2 = (fk_t)-fem->lambda * vol * tr, p[9], h[9];
        UNROLL
        for (int k = 0; k < 9; k++) p[k] = c1 * e[k] + c2 * r[k]; /* -V P */
        load_bm(fem, t0, bm);
        m_mul_nt(h, p, bm);
        scatter4(fem, t0, h, f4);

        /* stats, lane-parallel; padding lanes (slot >= ntets) are masked out */
        vd det = m_det(f), tidx = v_load(FK_TET_ID(fem) + t0);
        vm valid = (v_splat((fk_t)t0) + v_iota()) < (fk_t)fem->ntets;
        acc->inverted += ~(det > 0) & valid;
        vm better = ((det < acc->min_det) | ((det == acc->min_det) & (tidx < acc->min_idx))) & valid;
        acc->min_det = v_select(better, det, acc->min_det);
        acc->min_idx = v_select(better, tidx, acc->min_idx);
    }
}

static void elastic_forces(const sc_fem *fem, const double *x, const double *pose_rest, double *warm_state, double *force, sc_fem_stats *stats)
{
    elastic_acc acc;
    elastic_scratch sc __attribute__((aligned(64)));
    memset(&acc, 0, sizeof acc);
    acc.min_det = v_splat(INFINITY);
    acc.min_idx = v_splat(INFINITY);
    const int n = fem->nnodes;
    fk_t *warm = (fk_t *)warm_state; /* a float kernel keeps its warm rows as floats (sc_fem_warm_reset) */
    fk_t *x4 = (fk_t *)fem->pad4, *xp4 = x4 + 4 * (size_t)n, *f4 = xp4 + 4 * (size_t)n;
#if FK_F32
    if (pose_rest) pack_pair(n, fem->order, x, pose_rest, x4); /* 8 floats per node: the force array follows them */
    else pack4(n, fem->order, x, x4);
#else
    pack4(n, fem->order, x, x4);
    if (pose_rest) pack4(n, fem->order, pose_rest, xp4);
#endif
    memset(f4, 0, 4 * (size_t)n * sizeof *f4);
    for (int b0 = 0; b0 < fem->ntets; b0 += BLOCK) {
        const int nt = fem->ntets - b0 < BLOCK ? fem->ntets - b0 : BLOCK;
        if (pose_rest) elastic_block(fem, b0, nt, x4, xp4, warm, f4, &acc, &sc, 1);
        else elastic_block(fem, b0, nt, x4, NULL, warm, f4, &acc, &sc, 0);
    }
    unpack4_add(n, fem->order, f4, force);
    if (stats) {
        double en = 0, wd = INFINITY, wi = INFINITY;
        int inv = 0;
        for (int l = 0; l < VW; l++) {
            en += acc.energy[l];
            inv -= (int)acc.inverted[l];
            double d = acc.min_det[l], i = acc.min_idx[l];
            if (d < wd || (d == wd && i < wi)) {
                wd = d;
                wi = i;
            }
        }
        stats->elastic_energy = en;
        stats->inverted = inv;
        stats->worst_tet = wi < INFINITY ? (int)wi : -1;
        stats->worst_det = wi < INFINITY ? wd : 0;
        stats->fallbacks = acc.fallbacks;
        stats->newton_steps = acc.iters;
    }
}

static void rayleigh_damping(const sc_fem *fem, const double *v, const double *warm_state, double beta, double *force)
{
    const int n = fem->nnodes;
    const fk_t *warm = (const fk_t *)warm_state;
    fk_t *v4 = (fk_t *)fem->pad4, *f4 = v4 + 8 * (size_t)n;
    pack4(n, fem->order, v, v4);
    memset(f4, 0, 4 * (size_t)n * sizeof *f4);
    for (int t0 = 0; t0 < fem->ntets; t0 += VW) {
        vd bm[9], fd[9], r[9], g[9];
        load_bm(fem, t0, bm);
        def_grad4(v4, fem->node + sc_fem_index(t0, 0, 4), bm, fd); /* dF/dt */
        load_rotation(fem, t0, warm, 0, r);                        /* unit: the elastic pass stores it normalized */
        m_mul_tn(g, r, fd);
        /* sigma = 2 mu sym(G) + lambda tr(G) I; -beta V R sigma */
        vd vol = v_load(FK_VOL(fem) + t0), mu = v_splat((fk_t)fem->mu);
        vd trg = (g[0] + g[4] + g[8]) * (fk_t)fem->lambda;
        vd sg[9];
        sg[0] = 2.0 * mu * g[0] + trg;
        sg[4] = 2.0 * mu * g[4] + trg;
        sg[8] = 2.0 * mu * g[8] + trg;
        sg[1] = sg[3] = mu * (g[1] + g[3]);
        sg[2] = sg[6] = mu * (g[2] + g[6]);
        sg[5] = sg[7] = mu * (g[5] + g[7]);
        vd c = (fk_t)-beta * vol, p[9], h[9];
        m_mul(p, r, sg);
        UNROLL
        for (int k = 0; k < 9; k++) p[k] *= c;
        m_mul_nt(h, p, bm);
        scatter4(fem, t0, h, f4);
    }
    unpack4_add(n, fem->order, f4, force);
}

static int polar_batch(int n, const double *f, double *q, double *h, int *fallback, long *iters)
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

const sc_fem_kernel FK_TABLE = {FK_ID, VW, elastic_forces, rayleigh_damping, polar_batch};

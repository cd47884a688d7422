/* Small fixed-size linear algebra in double precision: vec3, mat3 (row-major),
 * unit quaternions (w, x, y, z), rigid transforms, polar decomposition. */
#ifndef SC_MATHX_H
#define SC_MATHX_H
#include <math.h>

#define SC_PI 3.14159265358979323846

typedef struct {
    double x, y, z;
} sc_vec3;
typedef struct {
    double m[3][3];
} sc_mat3; /* m[row][col] */
typedef struct {
    double w, x, y, z;
} sc_quat;
_Static_assert(sizeof(sc_quat) == 4 * sizeof(double), "sc_quat arrays are read as (w, x, y, z) doubles");
typedef struct {
    sc_quat q;
    sc_vec3 p;
} sc_xform; /* x_world = q * x_local + p */

/* The dot product of two n-vectors in four partial sums, so that the compiler can keep them in
   vector lanes (the summation order is fixed: the same inputs give the same bits). */
static inline double sc_dot(int n, const double *a, const double *b)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

static inline sc_vec3 sc_v3(double x, double y, double z)
{
    sc_vec3 v = {x, y, z};
    return v;
}
static inline sc_vec3 sc_v3_load(const double *a) { return sc_v3(a[0], a[1], a[2]); }
static inline void sc_v3_store(double *a, sc_vec3 v)
{
    a[0] = v.x;
    a[1] = v.y;
    a[2] = v.z;
}
static inline sc_vec3 sc_v3_add(sc_vec3 a, sc_vec3 b) { return sc_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline sc_vec3 sc_v3_sub(sc_vec3 a, sc_vec3 b) { return sc_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline sc_vec3 sc_v3_scale(sc_vec3 a, double s) { return sc_v3(a.x * s, a.y * s, a.z * s); }
static inline sc_vec3 sc_v3_axpy(double s, sc_vec3 x, sc_vec3 y) { return sc_v3(s * x.x + y.x, s * x.y + y.y, s * x.z + y.z); }
static inline double sc_v3_dot(sc_vec3 a, sc_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline sc_vec3 sc_v3_cross(sc_vec3 a, sc_vec3 b) { return sc_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }
static inline double sc_v3_norm(sc_vec3 a) { return sqrt(sc_v3_dot(a, a)); }
static inline double sc_v3_dist(sc_vec3 a, sc_vec3 b) { return sc_v3_norm(sc_v3_sub(a, b)); }
static inline sc_vec3 sc_v3_normalize(sc_vec3 a)
{
    double n = sc_v3_norm(a);
    return n > 0 ? sc_v3_scale(a, 1.0 / n) : a;
}
static inline sc_vec3 sc_v3_min(sc_vec3 a, sc_vec3 b) { return sc_v3(fmin(a.x, b.x), fmin(a.y, b.y), fmin(a.z, b.z)); }
static inline sc_vec3 sc_v3_max(sc_vec3 a, sc_vec3 b) { return sc_v3(fmax(a.x, b.x), fmax(a.y, b.y), fmax(a.z, b.z)); }
static inline double sc_v3_get(sc_vec3 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : v.z; }

/* mat3 */
sc_mat3 sc_m3_identity(void);
sc_mat3 sc_m3_zero(void);
sc_mat3 sc_m3_from_cols(sc_vec3 c0, sc_vec3 c1, sc_vec3 c2);
sc_mat3 sc_m3_mul(sc_mat3 a, sc_mat3 b);
sc_mat3 sc_m3_mul_tn(sc_mat3 a, sc_mat3 b); /* a^T b */
sc_mat3 sc_m3_mul_nt(sc_mat3 a, sc_mat3 b); /* a b^T */
sc_mat3 sc_m3_transpose(sc_mat3 a);
sc_mat3 sc_m3_add(sc_mat3 a, sc_mat3 b);
sc_mat3 sc_m3_sub(sc_mat3 a, sc_mat3 b);
sc_mat3 sc_m3_scale(sc_mat3 a, double s);
sc_vec3 sc_m3_mulv(sc_mat3 a, sc_vec3 v);
sc_vec3 sc_m3_mulv_t(sc_mat3 a, sc_vec3 v); /* a^T v */
sc_vec3 sc_m3_col(sc_mat3 a, int j);
double sc_m3_det(sc_mat3 a);
double sc_m3_trace(sc_mat3 a);
double sc_m3_frob(sc_mat3 a);
/* Inverse; returns 0 and leaves *out untouched when |det| <= tiny. */
int sc_m3_inverse(sc_mat3 a, sc_mat3 *out);
sc_mat3 sc_m3_skew(sc_vec3 v); /* skew(v) w = v x w */
/* Symmetric eigen-decomposition by cyclic Jacobi: a = V diag(e) V^T, e descending. */
void sc_m3_sym_eigen(sc_mat3 a, double e[3], sc_mat3 *v);

/* quaternions (unit, Hamilton product) */
sc_quat sc_q_identity(void);
sc_quat sc_q_mul(sc_quat a, sc_quat b);
sc_quat sc_q_conj(sc_quat a);
sc_quat sc_q_normalize(sc_quat a);
sc_quat sc_q_axis_angle(sc_vec3 axis, double angle);
sc_vec3 sc_q_rotate(sc_quat q, sc_vec3 v);
sc_mat3 sc_q_to_m3(sc_quat q);
sc_quat sc_q_from_m3(sc_mat3 r); /* r must be a rotation */
/* Rotation vector (axis * angle, angle in [0, pi]) and back. */
sc_vec3 sc_q_log(sc_quat q);
sc_quat sc_q_exp(sc_vec3 w);
sc_quat sc_q_slerp(sc_quat a, sc_quat b, double t);
double sc_q_angle_between(sc_quat a, sc_quat b); /* radians, [0, pi] */
/* Heading: the angle about +y of q's forward axis (+z at rest), atan2(f.x, f.z). */
double sc_q_heading(sc_quat q);
/* a in (-pi, pi] */
double sc_wrap_angle(double a);
/* Euler angles in degrees applied in the given axis order ("ZYX" means R = Rz Ry Rx). */
sc_quat sc_q_from_euler_deg(const char order[3], const double deg[3]);

/* Squared distance from p to the segment ab. */
double sc_point_segment_dist2(sc_vec3 p, sc_vec3 a, sc_vec3 b);
/* The point of triangle abc closest to p (Ericson, Real-Time Collision Detection 5.1.5). */
sc_vec3 sc_closest_on_triangle(sc_vec3 p, sc_vec3 a, sc_vec3 b, sc_vec3 c);

/* rigid transforms */
sc_xform sc_xf_identity(void);
sc_xform sc_xf_mul(sc_xform a, sc_xform b); /* apply b then a */
sc_xform sc_xf_inverse(sc_xform a);
sc_vec3 sc_xf_apply(sc_xform a, sc_vec3 v);

/* Polar decomposition F = R S with R a proper rotation (det +1) and S symmetric.
 * sc_polar is exact (eigen-decomposition of F^T F, with the sign fixed for inverted F so
 * that R stays a rotation; S then has a negative eigenvalue). Returns 0 if F is degenerate
 * and a rotation was completed from the remaining directions. */
int sc_polar(sc_mat3 f, sc_mat3 *r, sc_mat3 *s);
/* Warm-started rotation extraction (Mueller et al. 2016): iterate from *q towards the
 * rotation that maximizes tr(R^T F); robust for inverted and degenerate F; *q is updated in
 * place so the next call starts from it. Returns the iterations used. */
int sc_polar_rotation_warm(sc_mat3 f, sc_quat *q, int max_iter, double tol);

#endif

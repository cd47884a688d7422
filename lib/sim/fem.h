/* Soft-body force kernels of [L13] 4.2: corotated linear FEM (eq. 7-11) with pose-based
 * plasticity (eq. 12-16, R_p = R* R), pose-based damping (eq. 17) and Rayleigh damping.
 *
 * Layout: tets are stored in "slots", padded to a multiple of SC_FEM_PAD so the element loop
 * runs in SIMD groups without a scalar tail; padding slots repeat the first tet with zero
 * volume and never touch the force arrays. Per-tet arrays of several rows (nodes, Bm^-1, the
 * warm starts) are blocked: each block of SC_FEM_PAD slots stores its rows one after the
 * other (sc_fem_index), so a SIMD group's data is contiguous and one pointer reaches it. Node arrays (positions,
 * velocities, forces) are AoS, x[3*i+k], in the model's node order. Nothing allocates after
 * sc_fem_init.
 *
 * Kernels: a plain scalar reference (sc_polar on every tet) and SIMD kernels for AVX2 (4
 * tets per group) and AVX-512 (8 per group), each compiled for its instruction set and
 * called only after a CPU check. sc_fem_init selects the widest one the CPU runs
 * (sc_fem_kernel_override, which the tools take from the environment variable
 * SOFTCON_FEM_KERNEL=scalar|avx2|avx512|avx2-f32|avx512-f32, overrides it); sc_fem_set_kernel switches. The forces of all double kernels agree to
 * rounding (tests check it), but the bits of a run depend on the kernel: a snapshot records
 * sc_fem_kernel_id. Single-precision variants (AVX2 8 tets, AVX-512 16 tets per group) are a
 * choice of the caller (sc_fem_kernel_id_single; simulation.fem_precision: single): their
 * forces agree with the reference to about 1e-5 of the largest, and their warm starts are
 * floats in the same buffer, so the warm state must be reset (sc_fem_warm_reset) when a
 * kernel of the other precision takes over.
 *
 * Rotations: every tet keeps two warm-start quaternions (R of F, and R* of Fp F^T) and their
 * last increments (in the kernel's precision). They are simulation STATE: save them in snapshots so that a restored run
 * is bit-identical. Each call extrapolates them by the last increment, then refines them by
 * 1-3 corrected Newton steps on max tr(R^T G) in the Cayley parameter (error O(step^5)) until
 * the last step is below 2e-3 rad (rotation error ~1e-14); a tet that does not get there on a
 * positive definite Hessian (big jump, inverted with s2 ~ s3, collapsed) is redone by the
 * exact polar decomposition (sc_polar) and counted in sc_fem_stats.fallbacks. Call the
 * elastic pass once per time step: extra calls only cost Newton steps, not accuracy. The warm
 * layout is the same for every kernel. */
#ifndef SC_FEM_H
#define SC_FEM_H
#include <stddef.h>
#include "core/mathx.h"
#include "core/status.h"
#include "model/model.h"

#define SC_FEM_PAD 16 /* slots per block: the widest SIMD group (16 floats) */

/* Index of row `row` of slot t in a blocked per-tet array of `rows` rows. */
static inline size_t sc_fem_index(int t, int row, int rows)
{
    return ((size_t)t / SC_FEM_PAD * (size_t)rows + (size_t)row) * SC_FEM_PAD + (size_t)t % SC_FEM_PAD;
}

/* Kernel ids: they name the SIMD width and precision, so that a snapshot taken under one
 * kernel is never restored under another. */
enum {
    SC_FEM_KERNEL_SCALAR = 1,    /* "scalar-f64": plain C, exact polar decomposition per tet (reference) */
    SC_FEM_KERNEL_AVX2 = 2,      /* "avx2-f64x4": 4 tets per group, double */
    SC_FEM_KERNEL_AVX512 = 3,    /* "avx512-f64x8": 8 tets per group, double */
    SC_FEM_KERNEL_AVX2_F32 = 4,  /* "avx2-f32x8": 8 tets per group, single precision */
    SC_FEM_KERNEL_AVX512_F32 = 5 /* "avx512-f32x16": 16 tets per group, single precision */
};
#define SC_FEM_KERNEL_MAX 5

typedef struct sc_fem {
    int ntets, nnodes;              /* ntets: the tets stored in slots (the model's, less the rigid ones) */
    int nrigid;                     /* tets fixed to one bone, not stored (see sc_fem_init) */
    int stride;                     /* ntets rounded up to SC_FEM_PAD: the row length of every SoA array */
    double mu, lambda;              /* Lame parameters (Pa) from youngs/poisson */
    unsigned *node;                 /* [4*stride] node[sc_fem_index(s, k, 4)] = 4 x (node k of the tet in slot s, FEM numbering):
                          its offset in the padded node arrays, so a SIMD gather needs no index arithmetic */
    int *order;                     /* [nnodes] the FEM's number of the model's node i (tets and nodes are numbered along a
                          space-filling curve for cache locality) */
    int *node_model;                /* [nnodes] the model's number of FEM node j */
    double *bm;                     /* [9*stride] bm[sc_fem_index(s, 3*r+c, 9)] = Bm^-1(r, c) of the tet in slot s ([L13] eq. 11) */
    double *vol;                    /* [stride] rest volume (m^3); 0 in the padding */
    int *slot;                      /* [the model's ntets] slot of the model's tet t; -1 for a rigid tet */
    double *tet_id;                 /* [stride] the model's index of the tet in slot s (as a double, for the SIMD stats) */
    float *bm32, *vol32, *tet_id32; /* the same three in single precision, for the float kernels */
    int kernel;                     /* SC_FEM_KERNEL_* in use */
    double *pad4;                   /* [12*nnodes] scratch of the SIMD kernels (node arrays padded to 4): an sc_fem
                          serves one simulation at a time */
} sc_fem;

/* Copies the mesh out of the model (tets, tet_volume, bm_inv; the last two are recomputed from
 * rest_pos when NULL), derives the Lame parameters and selects the kernel (sc_fem_kernel_id).
 * Tets whose four nodes are fixed to the same bone (model node_bone) are left out: they move
 * rigidly with the bone and their forces sum to zero force and torque on it whatever they are
 * (sum f = 0 by construction, sum x x f = 0 as P F^T is symmetric, [L13] 4.2.2).
 * SC_EINPUT names the offending tet or material value, or a bad SOFTCON_FEM_KERNEL; SC_EIO on
 * allocation failure. */
int sc_fem_init(sc_fem *fem, const sc_model *m, sc_err *err);
/* As sc_fem_init, leaving out every tet whose four nodes are fixed, to one bone or several: for
 * a model whose fixed nodes are carried flesh (the soft contact layer), not flesh between bones. */
int sc_fem_init_free_tets(sc_fem *fem, const sc_model *m, sc_err *err);
void sc_fem_free(sc_fem *fem);

/* Overrides the choice of sc_fem_kernel_id and sc_fem_kernel_id_single in this process:
 * "scalar", "avx2", "avx512", "avx2-f32", "avx512-f32" or a kernel's name (copied); NULL or ""
 * restores the CPU's choice. The tools pass SOFTCON_FEM_KERNEL, which error messages name. */
void sc_fem_kernel_override(const char *name);
/* The kernel sc_fem_init selects in this process: the override when set, else the
 * widest the CPU runs (AVX-512 when the CPU and OS support it, else AVX2, else scalar). 0 when
 * the override names an unknown or unavailable kernel (sc_fem_init then fails). */
int sc_fem_kernel_id(void);
/* The widest single-precision kernel this CPU runs (the override still applies);
 * the scalar double kernel on a CPU without AVX2. */
int sc_fem_kernel_id_single(void);
/* 1 for the single-precision kernels. */
int sc_fem_kernel_is_f32(int id);
/* "scalar-f64", "avx2-f64x4", "avx512-f64x8", "avx2-f32x8", "avx512-f32x16"; "unknown" otherwise. */
const char *sc_fem_kernel_name(int id);
/* 1 when this CPU runs kernel id. */
int sc_fem_kernel_available(int id);
/* Switches fem to kernel id (SC_EINPUT when unknown or not available on this CPU). */
int sc_fem_set_kernel(sc_fem *fem, int id, sc_err *err);

/* Warm-start state: SC_FEM_WARM_PER_TET*stride doubles, blocked: warm[sc_fem_index(s, c, 14)]
 * (a single-precision kernel: the same index into the buffer read as floats) for slot s, with rows c = 0..3 the quaternion (w, x, y, z) of R, 4..6 its predictor (the body-frame Cayley
 * half-vector of the last call's increment, reused as a constant angular velocity), 7..10 the
 * quaternion of R*, 11..13 its predictor. Reset (in fem's kernel's precision): identity, zero predictors. */
#define SC_FEM_WARM_PER_TET 14
size_t sc_fem_warm_size(const sc_fem *fem);
void sc_fem_warm_reset(const sc_fem *fem, double *warm); /* all identity */
/* which = 0: R of tet t, 1: R* of tet t (t in the model's tet order; identity for a rigid tet). */
sc_quat sc_fem_warm_get(const sc_fem *fem, const double *warm, int t, int which);

typedef struct sc_fem_stats {
    double elastic_energy; /* sum V (mu |E|^2 + lambda/2 tr(R^T E)^2), E = F - R or F - R*^T Fp (J) */
    int inverted;          /* tets with det F <= 0 */
    int worst_tet;         /* tet with the smallest det F (-1 if none) */
    double worst_det;      /* that det F (volume ratio) */
    int fallbacks;         /* rotations (R or R*) that needed the exact polar fallback */
    long newton_steps;     /* Newton steps run, summed over SIMD groups and both rotations */
} sc_fem_stats;

/* Elastic forces ([L13] eq. 7-11, 14-16), ACCUMULATED into force[3*nnodes]:
 * F = Bs Bm^-1, R = rot(F) (max tr(R^T F): for inverted F the smallest singular value is
 * negated, so the force pushes the element back). With pose_rest (x~ of eq. 12, [3*nnodes]):
 * Fp = Bp Bm^-1, R* = rot(Fp F^T), R_p = R* R, P = 2mu(F - R*^T Fp) + lambda tr(R^T F - R_p^T Fp) R
 * (eq. 16; note R R_p^T = R*^T). Without it P = 2mu(F - R) + lambda tr(R^T F - I) R (eq. 8).
 * Node forces f = -V P Bm^-T (columns for nodes 1-3, node 0 gets minus their sum).
 * warm is read and updated; stats may be NULL. */
void sc_fem_elastic_forces(const sc_fem *fem, const double *x, const double *pose_rest, double *warm, double *force, sc_fem_stats *stats);

/* Pose-based damping ([L13] eq. 17): f_i = c m_i (dv.dx / dx.dx) dx with dx = xbar_i - x_i,
 * dv = xbar_dot_i - v_i; nodes with |dx| <= 1e-12 m get none. f is ACCUMULATED into force;
 * reaction (may be NULL) is OVERWRITTEN with -f_i (the force on the virtual node xbar_i, to be
 * sent to the bones through the skinning Jacobian transpose, [L13] eq. 18). */
void sc_fem_pose_damping(int nnodes, const double *mass, const double *x, const double *v, const double *xbar, const double *xbar_dot, double c,
                         double *force, double *reaction);
/* The force of eq. 17 on one node (3 values each), as sc_fem_pose_damping computes it. */
static inline void sc_fem_pose_damping_node(double mass, const double *x, const double *v, const double *xbar, const double *xbar_dot, double c,
                                            double *f)
{
    const double dx0 = xbar[0] - x[0], dx1 = xbar[1] - x[1], dx2 = xbar[2] - x[2];
    const double dv0 = xbar_dot[0] - v[0], dv1 = xbar_dot[1] - v[1], dv2 = xbar_dot[2] - v[2];
    const double d2 = dx0 * dx0 + dx1 * dx1 + dx2 * dx2;
    const double s = d2 > 1e-24 ? c * mass * (dv0 * dx0 + dv1 * dx1 + dv2 * dx2) / (d2 > 1e-24 ? d2 : 1) : 0;
    f[0] = s * dx0;
    f[1] = s * dx1;
    f[2] = s * dx2;
}

/* Rayleigh damping f = -(alpha M + beta K_R) v, ACCUMULATED. K_R = R K_0 R^T is the corotated
 * (warped) linear stiffness with R taken from warm[] (the last elastic pass): per tet
 * dF = Dv Bm^-1, G = R^T dF, dP = R (2mu sym(G) + lambda tr(G) I), f = -beta V dP Bm^-T.
 * K_R is symmetric positive semi-definite, so v.f <= 0; rigid translations give no force. */
void sc_fem_rayleigh_damping(const sc_fem *fem, const double *mass, const double *v, const double *warm, double alpha, double beta, double *force);

/* The rotation extraction used by sc_fem_elastic_forces (of the kernel sc_fem_kernel_id),
 * exposed for tests: for n row-major matrices f[9*i], updates the warm quaternions q[4*i]
 * (w, x, y, z) to rot(f_i) and the predictors h[3*i] (NULL: no prediction). fallback[i] (may
 * be NULL) is set to 1 where the exact fallback was used; iters (may be NULL) receives the
 * Newton steps summed over SIMD groups. Returns the fallback count. The scalar kernel
 * decomposes every matrix exactly (all count as fallbacks). */
int sc_fem_polar_batch(int n, const double *f, double *q, double *h, int *fallback, long *iters);

/* SIMD lanes (tets per group) of the kernel sc_fem_kernel_id: 8, 4 or 1. */
int sc_fem_simd_width(void);

#endif

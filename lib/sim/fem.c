/* Soft-body force kernels ([L13] 4.2, eq. 6-17): the mesh layout, the kernel selection, the
 * plain scalar reference kernel and pose-based damping. The SIMD kernels are in
 * fem_kernel.h (compiled by fem_avx2.c and fem_avx512.c). See fem.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sim/fem_internal.h"

#define WARM_RS 7 /* warm rows: 0-3 q of R, 4-6 its predictor, 7-10 q of R*, 11-13 its predictor */

/* ---- the scalar reference kernel: sc_polar on every tet, in plain C ---- */

void sc_fem_polar_exact_start(const double *g, const double *q0, double *q)
{
    sc_mat3 gm, r;
    memcpy(gm.m, g, sizeof gm.m);
    sc_polar(gm, &r, NULL);
    sc_quat p = sc_q_from_m3(r);
    double s = (p.w * q0[0] + p.x * q0[1] + p.y * q0[2] + p.z * q0[3]) < 0 ? -1 : 1;
    q[0] = s * p.w;
    q[1] = s * p.x;
    q[2] = s * p.y;
    q[3] = s * p.z;
}

static sc_mat3 slot_bm(const sc_fem *fem, int t)
{
    sc_mat3 m;
    for (int k = 0; k < 9; k++) m.m[k / 3][k % 3] = fem->bm[sc_fem_index(t, k, 9)];
    return m;
}

static const double *slot_node(const sc_fem *fem, const double *x, int t, int k)
{
    return x + 3 * fem->node_model[fem->node[sc_fem_index(t, k, 4)] / 4];
}

static sc_mat3 shape_matrix(const sc_fem *fem, const double *x, int t) /* [x1 - x0, x2 - x0, x3 - x0] */
{
    sc_vec3 x0 = sc_v3_load(slot_node(fem, x, t, 0));
    return sc_m3_from_cols(sc_v3_sub(sc_v3_load(slot_node(fem, x, t, 1)), x0), sc_v3_sub(sc_v3_load(slot_node(fem, x, t, 2)), x0),
                           sc_v3_sub(sc_v3_load(slot_node(fem, x, t, 3)), x0));
}

/* Node forces from H = -V P Bm^-T: column j to node j+1, minus their sum to node 0. */
static void scatter_scalar(const sc_fem *fem, int t, sc_mat3 h, double *force)
{
    for (int j = 0; j < 3; j++) {
        double *fj = (double *)slot_node(fem, force, t, j + 1), *f0 = (double *)slot_node(fem, force, t, 0);
        for (int i = 0; i < 3; i++) {
            fj[i] += h.m[i][j];
            f0[i] -= h.m[i][j];
        }
    }
}

/* The rotation of g stored as slot t's warm quaternion (row `row`), in the hemisphere of the
 * previous one; no predictor. */
static sc_mat3 exact_rotation(sc_mat3 g, double *warm, int t, int row)
{
    double q0[4], q[4];
    for (int k = 0; k < 4; k++) q0[k] = warm[sc_fem_index(t, row + k, SC_FEM_WARM_PER_TET)];
    sc_fem_polar_exact_start(&g.m[0][0], q0, q);
    for (int k = 0; k < 4; k++) warm[sc_fem_index(t, row + k, SC_FEM_WARM_PER_TET)] = q[k];
    for (int k = 4; k < 7; k++) warm[sc_fem_index(t, row + k, SC_FEM_WARM_PER_TET)] = 0;
    return sc_q_to_m3((sc_quat){q[0], q[1], q[2], q[3]});
}

static void scalar_elastic(const sc_fem *fem, const double *x, const double *xp, double *warm, double *force, sc_fem_stats *stats)
{
    double energy = 0, worst = INFINITY;
    int inverted = 0, worst_tet = -1;
    for (int t = 0; t < fem->ntets; t++) {
        sc_mat3 bmi = slot_bm(fem, t);
        sc_mat3 f = sc_m3_mul(shape_matrix(fem, x, t), bmi), e;
        sc_mat3 r = exact_rotation(f, warm, t, 0);
        if (xp) { /* [L13] eq. 14-16: R* = rot(Fp F^T), E = F - R*^T Fp */
            sc_mat3 fp = sc_m3_mul(shape_matrix(fem, xp, t), bmi);
            sc_mat3 rs = exact_rotation(sc_m3_mul_nt(fp, f), warm, t, WARM_RS);
            e = sc_m3_sub(f, sc_m3_mul_tn(rs, fp));
        } else { /* eq. 8 */
            e = sc_m3_sub(f, r);
        }
        double tr = sc_m3_trace(sc_m3_mul_tn(r, e)), fro = sc_m3_frob(e), vol = fem->vol[t];
        energy += vol * (fem->mu * fro * fro + 0.5 * fem->lambda * tr * tr);
        sc_mat3 p = sc_m3_add(sc_m3_scale(e, 2 * fem->mu), sc_m3_scale(r, fem->lambda * tr));
        scatter_scalar(fem, t, sc_m3_scale(sc_m3_mul_nt(p, bmi), -vol), force);
        double det = sc_m3_det(f);
        int id = (int)fem->tet_id[t];
        inverted += !(det > 0);
        if (det < worst || (det == worst && id < worst_tet)) {
            worst = det;
            worst_tet = id;
        }
    }
    if (stats) {
        stats->elastic_energy = energy;
        stats->inverted = inverted;
        stats->worst_tet = worst_tet;
        stats->worst_det = worst_tet < 0 ? 0 : worst;
        stats->fallbacks = 0;
        stats->newton_steps = 0;
    }
}

static void scalar_rayleigh(const sc_fem *fem, const double *v, const double *warm, double beta, double *force)
{
    for (int t = 0; t < fem->ntets; t++) {
        sc_mat3 bmi = slot_bm(fem, t);
        const double *w = warm + sc_fem_index(t, 0, SC_FEM_WARM_PER_TET);
        sc_mat3 r = sc_q_to_m3((sc_quat){w[0], w[SC_FEM_PAD], w[2 * SC_FEM_PAD], w[3 * SC_FEM_PAD]});
        sc_mat3 g = sc_m3_mul_tn(r, sc_m3_mul(shape_matrix(fem, v, t), bmi)); /* R^T dF/dt */
        sc_mat3 sym = sc_m3_scale(sc_m3_add(g, sc_m3_transpose(g)), fem->mu);
        double tr = fem->lambda * sc_m3_trace(g);
        for (int k = 0; k < 3; k++) sym.m[k][k] += tr;
        sc_mat3 p = sc_m3_mul(r, sym);
        scatter_scalar(fem, t, sc_m3_scale(sc_m3_mul_nt(p, bmi), -beta * fem->vol[t]), force);
    }
}

static int scalar_polar_batch(int n, const double *f, double *q, double *h, int *fallback, long *iters)
{
    for (int i = 0; i < n; i++) {
        double q0[4];
        memcpy(q0, q + 4 * i, sizeof q0);
        sc_fem_polar_exact_start(f + 9 * i, q0, q + 4 * i);
        if (h) h[3 * i] = h[3 * i + 1] = h[3 * i + 2] = 0;
        if (fallback) fallback[i] = 1;
    }
    if (iters) *iters = 0;
    return n;
}

static const sc_fem_kernel kernel_scalar = {SC_FEM_KERNEL_SCALAR, 1, scalar_elastic, scalar_rayleigh, scalar_polar_batch};

/* ---- kernel selection ---- */

static const char *const kernel_names[SC_FEM_KERNEL_MAX + 1] = {"unknown", "scalar-f64", "avx2-f64x4", "avx512-f64x8", "avx2-f32x8", "avx512-f32x16"};
static const char *const kernel_env_names[SC_FEM_KERNEL_MAX + 1] = {"", "scalar", "avx2", "avx512", "avx2-f32", "avx512-f32"};

static const sc_fem_kernel *kernel_table(int id)
{
    switch (id) {
        case SC_FEM_KERNEL_SCALAR: return &kernel_scalar;
        case SC_FEM_KERNEL_AVX2: return &sc_fem_kernel_avx2;
        case SC_FEM_KERNEL_AVX512: return &sc_fem_kernel_avx512;
        case SC_FEM_KERNEL_AVX2_F32: return &sc_fem_kernel_avx2_f32;
        case SC_FEM_KERNEL_AVX512_F32: return &sc_fem_kernel_avx512_f32;
        default: return NULL;
    }
}

const char *sc_fem_kernel_name(int id) { return id >= 1 && id <= SC_FEM_KERNEL_MAX ? kernel_names[id] : kernel_names[0]; }

int sc_fem_kernel_available(int id)
{
    switch (id) {
        case SC_FEM_KERNEL_SCALAR: return 1;
        case SC_FEM_KERNEL_AVX2: /* the release build's baseline (x86-64-v3), but not every build's */
        case SC_FEM_KERNEL_AVX2_F32: __builtin_cpu_init(); return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case SC_FEM_KERNEL_AVX512:
        case SC_FEM_KERNEL_AVX512_F32:
            /* everything -march=x86-64-v4 may use; libgcc also checks that the OS saves the zmm state */
            __builtin_cpu_init();
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd");
        default: return 0;
    }
}

static char *g_kernel_override; /* sc_fem_kernel_override's name; NULL: none */

void sc_fem_kernel_override(const char *name)
{
    free(g_kernel_override);
    g_kernel_override = name && *name ? strdup(name) : NULL;
}

static int override_kernel(const char **env)
{
    *env = g_kernel_override;
    if (!*env || !**env) return -1;
    for (int id = 1; id <= SC_FEM_KERNEL_MAX; id++)
        if (!strcmp(*env, kernel_env_names[id]) || !strcmp(*env, kernel_names[id])) return sc_fem_kernel_available(id) ? id : 0;
    return 0;
}

/* the override when set, else the wider of the two kernels this CPU runs, else scalar */
static int widest_kernel(int avx512, int avx2)
{
    const char *env;
    int id = override_kernel(&env);
    if (id >= 0) return id;
    return sc_fem_kernel_available(avx512) ? avx512 : sc_fem_kernel_available(avx2) ? avx2 : SC_FEM_KERNEL_SCALAR;
}

int sc_fem_kernel_id(void) { return widest_kernel(SC_FEM_KERNEL_AVX512, SC_FEM_KERNEL_AVX2); }

int sc_fem_kernel_id_single(void) { return widest_kernel(SC_FEM_KERNEL_AVX512_F32, SC_FEM_KERNEL_AVX2_F32); }

int sc_fem_kernel_is_f32(int id) { return id == SC_FEM_KERNEL_AVX2_F32 || id == SC_FEM_KERNEL_AVX512_F32; }

int sc_fem_set_kernel(sc_fem *fem, int id, sc_err *err)
{
    if (!kernel_table(id)) return sc_fail(err, SC_EINPUT, "FEM kernel %d is unknown", id);
    if (!sc_fem_kernel_available(id)) return sc_fail(err, SC_EINPUT, "FEM kernel %s does not run on this CPU", sc_fem_kernel_name(id));
    fem->kernel = id;
    return SC_OK;
}

/* the default kernel's table, for the functions without an sc_fem */
static const sc_fem_kernel *default_table(void)
{
    const sc_fem_kernel *k = kernel_table(sc_fem_kernel_id());
    return k ? k : &kernel_scalar;
}

int sc_fem_simd_width(void) { return default_table()->lanes; }

int sc_fem_polar_batch(int n, const double *f, double *q, double *h, int *fallback, long *iters)
{
    return default_table()->polar_batch(n, f, q, h, fallback, iters);
}

/* ---- the passes ---- */

void sc_fem_elastic_forces(const sc_fem *fem, const double *x, const double *pose_rest, double *warm, double *force, sc_fem_stats *stats)
{
    kernel_table(fem->kernel)->elastic(fem, x, pose_rest, warm, force, stats);
}

void sc_fem_rayleigh_damping(const sc_fem *fem, const double *mass, const double *v, const double *warm, double alpha, double beta, double *force)
{
    if (alpha != 0)
        for (int i = 0; i < fem->nnodes; i++)
            for (int k = 0; k < 3; k++) force[3 * i + k] -= alpha * mass[i] * v[3 * i + k];
    if (beta != 0) kernel_table(fem->kernel)->rayleigh(fem, v, warm, beta, force);
}

static inline void pose_damping(int nnodes, const double *restrict mass, const double *restrict x, const double *restrict v,
                                const double *restrict xbar, const double *restrict xbar_dot, double c, double *restrict force,
                                double *restrict reaction)
{
    for (int i = 0; i < nnodes; i++) {
        const int o = 3 * i;
        double f[3];
        sc_fem_pose_damping_node(mass[i], x + o, v + o, xbar + o, xbar_dot + o, c, f);
        force[o] += f[0];
        force[o + 1] += f[1];
        force[o + 2] += f[2];
        if (reaction) {
            reaction[o] = -f[0];
            reaction[o + 1] = -f[1];
            reaction[o + 2] = -f[2];
        }
    }
}

void sc_fem_pose_damping(int nnodes, const double *mass, const double *x, const double *v, const double *xbar, const double *xbar_dot, double c,
                         double *force, double *reaction)
{
    if (reaction) pose_damping(nnodes, mass, x, v, xbar, xbar_dot, c, force, reaction); /* two loops without a branch */
    else pose_damping(nnodes, mass, x, v, xbar, xbar_dot, c, force, NULL);
}

size_t sc_fem_warm_size(const sc_fem *fem) { return SC_FEM_WARM_PER_TET * (size_t)fem->stride; }

void sc_fem_warm_reset(const sc_fem *fem, double *warm)
{
    memset(warm, 0, sc_fem_warm_size(fem) * sizeof *warm);
    const float one = 1;
    for (int t = 0; t < fem->stride; t++) {
        const size_t r = sc_fem_index(t, 0, SC_FEM_WARM_PER_TET), rs = sc_fem_index(t, WARM_RS, SC_FEM_WARM_PER_TET);
        if (sc_fem_kernel_is_f32(fem->kernel)) { /* the floats of the buffer, at the same indices */
            memcpy((float *)warm + r, &one, sizeof one);
            memcpy((float *)warm + rs, &one, sizeof one);
        } else {
            warm[r] = warm[rs] = 1;
        }
    }
}

sc_quat sc_fem_warm_get(const sc_fem *fem, const double *warm, int t, int which)
{
    if (fem->slot[t] < 0) return sc_q_identity(); /* a rigid tet: not stored */
    const size_t o = sc_fem_index(fem->slot[t], which ? WARM_RS : 0, SC_FEM_WARM_PER_TET);
    double c[4];
    for (int k = 0; k < 4; k++) {
        if (sc_fem_kernel_is_f32(fem->kernel)) {
            float f;
            memcpy(&f, (const float *)warm + o + k * SC_FEM_PAD, sizeof f);
            c[k] = f;
        } else {
            c[k] = warm[o + k * SC_FEM_PAD];
        }
    }
    sc_quat q = {c[0], c[1], c[2], c[3]};
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
    free(fem->slot);
    free(fem->tet_id);
    free(fem->bm32);
    free(fem->vol32);
    free(fem->tet_id32);
    free(fem->pad4);
    free(fem->order);
    free(fem->node_model);
    memset(fem, 0, sizeof *fem);
}

/* Spreads the low 10 bits of v to every third bit (a Morton code). */
static uint32_t spread3(uint32_t v)
{
    v &= 0x3ff;
    v = (v | v << 16) & 0x30000ff;
    v = (v | v << 8) & 0x300f00f;
    v = (v | v << 4) & 0x30c30c3;
    v = (v | v << 2) & 0x9249249;
    return v;
}
typedef struct {
    uint32_t key;
    int index;
} keyed;
static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->key != y->key ? (x->key < y->key ? -1 : 1) : (x->index > y->index) - (x->index < y->index);
}

/* The Morton code of point p in the box [lo, hi]. */
static uint32_t morton(const double *p, const double *lo, const double *hi)
{
    uint32_t key = 0;
    for (int k = 0; k < 3; k++) {
        double u = hi[k] > lo[k] ? (p[k] - lo[k]) / (hi[k] - lo[k]) : 0;
        key |= spread3((uint32_t)fmin(1023, fmax(0, u * 1024))) << k;
    }
    return key;
}

/* Numbers the stored tets (slot >= 0, renumbered in place) and the nodes (order[model node] =
 * FEM node) along a Morton curve of the rest shape: consecutive slots share nodes, and their
 * nodes lie close together in the padded node arrays, so the gathers and scatters of a large
 * mesh hit the caches (measured: 15-25 % off the elastic pass at 20K tets, nothing at 5K).
 * Returns 0 when out of memory (model order is kept then: only slower). */
static int locality_order(const sc_model *m, int *slot, int *order)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], m->rest_pos[3 * i + k]);
            hi[k] = fmax(hi[k], m->rest_pos[3 * i + k]);
        }
    keyed *keys = malloc((size_t)(m->ntets > m->nnodes ? m->ntets : m->nnodes) * sizeof *keys);
    if (!keys) return 0;
    int n = 0;
    for (int t = 0; t < m->ntets; t++) {
        if (slot[t] < 0) continue;
        double c[3] = {0, 0, 0};
        for (int a = 0; a < 4; a++)
            for (int k = 0; k < 3; k++) c[k] += 0.25 * m->rest_pos[3 * m->tets[4 * t + a] + k];
        keys[n].key = morton(c, lo, hi);
        keys[n++].index = t;
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_keyed);
    for (int i = 0; i < n; i++) slot[keys[i].index] = i;
    for (int i = 0; i < m->nnodes; i++) {
        keys[i].key = morton(m->rest_pos + 3 * i, lo, hi);
        keys[i].index = i;
    }
    qsort(keys, (size_t)m->nnodes, sizeof *keys, cmp_keyed);
    for (int i = 0; i < m->nnodes; i++) order[keys[i].index] = i;
    free(keys);
    return 1;
}

/* Tets whose four nodes are fixed to one bone move rigidly with it, and whatever their
 * forces, they sum to zero force and zero torque on that bone (sum f = 0 by construction,
 * sum x x f = 0 because P F^T is symmetric, [L13] 4.2.2): they are not stored. */
static int rigid_tet(const sc_model *m, const int *tn, int any_bones)
{
    if (!m->node_bone) return 0;
    const int *nb = m->node_bone, b = nb[tn[0]];
    if (any_bones) return b >= 0 && nb[tn[1]] >= 0 && nb[tn[2]] >= 0 && nb[tn[3]] >= 0;
    return b >= 0 && nb[tn[1]] == b && nb[tn[2]] == b && nb[tn[3]] == b;
}

/* Checks tet t of the model and derives its rest volume and Bm^-1 ([L13] eq. 11). */
static int rest_shape(const sc_model *m, int t, double *vol, sc_mat3 *inv, sc_err *err)
{
    const int *tn = m->tets + 4 * t;
    for (int k = 0; k < 4; k++) {
        if (tn[k] < 0 || tn[k] >= m->nnodes) return sc_fail(err, SC_EINPUT, "/tetmesh/tets[%d]: node %d out of range [0, %d)", t, tn[k], m->nnodes);
        for (int j = 0; j < k; j++)
            if (tn[j] == tn[k]) return sc_fail(err, SC_EINPUT, "/tetmesh/tets[%d]: node %d repeated", t, tn[k]);
    }
    sc_mat3 dm;
    sc_vec3 x0 = sc_v3_load(m->rest_pos + 3 * tn[0]);
    for (int j = 0; j < 3; j++) {
        sc_vec3 e = sc_v3_sub(sc_v3_load(m->rest_pos + 3 * tn[j + 1]), x0);
        dm.m[0][j] = e.x;
        dm.m[1][j] = e.y;
        dm.m[2][j] = e.z;
    }
    *vol = m->tet_volume ? m->tet_volume[t] : sc_m3_det(dm) / 6;
    int ok = 1;
    if (m->bm_inv) memcpy(inv->m, m->bm_inv + 9 * t, sizeof inv->m);
    else ok = sc_m3_inverse(dm, inv);
    for (int k = 0; k < 9; k++) ok &= isfinite(inv->m[k / 3][k % 3]);
    if (!ok || !(*vol > 0) || !isfinite(*vol))
        return sc_fail(err, SC_EINPUT, "/tetmesh: tet %d (nodes %d %d %d %d) is inverted or degenerate in the rest pose (volume %g m^3)", t, tn[0],
                       tn[1], tn[2], tn[3], *vol);
    return SC_OK;
}

static void fill_slot(sc_fem *fem, const sc_model *m, int sl, int t, double vol, const sc_mat3 *inv)
{
    for (int k = 0; k < 4; k++) fem->node[sc_fem_index(sl, k, 4)] = 4 * (unsigned)fem->order[m->tets[4 * t + k]];
    for (int k = 0; k < 9; k++) fem->bm[sc_fem_index(sl, k, 9)] = inv->m[k / 3][k % 3];
    fem->vol[sl] = vol;
    fem->tet_id[sl] = t;
    for (int k = 0; k < 9; k++) fem->bm32[sc_fem_index(sl, k, 9)] = (float)inv->m[k / 3][k % 3];
    fem->vol32[sl] = (float)vol;
    fem->tet_id32[sl] = (float)t;
}

static int fem_init(sc_fem *fem, const sc_model *m, int fixed_any_bones, sc_err *err)
{
    memset(fem, 0, sizeof *fem);
    if (!m || m->ntets <= 0 || m->nnodes <= 0 || !m->tets || !m->rest_pos) return sc_fail(err, SC_EINPUT, "/tetmesh: the model has no tetrahedra");
    if (!(m->youngs > 0) || !isfinite(m->youngs)) return sc_fail(err, SC_EINPUT, "/material/youngs: Young's modulus must be > 0 (got %g)", m->youngs);
    if (!(m->poisson > -1 && m->poisson < 0.5))
        return sc_fail(err, SC_EINPUT, "/material/poisson: Poisson's ratio must be in (-1, 0.5) (got %g)", m->poisson);
    const char *env;
    fem->kernel = sc_fem_kernel_id();
    if (!fem->kernel && override_kernel(&env) == 0)
        return sc_fail(err, SC_EINPUT, "SOFTCON_FEM_KERNEL=%s: unknown or not available on this CPU (scalar, avx2, avx2-f32%s)", env,
                       sc_fem_kernel_available(SC_FEM_KERNEL_AVX512) ? ", avx512, avx512-f32" : "");
    fem->nnodes = m->nnodes;
    fem->mu = m->youngs / (2 * (1 + m->poisson));
    fem->lambda = m->youngs * m->poisson / ((1 + m->poisson) * (1 - 2 * m->poisson));
    fem->slot = alloc64((size_t)m->ntets * sizeof(int), err);
    if (!fem->slot) return SC_EIO;
    int nt = 0;
    for (int t = 0; t < m->ntets; t++) {
        double vol;
        sc_mat3 inv;
        int rc = rest_shape(m, t, &vol, &inv, err);
        if (rc) {
            sc_fem_free(fem);
            return rc;
        }
        fem->slot[t] = rigid_tet(m, m->tets + 4 * t, fixed_any_bones) ? -1 : nt++;
    }
    fem->order = alloc64((size_t)m->nnodes * sizeof(int), err);
    fem->node_model = alloc64((size_t)m->nnodes * sizeof(int), err);
    if (!fem->order || !fem->node_model) {
        sc_fem_free(fem);
        return SC_EIO;
    }
    if (!locality_order(m, fem->slot, fem->order))
        for (int i = 0; i < m->nnodes; i++) fem->order[i] = i;
    for (int i = 0; i < m->nnodes; i++) fem->node_model[fem->order[i]] = i;
    fem->nrigid = m->ntets - nt;
    if (nt == 0) { /* keep one (zero-volume) slot so the layout is never empty */
        fem->slot[0] = 0;
        nt = 1;
    }
    const int s = (nt + SC_FEM_PAD - 1) / SC_FEM_PAD * SC_FEM_PAD;
    fem->ntets = nt;
    fem->stride = s;
    fem->node = alloc64(4 * (size_t)s * sizeof(unsigned), err);
    fem->bm = alloc64(9 * (size_t)s * sizeof(double), err);
    fem->vol = alloc64((size_t)s * sizeof(double), err);
    fem->tet_id = alloc64((size_t)s * sizeof(double), err);
    fem->bm32 = alloc64(9 * (size_t)s * sizeof(float), err);
    fem->vol32 = alloc64((size_t)s * sizeof(float), err);
    fem->tet_id32 = alloc64((size_t)s * sizeof(float), err);
    fem->pad4 = alloc64(12 * (size_t)m->nnodes * sizeof(double), err);
    if (!fem->node || !fem->bm || !fem->vol || !fem->tet_id || !fem->bm32 || !fem->vol32 || !fem->tet_id32 || !fem->pad4) {
        sc_fem_free(fem);
        return SC_EIO;
    }
    /* the slots; the padding (and, when every tet is rigid, the one slot) repeats
     * the first stored tet with zero volume */
    int first = -1;
    for (int t = 0; t < m->ntets; t++) {
        if (fem->slot[t] < 0 && !(t == 0 && fem->nrigid == m->ntets)) continue;
        double vol;
        sc_mat3 inv;
        rest_shape(m, t, &vol, &inv, err);
        if (first < 0) first = t;
        fill_slot(fem, m, fem->slot[t], t, fem->nrigid == m->ntets ? 0 : vol, &inv);
        if (t == first)
            for (int sl = nt; sl < s; sl++) fill_slot(fem, m, sl, t, 0, &inv);
    }
    return SC_OK;
}

int sc_fem_init(sc_fem *fem, const sc_model *m, sc_err *err) { return fem_init(fem, m, 0, err); }
int sc_fem_init_free_tets(sc_fem *fem, const sc_model *m, sc_err *err) { return fem_init(fem, m, 1, err); }

/* The modal basis of a reduced body (basis.h). */
#include "reduced/basis.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/linalg.h"
#include "core/log.h"
#include "core/rng.h"
#include "optim/skyline.h"

#define BLOCK 6 /* Krylov block: covers modes of multiplicity up to 6 */

int sc_reduced_max_modes(const sc_model *m) { return m->nnodes >= 4 ? 3 * m->nnodes - 6 : 0; }

void sc_reduced_basis_free(sc_reduced_basis *b)
{
    if (!b) return;
    free(b->eigenvalue);
    free(b->frequency);
    free(b->residual);
    free(b->phi);
    memset(b, 0, sizeof *b);
}

int sc_reduced_basis_alloc(sc_reduced_basis *b, int nnodes, int nmodes, sc_err *err)
{
    memset(b, 0, sizeof *b);
    b->nnodes = nnodes;
    b->nmodes = nmodes;
    b->eigenvalue = calloc((size_t)nmodes, sizeof(double));
    b->frequency = calloc((size_t)nmodes, sizeof(double));
    b->residual = calloc((size_t)nmodes, sizeof(double));
    b->phi = calloc(3 * (size_t)nnodes * (size_t)nmodes, sizeof(double));
    if (b->eigenvalue && b->frequency && b->residual && b->phi) return SC_OK;
    sc_reduced_basis_free(b);
    return sc_fail(err, SC_EIO, "reduced basis: out of memory for %d nodes x %d modes", nnodes, nmodes);
}

static void lame(const sc_model *m, double *mu, double *lambda)
{
    *mu = m->youngs / (2 * (1 + m->poisson));
    *lambda = m->youngs * m->poisson / ((1 + m->poisson) * (1 - 2 * m->poisson));
}

/* Shape function gradients of tet t: rows of Bm^-1, g_0 = -their sum (F = Ds Bm^-1). */
static void gradients(const sc_model *m, int t, double gr[4][3])
{
    const double *bi = m->bm_inv + 9 * t;
    for (int k = 0; k < 3; k++) {
        gr[1][k] = bi[k];
        gr[2][k] = bi[3 + k];
        gr[3][k] = bi[6 + k];
        gr[0][k] = -gr[1][k] - gr[2][k] - gr[3][k];
    }
}

void sc_reduced_stiffness_apply(const sc_model *m, const double *u, double *f)
{
    double mu, lambda;
    lame(m, &mu, &lambda);
    memset(f, 0, 3 * (size_t)m->nnodes * sizeof(double));
    for (int t = 0; t < m->ntets; t++) {
        double gr[4][3], G[3][3] = {{0}};
        gradients(m, t, gr);
        const int *n = m->tets + 4 * t;
        for (int a = 0; a < 4; a++) /* G = grad u */
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) G[i][j] += u[3 * n[a] + i] * gr[a][j];
        const double tr = G[0][0] + G[1][1] + G[2][2], V = m->tet_volume[t];
        double P[3][3]; /* linear stress 2 mu eps + lambda tr(eps) I */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) P[i][j] = mu * (G[i][j] + G[j][i]) + (i == j ? lambda * tr : 0);
        for (int a = 0; a < 4; a++)
            for (int i = 0; i < 3; i++) f[3 * n[a] + i] += V * (P[i][0] * gr[a][0] + P[i][1] * gr[a][1] + P[i][2] * gr[a][2]);
    }
}

void sc_reduced_rest_inertia(const sc_model *m, double *mass, double com[3], double inertia[9])
{
    double M = 0, c[3] = {0, 0, 0};
    for (int i = 0; i < m->nnodes; i++) {
        M += m->node_mass[i];
        for (int k = 0; k < 3; k++) c[k] += m->node_mass[i] * m->rest_pos[3 * i + k];
    }
    for (int k = 0; k < 3; k++) c[k] /= M;
    memset(inertia, 0, 9 * sizeof(double));
    for (int i = 0; i < m->nnodes; i++) {
        const double r[3] = {m->rest_pos[3 * i] - c[0], m->rest_pos[3 * i + 1] - c[1], m->rest_pos[3 * i + 2] - c[2]};
        const double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) inertia[3 * a + b] += m->node_mass[i] * ((a == b) * r2 - r[a] * r[b]);
    }
    *mass = M;
    memcpy(com, c, sizeof c);
}

/* The M-inner product of two nodal vectors (lumped M: 3 entries per node). */
static double mdot(const double *mass3, int n3, const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < n3; i++) s += mass3[i] * a[i] * b[i];
    return s;
}

/* v -= sum_j (v^T M q_j) q_j over the M-orthonormal q_0..q_{count-1} (stored n3 apart). */
static void m_orthogonalise(const double *mass3, int n3, const double *q, int count, double *v)
{
    for (int j = 0; j < count; j++) {
        const double *qj = q + (size_t)j * n3, s = mdot(mass3, n3, v, qj);
        for (int i = 0; i < n3; i++) v[i] -= s * qj[i];
    }
}

typedef struct krylov {
    const sc_model *m;
    int n3, nfree; /* unknowns; dimension of the non-rigid space */
    double *mass3; /* [n3] lumped mass per unknown */
    double *rig;   /* [6 n3] the M-orthonormal rigid modes */
    double *V;     /* [cap n3] the M-orthonormal Krylov vectors */
    int count, cap;
    sc_skyline A; /* K + sigma M, factored */
    double *work; /* [n3] */
    sc_rng rng;
    int solves;
} krylov;

/* The 6 rigid modes (translations, rotations about the rest centre of mass), M-orthonormalised. */
static int rigid_modes(krylov *k, sc_err *err)
{
    const sc_model *m = k->m;
    double M, c[3], J[9];
    sc_reduced_rest_inertia(m, &M, c, J);
    for (int r = 0; r < 6; r++) {
        double *v = k->rig + (size_t)r * k->n3;
        for (int i = 0; i < m->nnodes; i++) {
            const double p[3] = {m->rest_pos[3 * i] - c[0], m->rest_pos[3 * i + 1] - c[1], m->rest_pos[3 * i + 2] - c[2]};
            for (int a = 0; a < 3; a++) v[3 * i + a] = r < 3 ? (a == r) : 0;
            if (r >= 3) { /* e_axis x p */
                const int ax = r - 3;
                const double e[3] = {ax == 0, ax == 1, ax == 2};
                v[3 * i] = e[1] * p[2] - e[2] * p[1];
                v[3 * i + 1] = e[2] * p[0] - e[0] * p[2];
                v[3 * i + 2] = e[0] * p[1] - e[1] * p[0];
            }
        }
        for (int pass = 0; pass < 2; pass++) m_orthogonalise(k->mass3, k->n3, k->rig, r, v);
        const double nrm = sqrt(mdot(k->mass3, k->n3, v, v)), scale = r < 3 ? sqrt(M) : sqrt(0.5 * (J[0] + J[4] + J[8]));
        if (!(nrm > 1e-9 * scale))
            return sc_fail(err, SC_EINPUT, "reduced basis: the mesh has no extent along rigid mode %d (all nodes on a line?)", r);
        for (int i = 0; i < k->n3; i++) v[i] /= nrm;
    }
    return SC_OK;
}

/* A random vector M-orthogonal to the rigid modes and to every Krylov vector, normalised; 0
   when none is left (the Krylov vectors span the non-rigid space). */
static int fresh_vector(krylov *k, double *v)
{
    for (int tries = 0; tries < 4; tries++) {
        for (int i = 0; i < k->n3; i++) v[i] = sc_rng_uniform(&k->rng) - 0.5;
        const double before = sqrt(mdot(k->mass3, k->n3, v, v));
        for (int pass = 0; pass < 2; pass++) {
            m_orthogonalise(k->mass3, k->n3, k->rig, 6, v);
            m_orthogonalise(k->mass3, k->n3, k->V, k->count, v);
        }
        const double nrm = sqrt(mdot(k->mass3, k->n3, v, v));
        if (nrm > 1e-8 * before) {
            for (int i = 0; i < k->n3; i++) v[i] /= nrm;
            return 1;
        }
    }
    return 0;
}

/* Appends v (already in the next slot, V + count n3) after orthogonalising it twice against
   the rigid modes and every Krylov vector; a vector that vanishes (the Krylov space is invariant
   there) is replaced by a fresh random one. 0 when the space is full. */
static int append(krylov *k)
{
    double *v = k->V + (size_t)k->count * k->n3;
    const double before = sqrt(mdot(k->mass3, k->n3, v, v));
    for (int pass = 0; pass < 2; pass++) {
        m_orthogonalise(k->mass3, k->n3, k->rig, 6, v);
        m_orthogonalise(k->mass3, k->n3, k->V, k->count, v);
    }
    const double nrm = sqrt(mdot(k->mass3, k->n3, v, v));
    if (!(nrm > 1e-10 * before)) {
        if (!fresh_vector(k, v)) return 0;
    } else
        for (int i = 0; i < k->n3; i++) v[i] /= nrm;
    k->count++;
    return 1;
}

/* Grows the Krylov space by up to `blocks` blocks: each new vector is (K + sigma M)^-1 M times
   the vector BLOCK places before it. */
static void grow(krylov *k, int blocks)
{
    for (int b = 0; b < blocks; b++)
        for (int j = 0; j < BLOCK; j++) {
            if (k->count >= k->nfree || k->count >= k->cap) return;
            double *v = k->V + (size_t)k->count * k->n3;
            if (k->count < BLOCK) { /* the start block */
                if (!fresh_vector(k, v)) return;
                k->count++;
                continue;
            }
            const double *src = k->V + (size_t)(k->count - BLOCK) * k->n3;
            for (int i = 0; i < k->n3; i++) v[i] = k->mass3[i] * src[i];
            sc_skyline_solve(&k->A, v, k->work);
            k->solves++;
            if (!append(k)) return;
        }
}

static void krylov_free(krylov *k)
{
    free(k->mass3);
    free(k->rig);
    free(k->V);
    free(k->work);
    sc_skyline_free(&k->A);
}

static int krylov_init(krylov *k, const sc_model *m, int nmodes, sc_err *err)
{
    memset(k, 0, sizeof *k);
    k->m = m;
    k->n3 = 3 * m->nnodes;
    k->nfree = sc_reduced_max_modes(m);
    /* room for the whole non-rigid space on a small mesh, else generously more than the usual need */
    const int want = 4 * nmodes + 16 * BLOCK;
    k->cap = k->nfree < want ? k->nfree : want;
    k->mass3 = malloc((size_t)k->n3 * sizeof(double));
    k->rig = malloc(6 * (size_t)k->n3 * sizeof(double));
    k->V = malloc((size_t)k->cap * (size_t)k->n3 * sizeof(double));
    k->work = malloc((size_t)k->n3 * sizeof(double));
    if (!k->mass3 || !k->rig || !k->V || !k->work) return sc_fail(err, SC_EIO, "reduced basis: out of memory (%d Krylov vectors)", k->cap);
    for (int i = 0; i < k->n3; i++) k->mass3[i] = m->node_mass[i / 3];
    sc_rng_init(&k->rng, 0x5eed17, 17, 0);
    int rc = rigid_modes(k, err);
    if (rc) return rc;
    if ((rc = sc_skyline_create(m->nnodes, m->ntets, 4, m->tets, &k->A, err))) return rc;
    double mu, lambda;
    lame(m, &mu, &lambda);
    /* the shift: far below the lowest eigenvalue (the stiffness scale of the mesh's largest
       element over the heaviest node, times 1e-6), so the factor exists and converges fast */
    double kscale = 0, mmax = 0;
    for (int i = 0; i < m->nnodes; i++) mmax = fmax(mmax, m->node_mass[i]);
    for (int t = 0; t < m->ntets; t++) kscale = fmax(kscale, (2 * mu + lambda) * cbrt(m->tet_volume[t]));
    const double sigma = 1e-6 * kscale / mmax;
    for (int t = 0; t < m->ntets; t++) {
        double gr[4][3];
        gradients(m, t, gr);
        const double V = m->tet_volume[t];
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                const double gg = gr[a][0] * gr[b][0] + gr[a][1] * gr[b][1] + gr[a][2] * gr[b][2];
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        const int gi = 3 * m->tets[4 * t + a] + i, gj = 3 * m->tets[4 * t + b] + j;
                        if (gi < gj) continue; /* each symmetric pair once */
                        sc_skyline_add(&k->A, gi, gj, V * (mu * ((i == j) * gg + gr[b][i] * gr[a][j]) + lambda * gr[a][i] * gr[b][j]));
                    }
            }
    }
    for (int i = 0; i < k->n3; i++) sc_skyline_add(&k->A, i, i, sigma * k->mass3[i]);
    if ((rc = sc_skyline_factor(&k->A, err))) return sc_err_prefix(err, "reduced basis: K + sigma M: ");
    return SC_OK;
}

/* Rayleigh-Ritz on the Krylov space: the nmodes lowest pairs of V^T K V into b (phi = V s),
   with their residuals. KV: [count n3] K times each Krylov vector (the first *kv_done are kept from
   the last call), S: [count^2], w: [count]. */
static int rayleigh_ritz(krylov *k, int nmodes, double *KV, int *kv_done, double *S, double *w, sc_reduced_basis *b, sc_err *err)
{
    const int m = k->count, n3 = k->n3;
    for (int j = *kv_done; j < m; j++) sc_reduced_stiffness_apply(k->m, k->V + (size_t)j * n3, KV + (size_t)j * n3);
    *kv_done = m;
    for (int a = 0; a < m; a++)
        for (int c = 0; c <= a; c++) {
            const double s = sc_dot(n3, k->V + (size_t)a * n3, KV + (size_t)c * n3);
            S[(size_t)a * m + c] = S[(size_t)c * m + a] = s;
        }
    for (int a = 0; a < m; a++) /* symmetrise exactly: the two triangles agree to rounding */
        for (int c = 0; c < a; c++) S[(size_t)a * m + c] = S[(size_t)c * m + a] = 0.5 * (S[(size_t)a * m + c] + S[(size_t)c * m + a]);
    int rc = sc_sym_eigen(m, S, w, err);
    if (rc) return sc_err_prefix(err, "reduced basis, Rayleigh-Ritz: ");
    const int K = nmodes;
    for (int q = 0; q < K; q++) {
        double *phi = k->work;
        memset(phi, 0, (size_t)n3 * sizeof(double));
        for (int j = 0; j < m; j++) {
            const double s = S[(size_t)j * m + q];
            const double *vj = k->V + (size_t)j * n3;
            for (int i = 0; i < n3; i++) phi[i] += s * vj[i];
        }
        /* a sign that does not depend on the solver: the largest entry positive */
        int big = 0;
        for (int i = 1; i < n3; i++)
            if (fabs(phi[i]) > fabs(phi[big]) * (1 + 1e-9)) big = i;
        const double sign = phi[big] < 0 ? -1 : 1;
        double kphi2 = 0, res2 = 0;
        for (int i = 0; i < n3; i++) {
            double kp = 0; /* K phi = KV s */
            for (int j = 0; j < m; j++) kp += KV[(size_t)j * n3 + i] * S[(size_t)j * m + q];
            const double r = kp - w[q] * k->mass3[i] * phi[i];
            kphi2 += kp * kp;
            res2 += r * r;
            b->phi[(size_t)i * K + q] = sign * phi[i];
        }
        b->eigenvalue[q] = w[q];
        b->residual[q] = kphi2 > 0 ? sqrt(res2 / kphi2) : INFINITY;
    }
    return SC_OK;
}

int sc_reduced_basis_compute(const sc_model *m, int nmodes, sc_reduced_basis *b, sc_reduced_basis_stats *stats, sc_err *err)
{
    const double t0 = sc_wall_time();
    memset(b, 0, sizeof *b);
    const int most = sc_reduced_max_modes(m);
    if (nmodes < 1 || nmodes > most)
        return sc_fail(err, SC_EINPUT, "reduced basis: %d modes asked, the mesh of %d nodes has %d non-rigid modes (3 x nodes - 6)", nmodes,
                       m->nnodes, most);
    krylov k;
    int rc = krylov_init(&k, m, nmodes, err);
    double *KV = NULL, *S = NULL, *w = NULL;
    if (!rc) rc = sc_reduced_basis_alloc(b, m->nnodes, nmodes, err);
    if (!rc) {
        KV = malloc((size_t)k.cap * (size_t)k.n3 * sizeof(double));
        S = malloc((size_t)k.cap * (size_t)k.cap * sizeof(double));
        w = malloc((size_t)k.cap * sizeof(double));
        if (!KV || !S || !w) rc = sc_fail(err, SC_EIO, "reduced basis: out of memory");
    }
    if (rc) goto done;
    /* the first subspace: twice the modes and two blocks more; then two blocks at a time */
    grow(&k, (2 * nmodes + BLOCK - 1) / BLOCK + 2);
    double worst = INFINITY;
    int kv_done = 0;
    for (;;) {
        if (k.count < nmodes) {
            rc = sc_fail(err, SC_ENUMERIC, "reduced basis: the Krylov space stopped at %d vectors, fewer than the %d modes", k.count, nmodes);
            goto done;
        }
        if ((rc = rayleigh_ritz(&k, nmodes, KV, &kv_done, S, w, b, err))) goto done;
        worst = 0;
        for (int q = 0; q < nmodes; q++) worst = fmax(worst, b->residual[q]);
        const int full = k.count >= k.nfree || k.count >= k.cap;
        if (worst <= SC_REDUCED_RESIDUAL_TOL || full) break;
        grow(&k, 2);
    }
    if (!(worst <= SC_REDUCED_RESIDUAL_TOL)) {
        rc = sc_fail(err, SC_ENUMERIC, "reduced basis: the residual of the %d modes is %.2g after %d Krylov vectors (tolerance %.0e)", nmodes, worst,
                     k.count, SC_REDUCED_RESIDUAL_TOL);
        goto done;
    }
    /* a zero-energy motion besides the rigid ones: the body falls apart, no basis can describe it */
    const double top = w[k.count - 1];
    if (!(b->eigenvalue[0] > 1e-10 * top)) {
        rc = sc_fail(err, SC_EINPUT,
                     "reduced basis: the mesh moves without strain energy beyond its 6 rigid modes (lowest eigenvalue %.3g of %.3g): "
                     "disconnected parts or a loose node",
                     b->eigenvalue[0], top);
        goto done;
    }
    for (int q = 0; q < nmodes; q++) b->frequency[q] = sqrt(b->eigenvalue[q]) / (2 * SC_PI);
    sc_reduced_rest_inertia(m, &b->mass, b->com, b->inertia);
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->subspace = k.count;
        stats->solves = k.solves;
        stats->max_residual = worst;
        stats->factor_entries = (double)sc_skyline_size(&k.A);
        for (int p = 0; p < nmodes; p++) {
            for (int q = 0; q <= p; q++) {
                double s = 0;
                for (int i = 0; i < k.n3; i++) s += k.mass3[i] * b->phi[(size_t)i * nmodes + p] * b->phi[(size_t)i * nmodes + q];
                stats->orthonormality = fmax(stats->orthonormality, fabs(s - (p == q)));
            }
            for (int r = 0; r < 6; r++) {
                double s = 0;
                for (int i = 0; i < k.n3; i++) s += k.mass3[i] * b->phi[(size_t)i * nmodes + p] * k.rig[(size_t)r * k.n3 + i];
                stats->rigid_leak = fmax(stats->rigid_leak, fabs(s));
            }
        }
        stats->seconds = sc_wall_time() - t0;
    }
done:
    if (rc) sc_reduced_basis_free(b);
    free(KV);
    free(S);
    free(w);
    krylov_free(&k);
    return rc;
}

/* Bounded biharmonic weights, exact per-bone QP solves on CHOLMOD (see bbw.h). */
#include <cholmod.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/linalg.h"
#include "core/log.h"
#include "core/mathx.h"
#include "skin/bbw.h"

enum { ST_FREE = 0, ST_LO = 1, ST_HI = 2 };

sc_bbw_opts sc_bbw_default_opts(void)
{
    sc_bbw_opts o = {1e-8, 100, SC_BBW_AUTO, 0};
    return o;
}

/* CHOLMOD 3.0's supernodal factorization opens OpenMP parallel regions with a compile-time
 * num_threads(4) (it ignores OMP_NUM_THREADS) around tiny loops (clearing a map, zeroing each
 * supernode), and the dense blocks handed to BLAS are small. For the 1K-10K-node systems solved
 * here hundreds of times, fork/join costs more than the arithmetic: measured 0.45 s single-threaded
 * against 1.1-1.9 s threaded for the 1.2K-node benchmark on a 2-core machine (11 s against 17 s at
 * 5.6K nodes). So the solve runs on one core (sc_threads_serialize). */

/* ------------------------------------------------------------------------------------------ */
/* input checks                                                                                */

static int uf_find(int *par, int a)
{
    while (par[a] != a) {
        par[a] = par[par[a]];
        a = par[a];
    }
    return a;
}

static int cmp_int_desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

static int check_connected(int nnodes, int ntets, const int *tets, sc_err *err)
{
    int *par = sc_alloc(err, (size_t)nnodes, sizeof *par);
    int *size = sc_alloc(err, (size_t)nnodes, sizeof *size);
    int *used = sc_alloc(err, (size_t)nnodes, sizeof *used);
    if (!par || !size || !used) {
        free(par), free(size), free(used);
        return SC_EIO;
    }
    for (int i = 0; i < nnodes; i++) par[i] = i;
    for (int t = 0; t < ntets; t++)
        for (int a = 0; a < 4; a++) {
            used[tets[4 * t + a]] = 1;
            int r0 = uf_find(par, tets[4 * t]), r1 = uf_find(par, tets[4 * t + a]);
            if (r0 != r1) par[r1] = r0;
        }
    int ncomp = 0, nisolated = 0;
    for (int i = 0; i < nnodes; i++) {
        size[uf_find(par, i)]++;
        nisolated += !used[i];
    }
    for (int i = 0; i < nnodes; i++)
        if (size[i] > 0) size[ncomp++] = size[i]; /* compact: ncomp <= i, so no clobbering */
    int rc = SC_OK;
    if (ncomp > 1) {
        qsort(size, (size_t)ncomp, sizeof *size, cmp_int_desc);
        char list[512] = "";
        size_t len = 0;
        for (int c = 0; c < ncomp && c < 12 && len < sizeof list - 32; c++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", c ? ", " : "", size[c]);
        if (ncomp > 12) snprintf(list + len, sizeof list - len, ", ...");
        rc = sc_fail(err, SC_EINPUT,
                     "tet mesh is disconnected: %d connected components with %s nodes "
                     "(%d nodes belong to no tet); bounded biharmonic weights need one connected mesh",
                     ncomp, list, nisolated);
    }
    free(par), free(size), free(used);
    return rc;
}

static int check_input(int nnodes, const double *x, int ntets, const int *tets, int nbones, const int *handle_bone, sc_err *err)
{
    if (nnodes <= 0 || ntets <= 0 || nbones <= 0)
        return sc_fail(err, SC_EINPUT, "bbw: empty problem (%d nodes, %d tets, %d bones)", nnodes, ntets, nbones);
    for (int t = 0; t < ntets; t++) {
        const int *v = tets + 4 * t;
        for (int a = 0; a < 4; a++) {
            if (v[a] < 0 || v[a] >= nnodes) return sc_fail(err, SC_EINPUT, "bbw: tet %d references node %d (mesh has %d nodes)", t, v[a], nnodes);
            for (int b = 0; b < a; b++)
                if (v[a] == v[b]) return sc_fail(err, SC_EINPUT, "bbw: tet %d repeats node %d", t, v[a]);
        }
    }
    int nhandles = 0;
    for (int i = 0; i < nnodes; i++) {
        if (handle_bone[i] < -1 || handle_bone[i] >= nbones)
            return sc_fail(err, SC_EINPUT, "bbw: node %d has handle bone %d (there are %d bones)", i, handle_bone[i], nbones);
        nhandles += handle_bone[i] >= 0;
    }
    if (nhandles == 0) return sc_fail(err, SC_EINPUT, "bbw: no handle nodes at all: every bone needs fixed nodes as handles");
    int *count = sc_alloc(err, (size_t)nbones, sizeof *count);
    if (!count) return SC_EIO;
    for (int i = 0; i < nnodes; i++)
        if (handle_bone[i] >= 0) count[handle_bone[i]]++;
    for (int j = 0; j < nbones; j++)
        if (count[j] == 0) {
            free(count);
            return sc_fail(err, SC_EINPUT, "bbw: bone %d has no handle node (no fixed node is attached to it)", j);
        }
    free(count);
    for (int t = 0; t < ntets; t++) {
        const int *v = tets + 4 * t;
        sc_vec3 p[4];
        for (int a = 0; a < 4; a++) p[a] = sc_v3_load(x + 3 * v[a]);
        double lmax = 0;
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < a; b++) lmax = fmax(lmax, sc_v3_dist(p[a], p[b]));
        sc_vec3 e1 = sc_v3_sub(p[1], p[0]), e2 = sc_v3_sub(p[2], p[0]), e3 = sc_v3_sub(p[3], p[0]);
        double det = sc_v3_dot(e1, sc_v3_cross(e2, e3));
        if (!(fabs(det) > 1e-10 * lmax * lmax * lmax))
            return sc_fail(err, SC_EINPUT,
                           "bbw: tet %d (nodes %d %d %d %d) is degenerate: volume %.3g m^3 with "
                           "longest edge %.3g m",
                           t, v[0], v[1], v[2], v[3], det / 6, lmax);
    }
    return check_connected(nnodes, ntets, tets, err);
}

/* ------------------------------------------------------------------------------------------ */
/* assembly: K (CSR over all nodes), M lumped, Q = K M^-1 K                                    */

typedef struct csr {
    int n;
    int *p, *j;
    double *x;
} csr;

static void csr_free(csr *a)
{
    free(a->p), free(a->j), free(a->x);
    memset(a, 0, sizeof *a);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int row_find(const csr *a, int r, int c)
{
    int lo = a->p[r], hi = a->p[r + 1] - 1;
    while (lo <= hi) {
        int m = (lo + hi) >> 1;
        if (a->j[m] < c) lo = m + 1;
        else if (a->j[m] > c) hi = m - 1;
        else return m;
    }
    return -1;
}

static int assemble_k(int n, const double *x, int ntets, const int *tets, csr *k, double *mass, sc_err *err)
{
    int rc = SC_EIO;
    int *tp = sc_alloc(err, (size_t)n + 1, sizeof *tp), *tl = sc_alloc(err, 4 * (size_t)ntets, sizeof *tl);
    int *mark = sc_alloc(err, (size_t)n, sizeof *mark);
    k->n = n;
    k->p = sc_alloc(err, (size_t)n + 1, sizeof *k->p);
    if (!tp || !tl || !mark || !k->p) goto done;
    /* node -> tet incidence */
    for (int i = 0; i < 4 * ntets; i++) tp[tets[i] + 1]++;
    for (int i = 0; i < n; i++) tp[i + 1] += tp[i];
    for (int t = 0; t < ntets; t++)
        for (int a = 0; a < 4; a++) tl[tp[tets[4 * t + a]]++] = t;
    for (int i = n; i > 0; i--) tp[i] = tp[i - 1];
    tp[0] = 0;
    /* pattern: the nodes sharing a tet */
    for (int i = 0; i < n; i++) mark[i] = -1;
    size_t cap = 16 * (size_t)n + 16, nnz = 0;
    k->j = malloc(cap * sizeof *k->j);
    if (!k->j) {
        sc_fail(err, SC_EIO, "bbw: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        size_t start = nnz;
        for (int q = tp[i]; q < tp[i + 1]; q++)
            for (int a = 0; a < 4; a++) {
                int c = tets[4 * tl[q] + a];
                if (mark[c] == i) continue;
                mark[c] = i;
                if (nnz == cap) {
                    cap *= 2;
                    int *nj = realloc(k->j, cap * sizeof *nj);
                    if (!nj) {
                        sc_fail(err, SC_EIO, "bbw: out of memory");
                        goto done;
                    }
                    k->j = nj;
                }
                k->j[nnz++] = c;
            }
        qsort(k->j + start, nnz - start, sizeof *k->j, cmp_int);
        k->p[i + 1] = (int)nnz;
    }
    k->x = sc_alloc(err, nnz, sizeof *k->x);
    if (!k->x) goto done;
    for (int t = 0; t < ntets; t++) {
        const int *v = tets + 4 * t;
        sc_vec3 p0 = sc_v3_load(x + 3 * v[0]);
        sc_mat3 d = sc_m3_from_cols(sc_v3_sub(sc_v3_load(x + 3 * v[1]), p0), sc_v3_sub(sc_v3_load(x + 3 * v[2]), p0),
                                    sc_v3_sub(sc_v3_load(x + 3 * v[3]), p0)),
                dinv;
        double vol = fabs(sc_m3_det(d)) / 6;
        sc_m3_inverse(d, &dinv); /* non-degenerate: checked */
        /* barycentric phi_{1..3}(y) = D^-1 (y - x0): gradients are the rows of D^-1 */
        sc_vec3 g[4];
        for (int a = 1; a < 4; a++) g[a] = sc_v3(dinv.m[a - 1][0], dinv.m[a - 1][1], dinv.m[a - 1][2]);
        g[0] = sc_v3_scale(sc_v3_add(g[1], sc_v3_add(g[2], g[3])), -1);
        for (int a = 0; a < 4; a++) {
            mass[v[a]] += vol / 4;
            for (int b = 0; b < 4; b++) k->x[row_find(k, v[a], v[b])] += vol * sc_v3_dot(g[a], g[b]);
        }
    }
    rc = SC_OK;
done:
    free(tp), free(tl), free(mark);
    return rc;
}

/* Q = K M^-1 K, rows sorted. */
static int assemble_q(const csr *k, const double *mass, csr *q, sc_err *err)
{
    int n = k->n, rc = SC_EIO;
    int *mark = sc_alloc(err, (size_t)n, sizeof *mark);
    double *acc = sc_alloc(err, (size_t)n, sizeof *acc);
    size_t cap = 64 * (size_t)n + 64, nnz = 0;
    q->n = n;
    q->p = sc_alloc(err, (size_t)n + 1, sizeof *q->p);
    q->j = malloc(cap * sizeof *q->j);
    q->x = malloc(cap * sizeof *q->x);
    if (!mark || !acc || !q->p || !q->j || !q->x) {
        sc_fail(err, SC_EIO, "bbw: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) mark[i] = -1;
    for (int a = 0; a < n; a++) {
        size_t start = nnz;
        for (int s = k->p[a]; s < k->p[a + 1]; s++) {
            int c = k->j[s];
            double f = k->x[s] / mass[c];
            for (int t = k->p[c]; t < k->p[c + 1]; t++) {
                int b = k->j[t];
                if (mark[b] != a) {
                    mark[b] = a;
                    acc[b] = 0;
                    if (nnz == cap) {
                        cap *= 2;
                        int *nj = realloc(q->j, cap * sizeof *nj);
                        if (nj) q->j = nj;
                        double *nx = realloc(q->x, cap * sizeof *nx);
                        if (nx) q->x = nx;
                        if (!nj || !nx) {
                            sc_fail(err, SC_EIO, "bbw: out of memory");
                            goto done;
                        }
                    }
                    q->j[nnz++] = b;
                }
                acc[b] += f * k->x[t];
            }
        }
        qsort(q->j + start, nnz - start, sizeof *q->j, cmp_int);
        for (size_t s = start; s < nnz; s++) q->x[s] = acc[q->j[s]];
        q->p[a + 1] = (int)nnz;
    }
    rc = SC_OK;
done:
    free(mark), free(acc);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the free-node QP                                                                            */

typedef struct bbw_ctx {
    int nf, nb;
    csr qf;        /* Q_FF, both triangles, free numbering */
    double *diag;  /* Q_ii */
    double *c;     /* [nf*nb] (Q_FH w_H) for each bone's handle values */
    double qscale; /* ||Q_F,:||_inf */
    double tol;
    cholmod_common cm;
    cholmod_sparse *a; /* Q_FF upper triangle, values rewritten per active set */
    double *abase;
    cholmod_factor *l; /* supernodal/auto factor, one symbolic analysis */
    cholmod_dense *b, *xs, *ys, *es;
    /* reduced system on the inactive nodes (primal-dual iterations) */
    cholmod_sparse *ar; /* nzmax as a: the pattern of any principal submatrix fits */
    cholmod_dense *br;
    int *red, *rperm;
    signed char *st, *st2;
    double *x, *g, *xfix;
    uint64_t *hist;
} bbw_ctx;

/* A(st): Q_FF with the rows/columns of bound nodes replaced by identity rows (same pattern). */
static void set_matrix(bbw_ctx *cx, const signed char *st)
{
    const int *ap = cx->a->p, *ai = cx->a->i;
    double *ax = cx->a->x;
    for (int j = 0; j < cx->nf; j++)
        for (int p = ap[j]; p < ap[j + 1]; p++) {
            int i = ai[p];
            ax[p] = (st[i] == ST_FREE && st[j] == ST_FREE) ? cx->abase[p] : (i == j ? 1.0 : 0.0);
        }
}

/* Right-hand side of A(st) y = b: b = xfix on bound nodes, -c - Q_F,bound xfix on free ones. */
static void build_rhs(bbw_ctx *cx, int bone, const signed char *st, const double *xfix, double *b)
{
    const csr *q = &cx->qf;
    for (int i = 0; i < cx->nf; i++) {
        if (st[i] != ST_FREE) {
            b[i] = xfix[i];
            continue;
        }
        double s = -cx->c[(size_t)i * cx->nb + bone];
        for (int p = q->p[i]; p < q->p[i + 1]; p++)
            if (st[q->j[p]] != ST_FREE) s -= q->x[p] * xfix[q->j[p]];
        b[i] = s;
    }
}

static void gradient(const bbw_ctx *cx, int bone, const double *x, double *g)
{
    const csr *q = &cx->qf;
    for (int i = 0; i < cx->nf; i++) {
        double s = cx->c[(size_t)i * cx->nb + bone];
        for (int p = q->p[i]; p < q->p[i + 1]; p++) s += q->x[p] * x[q->j[p]];
        g[i] = s;
    }
}

/* Relative KKT residual as defined in bbw.h. */
static double kkt_residual(const bbw_ctx *cx, const double *x, const double *g)
{
    double dual = 0, primal = 0, xmax = 1;
    for (int i = 0; i < cx->nf; i++) {
        double v;
        if (x[i] <= 0) v = fmax(0, -g[i]);
        else if (x[i] >= 1) v = fmax(0, g[i]);
        else v = fabs(g[i]);
        dual = fmax(dual, v);
        primal = fmax(primal, fmax(-x[i], x[i] - 1));
        xmax = fmax(xmax, fabs(x[i]));
    }
    return fmax(dual / (cx->qscale * xmax), primal);
}

static int cholmod_failed(bbw_ctx *cx, const char *what, sc_err *err)
{
    if (cx->cm.status == CHOLMOD_OUT_OF_MEMORY) return sc_fail(err, SC_EIO, "bbw: out of memory in CHOLMOD %s", what);
    return sc_fail(err, SC_ENUMERIC, "bbw: CHOLMOD %s failed (status %d)", what, cx->cm.status);
}

static int factor_ok(bbw_ctx *cx, cholmod_factor *l, const char *what, sc_err *err)
{
    if (cx->cm.status < CHOLMOD_OK) return cholmod_failed(cx, what, err);
    if (l->minor < l->n)
        return sc_fail(err, SC_ENUMERIC, "bbw: %s: free block of Q = K M^-1 K not positive definite at column %d of %d", what, (int)l->minor,
                       (int)l->n);
    return SC_OK;
}

static uint64_t hash_state(const signed char *st, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) h = (h ^ (uint64_t)(unsigned char)st[i]) * 1099511628211ull;
    return h;
}

/* Solve A(st) x = b by factorizing only the principal submatrix of the free (inactive) nodes,
 * x = b on bound nodes. The bound nodes are typically a fifth to a half of the mesh, and the
 * fill of the 2-ring pattern of Q shrinks with them, which beats refactorizing the full-size
 * A(st) in the one fixed symbolic pattern. The fill-reducing ordering is computed once on the
 * full free pattern (cx->l) and restricted; only the cheap symbolic steps are redone. */
static int reduced_solve(bbw_ctx *cx, const signed char *st, const double *b, double *x, sc_err *err)
{
    int nf = cx->nf, m = 0, *red = cx->red;
    for (int i = 0; i < nf; i++) red[i] = st[i] == ST_FREE ? m++ : -1;
    for (int i = 0; i < nf; i++)
        if (red[i] < 0) x[i] = b[i];
    if (m == 0) return SC_OK;
    cholmod_sparse *r = cx->ar;
    const int *ap = cx->a->p, *ai = cx->a->i;
    int *rp = r->p, *ri = r->i, nz = 0;
    double *rx = r->x, *bx = cx->br->x;
    r->nrow = r->ncol = (size_t)m;
    for (int j = 0; j < nf; j++) {
        if (red[j] < 0) continue;
        for (int p = ap[j]; p < ap[j + 1]; p++)
            if (red[ai[p]] >= 0) ri[nz] = red[ai[p]], rx[nz++] = cx->abase[p];
        rp[red[j] + 1] = nz;
        bx[red[j]] = b[j];
    }
    const int *pf = cx->l->Perm;
    for (int q = 0, k = 0; q < nf; q++)
        if (red[pf[q]] >= 0) cx->rperm[k++] = red[pf[q]];
    cx->br->nrow = cx->br->d = (size_t)m;
    int nm = cx->cm.nmethods, ord = cx->cm.method[0].ordering;
    cx->cm.nmethods = 1;
    cx->cm.method[0].ordering = CHOLMOD_GIVEN;
    cholmod_factor *l = cholmod_analyze_p(r, cx->rperm, NULL, 0, &cx->cm);
    cx->cm.nmethods = nm;
    cx->cm.method[0].ordering = ord;
    if (!l) return cholmod_failed(cx, "analyze", err);
    cholmod_factorize(r, l, &cx->cm);
    int rc = factor_ok(cx, l, "factorize", err);
    if (!rc && !cholmod_solve2(CHOLMOD_A, l, cx->br, NULL, &cx->xs, NULL, &cx->ys, &cx->es, &cx->cm)) rc = cholmod_failed(cx, "solve", err);
    cholmod_free_factor(&l, &cx->cm);
    if (rc) return rc;
    const double *xv = cx->xs->x;
    for (int i = 0; i < nf; i++)
        if (red[i] >= 0) x[i] = xv[red[i]];
    return SC_OK;
}

/* Primal-dual active set (Hintermueller-Ito-Kunisch): predict the bound set from
 * x - g/diag(Q), solve the reduced system, repeat until the prediction is stationary.
 * x holds the warm start (unconstrained solution) on entry. Returns 1 if converged. */
static int solve_pdas(bbw_ctx *cx, int bone, int max_iter, int *iters, sc_err *err, int *rc)
{
    int nf = cx->nf;
    double eps = 1e-3 * cx->tol;
    signed char *st = cx->st, *st2 = cx->st2;
    double *x = cx->x, *g = cx->g, *b = cx->b->x;
    for (int i = 0; i < nf; i++) st[i] = x[i] < eps ? ST_LO : x[i] > 1 - eps ? ST_HI : ST_FREE;
    int nhist = 0;
    *rc = SC_OK;
    for (int it = 1; it <= max_iter; it++) {
        *iters = it;
        for (int i = 0; i < nf; i++) cx->xfix[i] = st[i] == ST_HI ? 1.0 : 0.0;
        build_rhs(cx, bone, st, cx->xfix, b);
        if ((*rc = reduced_solve(cx, st, b, x, err))) return 0;
        gradient(cx, bone, x, g);
        int changed = 0;
        for (int i = 0; i < nf; i++) {
            double lam = st[i] == ST_FREE ? 0 : g[i];
            double t = x[i] - lam / cx->diag[i];
            st2[i] = t < eps ? ST_LO : t > 1 - eps ? ST_HI : ST_FREE;
            changed += st2[i] != st[i];
        }
        if (!changed) return 1;
        memcpy(st, st2, (size_t)nf);
        uint64_t h = hash_state(st, nf);
        for (int k = 0; k < nhist; k++)
            if (cx->hist[k] == h) return 0; /* cycling */
        cx->hist[nhist++] = h;
    }
    return 0;
}

/* Primal (feasible) active set method, Nocedal-Wright alg. 16.3, on a simplicial LDL' factor of
 * A(W) that is modified in place (cholmod_rowdel when a bound becomes active, cholmod_rowadd
 * when one is released). x: any start point (clamped on entry). */
static int solve_primal(bbw_ctx *cx, int bone, int budget, int *iters, sc_err *err)
{
    int nf = cx->nf, rc = SC_OK;
    signed char *st = cx->st;
    double *x = cx->x, *g = cx->g, *b = cx->b->x;
    const csr *q = &cx->qf;
    cholmod_factor *l = NULL;
    cholmod_sparse *r = NULL;
    int *pinv = malloc((size_t)nf * sizeof *pinv);
    int maxrow = 0;
    for (int i = 0; i < nf; i++) maxrow = q->p[i + 1] - q->p[i] > maxrow ? q->p[i + 1] - q->p[i] : maxrow;
    r = cholmod_allocate_sparse((size_t)nf, 1, (size_t)maxrow, 0, 1, 0, CHOLMOD_REAL, &cx->cm);
    if (!pinv || !r) {
        rc = sc_fail(err, SC_EIO, "bbw: out of memory");
        goto done;
    }
    for (int i = 0; i < nf; i++) {
        x[i] = fmin(1, fmax(0, x[i]));
        st[i] = x[i] <= 0 ? ST_LO : x[i] >= 1 ? ST_HI : ST_FREE;
    }
    int mods = 0, stationary = 0;
    double dual_tol = 1e-2 * cx->tol * cx->qscale;
    for (int it = 0; it < budget; it++) {
        *iters = it + 1;
        if (!l || mods >= 200) {
            /* (re)factorize from scratch now and then: bounds the drift of many modifications */
            cholmod_free_factor(&l, &cx->cm);
            int super = cx->cm.supernodal;
            cx->cm.supernodal = CHOLMOD_SIMPLICIAL;
            set_matrix(cx, st);
            l = cholmod_analyze(cx->a, &cx->cm);
            cx->cm.supernodal = super;
            if (!l) {
                rc = cholmod_failed(cx, "analyze", err);
                goto done;
            }
            cholmod_factorize(cx->a, l, &cx->cm);
            if ((rc = factor_ok(cx, l, "factorize", err))) goto done;
            const int *perm = l->Perm;
            for (int k = 0; k < nf; k++) pinv[perm[k]] = k;
            mods = 0;
        }
        if (!stationary) {
            build_rhs(cx, bone, st, x, b);
            if (!cholmod_solve2(CHOLMOD_A, l, cx->b, NULL, &cx->xs, NULL, &cx->ys, &cx->es, &cx->cm)) {
                rc = cholmod_failed(cx, "solve", err);
                goto done;
            }
            const double *y = cx->xs->x;
            double alpha = 1;
            int block = -1, block_st = ST_FREE;
            for (int i = 0; i < nf; i++) {
                if (st[i] != ST_FREE) continue;
                double p = y[i] - x[i];
                if (p < 0 && x[i] + alpha * p < 0) alpha = -x[i] / p, block = i, block_st = ST_LO;
                else if (p > 0 && x[i] + alpha * p > 1) alpha = (1 - x[i]) / p, block = i, block_st = ST_HI;
            }
            for (int i = 0; i < nf; i++)
                if (st[i] == ST_FREE) x[i] += alpha * (y[i] - x[i]);
            if (block < 0) {
                stationary = 1;
                continue;
            }
            st[block] = (signed char)block_st;
            x[block] = st[block] == ST_LO ? 0.0 : 1.0;
            if (!cholmod_rowdel((size_t)pinv[block], NULL, l, &cx->cm)) {
                rc = cholmod_failed(cx, "rowdel", err);
                goto done;
            }
            mods++;
        } else {
            gradient(cx, bone, x, g);
            int worst = -1;
            double wv = dual_tol;
            for (int i = 0; i < nf; i++) {
                double v = st[i] == ST_LO ? -g[i] : st[i] == ST_HI ? g[i] : 0;
                if (v > wv) wv = v, worst = i;
            }
            if (worst < 0) goto done; /* KKT point */
            /* release the bound with the largest multiplier violation */
            st[worst] = ST_FREE;
            int *ri = r->i;
            double *rx = r->x;
            int nz = 0;
            for (int p = q->p[worst]; p < q->p[worst + 1]; p++) {
                int j = q->j[p];
                if (st[j] != ST_FREE) continue;
                ri[nz] = pinv[j];
                rx[nz++] = q->x[p];
            }
            ((int *)r->p)[1] = nz;
            if (!cholmod_rowadd((size_t)pinv[worst], r, l, &cx->cm)) {
                rc = cholmod_failed(cx, "rowadd", err);
                goto done;
            }
            mods++;
            stationary = 0;
        }
    }
    rc = sc_fail(err, SC_ENUMERIC, "bbw: bone %d: primal active set method did not finish in %d steps", bone, budget);
done:
    cholmod_free_factor(&l, &cx->cm);
    cholmod_free_sparse(&r, &cx->cm);
    free(pinv);
    return rc;
}

static void ctx_free(bbw_ctx *cx)
{
    csr_free(&cx->qf);
    free(cx->c), free(cx->diag), free(cx->abase), free(cx->st), free(cx->st2), free(cx->x), free(cx->g);
    free(cx->xfix), free(cx->hist);
    cholmod_free_sparse(&cx->a, &cx->cm);
    cholmod_free_factor(&cx->l, &cx->cm);
    cholmod_free_dense(&cx->b, &cx->cm);
    cholmod_free_dense(&cx->xs, &cx->cm);
    cholmod_free_dense(&cx->ys, &cx->cm);
    cholmod_free_dense(&cx->es, &cx->cm);
    cholmod_free_sparse(&cx->ar, &cx->cm);
    cholmod_free_dense(&cx->br, &cx->cm);
    free(cx->red), free(cx->rperm);
    cholmod_finish(&cx->cm);
}

/* The free block Q_FF (full, for products), its upper triangle for CHOLMOD, and c = Q_FH w_H. */
static int build_free_block(bbw_ctx *cx, int n, const csr *q, const int *fid, const int *handle_bone, int max_iter, sc_err *err)
{
    int nf = cx->nf, nb = cx->nb;
    size_t nnz = 0, nup = 0;
    for (int i = 0; i < n; i++) {
        if (fid[i] < 0) continue;
        for (int p = q->p[i]; p < q->p[i + 1]; p++)
            if (fid[q->j[p]] >= 0) nnz++, nup += q->j[p] <= i;
    }
    cx->qf.n = nf;
    cx->qf.p = sc_alloc(err, (size_t)nf + 1, sizeof(int));
    cx->qf.j = sc_alloc(err, nnz, sizeof(int));
    cx->qf.x = sc_alloc(err, nnz, sizeof(double));
    cx->c = sc_alloc(err, (size_t)nf * nb, sizeof(double));
    cx->diag = sc_alloc(err, (size_t)nf, sizeof(double));
    cx->abase = sc_alloc(err, nup, sizeof(double));
    cx->st = sc_alloc(err, (size_t)nf, 1);
    cx->st2 = sc_alloc(err, (size_t)nf, 1);
    cx->x = sc_alloc(err, (size_t)nf, sizeof(double));
    cx->g = sc_alloc(err, (size_t)nf, sizeof(double));
    cx->xfix = sc_alloc(err, (size_t)nf, sizeof(double));
    cx->hist = sc_alloc(err, (size_t)max_iter + 1, sizeof(uint64_t));
    cx->a = cholmod_allocate_sparse((size_t)nf, (size_t)nf, nup, 1, 1, 1, CHOLMOD_REAL, &cx->cm);
    cx->b = cholmod_zeros((size_t)nf, 1, CHOLMOD_REAL, &cx->cm);
    cx->br = cholmod_zeros((size_t)nf, 1, CHOLMOD_REAL, &cx->cm);
    cx->ar = cholmod_allocate_sparse((size_t)nf, (size_t)nf, nup, 1, 1, 1, CHOLMOD_REAL, &cx->cm);
    cx->red = sc_alloc(err, (size_t)nf, sizeof(int));
    cx->rperm = sc_alloc(err, (size_t)nf, sizeof(int));
    if (!cx->qf.p || !cx->qf.j || !cx->qf.x || !cx->c || !cx->diag || !cx->abase || !cx->st || !cx->st2 || !cx->x || !cx->g || !cx->xfix ||
        !cx->hist || !cx->a || !cx->b || !cx->br || !cx->ar || !cx->red || !cx->rperm) {
        return sc_fail(err, SC_EIO, "bbw: out of memory (%d free nodes)", nf);
    }
    int *ap = cx->a->p, *ai = cx->a->i;
    double *ax = cx->a->x;
    size_t s = 0, u = 0;
    for (int i = 0; i < n; i++) {
        int fi = fid[i];
        if (fi < 0) continue;
        double rowabs = 0;
        for (int p = q->p[i]; p < q->p[i + 1]; p++) {
            int c = q->j[p], fc = fid[c];
            rowabs += fabs(q->x[p]);
            if (fc < 0) {
                cx->c[(size_t)fi * nb + handle_bone[c]] += q->x[p];
                continue;
            }
            if (fc == fi) cx->diag[fi] = q->x[p];
            cx->qf.j[s] = fc;
            cx->qf.x[s++] = q->x[p];
            if (c <= i) ai[u] = fc, ax[u] = cx->abase[u] = q->x[p], u++;
        }
        cx->qf.p[fi + 1] = (int)s;
        ap[fi + 1] = (int)u;
        cx->qscale = fmax(cx->qscale, rowabs);
    }
    /* c above holds Q_FH summed per bone = Q_FH w_H for w_H = indicator of that bone */
    return SC_OK;
}

/* One symbolic analysis of the full free pattern, one numeric factorization of Q_FF, and the
   unconstrained weights of every bone (*xu_out: nf x nb, a column per bone). */
static int factor_and_solve(bbw_ctx *cx, long *factor_nnz, double **xu_out, sc_err *err)
{
    int nf = cx->nf, nb = cx->nb, rc;
    cx->l = cholmod_analyze(cx->a, &cx->cm);
    if (!cx->l) {
        rc = cholmod_failed(cx, "analyze", err);
        return rc;
    }
    cholmod_factorize(cx->a, cx->l, &cx->cm);
    if ((rc = factor_ok(cx, cx->l, "factorize", err))) return rc;
    *factor_nnz = (long)cx->cm.lnz;
    {
        cholmod_dense *bb = cholmod_zeros((size_t)nf, (size_t)nb, CHOLMOD_REAL, &cx->cm), *xx;
        if (!bb) {
            rc = cholmod_failed(cx, "allocate", err);
            return rc;
        }
        double *bx = bb->x;
        for (int j = 0; j < nb; j++)
            for (int i = 0; i < nf; i++) bx[(size_t)j * nf + i] = -cx->c[(size_t)i * nb + j];
        xx = cholmod_solve(CHOLMOD_A, cx->l, bb, &cx->cm);
        cholmod_free_dense(&bb, &cx->cm);
        if (!xx) {
            rc = cholmod_failed(cx, "solve", err);
            return rc;
        }
        double *xu = malloc((size_t)nf * nb * sizeof *xu);
        if (xu) memcpy(xu, xx->x, (size_t)nf * nb * sizeof *xu);
        cholmod_free_dense(&xx, &cx->cm);
        if (!xu) return sc_fail(err, SC_EIO, "bbw: out of memory");
        *xu_out = xu;
    }
    return SC_OK;
}

/* Bone j's weights: the primal-dual active set method from the unconstrained solution, the
   primal one where that cycles, stalls or is not accurate enough; written into column j of
   weights, with the bone's figures. */
static int solve_bone(bbw_ctx *cx, const sc_bbw_opts *o, int j, int n, const int *fid, const double *xu, double *weights,
                      sc_bbw_bone_stats *bone_stats, sc_bbw_stats *stats, sc_err *err)
{
    int nf = cx->nf, nb = cx->nb, rc = SC_OK;
    double tb = sc_wall_time();
    int iters = 0, piters = 0, converged = 0, fallback = 0;
    memcpy(cx->x, xu + (size_t)j * nf, (size_t)nf * sizeof *cx->x);
    if (o->method != SC_BBW_PRIMAL) {
        converged = solve_pdas(cx, j, o->max_iter, &iters, err, &rc);
        if (rc) return rc;
    }
    double kkt = 1;
    if (converged) {
        gradient(cx, j, cx->x, cx->g);
        kkt = kkt_residual(cx, cx->x, cx->g);
    }
    if (!converged || kkt > o->tol) {
        /* cycling, stalled or not accurate enough: the primal method from the last iterate */
        fallback = 1;
        if (o->method != SC_BBW_PRIMAL && sc_log_level() >= SC_LOG_DEBUG)
            sc_log_debug("bbw: bone %d: primal-dual active set %s after %d iterations, "
                         "falling back to the primal active set method",
                         j, converged ? "inaccurate" : "did not converge", iters);
        if ((rc = solve_primal(cx, j, 4 * nf + o->max_iter, &piters, err))) return rc;
        gradient(cx, j, cx->x, cx->g);
        kkt = kkt_residual(cx, cx->x, cx->g);
    }
    if (kkt > o->tol) {
        rc = sc_fail(err, SC_ENUMERIC,
                     "bbw: bone %d: relative KKT residual %.3g above the target %.3g after %d "
                     "iterations",
                     j, kkt, o->tol, iters + piters);
        return rc;
    }
    int nlo = 0, nhi = 0;
    for (int i = 0; i < n; i++) {
        int fi = fid[i];
        if (fi < 0) continue;
        weights[(size_t)i * nb + j] = cx->x[fi];
        nlo += cx->x[fi] <= 0, nhi += cx->x[fi] >= 1;
    }
    if (stats) stats->max_kkt_residual = fmax(stats->max_kkt_residual, kkt);
    if (bone_stats) {
        bone_stats[j].iterations = iters + piters;
        bone_stats[j].fallback = fallback;
        bone_stats[j].kkt_residual = kkt;
        bone_stats[j].nactive_lo = nlo;
        bone_stats[j].nactive_hi = nhi;
        bone_stats[j].seconds = sc_wall_time() - tb;
    }
    return SC_OK;
}

/* Partition of unity by row normalization (raw: only measured). */
static void normalize_rows(int n, int nb, double *weights, const double *xu, int nf, const int *fid, int raw, sc_bbw_stats *stats)
{
    for (int i = 0; i < n; i++) {
        double *w = weights + (size_t)i * nb, sum = 0;
        for (int j = 0; j < nb; j++) sum += w[j];
        if (stats) stats->max_rowsum_dev_before_norm = fmax(stats->max_rowsum_dev_before_norm, fabs(sum - 1));
        if (raw) continue;
        if (!(sum > 1e-12)) {
            /* every bone bounded to 0 here: fall back to the largest unconstrained weight */
            int best = 0;
            for (int j = 1; j < nb; j++)
                if (xu[(size_t)j * nf + fid[i]] > xu[(size_t)best * nf + fid[i]]) best = j;
            sc_log_warn("bbw: node %d has all weights 0; assigning it to bone %d", i, best);
            for (int j = 0; j < nb; j++) w[j] = j == best ? 1.0 : 0.0;
            if (stats) stats->max_change_by_norm = fmax(stats->max_change_by_norm, 1);
            continue;
        }
        for (int j = 0; j < nb; j++) {
            double v = w[j] / sum;
            if (stats) stats->max_change_by_norm = fmax(stats->max_change_by_norm, fabs(v - w[j]));
            w[j] = v;
        }
    }
}

int sc_bbw_solve(int nnodes, const double *rest_pos, int ntets, const int *tets, int nbones, const int *handle_bone, const sc_bbw_opts *opts,
                 double *weights, sc_bbw_bone_stats *bone_stats, sc_bbw_stats *stats, sc_err *err)
{
    double t0 = sc_wall_time();
    sc_bbw_opts o = sc_bbw_default_opts();
    if (opts) {
        if (opts->tol > 0) o.tol = opts->tol;
        if (opts->max_iter > 0) o.max_iter = opts->max_iter;
        o.method = opts->method;
        o.raw = opts->raw;
    }
    if (stats) memset(stats, 0, sizeof *stats);
    if (bone_stats) memset(bone_stats, 0, (size_t)(nbones > 0 ? nbones : 0) * sizeof *bone_stats);
    int rc = check_input(nnodes, rest_pos, ntets, tets, nbones, handle_bone, err);
    if (rc) return rc;

    int n = nnodes, nb = nbones;
    csr k = {0}, q = {0};
    double *mass = sc_alloc(err, (size_t)n, sizeof *mass);
    int *fid = sc_alloc(err, (size_t)n, sizeof *fid);
    double *xu = NULL;
    bbw_ctx cx;
    memset(&cx, 0, sizeof cx);
    sc_threads_saved threads = sc_threads_serialize();
    cholmod_start(&cx.cm);
    cx.cm.print = 0;
    /* simplicial factors only: a supernodal one hands dense blocks to BLAS, whose kernels
       OpenBLAS picks per CPU (Haswell, SkylakeX, ...) and which round differently, so the
       weights, and every simulation of the character, would differ from machine to machine */
    cx.cm.supernodal = CHOLMOD_SIMPLICIAL;
    cx.tol = o.tol;
    if (!mass || !fid) {
        rc = SC_EIO;
        goto done;
    }
    if ((rc = assemble_k(n, rest_pos, ntets, tets, &k, mass, err))) goto done;
    if ((rc = assemble_q(&k, mass, &q, err))) goto done;

    /* weights of handle nodes are fixed: indicator rows */
    int nf = 0;
    for (int i = 0; i < n; i++) {
        fid[i] = handle_bone[i] < 0 ? nf++ : -1;
        for (int j = 0; j < nb; j++) weights[(size_t)i * nb + j] = handle_bone[i] == j ? 1.0 : 0.0;
    }
    cx.nf = nf;
    cx.nb = nb;
    if (stats) stats->nfree = nf;
    if (nf == 0) goto normalize;

    if ((rc = build_free_block(&cx, n, &q, fid, handle_bone, o.max_iter, err))) goto done;
    long factor_nnz = 0;
    rc = factor_and_solve(&cx, &factor_nnz, &xu, err);
    if (stats) stats->factor_nnz = factor_nnz;
    if (rc) goto done;
    for (int j = 0; j < nb; j++)
        if ((rc = solve_bone(&cx, &o, j, n, fid, xu, weights, bone_stats, stats, err))) goto done;

normalize:
    normalize_rows(n, nb, weights, xu, nf, fid, o.raw, stats);
    rc = SC_OK;
done:
    if (stats) stats->seconds = sc_wall_time() - t0;
    csr_free(&k), csr_free(&q);
    free(mass), free(fid), free(xu);
    ctx_free(&cx);
    sc_threads_restore(threads);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */

void sc_bbw_topk(int nnodes, int nbones, const double *weights, int k, int *topk_bone, double *topk_w)
{
    for (int i = 0; i < nnodes; i++) {
        const double *w = weights + (size_t)i * nbones;
        int *tb = topk_bone + (size_t)i * k;
        double *tw = topk_w + (size_t)i * k;
        int used = 0;
        for (int s = 0; s < k; s++) tb[s] = -1, tw[s] = 0;
        /* insertion into a descending list of length k */
        for (int j = 0; j < nbones; j++) {
            int pos;
            if (!(w[j] > 0)) continue;
            if (used < k) pos = used++;
            else if (k > 0 && w[j] > tw[k - 1]) pos = k - 1;
            else continue;
            while (pos > 0 && tw[pos - 1] < w[j]) {
                tw[pos] = tw[pos - 1], tb[pos] = tb[pos - 1];
                pos--;
            }
            tw[pos] = w[j], tb[pos] = j;
        }
        double sum = 0;
        for (int s = 0; s < used; s++) sum += tw[s];
        for (int s = 0; s < used && sum > 0; s++) tw[s] /= sum;
    }
}

/* QPCC by pivoting ([T12] 6) and by branch and bound (see qpcc.h). */
#include "optim/qpcc.h"
#include "optim/lcp.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { RELAXED = 2 }; /* branch and bound: a pair with both sides >= 0 */

struct sc_qpcc_work {
    int nmax, mmax, pmax, max_nodes;
    sc_qp_work *qp;
    double *Aeq, *beq, *Ain, *bin; /* the node's QP */
    unsigned char *states;         /* [max_nodes * pmax] */
    uint64_t *hash;                /* [max_nodes] */
    double *objective;             /* [max_nodes] */
    double *xs;                    /* [max_nodes * nmax] each node's minimizer */
    double *lcp;                   /* the fallback's LCP: M, q, z and Lemke's tableau */
    int *lcp_basic;
    int *heap, nheap;
    unsigned char *child;
};

int sc_qpcc_work_create(int nmax, int mmax, int pmax, int max_nodes, sc_qpcc_work **out, sc_err *err)
{
    *out = NULL;
    if (nmax < 1 || mmax < 0 || pmax < 0 || max_nodes < 1)
        return sc_fail(err, SC_EINPUT, "qpcc: workspace of %d variables, %d rows, %d pairs, %d nodes", nmax, mmax, pmax, max_nodes);
    sc_qpcc_work *w = sc_alloc(err, 1, sizeof *w);
    if (!w) return SC_EIO;
    w->nmax = nmax;
    w->mmax = mmax;
    w->pmax = pmax;
    w->max_nodes = max_nodes;
    const size_t n = (size_t)nmax, rows_eq = (size_t)(mmax + pmax), rows_in = (size_t)(mmax + 2 * pmax);
    int rc = sc_qp_work_create(nmax, mmax + 2 * pmax, &w->qp, err);
    w->Aeq = sc_alloc(err, rows_eq * n + rows_eq, sizeof(double));
    w->Ain = sc_alloc(err, rows_in * n + rows_in, sizeof(double));
    w->states = sc_alloc(err, (size_t)max_nodes * (size_t)(pmax + 1), 1);
    w->hash = sc_alloc(err, (size_t)max_nodes, sizeof(uint64_t));
    w->objective = sc_alloc(err, (size_t)max_nodes, sizeof(double));
    w->xs = sc_alloc(err, (size_t)max_nodes * n, sizeof(double));
    w->lcp = sc_alloc(err, (size_t)pmax * pmax + 2 * (size_t)pmax + SC_LCP_TABLEAU(pmax) + 1, sizeof(double));
    w->lcp_basic = sc_alloc(err, (size_t)pmax + 1, sizeof(int));
    w->heap = sc_alloc(err, (size_t)max_nodes, sizeof(int));
    w->child = sc_alloc(err, (size_t)pmax + 1, 1);
    if (rc || !w->Aeq || !w->Ain || !w->states || !w->hash || !w->objective || !w->xs || !w->lcp || !w->lcp_basic || !w->heap || !w->child) {
        sc_qpcc_work_free(w);
        return rc ? rc : SC_EIO;
    }
    w->beq = w->Aeq + rows_eq * n;
    w->bin = w->Ain + rows_in * n;
    *out = w;
    return SC_OK;
}

void sc_qpcc_work_free(sc_qpcc_work *w)
{
    if (!w) return;
    sc_qp_work_free(w->qp);
    free(w->Aeq);
    free(w->Ain);
    free(w->states);
    free(w->hash);
    free(w->objective);
    free(w->xs);
    free(w->lcp);
    free(w->lcp_basic);
    free(w->heap);
    free(w->child);
    free(w);
}

void sc_qpcc_static_state(const sc_qpcc *p, unsigned char *state)
{
    memset(state, 1, (size_t)p->npairs);
    for (int c = 0; c < p->ncontacts; c++) state[p->contacts[c].slide] = 0;
}

/* The QP of a state (0, 1 or RELAXED per pair) in w's arrays. */
static sc_qp node_qp(const sc_qpcc *p, sc_qpcc_work *w, const unsigned char *state)
{
    const int n = p->base.n;
    sc_qp q = p->base;
    if (p->base.neq > 0) { /* (the base rows may be NULL when there are none) */
        memcpy(w->Aeq, p->base.Aeq, (size_t)p->base.neq * n * sizeof(double));
        memcpy(w->beq, p->base.beq, (size_t)p->base.neq * sizeof(double));
    }
    if (p->base.nin > 0) {
        memcpy(w->Ain, p->base.Ain, (size_t)p->base.nin * n * sizeof(double));
        memcpy(w->bin, p->base.bin, (size_t)p->base.nin * sizeof(double));
    }
    q.Aeq = w->Aeq;
    q.beq = w->beq;
    q.Ain = w->Ain;
    q.bin = w->bin;
    for (int k = 0; k < p->npairs; k++) {
        const double *row = p->row + (size_t)k * n;
        const int var_eq = state[k] == 0, row_eq = state[k] == 1;
        double *a = var_eq ? w->Aeq + (size_t)q.neq * n : w->Ain + (size_t)q.nin * n;
        memset(a, 0, (size_t)n * sizeof(double));
        a[p->var[k]] = 1;
        if (var_eq) w->beq[q.neq++] = 0;
        else w->bin[q.nin++] = 0;
        a = row_eq ? w->Aeq + (size_t)q.neq * n : w->Ain + (size_t)q.nin * n;
        memcpy(a, row, (size_t)n * sizeof(double));
        if (row_eq) w->beq[q.neq++] = -p->off[k];
        else w->bin[q.nin++] = -p->off[k];
    }
    return q;
}

static double row_value(const sc_qpcc *p, int k, const double *x)
{
    const double *row = p->row + (size_t)k * p->base.n;
    double s = p->off[k];
    for (int i = 0; i < p->base.n; i++) s += row[i] * x[i];
    return s;
}

static double row_norm(const sc_qpcc *p, int k)
{
    const double *row = p->row + (size_t)k * p->base.n;
    double s = 0;
    for (int i = 0; i < p->base.n; i++) s += row[i] * row[i];
    return sqrt(s);
}

/* Whether pair k's inequality side lies on its boundary at x: a pivot candidate. */
static int at_boundary(const sc_qpcc *p, const unsigned char *state, int k, const double *x)
{
    const double tol = 1e-8;
    if (state[k] == 1) return x[p->var[k]] <= tol * (1 + fabs(x[p->var[k]]));
    const double rn = row_norm(p, k);
    return row_value(p, k, x) <= tol * (rn > 0 ? rn : 1) * (1 + fabs(p->off[k]) / (rn > 0 ? rn : 1));
}

static int solve_node(const sc_qpcc *p, sc_qpcc_work *w, const unsigned char *state, double *x, double *f, sc_err *err)
{
    sc_qp q = node_qp(p, w, state);
    sc_qp_result r;
    int rc = sc_qp_solve(&q, w->qp, x, NULL, NULL, &r, err);
    *f = rc ? INFINITY : r.objective;
    return rc;
}

int sc_qpcc_solve_state(const sc_qpcc *p, sc_qpcc_work *w, const unsigned char *state, double *x, sc_qpcc_result *res, sc_err *err)
{
    if (p->base.n > w->nmax || p->base.neq + p->base.nin > w->mmax || p->npairs > w->pmax)
        return sc_fail(err, SC_EINPUT, "qpcc: the problem exceeds the workspace");
    double f;
    int rc = solve_node(p, w, state, x, &f, err);
    if (res) *res = (sc_qpcc_result){.objective = f, .nodes = 1, .feasible = rc == SC_OK, .proven = 0};
    return rc;
}

static uint64_t state_hash(const unsigned char *s, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

/* min-heap of node ids by objective (ties by id: deterministic) */
static int heap_less(const sc_qpcc_work *w, int a, int b)
{
    const double fa = w->objective[a], fb = w->objective[b];
    if (fa != fb) return fa < fb;
    return a < b;
}
static void heap_push(sc_qpcc_work *w, int id)
{
    int i = w->nheap++;
    w->heap[i] = id;
    while (i > 0 && heap_less(w, w->heap[i], w->heap[(i - 1) / 2])) {
        int t = w->heap[i];
        w->heap[i] = w->heap[(i - 1) / 2];
        w->heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}
static int heap_pop(sc_qpcc_work *w)
{
    int top = w->heap[0], i = 0;
    w->heap[0] = w->heap[--w->nheap];
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < w->nheap && heap_less(w, w->heap[l], w->heap[m])) m = l;
        if (r < w->nheap && heap_less(w, w->heap[r], w->heap[m])) m = r;
        if (m == i) break;
        int t = w->heap[i];
        w->heap[i] = w->heap[m];
        w->heap[m] = t;
        i = m;
    }
    return top;
}

typedef struct search {
    const sc_qpcc *p;
    sc_qpcc_work *w;
    int nodes, feasible, best;
    double best_f;
} search;

/* Solves a child state unless it was seen; feasible children join the queue. */
static void visit(search *s, const unsigned char *state)
{
    sc_qpcc_work *w = s->w;
    const int np = s->p->npairs;
    if (s->nodes >= w->max_nodes) return;
    const uint64_t h = state_hash(state, np);
    for (int i = 0; i < s->nodes; i++)
        if (w->hash[i] == h && !memcmp(w->states + (size_t)i * np, state, (size_t)np)) return;
    const int id = s->nodes++;
    memcpy(w->states + (size_t)id * np, state, (size_t)np);
    w->hash[id] = h;
    sc_err ignored;
    double *x = w->xs + (size_t)id * w->nmax;
    if (solve_node(s->p, w, state, x, &w->objective[id], &ignored) != SC_OK) return;
    s->feasible++;
    if (w->objective[id] < s->best_f) {
        s->best_f = w->objective[id];
        s->best = id;
    }
    heap_push(w, id);
}

static int contact_of(const sc_qpcc *p, int k)
{
    for (int c = 0; c < p->ncontacts; c++) {
        const sc_qpcc_contact *ct = &p->contacts[c];
        if (k == ct->normal || k == ct->slide || (k >= ct->tangent && k < ct->tangent + ct->ntangent)) return c;
    }
    return -1;
}

static void set_static(const sc_qpcc_contact *c, unsigned char *s)
{
    s[c->normal] = 1;
    memset(s + c->tangent, 1, (size_t)c->ntangent);
    s[c->slide] = 0;
}
static void set_broken(const sc_qpcc_contact *c, unsigned char *s)
{
    s[c->normal] = 0;
    memset(s + c->tangent, 0, (size_t)c->ntangent);
    s[c->slide] = 1; /* lambda free: the point's tangential velocity is unconstrained */
}
/* Sliding against the static friction at x: the friction force's two directions of largest
 * projection keep their pairs (the sliding direction is their convex combination). */
static void set_sliding(const sc_qpcc *p, const sc_qpcc_contact *c, const double *x, unsigned char *s)
{
    double fx = 0, fy = 0;
    for (int j = 0; j < c->ntangent; j++) {
        const double a = 2 * M_PI * j / c->ntangent, f = x[p->var[c->tangent + j]];
        fx += f * cos(a);
        fy += f * sin(a);
    }
    int m = 0, n = -1;
    double pm = -INFINITY, pn = -INFINITY;
    for (int j = 0; j < c->ntangent; j++) {
        const double a = 2 * M_PI * j / c->ntangent, proj = fx * cos(a) + fy * sin(a);
        if (proj > pm) {
            pn = pm;
            n = m;
            pm = proj;
            m = j;
        } else if (proj > pn) {
            pn = proj;
            n = j;
        }
    }
    s[c->normal] = 1;
    memset(s + c->tangent, 0, (size_t)c->ntangent);
    s[c->tangent + m] = 1;
    if (n >= 0 && pn > 1e-9 * fabs(pm)) s[c->tangent + n] = 1; /* exactly along m: m alone */
    s[c->slide] = 1;
}

static void expand(search *s, int id)
{
    const sc_qpcc *p = s->p;
    sc_qpcc_work *w = s->w;
    const int np = p->npairs;
    const unsigned char *st = w->states + (size_t)id * np;
    const double *x = w->xs + (size_t)id * w->nmax;
    for (int c = 0; c < p->ncontacts; c++) {
        const sc_qpcc_contact *ct = &p->contacts[c];
        memcpy(w->child, st, (size_t)np);
        if (st[ct->normal] == 0) { /* broken: touches again when the gap closes */
            if (at_boundary(p, st, ct->normal, x)) {
                set_static(ct, w->child);
                visit(s, w->child);
            }
            continue;
        }
        if (at_boundary(p, st, ct->normal, x)) { /* no normal force: break */
            set_broken(ct, w->child);
            visit(s, w->child);
            memcpy(w->child, st, (size_t)np);
        }
        if (st[ct->slide] == 0 && at_boundary(p, st, ct->slide, x)) { /* on the friction cone: slide */
            set_sliding(p, ct, x, w->child);
            visit(s, w->child);
        } else if (st[ct->slide] == 1 && at_boundary(p, st, ct->slide, x)) { /* no slip: stick */
            set_static(ct, w->child);
            visit(s, w->child);
        }
    }
    for (int k = 0; k < np; k++)
        if (contact_of(p, k) < 0 && at_boundary(p, st, k, x)) {
            memcpy(w->child, st, (size_t)np);
            w->child[k] = (unsigned char)!st[k];
            visit(s, w->child);
        }
}

/* [T12] 6's fallback for an infeasible start: hold the variables outside the pairs (the
 * controls) at the relaxed problem's minimizer and solve the pairs' LCP by Lemke's method; the
 * state it lies in (ties to state 1) contains that point, so its QP is feasible as long as the
 * base rows do not bind the pairs' variables. Leaves the state in w->child. */
static int lcp_start(const sc_qpcc *p, sc_qpcc_work *w, double *x, sc_err *err)
{
    const int n = p->base.n, np = p->npairs;
    memset(w->child, RELAXED, (size_t)np);
    double f;
    if (solve_node(p, w, w->child, x, &f, err) != SC_OK) return sc_err_prefix(err, "qpcc: the start state and the relaxed problem are infeasible: ");
    double *M = w->lcp, *q = M + (size_t)np * np, *z = q + np, *tableau = z + np;
    for (int k = 0; k < np; k++) {
        const double *row = p->row + (size_t)k * n;
        q[k] = row_value(p, k, x);
        for (int j = 0; j < np; j++) {
            M[(size_t)k * np + j] = row[p->var[j]];
            q[k] -= row[p->var[j]] * x[p->var[j]]; /* only the held variables stay in q */
        }
    }
    int rc = sc_lcp_lemke_in(np, M, q, z, 50 * np + 50, tableau, w->lcp_basic, err);
    if (rc == SC_OK)
        for (int k = 0; k < np; k++) {
            double wk = q[k];
            for (int j = 0; j < np; j++) wk += M[(size_t)k * np + j] * z[j];
            w->child[k] = (unsigned char)(z[k] >= wk);
        }
    return rc ? sc_err_prefix(err, "qpcc: the start state is infeasible and ") : SC_OK;
}

int sc_qpcc_solve(const sc_qpcc *p, sc_qpcc_work *w, const unsigned char *start, double *x, unsigned char *state, sc_qpcc_result *res, sc_err *err)
{
    if (p->base.n > w->nmax || p->base.neq + p->base.nin > w->mmax || p->npairs > w->pmax)
        return sc_fail(err, SC_EINPUT, "qpcc: the problem exceeds the workspace");
    search s = {.p = p, .w = w, .best = -1, .best_f = INFINITY};
    w->nheap = 0;
    visit(&s, start);
    if (s.best < 0) {
        int rc = lcp_start(p, w, x, err);
        if (rc) return rc;
        visit(&s, w->child);
        if (s.best < 0) return sc_fail(err, SC_ENUMERIC, "qpcc: neither the start state nor the LCP's state is feasible");
    }
    while (w->nheap > 0 && s.nodes < w->max_nodes) expand(&s, heap_pop(w));
    memcpy(x, w->xs + (size_t)s.best * w->nmax, (size_t)p->base.n * sizeof(double));
    if (state) memcpy(state, w->states + (size_t)s.best * p->npairs, (size_t)p->npairs);
    if (res) *res = (sc_qpcc_result){.objective = s.best_f, .nodes = s.nodes, .feasible = s.feasible, .proven = 0};
    return SC_OK;
}

/* ---- branch and bound ---- */

typedef struct bb_node {
    double bound;
    int id;
} bb_node;

int sc_qpcc_exact(const sc_qpcc *p, int max_nodes, double *x, sc_qpcc_result *res, sc_err *err)
{
    const int n = p->base.n, np = p->npairs;
    sc_qpcc_work *w = NULL;
    int rc = sc_qpcc_work_create(n, p->base.neq + p->base.nin, np, 1, &w, err);
    if (rc) return rc;
    /* open nodes: a growing pool of tri-states and a binary heap on their parents' bounds */
    size_t cap = 1024, used = 0, nheap = 0;
    unsigned char *pool = malloc(cap * (size_t)np);
    bb_node *heap = malloc(cap * sizeof *heap);
    double *xr = malloc((size_t)n * 2 * sizeof(double));
    unsigned char *fixed = malloc((size_t)np + 1);
    if (!pool || !heap || !xr || !fixed) {
        rc = sc_fail(err, SC_EIO, "qpcc: out of memory");
        goto done;
    }
    double *const xs = xr + n;
    memset(pool, RELAXED, (size_t)np);
    heap[nheap++] = (bb_node){-INFINITY, 0};
    used = 1;
    double best_f = INFINITY;
    int nodes = 0, feasible = 0;
    while (nheap > 0 && nodes < max_nodes) {
        bb_node top = heap[0];
        heap[0] = heap[--nheap];
        for (size_t i = 0;;) { /* sift down */
            size_t l = 2 * i + 1, r = l + 1, m = i;
            if (l < nheap && (heap[l].bound < heap[m].bound || (heap[l].bound == heap[m].bound && heap[l].id < heap[m].id))) m = l;
            if (r < nheap && (heap[r].bound < heap[m].bound || (heap[r].bound == heap[m].bound && heap[r].id < heap[m].id))) m = r;
            if (m == i) break;
            bb_node t = heap[i];
            heap[i] = heap[m];
            heap[m] = t;
            i = m;
        }
        if (top.bound >= best_f - 1e-9 * fabs(best_f)) continue;
        const unsigned char *st = pool + (size_t)top.id * np;
        double f;
        sc_err ignored;
        nodes++;
        if (solve_node(p, w, st, xr, &f, &ignored) != SC_OK) continue;
        feasible++;
        if (f >= best_f - 1e-9 * fabs(best_f)) continue;
        /* the pair that breaks complementarity most */
        int branch = -1;
        double worst = 0;
        for (int k = 0; k < np; k++) {
            if (st[k] != RELAXED) continue;
            const double rn = row_norm(p, k);
            const double a = fmax(xr[p->var[k]], 0), b = fmax(row_value(p, k, xr), 0) / (rn > 0 ? rn : 1);
            const double v = fmin(a, b);
            if (v > 1e-7 && v > worst) {
                worst = v;
                branch = k;
            }
        }
        if (branch < 0) { /* complementary: polish in the state it lies in, then keep it */
            for (int k = 0; k < np; k++)
                fixed[k] = st[k] != RELAXED ? st[k] : (unsigned char)(xr[p->var[k]] > row_value(p, k, xr) / fmax(row_norm(p, k), 1e-300));
            double fs;
            if (solve_node(p, w, fixed, xs, &fs, &ignored) == SC_OK && fs < best_f) {
                best_f = fs;
                memcpy(x, xs, (size_t)n * sizeof(double));
            }
            continue;
        }
        if (used + 2 > cap || nheap + 2 > cap) {
            cap *= 2;
            unsigned char *np2 = realloc(pool, cap * (size_t)np);
            bb_node *nh = np2 ? realloc(heap, cap * sizeof *heap) : NULL;
            if (np2) pool = np2;
            if (nh) heap = nh;
            if (!np2 || !nh) {
                rc = sc_fail(err, SC_EIO, "qpcc: out of memory");
                goto done;
            }
            st = pool + (size_t)top.id * np;
        }
        for (int side = 0; side < 2; side++) {
            unsigned char *c = pool + used * (size_t)np;
            memcpy(c, pool + (size_t)top.id * np, (size_t)np);
            c[branch] = (unsigned char)side;
            size_t i = nheap++;
            heap[i] = (bb_node){f, (int)used++};
            while (i > 0 &&
                   (heap[i].bound < heap[(i - 1) / 2].bound || (heap[i].bound == heap[(i - 1) / 2].bound && heap[i].id < heap[(i - 1) / 2].id))) {
                bb_node t = heap[i];
                heap[i] = heap[(i - 1) / 2];
                heap[(i - 1) / 2] = t;
                i = (i - 1) / 2;
            }
        }
    }
    if (!isfinite(best_f)) {
        rc = sc_fail(err, SC_ENUMERIC, "qpcc: no complementary point found in %d nodes", nodes);
        goto done;
    }
    if (res) *res = (sc_qpcc_result){.objective = best_f, .nodes = nodes, .feasible = feasible, .proven = nheap == 0};
done:
    free(pool);
    free(heap);
    free(xr);
    free(fixed);
    sc_qpcc_work_free(w);
    return rc;
}

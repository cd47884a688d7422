/* The QPCC controller of [T12] 5 (control.h). Decision variables z: the desired lengths l_d
 * (S of them), then per contact patch c the normal impulse, 8 friction impulses and lambda. */
#include "muscle/control.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NDIR      8
#define PER_PATCH (NDIR + 2)

void sc_control_default_opts(sc_control_opts *o)
{
    memset(o, 0, sizeof *o);
    o->period = 0.01;
    o->qpcc = 1;
    o->patches = 4;
    o->contact_margin = 0.01;
    o->mu = 0.8;
    o->max_nodes = 64;
    o->ridge = 1e-4;
}

struct sc_control {
    const sc_model *m;
    const sc_muscles *mu;
    sc_control_opts o;
    double h, alpha, mass;
    sc_skyline K; /* M~ at rest: (1 + h alpha) M + (h beta + h^2) K0 */
    int nbound;
    const int *bound; /* the body's */
    int S, nvar_max, pmax;
    double *A, *b, *work, *rot;
    double *Yv;        /* [3 * 3nn] one set's three velocity functionals */
    double *V;         /* [3nn * nvar_max] the velocities after the step per unit of each variable (SC_OBJ_KINETIC) */
    double *sqrt_mass; /* [nn] */
    int npatch, *patch_first, *patch_nodes, *cand, *assign;
    double *patch_gap, *patch_centre; /* [pmax], [3 pmax] */
    /* the QP */
    double *H, *g, *Ain, *bin, *prow, *poff, *row, *z, *vrow; /* vrow: [3 * nvar] a set's velocity rows */
    double *mom;                                              /* [6 * nvar] linear and angular momentum rows */
    double vcst[3];
    int *pvar;
    sc_qpcc_contact *contacts;
    unsigned char *start, *state;
    sc_qpcc_work *qw;
    double *anchor, *anchor_t; /* [3 nobjectives], [nobjectives]: an anchored objective's position and the plan's time it was taken at */
};

void sc_control_free(sc_control *c)
{
    if (!c) return;
    sc_skyline_free(&c->K);
    free(c->A);
    free(c->b);
    free(c->work);
    free(c->rot);
    free(c->Yv);
    free(c->V);
    free(c->sqrt_mass);
    free(c->patch_first);
    free(c->patch_nodes);
    free(c->cand);
    free(c->assign);
    free(c->patch_gap);
    free(c->patch_centre);
    free(c->H);
    free(c->g);
    free(c->Ain);
    free(c->bin);
    free(c->prow);
    free(c->poff);
    free(c->row);
    free(c->z);
    free(c->vrow);
    free(c->mom);
    free(c->pvar);
    free(c->contacts);
    free(c->start);
    free(c->state);
    sc_qpcc_work_free(c->qw);
    free(c->anchor);
    free(c->anchor_t);
    free(c);
}

/* The rest stiffness of one tet, K[(a,i),(b,k)] = V (mu (d_ik g_a.g_b + g_b,i g_a,k) + lambda g_a,i g_b,k)
 * with g the shape function gradients (rows of Bm^-1, g_0 = -their sum), added to s scaled. */
static void add_tet_stiffness(sc_skyline *s, const sc_model *m, int t, double mu, double lambda, double scale)
{
    const double *bi = m->bm_inv + 9 * t;
    double gr[4][3];
    for (int k = 0; k < 3; k++) {
        gr[1][k] = bi[k];
        gr[2][k] = bi[3 + k];
        gr[3][k] = bi[6 + k];
        gr[0][k] = -gr[1][k] - gr[2][k] - gr[3][k];
    }
    const double V = m->tet_volume[t] * scale;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            const double gg = gr[a][0] * gr[b][0] + gr[a][1] * gr[b][1] + gr[a][2] * gr[b][2];
            for (int i = 0; i < 3; i++)
                for (int k = 0; k < 3; k++) {
                    const int gi = 3 * m->tets[4 * t + a] + i, gk = 3 * m->tets[4 * t + b] + k;
                    if (gi < gk) continue; /* each symmetric pair once */
                    sc_skyline_add(s, gi, gk, V * (mu * ((i == k) * gg + gr[b][i] * gr[a][k]) + lambda * gr[b][k] * gr[a][i]));
                }
        }
}

int sc_control_create(const sc_softbody *s, const sc_control_opts *o, sc_control **out, sc_err *err)
{
    *out = NULL;
    const sc_model *m = s->m;
    if (!s->mu) return sc_fail(err, SC_EINPUT, "control: the body has no muscles");
    if (!(o->period >= s->o.dt) || o->patches < 0 || o->patches > 32 || !(o->mu >= 0) || o->max_nodes < 1)
        return sc_fail(err, SC_EINPUT, "control: period %g s (at least the step %g s), patches %d (0-32), mu %g, max_nodes %d", o->period, s->o.dt,
                       o->patches, o->mu, o->max_nodes);
    sc_control *c = sc_alloc(err, 1, sizeof *c);
    if (!c) return SC_EIO;
    c->m = m;
    c->mu = s->mu;
    c->o = *o;
    c->h = o->period;
    c->alpha = s->o.rayleigh_alpha;
    for (int i = 0; i < m->nnodes; i++) c->mass += m->node_mass[i];
    int rc = sc_skyline_create(m->nnodes, m->ntets, 4, m->tets, &c->K, err);
    if (rc) {
        free(c);
        return rc;
    }
    const double h = c->h, beta = s->o.rayleigh_beta;
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < 3; k++) sc_skyline_add(&c->K, 3 * i + k, 3 * i + k, (1 + h * c->alpha) * m->node_mass[i]);
    for (int t = 0; t < m->ntets; t++) add_tet_stiffness(&c->K, m, t, s->fem.mu, s->fem.lambda, h * beta + h * h);
    if ((rc = sc_skyline_factor(&c->K, err))) {
        sc_control_free(c);
        return sc_err_prefix(err, "control: M~ = M + h C + h^2 K: ");
    }
    const int nb = s->nbound;
    c->nbound = nb;
    c->bound = s->bound;
    const int S = s->mu->nsegs, P = o->patches, n3 = 3 * m->nnodes, nv = S + PER_PATCH * P;
    c->S = S;
    c->pmax = P;
    c->nvar_max = nv;
    c->A = malloc((size_t)n3 * S * sizeof(double));
    c->b = malloc((size_t)n3 * sizeof(double));
    c->work = malloc((size_t)n3 * sizeof(double));
    c->rot = malloc(9 * (size_t)m->ntets * sizeof(double));
    c->Yv = malloc(3 * (size_t)n3 * sizeof(double));
    c->V = malloc(((size_t)nv + 1) * n3 * sizeof(double));
    c->sqrt_mass = malloc((size_t)m->nnodes * sizeof(double));
    c->patch_first = malloc(((size_t)P + 2) * sizeof(int));
    c->patch_nodes = malloc(((size_t)nb + 1) * sizeof(int));
    c->cand = malloc(((size_t)nb + 1) * sizeof(int));
    c->assign = malloc(((size_t)nb + 1) * sizeof(int));
    c->patch_gap = malloc(((size_t)P + 1) * sizeof(double));
    c->patch_centre = malloc(3 * ((size_t)P + 1) * sizeof(double));
    c->H = malloc((size_t)nv * nv * sizeof(double));
    c->g = malloc((size_t)nv * sizeof(double));
    c->Ain = malloc(2 * (size_t)S * nv * sizeof(double));
    c->bin = malloc(2 * (size_t)S * sizeof(double));
    c->prow = malloc(((size_t)PER_PATCH * P + 1) * nv * sizeof(double));
    c->poff = malloc(((size_t)PER_PATCH * P + 1) * sizeof(double));
    c->pvar = malloc(((size_t)PER_PATCH * P + 1) * sizeof(int));
    c->contacts = malloc(((size_t)P + 1) * sizeof(sc_qpcc_contact));
    c->start = malloc((size_t)PER_PATCH * P + 1);
    c->state = malloc((size_t)PER_PATCH * P + 1);
    c->row = malloc((size_t)nv * sizeof(double));
    c->z = malloc((size_t)nv * sizeof(double));
    c->vrow = malloc(3 * (size_t)nv * sizeof(double));
    c->mom = malloc(6 * (size_t)nv * sizeof(double));
    c->anchor = malloc(3 * ((size_t)o->nobjectives + 1) * sizeof(double));
    c->anchor_t = malloc(((size_t)o->nobjectives + 1) * sizeof(double));
    if (!c->A || !c->b || !c->work || !c->rot || !c->Yv || !c->V || !c->sqrt_mass || !c->patch_first || !c->patch_nodes || !c->cand || !c->assign ||
        !c->patch_gap || !c->patch_centre || !c->H || !c->g || !c->Ain || !c->bin || !c->prow || !c->poff || !c->pvar || !c->contacts || !c->start ||
        !c->state || !c->row || !c->z || !c->vrow || !c->mom || !c->anchor || !c->anchor_t) {
        sc_control_free(c);
        return sc_fail(err, SC_EIO, "control: out of memory");
    }
    for (int i = 0; i < m->nnodes; i++) c->sqrt_mass[i] = sqrt(m->node_mass[i]);
    for (int k = 0; k < o->nobjectives; k++) c->anchor_t[k] = NAN; /* none taken */
    if ((rc = sc_qpcc_work_create(nv, 2 * S, PER_PATCH * P, o->max_nodes, &c->qw, err))) {
        sc_control_free(c);
        return rc;
    }
    *out = c;
    return SC_OK;
}

/* ---- the state's pieces ---- */

/* Contact patches: candidates near the ground, clustered in x and z (k-means from farthest
 * points, deterministic). */
static void find_patches(sc_control *c, const sc_softbody *s)
{
    const int P = c->pmax;
    int nc = 0;
    for (int k = 0; k < c->nbound; k++) {
        const int i = c->bound[k];
        const double *x = s->x + 3 * i, vy = s->v[3 * i + 1];
        sc_vec3 nrm;
        const double gap = sc_ground_height(&s->o.contact.ground, sc_v3_load(x), &nrm);
        if (gap + c->h * fmin(vy, 0) < c->o.contact_margin) c->cand[nc++] = i;
    }
    c->npatch = 0;
    if (nc == 0 || P == 0) return;
    const int k = nc < P ? nc : P;
    double cx[32], cz[32];
    /* farthest-point start: the candidate of least x (then z), then each farthest from those */
    int first = 0;
    for (int a = 1; a < nc; a++) {
        const double *p = s->x + 3 * c->cand[a], *q = s->x + 3 * c->cand[first];
        if (p[0] < q[0] || (p[0] == q[0] && p[2] < q[2])) first = a;
    }
    cx[0] = s->x[3 * c->cand[first]];
    cz[0] = s->x[3 * c->cand[first] + 2];
    for (int j = 1; j < k; j++) {
        int best = 0;
        double bd = -1;
        for (int a = 0; a < nc; a++) {
            const double *p = s->x + 3 * c->cand[a];
            double d = INFINITY;
            for (int q = 0; q < j; q++) d = fmin(d, (p[0] - cx[q]) * (p[0] - cx[q]) + (p[2] - cz[q]) * (p[2] - cz[q]));
            if (d > bd) {
                bd = d;
                best = a;
            }
        }
        cx[j] = s->x[3 * c->cand[best]];
        cz[j] = s->x[3 * c->cand[best] + 2];
    }
    for (int it = 0; it < 8; it++) {
        double sx[32] = {0}, sz[32] = {0};
        int cnt[32] = {0};
        for (int a = 0; a < nc; a++) {
            const double *p = s->x + 3 * c->cand[a];
            int best = 0;
            double bd = INFINITY;
            for (int q = 0; q < k; q++) {
                double d = (p[0] - cx[q]) * (p[0] - cx[q]) + (p[2] - cz[q]) * (p[2] - cz[q]);
                if (d < bd) {
                    bd = d;
                    best = q;
                }
            }
            c->assign[a] = best;
            sx[best] += p[0];
            sz[best] += p[2];
            cnt[best]++;
        }
        for (int q = 0; q < k; q++)
            if (cnt[q]) {
                cx[q] = sx[q] / cnt[q];
                cz[q] = sz[q] / cnt[q];
            }
    }
    /* CSR by cluster, empty clusters dropped */
    int n = 0;
    for (int q = 0; q < k; q++) {
        const int begin = n;
        double gap = 0, cen[3] = {0, 0, 0};
        for (int a = 0; a < nc; a++)
            if (c->assign[a] == q) {
                const int i = c->cand[a];
                c->patch_nodes[n++] = i;
                sc_vec3 nrm;
                gap += sc_ground_height(&s->o.contact.ground, sc_v3_load(s->x + 3 * i), &nrm);
                for (int d = 0; d < 3; d++) cen[d] += s->x[3 * i + d];
            }
        if (n == begin) continue;
        c->patch_first[c->npatch] = begin;
        c->patch_gap[c->npatch] = gap / (n - begin);
        for (int d = 0; d < 3; d++) c->patch_centre[3 * c->npatch + d] = cen[d] / (n - begin);
        c->npatch++;
    }
    c->patch_first[c->npatch] = n;
}

/* The world impulse of one unit of a patch's variable k: 0 the normal impulse (+y, a flat
 * ground), 1..NDIR the friction impulses along their directions. */
static void unit_impulse(int k, double f[3])
{
    f[0] = f[1] = f[2] = 0;
    if (k == 0) f[1] = 1;
    else {
        const double ang = 2 * M_PI * (k - 1) / NDIR;
        f[0] = cos(ang);
        f[2] = sin(ang);
    }
}

/* The shortest l_d of segment j: min_ratio l0, or l0 when it is locked. */
static double shortest(const sc_control *c, int j) { return (c->o.locked && c->o.locked[j] ? 1 : c->mu->min_ratio) * c->mu->rest_len[j]; }

/* Variables of patch p's impulses. */
static int var_fn(const sc_control *c, int p) { return c->S + PER_PATCH * p; }

/* y = R M~^-1 R' y in place (M~ the rest one, turned by the body's rotation R). */
static void solve_turned(sc_control *c, sc_mat3 R, double *y)
{
    const int nn = c->m->nnodes;
    for (int i = 0; i < nn; i++) {
        const double a = y[3 * i], b = y[3 * i + 1], d = y[3 * i + 2];
        for (int r = 0; r < 3; r++) y[3 * i + r] = R.m[0][r] * a + R.m[1][r] * b + R.m[2][r] * d;
    }
    sc_skyline_solve(&c->K, y, c->work);
    for (int i = 0; i < nn; i++) {
        const double a = y[3 * i], b = y[3 * i + 1], d = y[3 * i + 2];
        for (int r = 0; r < 3; r++) y[3 * i + r] = R.m[r][0] * a + R.m[r][1] * b + R.m[r][2] * d;
    }
}

/* Rows over z and constants of the mean velocity after the step of a node set (three
 * functionals, each one solve): c->vrow[3 nv], c->vcst[3]. */
static void set_velocity_rows(sc_control *c, const int *nodes, int n, sc_mat3 R, int nv)
{
    const sc_model *m = c->m;
    const int n3 = 3 * m->nnodes;
    for (int a = 0; a < 3; a++) {
        double *y = c->Yv + (size_t)a * n3; /* the functional e_a / n on each node, through M~^-1 */
        memset(y, 0, (size_t)n3 * sizeof(double));
        for (int k = 0; k < n; k++) y[3 * nodes[k] + a] += 1.0 / n;
        solve_turned(c, R, y);
    }
    for (int a = 0; a < 3; a++) {
        const double *y = c->Yv + (size_t)a * n3;
        double *row = c->vrow + (size_t)a * nv;
        memset(row, 0, (size_t)nv * sizeof(double));
        double cst = 0;
        for (int i = 0; i < n3; i++) cst += y[i] * c->b[i];
        for (int j = 0; j < c->S; j++) {
            double s = 0;
            for (int i = 0; i < n3; i++) s += y[i] * c->A[(size_t)i * c->S + j];
            row[j] = c->h * s;
        }
        for (int p = 0; p < c->npatch; p++) {
            double w[3] = {0, 0, 0};
            const int n0 = c->patch_first[p], n1 = c->patch_first[p + 1];
            for (int k = n0; k < n1; k++)
                for (int r = 0; r < 3; r++) w[r] += y[3 * c->patch_nodes[k] + r] / (n1 - n0);
            const int fn = var_fn(c, p);
            for (int k = 0; k <= NDIR; k++) {
                double f[3];
                unit_impulse(k, f);
                row[fn + k] += w[0] * f[0] + w[1] * f[1] + w[2] * f[2];
            }
        }
        c->vcst[a] = cst;
    }
}

/* SC_OBJ_KINETIC: weight * sum_i m_i |v_i+ - v_c+|^2 with v+ = M~^-1 (b + h A l_d + J' f) (eq. 8):
   the columns V of M~^-1 [h A, J'] and v0 = M~^-1 b, then H += 2 w (V' M V - l l' / m),
   g += 2 w (V' M v0 - l L0 / m) with l the linear momentum rows (lrow) and L0 = sum M v0. */
static void add_kinetic(sc_control *c, sc_mat3 R, int nv, double *const lrow[3], const double Lc[3], double weight)
{
    const sc_model *m = c->m;
    const int n3 = 3 * m->nnodes, S = c->S;
    for (int j = 0; j < S; j++) {
        double *y = c->V + (size_t)j * n3;
        for (int i = 0; i < n3; i++) y[i] = c->h * c->A[(size_t)i * S + j];
        solve_turned(c, R, y);
    }
    /* a patch's impulse columns are combinations of three solves, its impulse along x, y and z
       (Yv is free here: set_velocity_rows uses it within its own call) */
    for (int p = 0; p < c->npatch; p++) {
        const int n0 = c->patch_first[p], n1 = c->patch_first[p + 1];
        for (int r = 0; r < 3; r++) {
            double *e = c->Yv + (size_t)r * n3;
            memset(e, 0, (size_t)n3 * sizeof(double));
            for (int k = n0; k < n1; k++) e[3 * c->patch_nodes[k] + r] = 1.0 / (n1 - n0);
            solve_turned(c, R, e);
        }
        for (int v = 0; v < PER_PATCH; v++) {
            double *y = c->V + (size_t)(var_fn(c, p) + v) * n3, f[3] = {0, 0, 0};
            if (v <= NDIR) unit_impulse(v, f); /* lambda (v = NDIR + 1): no impulse */
            for (int i = 0; i < n3; i++) y[i] = f[0] * c->Yv[i] + f[1] * c->Yv[n3 + i] + f[2] * c->Yv[2 * (size_t)n3 + i];
        }
    }
    double *v0 = c->V + (size_t)nv * n3;
    memcpy(v0, c->b, (size_t)n3 * sizeof(double));
    solve_turned(c, R, v0);
    /* sum_i m_i y_a y_b as a plain dot: every column (and v0) scaled by sqrt(m_i) */
    for (int a = 0; a <= nv; a++) {
        double *y = c->V + (size_t)a * n3;
        for (int i = 0; i < n3; i++) y[i] *= c->sqrt_mass[i / 3];
    }
    for (int a = 0; a < nv; a++) {
        const double *ya = c->V + (size_t)a * n3;
        double ga = sc_dot(n3, ya, v0);
        for (int k = 0; k < 3; k++) ga -= lrow[k][a] * Lc[k] / c->mass;
        c->g[a] += 2 * weight * ga;
        for (int b = 0; b <= a; b++) {
            double hab = sc_dot(n3, ya, c->V + (size_t)b * n3);
            for (int k = 0; k < 3; k++) hab -= lrow[k][a] * lrow[k][b] / c->mass;
            c->H[(size_t)a * nv + b] += 2 * weight * hab;
            if (b != a) c->H[(size_t)b * nv + a] += 2 * weight * hab;
        }
    }
}

/* Adds weight * (row . z + cst - target)^2 to the QP (H = 2 w row row', g = 2 w (cst - t) row). */
static void add_square(sc_control *c, int nv, const double *row, double cst, double target, double weight)
{
    if (!(weight > 0)) return;
    for (int i = 0; i < nv; i++) {
        if (row[i] == 0) continue;
        c->g[i] += 2 * weight * (cst - target) * row[i];
        for (int j = 0; j < nv; j++) c->H[(size_t)i * nv + j] += 2 * weight * row[i] * row[j];
    }
}

static double objective_target(const sc_objective *ob, int a, double t)
{
    double v = ob->target[a];
    if (ob->ramp != SC_RAMP_NONE) { /* the fraction of the window passed (to is finite for a ramp) */
        const double u = fmin(1, fmax(0, (t - ob->from) / (ob->to - ob->from)));
        v *= ob->ramp == SC_RAMP_SMOOTH ? u * u * (3 - 2 * u) : u;
    }
    if (ob->period > 0) v += ob->amplitude[a] * sin(2 * M_PI * (t - ob->from) / ob->period);
    return v;
}

/* Objective k's anchor (an anchored one's offsets are from it): pos, taken at the window's first
   plan; kept while it was taken within this window and not after the body's time (a body restored
   to before it takes it anew). */
static const double *objective_anchor(sc_control *c, int k, double t, const double pos[3])
{
    const sc_objective *ob = &c->o.objectives[k];
    double *a = c->anchor + 3 * k;
    if (!(c->anchor_t[k] >= ob->from && c->anchor_t[k] <= t)) {
        memcpy(a, pos, 3 * sizeof(double));
        c->anchor_t[k] = t;
    }
    return a;
}

int sc_control_plan(sc_control *c, sc_softbody *s, sc_control_report *rep, sc_err *err)
{
    const sc_model *m = c->m;
    const int S = c->S;
    const double h = c->h;
    memset(rep, 0, sizeof *rep);
    /* the state: centre of mass, momenta, the body's rotation */
    double com[3] = {0, 0, 0}, L[3] = {0, 0, 0}, Hm[3] = {0, 0, 0};
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < 3; k++) {
            com[k] += m->node_mass[i] * s->x[3 * i + k] / c->mass;
            L[k] += m->node_mass[i] * s->v[3 * i + k];
        }
    for (int i = 0; i < m->nnodes; i++) {
        const double *x = s->x + 3 * i, *v = s->v + 3 * i, mi = m->node_mass[i];
        const double r[3] = {x[0] - com[0], x[1] - com[1], x[2] - com[2]};
        Hm[0] += mi * (r[1] * v[2] - r[2] * v[1]);
        Hm[1] += mi * (r[2] * v[0] - r[0] * v[2]);
        Hm[2] += mi * (r[0] * v[1] - r[1] * v[0]);
    }
    const sc_mat3 R = sc_softbody_orientation(s);
    /* A at the current rotations, and b = M v + h (f_e + f_ext + M g - A l) */
    sc_softbody_rotations(s, c->rot);
    sc_muscle_matrix(c->mu, m, c->rot, c->A);
    sc_muscle_lengths(c->mu, m, s->x, s->len);
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < 3; k++) {
            const int r = 3 * i + k;
            double al = 0;
            for (int j = 0; j < S; j++) al += c->A[(size_t)r * S + j] * s->len[j];
            c->b[r] = m->node_mass[i] * (s->v[r] + h * s->o.gravity[k]) + h * (s->f_elastic[r] + s->ext[r] - al);
        }
    find_patches(c, s);
    const int P = c->npatch, nv = S + PER_PATCH * P;
    rep->patches = P;
    memset(c->H, 0, (size_t)nv * nv * sizeof(double));
    memset(c->g, 0, (size_t)nv * sizeof(double));
    /* momentum after the step (the rigid modes of M~): L+ = sum (b + h A l_d + J' f) / (1 + h alpha),
       H+ = sum r x (...) / (1 + h alpha) */
    const double damp = 1 / (1 + h * c->alpha);
    double *lrow[3], *hrow[3], Lc[3] = {0, 0, 0}, Hc[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++) {
        lrow[a] = c->mom + (size_t)a * nv;
        hrow[a] = c->mom + (size_t)(3 + a) * nv;
        memset(lrow[a], 0, (size_t)nv * sizeof(double));
        memset(hrow[a], 0, (size_t)nv * sizeof(double));
    }
    for (int i = 0; i < m->nnodes; i++) {
        const double r[3] = {s->x[3 * i] - com[0], s->x[3 * i + 1] - com[1], s->x[3 * i + 2] - com[2]};
        const double *bi = c->b + 3 * i;
        for (int a = 0; a < 3; a++) Lc[a] += damp * bi[a];
        Hc[0] += damp * (r[1] * bi[2] - r[2] * bi[1]);
        Hc[1] += damp * (r[2] * bi[0] - r[0] * bi[2]);
        Hc[2] += damp * (r[0] * bi[1] - r[1] * bi[0]);
        for (int j = 0; j < S; j++) {
            const double ax = h * c->A[(size_t)(3 * i) * S + j], ay = h * c->A[(size_t)(3 * i + 1) * S + j],
                         az = h * c->A[(size_t)(3 * i + 2) * S + j];
            lrow[0][j] += damp * ax;
            lrow[1][j] += damp * ay;
            lrow[2][j] += damp * az;
            hrow[0][j] += damp * (r[1] * az - r[2] * ay);
            hrow[1][j] += damp * (r[2] * ax - r[0] * az);
            hrow[2][j] += damp * (r[0] * ay - r[1] * ax);
        }
    }
    for (int p = 0; p < P; p++) {
        const double r[3] = {c->patch_centre[3 * p] - com[0], c->patch_centre[3 * p + 1] - com[1], c->patch_centre[3 * p + 2] - com[2]};
        const int fn = var_fn(c, p);
        for (int v = fn; v < fn + NDIR + 1; v++) {
            double f[3];
            unit_impulse(v - fn, f);
            for (int a = 0; a < 3; a++) lrow[a][v] += damp * f[a];
            hrow[0][v] += damp * (r[1] * f[2] - r[2] * f[1]);
            hrow[1][v] += damp * (r[2] * f[0] - r[0] * f[2]);
            hrow[2][v] += damp * (r[0] * f[1] - r[1] * f[0]);
        }
    }
    /* centre of support: the patches' mean, weighted by their nodes */
    double sup[3] = {com[0], 0, com[2]};
    if (P > 0) {
        double n = 0;
        sup[0] = sup[2] = 0;
        for (int p = 0; p < P; p++) {
            const double w = c->patch_first[p + 1] - c->patch_first[p];
            sup[0] += w * c->patch_centre[3 * p];
            sup[2] += w * c->patch_centre[3 * p + 2];
            n += w;
        }
        sup[0] /= n;
        sup[2] /= n;
    }
    const int in_contact = s->contact.count > 0;
    for (int k = 0; k < c->o.nobjectives; k++) {
        const sc_objective *ob = &c->o.objectives[k];
        if (s->t < ob->from || s->t >= ob->to) continue;
        if ((ob->when == SC_WHEN_CONTACT && !in_contact) || (ob->when == SC_WHEN_AIRBORNE && in_contact)) continue;
        const double *anc = ob->anchored && (ob->type == SC_OBJ_COM || ob->type == SC_OBJ_MOMENTUM) ? objective_anchor(c, k, s->t, com) : NULL;
        for (int a = 0; a < 3 && ob->type != SC_OBJ_REGULARISE && ob->type != SC_OBJ_KINETIC; a++) {
            const double w = ob->weight * ob->axes[a];
            if (!(w > 0)) continue;
            double tg = objective_target(ob, a, s->t) + (anc ? anc[a] : 0);
            switch (ob->type) {
                case SC_OBJ_MOMENTUM: { /* (L+ - L) / h -> m kp (c~ - c) - kd L */
                    double ct = ob->support && a != 1 ? sup[a] + tg : tg;
                    double want = c->mass * ob->kp * (ct - com[a]) - ob->kd * L[a];
                    for (int v = 0; v < nv; v++) c->row[v] = lrow[a][v] / h;
                    add_square(c, nv, c->row, (Lc[a] - L[a]) / h, want, w);
                    break;
                }
                case SC_OBJ_ANGULAR: /* (H+ - H) / h -> rate - kd H */
                    for (int v = 0; v < nv; v++) c->row[v] = hrow[a][v] / h;
                    add_square(c, nv, c->row, (Hc[a] - Hm[a]) / h, tg - ob->kd * Hm[a], w);
                    break;
                case SC_OBJ_COM: /* c + h L+ / m -> target */
                    for (int v = 0; v < nv; v++) c->row[v] = h * lrow[a][v] / c->mass;
                    add_square(c, nv, c->row, com[a] + h * Lc[a] / c->mass, tg, w);
                    break;
                case SC_OBJ_COM_VELOCITY:
                    for (int v = 0; v < nv; v++) c->row[v] = lrow[a][v] / c->mass;
                    add_square(c, nv, c->row, Lc[a] / c->mass, tg, w);
                    break;
                default: break;
            }
        }
        if (ob->type == SC_OBJ_POINT || ob->type == SC_OBJ_POINT_VELOCITY) {
            set_velocity_rows(c, ob->nodes, ob->nnodes, R, nv);
            double p[3] = {0, 0, 0}, p0[3] = {0, 0, 0};
            for (int q = 0; q < ob->nnodes; q++)
                for (int a = 0; a < 3; a++) {
                    p[a] += s->x[3 * ob->nodes[q] + a] / ob->nnodes;
                    p0[a] += m->rest_pos[3 * ob->nodes[q] + a] / ob->nnodes;
                }
            const double *pa = ob->anchored && ob->type == SC_OBJ_POINT ? objective_anchor(c, k, s->t, p) : NULL;
            for (int a = 0; a < 3; a++) {
                const double w = ob->weight * ob->axes[a];
                double tg = objective_target(ob, a, s->t) + (pa ? pa[a] : ob->relative && ob->type == SC_OBJ_POINT ? p0[a] : 0);
                if (ob->type == SC_OBJ_POINT) {
                    for (int v = 0; v < nv; v++) c->row[v] = h * c->vrow[(size_t)a * nv + v];
                    add_square(c, nv, c->row, p[a] + h * c->vcst[a], tg, w);
                } else add_square(c, nv, c->vrow + (size_t)a * nv, c->vcst[a], tg, w);
            }
        }
        if (ob->type == SC_OBJ_KINETIC && ob->weight > 0) add_kinetic(c, R, nv, lrow, Lc, ob->weight);
        if (ob->type == SC_OBJ_REGULARISE) /* |(l_d - ref) / l0|^2, ref (1 - contraction) l0 or (relative) the last plan's */
            for (int j = 0; j < S; j++) {
                if (ob->segments && !ob->segments[j]) continue;
                const double l0 = c->mu->rest_len[j], ref = ob->relative ? s->ld[j] : (1 - ob->target[0]) * l0;
                c->H[(size_t)j * nv + j] += 2 * ob->weight / (l0 * l0);
                c->g[j] -= 2 * ob->weight * ref / (l0 * l0);
            }
    }
    /* a ridge relative to each variable's own curvature keeps H positive definite without
       biasing variables of another scale; a variable with (next to) none, such as lambda,
       gets it from a floor of 1e-3 of the mean curvature */
    double dmean = 0;
    int dpos = 0;
    for (int i = 0; i < nv; i++)
        if (c->H[(size_t)i * nv + i] > 0) {
            dmean += c->H[(size_t)i * nv + i];
            dpos++;
        }
    dmean = dpos ? dmean / dpos : 1;
    for (int i = 0; i < nv; i++) {
        double *hii = &c->H[(size_t)i * nv + i];
        *hii += c->o.ridge * fmax(*hii, 1e-3 * dmean);
    }
    /* bounds: min_ratio l0 <= l_d <= l0 (l0 <= l_d for a locked segment) */
    memset(c->Ain, 0, 2 * (size_t)S * nv * sizeof(double));
    for (int j = 0; j < S; j++) {
        c->Ain[(size_t)(2 * j) * nv + j] = 1;
        c->bin[2 * j] = shortest(c, j);
        c->Ain[(size_t)(2 * j + 1) * nv + j] = -1;
        c->bin[2 * j + 1] = -c->mu->rest_len[j];
    }
    /* complementarity per patch: its mean velocity after the step */
    for (int p = 0; p < P; p++) {
        set_velocity_rows(c, c->patch_nodes + c->patch_first[p], c->patch_first[p + 1] - c->patch_first[p], R, nv);
        const int fn = var_fn(c, p), k0 = PER_PATCH * p;
        sc_qpcc_contact *ct = &c->contacts[p];
        *ct = (sc_qpcc_contact){.normal = k0, .tangent = k0 + 1, .ntangent = NDIR, .slide = k0 + NDIR + 1};
        /* the gap after the step, gap + h v_y >= 0, divided by h so the rows keep the
           Delassus matrix's symmetry (Lemke's fallback needs it copositive) */
        double *row = c->prow + (size_t)k0 * nv;
        memcpy(row, c->vrow + nv, (size_t)nv * sizeof(double));
        c->poff[k0] = fmax(c->patch_gap[p], 0) / h + c->vcst[1]; /* the penalty contact's sink is not undone in one step */
        c->pvar[k0] = fn;
        for (int j = 0; j < NDIR; j++) { /* d_j . v + lambda >= 0 */
            const double ang = 2 * M_PI * j / NDIR, cs = cos(ang), sn = sin(ang);
            row = c->prow + (size_t)(k0 + 1 + j) * nv;
            for (int v = 0; v < nv; v++) row[v] = cs * c->vrow[v] + sn * c->vrow[2 * nv + v];
            row[fn + NDIR + 1] += 1;
            c->poff[k0 + 1 + j] = cs * c->vcst[0] + sn * c->vcst[2];
            c->pvar[k0 + 1 + j] = fn + 1 + j;
        }
        row = c->prow + (size_t)(k0 + NDIR + 1) * nv; /* mu f_n - sum f_t / a_t >= 0 */
        memset(row, 0, (size_t)nv * sizeof(double));
        row[fn] = c->o.mu;
        for (int j = 0; j < NDIR; j++) { /* a_t: the body's anisotropy along the friction direction */
            double f[3];
            unit_impulse(1 + j, f);
            row[fn + 1 + j] = -1 / sc_softbody_friction_scale(&s->o, f);
        }
        c->poff[k0 + NDIR + 1] = 0;
        c->pvar[k0 + NDIR + 1] = fn + NDIR + 1;
    }
    /* the QP's arrays are laid out for nv columns (row stride nv) */
    sc_qpcc q = {.base = {.n = nv, .nin = 2 * S, .H = c->H, .g = c->g, .Ain = c->Ain, .bin = c->bin},
                 .npairs = PER_PATCH * P,
                 .var = c->pvar,
                 .row = c->prow,
                 .off = c->poff,
                 .ncontacts = P,
                 .contacts = c->contacts};
    /* [T12]'s static start, with the patches not yet touching starting broken */
    sc_qpcc_static_state(&q, c->start);
    for (int p = 0; p < P; p++)
        if (c->patch_gap[p] > 0) {
            const sc_qpcc_contact *ct = &c->contacts[p];
            c->start[ct->normal] = 0;
            memset(c->start + ct->tangent, 0, NDIR);
            c->start[ct->slide] = 1;
        }
    sc_qpcc_result res;
    sc_err qerr;
    int rc =
        c->o.qpcc ? sc_qpcc_solve(&q, c->qw, c->start, c->z, c->state, &res, &qerr) : sc_qpcc_solve_state(&q, c->qw, c->start, c->z, &res, &qerr);
    if (rc == SC_EIO || rc == SC_EINPUT) return sc_fail(err, rc, "control: %s", qerr.msg);
    if (rc) {
        rep->failed = 1;
        return SC_OK;
    }
    if (!c->o.qpcc) memcpy(c->state, c->start, (size_t)q.npairs);
    rep->objective = res.objective;
    for (int a = 0; a < 3; a++) {
        rep->planned_dL[a] = Lc[a] - L[a];
        rep->planned_dH[a] = Hc[a] - Hm[a];
        for (int v = 0; v < nv; v++) {
            rep->planned_dL[a] += lrow[a][v] * c->z[v];
            rep->planned_dH[a] += hrow[a][v] * c->z[v];
        }
    }
    rep->nodes = res.nodes;
    for (int p = 0; p < P; p++) {
        rep->broken += c->state[c->contacts[p].normal] == 0;
        rep->sliding += c->state[c->contacts[p].normal] == 1 && c->state[c->contacts[p].slide] == 1;
    }
    for (int j = 0; j < S; j++) s->ld[j] = fmin(c->mu->rest_len[j], fmax(shortest(c, j), c->z[j]));
    return SC_OK;
}

/* The reduced body: floating frame + modes (body.h). */
#include "reduced/body.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "mesh/tetmesh.h"

static double modal_response(const sc_reduced_model *rm, int k);

void sc_reduced_default_opts(sc_reduced_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dt = 5e-3; /* ten times the full FEM's step: the modes and the contact need no bound, the drag a loose one */
    o->scheme = SC_REDUCED_MIDPOINT;
    o->gravity[1] = -9.81;
    o->rayleigh_beta = 2e-4; /* as the boneless body's (muscle/softbody.h) */
    o->ground.mu = 0.8;
    o->ground.iterations = 10;
    o->ground.ground.normal = sc_v3(0, 1, 0);
    o->max_speed = 50;
}

void sc_reduced_model_free(sc_reduced_model *rm)
{
    if (!rm) return;
    free(rm->bound);
    free(rm->faces);
    free(rm->bound_rest);
    free(rm->bound_phi);
    free(rm->centrifugal);
    free(rm->modal_damping);
    memset(rm, 0, sizeof *rm);
}

static int check_opts(const sc_reduced_opts *o, sc_err *err)
{
    const sc_reduced_ground_opts *g = &o->ground;
    if (!(o->dt > 0 && o->dt < 1)) return sc_fail(err, SC_EINPUT, "reduced body: dt %g s must be in (0, 1)", o->dt);
    if (o->scheme != SC_REDUCED_MIDPOINT && o->scheme != SC_REDUCED_BACKWARD_EULER)
        return sc_fail(err, SC_EINPUT, "reduced body: unknown integration scheme %d", o->scheme);
    if (!(o->rayleigh_alpha >= 0 && o->rayleigh_beta >= 0 && o->rayleigh_alpha < INFINITY && o->rayleigh_beta < INFINITY))
        return sc_fail(err, SC_EINPUT, "reduced body: Rayleigh damping alpha %g, beta %g must be finite and >= 0", o->rayleigh_alpha,
                       o->rayleigh_beta);
    if (!(g->mu >= 0 && g->mu < INFINITY) || g->iterations < 1 || g->iterations > 1000)
        return sc_fail(err, SC_EINPUT, "reduced body: ground friction mu %g must be finite and >= 0, iterations %d in 1..1000", g->mu, g->iterations);
    if (!(o->max_speed > 0)) return sc_fail(err, SC_EINPUT, "reduced body: max_speed %g m/s must be > 0", o->max_speed);
    for (int c = 0; c < 3; c++)
        if (!isfinite(o->gravity[c])) return sc_fail(err, SC_EINPUT, "reduced body: gravity[%d] is not finite", c);
    return sc_fluid_check(&o->fluid, err);
}

static uint64_t model_hash(const sc_reduced_model *rm)
{
    const sc_reduced_basis *b = rm->b;
    const sc_reduced_opts *o = &rm->o;
    uint64_t h = sc_hash_i64(SC_HASH_INIT, b->nmodes);
    h = sc_hash_bytes(h, b->eigenvalue, (size_t)b->nmodes * sizeof(double));
    h = sc_hash_bytes(h, b->phi, 3 * (size_t)b->nnodes * (size_t)b->nmodes * sizeof(double));
    const double f[] = {o->dt, o->gravity[0], o->gravity[1], o->gravity[2], o->rayleigh_alpha, o->rayleigh_beta, o->ground.mu, o->max_speed};
    h = sc_hash_bytes(h, f, sizeof f);
    h = sc_hash_i64(sc_hash_i64(sc_hash_i64(h, o->scheme), o->ground.enabled), o->ground.iterations);
    h = sc_fluid_hash(h, &o->fluid);
    return sc_hash_bytes(h, &o->ground.ground, sizeof o->ground.ground);
}

int sc_reduced_model_create(const sc_model *m, const sc_reduced_basis *b, const sc_reduced_opts *o, sc_reduced_model *rm, sc_err *err)
{
    memset(rm, 0, sizeof *rm);
    if (b->nnodes != m->nnodes || b->nmodes < 1)
        return sc_fail(err, SC_EINPUT, "reduced body: the basis has %d nodes and %d modes, the character %d nodes", b->nnodes, b->nmodes, m->nnodes);
    int rc = check_opts(o, err);
    if (rc) return rc;
    rm->m = m;
    rm->b = b;
    rm->o = *o;
    const int K = b->nmodes, nn = m->nnodes;
    rm->nmodes = K;
    sc_tetmesh tm = {m->nnodes, m->ntets, m->rest_pos, m->tets};
    if ((rm->nfaces = sc_tetmesh_boundary(&tm, &rm->faces, err)) < 0) return SC_EIO;
    char *on = calloc((size_t)nn, 1);
    rm->bound = malloc((size_t)nn * sizeof(int));
    rm->centrifugal = calloc(9 * (size_t)K, sizeof(double));
    rm->modal_damping = malloc((size_t)K * sizeof(double));
    if (!on || !rm->bound || !rm->centrifugal || !rm->modal_damping) {
        free(on);
        sc_reduced_model_free(rm);
        return sc_fail(err, SC_EIO, "reduced body: out of memory");
    }
    for (int k = 0; k < 3 * rm->nfaces; k++) on[rm->faces[k]] = 1;
    for (int i = 0; i < nn; i++)
        if (on[i]) rm->bound[rm->nbound++] = i;
    free(on);
    rm->bound_rest = malloc(3 * (size_t)(rm->nbound + 1) * sizeof(double));
    rm->bound_phi = malloc(3 * (size_t)(rm->nbound + 1) * (size_t)K * sizeof(double));
    if (!rm->bound_rest || !rm->bound_phi) {
        sc_reduced_model_free(rm);
        return sc_fail(err, SC_EIO, "reduced body: out of memory");
    }
    for (int j = 0; j < rm->nbound; j++) {
        const int i = rm->bound[j];
        for (int c = 0; c < 3; c++) {
            rm->bound_rest[3 * j + c] = m->rest_pos[3 * i + c] - b->com[c];
            memcpy(rm->bound_phi + (3 * (size_t)j + c) * K, b->phi + (3 * (size_t)i + c) * K, (size_t)K * sizeof(double));
        }
    }
    for (int i = 0; i < nn; i++)
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) {
                const double mx = m->node_mass[i] * (m->rest_pos[3 * i + c] - b->com[c]);
                const double *row = b->phi + (3 * (size_t)i + a) * K;
                for (int k = 0; k < K; k++) rm->centrifugal[9 * k + 3 * a + c] += row[k] * mx;
            }
    for (int k = 0; k < K; k++) rm->modal_damping[k] = o->rayleigh_alpha + o->rayleigh_beta * b->eigenvalue[k];
    sc_mat3 I0, inv;
    memcpy(I0.m, b->inertia, sizeof I0.m);
    if (!sc_m3_inverse(I0, &inv)) {
        sc_reduced_model_free(rm);
        return sc_fail(err, SC_EINPUT, "reduced body: the rest inertia is singular (a body with no extent)");
    }
    memcpy(rm->inertia_inv, inv.m, sizeof inv.m);
    rm->hash = model_hash(rm);
    return SC_OK;
}

void sc_reduced_state_free(sc_reduced_state *s)
{
    if (!s) return;
    free(s->q);
    free(s->qd);
    free(s->control);
    free(s->x);
    free(s->v);
    free(s->f);
    free(s->gen);
    free(s->qd1);
    free(s->resp);
    free(s->cand);
    free(s->cgap);
    free(s->cnormal);
    free(s->cimpulse);
    free(s->cdelassus);
    free(s->cjac);
    free(s->cgain);
    free(s->cu);
    memset(s, 0, sizeof *s);
}

void sc_reduced_state_reset(const sc_reduced_model *rm, sc_reduced_state *s)
{
    const int K = rm->nmodes;
    s->t = 0;
    s->step = 0;
    memcpy(s->pos, rm->b->com, sizeof s->pos);
    s->rot = sc_q_identity();
    memset(s->vel, 0, sizeof s->vel);
    memset(s->ang_mom, 0, sizeof s->ang_mom);
    memset(s->omega, 0, sizeof s->omega);
    memset(s->q, 0, (size_t)K * sizeof(double));
    memset(s->qd, 0, (size_t)K * sizeof(double));
    memset(s->control, 0, (size_t)K * sizeof(double));
    s->contacts = 0;
    memset(s->drag, 0, sizeof s->drag);
    memset(s->ground_force, 0, sizeof s->ground_force);
}

int sc_reduced_state_create(const sc_reduced_model *rm, sc_reduced_state *s, sc_err *err)
{
    memset(s, 0, sizeof *s);
    const size_t K = (size_t)rm->nmodes, n3 = 3 * (size_t)rm->m->nnodes;
    s->q = malloc(K * sizeof(double));
    s->qd = malloc(K * sizeof(double));
    s->control = malloc(K * sizeof(double));
    s->x = calloc(n3, sizeof(double));
    s->v = calloc(n3, sizeof(double));
    s->f = calloc(n3, sizeof(double));
    s->gen = malloc(K * sizeof(double));
    s->qd1 = malloc(K * sizeof(double));
    s->resp = malloc(K * sizeof(double));
    const size_t nb = (size_t)rm->nbound + 1;
    s->cand = malloc(nb * sizeof(int));
    s->cgap = malloc(nb * sizeof(double));
    s->cnormal = malloc(3 * nb * sizeof(double));
    s->cimpulse = malloc(4 * nb * sizeof(double));
    s->cdelassus = malloc(9 * nb * sizeof(double));
    s->cjac = malloc(3 * (6 + K) * nb * sizeof(double));
    s->cgain = malloc(3 * (6 + K) * nb * sizeof(double));
    s->cu = malloc((6 + K) * sizeof(double));
    if (!s->q || !s->qd || !s->control || !s->x || !s->v || !s->f || !s->gen || !s->qd1 || !s->resp || !s->cand || !s->cgap || !s->cnormal ||
        !s->cimpulse || !s->cdelassus || !s->cjac || !s->cgain || !s->cu) {
        sc_reduced_state_free(s);
        return sc_fail(err, SC_EIO, "reduced body: out of memory for the state");
    }
    for (size_t k = 0; k < K; k++) s->resp[k] = modal_response(rm, (int)k);
    sc_reduced_state_reset(rm, s);
    return SC_OK;
}

/* w = R I0^-1 R^T L */
static sc_vec3 angular_velocity(const sc_reduced_model *rm, sc_mat3 R, sc_vec3 L)
{
    sc_mat3 inv;
    memcpy(inv.m, rm->inertia_inv, sizeof inv.m);
    return sc_m3_mulv(R, sc_m3_mulv(inv, sc_m3_mulv_t(R, L)));
}

/* Node i's frame-local offset Xbar_i + Phi_i q (row: Phi's 3 rows of the node). */
static sc_vec3 local_offset(const double *rest, const double *row, const double *q, int K)
{
    double l[3];
    for (int c = 0; c < 3; c++) l[c] = rest[c] + sc_dot(K, row + (size_t)c * K, q);
    return sc_v3_load(l);
}

/* The boundary nodes' positions and velocities into s->x, s->v (their rows) and zero forces. */
static void boundary_kinematics(const sc_reduced_model *rm, sc_reduced_state *s, sc_mat3 R)
{
    const int K = rm->nmodes;
    const sc_vec3 wb = sc_m3_mulv_t(R, sc_v3_load(s->omega)); /* v_i = v + R (l' + w_b x l): one rotation per vector */
    const double *A = &R.m[0][0];
    for (int j = 0; j < rm->nbound; j++) {
        const int i = rm->bound[j];
        const double *row = rm->bound_phi + 3 * (size_t)j * K, *rest = rm->bound_rest + 3 * j;
        double l[3], u[3];
        for (int c = 0; c < 3; c++) l[c] = rest[c] + sc_dot(K, row + (size_t)c * K, s->q);
        for (int c = 0; c < 3; c++) u[c] = sc_dot(K, row + (size_t)c * K, s->qd);
        u[0] += wb.y * l[2] - wb.z * l[1];
        u[1] += wb.z * l[0] - wb.x * l[2];
        u[2] += wb.x * l[1] - wb.y * l[0];
        for (int c = 0; c < 3; c++) {
            s->x[3 * i + c] = s->pos[c] + A[3 * c] * l[0] + A[3 * c + 1] * l[1] + A[3 * c + 2] * l[2];
            s->v[3 * i + c] = s->vel[c] + A[3 * c] * u[0] + A[3 * c + 1] * u[1] + A[3 * c + 2] * u[2];
            s->f[3 * i + c] = 0;
        }
    }
}

/* The response of mode k's rate to a generalised impulse J_k (N s/sqrt(kg)): the implicit update
   divides by 1 + e_k (midpoint) or 1 + h d_k + h^2 lambda_k (backward Euler). */
static double modal_response(const sc_reduced_model *rm, int k)
{
    const double h = rm->o.dt, lam = rm->b->eigenvalue[k], d = rm->modal_damping[k];
    if (rm->o.scheme == SC_REDUCED_MIDPOINT) return 1 / (1 + 0.5 * h * d + 0.25 * h * h * lam);
    return 1 / (1 + h * d + h * h * lam);
}

/* The end-of-step velocities the contact solver changes: the frame's, its angular momentum
   (and velocity, through I_w^-1 = R I0^-1 R^T of the step's start) and the modes' rates. */
typedef struct predicted {
    sc_vec3 vel, L, w;
    sc_mat3 R, inertia_inv; /* world */
    double *qd1;
} predicted;

/* node j's (boundary index) velocity at the end of the step, r its offset from the centre */
static sc_vec3 node_velocity(const sc_reduced_model *rm, const predicted *p, int j, sc_vec3 r)
{
    const int K = rm->nmodes;
    const double *row = rm->bound_phi + 3 * (size_t)j * K;
    const sc_vec3 ld = sc_v3(sc_dot(K, row, p->qd1), sc_dot(K, row + K, p->qd1), sc_dot(K, row + 2 * (size_t)K, p->qd1));
    return sc_v3_add(sc_v3_add(p->vel, sc_v3_cross(p->w, r)), sc_m3_mulv(p->R, ld));
}

/* Contact candidate j (boundary index) at offset r: its velocity is J u with u = (v, w, q'1), the
   end-of-step velocities (6 + K), and an impulse P at it changes u by G P: J = [I, -[r], R Phi_j]
   (3 x (6 + K), row-major), G = [I / M; I_w^-1 [r]; diag(resp) Phi_j^T R^T] ((6 + K) x 3). W = J G
   is the node's inverse effective mass (Delassus) matrix. */
static void contact_jacobian(const sc_reduced_model *rm, const predicted *p, const double *resp, int j, sc_vec3 r, double *J, double *G, double *W)
{
    const int K = rm->nmodes, nu = 6 + K;
    const double *row = rm->bound_phi + 3 * (size_t)j * K;
    const sc_mat3 X = sc_m3_skew(r), IX = sc_m3_mul(p->inertia_inv, X);
    for (int c = 0; c < 3; c++) {
        double *Jc = J + (size_t)c * nu;
        for (int a = 0; a < 3; a++) {
            Jc[a] = a == c;
            Jc[3 + a] = X.m[a][c]; /* (w x r)_c = -([r] w)_c = ([r]^T w)_c */
            G[(size_t)a * 3 + c] = (a == c) / rm->b->mass;
            G[(size_t)(3 + a) * 3 + c] = IX.m[a][c];
        }
        for (int k = 0; k < K; k++) {
            const double world = p->R.m[c][0] * row[k] + p->R.m[c][1] * row[K + k] + p->R.m[c][2] * row[2 * K + k];
            Jc[6 + k] = world;
            G[(size_t)(6 + k) * 3 + c] = resp[k] * world;
        }
    }
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) {
            double sum = 0;
            for (int k = 0; k < nu; k++) sum += J[(size_t)a * nu + k] * G[(size_t)k * 3 + c];
            W[3 * a + c] = sum;
        }
}

static sc_vec3 mul3(const double *W, sc_vec3 v)
{
    return sc_v3(W[0] * v.x + W[1] * v.y + W[2] * v.z, W[3] * v.x + W[4] * v.y + W[5] * v.z, W[6] * v.x + W[7] * v.y + W[8] * v.z);
}

/* Ground contact at the velocity level (body.h): projected Gauss-Seidel over the boundary nodes
   that would end the step below the ground. */
static void ground_contact(const sc_reduced_model *rm, sc_reduced_state *s, predicted *p)
{
    const sc_reduced_ground_opts *g = &rm->o.ground;
    const int K = rm->nmodes, nu = 6 + K;
    const double h = rm->o.dt;
    const sc_vec3 c = sc_v3_load(s->pos);
    int n = 0;
    for (int j = 0; j < rm->nbound; j++) {
        const int i = rm->bound[j];
        sc_vec3 nrm;
        const sc_vec3 x = sc_v3_load(s->x + 3 * i), r = sc_v3_sub(x, c);
        const double gap = sc_ground_height(&g->ground, x, &nrm);
        if (gap >= 0 && gap + h * sc_v3_dot(node_velocity(rm, p, j, r), nrm) >= 0) continue;
        s->cand[n] = j;
        s->cgap[n] = gap;
        sc_v3_store(s->cnormal + 3 * n, nrm);
        memset(s->cimpulse + 4 * n, 0, 4 * sizeof(double));
        contact_jacobian(rm, p, s->resp, j, r, s->cjac + 3 * (size_t)nu * n, s->cgain + 3 * (size_t)nu * n, s->cdelassus + 9 * n);
        n++;
    }
    if (!n) return;
    double *u = s->cu; /* (v, w, q'1) */
    sc_v3_store(u, p->vel);
    sc_v3_store(u + 3, p->w);
    memcpy(u + 6, p->qd1, (size_t)K * sizeof(double));
    double largest = 0;
    for (int it = 0; it < g->iterations; it++) {
        double change = 0;
        for (int k = 0; k < n; k++) {
            const double *J = s->cjac + 3 * (size_t)nu * k, *G = s->cgain + 3 * (size_t)nu * k, *W = s->cdelassus + 9 * k;
            const sc_vec3 nrm = sc_v3_load(s->cnormal + 3 * k);
            double *acc = s->cimpulse + 4 * k; /* normal, then the tangential impulse vector */
            /* reach the ground at the step's end; a node below it rises by a fifth of its depth per step */
            const double want = s->cgap[k] >= 0 ? -s->cgap[k] / h : -0.2 * s->cgap[k] / h;
            sc_vec3 v = sc_v3(sc_dot(nu, J, u), sc_dot(nu, J + nu, u), sc_dot(nu, J + 2 * (size_t)nu, u));
            const double pn = fmax(0, acc[0] + (want - sc_v3_dot(v, nrm)) / sc_v3_dot(nrm, mul3(W, nrm)));
            const sc_vec3 dn = sc_v3_scale(nrm, pn - acc[0]);
            v = sc_v3_add(v, mul3(W, dn)); /* velocities are linear in the impulses */
            /* Coulomb: stop the sliding, within mu times the normal impulse */
            const sc_vec3 vt = sc_v3_axpy(-sc_v3_dot(v, nrm), nrm, v), old = sc_v3(acc[1], acc[2], acc[3]);
            const double st = sc_v3_norm(vt);
            sc_vec3 pt = old;
            if (st > 0) {
                const sc_vec3 t = sc_v3_scale(vt, 1 / st);
                pt = sc_v3_axpy(-st / sc_v3_dot(t, mul3(W, t)), t, pt);
            }
            const double ptn = sc_v3_norm(pt), cap = g->mu * pn;
            if (ptn > cap) pt = sc_v3_scale(pt, cap / ptn);
            const sc_vec3 d = sc_v3_add(dn, sc_v3_sub(pt, old));
            for (int q = 0; q < nu; q++) u[q] += G[3 * q] * d.x + G[3 * q + 1] * d.y + G[3 * q + 2] * d.z;
            acc[0] = pn;
            sc_v3_store(acc + 1, pt);
            change = fmax(change, sc_v3_norm(d));
            largest = fmax(largest, pn);
        }
        if (change <= 1e-6 * largest) break; /* converged: a sweep changed no impulse by more than a millionth */
    }
    p->vel = sc_v3_load(u);
    p->w = sc_v3_load(u + 3);
    memcpy(p->qd1, u + 6, (size_t)K * sizeof(double));
    sc_vec3 total = sc_v3(0, 0, 0);
    for (int k = 0; k < n; k++) {
        const double *acc = s->cimpulse + 4 * k;
        const sc_vec3 P = sc_v3_add(sc_v3_scale(sc_v3_load(s->cnormal + 3 * k), acc[0]), sc_v3_load(acc + 1));
        const int i = rm->bound[s->cand[k]];
        p->L = sc_v3_add(p->L, sc_v3_cross(sc_v3_sub(sc_v3_load(s->x + 3 * i), c), P));
        total = sc_v3_add(total, P);
        s->contacts += acc[0] > 0;
    }
    sc_v3_store(s->ground_force, sc_v3_scale(total, 1 / h));
}

int sc_reduced_step(const sc_reduced_model *rm, sc_reduced_state *s, sc_err *err)
{
    const sc_reduced_opts *o = &rm->o;
    const sc_reduced_basis *b = rm->b;
    const int K = rm->nmodes;
    const double h = o->dt;
    const sc_mat3 R = sc_q_to_m3(s->rot);
    s->contacts = 0;
    memset(s->drag, 0, sizeof s->drag);
    memset(s->ground_force, 0, sizeof s->ground_force);
    const int forced = sc_fluid_enabled(&o->fluid) || o->ground.enabled;
    if (forced) boundary_kinematics(rm, s, R); /* without drag or ground no node is needed: the step is O(K) */
    if (sc_fluid_enabled(&o->fluid)) {         /* [P17] 4.2.2 on the reconstructed boundary faces */
        sc_vec3 drag;
        sc_fluid_forces(&o->fluid, rm->nfaces, rm->faces, s->x, s->v, s->f, &drag);
        sc_v3_store(s->drag, drag);
    }
    /* project the nodal forces on the frame (force, torque about c) and the modes (Phi^T R^T f) */
    const sc_vec3 c = sc_v3_load(s->pos);
    sc_vec3 F = sc_v3(0, 0, 0), tau = sc_v3(0, 0, 0);
    memcpy(s->gen, s->control, (size_t)K * sizeof(double));
    for (int j = 0; j < rm->nbound && forced; j++) {
        const int i = rm->bound[j];
        const sc_vec3 f = sc_v3_load(s->f + 3 * i);
        if (f.x == 0 && f.y == 0 && f.z == 0) continue;
        F = sc_v3_add(F, f);
        tau = sc_v3_add(tau, sc_v3_cross(sc_v3_sub(sc_v3_load(s->x + 3 * i), c), f));
        const double *A = &R.m[0][0], *row = rm->bound_phi + 3 * (size_t)j * K;
        const double fl[3] = {A[0] * f.x + A[3] * f.y + A[6] * f.z, A[1] * f.x + A[4] * f.y + A[7] * f.z, A[2] * f.x + A[5] * f.y + A[8] * f.z};
        for (int k = 0; k < K; k++) s->gen[k] += row[k] * fl[0] + row[K + k] * fl[1] + row[2 * K + k] * fl[2];
    }
    /* the centrifugal load of the rest shape on the modes, w in the body frame (body.h) */
    const sc_vec3 wb = sc_m3_mulv_t(R, sc_v3_load(s->omega));
    const double w2 = sc_v3_dot(wb, wb), wv[3] = {wb.x, wb.y, wb.z};
    if (w2 > 0)
        for (int k = 0; k < K; k++) {
            const double *S = rm->centrifugal + 9 * k;
            double wsw = 0;
            for (int a = 0; a < 3; a++)
                for (int d = 0; d < 3; d++) wsw += wv[a] * S[3 * a + d] * wv[d];
            s->gen[k] += w2 * (S[0] + S[4] + S[8]) - wsw;
        }
    /* the end-of-step velocities under these forces: the frame by symplectic Euler, each mode a
       damped oscillator implicit in its stiffness and damping */
    predicted p;
    p.R = R;
    sc_mat3 inv;
    memcpy(inv.m, rm->inertia_inv, sizeof inv.m);
    p.inertia_inv = sc_m3_mul(R, sc_m3_mul_nt(inv, R));
    p.vel = sc_v3_add(sc_v3_load(s->vel), sc_v3_scale(sc_v3_add(sc_v3_scale(F, 1 / b->mass), sc_v3_load(o->gravity)), h));
    p.L = sc_v3_axpy(h, tau, sc_v3_load(s->ang_mom));
    p.w = sc_m3_mulv(p.inertia_inv, p.L);
    p.qd1 = s->qd1;
    for (int k = 0; k < K; k++) {
        const double lam = b->eigenvalue[k], d = rm->modal_damping[k], q = s->q[k], qd = s->qd[k];
        if (o->scheme == SC_REDUCED_MIDPOINT) {
            const double e = 0.5 * h * d + 0.25 * h * h * lam;
            p.qd1[k] = (qd * (1 - e) + h * (s->gen[k] - lam * q)) / (1 + e);
        } else p.qd1[k] = (qd + h * (s->gen[k] - lam * q)) / (1 + h * d + h * h * lam);
    }
    if (o->ground.enabled) ground_contact(rm, s, &p);
    /* advance: the frame, the rotation through the angular momentum, the modes */
    for (int a = 0; a < 3; a++) {
        s->vel[a] = sc_v3_get(p.vel, a);
        s->pos[a] += h * s->vel[a];
    }
    sc_v3_store(s->ang_mom, p.L);
    s->rot = sc_q_normalize(sc_q_mul(sc_q_exp(sc_v3_scale(p.w, h)), s->rot));
    sc_v3_store(s->omega, angular_velocity(rm, sc_q_to_m3(s->rot), p.L));
    double fastest = 0;
    for (int k = 0; k < K; k++) {
        s->q[k] += o->scheme == SC_REDUCED_MIDPOINT ? 0.5 * h * (s->qd[k] + p.qd1[k]) : h * p.qd1[k];
        s->qd[k] = p.qd1[k];
        fastest = fmax(fastest, fabs(p.qd1[k]));
    }
    s->t += h;
    s->step++;
    const double speed = sc_v3_norm(p.vel), spin = sc_v3_norm(sc_v3_load(s->omega));
    if (!(speed <= o->max_speed) || !(fastest < INFINITY) || !(spin < INFINITY))
        return sc_fail(err, SC_ENUMERIC,
                       "reduced body: step %ld (t = %.4f s): the frame moves at %.3g m/s and spins at %.3g rad/s, the fastest mode rate %.3g",
                       s->step, s->t, speed, spin, fastest);
    return SC_OK;
}

void sc_reduced_nodes(const sc_reduced_model *rm, const sc_reduced_state *s, double *x, double *v)
{
    const sc_model *m = rm->m;
    const sc_reduced_basis *b = rm->b;
    const int K = rm->nmodes;
    const sc_mat3 R = sc_q_to_m3(s->rot);
    const sc_vec3 c = sc_v3_load(s->pos), vel = sc_v3_load(s->vel), w = sc_v3_load(s->omega);
    for (int i = 0; i < m->nnodes; i++) {
        const double *row = b->phi + 3 * (size_t)i * K;
        const double rest[3] = {m->rest_pos[3 * i] - b->com[0], m->rest_pos[3 * i + 1] - b->com[1], m->rest_pos[3 * i + 2] - b->com[2]};
        const sc_vec3 r = sc_m3_mulv(R, local_offset(rest, row, s->q, K));
        sc_v3_store(x + 3 * i, sc_v3_add(c, r));
        if (v) {
            const double ld[3] = {sc_dot(K, row, s->qd), sc_dot(K, row + K, s->qd), sc_dot(K, row + 2 * (size_t)K, s->qd)};
            sc_v3_store(v + 3 * i, sc_v3_add(sc_v3_add(vel, sc_v3_cross(w, r)), sc_m3_mulv(R, sc_v3_load(ld))));
        }
    }
}

void sc_reduced_set_nodes(const sc_reduced_model *rm, sc_reduced_state *s, const double *x, const double *v)
{
    const sc_model *m = rm->m;
    const sc_reduced_basis *b = rm->b;
    const int K = rm->nmodes, nn = m->nnodes;
    double c[3] = {0, 0, 0}, p[3] = {0, 0, 0};
    for (int i = 0; i < nn; i++)
        for (int a = 0; a < 3; a++) {
            c[a] += m->node_mass[i] * x[3 * i + a] / b->mass;
            if (v) p[a] += m->node_mass[i] * v[3 * i + a];
        }
    sc_mat3 F = sc_m3_zero(), R, S;
    for (int i = 0; i < nn; i++)
        for (int a = 0; a < 3; a++)
            for (int d = 0; d < 3; d++) F.m[a][d] += m->node_mass[i] * (x[3 * i + a] - c[a]) * (m->rest_pos[3 * i + d] - b->com[d]);
    sc_polar(F, &R, &S);
    memcpy(s->pos, c, sizeof c);
    s->rot = sc_q_normalize(sc_q_from_m3(R));
    R = sc_q_to_m3(s->rot);
    sc_vec3 L = sc_v3(0, 0, 0);
    for (int a = 0; a < 3; a++) s->vel[a] = p[a] / b->mass;
    if (v)
        for (int i = 0; i < nn; i++)
            L = sc_v3_add(L, sc_v3_scale(sc_v3_cross(sc_v3_sub(sc_v3_load(x + 3 * i), sc_v3_load(c)), sc_v3_load(v + 3 * i)), m->node_mass[i]));
    sc_v3_store(s->ang_mom, L);
    const sc_vec3 w = angular_velocity(rm, R, L);
    sc_v3_store(s->omega, w);
    memset(s->q, 0, (size_t)K * sizeof(double));
    memset(s->qd, 0, (size_t)K * sizeof(double));
    for (int i = 0; i < nn; i++) {
        const sc_vec3 r = sc_v3_sub(sc_v3_load(x + 3 * i), sc_v3_load(c));
        const sc_vec3 u = sc_v3_sub(sc_m3_mulv_t(R, r),
                                    sc_v3(m->rest_pos[3 * i] - b->com[0], m->rest_pos[3 * i + 1] - b->com[1], m->rest_pos[3 * i + 2] - b->com[2]));
        sc_vec3 ud = sc_v3(0, 0, 0);
        if (v) ud = sc_m3_mulv_t(R, sc_v3_sub(sc_v3_sub(sc_v3_load(v + 3 * i), sc_v3_load(s->vel)), sc_v3_cross(w, r)));
        const double mi = m->node_mass[i], uu[3] = {u.x, u.y, u.z}, vv[3] = {ud.x, ud.y, ud.z};
        for (int a = 0; a < 3; a++) {
            const double *row = b->phi + (3 * (size_t)i + a) * K;
            for (int k = 0; k < K; k++) {
                s->q[k] += row[k] * mi * uu[a];
                s->qd[k] += row[k] * mi * vv[a];
            }
        }
    }
}

void sc_reduced_diagnostics(const sc_reduced_model *rm, const sc_reduced_state *s, sc_reduced_diag *d)
{
    const sc_reduced_basis *b = rm->b;
    memset(d, 0, sizeof *d);
    d->mass = b->mass;
    for (int a = 0; a < 3; a++) {
        d->linear[a] = b->mass * s->vel[a];
        d->angular[a] = s->ang_mom[a];
        d->kinetic += 0.5 * b->mass * s->vel[a] * s->vel[a] + 0.5 * s->omega[a] * s->ang_mom[a];
        d->potential -= b->mass * rm->o.gravity[a] * s->pos[a];
    }
    for (int k = 0; k < rm->nmodes; k++) {
        d->kinetic += 0.5 * s->qd[k] * s->qd[k];
        d->elastic += 0.5 * b->eigenvalue[k] * s->q[k] * s->q[k];
    }
}

uint64_t sc_reduced_state_hash(const sc_reduced_model *rm, const sc_reduced_state *s)
{
    const size_t K = (size_t)rm->nmodes;
    uint64_t h = sc_hash_f64(sc_hash_i64(rm->hash, s->step), s->t);
    h = sc_hash_bytes(h, s->pos, sizeof s->pos);
    h = sc_hash_bytes(h, &s->rot, sizeof s->rot);
    h = sc_hash_bytes(h, s->vel, sizeof s->vel);
    h = sc_hash_bytes(h, s->ang_mom, sizeof s->ang_mom);
    h = sc_hash_bytes(h, s->q, K * sizeof(double));
    return sc_hash_bytes(h, s->qd, K * sizeof(double));
}

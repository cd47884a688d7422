#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "model/world.h"
#include "sim/contact.h"

void sc_contact_default_opts(sc_contact_opts *o)
{
    memset(o, 0, sizeof *o);
    o->enabled = 1;
    o->stiffness = 2e4;
    o->damping = 30;
    o->mu = SC_DEFAULT_FRICTION;
    o->tangent_stiffness = 2e4;
    o->tangent_damping = 30;
    o->ground.normal = sc_v3(0, 1, 0);
}

/* u(i, j, seed) in [0, 1): one Philox block keyed by the seed, counted by the vertex (53 bits,
 * as sc_rng_uniform) */
static inline double tile_uniform(uint64_t seed, long i, long j)
{
    const uint64_t a = (uint64_t)i, b = (uint64_t)j;
    const uint32_t ctr[4] = {(uint32_t)a, (uint32_t)(a >> 32), (uint32_t)b, (uint32_t)(b >> 32)}, key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    sc_philox4x32_10(ctr, key, out);
    return (double)((((uint64_t)out[0] << 32) | out[1]) >> 11) * 0x1.0p-53;
}

static inline int has_tiles(const sc_ground *g) { return g->tile_size > 0 && g->tile_height > 0; }

double sc_ground_tile_vertex(const sc_ground *g, long i, long j) { return has_tiles(g) ? g->tile_height * tile_uniform(g->tile_seed, i, j) : 0; }

int sc_ground_is_flat(const sc_ground *g) { return !(g->bump_length > 0 && g->bump_height != 0) && !has_tiles(g) && g->nboxes == 0; }

sc_vec3 sc_ground_box_corner(const sc_ground *g, int b, int k)
{
    return sc_v3(k & 1 ? g->box_hi[b][0] : g->box_lo[b][0], k & 2 ? g->box_hi[b][1] : g->box_lo[b][1], k & 4 ? g->box_hi[b][2] : g->box_lo[b][2]);
}

double sc_ground_max_rise(const sc_ground *g)
{
    double rise = (g->bump_length > 0 ? fabs(g->bump_height) : 0) + (has_tiles(g) ? g->tile_height : 0);
    for (int b = 0; b < g->nboxes; b++)
        for (int k = 0; k < 8; k++) { /* its highest corner */
            rise = fmax(rise, sc_v3_dot(g->normal, sc_ground_box_corner(g, b, k)) - g->offset);
        }
    return rise;
}

/* Signed distance from p to box b (negative inside: to the nearest face) and its outward normal. */
static double box_distance(const sc_ground *g, int b, sc_vec3 p, sc_vec3 *normal)
{
    const double q[3] = {p.x, p.y, p.z};
    double out[3], d_in = -INFINITY, o2 = 0;
    int face = 0;
    for (int a = 0; a < 3; a++) {
        const double c = 0.5 * (g->box_lo[b][a] + g->box_hi[b][a]), e = 0.5 * (g->box_hi[b][a] - g->box_lo[b][a]), r = q[a] - c;
        const double d = fabs(r) - e;
        out[a] = d > 0 ? copysign(d, r) : 0;
        o2 += out[a] * out[a];
        if (d > d_in) d_in = d, face = r >= 0 ? a + 1 : -(a + 1);
    }
    if (o2 > 0) { /* outside: towards the nearest point */
        const double d = sqrt(o2);
        *normal = sc_v3(out[0] / d, out[1] / d, out[2] / d);
        return d;
    }
    const int a = abs(face) - 1;
    double n[3] = {0, 0, 0};
    n[a] = face > 0 ? 1 : -1;
    *normal = sc_v3(n[0], n[1], n[2]);
    return d_in;
}

/* The tile field at (x, z): its height and slope (dT/dx, dT/dz) on the cell's triangle. */
static double tile_field(const sc_ground *g, double x, double z, double *gx, double *gz)
{
    const double s = g->tile_size, a = x / s, b = z / s, fa = floor(a), fb = floor(b);
    *gx = *gz = 0;
    if (!(fabs(fa) < 1e18 && fabs(fb) < 1e18)) return 0; /* far off or not finite: no index */
    const long i = (long)fa, j = (long)fb;
    const double fx = a - fa, fz = b - fb, h00 = sc_ground_tile_vertex(g, i, j), h11 = sc_ground_tile_vertex(g, i + 1, j + 1);
    double dx, dz;
    if (fx >= fz) { /* the triangle (i, j), (i+1, j), (i+1, j+1) */
        const double h10 = sc_ground_tile_vertex(g, i + 1, j);
        dx = h10 - h00;
        dz = h11 - h10;
    } else { /* (i, j), (i, j+1), (i+1, j+1) */
        const double h01 = sc_ground_tile_vertex(g, i, j + 1);
        dx = h11 - h01;
        dz = h01 - h00;
    }
    *gx = dx / s;
    *gz = dz / s;
    return h00 + fx * dx + fz * dz;
}

/* The height of p over the ground and its normal; *box (when given) the box whose surface is the
   nearest, -1 for the floor. */
static inline __attribute__((always_inline)) double ground_height(const sc_ground *g, sc_vec3 p, sc_vec3 *normal, int *box)
{
    double h = sc_v3_dot(g->normal, p) - g->offset;
    sc_vec3 n = g->normal;
    if (g->bump_length > 0 && g->bump_height != 0) {
        double k = 2 * SC_PI / g->bump_length, sx = sin(k * p.x), sz = sin(k * p.z);
        h -= g->bump_height * sx * sz;
        /* gradient of the bump term, removed from the normal (small-slope height field) */
        sc_vec3 grad = sc_v3(g->bump_height * k * cos(k * p.x) * sz, 0, g->bump_height * k * sx * cos(k * p.z));
        n = sc_v3_normalize(sc_v3_sub(n, grad));
    }
    if (has_tiles(g)) {
        /* h is linear on the triangle's prism, grad h = n - (dT/dx, 0, dT/dz): h / |grad h| is
         * the distance to the triangle's plane (its sign is h's, which the culling relies on) */
        double gx, gz;
        h -= tile_field(g, p.x, p.z, &gx, &gz);
        sc_vec3 gr = sc_v3_sub(n, sc_v3(gx, 0, gz));
        double len = sc_v3_norm(gr);
        n = sc_v3_scale(gr, 1 / len);
        h /= len;
    }
    int which = -1;
    for (int b = 0; b < g->nboxes; b++) { /* the nearest surface decides */
        sc_vec3 nb;
        const double d = box_distance(g, b, p, &nb);
        if (d < h) h = d, n = nb, which = b;
    }
    if (normal) *normal = n;
    if (box) *box = which;
    return h;
}

int sc_ground_nearest_box(const sc_ground *g, sc_vec3 p)
{
    int box;
    ground_height(g, p, NULL, &box);
    return box;
}

double sc_ground_top(const sc_ground *g, double x, double z)
{
    sc_ground field = *g;
    field.nboxes = 0; /* the height field is linear in y along the vertical */
    const double h0 = ground_height(&field, sc_v3(x, 0, z), NULL, NULL), h1 = ground_height(&field, sc_v3(x, 1, z), NULL, NULL);
    double y = -h0 / (h1 - h0);
    for (int b = 0; b < g->nboxes; b++)
        if (x >= g->box_lo[b][0] && x <= g->box_hi[b][0] && z >= g->box_lo[b][2] && z <= g->box_hi[b][2]) y = fmax(y, g->box_hi[b][1]);
    return y;
}

double sc_ground_height(const sc_ground *g, sc_vec3 p, sc_vec3 *normal) { return ground_height(g, p, normal, NULL); }

void sc_contact_cop(const sc_contact_result *r, double cop[3])
{
    if (r->normal_force > 0) sc_v3_store(cop, sc_v3_scale(r->load_moment, 1 / r->normal_force));
    else cop[0] = cop[1] = cop[2] = NAN;
}

/* Contact of surface vertex i at x ([L13] 4.2.4): penalty normal force and anchored Coulomb
 * friction; returns 1 with the force in *fc when the vertex pushes on the ground. */
static inline __attribute__((always_inline)) int contact_vertex(const sc_contact_opts *o, const sc_embedding *e, int i, sc_vec3 x,
                                                                const double *node_v, double *anchor, unsigned char *in_contact, sc_vec3 *fc,
                                                                sc_contact_result *res)
{
    sc_vec3 n;
    int box;
    double h = ground_height(&o->ground, x, &n, &box);
    if (h >= 0) {
        in_contact[i] = 0;
        return 0;
    }
    const int *t = e->tets + 4 * e->tet[i];
    const double *w = e->bary + 4 * i;
    sc_vec3 vel = sc_v3(0, 0, 0);
    for (int k = 0; k < 4; k++) vel = sc_v3_axpy(w[k], sc_v3_load(node_v + 3 * t[k]), vel);
    double vn = sc_v3_dot(vel, n);
    double fn = -o->stiffness * h - o->damping * vn;
    if (fn <= 0) {
        in_contact[i] = 0;
        return 0;
    } /* penalty may not pull */
    if (!in_contact[i]) {
        sc_v3_store(anchor + 3 * i, x);
        in_contact[i] = 1;
    }
    /* tangential anchor spring, clamped to the friction cone */
    sc_vec3 d = sc_v3_sub(x, sc_v3_load(anchor + 3 * i));
    d = sc_v3_sub(d, sc_v3_scale(n, sc_v3_dot(n, d)));
    sc_vec3 vt = sc_v3_sub(vel, sc_v3_scale(n, vn));
    sc_vec3 ft = sc_v3_add(sc_v3_scale(d, -o->tangent_stiffness), sc_v3_scale(vt, -o->tangent_damping));
    double ftn = sc_v3_norm(ft), lim = o->mu * fn;
    if (ftn > lim) {
        ft = sc_v3_scale(ft, lim / ftn);
        /* sliding: drag the anchor so that the spring alone carries the friction limit */
        if (sc_v3_norm(d) > 0) sc_v3_store(anchor + 3 * i, sc_v3_sub(x, sc_v3_scale(sc_v3_normalize(d), lim / o->tangent_stiffness)));
        res->sliding++;
    }
    *fc = sc_v3_add(sc_v3_scale(n, fn), ft);
    res->total_force = sc_v3_add(res->total_force, *fc);
    res->count++;
    res->obstacles += box >= 0;
    res->max_depth = fmax(res->max_depth, -h);
    res->normal_force += fn;
    res->load_moment = sc_v3_axpy(fn, x, res->load_moment);
    return 1;
}

void sc_contact_forces(const sc_contact_opts *o, const sc_embedding *e, const double *p, const double *node_v, double *anchor,
                       unsigned char *in_contact, double *node_force, sc_contact_result *res)
{
    memset(res, 0, sizeof *res);
    if (!o->enabled) return;
    for (int i = 0; i < e->nverts; i++) {
        sc_vec3 fc;
        if (contact_vertex(o, e, i, sc_v3_load(p + 3 * i), node_v, anchor, in_contact, &fc, res)) sc_embedding_to_nodes(e, i, fc, node_force);
    }
}

/* ---- culling ---- */

void sc_contact_cull_free(sc_contact_cull *c)
{
    if (!c) return;
    void *a[] = {c->tets, c->vert_start, c->verts, c->node_start, c->node_tets, c->always, c->bits, c->cand, c->prev, c->force};
    for (size_t i = 0; i < sizeof a / sizeof *a; i++) free(a[i]);
    memset(c, 0, sizeof *c);
}

int sc_contact_cull_init(sc_contact_cull *c, const sc_embedding *e, int ntets, int nnodes, sc_err *err)
{
    memset(c, 0, sizeof *c);
    const size_t nv = (size_t)(e->nverts > 0 ? e->nverts : 1), nw = nv / 64 + 1;
    int *index = malloc((size_t)(ntets > 0 ? ntets : 1) * sizeof *index), *count = NULL;
    c->tets = malloc(nv * sizeof *c->tets);
    c->vert_start = calloc(nv + 1, sizeof *c->vert_start);
    c->verts = malloc(nv * sizeof *c->verts);
    c->node_start = calloc((size_t)nnodes + 1, sizeof *c->node_start);
    c->node_tets = malloc(4 * nv * sizeof *c->node_tets);
    c->always = calloc(nw, sizeof *c->always);
    c->bits = calloc(nw, sizeof *c->bits);
    c->cand = malloc(nv * sizeof *c->cand);
    c->prev = malloc(nv);
    c->force = malloc(nv * sizeof *c->force);
    count = calloc(nv + (size_t)nnodes + 1, sizeof *count);
    if (!index || !c->tets || !c->vert_start || !c->verts || !c->node_start || !c->node_tets || !c->always || !c->bits || !c->cand || !c->prev ||
        !c->force || !count) {
        free(index);
        free(count);
        sc_contact_cull_free(c);
        return sc_fail(err, SC_EIO, "out of memory for the contact culling");
    }
    c->nverts = e->nverts;
    c->nnodes = nnodes;
    /* the distinct tets of the embedding and their vertices, ascending */
    for (int t = 0; t < ntets; t++) index[t] = -1;
    int nt = 0;
    for (int i = 0; i < e->nverts; i++)
        if (index[e->tet[i]] < 0) {
            index[e->tet[i]] = nt;
            c->tets[nt++] = e->tet[i];
        }
    c->ntets = nt;
    for (int i = 0; i < e->nverts; i++) count[index[e->tet[i]] + 1]++;
    for (int k = 0; k < nt; k++) c->vert_start[k + 1] = c->vert_start[k] + count[k + 1];
    for (int k = 0; k < nt; k++) count[k] = c->vert_start[k];
    for (int i = 0; i < e->nverts; i++) {
        c->verts[count[index[e->tet[i]]]++] = i;
        const double *w = e->bary + 4 * i;
        /* outside its tet (the nearest-tet fallback) the bound does not hold: always tested */
        if (!(w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && w[3] >= 0)) c->always[i >> 6] |= 1ull << (i & 63);
    }
    /* for every node, the embedding tets it belongs to */
    memset(count, 0, (nv + (size_t)nnodes + 1) * sizeof *count);
    for (int k = 0; k < nt; k++)
        for (int a = 0; a < 4; a++) count[e->tets[4 * c->tets[k] + a] + 1]++;
    for (int i = 0; i < nnodes; i++) c->node_start[i + 1] = c->node_start[i] + count[i + 1];
    for (int i = 0; i < nnodes; i++) count[i] = c->node_start[i];
    for (int k = 0; k < nt; k++)
        for (int a = 0; a < 4; a++) c->node_tets[count[e->tets[4 * c->tets[k] + a]]++] = k;
    free(index);
    free(count);
    return SC_OK;
}

void sc_contact_forces_culled(const sc_contact_opts *o, const sc_embedding *e, sc_contact_cull *c, const double *x, const double *node_v,
                              double *anchor, unsigned char *in_contact, double *node_force, sc_contact_result *res)
{
    memset(res, 0, sizeof *res);
    if (!o->enabled) return;
    /* A vertex inside its tet is a convex combination of the tet's nodes: its height over the
     * base plane is at least the lowest node's, and the ground rises above that plane by at most
     * the bumps' amplitude plus the tiles' height (1 nm more covers the rounding of the
     * combination). So only the tets with a node below that margin can hold a vertex that touches. */
    const sc_ground *g = &o->ground;
    const double nx = g->normal.x, ny = g->normal.y, nz = g->normal.z, off = g->offset;
    const double margin = sc_ground_max_rise(g) + 1e-9;
    const int nw = c->nverts > 0 ? ((c->nverts - 1) >> 6) + 1 : 0;
    memcpy(c->bits, c->always, (size_t)nw * sizeof *c->bits);
    for (int i = 0; i < c->nnodes; i++) {
        if (!(nx * x[3 * i] + ny * x[3 * i + 1] + nz * x[3 * i + 2] - off < margin)) continue;
        for (int j = c->node_start[i]; j < c->node_start[i + 1]; j++) {
            int k = c->node_tets[j];
            for (int v = c->vert_start[k]; v < c->vert_start[k + 1]; v++) c->bits[c->verts[v] >> 6] |= 1ull << (c->verts[v] & 63);
        }
    }
    /* the candidates in ascending order (the order sc_contact_forces visits them, so the sums
     * are the same to the bit); every other vertex is above the ground: not in contact */
    int nc = 0;
    for (int w = 0; w < nw; w++)
        for (uint64_t b = c->bits[w]; b; b &= b - 1) {
            int i = (w << 6) + __builtin_ctzll(b);
            c->prev[nc] = in_contact[i];
            c->cand[nc++] = i;
        }
    if (c->nverts > 0) memset(in_contact, 0, (size_t)c->nverts);
    /* the candidates' forces first (independent of each other), then to the nodes in vertex
     * order: a node shared by consecutive vertices does not chain them */
    int nf = 0;
    for (int j = 0; j < nc; j++) {
        const int i = c->cand[j];
        const int *t = e->tets + 4 * e->tet[i];
        const double *w = e->bary + 4 * i;
        double p[3];
        for (int k = 0; k < 3; k++) /* as sc_sim_surface computes it, to the bit */
            p[k] = w[0] * x[3 * t[0] + k] + w[1] * x[3 * t[1] + k] + w[2] * x[3 * t[2] + k] + w[3] * x[3 * t[3] + k];
        in_contact[i] = c->prev[j];
        if (contact_vertex(o, e, i, sc_v3(p[0], p[1], p[2]), node_v, anchor, in_contact, &c->force[nf], res)) c->cand[nf++] = i;
    }
    for (int j = 0; j < nf; j++) sc_embedding_to_nodes(e, c->cand[j], c->force[j], node_force);
    c->candidates = nc;
}

/* Quadric error edge collapses (decimate.h). */
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "mesh/decimate.h"
#include "mesh/isosurface.h"

#define QN 11 /* a quadric: 10 coefficients and the area */

typedef struct {
    int n, cap;
    int *t;
} tri_list;

typedef struct {
    double cost;
    int a, b;
    unsigned sa, sb; /* the vertices' stamps when pushed: a later change makes the entry stale */
    double p[3];
} heap_item;

typedef struct {
    sc_trimesh *m;
    int nverts;    /* the input's vertex count (of the arrays below) */
    double *q;     /* [nverts * QN] quadric per vertex: the upper triangle of a symmetric 4x4, then
                       the area of the triangles it stands for */
    tri_list *adj; /* [nverts] the live triangles around each vertex */
    unsigned char *tri_alive, *vert_alive;
    unsigned *stamp;
    int *mark, token; /* scratch marks of vertices */
    heap_item *heap;
    int nheap, capheap;
    double cos_turn, cos_min_angle, max_error, max_inside;
    const sc_field *surface; /* the surface to keep to (may be NULL) */
} dec;

static int list_push(tri_list *l, int t)
{
    if (l->n == l->cap) {
        int nc = l->cap ? 2 * l->cap : 8;
        int *p = realloc(l->t, (size_t)nc * sizeof *p);
        if (!p) return 0;
        l->t = p;
        l->cap = nc;
    }
    l->t[l->n++] = t;
    return 1;
}

static void list_remove(tri_list *l, int t)
{
    for (int i = 0; i < l->n; i++)
        if (l->t[i] == t) {
            l->t[i] = l->t[--l->n];
            return;
        }
}

static sc_vec3 vpos(const dec *d, int v) { return sc_v3_load(d->m->verts + 3 * v); }

/* p^T A p + 2 b.p + c of the quadric q */
static double q_error(const double *q, sc_vec3 p)
{
    return q[0] * p.x * p.x + 2 * q[1] * p.x * p.y + 2 * q[2] * p.x * p.z + 2 * q[3] * p.x + q[4] * p.y * p.y + 2 * q[5] * p.y * p.z +
        2 * q[6] * p.y + q[7] * p.z * p.z + 2 * q[8] * p.z + q[9];
}

/* The collapse point of edge ab: the least-squares point of the summed quadric (its well
   determined directions, from the midpoint), else the better of the midpoint and the ends. */
static double best_point(const dec *d, int a, int b, sc_vec3 *out)
{
    double q[QN];
    for (int k = 0; k < QN; k++) q[k] = d->q[QN * a + k] + d->q[QN * b + k];
    sc_vec3 pa = vpos(d, a), pb = vpos(d, b), mid = sc_v3_scale(sc_v3_add(pa, pb), 0.5);
    sc_mat3 A = {{{q[0], q[1], q[2]}, {q[1], q[4], q[5]}, {q[2], q[5], q[7]}}};
    sc_vec3 g = sc_v3_add(sc_m3_mulv(A, mid), sc_v3(q[3], q[6], q[8])); /* half the gradient at mid */
    double e[3];
    sc_mat3 v;
    sc_m3_sym_eigen(A, e, &v);
    sc_vec3 p = mid;
    for (int k = 0; k < 3; k++) {
        if (!(e[k] > 1e-3 * e[0]) || !(e[k] > 0)) continue;
        sc_vec3 vk = sc_v3(v.m[0][k], v.m[1][k], v.m[2][k]);
        p = sc_v3_axpy(-sc_v3_dot(vk, g) / e[k], vk, p);
    }
    sc_vec3 cand[4] = {p, mid, pa, pb};
    double best = INFINITY;
    double len = sc_v3_dist(pa, pb);
    for (int i = 0; i < 4; i++) {
        if (i == 0 && !(sc_v3_dist(p, mid) <= len)) continue; /* far off: a nearly flat direction */
        double c = q_error(q, cand[i]);
        if (c < best - 1e-15) {
            best = c;
            *out = cand[i];
        }
    }
    return fmax(best, 0);
}

static int heap_push(dec *d, int a, int b)
{
    if (d->nheap == d->capheap) {
        int nc = d->capheap ? 2 * d->capheap : 1024;
        heap_item *h = realloc(d->heap, (size_t)nc * sizeof *h);
        if (!h) return 0;
        d->heap = h;
        d->capheap = nc;
    }
    heap_item it = {0, a, b, d->stamp[a], d->stamp[b], {0, 0, 0}};
    sc_vec3 p;
    it.cost = best_point(d, a, b, &p);
    sc_v3_store(it.p, p);
    int i = d->nheap++;
    while (i > 0) {
        int up = (i - 1) / 2;
        if (d->heap[up].cost <= it.cost) break;
        d->heap[i] = d->heap[up];
        i = up;
    }
    d->heap[i] = it;
    return 1;
}

static heap_item heap_pop(dec *d)
{
    heap_item top = d->heap[0], last = d->heap[--d->nheap];
    int i = 0, n = d->nheap;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && d->heap[c + 1].cost < d->heap[c].cost) c++;
        if (d->heap[c].cost >= last.cost) break;
        d->heap[i] = d->heap[c];
        i = c;
    }
    if (n > 0) d->heap[i] = last;
    return top;
}

/* The largest cosine of a triangle's angles (its smallest angle's), or 2 when degenerate. */
static double max_cos(sc_vec3 x0, sc_vec3 x1, sc_vec3 x2)
{
    sc_vec3 p[3] = {x0, x1, x2};
    double worst = -1;
    for (int k = 0; k < 3; k++) {
        sc_vec3 u = sc_v3_sub(p[(k + 1) % 3], p[k]), w = sc_v3_sub(p[(k + 2) % 3], p[k]);
        double lu = sc_v3_norm(u), lw = sc_v3_norm(w);
        if (!(lu > 0) || !(lw > 0)) return 2;
        worst = fmax(worst, sc_v3_dot(u, w) / (lu * lw));
    }
    return worst;
}

/* Whether collapsing b into a at p keeps the surface manifold and its triangles sound; c, d:
   the two vertices opposite the edge. */
static int can_collapse(dec *d, int a, int b, sc_vec3 p)
{
    const sc_trimesh *m = d->m;
    int opp[2], nopp = 0;
    for (int i = 0; i < d->adj[a].n; i++) {
        const int *t = m->tris + 3 * d->adj[a].t[i];
        for (int k = 0; k < 3; k++)
            if (t[k] == b) {
                if (nopp == 2) return 0;
                opp[nopp++] = t[0] != a && t[0] != b ? t[0] : t[1] != a && t[1] != b ? t[1] : t[2];
            }
    }
    if (nopp != 2 || opp[0] == opp[1]) return 0;
    if (d->surface) { /* the new vertex on the surface (not beyond a corner of it) */
        double v = d->surface->eval(d->surface->ctx, p);
        if (!(v <= d->max_error && v >= -d->max_inside)) return 0;
    }
    /* link condition: a and b share no neighbour but the two opposite vertices */
    d->token++;
    for (int i = 0; i < d->adj[a].n; i++)
        for (int k = 0; k < 3; k++) d->mark[m->tris[3 * d->adj[a].t[i] + k]] = d->token;
    for (int i = 0; i < d->adj[b].n; i++)
        for (int k = 0; k < 3; k++) {
            int v = m->tris[3 * d->adj[b].t[i] + k];
            if (v != a && v != b && v != opp[0] && v != opp[1] && d->mark[v] == d->token) return 0;
        }
    /* every triangle that stays keeps its facing and its shape */
    for (int s = 0; s < 2; s++) {
        const tri_list *l = &d->adj[s ? b : a];
        for (int i = 0; i < l->n; i++) {
            const int *t = m->tris + 3 * l->t[i];
            if ((t[0] == a || t[1] == a || t[2] == a) && (t[0] == b || t[1] == b || t[2] == b)) continue; /* goes */
            sc_vec3 x[3], y[3];
            for (int k = 0; k < 3; k++) {
                x[k] = vpos(d, t[k]);
                y[k] = t[k] == a || t[k] == b ? p : x[k];
            }
            sc_vec3 n0 = sc_v3_cross(sc_v3_sub(x[1], x[0]), sc_v3_sub(x[2], x[0]));
            sc_vec3 n1 = sc_v3_cross(sc_v3_sub(y[1], y[0]), sc_v3_sub(y[2], y[0]));
            double l0 = sc_v3_norm(n0), l1 = sc_v3_norm(n1);
            if (!(l1 > 0) || !(l0 > 0) || sc_v3_dot(n0, n1) < d->cos_turn * l0 * l1) return 0;
            double c1 = max_cos(y[0], y[1], y[2]);
            if (c1 > d->cos_min_angle && c1 > max_cos(x[0], x[1], x[2]) + 1e-12) return 0;
            if (d->surface) { /* the new triangle keeps to the surface: its centre and its edges' middles */
                const sc_field *f = d->surface;
                for (int k = 0; k < 4; k++) {
                    sc_vec3 c =
                        k == 3 ? sc_v3_scale(sc_v3_add(y[0], sc_v3_add(y[1], y[2])), 1.0 / 3) : sc_v3_scale(sc_v3_add(y[k], y[(k + 1) % 3]), 0.5);
                    double v = f->eval(f->ctx, c);
                    if (!(v <= d->max_error && v >= -d->max_inside)) return 0;
                }
            }
        }
    }
    return 1;
}

/* Where edge it collapses: its least-error point, or when that spoils a triangle the midpoint
   or an end that keeps within max_error (the root mean square distance to the planes of the
   triangles the two vertices stand for); 0 when none is allowed. */
static int collapse_point(dec *d, const heap_item *it, sc_vec3 *p)
{
    double q[QN];
    for (int k = 0; k < QN; k++) q[k] = d->q[QN * it->a + k] + d->q[QN * it->b + k];
    sc_vec3 pa = vpos(d, it->a), pb = vpos(d, it->b);
    sc_vec3 cand[4] = {sc_v3_load(it->p), sc_v3_scale(sc_v3_add(pa, pb), 0.5), pa, pb};
    double cost[4];
    for (int i = 0; i < 4; i++) cost[i] = i ? q_error(q, cand[i]) : it->cost;
    for (int pass = 0; pass < 4; pass++) { /* in order of error */
        int best = -1;
        for (int i = 0; i < 4; i++)
            if (cost[i] < INFINITY && (best < 0 || cost[i] < cost[best])) best = i;
        if (best < 0 || (best > 0 && !d->surface && cost[best] > d->max_error * d->max_error * q[10])) return 0;
        if (can_collapse(d, it->a, it->b, cand[best])) {
            *p = cand[best];
            return 1;
        }
        cost[best] = INFINITY;
    }
    return 0;
}

/* b goes into a at p. 0 when out of memory. */
static int collapse(dec *d, int a, int b, sc_vec3 p)
{
    sc_trimesh *m = d->m;
    for (int i = d->adj[a].n - 1; i >= 0; i--) { /* the two triangles on the edge go */
        int ti = d->adj[a].t[i];
        const int *t = m->tris + 3 * ti;
        if (t[0] != b && t[1] != b && t[2] != b) continue;
        d->tri_alive[ti] = 0;
        for (int k = 0; k < 3; k++)
            if (t[k] != a) list_remove(&d->adj[t[k]], ti);
        list_remove(&d->adj[a], ti);
    }
    for (int i = 0; i < d->adj[b].n; i++) {
        int ti = d->adj[b].t[i];
        for (int k = 0; k < 3; k++)
            if (m->tris[3 * ti + k] == b) m->tris[3 * ti + k] = a;
        if (!list_push(&d->adj[a], ti)) return 0;
    }
    d->adj[b].n = 0;
    d->vert_alive[b] = 0;
    sc_v3_store(m->verts + 3 * a, p);
    for (int k = 0; k < QN; k++) d->q[QN * a + k] += d->q[QN * b + k];
    d->stamp[a]++;
    d->stamp[b]++;
    d->token++;
    for (int i = 0; i < d->adj[a].n; i++)
        for (int k = 0; k < 3; k++) {
            int v = m->tris[3 * d->adj[a].t[i] + k];
            if (v == a || d->mark[v] == d->token) continue;
            d->mark[v] = d->token;
            if (!heap_push(d, a, v)) return 0;
        }
    return 1;
}

/* Flips the edges between two triangles that lie in one plane (within a degree) where the other
   diagonal gives the pair a larger smallest angle: on flat faces the collapses then go on.
   Returns the flips. */
static int flip_pass(dec *d)
{
    sc_trimesh *m = d->m;
    const double cos_flat = cos(SC_PI / 180);
    int flips = 0;
    for (int t1 = 0; t1 < m->ntris; t1++) {
        if (!d->tri_alive[t1]) continue;
        for (int e = 0; e < 3; e++) {
            int *u = m->tris + 3 * t1, a = u[e], b = u[(e + 1) % 3], c = u[(e + 2) % 3], t2 = -1, dv = -1;
            for (int i = 0; i < d->adj[a].n && t2 < 0; i++) { /* the triangle across a->b holds b->a */
                const int *w = m->tris + 3 * d->adj[a].t[i];
                for (int k = 0; k < 3; k++)
                    if (w[k] == b && w[(k + 1) % 3] == a) {
                        t2 = d->adj[a].t[i];
                        dv = w[(k + 2) % 3];
                    }
            }
            if (t2 < 0 || dv == c) continue;
            sc_vec3 pa = vpos(d, a), pb = vpos(d, b), pc = vpos(d, c), pd = vpos(d, dv);
            sc_vec3 n1 = sc_v3_cross(sc_v3_sub(pb, pa), sc_v3_sub(pc, pa)), n2 = sc_v3_cross(sc_v3_sub(pa, pb), sc_v3_sub(pd, pb));
            double l1 = sc_v3_norm(n1), l2 = sc_v3_norm(n2);
            if (!(l1 > 0) || !(l2 > 0) || sc_v3_dot(n1, n2) < cos_flat * l1 * l2) continue;
            /* the new diagonal c-d: both new triangles face as the old, and the pair gets better */
            sc_vec3 m1 = sc_v3_cross(sc_v3_sub(pd, pa), sc_v3_sub(pc, pa)), m2 = sc_v3_cross(sc_v3_sub(pb, pd), sc_v3_sub(pc, pd));
            if (sc_v3_dot(m1, n1) <= 0 || sc_v3_dot(m2, n1) <= 0) continue;
            double before = fmax(max_cos(pa, pb, pc), max_cos(pb, pa, pd)), after = fmax(max_cos(pa, pd, pc), max_cos(pd, pb, pc));
            if (!(after < before - 1e-9)) continue;
            int exists = 0; /* c and d already joined: the flip would double that edge */
            for (int i = 0; i < d->adj[c].n && !exists; i++) {
                const int *w = m->tris + 3 * d->adj[c].t[i];
                exists = w[0] == dv || w[1] == dv || w[2] == dv;
            }
            if (exists) continue;
            int *w1 = m->tris + 3 * t1, *w2 = m->tris + 3 * t2;
            w1[0] = a, w1[1] = dv, w1[2] = c;
            w2[0] = dv, w2[1] = b, w2[2] = c;
            list_remove(&d->adj[a], t2);
            list_remove(&d->adj[b], t1);
            if (!list_push(&d->adj[c], t2) || !list_push(&d->adj[dv], t1)) return -1;
            flips++;
            break; /* t1 changed: its other edges next time */
        }
    }
    return flips;
}

/* Every edge of the live triangles on the heap again. 0 when out of memory. */
static int heap_fill(dec *d)
{
    d->nheap = 0;
    for (int t = 0; t < d->m->ntris; t++)
        for (int k = 0; k < 3 && d->tri_alive[t]; k++) {
            int a = d->m->tris[3 * t + k], b = d->m->tris[3 * t + (k + 1) % 3];
            if (a < b && !heap_push(d, a, b)) return 0;
        }
    return 1;
}

static void dec_free(dec *d)
{
    if (d->adj)
        for (int v = 0; v < d->nverts; v++) free(d->adj[v].t);
    free(d->adj);
    free(d->q);
    free(d->tri_alive);
    free(d->vert_alive);
    free(d->stamp);
    free(d->mark);
    free(d->heap);
}

/* Drops the dead vertices and triangles. */
static void compact(dec *d)
{
    sc_trimesh *m = d->m;
    int nv = 0, nt = 0;
    for (int v = 0; v < m->nverts; v++) {
        d->mark[v] = d->vert_alive[v] ? nv : -1;
        if (d->vert_alive[v]) memmove(m->verts + 3 * nv++, m->verts + 3 * v, 3 * sizeof(double));
    }
    for (int t = 0; t < m->ntris; t++) {
        if (!d->tri_alive[t]) continue;
        for (int k = 0; k < 3; k++) m->tris[3 * nt + k] = d->mark[m->tris[3 * t + k]];
        nt++;
    }
    m->nverts = nv;
    m->ntris = nt;
}

/* Adds the plane through x with unit normal n, weighted by area, to the quadrics of v[0..n-1]. */
static void add_plane(dec *d, const int *v, int nv, sc_vec3 n, sc_vec3 x, double area)
{
    double pl[4] = {n.x, n.y, n.z, -sc_v3_dot(n, x)}, qt[QN];
    for (int i = 0, k = 0; i < 4; i++)
        for (int j = i; j < 4; j++) qt[k++] = area * pl[i] * pl[j];
    qt[10] = area;
    for (int k = 0; k < nv; k++)
        for (int j = 0; j < QN; j++) d->q[QN * v[k] + j] += qt[j];
}

/* The tangent plane of the surface f = 0 nearest p: its point (*x, by Newton steps along the
   gradient) and its unit normal there. */
static sc_vec3 tangent_plane(const sc_field *f, sc_vec3 p, sc_vec3 *x)
{
    const double h = 1e-5;
    sc_vec3 g = sc_v3(0, 0, 1);
    for (int it = 0; it < 4; it++) {
        g = sc_v3(f->eval(f->ctx, sc_v3(p.x + h, p.y, p.z)) - f->eval(f->ctx, sc_v3(p.x - h, p.y, p.z)),
                  f->eval(f->ctx, sc_v3(p.x, p.y + h, p.z)) - f->eval(f->ctx, sc_v3(p.x, p.y - h, p.z)),
                  f->eval(f->ctx, sc_v3(p.x, p.y, p.z + h)) - f->eval(f->ctx, sc_v3(p.x, p.y, p.z - h)));
        g = sc_v3_scale(g, 0.5 / h);
        double g2 = sc_v3_dot(g, g), val = f->eval(f->ctx, p);
        if (!(g2 > 1e-12)) break;
        p = sc_v3_sub(p, sc_v3_scale(g, val / g2));
    }
    *x = p;
    return sc_v3_normalize(g);
}

int sc_trimesh_decimate(sc_trimesh *m, const sc_decimate_opts *o, sc_decimate_info *info, sc_err *err)
{
    const sc_field *surface = o->surface;
    int target_verts = o->target_verts;
    if (info) memset(info, 0, sizeof *info);
    int first = -1, open = sc_trimesh_open_edges(m, &first);
    if (open)
        return sc_fail(err, SC_EINPUT,
                       "decimate: the surface is not closed and manifold (%d edges not shared by two triangles; first at triangle %d)", open, first);
    if (target_verts < 4) target_verts = 4;
    int nv = m->nverts, nt = m->ntris, rc = SC_OK;
    dec d = {.m = m,
             .nverts = nv,
             .cos_turn = cos(45 * SC_PI / 180),
             .cos_min_angle = cos(o->min_angle_deg * SC_PI / 180),
             .max_error = o->max_error,
             .max_inside = o->max_inside,
             .surface = surface};
    d.q = calloc((size_t)nv * QN, sizeof *d.q);
    d.adj = calloc((size_t)nv, sizeof *d.adj);
    d.tri_alive = malloc((size_t)nt + 1);
    d.vert_alive = malloc((size_t)nv + 1);
    d.stamp = calloc((size_t)nv, sizeof *d.stamp);
    d.mark = calloc((size_t)nv, sizeof *d.mark);
    if (!d.q || !d.adj || !d.tri_alive || !d.vert_alive || !d.stamp || !d.mark) {
        dec_free(&d);
        return sc_fail(err, SC_EIO, "decimate: out of memory");
    }
    memset(d.tri_alive, 1, (size_t)nt);
    memset(d.vert_alive, 1, (size_t)nv);
    for (int t = 0; t < nt && !rc; t++) { /* area-weighted plane quadrics */
        const int *v = m->tris + 3 * t;
        sc_vec3 x0 = vpos(&d, v[0]), n = sc_v3_cross(sc_v3_sub(vpos(&d, v[1]), x0), sc_v3_sub(vpos(&d, v[2]), x0));
        double area = 0.5 * sc_v3_norm(n);
        if (area > 0 && !surface) add_plane(&d, v, 3, sc_v3_normalize(n), x0, area);
        for (int k = 0; k < 3; k++) {
            if (area > 0 && surface) add_plane(&d, v + k, 1, tangent_plane(surface, vpos(&d, v[k]), &x0), x0, area / 3);
            if (!list_push(&d.adj[v[k]], t)) rc = sc_fail(err, SC_EIO, "decimate: out of memory");
        }
    }
    /* rounds of collapses, cheapest first, until the target or until none is allowed; then flips
       on the flat faces open new ones */
    int alive = nv;
    for (int round = 0; round < 50 && !rc && alive > target_verts; round++) {
        if (!heap_fill(&d)) {
            rc = sc_fail(err, SC_EIO, "decimate: out of memory");
            break;
        }
        int done = 0;
        while (!rc && alive > target_verts && d.nheap > 0) {
            heap_item it = heap_pop(&d);
            if (!d.vert_alive[it.a] || !d.vert_alive[it.b] || d.stamp[it.a] != it.sa || d.stamp[it.b] != it.sb) continue;
            sc_vec3 p;
            if (!collapse_point(&d, &it, &p)) continue;
            if (!collapse(&d, it.a, it.b, p)) rc = sc_fail(err, SC_EIO, "decimate: out of memory");
            alive--;
            done++;
        }
        if (info) info->collapses += done;
        int flips = rc ? 0 : flip_pass(&d);
        if (flips < 0) rc = sc_fail(err, SC_EIO, "decimate: out of memory");
        if (!done && !flips) break;
    }
    for (int pass = 0; pass < 5 && !rc; pass++) { /* the flat faces' triangles as good as they get */
        int flips = flip_pass(&d);
        if (flips < 0) rc = sc_fail(err, SC_EIO, "decimate: out of memory");
        if (flips <= 0) break;
    }
    if (!rc) compact(&d);
    dec_free(&d);
    return rc;
}

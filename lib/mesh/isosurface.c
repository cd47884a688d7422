/* Surface nets: the closed surface of an implicit body on a regular grid, smoothed and projected
 * onto the level set; edge checks of triangle meshes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mesh/isosurface.h"

typedef struct {
    int nx, ny, nz;
    sc_vec3 origin;
    double h;
    double *val;
} grid;

static size_t gidx(const grid *g, int i, int j, int k) { return ((size_t)k * g->ny + j) * g->nx + i; }
static size_t cidx(const grid *g, int i, int j, int k) { return ((size_t)k * (g->ny - 1) + j) * (g->nx - 1) + i; }

static int tri_push(sc_trimesh *m, int *cap, int a, int b, int c)
{
    if (m->ntris == *cap) {
        int nc = *cap ? 2 * *cap : 4096;
        int *t = realloc(m->tris, (size_t)nc * 3 * sizeof *t);
        if (!t) return 0;
        m->tris = t;
        *cap = nc;
    }
    int *t = &m->tris[3 * m->ntris++];
    t[0] = a;
    t[1] = b;
    t[2] = c;
    return 1;
}

static void quad(sc_trimesh *m, int *cap, int *ok, int a, int b, int c, int d)
{
    /* split along the shorter diagonal for better triangles */
    const double *v = m->verts;
    double ac = sc_v3_dist(sc_v3_load(v + 3 * a), sc_v3_load(v + 3 * c));
    double bd = sc_v3_dist(sc_v3_load(v + 3 * b), sc_v3_load(v + 3 * d));
    if (ac <= bd) *ok &= tri_push(m, cap, a, b, c) & tri_push(m, cap, a, c, d);
    else *ok &= tri_push(m, cap, a, b, d) & tri_push(m, cap, b, c, d);
}

static sc_vec3 field_grad(const sc_field *f, sc_vec3 p, double h)
{
    sc_vec3 g;
    g.x = f->eval(f->ctx, sc_v3(p.x + h, p.y, p.z)) - f->eval(f->ctx, sc_v3(p.x - h, p.y, p.z));
    g.y = f->eval(f->ctx, sc_v3(p.x, p.y + h, p.z)) - f->eval(f->ctx, sc_v3(p.x, p.y - h, p.z));
    g.z = f->eval(f->ctx, sc_v3(p.x, p.y, p.z + h)) - f->eval(f->ctx, sc_v3(p.x, p.y, p.z - h));
    return sc_v3_scale(g, 0.5 / h);
}

/* The grid around the field's box: spacing, padding and the shift of a retry. */
static size_t grid_place(const sc_field *f, const sc_iso_opts *o, grid *g)
{
    g->h = o->spacing;
    double pad = 2 * g->h + fmax(o->level, 0);
    g->origin = sc_v3_sub(f->lo, sc_v3(pad + o->shift * g->h, pad + o->shift * g->h * 0.7, pad + o->shift * g->h * 0.3));
    sc_vec3 ext = sc_v3_sub(sc_v3_add(f->hi, sc_v3(pad, pad, pad)), g->origin);
    g->nx = (int)ceil(ext.x / g->h) + 1;
    g->ny = (int)ceil(ext.y / g->h) + 1;
    g->nz = (int)ceil(ext.z / g->h) + 1;
    return (size_t)g->nx * g->ny * g->nz;
}

/* The field minus the level at every grid sample. */
static void grid_sample(const sc_field *f, const sc_iso_opts *o, grid *g)
{
    for (int k = 0; k < g->nz; k++)
        for (int j = 0; j < g->ny; j++)
            for (int i = 0; i < g->nx; i++) {
                sc_vec3 p = sc_v3(g->origin.x + i * g->h, g->origin.y + j * g->h, g->origin.z + k * g->h);
                double v = f->eval(f->ctx, p) - o->level;
                if (v == 0) v = 1e-12; /* no sample exactly on the surface */
                g->val[gidx(g, i, j, k)] = v;
            }
}

/* One vertex per crossed cell: mean of its edge crossings (cellv: its index, -1 for the others).
   0 when out of memory. */
static int cell_vertices(const grid *g, int *cellv, sc_trimesh *out, int vcap)
{
    static const int corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
    static const int edge[12][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3}, {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
    int ok = 1;
    for (int k = 0; k + 1 < g->nz; k++)
        for (int j = 0; j + 1 < g->ny; j++)
            for (int i = 0; i + 1 < g->nx; i++) {
                double v[8];
                int inside = 0;
                for (int c = 0; c < 8; c++) {
                    v[c] = g->val[gidx(g, i + corner[c][0], j + corner[c][1], k + corner[c][2])];
                    inside += v[c] < 0;
                }
                size_t ci = cidx(g, i, j, k);
                cellv[ci] = -1;
                if (inside == 0 || inside == 8) continue;
                sc_vec3 sum = sc_v3(0, 0, 0);
                int cnt = 0;
                for (int e = 0; e < 12; e++) {
                    double a = v[edge[e][0]], b = v[edge[e][1]];
                    if ((a < 0) == (b < 0)) continue;
                    double t = a / (a - b);
                    const int *ca = corner[edge[e][0]], *cb = corner[edge[e][1]];
                    sum = sc_v3_add(sum, sc_v3(ca[0] + t * (cb[0] - ca[0]), ca[1] + t * (cb[1] - ca[1]), ca[2] + t * (cb[2] - ca[2])));
                    cnt++;
                }
                if (out->nverts == vcap) {
                    vcap *= 2;
                    double *nv = realloc(out->verts, (size_t)vcap * 3 * sizeof *nv);
                    if (!nv) {
                        ok = 0;
                        break;
                    }
                    out->verts = nv;
                }
                sc_vec3 p = sc_v3_add(g->origin, sc_v3_scale(sc_v3(i + sum.x / cnt, j + sum.y / cnt, k + sum.z / cnt), g->h));
                sc_v3_store(out->verts + 3 * out->nverts, p);
                cellv[ci] = out->nverts++;
            }
    return ok;
}

/* One quad per crossed grid edge, around it the four cells sharing the edge. 0 when out of memory. */
static int edge_quads(const grid *g, const int *cellv, sc_trimesh *out, int ok)
{
    int tcap = 0;
    for (int k = 1; k + 1 < g->nz && ok; k++)
        for (int j = 1; j + 1 < g->ny && ok; j++)
            for (int i = 1; i + 1 < g->nx && ok; i++) {
                double v0 = g->val[gidx(g, i, j, k)];
                for (int axis = 0; axis < 3; axis++) {
                    int di = axis == 0, dj = axis == 1, dk = axis == 2;
                    if (i + di >= g->nx || j + dj >= g->ny || k + dk >= g->nz) continue;
                    double v1 = g->val[gidx(g, i + di, j + dj, k + dk)];
                    if ((v0 < 0) == (v1 < 0)) continue;
                    int c[4];
                    /* the four cells around the edge, in counter-clockwise order about the axis */
                    if (axis == 0) {
                        c[0] = cellv[cidx(g, i, j - 1, k - 1)];
                        c[1] = cellv[cidx(g, i, j, k - 1)];
                        c[2] = cellv[cidx(g, i, j, k)];
                        c[3] = cellv[cidx(g, i, j - 1, k)];
                    } else if (axis == 1) {
                        c[0] = cellv[cidx(g, i - 1, j, k - 1)];
                        c[1] = cellv[cidx(g, i - 1, j, k)];
                        c[2] = cellv[cidx(g, i, j, k)];
                        c[3] = cellv[cidx(g, i, j, k - 1)];
                    } else {
                        c[0] = cellv[cidx(g, i - 1, j - 1, k)];
                        c[1] = cellv[cidx(g, i, j - 1, k)];
                        c[2] = cellv[cidx(g, i, j, k)];
                        c[3] = cellv[cidx(g, i - 1, j, k)];
                    }
                    /* normal along +axis when the inside is at the lower end */
                    if (v0 < 0) quad(out, &tcap, &ok, c[0], c[1], c[2], c[3]);
                    else quad(out, &tcap, &ok, c[3], c[2], c[1], c[0]);
                }
            }
    return ok;
}

/* One Laplacian smoothing pass (half a step towards the neighbours' mean; with `tangential`,
   only along the surface). acc, deg: scratch of nverts * 3 and nverts. */
static void smooth_pass(sc_trimesh *out, int tangential, double *acc, int *deg)
{
    int nv = out->nverts;
    memset(acc, 0, (size_t)nv * 3 * sizeof *acc);
    memset(deg, 0, (size_t)nv * sizeof *deg);
    for (int t = 0; t < out->ntris; t++)
        for (int e = 0; e < 3; e++) {
            int a = out->tris[3 * t + e], b = out->tris[3 * t + (e + 1) % 3];
            for (int d = 0; d < 3; d++) {
                acc[3 * a + d] += out->verts[3 * b + d];
                acc[3 * b + d] += out->verts[3 * a + d];
            }
            deg[a]++;
            deg[b]++;
        }
    double *nrm = tangential ? calloc((size_t)nv * 3, sizeof *nrm) : NULL;
    if (nrm) /* area-weighted vertex normals */
        for (int t = 0; t < out->ntris; t++) {
            const int *tv = out->tris + 3 * t;
            sc_vec3 a = sc_v3_load(out->verts + 3 * tv[0]), b = sc_v3_load(out->verts + 3 * tv[1]), c = sc_v3_load(out->verts + 3 * tv[2]);
            sc_vec3 n = sc_v3_cross(sc_v3_sub(b, a), sc_v3_sub(c, a));
            for (int k = 0; k < 3; k++) sc_v3_store(nrm + 3 * tv[k], sc_v3_add(sc_v3_load(nrm + 3 * tv[k]), n));
        }
    for (int v = 0; v < nv; v++) {
        if (!deg[v]) continue;
        sc_vec3 x = sc_v3_load(out->verts + 3 * v);
        sc_vec3 d = sc_v3_sub(sc_v3_scale(sc_v3_load(acc + 3 * v), 1.0 / deg[v]), x);
        if (nrm) {
            sc_vec3 n = sc_v3_normalize(sc_v3_load(nrm + 3 * v));
            d = sc_v3_sub(d, sc_v3_scale(n, sc_v3_dot(n, d)));
        }
        sc_v3_store(out->verts + 3 * v, sc_v3_axpy(0.5, d, x));
    }
    free(nrm);
}

/* Projection onto the level set: o->project Newton steps along the gradient, each at most half
   a grid spacing h. */
static void project_to_level(const sc_field *f, const sc_iso_opts *o, double h, sc_trimesh *out)
{
    for (int v = 0; v < out->nverts; v++) {
        sc_vec3 p = sc_v3_load(out->verts + 3 * v);
        for (int it = 0; it < o->project; it++) {
            double val = f->eval(f->ctx, p) - o->level;
            sc_vec3 gr = field_grad(f, p, 0.1 * h);
            double g2 = sc_v3_dot(gr, gr);
            if (!(g2 > 1e-12)) break;
            sc_vec3 step = sc_v3_scale(gr, val / g2);
            double s = sc_v3_norm(step);
            if (s > 0.5 * h) step = sc_v3_scale(step, 0.5 * h / s); /* stay local */
            p = sc_v3_sub(p, step);
        }
        sc_v3_store(out->verts + 3 * v, p);
    }
}

int sc_isosurface(const sc_field *f, const sc_iso_opts *o, sc_trimesh *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    grid g;
    size_t n = grid_place(f, o, &g);
    if (!(g.h > 0) || n > (size_t)200 * 1000 * 1000)
        return sc_fail(err, SC_EINPUT, "isosurface: grid spacing %.3g m gives %zu samples; choose a coarser spacing", g.h, n);
    g.val = malloc(n * sizeof *g.val);
    size_t ncells = (size_t)(g.nx - 1) * (g.ny - 1) * (g.nz - 1);
    int *cellv = malloc(ncells * sizeof *cellv);
    int vcap = 4096;
    out->verts = malloc((size_t)vcap * 3 * sizeof *out->verts);
    if (!g.val || !cellv || !out->verts) {
        free(g.val);
        free(cellv);
        sc_trimesh_free(out);
        return sc_fail(err, SC_EIO, "isosurface: out of memory for a %dx%dx%d grid", g.nx, g.ny, g.nz);
    }
    grid_sample(f, o, &g);
    int ok = cell_vertices(&g, cellv, out, vcap);
    ok = edge_quads(&g, cellv, out, ok);
    free(cellv);
    free(g.val);
    if (!ok) {
        sc_trimesh_free(out);
        return sc_fail(err, SC_EIO, "isosurface: out of memory");
    }
    if (out->ntris == 0) {
        sc_trimesh_free(out);
        return sc_fail(err, SC_EINPUT, "isosurface: the body is empty at spacing %.3g m", g.h);
    }

    /* Laplacian smoothing then projection onto the level set (Newton steps along the gradient) */
    if (o->smooth > 0 || o->project > 0) {
        int nv = out->nverts;
        double *acc = calloc((size_t)nv * 3, sizeof *acc);
        int *deg = calloc((size_t)nv, sizeof *deg);
        if (!acc || !deg) {
            free(acc);
            free(deg);
            sc_trimesh_free(out);
            return sc_fail(err, SC_EIO, "isosurface: out of memory");
        }
        for (int pass = 0; pass < o->smooth; pass++) smooth_pass(out, o->tangential, acc, deg);
        project_to_level(f, o, g.h, out);
        free(acc);
        free(deg);
    }
    return SC_OK;
}

typedef struct {
    int a, b, tri;
} half_edge;

static int cmp_he(const void *x, const void *y)
{
    const half_edge *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return 0;
}

/* Counts the half-edges that break closedness. Strict: every directed edge (a,b) appears once
 * and its twin (b,a) once (a manifold). Not strict: (a,b) appears as often as (b,a), so a
 * closed surface may pinch along an edge (surface nets do) but an open boundary or a repeated
 * face is still found. */
static int edge_check(const sc_trimesh *m, int strict, int *first_bad)
{
    size_t n = (size_t)m->ntris * 3;
    half_edge *he = malloc((n ? n : 1) * sizeof *he);
    if (first_bad) *first_bad = -1;
    if (!he) return -1;
    for (int t = 0; t < m->ntris; t++)
        for (int e = 0; e < 3; e++) {
            half_edge *h = &he[3 * t + e];
            h->a = m->tris[3 * t + e];
            h->b = m->tris[3 * t + (e + 1) % 3];
            h->tri = t;
        }
    qsort(he, n, sizeof *he, cmp_he);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        half_edge twin = {he[i].b, he[i].a, 0};
        int ok;
        if (strict) {
            int dup = (i > 0 && !cmp_he(&he[i], &he[i - 1])) || (i + 1 < n && !cmp_he(&he[i], &he[i + 1]));
            ok = !dup && bsearch(&twin, he, n, sizeof *he, cmp_he) != NULL;
        } else {
            size_t lo = i, hi = i; /* the run of (a,b) around i, against the run of (b,a) */
            while (lo > 0 && !cmp_he(&he[lo - 1], &he[i])) lo--;
            while (hi + 1 < n && !cmp_he(&he[hi + 1], &he[i])) hi++;
            const half_edge *tw = bsearch(&twin, he, n, sizeof *he, cmp_he);
            size_t count = 0;
            if (tw) {
                size_t k = (size_t)(tw - he), a = k, b = k;
                while (a > 0 && !cmp_he(&he[a - 1], &twin)) a--;
                while (b + 1 < n && !cmp_he(&he[b + 1], &twin)) b++;
                count = b - a + 1;
            }
            ok = count == hi - lo + 1;
        }
        if (!ok || he[i].a == he[i].b) {
            bad++;
            if (first_bad && *first_bad < 0) *first_bad = he[i].tri;
        }
    }
    free(he);
    return bad;
}

int sc_trimesh_open_edges(const sc_trimesh *m, int *first_bad) { return edge_check(m, 1, first_bad); }
int sc_trimesh_unmatched_edges(const sc_trimesh *m, int *first_bad) { return edge_check(m, 0, first_bad); }

double sc_iso_spacing_for(const sc_field *f, double level, int target, double probe, sc_err *err)
{
    sc_iso_opts o = {probe, level, 0, 0, 0, 0};
    sc_trimesh m;
    if (sc_isosurface(f, &o, &m, err)) return -1;
    double h = probe * sqrt((double)m.nverts / target);
    sc_trimesh_free(&m);
    return h;
}

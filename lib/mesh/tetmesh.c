/* Tet meshes: orientation, volumes, Bm^-1 and lumped masses, quality, components, the boundary,
 * and the improvement pass (sliver peeling, node smoothing, unused nodes dropped). */
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "core/mathx.h"
#include "mesh/tetmesh.h"

void sc_tetmesh_free(sc_tetmesh *m)
{
    free(m->pos);
    free(m->tets);
    memset(m, 0, sizeof *m);
}

double sc_tet_signed_volume(const double *a, const double *b, const double *c, const double *d)
{
    sc_vec3 pa = sc_v3_load(a);
    sc_vec3 e1 = sc_v3_sub(sc_v3_load(b), pa), e2 = sc_v3_sub(sc_v3_load(c), pa), e3 = sc_v3_sub(sc_v3_load(d), pa);
    return sc_v3_dot(e1, sc_v3_cross(e2, e3)) / 6.0;
}

static double tet_volume(const sc_tetmesh *m, int t)
{
    const int *v = m->tets + 4 * t;
    return sc_tet_signed_volume(m->pos + 3 * v[0], m->pos + 3 * v[1], m->pos + 3 * v[2], m->pos + 3 * v[3]);
}

int sc_tetmesh_orient(sc_tetmesh *m)
{
    int flipped = 0;
    for (int t = 0; t < m->ntets; t++)
        if (tet_volume(m, t) < 0) {
            int *v = m->tets + 4 * t, s = v[2];
            v[2] = v[3];
            v[3] = s;
            flipped++;
        }
    return flipped;
}

void sc_tetmesh_quality(const sc_tetmesh *m, sc_tet_quality *q)
{
    memset(q, 0, sizeof *q);
    q->min_dihedral = 180;
    q->min_volume = 1e300;
    q->worst_tet = -1;
    static const int faces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    static const int edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    double re_sum = 0;
    for (int t = 0; t < m->ntets; t++) {
        sc_vec3 p[4];
        for (int i = 0; i < 4; i++) p[i] = sc_v3_load(m->pos + 3 * m->tets[4 * t + i]);
        double vol = tet_volume(m, t);
        if (vol <= 0) q->nonpositive++;
        q->min_volume = fmin(q->min_volume, vol);
        q->max_volume = fmax(q->max_volume, vol);
        /* outward face normals; the dihedral angle at the edge shared by faces i, j is
           pi - angle(n_i, n_j) */
        sc_vec3 n[4];
        for (int f = 0; f < 4; f++) {
            sc_vec3 a = p[faces[f][0]], b = p[faces[f][1]], c = p[faces[f][2]];
            n[f] = sc_v3_normalize(sc_v3_cross(sc_v3_sub(b, a), sc_v3_sub(c, a)));
        }
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                double c = fmax(-1, fmin(1, sc_v3_dot(n[i], n[j])));
                double ang = 180.0 - acos(c) * 180.0 / SC_PI;
                if (ang < q->min_dihedral) {
                    q->min_dihedral = ang;
                    q->worst_tet = t;
                }
                q->max_dihedral = fmax(q->max_dihedral, ang);
            }
        /* circumradius: solve 2 (p_i - p_0) . c = |p_i|^2 - |p_0|^2 */
        sc_mat3 a;
        sc_vec3 rhs;
        for (int i = 0; i < 3; i++) {
            sc_vec3 d = sc_v3_sub(p[i + 1], p[0]);
            a.m[i][0] = 2 * d.x;
            a.m[i][1] = 2 * d.y;
            a.m[i][2] = 2 * d.z;
            double r = sc_v3_dot(d, d);
            if (i == 0) rhs.x = r;
            else if (i == 1) rhs.y = r;
            else rhs.z = r;
        }
        sc_mat3 inv;
        double lmin = 1e300;
        for (int e = 0; e < 6; e++) lmin = fmin(lmin, sc_v3_dist(p[edges[e][0]], p[edges[e][1]]));
        double re = 1e300;
        if (sc_m3_inverse(a, &inv)) re = sc_v3_norm(sc_m3_mulv(inv, rhs)) / lmin;
        re_sum += re;
        q->radius_edge_max = fmax(q->radius_edge_max, re);
    }
    q->radius_edge_mean = m->ntets ? re_sum / m->ntets : 0;
}

int sc_tetmesh_geometry(const sc_tetmesh *m, double density, double *volume, double *bm_inv, double *node_mass, sc_err *err)
{
    memset(node_mass, 0, (size_t)m->nnodes * sizeof *node_mass);
    for (int t = 0; t < m->ntets; t++) {
        const int *v = m->tets + 4 * t;
        sc_vec3 x0 = sc_v3_load(m->pos + 3 * v[0]);
        sc_mat3 bm = sc_m3_from_cols(sc_v3_sub(sc_v3_load(m->pos + 3 * v[1]), x0), sc_v3_sub(sc_v3_load(m->pos + 3 * v[2]), x0),
                                     sc_v3_sub(sc_v3_load(m->pos + 3 * v[3]), x0));
        double vol = sc_m3_det(bm) / 6.0;
        sc_mat3 inv;
        if (!(vol > 0) || !sc_m3_inverse(bm, &inv))
            return sc_fail(err, SC_EINPUT, "tet %d (nodes %d %d %d %d) is degenerate or inverted: volume %.3g m^3", t, v[0], v[1], v[2], v[3], vol);
        volume[t] = vol;
        memcpy(bm_inv + 9 * t, inv.m, 9 * sizeof(double));
        for (int i = 0; i < 4; i++) node_mass[v[i]] += density * vol / 4;
    }
    return SC_OK;
}

static int find_root(int *parent, int x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

int sc_tetmesh_components(int nnodes, int ntets, const int *tets, int *comp)
{
    int *parent = malloc((size_t)nnodes * sizeof *parent);
    if (!parent) return -1;
    for (int i = 0; i < nnodes; i++) parent[i] = i;
    for (int t = 0; t < ntets; t++)
        for (int i = 1; i < 4; i++) {
            int a = find_root(parent, tets[4 * t]), b = find_root(parent, tets[4 * t + i]);
            if (a != b) parent[a < b ? b : a] = a < b ? a : b;
        }
    int n = 0;
    for (int i = 0; i < nnodes; i++) {
        int r = find_root(parent, i);
        if (r == i) comp[i] = n++;
    }
    for (int i = 0; i < nnodes; i++) comp[i] = comp[find_root(parent, i)];
    free(parent);
    return n;
}

typedef struct {
    int k[3];
    int f[3];
} face_key;

static int cmp_face(const void *a, const void *b) { return memcmp(((const face_key *)a)->k, ((const face_key *)b)->k, 3 * sizeof(int)); }

static void face_key_make(face_key *k, const int tri[3])
{
    for (int i = 0; i < 3; i++) k->f[i] = k->k[i] = tri[i];
    for (int i = 0; i < 2; i++)
        for (int j = i + 1; j < 3; j++)
            if (k->k[j] < k->k[i]) {
                int s = k->k[i];
                k->k[i] = k->k[j];
                k->k[j] = s;
            }
}

int sc_tetmesh_boundary(const sc_tetmesh *m, int **faces_out, sc_err *err)
{
    static const int fidx[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}}; /* outward for a positive tet */
    size_t n = (size_t)m->ntets * 4;
    face_key *fk = malloc(n * sizeof *fk);
    int *faces = malloc(n * 3 * sizeof *faces);
    if (!fk || !faces) {
        free(fk);
        free(faces);
        return -sc_fail(err, SC_EIO, "out of memory");
    }
    for (int t = 0; t < m->ntets; t++)
        for (int f = 0; f < 4; f++) {
            int tri[3] = {m->tets[4 * t + fidx[f][0]], m->tets[4 * t + fidx[f][1]], m->tets[4 * t + fidx[f][2]]};
            face_key_make(&fk[4 * t + f], tri);
        }
    qsort(fk, n, sizeof *fk, cmp_face);
    int nb = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && !cmp_face(&fk[i], &fk[j])) j++;
        if (j - i == 1) {
            memcpy(faces + 3 * nb, fk[i].f, 3 * sizeof(int));
            nb++;
        }
        i = j;
    }
    free(fk);
    *faces_out = faces;
    return nb;
}

double sc_tet_min_dihedral(const double *a, const double *b, const double *c, const double *d)
{
    const double *p[4] = {a, b, c, d};
    static const int faces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    sc_vec3 n[4];
    for (int f = 0; f < 4; f++) {
        sc_vec3 x = sc_v3_load(p[faces[f][0]]), y = sc_v3_load(p[faces[f][1]]), z = sc_v3_load(p[faces[f][2]]);
        n[f] = sc_v3_normalize(sc_v3_cross(sc_v3_sub(y, x), sc_v3_sub(z, x)));
    }
    if (sc_tet_signed_volume(a, b, c, d) <= 0) return -1;
    double mn = 180;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) mn = fmin(mn, 180.0 - acos(fmax(-1, fmin(1, sc_v3_dot(n[i], n[j])))) * 180.0 / SC_PI);
    return mn;
}

static double tet_angle(const sc_tetmesh *m, int t)
{
    const int *v = m->tets + 4 * t;
    return sc_tet_min_dihedral(m->pos + 3 * v[0], m->pos + 3 * v[1], m->pos + 3 * v[2], m->pos + 3 * v[3]);
}

/* node -> incident tets (CSR) */
static int build_incidence(const sc_tetmesh *m, int **start, int **items)
{
    *start = calloc((size_t)m->nnodes + 1, sizeof **start);
    *items = malloc((size_t)m->ntets * 4 * sizeof **items);
    if (!*start || !*items) return 0;
    for (int i = 0; i < 4 * m->ntets; i++) (*start)[m->tets[i] + 1]++;
    for (int n = 0; n < m->nnodes; n++) (*start)[n + 1] += (*start)[n];
    int *fill = calloc((size_t)m->nnodes, sizeof *fill);
    if (!fill) return 0;
    for (int i = 0; i < 4 * m->ntets; i++) {
        int n = m->tets[i];
        (*items)[(*start)[n] + fill[n]++] = i / 4;
    }
    free(fill);
    return 1;
}

/* 1. Peels slivers that have a boundary face, a few rounds (peeling exposes new faces). */
static int peel_slivers(sc_tetmesh *m, const unsigned char *locked, double min_angle, sc_improve_stats *st, sc_err *err)
{
    for (int round = 0; round < 4; round++) {
        int *bf = NULL;
        int nb = sc_tetmesh_boundary(m, &bf, err);
        if (nb < 0) return SC_EIO;
        face_key *keys = malloc((size_t)(nb + 1) * sizeof *keys);
        if (!keys) {
            free(bf);
            return sc_fail(err, SC_EIO, "out of memory");
        }
        for (int f = 0; f < nb; f++) face_key_make(&keys[f], bf + 3 * f);
        qsort(keys, (size_t)nb, sizeof *keys, cmp_face);
        free(bf);
        int kept = 0, peeled = 0;
        for (int t = 0; t < m->ntets; t++) {
            const int *v = m->tets + 4 * t;
            int on_boundary = 0;
            for (int f = 0; f < 4 && !on_boundary; f++) {
                int tri[3] = {v[(f + 1) % 4], v[(f + 2) % 4], v[(f + 3) % 4]};
                face_key k;
                face_key_make(&k, tri);
                on_boundary = bsearch(&k, keys, (size_t)nb, sizeof *keys, cmp_face) != NULL;
            }
            int lockedv = locked && (locked[v[0]] == 1 || locked[v[1]] == 1 || locked[v[2]] == 1 || locked[v[3]] == 1); /* 2: pinned only */
            if (on_boundary && !lockedv && tet_angle(m, t) < min_angle) {
                peeled++;
                continue;
            }
            memmove(m->tets + 4 * kept++, v, 4 * sizeof(int));
        }
        free(keys);
        m->ntets = kept;
        st->peeled += peeled;
        if (!peeled) break;
    }
    return SC_OK;
}

/* The boundary nodes (onb[n] = 1) and their area-weighted normals (bn, zero elsewhere). */
static int boundary_normals(const sc_tetmesh *m, unsigned char *onb, double *bn, sc_err *err)
{
    int *bf = NULL;
    int nb = sc_tetmesh_boundary(m, &bf, err);
    if (nb < 0) {
        free(bf);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    memset(onb, 0, (size_t)m->nnodes);
    for (int f = 0; f < nb; f++) {
        const int *tv = bf + 3 * f;
        sc_vec3 a = sc_v3_load(m->pos + 3 * tv[0]), b = sc_v3_load(m->pos + 3 * tv[1]), c = sc_v3_load(m->pos + 3 * tv[2]);
        sc_vec3 n = sc_v3_cross(sc_v3_sub(b, a), sc_v3_sub(c, a));
        for (int k = 0; k < 3; k++) {
            onb[tv[k]] = 1;
            sc_v3_store(bn + 3 * tv[k], sc_v3_add(sc_v3_load(bn + 3 * tv[k]), n));
        }
    }
    free(bf);
    return SC_OK;
}

/* Moves node n to raise the worst angle of its tets (start/items: the tets around each node):
   candidates are steps towards the neighbourhood centroid, then small steps along the axes
   (scaled by the distance to the neighbours; a boundary node only these, halved, within its
   tangent plane); the best is kept. 1 when it moved. */
static int improve_node(sc_tetmesh *m, int n, const int *start, const int *items, const unsigned char *onb, const double *bn)
{
    sc_vec3 nrm = sc_v3_normalize(sc_v3_load(bn + 3 * n));
    double *x = m->pos + 3 * n, old[3] = {x[0], x[1], x[2]};
    double worst = 180;
    sc_vec3 c = sc_v3(0, 0, 0);
    int cnt = 0;
    for (int q = start[n]; q < start[n + 1]; q++) {
        worst = fmin(worst, tet_angle(m, items[q]));
        for (int j = 0; j < 4; j++)
            if (m->tets[4 * items[q] + j] != n) {
                c = sc_v3_add(c, sc_v3_load(m->pos + 3 * m->tets[4 * items[q] + j]));
                cnt++;
            }
    }
    c = sc_v3_scale(c, 1.0 / cnt);
    double best = worst, bx[3] = {old[0], old[1], old[2]};
    double scale = 0;
    for (int q = start[n]; q < start[n + 1]; q++)
        for (int j = 0; j < 4; j++) scale += sc_v3_dist(sc_v3_load(old), sc_v3_load(m->pos + 3 * m->tets[4 * items[q] + j]));
    scale /= 3.0 * (start[n + 1] - start[n]);
    for (int s = 1; s <= 4 + 18; s++) {
        if (s <= 4 && onb[n]) continue;
        if (s <= 4) {
            double a = 0.25 * s;
            for (int d = 0; d < 3; d++) x[d] = old[d] + a * (sc_v3_get(c, d) - old[d]);
        } else {
            int axis_step = s - 5, axis = axis_step % 3, sign = (axis_step / 3) % 2 ? -1 : 1;
            double step = (axis_step < 6 ? 0.05 : axis_step < 12 ? 0.12 : 0.25) * scale;
            sc_vec3 dir = sc_v3(axis == 0, axis == 1, axis == 2);
            if (onb[n]) {
                dir = sc_v3_sub(dir, sc_v3_scale(nrm, sc_v3_dot(nrm, dir)));
                step *= 0.5;
            }
            for (int d = 0; d < 3; d++) x[d] = bx[d] + sign * step * sc_v3_get(dir, d);
        }
        double w = 180;
        for (int q = start[n]; q < start[n + 1] && w > best; q++) w = fmin(w, tet_angle(m, items[q]));
        if (w > best) {
            best = w;
            memcpy(bx, x, sizeof bx);
        }
    }
    memcpy(x, bx, sizeof bx);
    return best > worst;
}

/* 2. Moves the free nodes of the tets below min_angle, up to 20 passes. */
static int smooth_nodes(sc_tetmesh *m, const unsigned char *locked, double min_angle, const unsigned char *onb, const double *bn,
                        sc_improve_stats *st, sc_err *err)
{
    int *start, *items;
    if (!build_incidence(m, &start, &items)) return sc_fail(err, SC_EIO, "out of memory");
    for (int pass = 0; pass < 20; pass++) {
        int moves = 0;
        for (int t = 0; t < m->ntets; t++) {
            if (tet_angle(m, t) >= min_angle) continue;
            for (int k = 0; k < 4; k++) {
                int n = m->tets[4 * t + k];
                if (locked && locked[n]) continue;
                moves += improve_node(m, n, start, items, onb, bn);
            }
        }
        st->smoothed_moves += moves;
        if (!moves) break;
    }
    free(start);
    free(items);
    return SC_OK;
}

/* 3. Drops the nodes no tet uses (remap[old] = new index, -1 dropped). */
static void drop_unused_nodes(sc_tetmesh *m, int *remap, sc_improve_stats *st)
{
    int n0 = m->nnodes;
    for (int i = 0; i < n0; i++) remap[i] = -1;
    for (int i = 0; i < 4 * m->ntets; i++) remap[m->tets[i]] = 0;
    int nn = 0;
    for (int i = 0; i < n0; i++)
        if (remap[i] == 0) {
            memmove(m->pos + 3 * nn, m->pos + 3 * i, 3 * sizeof(double));
            remap[i] = nn++;
        }
    for (int i = 0; i < 4 * m->ntets; i++) m->tets[i] = remap[m->tets[i]];
    st->removed_nodes = n0 - nn;
    m->nnodes = nn;
}

int sc_tetmesh_improve(sc_tetmesh *m, const unsigned char *locked, double min_angle, int *remap, sc_improve_stats *st, sc_err *err)
{
    memset(st, 0, sizeof *st);
    int n0 = m->nnodes;
    st->min_dihedral_before = 180;
    for (int t = 0; t < m->ntets; t++) st->min_dihedral_before = fmin(st->min_dihedral_before, tet_angle(m, t));
    unsigned char *onb = calloc((size_t)n0, 1);
    if (!onb) return sc_fail(err, SC_EIO, "out of memory");
    double *bn = NULL;
    int rc = peel_slivers(m, locked, min_angle, st, err);
    if (!rc && !(bn = calloc((size_t)n0 * 3, sizeof *bn))) rc = sc_fail(err, SC_EIO, "out of memory");
    if (!rc) rc = boundary_normals(m, onb, bn, err);
    if (!rc) rc = smooth_nodes(m, locked, min_angle, onb, bn, st, err);
    free(onb);
    free(bn);
    if (rc) return rc;
    drop_unused_nodes(m, remap, st);
    st->min_dihedral_after = 180;
    for (int t = 0; t < m->ntets; t++) st->min_dihedral_after = fmin(st->min_dihedral_after, tet_angle(m, t));
    return SC_OK;
}

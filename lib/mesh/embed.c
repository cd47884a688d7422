#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/mathx.h"
#include "mesh/embed.h"

void sc_tet_barycentric(const sc_tetmesh *m, int t, const double *p, double b[4])
{
    const int *v = m->tets + 4 * t;
    sc_vec3 x0 = sc_v3_load(m->pos + 3 * v[0]);
    sc_mat3 d = sc_m3_from_cols(sc_v3_sub(sc_v3_load(m->pos + 3 * v[1]), x0), sc_v3_sub(sc_v3_load(m->pos + 3 * v[2]), x0),
                                sc_v3_sub(sc_v3_load(m->pos + 3 * v[3]), x0));
    sc_mat3 inv;
    if (!sc_m3_inverse(d, &inv)) {
        b[0] = 1;
        b[1] = b[2] = b[3] = 0;
        return;
    }
    sc_vec3 l = sc_m3_mulv(inv, sc_v3_sub(sc_v3_load(p), x0));
    b[1] = l.x;
    b[2] = l.y;
    b[3] = l.z;
    b[0] = 1 - l.x - l.y - l.z;
}

/* A uniform grid over the tets' bounding boxes: cell c lists the tets items[start[c] ..
   start[c + 1]). */
typedef struct tet_grid {
    sc_vec3 lo, hi;
    double h;
    int nx, ny, nz;
    int *start, *items;
} tet_grid;

static int grid_cell(double v, double l, int n, double h) { return (int)fmin(n - 1, fmax(0, (v - l) / h)); }

static int tet_grid_build(const sc_tetmesh *m, tet_grid *g, sc_err *err)
{
    memset(g, 0, sizeof *g);
    g->lo = sc_v3(1e30, 1e30, 1e30);
    g->hi = sc_v3(-1e30, -1e30, -1e30);
    for (int i = 0; i < m->nnodes; i++) {
        g->lo = sc_v3_min(g->lo, sc_v3_load(m->pos + 3 * i));
        g->hi = sc_v3_max(g->hi, sc_v3_load(m->pos + 3 * i));
    }
    sc_vec3 lo = g->lo, hi = g->hi;
    double vol = (hi.x - lo.x) * (hi.y - lo.y) * (hi.z - lo.z);
    double h = g->h = cbrt(vol / fmax(1, m->ntets)) * 1.5;
    int nx = g->nx = (int)((hi.x - lo.x) / h) + 1, ny = g->ny = (int)((hi.y - lo.y) / h) + 1;
    int nz = g->nz = (int)((hi.z - lo.z) / h) + 1;
    size_t ncell = (size_t)nx * ny * nz;
    int *start = g->start = calloc(ncell + 1, sizeof *start);
    int *boxes = malloc((size_t)m->ntets * 6 * sizeof *boxes);
    if (!start || !boxes) {
        free(boxes);
        return sc_fail(err, SC_EIO, "out of memory embedding the surface");
    }
    for (int t = 0; t < m->ntets; t++) {
        sc_vec3 a = sc_v3(1e30, 1e30, 1e30), b = sc_v3(-1e30, -1e30, -1e30);
        for (int i = 0; i < 4; i++) {
            sc_vec3 p = sc_v3_load(m->pos + 3 * m->tets[4 * t + i]);
            a = sc_v3_min(a, p);
            b = sc_v3_max(b, p);
        }
        int *bx = boxes + 6 * t;
        bx[0] = grid_cell(a.x, lo.x, nx, h);
        bx[1] = grid_cell(a.y, lo.y, ny, h);
        bx[2] = grid_cell(a.z, lo.z, nz, h);
        bx[3] = grid_cell(b.x, lo.x, nx, h);
        bx[4] = grid_cell(b.y, lo.y, ny, h);
        bx[5] = grid_cell(b.z, lo.z, nz, h);
        for (int k = bx[2]; k <= bx[5]; k++)
            for (int j = bx[1]; j <= bx[4]; j++)
                for (int i = bx[0]; i <= bx[3]; i++) start[((size_t)k * ny + j) * nx + i + 1]++;
    }
    for (size_t c = 0; c < ncell; c++) start[c + 1] += start[c];
    int *items = g->items = malloc((size_t)start[ncell] * sizeof *items), *fill = calloc(ncell, sizeof *fill);
    if (!items || !fill) {
        free(boxes);
        free(fill);
        return sc_fail(err, SC_EIO, "out of memory embedding the surface");
    }
    for (int t = 0; t < m->ntets; t++) {
        int *bx = boxes + 6 * t;
        for (int k = bx[2]; k <= bx[5]; k++)
            for (int j = bx[1]; j <= bx[4]; j++)
                for (int i = bx[0]; i <= bx[3]; i++) {
                    size_t c = ((size_t)k * ny + j) * nx + i;
                    items[start[c] + fill[c]++] = t;
                }
    }
    free(fill);
    free(boxes);
    return SC_OK;
}

static void tet_grid_free(tet_grid *g)
{
    free(g->start);
    free(g->items);
}

/* The tet of the grid's cell at x that x is most inside of (its smallest barycentric coordinate
   the largest), or -1; *best_min gets that coordinate. */
static int containing_tet(const sc_tetmesh *m, const tet_grid *g, const double *x, double *best_min)
{
    int best = -1;
    double b[4];
    *best_min = -1e300;
    if (!(x[0] >= g->lo.x && x[0] <= g->hi.x && x[1] >= g->lo.y && x[1] <= g->hi.y && x[2] >= g->lo.z && x[2] <= g->hi.z)) return -1;
    size_t c = ((size_t)grid_cell(x[2], g->lo.z, g->nz, g->h) * g->ny + grid_cell(x[1], g->lo.y, g->ny, g->h)) * g->nx +
        grid_cell(x[0], g->lo.x, g->nx, g->h);
    for (int q = g->start[c]; q < g->start[c + 1]; q++) {
        sc_tet_barycentric(m, g->items[q], x, b);
        double mn = fmin(fmin(b[0], b[1]), fmin(b[2], b[3]));
        if (mn > *best_min) {
            *best_min = mn;
            best = g->items[q];
        }
    }
    return best;
}

/* A point outside the mesh: the tet of the nearest boundary face (the one holding all three of
   its nodes), or -1; *distance gets the distance to that face. */
static int nearest_boundary_tet(const sc_tetmesh *m, const int *bfaces, int nb, const double *x, double *distance)
{
    double bd = 1e300;
    int bf = -1;
    for (int f = 0; f < nb; f++) {
        sc_vec3 q = sc_closest_on_triangle(sc_v3_load(x), sc_v3_load(m->pos + 3 * bfaces[3 * f]), sc_v3_load(m->pos + 3 * bfaces[3 * f + 1]),
                                           sc_v3_load(m->pos + 3 * bfaces[3 * f + 2]));
        double d = sc_v3_dist(q, sc_v3_load(x));
        if (d < bd) {
            bd = d;
            bf = f;
        }
    }
    *distance = bd;
    int best = -1;
    for (int t = 0; t < m->ntets && best < 0 && bf >= 0; t++) {
        int hit = 0;
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) hit += m->tets[4 * t + i] == bfaces[3 * bf + k];
        if (hit == 3) best = t;
    }
    return best;
}

int sc_embed_points(const sc_tetmesh *m, int npts, const double *pts, int *tet, double *bary, sc_embed_stats *st, sc_err *err)
{
    memset(st, 0, sizeof *st);
    tet_grid g;
    int rc = tet_grid_build(m, &g, err);
    if (rc) {
        tet_grid_free(&g);
        return rc;
    }
    int *bfaces = NULL, nb = -1;
    for (int p = 0; p < npts && !rc; p++) {
        const double *x = pts + 3 * p;
        double best_min, bd;
        int best = containing_tet(m, &g, x, &best_min);
        if (best >= 0 && best_min >= -1e-9) {
            st->inside++;
        } else {
            if (nb < 0 && (nb = sc_tetmesh_boundary(m, &bfaces, err)) < 0) {
                rc = SC_EIO;
                break;
            }
            if ((best = nearest_boundary_tet(m, bfaces, nb, x, &bd)) < 0) {
                rc = sc_fail(err, SC_EINPUT, "surface vertex %d: no tet to embed it in", p);
                break;
            }
            st->fallback++;
            st->max_fallback_distance = fmax(st->max_fallback_distance, bd);
        }
        tet[p] = best;
        sc_tet_barycentric(m, best, x, bary + 4 * p);
    }
    free(bfaces);
    tet_grid_free(&g);
    return rc;
}

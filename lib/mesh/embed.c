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
    if (!sc_m3_inverse(d, &inv)) { b[0] = 1; b[1] = b[2] = b[3] = 0; return; }
    sc_vec3 l = sc_m3_mulv(inv, sc_v3_sub(sc_v3_load(p), x0));
    b[1] = l.x; b[2] = l.y; b[3] = l.z;
    b[0] = 1 - l.x - l.y - l.z;
}

int sc_embed_points(const sc_tetmesh *m, int npts, const double *pts, int *tet, double *bary, sc_embed_stats *st, sc_err *err)
{
    memset(st, 0, sizeof *st);
    /* uniform grid over tet bounding boxes */
    sc_vec3 lo = sc_v3(1e30, 1e30, 1e30), hi = sc_v3(-1e30, -1e30, -1e30);
    for (int i = 0; i < m->nnodes; i++) {
        lo = sc_v3_min(lo, sc_v3_load(m->pos + 3 * i));
        hi = sc_v3_max(hi, sc_v3_load(m->pos + 3 * i));
    }
    double vol = (hi.x - lo.x) * (hi.y - lo.y) * (hi.z - lo.z);
    double h = cbrt(vol / fmax(1, m->ntets)) * 1.5;
    int nx = (int)((hi.x - lo.x) / h) + 1, ny = (int)((hi.y - lo.y) / h) + 1, nz = (int)((hi.z - lo.z) / h) + 1;
    size_t ncell = (size_t)nx * ny * nz;
    int *start = calloc(ncell + 1, sizeof *start);
    int *boxes = malloc((size_t)m->ntets * 6 * sizeof *boxes);
    if (!start || !boxes) { free(start); free(boxes); return sc_fail(err, SC_EIO, "out of memory embedding the surface"); }
#define CELL(v, l, n) ((int)fmin((n) - 1, fmax(0, ((v) - (l)) / h)))
    for (int t = 0; t < m->ntets; t++) {
        sc_vec3 a = sc_v3(1e30, 1e30, 1e30), b = sc_v3(-1e30, -1e30, -1e30);
        for (int i = 0; i < 4; i++) {
            sc_vec3 p = sc_v3_load(m->pos + 3 * m->tets[4 * t + i]);
            a = sc_v3_min(a, p);
            b = sc_v3_max(b, p);
        }
        int *bx = boxes + 6 * t;
        bx[0] = CELL(a.x, lo.x, nx); bx[1] = CELL(a.y, lo.y, ny); bx[2] = CELL(a.z, lo.z, nz);
        bx[3] = CELL(b.x, lo.x, nx); bx[4] = CELL(b.y, lo.y, ny); bx[5] = CELL(b.z, lo.z, nz);
        for (int k = bx[2]; k <= bx[5]; k++)
            for (int j = bx[1]; j <= bx[4]; j++)
                for (int i = bx[0]; i <= bx[3]; i++) start[((size_t)k * ny + j) * nx + i + 1]++;
    }
    for (size_t c = 0; c < ncell; c++) start[c + 1] += start[c];
    int *items = malloc((size_t)start[ncell] * sizeof *items), *fill = calloc(ncell, sizeof *fill);
    if (!items || !fill) { free(start); free(boxes); free(items); free(fill); return sc_fail(err, SC_EIO, "out of memory embedding the surface"); }
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
    int *bfaces = NULL, nb = -1;
    for (int p = 0; p < npts; p++) {
        const double *x = pts + 3 * p;
        int best = -1;
        double best_min = -1e300, b[4];
        if (x[0] >= lo.x && x[0] <= hi.x && x[1] >= lo.y && x[1] <= hi.y && x[2] >= lo.z && x[2] <= hi.z) {
            size_t c = ((size_t)CELL(x[2], lo.z, nz) * ny + CELL(x[1], lo.y, ny)) * nx + CELL(x[0], lo.x, nx);
            for (int q = start[c]; q < start[c + 1]; q++) {
                sc_tet_barycentric(m, items[q], x, b);
                double mn = fmin(fmin(b[0], b[1]), fmin(b[2], b[3]));
                if (mn > best_min) { best_min = mn; best = items[q]; }
            }
        }
        if (best >= 0 && best_min >= -1e-9) {
            st->inside++;
        } else {
            /* outside: nearest boundary face, its tet */
            if (nb < 0) {
                nb = sc_tetmesh_boundary(m, &bfaces, err);
                if (nb < 0) { free(start); free(items); return SC_EIO; }
            }
            double bd = 1e300;
            int bf = -1;
            for (int f = 0; f < nb; f++) {
                sc_vec3 q = sc_closest_on_triangle(sc_v3_load(x), sc_v3_load(m->pos + 3 * bfaces[3 * f]),
                                                sc_v3_load(m->pos + 3 * bfaces[3 * f + 1]), sc_v3_load(m->pos + 3 * bfaces[3 * f + 2]));
                double d = sc_v3_dist(q, sc_v3_load(x));
                if (d < bd) { bd = d; bf = f; }
            }
            /* the tet owning that face: the one containing all three of its nodes */
            best = -1;
            for (int t = 0; t < m->ntets && best < 0 && bf >= 0; t++) {
                int hit = 0;
                for (int i = 0; i < 4; i++)
                    for (int k = 0; k < 3; k++) hit += m->tets[4 * t + i] == bfaces[3 * bf + k];
                if (hit == 3) best = t;
            }
            if (best < 0) { free(start); free(items); free(bfaces); return sc_fail(err, SC_EINPUT, "surface vertex %d: no tet to embed it in", p); }
            st->fallback++;
            st->max_fallback_distance = fmax(st->max_fallback_distance, bd);
        }
        tet[p] = best;
        sc_tet_barycentric(m, best, x, bary + 4 * p);
    }
#undef CELL
    free(bfaces);
    free(start);
    free(items);
    return SC_OK;
}

/* character.h5's /muscles (muscles.h). */
#include "store/muscles.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D1(n) \
    (size_t[]) { (size_t)(n) }
#define D2(n, k) \
    (size_t[]) { (size_t)(n), (size_t)(k) }

int sc_character_write_muscles(sc_h5 *f, const sc_muscles *mu, const sc_model *m, sc_err *err)
{
    const char *names[256];
    if (mu->ngroups > 256) return sc_fail(err, SC_EINPUT, "muscles: %d groups (at most 256)", mu->ngroups);
    for (int g = 0; g < mu->ngroups; g++) names[g] = mu->group_name[g];
    int *seg = malloc(2 * (size_t)mu->nsegs * sizeof(int));
    if (!seg) return sc_fail(err, SC_EIO, "muscles: out of memory");
    for (int j = 0; j < mu->nsegs; j++) {
        seg[2 * j] = mu->seg_a[j];
        seg[2 * j + 1] = mu->seg_b[j];
    }
    const int nnz = mu->inf_first[m->ntets];
    int rc;
    if ((rc = sc_h5_group(f, "/muscles", "muscle fibres of a boneless character ([T12] 4.2): polylines of contracting segments", err)) ||
        (rc = sc_h5_attr_f64(f, "/muscles", "stiffness", mu->stiffness, err)) ||
        (rc = sc_h5_attr_str(f, "/muscles", "stiffness_units", "Pa (tension per unit strain (l - l_d) / l0)", err)) ||
        (rc = sc_h5_attr_f64(f, "/muscles", "sigma", mu->sigma, err)) ||
        (rc = sc_h5_attr_str(f, "/muscles", "sigma_units", "m (Gaussian influence width, eq. 5)", err)) ||
        (rc = sc_h5_attr_f64(f, "/muscles", "min_ratio", mu->min_ratio, err)) || (rc = sc_h5_attr_i64(f, "/muscles", "fibres", mu->nfibres, err)) ||
        (rc = sc_h5_attr_i64(f, "/muscles", "segments", mu->nsegs, err)) ||
        (rc = sc_h5_write_strings(f, "/muscles/group_names", (size_t)mu->ngroups, names, "muscle groups (weights normalise within a group, eq. 5)",
                                  err)) ||
        (rc = sc_h5_write_i32(f, "/muscles/group_kinds", 1, D1(mu->ngroups), mu->group_kind, "0 longitudinal, 1 radial, 2 helical", err)) ||
        (rc = sc_h5_write_i32(f, "/muscles/fibre_group", 1, D1(mu->nfibres), mu->fibre_group, "group of each fibre", err)) ||
        (rc = sc_h5_write_i32(f, "/muscles/fibre_first", 1, D1(mu->nfibres + 1), mu->fibre_first,
                              "first segment of each fibre, then the segment count", err)) ||
        (rc = sc_h5_write_f64(f, "/muscles/points", 2, D2(mu->npoints, 3), mu->point_rest, "m", "polyline vertices at rest, fibre by fibre", err)) ||
        (rc = sc_h5_write_i32(f, "/muscles/point_tet", 1, D1(mu->npoints), mu->point_tet, "tet holding each point", err)) ||
        (rc = sc_h5_write_f64(f, "/muscles/point_bary", 2, D2(mu->npoints, 4), mu->point_bary, "1", "barycentric coordinates in that tet", err)) ||
        (rc = sc_h5_write_i32(f, "/muscles/segments", 2, D2(mu->nsegs, 2), seg, "the two points of each segment (a control variable l_d each)",
                              err)) ||
        (rc = sc_h5_write_f64(f, "/muscles/rest_length", 1, D1(mu->nsegs), mu->rest_len, "m", "l0 of each segment", err)) ||
        (rc = sc_h5_write_i32(f, "/muscles/influence_first", 1, D1(m->ntets + 1), mu->inf_first, "CSR: tet t's entries are [first[t], first[t+1])",
                              err)) ||
        (rc = sc_h5_write_i32(f, "/muscles/influence_segment", 1, D1(nnz ? nnz : 0), mu->inf_seg, "segment of each entry", err)) ||
        (rc = sc_h5_write_f64(f, "/muscles/influence_weight", 1, D1(nnz ? nnz : 0), mu->inf_w, "1",
                              "weight w_ij of eq. 5 (with the fall-off of lib/muscle/fibre.h)", err))) {
        free(seg);
        return rc;
    }
    free(seg);
    return SC_OK;
}

typedef struct read_ctx {
    const sc_model *m;
    sc_muscles *mu;
    int *present;
} read_ctx;

static int read_h5(sc_h5 *f, void *arg, sc_err *err)
{
    read_ctx *c = arg;
    const sc_model *m = c->m;
    *c->present = sc_h5_exists(f, "/muscles");
    if (!*c->present) return SC_OK;
    const char *fn = sc_h5_filename(f);
    sc_muscle_defs d = {0};
    char **names = NULL;
    size_t ng = 0, dims[2];
    int *kinds = NULL, *fgroup = NULL, *ffirst = NULL, *ptet = NULL;
    double *pts = NULL, *rest = NULL, *w = NULL;
    int rc;
    long long nf = 0;
    if ((rc = sc_h5_read_attr_f64(f, "/muscles", "stiffness", &d.stiffness, err)) ||
        (rc = sc_h5_read_attr_f64(f, "/muscles", "sigma", &d.sigma, err)) ||
        (rc = sc_h5_read_attr_f64(f, "/muscles", "min_ratio", &d.min_ratio, err)) || (rc = sc_h5_read_attr_i64(f, "/muscles", "fibres", &nf, err)) ||
        (rc = sc_h5_read_strings(f, "/muscles/group_names", &ng, &names, err)))
        goto done;
    dims[0] = ng;
    if ((rc = sc_h5_read_i32(f, "/muscles/group_kinds", 1, dims, &kinds, err)) ||
        (rc = sc_h5_check_index(f, "/muscles/group_kinds", kinds, ng, 1, 0, 2, err)))
        goto done;
    dims[0] = (size_t)nf;
    if ((rc = sc_h5_check_count(f, "/muscles/fibre_group", (size_t)nf, 1, 100000, err)) ||
        (rc = sc_h5_read_i32(f, "/muscles/fibre_group", 1, dims, &fgroup, err)) ||
        (rc = sc_h5_check_index(f, "/muscles/fibre_group", fgroup, (size_t)nf, 1, 0, (long)ng - 1, err)))
        goto done;
    dims[0] = (size_t)nf + 1;
    if ((rc = sc_h5_read_i32(f, "/muscles/fibre_first", 1, dims, &ffirst, err))) goto done;
    for (long long i = 0; i < nf; i++)
        if (ffirst[i] < 0 || ffirst[i + 1] <= ffirst[i]) {
            rc = sc_fail(err, SC_EINPUT, "%s:/muscles/fibre_first[%lld]: fibres must have at least one segment, in order", fn, i + 1);
            goto done;
        }
    const size_t npoints = (size_t)ffirst[nf] + (size_t)nf;
    dims[0] = npoints;
    dims[1] = 3;
    if ((rc = sc_h5_read_f64(f, "/muscles/points", 2, dims, &pts, err)) ||
        (rc = sc_h5_check_range(f, "/muscles/points", pts, npoints, 3, -1e3, 1e3, 0, err)))
        goto done;
    /* rebuild from the definition, then compare with what the file says */
    d.ngroups = (int)ng;
    d.group_name = calloc(ng ? ng : 1, SC_MUSCLE_NAME);
    d.group_kind = kinds;
    kinds = NULL;
    d.nfibres = (int)nf;
    d.fibres = calloc((size_t)nf, sizeof *d.fibres);
    if (!d.group_name || !d.fibres) {
        rc = sc_fail(err, SC_EIO, "%s: out of memory", fn);
        goto done;
    }
    for (size_t g = 0; g < ng; g++) snprintf(d.group_name[g], SC_MUSCLE_NAME, "%s", names[g]);
    size_t p = 0;
    for (long long i = 0; i < nf; i++) {
        sc_fibre_def *fd = &d.fibres[i];
        fd->group = fgroup[i];
        fd->npoints = ffirst[i + 1] - ffirst[i] + 1;
        fd->points = malloc(3 * (size_t)fd->npoints * sizeof(double));
        if (!fd->points) {
            rc = sc_fail(err, SC_EIO, "%s: out of memory", fn);
            goto done;
        }
        memcpy(fd->points, pts + 3 * p, 3 * (size_t)fd->npoints * sizeof(double));
        snprintf(fd->where, sizeof fd->where, "%s:/muscles/points (fibre %lld)", fn, i);
        p += (size_t)fd->npoints;
    }
    if ((rc = sc_muscles_build(m, &d, c->mu, err))) goto done;
    dims[0] = (size_t)c->mu->npoints;
    if ((rc = sc_h5_read_i32(f, "/muscles/point_tet", 1, dims, &ptet, err))) goto done;
    for (int i = 0; i < c->mu->npoints; i++)
        if (ptet[i] != c->mu->point_tet[i]) {
            rc = sc_fail(err, SC_EINPUT, "%s:/muscles/point_tet[%d]: tet %d, but the point lies in tet %d", fn, i, ptet[i], c->mu->point_tet[i]);
            goto done;
        }
    dims[0] = (size_t)c->mu->nsegs;
    if ((rc = sc_h5_read_f64(f, "/muscles/rest_length", 1, dims, &rest, err))) goto done;
    dims[0] = (size_t)c->mu->inf_first[m->ntets];
    if ((rc = sc_h5_read_f64(f, "/muscles/influence_weight", 1, dims, &w, err))) goto done;
    for (int j = 0; j < c->mu->nsegs; j++)
        if (!(fabs(rest[j] - c->mu->rest_len[j]) <= 1e-9 * (1 + rest[j]))) {
            rc = sc_fail(err, SC_EINPUT, "%s:/muscles/rest_length[%d]: %g m, but its points are %g m apart", fn, j, rest[j], c->mu->rest_len[j]);
            goto done;
        }
    for (int i = 0; i < c->mu->inf_first[m->ntets]; i++)
        if (!(fabs(w[i] - c->mu->inf_w[i]) <= 1e-9)) {
            rc = sc_fail(err, SC_EINPUT, "%s:/muscles/influence_weight[%d]: %g, the points and sigma give %g", fn, i, w[i], c->mu->inf_w[i]);
            goto done;
        }
done:
    if (rc) sc_muscles_free(c->mu);
    if (names)
        for (size_t g = 0; g < ng; g++) free(names[g]);
    free(names);
    free(kinds);
    free(fgroup);
    free(ffirst);
    free(ptet);
    free(pts);
    free(rest);
    free(w);
    sc_muscle_defs_free(&d);
    return rc;
}

int sc_character_read_muscles(const char *path, const sc_model *m, sc_muscles *mu, int *present, sc_err *err)
{
    memset(mu, 0, sizeof *mu);
    read_ctx c = {m, mu, present};
    return sc_h5_read_file(path, read_h5, &c, err);
}

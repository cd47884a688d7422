/* Muscle fibres (fibre.h). */
#include "muscle/fibre.h"
#include "mesh/embed.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sc_muscle_defs_free(sc_muscle_defs *d)
{
    if (!d) return;
    for (int i = 0; i < d->nfibres; i++) free(d->fibres[i].points);
    free(d->fibres);
    free(d->group_name);
    free(d->group_kind);
    memset(d, 0, sizeof *d);
}

void sc_muscles_free(sc_muscles *mu)
{
    if (!mu) return;
    free(mu->group_name);
    free(mu->group_kind);
    free(mu->fibre_group);
    free(mu->fibre_first);
    free(mu->seg_a);
    free(mu->seg_b);
    free(mu->rest_len);
    free(mu->rest_dir);
    free(mu->point_rest);
    free(mu->point_tet);
    free(mu->point_bary);
    free(mu->inf_first);
    free(mu->inf_seg);
    free(mu->inf_w);
    memset(mu, 0, sizeof *mu);
}

static double segment_distance(const double *a, const double *b, const double *p)
{
    double ab[3], ap[3], l2 = 0, t = 0;
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ap[k] = p[k] - a[k];
        l2 += ab[k] * ab[k];
        t += ap[k] * ab[k];
    }
    t = l2 > 0 ? fmin(1, fmax(0, t / l2)) : 0;
    double d2 = 0;
    for (int k = 0; k < 3; k++) d2 += (ap[k] - t * ab[k]) * (ap[k] - t * ab[k]);
    return sqrt(d2);
}

/* A fibre's config entry for messages, or "muscles" for a generated one. */
static const char *where(const sc_fibre_def *d, char *buf)
{
    snprintf(buf, 200, "%s", d->where[0] ? d->where : "muscles");
    return buf;
}

int sc_muscles_build(const sc_model *m, const sc_muscle_defs *defs, sc_muscles *mu, sc_err *err)
{
    char wbuf[200];
    memset(mu, 0, sizeof *mu);
    if (defs->nfibres < 1) return sc_fail(err, SC_EINPUT, "muscles: no fibres");
    if (!(defs->stiffness > 0) || !(defs->sigma > 0) || !(defs->min_ratio > 0 && defs->min_ratio < 1))
        return sc_fail(err, SC_EINPUT, "muscles: stiffness %g Pa and sigma %g m must be > 0, min_ratio %g in (0, 1)", defs->stiffness, defs->sigma,
                       defs->min_ratio);
    int npoints = 0, nsegs = 0;
    for (int f = 0; f < defs->nfibres; f++) {
        const sc_fibre_def *d = &defs->fibres[f];
        if (d->npoints < 2) return sc_fail(err, SC_EINPUT, "%s: muscle fibre %d has %d point(s): at least 2", where(d, wbuf), f, d->npoints);
        if (d->group < 0 || d->group >= defs->ngroups)
            return sc_fail(err, SC_EINPUT, "%s: muscle fibre %d: no group %d", where(d, wbuf), f, d->group);
        npoints += d->npoints;
        nsegs += d->npoints - 1;
    }
    mu->ngroups = defs->ngroups;
    mu->nfibres = defs->nfibres;
    mu->nsegs = nsegs;
    mu->npoints = npoints;
    mu->stiffness = defs->stiffness;
    mu->sigma = defs->sigma;
    mu->min_ratio = defs->min_ratio;
    mu->group_name = sc_alloc(err, (size_t)defs->ngroups, SC_MUSCLE_NAME);
    mu->group_kind = sc_alloc(err, (size_t)defs->ngroups, sizeof(int));
    mu->fibre_group = sc_alloc(err, (size_t)mu->nfibres, sizeof(int));
    mu->fibre_first = sc_alloc(err, (size_t)mu->nfibres + 1, sizeof(int));
    mu->seg_a = sc_alloc(err, (size_t)nsegs, sizeof(int));
    mu->seg_b = sc_alloc(err, (size_t)nsegs, sizeof(int));
    mu->rest_len = sc_alloc(err, (size_t)nsegs, sizeof(double));
    mu->rest_dir = sc_alloc(err, 3 * (size_t)nsegs, sizeof(double));
    mu->point_rest = sc_alloc(err, 3 * (size_t)npoints, sizeof(double));
    mu->point_tet = sc_alloc(err, (size_t)npoints, sizeof(int));
    mu->point_bary = sc_alloc(err, 4 * (size_t)npoints, sizeof(double));
    mu->inf_first = sc_alloc(err, (size_t)m->ntets + 1, sizeof(int));
    if (!mu->group_name || !mu->group_kind || !mu->fibre_group || !mu->fibre_first || !mu->seg_a || !mu->seg_b || !mu->rest_len || !mu->rest_dir ||
        !mu->point_rest || !mu->point_tet || !mu->point_bary || !mu->inf_first) {
        sc_muscles_free(mu);
        return SC_EIO;
    }
    memcpy(mu->group_name, defs->group_name, (size_t)defs->ngroups * SC_MUSCLE_NAME);
    memcpy(mu->group_kind, defs->group_kind, (size_t)defs->ngroups * sizeof(int));
    /* points: embedded by the mesh's own search (a point outside every tet gets the nearest one,
       its barycentrics then negative) */
    for (int f = 0, q = 0; f < defs->nfibres; f++)
        for (int i = 0; i < defs->fibres[f].npoints; i++, q++) memcpy(mu->point_rest + 3 * q, defs->fibres[f].points + 3 * i, 3 * sizeof(double));
    sc_tetmesh tm = {m->nnodes, m->ntets, m->rest_pos, m->tets};
    sc_embed_stats est;
    int rc = sc_embed_points(&tm, npoints, mu->point_rest, mu->point_tet, mu->point_bary, &est, err);
    if (rc) {
        sc_muscles_free(mu);
        return rc;
    }
    int p = 0, s = 0;
    for (int f = 0; f < defs->nfibres; f++) {
        const sc_fibre_def *d = &defs->fibres[f];
        mu->fibre_group[f] = d->group;
        mu->fibre_first[f] = s;
        for (int i = 0; i < d->npoints; i++, p++) {
            const double *x = d->points + 3 * i, *b = mu->point_bary + 4 * p;
            if (fmin(fmin(b[0], b[1]), fmin(b[2], b[3])) < -1e-6) {
                sc_muscles_free(mu);
                return sc_fail(err, SC_EINPUT, "%s: point %d (%.3f, %.3f, %.3f) m of muscle fibre %d lies outside the body", where(d, wbuf), i, x[0],
                               x[1], x[2], f);
            }
            if (i > 0) {
                const double *a = x - 3;
                double len = 0;
                for (int k = 0; k < 3; k++) len += (x[k] - a[k]) * (x[k] - a[k]);
                len = sqrt(len);
                if (!(len > 1e-6)) {
                    sc_muscles_free(mu);
                    return sc_fail(err, SC_EINPUT, "%s: segment %d of muscle fibre %d has no length (points %d and %d coincide)", where(d, wbuf),
                                   i - 1, f, i - 1, i);
                }
                mu->seg_a[s] = p - 1;
                mu->seg_b[s] = p;
                mu->rest_len[s] = len;
                for (int k = 0; k < 3; k++) mu->rest_dir[3 * s + k] = (x[k] - a[k]) / len;
                s++;
            }
        }
    }
    mu->fibre_first[mu->nfibres] = s;
    /* influence weights of eq. 5, with the fall-off of fibre.h; two passes: count, fill */
    int *seg_group = malloc((size_t)nsegs * sizeof(int));
    double *h = malloc((size_t)nsegs * sizeof(double)), *gsum = malloc((size_t)mu->ngroups * sizeof(double));
    if (!seg_group || !h || !gsum) {
        free(seg_group);
        free(h);
        free(gsum);
        sc_muscles_free(mu);
        return sc_fail(err, SC_EIO, "muscles: out of memory");
    }
    for (int f = 0; f < mu->nfibres; f++)
        for (int j = mu->fibre_first[f]; j < mu->fibre_first[f + 1]; j++) seg_group[j] = mu->fibre_group[f];
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        for (int t = 0; t < m->ntets; t++) {
            double c[3] = {0, 0, 0};
            for (int v = 0; v < 4; v++)
                for (int k = 0; k < 3; k++) c[k] += 0.25 * m->rest_pos[3 * m->tets[4 * t + v] + k];
            memset(gsum, 0, (size_t)mu->ngroups * sizeof(double));
            for (int j = 0; j < nsegs; j++) {
                double d = segment_distance(mu->point_rest + 3 * mu->seg_a[j], mu->point_rest + 3 * mu->seg_b[j], c) / mu->sigma;
                h[j] = exp(-d * d);
                gsum[seg_group[j]] += h[j];
            }
            if (pass == 1) mu->inf_first[t] = n;
            for (int j = 0; j < nsegs; j++) {
                double w = h[j] / fmax(1, gsum[seg_group[j]]);
                if (w < 1e-4) continue;
                if (pass == 1) {
                    mu->inf_seg[n] = j;
                    mu->inf_w[n] = w;
                }
                n++;
            }
        }
        if (pass == 0) {
            mu->inf_seg = malloc((size_t)(n ? n : 1) * sizeof(int));
            mu->inf_w = malloc((size_t)(n ? n : 1) * sizeof(double));
            if (!mu->inf_seg || !mu->inf_w) {
                free(seg_group);
                free(h);
                free(gsum);
                sc_muscles_free(mu);
                return sc_fail(err, SC_EIO, "muscles: out of memory");
            }
        } else mu->inf_first[m->ntets] = n;
    }
    free(seg_group);
    free(h);
    free(gsum);
    return SC_OK;
}

static void point_position(const sc_muscles *mu, const sc_model *m, const double *x, int p, double out[3])
{
    const int *v = m->tets + 4 * mu->point_tet[p];
    const double *b = mu->point_bary + 4 * p;
    for (int k = 0; k < 3; k++) out[k] = b[0] * x[3 * v[0] + k] + b[1] * x[3 * v[1] + k] + b[2] * x[3 * v[2] + k] + b[3] * x[3 * v[3] + k];
}

void sc_muscle_lengths(const sc_muscles *mu, const sc_model *m, const double *x, double *len)
{
    for (int j = 0; j < mu->nsegs; j++) {
        double a[3], b[3];
        point_position(mu, m, x, mu->seg_a[j], a);
        point_position(mu, m, x, mu->seg_b[j], b);
        len[j] = sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) + (b[2] - a[2]) * (b[2] - a[2]));
    }
}

/* Adds -V P Bm^-T for P = R S (S symmetric, in the rest frame) to the tet's four nodes, scaled. */
static void add_tet_force(const sc_model *m, int t, const double *R, const double S[9], double scale, double *force, int stride, int col)
{
    const double *bi = m->bm_inv + 9 * t;
    const double V = m->tet_volume[t];
    double f0[3] = {0, 0, 0};
    for (int c = 0; c < 3; c++) {
        /* g = row c of Bm^-1; f_{c+1} = -V R (S g) */
        double sg[3], f[3];
        for (int r = 0; r < 3; r++) sg[r] = S[3 * r] * bi[3 * c] + S[3 * r + 1] * bi[3 * c + 1] + S[3 * r + 2] * bi[3 * c + 2];
        for (int r = 0; r < 3; r++) f[r] = -V * scale * (R[3 * r] * sg[0] + R[3 * r + 1] * sg[1] + R[3 * r + 2] * sg[2]);
        const int node = m->tets[4 * t + c + 1];
        for (int r = 0; r < 3; r++) {
            force[(size_t)(3 * node + r) * stride + col] += f[r];
            f0[r] -= f[r];
        }
    }
    const int node0 = m->tets[4 * t];
    for (int r = 0; r < 3; r++) force[(size_t)(3 * node0 + r) * stride + col] += f0[r];
}

void sc_muscle_forces(const sc_muscles *mu, const sc_model *m, const double *x, const double *rot, const double *ld, double *len, double *force)
{
    sc_muscle_lengths(mu, m, x, len);
    for (int t = 0; t < m->ntets; t++) {
        if (mu->inf_first[t] == mu->inf_first[t + 1]) continue;
        double S[9] = {0};
        for (int i = mu->inf_first[t]; i < mu->inf_first[t + 1]; i++) {
            const int j = mu->inf_seg[i];
            const double s = mu->inf_w[i] * mu->stiffness * (len[j] - ld[j]) / mu->rest_len[j];
            const double *d = mu->rest_dir + 3 * j;
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) S[3 * r + c] += s * d[r] * d[c];
        }
        add_tet_force(m, t, rot + 9 * t, S, 1, force, 1, 0);
    }
}

void sc_muscle_matrix(const sc_muscles *mu, const sc_model *m, const double *rot, double *A)
{
    memset(A, 0, (size_t)3 * m->nnodes * mu->nsegs * sizeof(double));
    for (int t = 0; t < m->ntets; t++)
        for (int i = mu->inf_first[t]; i < mu->inf_first[t + 1]; i++) {
            const int j = mu->inf_seg[i];
            const double *d = mu->rest_dir + 3 * j;
            double S[9];
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) S[3 * r + c] = d[r] * d[c];
            /* s = -(k w / l0) (l_d - l): the column is the force of the stress -(k w / l0) d d' */
            add_tet_force(m, t, rot + 9 * t, S, -mu->inf_w[i] * mu->stiffness / mu->rest_len[j], A, mu->nsegs, j);
        }
}

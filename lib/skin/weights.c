/* Skinning a character: handles, the BBW solve, the top-k form and the per-bone figures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skin/weights.h"

void sc_skin_result_free(sc_skin_result *r)
{
    void *arrays[] = {r->handle, r->w, r->bone, r->iterations, r->kkt_residual, r->max_free_weight, r->influence, r->handles};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(arrays[i]);
    memset(r, 0, sizeof *r);
}

static int check_handles(const char *name, const sc_model *m, sc_err *err)
{
    if (m->nfixed == 0) return sc_fail(err, SC_EINPUT, "%s:/fixed/node: the character has no fixed nodes, so no bone has a handle", name);
    for (int b = 0; b < m->nbones; b++) {
        int count = 0;
        for (int i = 0; i < m->nfixed; i++) count += m->fixed_bone[i] == b;
        if (!count)
            return sc_fail(err, SC_EINPUT, "%s:/fixed/bone: bone '%s' (%d) has no fixed nodes, so its weight has no handle", name, m->bone_name[b],
                           b);
    }
    return SC_OK;
}

/* The per-bone figures and the ranges of the weights. */
static int summarize(const sc_model *m, sc_skin_result *r, sc_err *err)
{
    int nn = r->nnodes, nb = r->nbones, k = r->k;
    const double *w = r->w;
    const int *handle = r->handle;
    r->iterations = malloc((size_t)nb * sizeof *r->iterations);
    r->kkt_residual = malloc((size_t)nb * sizeof *r->kkt_residual);
    r->max_free_weight = malloc((size_t)nb * sizeof *r->max_free_weight);
    r->influence = malloc((size_t)nb * sizeof *r->influence);
    r->handles = calloc((size_t)nb, sizeof *r->handles);
    if (!r->iterations || !r->kkt_residual || !r->max_free_weight || !r->influence || !r->handles) return sc_fail(err, SC_EIO, "out of memory");
    double wmin = 1e300, wmax = -1e300, rowdev = 0, topk_dev = 0;
    for (int b = 0; b < nb; b++) {
        r->iterations[b] = r->bone[b].iterations;
        r->kkt_residual[b] = r->bone[b].kkt_residual;
        r->max_free_weight[b] = 0;
        r->influence[b] = 0;
    }
    for (int i = 0; i < nn; i++) {
        double s = 0;
        for (int b = 0; b < nb; b++) {
            double x = w[(size_t)i * nb + b];
            s += x;
            wmin = fmin(wmin, x);
            wmax = fmax(wmax, x);
            if (handle[i] < 0) r->max_free_weight[b] = fmax(r->max_free_weight[b], x);
            r->influence[b] += x > 1e-3;
        }
        rowdev = fmax(rowdev, fabs(s - 1));
        if (handle[i] >= 0) r->handles[handle[i]]++;
        double ks = 0;
        for (int j = 0; j < k; j++) ks += m->skin_w[(size_t)i * k + j];
        topk_dev = fmax(topk_dev, fabs(ks - 1));
    }
    r->wmin = wmin;
    r->wmax = wmax;
    r->rowsum_dev = rowdev;
    r->topk_dev = topk_dev;
    return SC_OK;
}

int sc_skin_character(const char *name, sc_model *m, int k, const sc_bbw_opts *opts, sc_skin_result *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    int rc = check_handles(name, m, err);
    if (rc) return rc;
    int nn = m->nnodes, nb = m->nbones;
    r->nnodes = nn;
    r->nbones = nb;
    r->k = k;
    r->handle = malloc((size_t)nn * sizeof *r->handle);
    r->w = malloc((size_t)nn * nb * sizeof *r->w);
    r->bone = calloc((size_t)nb, sizeof *r->bone);
    if (!r->handle || !r->w || !r->bone) {
        sc_skin_result_free(r);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int i = 0; i < nn; i++) r->handle[i] = -1;
    for (int i = 0; i < m->nfixed; i++) r->handle[m->fixed_node[i]] = m->fixed_bone[i];
    if ((rc = sc_bbw_solve(nn, m->rest_pos, m->ntets, m->tets, nb, r->handle, opts, r->w, r->bone, &r->st, err))) {
        sc_err_prefix(err, "%s: ", name);
        sc_skin_result_free(r);
        return rc;
    }
    /* an already skinned input brings its own top-k arrays: replaced, not leaked */
    free(m->skin_bone);
    free(m->skin_w);
    m->skin_k = k;
    m->skin_bone = malloc((size_t)nn * k * sizeof *m->skin_bone);
    m->skin_w = malloc((size_t)nn * k * sizeof *m->skin_w);
    if (!m->skin_bone || !m->skin_w) {
        sc_skin_result_free(r);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    sc_bbw_topk(nn, nb, r->w, k, m->skin_bone, m->skin_w);
    if ((rc = summarize(m, r, err))) sc_skin_result_free(r);
    return rc;
}

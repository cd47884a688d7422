/* Guided learning (Liu, van de Panne, Yin 2016; learn/guided.h): the sampler run centred on the
 * current policy's output, the elites' (state, action) pairs and the samples' transitions gathered,
 * each fragment's law refitted (ridge regression of the actions, or the periodic LQR of fitted
 * fragment maps), the candidates tested closed loop; a checkpoint after every iteration. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "learn/guided.h"
#include "learn/trial.h"
#include "core/blob.h"
#include "core/hash.h"
#include "core/linalg.h"
#include "core/log.h"
#include "core/rng.h"
#include "io/checkpoint.h"
#include "par/par.h"

/* (features, offsets) pairs per fragment, gathered over the iterations; for fit: model, the
 * samples' transitions: (start features, [actions, end features]) */
typedef struct dataset {
    int ndof;
    long n, cap;
    int *frag;
    double *s, *o; /* [n * SC_FEATURES], [n * ndof] */
} dataset;

static int data_add(dataset *d, int frag, const double *s, const double *o)
{
    if (d->n == d->cap) {
        long cap = d->cap ? 2 * d->cap : 4096;
        int *f = realloc(d->frag, sizeof(int) * (size_t)cap);
        if (f) d->frag = f;
        double *ns = realloc(d->s, sizeof(double) * SC_FEATURES * (size_t)cap);
        if (ns) d->s = ns;
        double *no = realloc(d->o, sizeof(double) * (size_t)d->ndof * (size_t)cap);
        if (no) d->o = no;
        if (!f || !ns || !no) return SC_EIO;
        d->cap = cap;
    }
    d->frag[d->n] = frag;
    memcpy(d->s + SC_FEATURES * d->n, s, sizeof(double) * SC_FEATURES);
    memcpy(d->o + (size_t)d->ndof * d->n, o, sizeof(double) * (size_t)d->ndof);
    d->n++;
    return SC_OK;
}

typedef struct policy_guide {
    const sc_policy *p;
    const sc_features *f;
    int fragments;
    dataset *dyn; /* fit: model: every sample's (start features, actions, end features) */
    int ndof, naux, rc;
    long base; /* dyn's rows from earlier iterations */
} policy_guide;

/* centre of a sample's offsets: the policy's output for its start state (features kept as aux) */
static void guide_center(void *ctx, int segment, const sc_sim *start, double *offset, double *aux)
{
    const policy_guide *guide = ctx;
    const sc_policy *p = guide->p;
    int j = segment % guide->fragments;
    sc_features_eval(guide->f, start, aux);
    memcpy(offset, p->offset + (size_t)j * p->ndof, sizeof(double) * (size_t)p->ndof);
    double a[SC_MAX_ACTIONS];
    sc_policy_actions(p, j, aux, 1, a);
    for (int i = 0; i < p->nact; i++) offset[p->act[i]] = a[i];
}

/* rows [from, n) of a dataset, and rows appended from such bytes: the frags, then the features,
   then the offsets (an empty dataset has no arrays) */
static void put_rows(sc_blob_writer *w, const dataset *d, long from)
{
    size_t n = (size_t)(d->n - from);
    if (n == 0) return;
    sc_blob_put(w, d->frag + from, sizeof(int) * n);
    sc_blob_put(w, d->s + (size_t)from * SC_FEATURES, sizeof(double) * n * SC_FEATURES);
    sc_blob_put(w, d->o + (size_t)from * (size_t)d->ndof, sizeof(double) * n * (size_t)d->ndof);
}
static int get_rows(sc_blob_reader *r, dataset *d, long n, int nfrag)
{
    long at = d->n;
    if (n == 0) return 1;
    if (n < 0) return 0;
    size_t k = (size_t)n, row = sizeof(int) + sizeof(double) * (SC_FEATURES + (size_t)d->ndof);
    if (k > r->left / row) return 0; /* fewer bytes than rows: refused before allocating them */
    static const double zero[SC_MAX_DOFS + SC_FEATURES];
    for (long q = 0; q < n; q++)
        if (data_add(d, 0, zero, zero)) return 0;
    sc_blob_get(r, d->frag + at, sizeof(int) * k);
    sc_blob_get(r, d->s + (size_t)at * SC_FEATURES, sizeof(double) * k * SC_FEATURES);
    sc_blob_get(r, d->o + (size_t)at * (size_t)d->ndof, sizeof(double) * k * (size_t)d->ndof);
    if (r->bad) return 0;
    /* every row of a fragment the run has, its values finite */
    for (long q = at; q < d->n; q++) {
        if (d->frag[q] < 0 || d->frag[q] >= nfrag) return 0;
        for (int c = 0; c < SC_FEATURES; c++)
            if (!isfinite(d->s[(size_t)q * SC_FEATURES + c])) return 0;
        for (int c = 0; c < d->ndof; c++)
            if (!isfinite(d->o[(size_t)q * (size_t)d->ndof + c])) return 0;
    }
    return 1;
}

/* fit: model: this iteration's transitions ride in the sampler's checkpoint */
static int guide_save(void *ctx, unsigned char **bytes, size_t *n)
{
    const policy_guide *guide = ctx;
    sc_blob_writer w;
    sc_blob_writer_init(&w);
    sc_blob_put_i64(&w, guide->dyn->n - guide->base);
    put_rows(&w, guide->dyn, guide->base);
    if (w.failed) {
        sc_blob_writer_free(&w);
        return SC_EIO;
    }
    *bytes = w.p;
    *n = w.n;
    return SC_OK;
}
static int guide_restore(void *ctx, const unsigned char *bytes, size_t n)
{
    policy_guide *guide = ctx;
    sc_blob_reader r;
    sc_blob_reader_init(&r, bytes, n);
    guide->dyn->n = guide->base;
    int64_t rows = sc_blob_get_i64(&r);
    int ok = !r.bad && rows >= 0 && (size_t)rows <= n && get_rows(&r, guide->dyn, (long)rows, guide->fragments) && !r.left;
    if (!ok) guide->dyn->n = guide->base;
    return ok ? SC_OK : SC_EINPUT;
}

/* fit: model: the end state's features, after the start's in a sample's aux */
static void guide_finish(void *ctx, int segment, const sc_sim *end, double *aux)
{
    (void)segment;
    const policy_guide *guide = ctx;
    sc_features_eval(guide->f, end, aux + SC_FEATURES);
}

/* fit: model: every sample that did not fail is a transition of its fragment */
static void guide_samples(void *ctx, int segment, int n, const double *records, const unsigned char *failed)
{
    policy_guide *guide = ctx;
    const sc_policy *p = guide->p;
    double o[SC_MAX_ACTIONS + SC_FEATURES];
    for (int i = 0; i < n && !guide->rc; i++) {
        if (failed[i]) continue;
        const double *r = records + (size_t)i * (size_t)(guide->ndof + guide->naux), *aux = r + guide->ndof;
        for (int a = 0; a < p->nact; a++) o[a] = r[p->act[a]];
        memcpy(o + p->nact, aux + SC_FEATURES, sizeof(double) * SC_FEATURES);
        guide->rc = data_add(guide->dyn, segment % guide->fragments, aux, o);
    }
}

/* Refits fragment j's law on its pairs: s_bar (but the heading's target) and a_bar the means; M by ridge regression on
 * features scaled to unit variance; the other DoFs' offsets the mean of the pairs'. */
static int refit(sc_policy *p, const dataset *d, int j, double ridge, int with_heading, long *pairs, double *sq_residual, sc_err *err)
{
    int na = p->nact, nd = p->ndof;
    long n = 0;
    for (long r = 0; r < d->n; r++) n += d->frag[r] == j;
    if (n < 2) return SC_OK;
    double mean_s[SC_FEATURES] = {0}, sd[SC_FEATURES] = {0}, mean_o[SC_MAX_DOFS] = {0};
    for (long r = 0; r < d->n; r++) {
        if (d->frag[r] != j) continue;
        for (int k = 0; k < SC_FEATURES; k++) mean_s[k] += d->s[SC_FEATURES * r + k] / n;
        for (int k = 0; k < nd; k++) mean_o[k] += d->o[(size_t)nd * r + k] / n;
    }
    for (long r = 0; r < d->n; r++) {
        if (d->frag[r] != j) continue;
        for (int k = 0; k < SC_FEATURES; k++) sd[k] += pow(d->s[SC_FEATURES * r + k] - mean_s[k], 2) / n;
    }
    for (int k = 0; k < SC_FEATURES; k++) sd[k] = sqrt(sd[k]) + 1e-6; /* a constant feature gets no weight */
    if (!with_heading) sd[SC_FEATURE_HEADING] = INFINITY;             /* nor the heading unless asked (feedback.model.heading) */
    double *X = malloc(sizeof(double) * (size_t)n * SC_FEATURES), *Y = malloc(sizeof(double) * (size_t)n * na),
           *W = malloc(sizeof(double) * SC_FEATURES * (size_t)na);
    if (!X || !Y || !W) {
        free(X);
        free(Y);
        free(W);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    long q = 0;
    for (long r = 0; r < d->n; r++) {
        if (d->frag[r] != j) continue;
        for (int k = 0; k < SC_FEATURES; k++) X[q * SC_FEATURES + k] = (d->s[SC_FEATURES * r + k] - mean_s[k]) / sd[k];
        for (int i = 0; i < na; i++) Y[q * na + i] = d->o[(size_t)nd * r + p->act[i]] - mean_o[p->act[i]];
        q++;
    }
    int rc = sc_ridge((int)n, SC_FEATURES, na, X, Y, ridge * n, W, err);
    if (!rc) {
        memcpy(p->s_bar + (size_t)j * SC_FEATURES, mean_s, sizeof mean_s);
        p->s_bar[(size_t)j * SC_FEATURES + SC_FEATURE_HEADING] = sc_policy_heading_target(p, j); /* steer to the capture's, not the drift's mean */
        memcpy(p->offset + (size_t)j * nd, mean_o, sizeof(double) * (size_t)nd);
        for (int i = 0; i < na; i++) {
            p->a_bar[(size_t)j * na + i] = mean_o[p->act[i]];
            for (int k = 0; k < SC_FEATURES; k++) p->M[((size_t)j * na + i) * SC_FEATURES + k] = W[k * na + i] / sd[k];
        }
        for (long r = 0; r < n; r++)
            for (int i = 0; i < na; i++) {
                double pred = 0;
                for (int k = 0; k < SC_FEATURES; k++) pred += X[r * SC_FEATURES + k] * W[k * na + i];
                *sq_residual += pow(Y[r * na + i] - pred, 2) / na;
            }
        *pairs += n;
    }
    free(X);
    free(Y);
    free(W);
    return rc;
}

/* fit: model: the regulated features (their indices in idx); returns their count */
static int model_features(const sc_feedback_config *c, int idx[SC_FEATURES])
{
    int nf = 0;
    for (int k = 0; k < SC_FEATURES; k++)
        if (c->model_feature[k]) idx[nf++] = k;
    return nf;
}

/* fit: model. Each fragment's map from the features at its start to those at its end, fitted on
 * every sample's transition by ridge regression on standardized columns, linear about the data's
 * means: x' = A_j x + B_j u (x: the regulated features, u: the actions), into A [nfrag * nf * nf]
 * and B [nfrag * nf * nact], zeroed by the caller (they stay zero for a fragment with too few
 * transitions). Returns the RMS one-step prediction error (in feature scales) in *error. */
static int fit_model_maps(const sc_policy *p, const dataset *dyn, const sc_feedback_config *c, double *A, double *B, double *error, sc_err *err)
{
    int na = p->nact, nfrag = p->nfrag, idx[SC_FEATURES], nf = model_features(c, idx);
    /* Yaw invariance: every feature but the heading is in the heading frame, so none depends on
       the heading and the heading's change depends on the rest alone: the heading is no
       regressor, its row is its wrapped change, and A's heading column is (0, ..., 0, 1). Fitted
       freely, the heading's column picked up the drift of the data over the cycles. */
    int hk = -1, reg[SC_FEATURES], nr = 0; /* the heading's position in idx; the regressor features */
    for (int k = 0; k < nf; k++) {
        if (idx[k] == SC_FEATURE_HEADING) hk = k;
        else reg[nr++] = k;
    }
    int nx = nr + na;
    double *X = NULL, *Y = NULL, *W = calloc((size_t)nx * nf, sizeof(double));
    int rc = SC_OK;
    if (!W) return sc_fail(err, SC_EIO, "out of memory");
    double sq = 0;
    long rows = 0;
    for (int j = 0; j < nfrag; j++) {
        long n = 0;
        for (long r = 0; r < dyn->n; r++) n += dyn->frag[r] == j;
        if (n < 2 * nx) continue; /* too few transitions: no model (A = B = 0), no feedback */
        double mx[SC_FEATURES + SC_MAX_ACTIONS] = {0}, sd[SC_FEATURES + SC_MAX_ACTIONS] = {0}, my[SC_FEATURES] = {0};
        free(X);
        free(Y);
        X = malloc(sizeof(double) * (size_t)n * nx);
        Y = malloc(sizeof(double) * (size_t)n * nf);
        if (!X || !Y) {
            rc = sc_fail(err, SC_EIO, "out of memory");
            goto done;
        }
        long q = 0;
        for (long r = 0; r < dyn->n; r++) {
            if (dyn->frag[r] != j) continue;
            const double *st = dyn->s + (size_t)SC_FEATURES * r, *o = dyn->o + (size_t)dyn->ndof * r;
            for (int k = 0; k < nr; k++) X[q * nx + k] = st[idx[reg[k]]];
            for (int a = 0; a < na; a++) X[q * nx + nr + a] = o[a];
            for (int k = 0; k < nf; k++) Y[q * nf + k] = o[na + idx[k]];
            if (hk >= 0) Y[q * nf + hk] = sc_wrap_angle(Y[q * nf + hk] - st[SC_FEATURE_HEADING]);
            q++;
        }
        for (long r = 0; r < n; r++) {
            for (int k = 0; k < nx; k++) mx[k] += X[r * nx + k] / n;
            for (int k = 0; k < nf; k++) my[k] += Y[r * nf + k] / n;
        }
        for (long r = 0; r < n; r++)
            for (int k = 0; k < nx; k++) sd[k] += pow(X[r * nx + k] - mx[k], 2) / n;
        for (int k = 0; k < nx; k++) sd[k] = sqrt(sd[k]) + 1e-9;
        for (long r = 0; r < n; r++) {
            for (int k = 0; k < nx; k++) X[r * nx + k] = (X[r * nx + k] - mx[k]) / sd[k];
            for (int k = 0; k < nf; k++) Y[r * nf + k] -= my[k];
        }
        if ((rc = sc_ridge((int)n, nx, nf, X, Y, c->ridge * n, W, err))) goto done;
        for (int i = 0; i < nf; i++) {
            for (int k = 0; k < nr; k++) A[(j * nf + i) * nf + reg[k]] = W[(size_t)k * nf + i] / sd[k];
            if (hk >= 0) A[(j * nf + i) * nf + hk] = i == hk;
            for (int a = 0; a < na; a++) B[(j * nf + i) * na + a] = W[(size_t)(nr + a) * nf + i] / sd[nr + a];
        }
        for (long r = 0; r < n; r++)
            for (int i = 0; i < nf; i++) {
                double pred = 0;
                for (int k = 0; k < nx; k++) pred += X[r * nx + k] * W[(size_t)k * nf + i];
                sq += pow((Y[r * nf + i] - pred) / sc_feature_scale[idx[i]], 2) / nf;
            }
        rows += n;
    }
    *error = rows ? sqrt(sq / rows) : 0;
done:
    free(X);
    free(Y);
    free(W);
    return rc;
}

/* fit: model. The periodic linear-quadratic regulator of the fragment maps: the Riccati recursion
 * run backwards over `horizon` cycles with Q = diag(1 / scale^2) (sc_feature_scale; the heading's model.heading_scale) and R =
 * diag(action_cost / box^2) (the sampling box of each action DoF), and each fragment's law
 * M_j = -K_j from the recursion's first cycle. The laws regulate the features about s_bar_j.
 * Several models (A, B: `models` sets of maps): the regulator of the expected cost over them. */
static int regulator_gains(sc_policy *p, const sc_feedback_config *c, int models, const double *A, const double *B, const double *box,
                           double action_cost, sc_err *err)
{
    int na = p->nact, nfrag = p->nfrag, idx[SC_FEATURES], nf = model_features(c, idx);
    size_t F = (size_t)nfrag;
    double *K = calloc(F * na * nf, sizeof(double)), *Q = calloc((size_t)nf * nf, sizeof(double)), *R = calloc((size_t)na * na, sizeof(double));
    int rc = SC_OK;
    if (!K || !Q || !R) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    for (int k = 0; k < nf; k++) Q[k * nf + k] = 1 / pow(idx[k] == SC_FEATURE_HEADING ? c->heading_scale : sc_feature_scale[idx[k]], 2);
    for (int a = 0; a < na; a++) {
        double bx = box[p->act[a]] > 0 ? box[p->act[a]] : 0.1;
        R[a * na + a] = action_cost / (bx * bx);
    }
    if ((rc = sc_lqr_periodic_ensemble(nf, na, nfrag, models, A, B, Q, R, c->horizon, K, err))) goto done;
    memset(p->M, 0, sizeof(double) * F * na * SC_FEATURES);
    for (int j = 0; j < nfrag; j++)
        for (int a = 0; a < na; a++)
            for (int k = 0; k < nf; k++) p->M[((size_t)j * na + a) * SC_FEATURES + idx[k]] = -K[((size_t)j * na + a) * nf + k];
done:
    free(K);
    free(Q);
    free(R);
    return rc;
}

/* The guided samples' boxes for the next iteration. With residual exploration (as mass-SAMCON's
 * noise of the residual variance), once a fit exists: each DoF's spread of the pairs about what
 * the policy gives for their states (an action's regression residual, another DoF's deviation
 * from its fragment's mean offset), as the half-width sqrt(3) sigma of a uniform, kept within
 * [0.1, 1] x the configured box. A function of the pairs and the policy alone: a resumed run
 * recomputes the same boxes. */
static void exploration_boxes(const sc_policy *p, const dataset *d, const double *box0, int residual, double *box)
{
    int nd = p->ndof;
    memcpy(box, box0, sizeof(double) * (size_t)nd);
    if (!residual || d->n == 0) return;
    double sq[SC_MAX_DOFS] = {0}, a[SC_MAX_ACTIONS];
    for (long r = 0; r < d->n; r++) {
        int j = d->frag[r];
        const double *o = d->o + (size_t)nd * r, *mean = p->offset + (size_t)j * nd;
        for (int k = 0; k < nd; k++) sq[k] += pow(o[k] - mean[k], 2);
        const double *sb = p->s_bar + (size_t)j * SC_FEATURES, *s = d->s + (size_t)SC_FEATURES * r;
        for (int i = 0; i < p->nact; i++) {
            a[i] = p->a_bar[(size_t)j * p->nact + i];
            for (int k = 0; k < SC_FEATURES; k++) a[i] += p->M[((size_t)j * p->nact + i) * SC_FEATURES + k] * (s[k] - sb[k]);
            int dof = p->act[i];
            sq[dof] += pow(o[dof] - a[i], 2) - pow(o[dof] - mean[dof], 2); /* the residual replaces the deviation */
        }
    }
    for (int k = 0; k < nd; k++) {
        double half = sqrt(3 * fmax(sq[k], 0) / (double)d->n);
        box[k] = fmin(box0[k], fmax(0.1 * box0[k], half));
    }
}

/* ---- the learner's checkpoint ----------------------------------------------------------- */

/* the learner's state between iterations, for checkpoints */
typedef struct learner_state {
    int it; /* iterations done */
    sc_policy cur, best;
    dataset data, dyn;
    sc_feedback_result *r;
} learner_state;

#define LEARNER_MAGIC  0x53434c5241524e33ll /* "SCLRARN3" */
#define LEARNER_SCHEMA "softcon.feedback_checkpoint/3"

/* the parts of a policy the learning changes (the rest comes from the open loop again) */
static void put_policy(sc_blob_writer *w, const sc_policy *p)
{
    size_t F = (size_t)p->nfrag;
    sc_blob_put(w, p->offset, sizeof(double) * F * (size_t)p->ndof);
    sc_blob_put(w, p->s_bar, sizeof(double) * F * SC_FEATURES);
    sc_blob_put(w, p->a_bar, sizeof(double) * F * (size_t)p->nact);
    sc_blob_put(w, p->M, sizeof(double) * F * (size_t)p->nact * SC_FEATURES);
}
static int finite_n(const double *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}
/* 1 when every value read is finite and every action within the policy's bound */
static int get_policy(sc_blob_reader *r, sc_policy *p)
{
    size_t F = (size_t)p->nfrag;
    sc_blob_get(r, p->offset, sizeof(double) * F * (size_t)p->ndof);
    sc_blob_get(r, p->s_bar, sizeof(double) * F * SC_FEATURES);
    sc_blob_get(r, p->a_bar, sizeof(double) * F * (size_t)p->nact);
    sc_blob_get(r, p->M, sizeof(double) * F * (size_t)p->nact * SC_FEATURES);
    return !r->bad && finite_n(p->offset, F * (size_t)p->ndof) && finite_n(p->s_bar, F * SC_FEATURES) && finite_n(p->a_bar, F * (size_t)p->nact) &&
        finite_n(p->M, F * (size_t)p->nact * SC_FEATURES);
}

/* The learner's state as bytes (the same layout every rank can read back): a header (magic, run
   hash, iterations done, rows of the pairs and of the transitions), the current and the best
   policy, the pairs, the transitions, then the history. */
static void serialize_learner(const learner_state *state, uint64_t run_hash, sc_blob_writer *w)
{
    const sc_feedback_result *r = state->r;
    sc_blob_writer_init(w);
    int64_t hdr[5] = {LEARNER_MAGIC, (int64_t)run_hash, state->it, state->data.n, state->dyn.n};
    for (int k = 0; k < 5; k++) sc_blob_put_i64(w, hdr[k]);
    put_policy(w, &state->cur);
    put_policy(w, &state->best);
    put_rows(w, &state->data, 0);
    put_rows(w, &state->dyn, 0);
    sc_blob_put(w, &r->best_iteration, sizeof r->best_iteration);
    sc_blob_put(w, &r->niter, sizeof r->niter);
    sc_learning_iterations_put(w, r->iter, SC_MAX_GENERATIONS);
    sc_blob_put_f64(w, r->wall_seconds);
    sc_blob_put_i64(w, r->samples);
}

/* A sealed checkpoint into state (policies allocated to the run's shape, datasets empty), every
   index, count and value checked; iterations: the config's. */
static int deserialize_learner(learner_state *state, uint64_t run_hash, int iterations, const unsigned char *blob, size_t len, sc_err *err)
{
    sc_feedback_result *r = state->r;
    const unsigned char *buf;
    int rc = sc_checkpoint_unseal(blob, len, LEARNER_SCHEMA, run_hash, &buf, &len, err);
    if (rc) return rc;
    sc_blob_reader rd;
    sc_blob_reader_init(&rd, buf, len);
    int64_t hdr[5];
    for (int k = 0; k < 5; k++) hdr[k] = sc_blob_get_i64(&rd);
    int ok = !rd.bad && hdr[0] == LEARNER_MAGIC;
    if (ok && (uint64_t)hdr[1] != run_hash)
        return sc_fail(err, SC_EINPUT, "checkpoint: made for other inputs (config, character, controller, seed or build differ)");
    if (ok && (hdr[2] < 0 || hdr[2] > iterations || hdr[2] > SC_MAX_GENERATIONS || hdr[3] < 0 || hdr[4] < 0))
        return sc_fail(err, SC_EINPUT, "checkpoint: damaged header (%lld iterations done of %d, %lld pairs, %lld transitions)", (long long)hdr[2],
                       iterations, (long long)hdr[3], (long long)hdr[4]);
    if (ok && !(get_policy(&rd, &state->cur) && get_policy(&rd, &state->best)))
        return sc_fail(err, SC_EINPUT, "checkpoint: damaged policies (a value not finite, or truncated)");
    int nfrag = state->cur.nfrag;
    ok = ok && get_rows(&rd, &state->data, (long)hdr[3], nfrag) && get_rows(&rd, &state->dyn, (long)hdr[4], nfrag);
    if (ok) {
        sc_blob_get(&rd, &r->best_iteration, sizeof r->best_iteration);
        sc_blob_get(&rd, &r->niter, sizeof r->niter);
        sc_learning_iterations_get(&rd, r->iter, SC_MAX_GENERATIONS);
        r->wall_seconds = sc_blob_get_f64(&rd);
        r->samples = (long)sc_blob_get_i64(&rd);
    }
    if (!ok || rd.bad || rd.left) return sc_fail(err, SC_EINPUT, "checkpoint: damaged or truncated");
    int it = (int)hdr[2];
    if (r->niter != it || r->best_iteration < 0 || r->best_iteration > (it ? it - 1 : 0) || !sc_learning_iterations_ok(r->iter, it) ||
        !(isfinite(r->wall_seconds) && r->wall_seconds >= 0) || r->samples < 0)
        return sc_fail(err, SC_EINPUT, "checkpoint: damaged history (%d iterations of %d, best %d, %g s, %ld samples)", r->niter, it,
                       r->best_iteration + 1, r->wall_seconds, r->samples);
    state->it = it;
    return SC_OK;
}

static int write_learner(const sc_feedback_run *run, const learner_state *state, sc_err *err)
{
    sc_blob_writer w;
    serialize_learner(state, run->run_hash, &w);
    if (w.failed) {
        sc_blob_writer_free(&w);
        return sc_fail(err, SC_EIO, "out of memory writing the checkpoint");
    }
    sc_checkpoint_info info = {LEARNER_SCHEMA,    "learn-feedback after its last completed iteration: continue it with --resume",
                               "/learner",        "the policies, the regression pairs and the history, softcon's own layout",
                               "iterations_done", state->it,
                               run->run_hash};
    int rc = sc_checkpoint_write(run->checkpoint, &info, w.p, w.n, err);
    sc_blob_writer_free(&w);
    return rc;
}

static int read_learner(const sc_feedback_run *run, learner_state *state, sc_err *err)
{
    unsigned char *data;
    size_t n;
    int rc = sc_par_rank(run->par) == 0 ? sc_checkpoint_read(run->checkpoint, "/learner", LEARNER_SCHEMA, run->run_hash, &data, &n, err) : SC_OK;
    rc = sc_par_share_bytes(run->par, rc, &data, &n, err);
    if (rc) return rc;
    rc = deserialize_learner(state, run->run_hash, run->cfg->iterations, data, n, err);
    free(data);
    if (rc) sc_err_prefix(err, "%s: ", run->checkpoint);
    return rc;
}

/* A learner of the given shape, its datasets empty (for the checks and examples below). */
static int learner_shape(learner_state *state, int nfrag, int ndof, int nact, sc_err *err)
{
    if (!(state->r = calloc(1, sizeof *state->r))) return sc_fail(err, SC_EIO, "out of memory");
    state->data.ndof = ndof;
    state->dyn.ndof = nact + SC_FEATURES;
    int rc = sc_policy_alloc(&state->cur, 1, ndof, nact, nfrag, 2, err);
    return rc ? rc : sc_policy_alloc(&state->best, 1, ndof, nact, nfrag, 2, err);
}
static void learner_shape_free(learner_state *state)
{
    sc_policy_free(&state->cur);
    sc_policy_free(&state->best);
    dataset *d[2] = {&state->data, &state->dyn};
    for (int k = 0; k < 2; k++) {
        free(d[k]->frag);
        free(d[k]->s);
        free(d[k]->o);
    }
    free(state->r);
}

int sc_feedback_learner_checkpoint_check(const unsigned char *blob, size_t n, uint64_t run_hash, int nfrag, int ndof, int nact, int iterations,
                                         sc_err *err)
{
    learner_state state = {0};
    int rc = learner_shape(&state, nfrag, ndof, nact, err);
    if (!rc) rc = deserialize_learner(&state, run_hash, iterations, blob, n, err);
    learner_shape_free(&state);
    return rc;
}

int sc_feedback_learner_checkpoint_example(uint64_t run_hash, int nfrag, int ndof, int nact, int done, long rows, unsigned char **blob, size_t *n,
                                           sc_err *err)
{
    learner_state state = {0};
    int rc = learner_shape(&state, nfrag, ndof, nact, err);
    double v[SC_MAX_DOFS + SC_FEATURES] = {0};
    for (long q = 0; !rc && q < rows; q++) {
        v[0] = 0.01 * (double)q;
        if (data_add(&state.data, (int)(q % nfrag), v, v) || data_add(&state.dyn, (int)(q % nfrag), v, v)) rc = sc_fail(err, SC_EIO, "out of memory");
    }
    if (!rc) {
        state.it = state.r->niter = done;
        state.r->best_iteration = done ? done - 1 : 0;
        sc_blob_writer w;
        serialize_learner(&state, run_hash, &w);
        rc = w.failed ? sc_fail(err, SC_EIO, "out of memory") : sc_checkpoint_seal(LEARNER_SCHEMA, run_hash, w.p, w.n, blob, n, err);
        sc_blob_writer_free(&w);
    }
    learner_shape_free(&state);
    return rc;
}

int sc_feedback_sampler_checkpoint(const char *checkpoint, char *path, size_t n)
{
    int len = snprintf(path, n, "%s.samcon", checkpoint);
    return len >= 0 && (size_t)len < n ? SC_OK : SC_EINPUT;
}

/* ---- the iterations ----------------------------------------------------------------------- */

/* what every iteration uses, made once */
typedef struct guided_setup {
    const sc_feedback_run *run;
    sc_features features;
    sc_cycle cycle;
    sc_reference repeated; /* the cycle repeated feedback.cycles times */
    int have_repeated;
    long *segment_steps;                 /* [nseg]: the fragments' own durations */
    const sc_model *models[SC_MAX_EVAL]; /* of the learning stiffness factors (the character's own where the factor is 1) */
    sc_model scaled[SC_MAX_EVAL];
    int nscaled;
    sc_samcon_config sampling; /* the guided runs' */
    double box0[SC_MAX_DOFS];  /* their boxes before exploration_boxes */
    char sampler_checkpoint[4200];
} guided_setup;

static void guided_setup_free(guided_setup *setup)
{
    free(setup->segment_steps);
    if (setup->have_repeated) sc_reference_free(&setup->repeated);
    for (int k = 0; k < setup->nscaled; k++) sc_model_free(&setup->scaled[k]);
    sc_features_free(&setup->features);
}

/* The models, the open-loop policy (current and best), the repeated cycle and the guided runs'
   settings: the sampler's, with the feedback's sample counts, boxes scaled by `noise`, the
   fragments' own durations, over the repeated cycle. */
static int guided_setup_init(const sc_feedback_run *run, guided_setup *setup, learner_state *state, sc_err *err)
{
    const sc_feedback_config *c = run->cfg;
    const sc_model *m = run->m;
    memset(setup, 0, sizeof *setup);
    setup->run = run;
    sc_feedback_sampler_checkpoint(run->checkpoint, setup->sampler_checkpoint, sizeof setup->sampler_checkpoint);
    int rc = SC_OK;
    for (int k = 0; k < c->nlearn_stiff && !rc; k++) {
        setup->models[k] = m;
        if (c->learn_stiffness[k] == 1) continue;
        if ((rc = sc_model_clone(m, &setup->scaled[setup->nscaled], err))) break;
        setup->scaled[setup->nscaled].youngs *= c->learn_stiffness[k];
        setup->models[k] = &setup->scaled[setup->nscaled++];
    }
    if (rc) return rc;
    if ((rc = sc_policy_from_openloop(run->ol, run->ref, m, run->dofs, c->nact, c->act, c->max_action, &state->cur, err)) ||
        (rc = sc_policy_copy(&state->cur, &state->best, err)) ||
        (rc = sc_cycle_from_times(run->ref, run->ol->cycle.t0, run->ol->cycle.t1, &setup->cycle, err)) ||
        (rc = sc_cycle_repeat(run->ref, &setup->cycle, c->cycles, &setup->repeated, err)))
        return rc;
    setup->have_repeated = 1;
    if ((rc = sc_features_init(&setup->features, m, &state->cur, err))) return rc;
    int nfrag = state->cur.nfrag, nseg = nfrag * c->cycles;
    if (!(setup->segment_steps = malloc(sizeof(long) * (size_t)nseg))) return sc_fail(err, SC_EIO, "out of memory");
    for (int k = 0; k < nseg; k++) setup->segment_steps[k] = state->cur.steps[k % nfrag];
    sc_samcon_config *scfg = &setup->sampling;
    *scfg = *run->sampling;
    scfg->samples = c->samples;
    scfg->elites = c->elites;
    for (int d = 0; d < run->dofs->n; d++) scfg->box[d] *= c->noise;
    memcpy(setup->box0, scfg->box, sizeof(double) * (size_t)run->dofs->n);
    scfg->time_scaling = 0;
    scfg->scale_min = scfg->scale_max = 1;
    scfg->start = scfg->end = 0;
    scfg->segment = state->cur.period / nfrag;
    scfg->cycle = SC_CYCLE_NONE;
    return SC_OK;
}

typedef struct {
    const sc_feedback_run *run;
    int it;
} iteration_progress;
static void samcon_progress(void *ctx, int done, int nseg, const char *line)
{
    const iteration_progress *ip = ctx;
    char buf[640];
    snprintf(buf, sizeof buf, "iteration %d/%d, %s", ip->it + 1, ip->run->cfg->iterations, line);
    (void)done;
    (void)nseg;
    ip->run->progress(ip->run->progress_ctx, buf);
}

/* Iteration i's guided runs: the sampler centred on the current policy; its elites (or those on
   the good paths) become regression pairs, and with fit: model every sample a transition. */
static int sample_iteration(guided_setup *setup, learner_state *state, int i, sc_err *err)
{
    const sc_feedback_run *run = setup->run;
    const sc_feedback_config *c = run->cfg;
    int nfrag = state->cur.nfrag, ndof = run->dofs->n;
    /* fit: model: the residual of regressed actions means nothing to an LQR law: boxes fixed */
    exploration_boxes(&state->cur, &state->data, setup->box0, c->explore_residual && !c->fit_model, setup->sampling.box);
    if (!c->all_data) state->dyn.n = 0;
    int naux = c->fit_model ? 2 * SC_FEATURES : SC_FEATURES;
    policy_guide guide = {&state->cur, &setup->features, nfrag, &state->dyn, ndof, naux, SC_OK, state->dyn.n};
    sc_sample_guide sample_guide = {.ctx = &guide, .naux = naux, .center = guide_center};
    if (c->fit_model) { /* every sample's transition, kept in the sampler's checkpoints too */
        sample_guide.finish = guide_finish;
        sample_guide.on_samples = guide_samples;
        sample_guide.save_gathered = guide_save;
        sample_guide.restore_gathered = guide_restore;
    }
    iteration_progress ip = {run, i};
    sc_samcon_run sr = {.m = setup->models[i % c->nlearn_stiff],
                        .sim_opts = run->sim_opts,
                        .ref = &setup->repeated,
                        .cycle = &setup->cycle,
                        .fragments = nfrag,
                        .dofs = run->dofs,
                        .cfg = &setup->sampling,
                        .seed = sc_hash_i64(run->seed, i),
                        .run_hash = sc_hash_i64(run->run_hash, i),
                        .checkpoint = setup->sampler_checkpoint,
                        .resume = access(setup->sampler_checkpoint, F_OK) == 0,
                        .monitor = {.stop = run->stop, .progress = run->progress ? samcon_progress : NULL, .ctx = &ip},
                        .par = run->par,
                        .guide = &sample_guide,
                        .segment_steps = setup->segment_steps};
    sc_samcon_result sres;
    int rc = sc_samcon(&sr, &sres, err);
    if (rc) {
        sc_samcon_result_free(&sres); /* an interrupted search's path: not used here */
        return rc;
    }
    if (guide.rc) {
        sc_samcon_result_free(&sres);
        return sc_fail(err, SC_EIO, "out of memory for the samples' transitions");
    }
    if (!c->all_data) state->data.n = 0;
    long elite = 0; /* the elites of every segment, in order */
    for (int k = 0; k < sres.nseg && !rc; k++)
        for (int e = 0; e < sres.nelites[k] && !rc; e++, elite++) {
            if (c->path_pairs && !sres.elite_kept[elite]) continue; /* a dead end */
            if (data_add(&state->data, k % nfrag, sres.elite_aux + (size_t)elite * naux, sres.elite_offset + (size_t)elite * ndof))
                rc = sc_fail(err, SC_EIO, "out of memory for the regression pairs");
        }
    sc_learning_iteration *it = &state->r->iter[i];
    it->samples = sres.samples;
    state->r->samples += sres.samples;
    sc_samcon_result_free(&sres);
    return rc;
}

/* Every fragment's law refitted on the pairs (the current policy). */
static int refit_policy(const sc_feedback_config *c, learner_state *state, sc_learning_iteration *it, sc_err *err)
{
    double sq = 0;
    int rc = SC_OK;
    for (int j = 0; j < state->cur.nfrag && !rc; j++)
        rc = refit(&state->cur, &state->data, j, c->ridge, c->model_feature[SC_FEATURE_HEADING], &it->pairs, &sq, err);
    if (rc) return rc;
    it->residual = it->pairs ? sqrt(sq / it->pairs) : 0;
    return SC_OK;
}

/* Transitions resampled with replacement (a bootstrap of the maps' data), drawn from stream b of
   the seed: as many rows as the data, so a fragment keeps about its share. */
static int bootstrap_rows(const dataset *d, uint64_t seed, int b, dataset *out)
{
    sc_rng rng;
    sc_rng_init(&rng, seed, (uint32_t)b, 0);
    out->ndof = d->ndof;
    out->n = 0;
    for (long r = 0; r < d->n; r++) {
        long k = (long)(sc_rng_uniform(&rng) * (double)d->n);
        if (data_add(out, d->frag[k], d->s + (size_t)k * SC_FEATURES, d->o + (size_t)k * (size_t)d->ndof)) return SC_EIO;
    }
    return SC_OK;
}

/* fit: model: the maps of all the data, then of `model.bootstraps` resamples of it, and the
   regulator of each action cost on each: cand[v * ncost + k] the current policy with the gains of
   cost k on variant v (0: all the data); with `model.ensemble`, variant bootstraps + 1: the
   regulator of the expected cost over all those maps together. The maps of all the data give the
   model error. */
static int model_candidates(const guided_setup *setup, const learner_state *state, int i, sc_learning_iteration *it, sc_policy *cand, sc_err *err)
{
    const sc_feedback_config *c = setup->run->cfg;
    int regulated[SC_FEATURES], nf = model_features(c, regulated), nv = 1 + c->bootstraps, na = state->cur.nact;
    size_t F = (size_t)state->cur.nfrag, sa = F * nf * nf, sb = F * nf * (size_t)na;
    double *A = calloc(nv * sa, sizeof(double)), *B = calloc(nv * sb, sizeof(double)), error;
    dataset boot = {0};
    int rc = A && B ? SC_OK : sc_fail(err, SC_EIO, "out of memory");
    for (int v = 0; v < nv && !rc; v++) {
        if (v && bootstrap_rows(&state->dyn, sc_hash_i64(setup->run->seed, i), v, &boot)) rc = sc_fail(err, SC_EIO, "out of memory");
        if (!rc) rc = fit_model_maps(&state->cur, v ? &boot : &state->dyn, c, A + v * sa, B + v * sb, v ? &error : &it->model_error, err);
        for (int k = 0; k < c->ncost && !rc; k++)
            if (!(rc = sc_policy_copy(&state->cur, &cand[v * c->ncost + k], err)))
                rc = regulator_gains(&cand[v * c->ncost + k], c, 1, A + v * sa, B + v * sb, setup->run->sampling->box, c->action_cost[k], err);
    }
    for (int k = 0; c->ensemble && k < c->ncost && !rc; k++)
        if (!(rc = sc_policy_copy(&state->cur, &cand[nv * c->ncost + k], err)))
            rc = regulator_gains(&cand[nv * c->ncost + k], c, nv, A, B, setup->run->sampling->box, c->action_cost[k], err);
    free(A);
    free(B);
    free(boot.frag);
    free(boot.s);
    free(boot.o);
    return rc;
}

/* the closed-loop test of an iteration's candidate policies: `trials` runs of each at each learning
   stiffness, the first as the policy would run, the others under motor noise of their own seeds */
typedef struct {
    const sc_feedback_run *run;
    const sc_policy *p; /* [candidates] */
    const sc_model *const *models;
    const sc_sim_opts *opts; /* [trials] */
    int nmodels, ntrials;
} survival_ctx;
static int survival_task(void *ctx, int thread, int i, void *out, sc_err *err)
{
    (void)thread; /* a run makes its own simulation; the context is only read */
    const survival_ctx *sv = ctx;
    sc_trial_result *res = out;
    int t = i % sv->ntrials, q = i / sv->ntrials % sv->nmodels, k = i / sv->ntrials / sv->nmodels;
    return sc_policy_run(sv->models[q], &sv->opts[t], &sv->p[k], sv->run->dofs, 1, sv->run->cfg->eval_seconds, sv->run->cfg->max_tilt, &res->survived,
                         &res->joint_error, err);
}

/* The gains of each action cost (fit: model; else the refitted policy alone), tested closed loop
   at every learning stiffness, `trials` times each. One run of a gait that has not settled into a
   stable cycle is one draw of its fall time, and which draw a learning gets turns on the last digits
   of its start: the runs under motor noise are further draws. A policy is judged by its mean time
   before a fall over every run (the least would rank a policy that falls at once everywhere above
   one that only falls at one factor); of the action costs, the gains that go furthest (then track
   best) become the current policy. */
static int choose_gains(const guided_setup *setup, learner_state *state, int i, sc_err *err)
{
    const sc_feedback_run *run = setup->run;
    const sc_feedback_config *c = run->cfg;
    sc_learning_iteration *it = &state->r->iter[i];
    int ncand = c->fit_model ? c->ncost * (1 + c->bootstraps + c->ensemble) : 1, nst = c->nlearn_stiff, nt = c->trials, nrun = nst * nt, rc = SC_OK;
    sc_policy *cand = c->fit_model ? calloc((size_t)ncand, sizeof *cand) : NULL;
    if (c->fit_model && !cand) rc = sc_fail(err, SC_EIO, "out of memory");
    else if (c->fit_model) rc = model_candidates(setup, state, i, it, cand, err);
    sc_sim_opts opts[SC_MAX_TRIALS];
    for (int t = 0; t < nt; t++) {
        opts[t] = *run->sim_opts;
        if (t) opts[t].motor_noise = (sc_motor_noise_opts){c->trial_noise, sc_hash_i64(sc_hash_i64(run->seed, i), t)};
    }
    survival_ctx sv = {run, c->fit_model ? cand : &state->cur, setup->models, opts, nst, nt};
    sc_trial_result *er = malloc(sizeof *er * (size_t)(ncand * nrun));
    int *owner = malloc(sizeof *owner * (size_t)(ncand * nrun)), stopped = 0;
    if (!rc && (!er || !owner)) rc = sc_fail(err, SC_EIO, "out of memory");
    if (!rc) rc = sc_par_map(run->par, ncand * nrun, sizeof er[0], survival_task, &sv, run->stop, er, owner, &stopped, err);
    if (!rc && stopped)
        rc = sc_fail(err, SC_EINTERRUPTED, "stopped by a signal in iteration %d; the learning up to there is in %s", i + 1, run->checkpoint);
    /* per action cost, its best variant's figures */
    int chosen = 0;
    double *mean = calloc((size_t)ncand, sizeof *mean), *jerr = calloc((size_t)ncand, sizeof *jerr);
    if (!rc && (!mean || !jerr)) rc = sc_fail(err, SC_EIO, "out of memory");
    for (int k = 0; !rc && k < ncand; k++) {
        for (int q = 0; q < nrun; q++) {
            mean[k] += er[k * nrun + q].survived / nrun;
            jerr[k] += er[k * nrun + q].joint_error / nrun;
        }
        int cost = c->fit_model ? k % c->ncost : 0, best = k < (c->fit_model ? c->ncost : 1);
        if (best || mean[k] > it->cost_survived[cost] + 1e-9 ||
            (fabs(mean[k] - it->cost_survived[cost]) <= 1e-9 && jerr[k] < it->cost_joint_error[cost])) {
            it->cost_survived[cost] = mean[k];
            it->cost_joint_error[cost] = jerr[k];
        }
        if (k && (mean[k] > mean[chosen] + 1e-9 || (fabs(mean[k] - mean[chosen]) <= 1e-9 && jerr[k] < jerr[chosen]))) chosen = k;
    }
    if (!rc && c->fit_model) {
        sc_policy_free(&state->cur);
        state->cur = cand[chosen];
        memset(&cand[chosen], 0, sizeof cand[chosen]);
        it->action_cost = c->action_cost[chosen % c->ncost];
        it->maps_kept = chosen / c->ncost;
    }
    for (int k = 0; cand && k < ncand; k++) sc_policy_free(&cand[k]);
    free(cand);
    if (!rc) {
        it->survived_s = mean[chosen];
        it->joint_error = jerr[chosen];
        for (int q = 0; q < nst; q++) {
            it->survived_at[q] = 0;
            for (int t = 0; t < nt; t++) it->survived_at[q] += er[chosen * nrun + q * nt + t].survived / nt;
        }
    }
    free(er);
    free(owner);
    free(mean);
    free(jerr);
    return rc;
}

/* Closed-loop data: `rollouts` runs of the current policy for the test's length or until it
   falls, its actions explored by a uniform draw within the guided samples' boxes, at the learning
   stiffnesses in turn. The guided samples start from the sampler's elites, on the cycle; these
   start where the policy takes the character, falls included, so the maps also learn the states
   the closed loop reaches. Every fragment played is a transition of the maps. */
typedef struct {
    const sc_feedback_run *run;
    const sc_policy *p;
    const sc_model *const *models;
    int nmodels, cap; /* cap: rows a rollout can hold */
    const double *explore;
    uint64_t seed;
} rollout_ctx;
static int rollout_task(void *ctx, int thread, int i, void *out, sc_err *err)
{
    (void)thread;
    const rollout_ctx *ro = ctx;
    double *o = out; /* the rows' count, then the rows */
    sc_features f;
    const sc_model *m = ro->models[i % ro->nmodels];
    int rc = sc_features_init(&f, m, ro->p, err);
    if (rc) return rc;
    sc_transition_log log = {ro->p->nact, ro->cap, 0, o + 1};
    sc_policy_trial trial = {.m = m,
                             .o = ro->run->sim_opts,
                             .p = ro->p,
                             .dofs = ro->run->dofs,
                             .f = &f,
                             .feedback = 1,
                             .steps = lround(ro->run->cfg->eval_seconds / ro->run->sim_opts->dt),
                             .max_tilt = ro->run->cfg->max_tilt,
                             .explore = ro->explore,
                             .explore_seed = sc_hash_i64(ro->seed, i),
                             .log = &log};
    sc_trial_result res;
    rc = sc_policy_trial_run(&trial, &res, err);
    o[0] = log.n;
    sc_features_free(&f);
    return rc;
}

static int harvest_rollouts(const guided_setup *setup, learner_state *state, int i, int round, sc_err *err)
{
    const sc_feedback_run *run = setup->run;
    const sc_feedback_config *c = run->cfg;
    const sc_policy *p = &state->cur;
    double explore[SC_MAX_ACTIONS];
    for (int a = 0; a < p->nact; a++) explore[a] = setup->sampling.box[p->act[a]];
    long shortest = p->steps[0];
    for (int j = 1; j < p->nfrag; j++) shortest = p->steps[j] < shortest ? p->steps[j] : shortest;
    int width = SC_TRANSITION_WIDTH(p->nact), cap = (int)(lround(c->eval_seconds / run->sim_opts->dt) / shortest) + 1, stopped = 0;
    rollout_ctx ro = {run, p, setup->models, c->nlearn_stiff, cap, explore, sc_hash_i64(sc_hash_i64(run->seed, i), -1 - (int64_t)round)};
    size_t stride = 1 + (size_t)cap * width; /* doubles per rollout: its rows' count, then the rows */
    double *res = malloc(sizeof(double) * stride * (size_t)c->rollouts);
    int *owner = malloc(sizeof *owner * (size_t)c->rollouts), rc = SC_OK;
    if (!res || !owner) rc = sc_fail(err, SC_EIO, "out of memory");
    if (!rc) rc = sc_par_map(run->par, c->rollouts, sizeof(double) * stride, rollout_task, &ro, run->stop, res, owner, &stopped, err);
    if (!rc && stopped)
        rc = sc_fail(err, SC_EINTERRUPTED, "stopped by a signal in iteration %d; the learning up to there is in %s", i + 1, run->checkpoint);
    for (int k = 0; !rc && k < c->rollouts; k++) {
        const double *o = res + stride * (size_t)k;
        for (long r = 0; r < (long)o[0] && !rc; r++) {
            const double *row = o + 1 + (size_t)r * width;
            if (data_add(&state->dyn, (int)row[0], row + 1, row + 1 + SC_FEATURES)) rc = sc_fail(err, SC_EIO, "out of memory for the transitions");
        }
    }
    free(res);
    free(owner);
    return rc;
}

/* `rounds` of closed-loop data, each followed by the maps refitted and the gains chosen again; a
   round whose policy goes less far than the one before is undone (its data stay) */
static int closed_loop_rounds(const guided_setup *setup, learner_state *state, int i, sc_err *err)
{
    const sc_feedback_config *c = setup->run->cfg;
    sc_learning_iteration *it = &state->r->iter[i];
    int rc = SC_OK;
    for (int round = 0; round < c->rounds && c->rollouts > 0 && !rc; round++) {
        sc_learning_iteration before = *it;
        sc_policy prev = {0};
        if ((rc = sc_policy_copy(&state->cur, &prev, err)) || (rc = harvest_rollouts(setup, state, i, round, err)) ||
            (rc = choose_gains(setup, state, i, err))) {
            sc_policy_free(&prev);
            break;
        }
        int worse =
            it->survived_s < before.survived_s - 1e-9 || (fabs(it->survived_s - before.survived_s) <= 1e-9 && it->joint_error > before.joint_error);
        if (setup->run->progress && sc_par_rank(setup->run->par) == 0) {
            char line[256];
            snprintf(line, sizeof line,
                     "iteration %d/%d, closed-loop round %d/%d: %d rollouts, %ld transitions, model error %.3f; closed loop went %.1f s (%s)", i + 1,
                     c->iterations, round + 1, c->rounds, c->rollouts, state->dyn.n, it->model_error, it->survived_s,
                     worse ? "less far: undone" : "kept");
            setup->run->progress(setup->run->progress_ctx, line);
        }
        if (worse) {
            double model_error = it->model_error;
            *it = before;
            it->model_error = model_error;
            sc_policy_free(&state->cur);
            state->cur = prev;
        } else {
            sc_policy_free(&prev);
        }
    }
    return rc;
}

/* the policy that keeps the character going longest (then tracks best) so far */
static int keep_best(learner_state *state, int i, sc_err *err)
{
    sc_feedback_result *r = state->r;
    const sc_learning_iteration *it = &r->iter[i], *b = r->niter ? &r->iter[r->best_iteration] : NULL;
    if (!b || it->survived_s > b->survived_s + 1e-9 || (fabs(it->survived_s - b->survived_s) <= 1e-9 && it->joint_error < b->joint_error)) {
        sc_policy_free(&state->best);
        int rc = sc_policy_copy(&state->cur, &state->best, err);
        if (rc) return rc;
        r->best_iteration = i;
    }
    return SC_OK;
}

static void report_iteration(const sc_feedback_run *run, const learner_state *state, int i)
{
    const sc_feedback_config *c = run->cfg;
    const sc_feedback_result *r = state->r;
    const sc_learning_iteration *it = &r->iter[i];
    char line[1024], model[128] = "", at[400] = "", sampled[64] = "";
    if (c->nlearn_stiff > 1) snprintf(sampled, sizeof sampled, " (sampled at %g x Young's modulus)", c->learn_stiffness[i % c->nlearn_stiff]);
    if (c->fit_model) snprintf(model, sizeof model, ", %ld transitions, model error %.3f (feature scales)", state->dyn.n, it->model_error);
    for (int k = 0, o = 0; c->nlearn_stiff > 1 && k < c->nlearn_stiff && o < (int)sizeof at - 40; k++)
        o += snprintf(at + o, sizeof at - (size_t)o, "%s%.1f s at %g x E", k ? ", " : " (", it->survived_at[k], c->learn_stiffness[k]);
    if (c->nlearn_stiff > 1) strcat(at, ")");
    for (int k = 0, o = (int)strlen(at); c->fit_model && c->ncost > 1 && k < c->ncost && o < (int)sizeof at - 60; k++)
        o += snprintf(at + o, sizeof at - (size_t)o, "%s%.1f s with action cost %g%s", k ? ", " : "; ", it->cost_survived[k], c->action_cost[k],
                      c->action_cost[k] == it->action_cost ? " (kept)" : "");
    if (c->fit_model && (c->bootstraps || c->ensemble)) {
        size_t o = strlen(at);
        if (it->maps_kept == 0) snprintf(at + o, sizeof at - o, "; the maps of all the transitions");
        else if (it->maps_kept > c->bootstraps) snprintf(at + o, sizeof at - o, "; the ensemble of the maps");
        else snprintf(at + o, sizeof at - o, "; the maps of resample %ld", it->maps_kept);
    }
    snprintf(line, sizeof line,
             "iteration %d/%d%s: %ld samples, %ld regression pairs, action residual %.3f rad%s; closed loop went %.1f of %.1f s%s "
             "(joint error %.1f deg); best so far: iteration %d",
             i + 1, c->iterations, sampled, it->samples, it->pairs, it->residual, model, it->survived_s, c->eval_seconds, at,
             it->joint_error * 180 / SC_PI, r->best_iteration + 1);
    run->progress(run->progress_ctx, line);
}

/* rank 0 saves the learning (the sampler's checkpoint of the iteration is then spent); every rank
   stops when it could not */
static int checkpoint_iteration(const guided_setup *setup, const learner_state *state, sc_err *err)
{
    const sc_feedback_run *run = setup->run;
    int rc = SC_OK;
    if (sc_par_rank(run->par) == 0) {
        rc = write_learner(run, state, err);
        if (!rc) unlink(setup->sampler_checkpoint);
    }
    if (sc_par_any(run->par, rc != SC_OK)) return rc ? rc : sc_fail(err, SC_EIO, "stopped: rank 0 could not write the checkpoint");
    return SC_OK;
}

int sc_feedback_guided(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err)
{
    const sc_feedback_config *c = run->cfg;
    learner_state state = {0};
    state.r = r;
    state.data.ndof = run->dofs->n;
    state.dyn.ndof = c->nact + SC_FEATURES;
    guided_setup setup;
    int rc = guided_setup_init(run, &setup, &state, err);
    if (!rc && run->resume && access(run->checkpoint, F_OK) == 0) rc = read_learner(run, &state, err);
    double wall0 = sc_wall_time(), wall_before = r->wall_seconds;
    while (!rc && state.it < c->iterations) {
        int i = state.it;
        if ((rc = sample_iteration(&setup, &state, i, err)) || (rc = refit_policy(c, &state, &r->iter[i], err)) ||
            (rc = choose_gains(&setup, &state, i, err)) || (rc = closed_loop_rounds(&setup, &state, i, err)) || (rc = keep_best(&state, i, err)))
            break;
        state.it = i + 1;
        r->niter = state.it;
        r->wall_seconds = wall_before + (sc_wall_time() - wall0);
        if (run->progress && sc_par_rank(run->par) == 0) report_iteration(run, &state, i);
        rc = checkpoint_iteration(&setup, &state, err);
    }
    if (!rc) rc = sc_policy_copy(&state.best, &r->policy, err);
    sc_policy_free(&state.cur);
    sc_policy_free(&state.best);
    free(state.data.frag);
    free(state.data.s);
    free(state.data.o);
    free(state.dyn.frag);
    free(state.dyn.s);
    free(state.dyn.o);
    guided_setup_free(&setup);
    return rc;
}

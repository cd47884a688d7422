/* learn-feedback, method: search: the feedback gains optimized directly (Liu et al. 2012), by
 * CMA-ES with a diagonal covariance (Ros and Hansen 2008), every candidate scored by closed-loop
 * runs of the policy it makes. The gains are few because they are shared: an action DoF of a leg
 * plays the stance or the swing role in each fragment (the stance foot: the lower one at the
 * fragment's start), so every fragment's M_j and a_j come from one gain per (role, feature) and one
 * bias per role. s_j is the mean state the sampled open loop passes through at the fragment's
 * starts. Candidates depend on the seed, the generation and
 * their index only, and every rank updates the search from all the scores: the result does not
 * depend on the number of ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "learn/gain_search.h"
#include "learn/trial.h"
#include "core/blob.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/rng.h"
#include "io/checkpoint.h"
#include "par/par.h"

#define MAX_PARAMS (SC_MAX_ACTIONS * (SC_FEATURES + 1))

typedef struct gain_layout {
    int nroles, stride, np; /* stride: nfeat + bias per role; np: parameters */
    const sc_search_config *c;
    int *role_of; /* [nfrag * nact] */
} gain_layout;

/* Roles from the DoF names: l_X.a / r_X.a are stance_X.a or swing_X.a by the fragment's stance
   foot; any other DoF is its own role. */
static int build_layout(const sc_policy *p, const sc_control_dofs *dofs, const sc_search_config *c, gain_layout *lay, sc_feedback_result *r,
                        sc_err *err)
{
    lay->c = c;
    lay->stride = c->nfeat + c->bias;
    lay->nroles = 0;
    lay->role_of = malloc(sizeof(int) * (size_t)p->nfrag * (size_t)p->nact);
    if (!lay->role_of) return sc_fail(err, SC_EIO, "out of memory");
    for (int j = 0; j < p->nfrag; j++) {
        const double *sb = p->s_bar + (size_t)j * SC_FEATURES;
        int left_stance = sb[10] < sb[13]; /* lfoot_y, rfoot_y */
        for (int i = 0; i < p->nact; i++) {
            const char *name = dofs->name[p->act[i]];
            char role[48];
            int left = !strncmp(name, "l_", 2), right = !strncmp(name, "r_", 2);
            if (left || right) snprintf(role, sizeof role, "%s_%s", left == left_stance ? "stance" : "swing", name + 2);
            else snprintf(role, sizeof role, "%s", name);
            int k = 0;
            while (k < lay->nroles && strcmp(r->role[k], role)) k++;
            if (k == lay->nroles) {
                if (lay->nroles == SC_MAX_ACTIONS)
                    return sc_fail(err, SC_EINPUT, "feedback.search: more than %d roles (list both legs' joints in feedback.actions)",
                                   SC_MAX_ACTIONS);
                snprintf(r->role[lay->nroles++], sizeof r->role[0], "%s", role);
            }
            lay->role_of[(size_t)j * p->nact + i] = k;
        }
    }
    r->nroles = lay->nroles;
    lay->np = lay->nroles * lay->stride;
    return SC_OK;
}

/* The policy of parameters theta: base's s_bar and open-loop offsets, a_j = the open loop's + the
   role's bias, M_j from the roles' gains. */
static void apply_gains(const gain_layout *lay, const double *theta, const sc_policy *base, sc_policy *out)
{
    int na = base->nact;
    memset(out->M, 0, sizeof(double) * (size_t)base->nfrag * (size_t)na * SC_FEATURES);
    for (int j = 0; j < base->nfrag; j++)
        for (int i = 0; i < na; i++) {
            const double *g = theta + (size_t)lay->role_of[(size_t)j * na + i] * lay->stride;
            double *Mi = out->M + ((size_t)j * na + i) * SC_FEATURES;
            for (int q = 0; q < lay->c->nfeat; q++) Mi[lay->c->feat[q]] = g[q] / sc_feature_scale[lay->c->feat[q]];
            out->a_bar[(size_t)j * na + i] = base->a_bar[(size_t)j * na + i] + (lay->c->bias ? g[lay->c->nfeat] : 0);
        }
}

/* ---- CMA-ES, diagonal covariance ------------------------------------------------------------ */

typedef struct cma {
    int n, lambda, mu, gen;
    double w[1024], mueff, cs, ds, cc, c1, cmu, chin;
    double sigma, m[MAX_PARAMS], C[MAX_PARAMS], ps[MAX_PARAMS], pc[MAX_PARAMS];
} cma;

static void cma_init(cma *es, int n, int lambda, double sigma)
{
    memset(es, 0, sizeof *es);
    es->n = n;
    es->lambda = lambda > 1 ? lambda : 4 + (int)floor(3 * log(n));
    if (es->lambda > 2048) es->lambda = 2048;
    es->mu = es->lambda / 2;
    double sw = 0, sw2 = 0;
    for (int i = 0; i < es->mu; i++) {
        es->w[i] = log(es->mu + 0.5) - log(i + 1);
        sw += es->w[i];
    }
    for (int i = 0; i < es->mu; i++) {
        es->w[i] /= sw;
        sw2 += es->w[i] * es->w[i];
    }
    es->mueff = 1 / sw2;
    es->cs = (es->mueff + 2) / (n + es->mueff + 5);
    es->ds = 1 + 2 * fmax(0, sqrt((es->mueff - 1) / (n + 1)) - 1) + es->cs;
    es->cc = (4 + es->mueff / n) / (n + 4 + 2 * es->mueff / n);
    double c1 = 2 / ((n + 1.3) * (n + 1.3) + es->mueff), cmu = fmin(1 - c1, 2 * (es->mueff - 2 + 1 / es->mueff) / ((n + 2) * (n + 2) + es->mueff));
    double sep = (n + 2) / 3.0; /* a diagonal covariance learns faster (Ros and Hansen 2008) */
    es->c1 = fmin(1, c1 * sep);
    es->cmu = fmin(1 - es->c1, cmu * sep);
    es->chin = sqrt(n) * (1 - 1 / (4.0 * n) + 1 / (21.0 * n * n));
    es->sigma = sigma;
    for (int i = 0; i < n; i++) es->C[i] = 1;
}

/* candidate k of the generation: z standard normal from (seed, generation, k) alone */
static void cma_sample(const cma *es, uint64_t seed, int k, double *z, double *x)
{
    sc_rng rng;
    sc_rng_init(&rng, seed, (uint32_t)es->gen, (uint32_t)k);
    for (int i = 0; i < es->n; i++) {
        z[i] = sc_rng_normal(&rng);
        x[i] = es->m[i] + es->sigma * sqrt(es->C[i]) * z[i];
    }
}

/* order: candidates best first */
static void cma_update(cma *es, const double *Z, const int *order)
{
    int n = es->n;
    double zw[MAX_PARAMS] = {0}, yw[MAX_PARAMS] = {0}, y2[MAX_PARAMS] = {0};
    for (int r = 0; r < es->mu; r++) {
        const double *z = Z + (size_t)order[r] * n;
        for (int i = 0; i < n; i++) {
            double y = sqrt(es->C[i]) * z[i];
            zw[i] += es->w[r] * z[i];
            yw[i] += es->w[r] * y;
            y2[i] += es->w[r] * y * y;
        }
    }
    double cs = es->cs, cc = es->cc, norm = 0;
    for (int i = 0; i < n; i++) {
        es->m[i] += es->sigma * yw[i];
        es->ps[i] = (1 - cs) * es->ps[i] + sqrt(cs * (2 - cs) * es->mueff) * zw[i];
        norm += es->ps[i] * es->ps[i];
    }
    norm = sqrt(norm);
    int hs = norm / sqrt(1 - pow(1 - cs, 2.0 * (es->gen + 1))) < (1.4 + 2.0 / (n + 1)) * es->chin;
    for (int i = 0; i < n; i++) {
        es->pc[i] = (1 - cc) * es->pc[i] + hs * sqrt(cc * (2 - cc) * es->mueff) * yw[i];
        es->C[i] = (1 - es->c1 - es->cmu) * es->C[i] + es->c1 * (es->pc[i] * es->pc[i] + (1 - hs) * cc * (2 - cc) * es->C[i]) + es->cmu * y2[i];
    }
    es->sigma *= exp(es->cs / es->ds * (norm / es->chin - 1));
    es->gen++;
}

/* ---- scoring ------------------------------------------------------------------------------- */

typedef struct candidate_scorer {
    const sc_feedback_run *run;
    const gain_layout *layout;
    const sc_policy *base;
    sc_policy *work; /* [nwork]: each thread's candidate policy */
    int nwork;
    const sc_features *f;
    const double *X; /* [lambda * np] */
    long cycle_steps;
} candidate_scorer;

static int score_task(void *ctx, int thread, int t, void *out, sc_err *err)
{
    const candidate_scorer *scorer = ctx;
    sc_policy *work = &scorer->work[thread];
    const sc_feedback_config *c = scorer->run->cfg;
    const sc_search_config *sc = &c->search;
    int k = t / sc->rollouts, ro = t % sc->rollouts;
    apply_gains(scorer->layout, scorer->X + (size_t)k * scorer->layout->np, scorer->base, work);
    double dt = scorer->run->sim_opts->dt;
    sc_policy_trial trial = {.m = scorer->run->m,
                             .o = scorer->run->sim_opts,
                             .p = work,
                             .dofs = scorer->run->dofs,
                             .f = scorer->f,
                             .feedback = 1,
                             .steps = lround(sc->seconds / dt),
                             .max_tilt = c->max_tilt,
                             .push_bone = c->push_bone};
    if (ro > 0 && sc->push > 0) { /* in turn: front, back, left, right, then later in the second cycle */
        int dir = (ro - 1) % 4, phase = ((ro - 1) / 4) % 4;
        trial.push_force = sc->push;
        trial.push_dir = dir;
        trial.push_len = lround(c->push_duration / dt);
        trial.push_step = scorer->cycle_steps + scorer->cycle_steps * phase / 4;
    }
    return sc_policy_trial_run(&trial, out, err);
}

/* survival first; straying from the cycle costs up to a tenth of the run */
static double trial_score(const sc_trial_result *t, double seconds) { return t->survived / seconds - 0.1 * (1 - exp(-t->deviation / 4)); }

/* ---- checkpoints ---------------------------------------------------------------------------- */

typedef struct search_state {
    cma cma;
    double best[MAX_PARAMS], best_score;
} search_state;

/* Put field by field, with no padding anywhere: the same bytes as the struct itself, the layout
   of softcon.feedback_search_checkpoint/1. */
_Static_assert(sizeof(cma) == 4 * sizeof(int) + sizeof(double) * (1024 + 8 + 4 * MAX_PARAMS) &&
                   sizeof(search_state) == sizeof(cma) + sizeof(double) * (MAX_PARAMS + 1),
               "the search checkpoint's layout");
#define SEARCH_MAGIC 0x5343534541524332ll /* "SCSEARC2" */

static void put_cma(sc_blob_writer *w, const cma *es)
{
    int head[4] = {es->n, es->lambda, es->mu, es->gen};
    double consts[8] = {es->mueff, es->cs, es->ds, es->cc, es->c1, es->cmu, es->chin, es->sigma};
    sc_blob_put(w, head, sizeof head);
    sc_blob_put(w, es->w, sizeof es->w);
    sc_blob_put(w, consts, sizeof consts);
    sc_blob_put(w, es->m, sizeof es->m);
    sc_blob_put(w, es->C, sizeof es->C);
    sc_blob_put(w, es->ps, sizeof es->ps);
    sc_blob_put(w, es->pc, sizeof es->pc);
}
static void get_cma(sc_blob_reader *r, cma *es)
{
    int head[4];
    double consts[8];
    sc_blob_get(r, head, sizeof head);
    sc_blob_get(r, es->w, sizeof es->w);
    sc_blob_get(r, consts, sizeof consts);
    sc_blob_get(r, es->m, sizeof es->m);
    sc_blob_get(r, es->C, sizeof es->C);
    sc_blob_get(r, es->ps, sizeof es->ps);
    sc_blob_get(r, es->pc, sizeof es->pc);
    es->n = head[0], es->lambda = head[1], es->mu = head[2], es->gen = head[3];
    es->mueff = consts[0], es->cs = consts[1], es->ds = consts[2], es->cc = consts[3];
    es->c1 = consts[4], es->cmu = consts[5], es->chin = consts[6], es->sigma = consts[7];
}

#define SEARCH_SCHEMA "softcon.feedback_search_checkpoint/3"

/* magic, run hash, the CMA-ES state, the best candidate, then the history */
static int serialize_state(const search_state *state, const sc_feedback_result *r, uint64_t run_hash, sc_blob_writer *w, sc_err *err)
{
    sc_blob_writer_init(w);
    sc_blob_put_i64(w, SEARCH_MAGIC);
    sc_blob_put_i64(w, (int64_t)run_hash);
    put_cma(w, &state->cma);
    sc_blob_put(w, state->best, sizeof state->best);
    sc_blob_put_f64(w, state->best_score);
    sc_blob_put(w, &r->best_iteration, sizeof r->best_iteration);
    sc_blob_put(w, &r->niter, sizeof r->niter);
    sc_learning_iterations_put(w, r->iter, r->niter);
    sc_blob_put_f64(w, r->wall_seconds);
    sc_blob_put_i64(w, r->samples);
    if (w->failed) {
        sc_blob_writer_free(w);
        return sc_fail(err, SC_EIO, "out of memory writing the checkpoint");
    }
    return SC_OK;
}

static int write_state(const sc_feedback_run *run, const search_state *state, const sc_feedback_result *r, sc_err *err)
{
    sc_blob_writer w;
    int rc = serialize_state(state, r, run->run_hash, &w, err);
    if (rc) return rc;
    sc_checkpoint_info info = {SEARCH_SCHEMA,      "learn-feedback (method: search) after its last completed generation: continue it with --resume",
                               "/search",          "the CMA-ES state, the best candidate and the history, softcon's own layout",
                               "generations_done", state->cma.gen,
                               run->run_hash};
    rc = sc_checkpoint_write(run->checkpoint, &info, w.p, w.n, err);
    sc_blob_writer_free(&w);
    return rc;
}

static int all_finite(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* A sealed checkpoint's search into state (which holds the search's fresh start: its weights and
   constants must come back unchanged) and r's history, every value checked. */
static int decode_state(const unsigned char *blob, size_t n, uint64_t run_hash, search_state *state, sc_feedback_result *r, sc_err *err)
{
    const unsigned char *data;
    int rc = sc_checkpoint_unseal(blob, n, SEARCH_SCHEMA, run_hash, &data, &n, err);
    if (rc) return rc;
    const cma fresh = state->cma;
    sc_blob_reader rd;
    sc_blob_reader_init(&rd, data, n);
    int64_t magic = sc_blob_get_i64(&rd), hash = sc_blob_get_i64(&rd);
    int ok = !rd.bad && magic == SEARCH_MAGIC, n_iter = 0;
    if (ok && (uint64_t)hash != run_hash)
        return sc_fail(err, SC_EINPUT, "made for other inputs (config, character, controller, seed or build differ)");
    if (ok) {
        get_cma(&rd, &state->cma);
        sc_blob_get(&rd, state->best, sizeof state->best);
        state->best_score = sc_blob_get_f64(&rd);
        sc_blob_get(&rd, &r->best_iteration, sizeof r->best_iteration);
        sc_blob_get(&rd, &n_iter, sizeof n_iter);
        ok = !rd.bad && n_iter >= 0 && n_iter <= SC_MAX_GENERATIONS;
    }
    if (ok) {
        sc_learning_iterations_get(&rd, r->iter, n_iter);
        r->wall_seconds = sc_blob_get_f64(&rd);
        r->samples = (long)sc_blob_get_i64(&rd);
        ok = !rd.bad && !rd.left;
    }
    if (!ok || state->cma.gen != n_iter) return sc_fail(err, SC_EINPUT, "damaged or truncated (or made by a learn-feedback of another method)");
    const cma *es = &state->cma;
    if (es->n != fresh.n || es->lambda != fresh.lambda) return sc_fail(err, SC_EINPUT, "made for another search");
    if (es->mu != fresh.mu || memcmp(es->w, fresh.w, sizeof es->w) || es->mueff != fresh.mueff || es->cs != fresh.cs || es->ds != fresh.ds ||
        es->cc != fresh.cc || es->c1 != fresh.c1 || es->cmu != fresh.cmu || es->chin != fresh.chin)
        return sc_fail(err, SC_EINPUT, "damaged: the search's weights or constants differ from its config's");
    if (!(isfinite(es->sigma) && es->sigma > 0) || !all_finite(es->m, MAX_PARAMS) || !all_finite(es->C, MAX_PARAMS) ||
        !all_finite(es->ps, MAX_PARAMS) || !all_finite(es->pc, MAX_PARAMS))
        return sc_fail(err, SC_EINPUT, "damaged: the search's step size (%g), mean, covariance or paths are not finite", es->sigma);
    for (int i = 0; i < es->n; i++)
        if (!(es->C[i] > 0)) return sc_fail(err, SC_EINPUT, "damaged: covariance %d is %g", i, es->C[i]);
    if (!all_finite(state->best, MAX_PARAMS) || !(state->best_score == -INFINITY ? n_iter == 0 : isfinite(state->best_score)))
        return sc_fail(err, SC_EINPUT, "damaged: the best candidate (score %g)", state->best_score);
    if (r->best_iteration < 0 || r->best_iteration > (n_iter ? n_iter - 1 : 0) || !(isfinite(r->wall_seconds) && r->wall_seconds >= 0) ||
        r->samples < 0 || !sc_learning_iterations_ok(r->iter, n_iter))
        return sc_fail(err, SC_EINPUT, "damaged: the history (best generation %d of %d, %g s, %ld samples)", r->best_iteration + 1, n_iter,
                       r->wall_seconds, r->samples);
    r->niter = n_iter;
    return SC_OK;
}

static int read_state(const sc_feedback_run *run, search_state *state, sc_feedback_result *r, sc_err *err)
{
    unsigned char *data;
    size_t n;
    int rc = sc_par_rank(run->par) == 0 ? sc_checkpoint_read(run->checkpoint, "/search", SEARCH_SCHEMA, run->run_hash, &data, &n, err) : SC_OK;
    rc = sc_par_share_bytes(run->par, rc, &data, &n, err);
    if (rc) return rc;
    rc = decode_state(data, n, run->run_hash, state, r, err);
    free(data);
    if (rc) sc_err_prefix(err, "%s: ", run->checkpoint);
    return rc;
}

int sc_feedback_search_checkpoint_check(const unsigned char *blob, size_t n, uint64_t run_hash, int np, int lambda, double sigma, sc_err *err)
{
    search_state *st = calloc(1, sizeof *st);
    sc_feedback_result *r = calloc(1, sizeof *r);
    int rc = !st || !r ? sc_fail(err, SC_EIO, "out of memory") : SC_OK;
    if (!rc && (np < 1 || np > MAX_PARAMS)) rc = sc_fail(err, SC_EINPUT, "%d parameters", np);
    if (!rc) {
        cma_init(&st->cma, np, lambda, sigma);
        rc = decode_state(blob, n, run_hash, st, r, err);
    }
    free(st);
    free(r);
    return rc;
}

int sc_feedback_search_checkpoint_example(uint64_t run_hash, int np, int lambda, double sigma, int generations, unsigned char **blob, size_t *n,
                                          sc_err *err)
{
    search_state *st = calloc(1, sizeof *st);
    sc_feedback_result *r = calloc(1, sizeof *r);
    int rc = !st || !r ? sc_fail(err, SC_EIO, "out of memory") : SC_OK;
    if (!rc) {
        cma_init(&st->cma, np, lambda, sigma);
        st->best_score = generations ? 0.5 : -INFINITY;
        st->cma.gen = r->niter = generations;
        for (int g = 0; g < generations; g++) r->iter[g].sigma = sigma;
        sc_blob_writer w;
        if (!(rc = serialize_state(st, r, run_hash, &w, err))) {
            rc = sc_checkpoint_seal(SEARCH_SCHEMA, run_hash, w.p, w.n, blob, n, err);
            sc_blob_writer_free(&w);
        }
    }
    free(st);
    free(r);
    return rc;
}

/* ---- s_j: the sampled open loop's states ---------------------------------------------------- */

typedef struct state_log {
    const sc_features *f;
    const sc_segment *seg;
    int nseg, next, fragments;
    double *sum; /* [fragments * SC_FEATURES] */
    int *count;  /* [fragments] */
    const sc_policy *p;
    double max_tilt;
} state_log;

static void log_state(state_log *states, const sc_sim *s)
{
    double x[SC_FEATURES];
    sc_features_eval(states->f, s, x);
    int j = states->next % states->fragments;
    for (int k = 0; k < SC_FEATURES; k++) states->sum[j * SC_FEATURES + k] += x[k];
    states->count[j]++;
    states->next++;
}

static int log_hook(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    state_log *states = ctx;
    if (sc_policy_fallen(states->p, s, states->max_tilt)) return 1;
    if (states->next < states->nseg && s->step == states->seg[states->next].start_step) log_state(states, s);
    return 0;
}

/* The sampled open loop (every cycle with its own offsets and durations, as sample-openloop found
   them) replayed from the start state: s_j is the mean of its states at fragment j's starts over
   the cycles, a state on the walk rather than on one cycle's drift. */
static int open_loop_states(const sc_feedback_run *run, const sc_features *f, sc_policy *p, double *went, double *length, sc_err *err)
{
    const sc_openloop_cycle *ol = run->ol;
    int nfrag = p->nfrag, ncyc = (ol->nseg + nfrag - 1) / nfrag, rc;
    sc_cycle cy;
    sc_reference rep;
    if ((rc = sc_cycle_from_times(run->ref, ol->cycle.t0, ol->cycle.t1, &cy, err)) || (rc = sc_cycle_repeat(run->ref, &cy, ncyc, &rep, err)))
        return rc;
    sc_segment *seg = malloc(sizeof *seg * (size_t)ol->nseg);
    double *sum = calloc((size_t)nfrag * SC_FEATURES, sizeof(double));
    int *count = calloc((size_t)nfrag, sizeof(int));
    sc_sim *s = NULL;
    if (!seg || !sum || !count) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    long start = 0;
    for (int k = 0; k < ol->nseg; k++) {
        seg[k] = (sc_segment){ol->ref_t0[k], ol->ref_t1[k], start, ol->steps[k], ol->offsets + (size_t)k * run->dofs->n};
        start += ol->steps[k];
    }
    sc_segment_controller ctl = {run->m, run->dofs, rep.time, ol->base == SC_BASE_ID ? rep.target_quat : rep.local_quat, rep.n, seg, ol->nseg};
    if ((rc = sc_sim_create(run->m, run->sim_opts, &s, err)) || (rc = sc_policy_start(p, s, err))) goto done;
    state_log states = {f, seg, ol->nseg, 0, nfrag, sum, count, p, run->cfg->max_tilt};
    log_state(&states, s);
    sc_quat targets[SC_SIM_MAX_BONES];
    sc_rollout_result rr;
    sc_err step_err;
    rc = sc_rollout(s, sc_segment_source(&ctl), NULL, start, log_hook, &states, targets, &rr, &step_err);
    if (rc == SC_ENUMERIC) rc = SC_OK; /* the states before a blow-up still count */
    else if (rc) *err = step_err;
    *went = s->t;
    *length = start * s->o.dt;
    for (int j = 0; !rc && j < nfrag; j++) {
        if (!count[j]) {
            rc = sc_fail(err, SC_EINPUT,
                         "the open-loop controller, replayed, falls at %.2f s, before fragment %d of its first cycle: there is no state to centre "
                         "the feedback on",
                         s->t, j + 1);
            break;
        }
        for (int k = 0; k < SC_FEATURES; k++) p->s_bar[(size_t)j * SC_FEATURES + k] = sum[j * SC_FEATURES + k] / count[j];
        p->s_bar[(size_t)j * SC_FEATURES + SC_FEATURE_HEADING] = sc_policy_heading_target(p, j);
    }
done:
    if (s) sc_sim_free(s);
    free(seg);
    free(sum);
    free(count);
    sc_reference_free(&rep);
    return rc;
}

/* ---- the search ----------------------------------------------------------------------------- */

/* what the generations use: the open-loop policy with its s_j, the roles, the CMA-ES state and a
   generation's candidates, runs and scores */
typedef struct search_run {
    const sc_feedback_run *run;
    sc_features features;
    sc_policy base;
    gain_layout layout;
    candidate_scorer scorer;
    search_state *state;
    int lambda, ntask;
    double *X, *Z, *score; /* [lambda * np], [lambda * np], [lambda] */
    sc_trial_result *res;  /* [ntask] */
    int *order, *owner;    /* [lambda], [ntask] */
    uint64_t seed;
} search_run;

static void search_run_free(search_run *sr)
{
    sc_policy_free(&sr->base);
    for (int t = 0; sr->scorer.work && t < sr->scorer.nwork; t++) sc_policy_free(&sr->scorer.work[t]);
    free(sr->scorer.work);
    sc_features_free(&sr->features);
    free(sr->layout.role_of);
    free(sr->state);
    free(sr->X);
    free(sr->Z);
    free(sr->score);
    free(sr->order);
    free(sr->res);
    free(sr->owner);
}

/* The open-loop policy centred on the sampled open loop's states, its roles, the search's start
   (or the checkpoint's state), and a line saying what is searched. */
static int search_setup(const sc_feedback_run *run, search_run *sr, sc_feedback_result *r, sc_err *err)
{
    const sc_feedback_config *c = run->cfg;
    const sc_search_config *sc = &c->search;
    memset(sr, 0, sizeof *sr);
    sr->run = run;
    int rc;
    if (!(sr->state = calloc(1, sizeof *sr->state))) return sc_fail(err, SC_EIO, "out of memory");
    if ((rc = sc_policy_from_openloop(run->ol, run->ref, run->m, run->dofs, c->nact, c->act, c->max_action, &sr->base, err)) ||
        (rc = sc_features_init(&sr->features, run->m, &sr->base, err)))
        return rc;
    double went = 0, length = 0;
    if ((rc = open_loop_states(run, &sr->features, &sr->base, &went, &length, err))) return rc;
    long cyc = sc_policy_cycle_steps(&sr->base);
    gain_layout *lay = &sr->layout;
    if ((rc = build_layout(&sr->base, run->dofs, sc, lay, r, err))) return rc;
    int nwork = sc_par_threads(run->par);
    if (!(sr->scorer.work = calloc((size_t)nwork, sizeof *sr->scorer.work))) return sc_fail(err, SC_EIO, "out of memory");
    sr->scorer.nwork = nwork;
    for (int t = 0; t < nwork; t++)
        if ((rc = sc_policy_copy(&sr->base, &sr->scorer.work[t], err))) return rc;
    if (lay->np > MAX_PARAMS) return sc_fail(err, SC_EINPUT, "feedback.search: %d parameters, at most %d", lay->np, MAX_PARAMS);
    search_state *st = sr->state;
    cma_init(&st->cma, lay->np, sc->population, sc->sigma);
    st->best_score = -INFINITY;
    int lambda = sr->lambda = st->cma.lambda, ntask = sr->ntask = lambda * sc->rollouts;
    sr->X = malloc(sizeof(double) * (size_t)lambda * lay->np);
    sr->Z = malloc(sizeof(double) * (size_t)lambda * lay->np);
    sr->score = malloc(sizeof(double) * (size_t)lambda);
    sr->order = malloc(sizeof(int) * (size_t)lambda);
    sr->res = malloc(sizeof *sr->res * (size_t)ntask);
    sr->owner = malloc(sizeof(int) * (size_t)ntask);
    if (!sr->X || !sr->Z || !sr->score || !sr->order || !sr->res || !sr->owner) return sc_fail(err, SC_EIO, "out of memory");
    sr->scorer = (candidate_scorer){run, lay, &sr->base, sr->scorer.work, sr->scorer.nwork, &sr->features, sr->X, cyc};
    if (run->resume && access(run->checkpoint, F_OK) == 0 && (rc = read_state(run, st, r, err))) return rc;
    if (st->cma.n != lay->np || st->cma.lambda != lambda) return sc_fail(err, SC_EINPUT, "%s: made for another search", run->checkpoint);
    if (run->progress && sc_par_rank(run->par) == 0) {
        char line[512];
        snprintf(line, sizeof line,
                 "search: the sampled open loop replayed went %.2f of %.2f s (s_j: its mean state per fragment); %d roles x (%d features%s) "
                 "= %d gains; CMA-ES, %d candidates x %d runs of %.1f s per generation",
                 went, length, lay->nroles, sc->nfeat, sc->bias ? " + a bias" : "", lay->np, lambda, sc->rollouts, sc->seconds);
        run->progress(run->progress_ctx, line);
    }
    sr->seed = sc_hash_i64(run->seed, 0x5345415243480000ll);
    return SC_OK;
}

/* One generation: its candidates drawn and scored by closed-loop runs over the ranks, its row of
   the history, the best candidate so far, the CMA-ES update. */
static int run_generation(search_run *sr, sc_feedback_result *r, sc_err *err)
{
    const sc_feedback_run *run = sr->run;
    const sc_search_config *sc = &run->cfg->search;
    search_state *st = sr->state;
    int np = sr->layout.np, lambda = sr->lambda, g = st->cma.gen, stopped = 0, rc;
    for (int k = 0; k < lambda; k++) cma_sample(&st->cma, sr->seed, k, sr->Z + (size_t)k * np, sr->X + (size_t)k * np);
    if ((rc = sc_par_map(run->par, sr->ntask, sizeof *sr->res, score_task, &sr->scorer, run->stop, sr->res, sr->owner, &stopped, err))) return rc;
    if (stopped)
        return sc_fail(err, SC_EINTERRUPTED, "stopped by a signal in generation %d; the search up to there is in %s", g + 1, run->checkpoint);
    sc_learning_iteration *it = &r->iter[g];
    memset(it, 0, sizeof *it);
    double mean = 0, *score = sr->score;
    int *order = sr->order;
    const sc_trial_result *res = sr->res;
    for (int k = 0; k < lambda; k++) {
        score[k] = 0;
        for (int q = 0; q < sc->rollouts; q++) score[k] += trial_score(&res[k * sc->rollouts + q], sc->seconds) / sc->rollouts;
        mean += score[k] / lambda;
        order[k] = k;
    }
    for (int a = 1; a < lambda; a++) /* best first; ties by index */
        for (int b = a; b > 0 && score[order[b]] > score[order[b - 1]]; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    int top = order[0];
    for (int q = 0; q < sc->rollouts; q++) {
        it->survived_s += res[top * sc->rollouts + q].survived / sc->rollouts;
        it->joint_error += res[top * sc->rollouts + q].joint_error / sc->rollouts;
    }
    it->score = score[top];
    it->mean_score = mean;
    it->sigma = st->cma.sigma;
    it->samples = sr->ntask;
    r->samples += sr->ntask;
    if (score[top] > st->best_score) {
        st->best_score = score[top];
        memcpy(st->best, sr->X + (size_t)top * np, sizeof(double) * (size_t)np);
        r->best_iteration = g;
    }
    cma_update(&st->cma, sr->Z, order);
    r->niter = st->cma.gen;
    return SC_OK;
}

static void report_generation(const search_run *sr, const sc_feedback_result *r)
{
    const sc_feedback_run *run = sr->run;
    const sc_search_config *sc = &run->cfg->search;
    int g = sr->state->cma.gen - 1;
    const sc_learning_iteration *it = &r->iter[g];
    char line[512];
    snprintf(line, sizeof line,
             "generation %d/%d: best candidate %.3f (went %.1f of %.1f s, joint error %.1f deg), mean %.3f, sigma %.3f; "
             "best so far %.3f (generation %d)",
             g + 1, sc->generations, it->score, it->survived_s, sc->seconds, it->joint_error * 180 / SC_PI, it->mean_score, sr->state->cma.sigma,
             sr->state->best_score, r->best_iteration + 1);
    run->progress(run->progress_ctx, line);
}

int sc_feedback_search(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err)
{
    search_run sr;
    int rc = search_setup(run, &sr, r, err);
    double wall0 = sc_wall_time(), wall_before = r->wall_seconds;
    while (!rc && sr.state->cma.gen < run->cfg->search.generations) {
        if ((rc = run_generation(&sr, r, err))) break;
        r->wall_seconds = wall_before + (sc_wall_time() - wall0);
        if (run->progress && sc_par_rank(run->par) == 0) report_generation(&sr, r);
        if (sc_par_rank(run->par) == 0) rc = write_state(run, sr.state, r, err);
        if (sc_par_any(run->par, rc != SC_OK)) {
            if (!rc) rc = sc_fail(err, SC_EIO, "stopped: rank 0 could not write the checkpoint");
            break;
        }
    }
    if (!rc) {
        memcpy(r->theta, sr.state->best, sizeof(double) * (size_t)sr.layout.np);
        apply_gains(&sr.layout, sr.state->best, &sr.base, &sr.scorer.work[0]);
        rc = sc_policy_copy(&sr.scorer.work[0], &r->policy, err);
        r->role_of = sr.layout.role_of;
        sr.layout.role_of = NULL;
    }
    search_run_free(&sr);
    return rc;
}

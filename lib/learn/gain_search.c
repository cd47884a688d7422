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
#include "learn/feedback.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/rng.h"
#include "io/checkpoint.h"
#include "par/par.h"

#define MAX_PARAMS (SC_MAX_ACTIONS * (SC_FEATURES + 1))

typedef struct layout {
    int nroles, stride, np;   /* stride: nfeat + bias per role; np: parameters */
    const sc_search_config *c;
    int *role_of;             /* [nfrag * nact] */
} layout;

/* Roles from the DoF names: l_X.a / r_X.a are stance_X.a or swing_X.a by the fragment's stance
   foot; any other DoF is its own role. */
static int build_layout(const sc_policy *p, const sc_control_dofs *dofs, const sc_search_config *c, layout *L, sc_feedback_result *r,
                        sc_err *err)
{
    L->c = c;
    L->stride = c->nfeat + c->bias;
    L->nroles = 0;
    L->role_of = malloc(sizeof(int) * (size_t)p->nfrag * (size_t)p->nact);
    if (!L->role_of) return sc_fail(err, SC_EIO, "out of memory");
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
            while (k < L->nroles && strcmp(r->role[k], role)) k++;
            if (k == L->nroles) {
                if (L->nroles == SC_MAX_ACTIONS) return sc_fail(err, SC_EINPUT, "feedback.search: more than %d roles (list both legs' joints in feedback.actions)", SC_MAX_ACTIONS);
                snprintf(r->role[L->nroles++], sizeof r->role[0], "%s", role);
            }
            L->role_of[(size_t)j * p->nact + i] = k;
        }
    }
    r->nroles = L->nroles;
    L->np = L->nroles * L->stride;
    return SC_OK;
}

/* The policy of parameters theta: base's s_bar and open-loop offsets, a_j = the open loop's + the
   role's bias, M_j from the roles' gains. */
static void apply_gains(const layout *L, const double *theta, const sc_policy *base, sc_policy *out)
{
    int na = base->nact;
    memset(out->M, 0, sizeof(double) * (size_t)base->nfrag * (size_t)na * SC_FEATURES);
    for (int j = 0; j < base->nfrag; j++)
        for (int i = 0; i < na; i++) {
            const double *g = theta + (size_t)L->role_of[(size_t)j * na + i] * L->stride;
            double *Mi = out->M + ((size_t)j * na + i) * SC_FEATURES;
            for (int q = 0; q < L->c->nfeat; q++) Mi[L->c->feat[q]] = g[q] / sc_feature_scale[L->c->feat[q]];
            out->a_bar[(size_t)j * na + i] = base->a_bar[(size_t)j * na + i] + (L->c->bias ? g[L->c->nfeat] : 0);
        }
}

/* ---- CMA-ES, diagonal covariance ------------------------------------------------------------ */

typedef struct cma {
    int n, lambda, mu, gen;
    double w[1024], mueff, cs, ds, cc, c1, cmu, chin;
    double sigma, m[MAX_PARAMS], C[MAX_PARAMS], ps[MAX_PARAMS], pc[MAX_PARAMS];
} cma;

static void cma_init(cma *s, int n, int lambda, double sigma)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->lambda = lambda > 1 ? lambda : 4 + (int)floor(3 * log(n));
    if (s->lambda > 2048) s->lambda = 2048;
    s->mu = s->lambda / 2;
    double sw = 0, sw2 = 0;
    for (int i = 0; i < s->mu; i++) { s->w[i] = log(s->mu + 0.5) - log(i + 1); sw += s->w[i]; }
    for (int i = 0; i < s->mu; i++) { s->w[i] /= sw; sw2 += s->w[i] * s->w[i]; }
    s->mueff = 1 / sw2;
    s->cs = (s->mueff + 2) / (n + s->mueff + 5);
    s->ds = 1 + 2 * fmax(0, sqrt((s->mueff - 1) / (n + 1)) - 1) + s->cs;
    s->cc = (4 + s->mueff / n) / (n + 4 + 2 * s->mueff / n);
    double c1 = 2 / ((n + 1.3) * (n + 1.3) + s->mueff), cmu = fmin(1 - c1, 2 * (s->mueff - 2 + 1 / s->mueff) / ((n + 2) * (n + 2) + s->mueff));
    double sep = (n + 2) / 3.0; /* a diagonal covariance learns faster (Ros and Hansen 2008) */
    s->c1 = fmin(1, c1 * sep);
    s->cmu = fmin(1 - s->c1, cmu * sep);
    s->chin = sqrt(n) * (1 - 1 / (4.0 * n) + 1 / (21.0 * n * n));
    s->sigma = sigma;
    for (int i = 0; i < n; i++) s->C[i] = 1;
}

/* candidate k of the generation: z standard normal from (seed, generation, k) alone */
static void cma_sample(const cma *s, uint64_t seed, int k, double *z, double *x)
{
    sc_rng rng;
    sc_rng_init(&rng, seed, (uint32_t)s->gen, (uint32_t)k);
    for (int i = 0; i < s->n; i++) {
        z[i] = sc_rng_normal(&rng);
        x[i] = s->m[i] + s->sigma * sqrt(s->C[i]) * z[i];
    }
}

/* order: candidates best first */
static void cma_update(cma *s, const double *Z, const int *order)
{
    int n = s->n;
    double zw[MAX_PARAMS] = {0}, yw[MAX_PARAMS] = {0}, y2[MAX_PARAMS] = {0};
    for (int r = 0; r < s->mu; r++) {
        const double *z = Z + (size_t)order[r] * n;
        for (int i = 0; i < n; i++) {
            double y = sqrt(s->C[i]) * z[i];
            zw[i] += s->w[r] * z[i];
            yw[i] += s->w[r] * y;
            y2[i] += s->w[r] * y * y;
        }
    }
    double cs = s->cs, cc = s->cc, norm = 0;
    for (int i = 0; i < n; i++) {
        s->m[i] += s->sigma * yw[i];
        s->ps[i] = (1 - cs) * s->ps[i] + sqrt(cs * (2 - cs) * s->mueff) * zw[i];
        norm += s->ps[i] * s->ps[i];
    }
    norm = sqrt(norm);
    int hs = norm / sqrt(1 - pow(1 - cs, 2.0 * (s->gen + 1))) < (1.4 + 2.0 / (n + 1)) * s->chin;
    for (int i = 0; i < n; i++) {
        s->pc[i] = (1 - cc) * s->pc[i] + hs * sqrt(cc * (2 - cc) * s->mueff) * yw[i];
        s->C[i] = (1 - s->c1 - s->cmu) * s->C[i] + s->c1 * (s->pc[i] * s->pc[i] + (1 - hs) * cc * (2 - cc) * s->C[i]) + s->cmu * y2[i];
    }
    s->sigma *= exp(s->cs / s->ds * (norm / s->chin - 1));
    s->gen++;
}

/* ---- scoring ------------------------------------------------------------------------------- */

typedef struct scorer {
    const sc_feedback_run *run;
    const layout *L;
    const sc_policy *base;
    sc_policy work;          /* this rank's candidate policy */
    const sc_features *f;
    const double *X;         /* [lambda * np] */
    long cycle_steps;
} scorer;

static int score_task(void *ctx, int t, void *out, sc_err *err)
{
    scorer *S = ctx;
    const sc_feedback_config *c = S->run->cfg;
    const sc_search_config *sc = &c->search;
    int k = t / sc->rollouts, ro = t % sc->rollouts;
    apply_gains(S->L, S->X + (size_t)k * S->L->np, S->base, &S->work);
    double dt = S->run->sim_opts->dt;
    sc_policy_trial R = {.m = S->run->m, .o = S->run->sim_opts, .p = &S->work, .dofs = S->run->dofs, .f = S->f, .feedback = 1,
                         .steps = lround(sc->seconds / dt), .max_tilt = c->max_tilt, .push_bone = c->push_bone};
    if (ro > 0 && sc->push > 0) { /* in turn: front, back, left, right, then later in the second cycle */
        int dir = (ro - 1) % 4, phase = ((ro - 1) / 4) % 4;
        R.push_force = sc->push;
        R.push_dir = dir;
        R.push_len = lround(c->push_duration / dt);
        R.push_step = S->cycle_steps + S->cycle_steps * phase / 4;
    }
    return sc_policy_trial_run(&R, out, err);
}

/* survival first; straying from the cycle costs up to a tenth of the run */
static double trial_score(const sc_trial_result *t, double seconds)
{
    return t->survived / seconds - 0.1 * (1 - exp(-t->deviation / 4));
}

/* ---- checkpoints ---------------------------------------------------------------------------- */

typedef struct search_state {
    cma cma;
    double best[MAX_PARAMS], best_score;
} search_state;

static int write_state(const sc_feedback_run *run, const search_state *S, const sc_feedback_result *r, sc_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return sc_fail(err, SC_EIO, "out of memory writing the checkpoint");
    int64_t hdr[2] = {0x5343534541524331ll, (int64_t)run->run_hash};
    fwrite(hdr, sizeof hdr, 1, f);
    fwrite(S, sizeof *S, 1, f);
    fwrite(&r->best_iteration, sizeof r->best_iteration, 1, f);
    fwrite(&r->niter, sizeof r->niter, 1, f);
    fwrite(r->iter, sizeof r->iter[0], (size_t)r->niter, f);
    fwrite(&r->wall_seconds, sizeof r->wall_seconds, 1, f);
    fwrite(&r->samples, sizeof r->samples, 1, f);
    if (fclose(f)) { free(buf); return sc_fail(err, SC_EIO, "out of memory writing the checkpoint"); }
    sc_checkpoint_info info = {"softcon.feedback_search_checkpoint/1", "learn-feedback (method: search) after its last completed generation: continue it with --resume",
                               "/search", "the CMA-ES state, the best candidate and the history, softcon's own layout", "generations_done",
                               S->cma.gen, run->run_hash};
    int rc = sc_checkpoint_write(run->checkpoint, &info, buf, len, err);
    free(buf);
    return rc;
}

static int read_state(const sc_feedback_run *run, search_state *S, sc_feedback_result *r, sc_err *err)
{
    unsigned char *data;
    size_t n;
    int rc = sc_par_rank(run->par) == 0 ? sc_checkpoint_read(run->checkpoint, "/search", &data, &n, err) : SC_OK;
    rc = sc_par_share_bytes(run->par, rc, &data, &n, err);
    if (rc) return rc;
    FILE *f = fmemopen(data, n, "rb");
    if (!f) { free(data); return sc_fail(err, SC_EIO, "out of memory"); }
    int64_t hdr[2];
    int ok = fread(hdr, sizeof hdr, 1, f) == 1 && hdr[0] == 0x5343534541524331ll;
    if (ok && (uint64_t)hdr[1] != run->run_hash) rc = sc_fail(err, SC_EINPUT, "%s: made for other inputs (config, character, controller, seed or build differ)", run->checkpoint);
    int n_iter = 0;
    ok = ok && !rc && fread(S, sizeof *S, 1, f) == 1 && fread(&r->best_iteration, sizeof r->best_iteration, 1, f) == 1 &&
         fread(&n_iter, sizeof n_iter, 1, f) == 1 && n_iter >= 0 && n_iter <= SC_MAX_GENERATIONS &&
         fread(r->iter, sizeof r->iter[0], (size_t)n_iter, f) == (size_t)n_iter && fread(&r->wall_seconds, sizeof r->wall_seconds, 1, f) == 1 &&
         fread(&r->samples, sizeof r->samples, 1, f) == 1;
    fclose(f);
    free(data);
    if (rc) return rc;
    if (!ok || S->cma.gen != n_iter) return sc_fail(err, SC_EINPUT, "%s: damaged or truncated (or made by a learn-feedback of another method)", run->checkpoint);
    r->niter = n_iter;
    return SC_OK;
}

/* ---- s_j: the sampled open loop's states ---------------------------------------------------- */

typedef struct state_log {
    const sc_features *f;
    const sc_segment *seg;
    int nseg, next, fragments;
    double *sum;             /* [fragments * SC_FEATURES] */
    int *count;              /* [fragments] */
    const sc_policy *p;
    double max_tilt;
} state_log;

static void log_state(state_log *L, const sc_sim *s)
{
    double x[SC_FEATURES];
    sc_features_eval(L->f, s, x);
    int j = L->next % L->fragments;
    for (int k = 0; k < SC_FEATURES; k++) L->sum[j * SC_FEATURES + k] += x[k];
    L->count[j]++;
    L->next++;
}

static int log_hook(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    state_log *L = ctx;
    if (sc_policy_fallen(L->p, s, L->max_tilt)) return 1;
    if (L->next < L->nseg && s->step == L->seg[L->next].start_step) log_state(L, s);
    return 0;
}

/* The sampled open loop (every cycle with its own offsets and durations, as sample-openloop found
   them) replayed from the start state: s_j is the mean of its states at fragment j's starts over
   the cycles, a state on the walk rather than on one cycle's drift. */
static int open_loop_states(const sc_feedback_run *run, const sc_features *f, sc_policy *p, double *went, double *length, sc_err *err)
{
    const sc_openloop_cycle *ol = run->ol;
    int mf = p->nfrag, ncyc = (ol->nseg + mf - 1) / mf, rc;
    sc_cycle cy;
    sc_reference rep;
    if ((rc = sc_cycle_from_times(run->ref, ol->cycle.t0, ol->cycle.t1, &cy, err)) || (rc = sc_cycle_repeat(run->ref, &cy, ncyc, &rep, err))) return rc;
    sc_segment *seg = malloc(sizeof *seg * (size_t)ol->nseg);
    double *sum = calloc((size_t)mf * SC_FEATURES, sizeof(double));
    int *count = calloc((size_t)mf, sizeof(int));
    sc_sim *s = NULL;
    if (!seg || !sum || !count) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    long start = 0;
    for (int k = 0; k < ol->nseg; k++) {
        seg[k] = (sc_segment){ol->ref_t0[k], ol->ref_t1[k], start, ol->steps[k], ol->offsets + (size_t)k * run->dofs->n};
        start += ol->steps[k];
    }
    sc_segment_controller ctl = {run->m, run->dofs, rep.time, ol->base == SC_BASE_ID ? rep.target_quat : rep.local_quat, rep.n, seg, ol->nseg};
    if ((rc = sc_sim_create(run->m, run->sim_opts, &s, err)) || (rc = sc_policy_start(p, s, err))) goto done;
    state_log L = {f, seg, ol->nseg, 0, mf, sum, count, p, run->cfg->max_tilt};
    log_state(&L, s);
    sc_quat targets[SC_SIM_MAX_BONES];
    sc_rollout_result rr;
    sc_err step_err;
    rc = sc_rollout(s, sc_segment_source(&ctl), NULL, start, log_hook, &L, targets, &rr, &step_err);
    if (rc == SC_ENUMERIC) rc = SC_OK; /* the states before a blow-up still count */
    else if (rc) *err = step_err;
    *went = s->t;
    *length = start * s->o.dt;
    for (int j = 0; !rc && j < mf; j++) {
        if (!count[j]) {
            rc = sc_fail(err, SC_EINPUT, "the open-loop controller, replayed, falls at %.2f s, before fragment %d of its first cycle: there is no state to centre the feedback on",
                         s->t, j + 1);
            break;
        }
        for (int k = 0; k < SC_FEATURES; k++) p->s_bar[(size_t)j * SC_FEATURES + k] = sum[j * SC_FEATURES + k] / count[j];
    }
done:
    if (s) sc_sim_free(s);
    free(seg); free(sum); free(count);
    sc_reference_free(&rep);
    return rc;
}

/* ---- the search ----------------------------------------------------------------------------- */

int sc_feedback_search(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err)
{
    const sc_feedback_config *c = run->cfg;
    const sc_search_config *sc = &c->search;
    sc_features f;
    sc_policy base = {0};
    layout L = {0};
    scorer S = {0};
    search_state *st = calloc(1, sizeof *st);
    double *X = NULL, *Z = NULL, *score = NULL;
    sc_trial_result *res = NULL;
    int *order = NULL, *owner = NULL, rc;
    if (!st) return sc_fail(err, SC_EIO, "out of memory");
    if ((rc = sc_features_init(&f, run->m, err))) { free(st); return rc; }
    if ((rc = sc_policy_from_openloop(run->ol, run->ref, run->m, run->dofs, c, &base, err))) goto done;
    double went = 0, length = 0;
    if ((rc = open_loop_states(run, &f, &base, &went, &length, err))) goto done;
    long cyc = sc_policy_cycle_steps(&base);
    if ((rc = build_layout(&base, run->dofs, sc, &L, r, err)) || (rc = sc_policy_copy(&base, &S.work, err))) goto done;
    if (L.np > MAX_PARAMS) { rc = sc_fail(err, SC_EINPUT, "feedback.search: %d parameters, at most %d", L.np, MAX_PARAMS); goto done; }
    cma_init(&st->cma, L.np, sc->population, sc->sigma);
    st->best_score = -INFINITY;
    int lambda = st->cma.lambda, ntask = lambda * sc->rollouts;
    X = malloc(sizeof(double) * (size_t)lambda * L.np);
    Z = malloc(sizeof(double) * (size_t)lambda * L.np);
    score = malloc(sizeof(double) * (size_t)lambda);
    order = malloc(sizeof(int) * (size_t)lambda);
    res = malloc(sizeof *res * (size_t)ntask);
    owner = malloc(sizeof(int) * (size_t)ntask);
    if (!X || !Z || !score || !order || !res || !owner) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    S = (scorer){run, &L, &base, S.work, &f, X, cyc};
    if (run->resume && access(run->checkpoint, F_OK) == 0 && (rc = read_state(run, st, r, err))) goto done;
    if (st->cma.n != L.np || st->cma.lambda != lambda) { rc = sc_fail(err, SC_EINPUT, "%s: made for another search", run->checkpoint); goto done; }
    if (run->progress && sc_par_rank(run->par) == 0) {
        char line[512];
        snprintf(line, sizeof line, "search: the sampled open loop replayed went %.2f of %.2f s (s_j: its mean state per fragment); %d roles x (%d features%s) "
                 "= %d gains; CMA-ES, %d candidates x %d runs of %.1f s per generation",
                 went, length, L.nroles, sc->nfeat, sc->bias ? " + a bias" : "", L.np, lambda, sc->rollouts, sc->seconds);
        run->progress(run->progress_ctx, line);
    }
    double wall0 = sc_wall_time(), wall_before = r->wall_seconds;
    uint64_t seed = sc_hash_i64(run->seed, 0x5345415243480000ll);
    while (st->cma.gen < sc->generations) {
        int g = st->cma.gen, stopped = 0;
        for (int k = 0; k < lambda; k++) cma_sample(&st->cma, seed, k, Z + (size_t)k * L.np, X + (size_t)k * L.np);
        if ((rc = sc_par_map(run->par, ntask, sizeof *res, score_task, &S, run->stop, res, owner, &stopped, err))) break;
        if (stopped) { rc = sc_fail(err, SC_EINTERRUPTED, "stopped by a signal in generation %d; the search up to there is in %s", g + 1, run->checkpoint); break; }
        sc_learning_iteration *it = &r->iter[g];
        memset(it, 0, sizeof *it);
        double mean = 0;
        for (int k = 0; k < lambda; k++) {
            score[k] = 0;
            for (int q = 0; q < sc->rollouts; q++) score[k] += trial_score(&res[k * sc->rollouts + q], sc->seconds) / sc->rollouts;
            mean += score[k] / lambda;
            order[k] = k;
        }
        for (int a = 1; a < lambda; a++) /* best first; ties by index */
            for (int b = a; b > 0 && score[order[b]] > score[order[b - 1]]; b--) { int t = order[b]; order[b] = order[b - 1]; order[b - 1] = t; }
        int top = order[0];
        for (int q = 0; q < sc->rollouts; q++) {
            it->survived_s += res[top * sc->rollouts + q].survived / sc->rollouts;
            it->joint_error += res[top * sc->rollouts + q].joint_error / sc->rollouts;
        }
        it->score = score[top];
        it->mean_score = mean;
        it->sigma = st->cma.sigma;
        it->samples = ntask;
        r->samples += ntask;
        if (score[top] > st->best_score) {
            st->best_score = score[top];
            memcpy(st->best, X + (size_t)top * L.np, sizeof(double) * (size_t)L.np);
            r->best_iteration = g;
        }
        cma_update(&st->cma, Z, order);
        r->niter = st->cma.gen;
        r->wall_seconds = wall_before + (sc_wall_time() - wall0);
        if (run->progress && sc_par_rank(run->par) == 0) {
            char line[512];
            snprintf(line, sizeof line, "generation %d/%d: best candidate %.3f (went %.1f of %.1f s, joint error %.1f deg), mean %.3f, sigma %.3f; "
                     "best so far %.3f (generation %d)",
                     g + 1, sc->generations, score[top], it->survived_s, sc->seconds, it->joint_error * 180 / SC_PI, mean, st->cma.sigma,
                     st->best_score, r->best_iteration + 1);
            run->progress(run->progress_ctx, line);
        }
        if (sc_par_rank(run->par) == 0) rc = write_state(run, st, r, err);
        if (sc_par_any(run->par, rc != SC_OK)) { if (!rc) rc = sc_fail(err, SC_EIO, "stopped: rank 0 could not write the checkpoint"); break; }
    }
    if (rc) goto done;
    memcpy(r->theta, st->best, sizeof(double) * (size_t)L.np);
    apply_gains(&L, st->best, &base, &S.work);
    rc = sc_policy_copy(&S.work, &r->policy, err);
    r->role_of = L.role_of;
    L.role_of = NULL;
done:
    sc_policy_free(&base);
    sc_policy_free(&S.work);
    sc_features_free(&f);
    free(L.role_of);
    free(st); free(X); free(Z); free(score); free(order); free(res); free(owner);
    return rc;
}

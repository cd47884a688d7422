#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/controller.h"
#include "sampling/samcon.h"
#include "core/blob.h"
#include "motion/cycle.h"
#include "core/log.h"
#include "core/rng.h"
#include "io/checkpoint.h"
#include "par/par.h"

/* ---- elites ----------------------------------------------------------------------------- */

/* The elites of one segment (or the start state, as a level of one). */
typedef struct level {
    int n, ndof;
    int *sample, *parent, *attempt;
    long *end_step, *steps;
    double *cost, *path_cost, *terms, *scale, *offset, *aux;
    int naux;
    unsigned char **state; /* NULL entries (or NULL) outside the backtracking window */
    size_t *state_size;
    sc_samcon_segment stats;
} level;

static void level_free_states(level *l)
{
    if (l->state)
        for (int i = 0; i < l->n; i++) free(l->state[i]);
    free(l->state);
    free(l->state_size);
    l->state = NULL;
    l->state_size = NULL;
}

static void level_free(level *l)
{
    level_free_states(l);
    void *a[] = {l->sample, l->parent, l->attempt, l->end_step, l->steps, l->cost, l->path_cost, l->terms, l->scale, l->offset, l->aux};
    for (size_t i = 0; i < sizeof a / sizeof *a; i++) free(a[i]);
    memset(l, 0, sizeof *l);
}

static int level_alloc(level *l, int n, int ndof, int naux, sc_err *err)
{
    memset(l, 0, sizeof *l);
    l->n = n;
    l->ndof = ndof;
    l->naux = naux;
    size_t un = (size_t)(n > 0 ? n : 1);
    l->sample = calloc(un, sizeof(int));
    l->parent = calloc(un, sizeof(int));
    l->attempt = calloc(un, sizeof(int));
    l->end_step = calloc(un, sizeof(long));
    l->steps = calloc(un, sizeof(long));
    l->cost = calloc(un, sizeof(double));
    l->path_cost = calloc(un, sizeof(double));
    l->terms = calloc(un * SC_COST_TERMS, sizeof(double));
    l->scale = calloc(un, sizeof(double));
    l->offset = calloc(un * (size_t)(ndof > 0 ? ndof : 1), sizeof(double));
    l->aux = calloc(un * (size_t)(naux > 0 ? naux : 1), sizeof(double));
    l->state = calloc(un, sizeof *l->state);
    l->state_size = calloc(un, sizeof(size_t));
    if (!l->sample || !l->parent || !l->attempt || !l->end_step || !l->steps || !l->cost || !l->path_cost || !l->terms || !l->scale || !l->offset ||
        !l->aux || !l->state || !l->state_size) {
        level_free(l);
        return sc_fail(err, SC_EIO, "out of memory for %d elites", n);
    }
    return SC_OK;
}

/* ---- one sample ------------------------------------------------------------------------- */

typedef struct sample_result {
    double cost, path_cost, terms[SC_COST_TERMS], scale, seconds;
    int64_t failed, fail_step, steps, elite, state_bytes;
} sample_result;

struct segment_sampler;
/* What one thread simulates samples with: its simulation, buffers and segment controller. */
typedef struct sample_worker {
    const struct segment_sampler *sampler;
    sc_sim *sim;
    sc_quat *targets;
    unsigned char *scratch; /* a snapshot buffer of full capacity */
    sc_segment seg;
    sc_segment_controller ctrl;
} sample_worker;

/* What one rank needs to simulate samples: a worker per thread (sharing the tracker, the
   reference and the elites), and the attempt being sampled. */
typedef struct segment_sampler {
    const sc_samcon_run *run;
    const sc_samcon_config *cfg;
    const sc_model *m;
    int ndof, nseg;
    int nworkers;
    sample_worker *w;       /* [nworkers], one per thread of sc_par_map */
    sc_sim *sim;            /* thread 0's, for the work outside the map */
    unsigned char *scratch; /* thread 0's */
    sc_tracker tracker;     /* read only while sampling */
    size_t scratch_cap;
    /* the segment being sampled */
    int k, attempt;
    const level *parent;
    double ref_t0, ref_t1;
    unsigned char **pool; /* [N] end states of the samples this rank ran */
    size_t rsize;         /* a sample's record: sample_result, then ndof offsets and naux values */
} segment_sampler;

/* Sample i of segment k at this attempt: its own stream, and its time scale, the stream's first draw. */
static double draw_scale(const segment_sampler *sampler, int k, int attempt, int i, sc_rng *rng)
{
    const sc_samcon_config *c = sampler->cfg;
    sc_rng_init(rng, sampler->run->seed, (uint32_t)k, ((uint32_t)attempt << 20) | (uint32_t)i);
    return c->scale_min + sc_rng_uniform(rng) * (c->scale_max - c->scale_min);
}

/* Sample i of segment k at this attempt: its time scale and offsets about `center` (NULL: 0). */
static void draw_sample(const segment_sampler *sampler, int k, int attempt, int i, const double *center, double *scale, double *offset)
{
    const sc_samcon_config *c = sampler->cfg;
    sc_rng rng;
    *scale = draw_scale(sampler, k, attempt, i, &rng);
    for (int d = 0; d < sampler->ndof; d++) {
        double v = sc_rng_uniform(&rng);
        offset[d] = (center ? center[d] : 0) + (c->box[d] > 0 ? c->box[d] * (2 * v - 1) : 0);
    }
}

static long segment_steps(const segment_sampler *sampler, double scale)
{
    if (sampler->run->segment_steps) return sampler->run->segment_steps[sampler->k];
    long n = lround(scale * (sampler->ref_t1 - sampler->ref_t0) / sampler->sim->o.dt);
    return n < 1 ? 1 : n;
}

/* Sample i's steps, the map's cost of running it. */
static double sample_cost(const segment_sampler *sampler, int i)
{
    sc_rng rng;
    return (double)segment_steps(sampler, draw_scale(sampler, sampler->k, sampler->attempt, i, &rng));
}

static int failure_hook(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    const sample_worker *w = ctx;
    return sc_tracker_failure(&w->sampler->tracker, s, sc_segment_ref_time(&w->ctrl, s->step, NULL));
}

/* Sample i of the attempt (sc_par_map's task, on the thread's worker): its record in out, its end
   state kept in the pool (each task writes its own entry). */
static int sample_task(void *ctx, int thread, int i, void *out, sc_err *err)
{
    const segment_sampler *S = ctx;
    sample_worker *W = &S->w[thread];
    sample_result *res = out;
    double t0 = sc_wall_time();
    memset(out, 0, S->rsize);
    double *offset = (double *)(res + 1), *aux = offset + S->ndof, center[SC_MAX_DOFS];
    int e = i % S->parent->n;
    res->elite = e;
    int rc = sc_sim_snapshot_restore(W->sim, S->parent->state[e], S->parent->state_size[e], err);
    if (rc) return sc_err_prefix(err, "sample %d of segment %d: elite %d: ", i, S->k, e);
    if (S->run->guide) S->run->guide->center(S->run->guide->ctx, S->k, W->sim, center, aux);
    draw_sample(S, S->k, S->attempt, i, S->run->guide ? center : NULL, &res->scale, offset);
    res->steps = segment_steps(S, res->scale);
    W->seg = (sc_segment){S->ref_t0, S->ref_t1, S->parent->end_step[e], res->steps, offset};
    sc_rollout_result rr;
    sc_err step_err;
    rc = sc_rollout(W->sim, sc_segment_source(&W->ctrl), NULL, W->seg.start_step + res->steps, failure_hook, W, W->targets, &rr, &step_err);
    if (rc == SC_ENUMERIC) {
        res->failed = SC_FAIL_NUMERIC;
    } else if (rc) {
        *err = step_err;
        return rc;
    } else if (rr.stopped) {
        res->failed = rr.stopped;
    }
    res->fail_step = rr.steps;
    if (!res->failed && S->run->guide && S->run->guide->finish) S->run->guide->finish(S->run->guide->ctx, S->k, W->sim, aux);
    if (!res->failed) {
        res->cost = sc_tracker_cost(&S->tracker, W->sim, S->ref_t1, res->terms);
        res->path_cost = S->parent->path_cost[e] + res->cost;
        if (!isfinite(res->cost)) res->failed = SC_FAIL_NUMERIC;
    }
    if (!res->failed && S->cfg->max_cost > 0 && res->cost > S->cfg->max_cost) res->failed = SC_FAIL_COST;
    if (!res->failed) {
        size_t n = sc_sim_snapshot_save(W->sim, W->scratch, S->scratch_cap);
        S->pool[i] = malloc(n);
        if (!S->pool[i]) return sc_fail(err, SC_EIO, "out of memory keeping the end state of sample %d", i);
        memcpy(S->pool[i], W->scratch, n);
        res->state_bytes = (int64_t)n;
    }
    res->seconds = sc_wall_time() - t0;
    return SC_OK;
}

/* ---- selection -------------------------------------------------------------------------- */

static const sample_result *g_sort_results; /* qsort has no context argument; selection runs outside the map, on one thread */
static int g_sort_by_segment;
static double sort_key(int i) { return g_sort_by_segment ? g_sort_results[i].cost : g_sort_results[i].path_cost; }
static int by_cost(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    double ci = sort_key(i), cj = sort_key(j);
    if (ci < cj) return -1;
    if (ci > cj) return 1;
    return (i > j) - (i < j);
}

static void sort_results(const sample_result *res, int by_segment, int *idx, int n)
{
    g_sort_results = res;
    g_sort_by_segment = by_segment;
    qsort(idx, (size_t)n, sizeof *idx, by_cost);
}

/* Indices of the chosen elites in `chosen` (sorted by path cost, so elite 0 ends the cheapest
   path); returns their number. */
static int select_elites(const sc_samcon_config *c, const sample_result *res, int n, int *order, int *chosen)
{
    int m = 0, seg = c->elite_cost == SC_ELITE_BY_SEGMENT;
    for (int i = 0; i < n; i++)
        if (!res[i].failed) order[m++] = i;
    sort_results(res, seg, order, m);
    int k = c->elites, e = 0;
    if (m <= k || c->selection == SC_SELECT_GREEDY) {
        e = m < k ? m : k;
        memcpy(chosen, order, (size_t)e * sizeof *chosen);
    } else {
        /* Liu 2010: drop the worst 40 %, then pick elites whose costs spread from the best towards
           the worst kept at targets cmin + (cmax - cmin)(j / (k - 1))^6, each the nearest unused sample */
        int kept = (int)ceil(0.6 * m);
        if (kept < k) kept = k;
        double cmin = sort_key(order[0]), cmax = sort_key(order[kept - 1]);
        unsigned char *used = calloc((size_t)kept, 1);
        int lo = 0;
        for (int j = 0; j < k && used; j++) {
            double target = cmin + (cmax - cmin) * pow(k > 1 ? (double)j / (k - 1) : 0, 6);
            while (lo < kept && used[lo]) lo++;
            int best = -1;
            double bd = 1e300;
            for (int q = lo; q < kept; q++) {
                if (used[q]) continue;
                double d = fabs(sort_key(order[q]) - target);
                if (d < bd) {
                    bd = d;
                    best = q;
                }
                if (sort_key(order[q]) > target) break; /* sorted: later ones are further */
            }
            if (best < 0) break;
            used[best] = 1;
            chosen[e++] = order[best];
        }
        free(used);
    }
    sort_results(res, 0, chosen, e);
    return e;
}

/* ---- the search's state, serialized for checkpoints and for ranks that resume ------------ */

typedef struct search_state {
    int nseg, ndof, naux, k; /* k: the next segment to sample */
    level start;             /* the reference's first state, a level of one */
    level *lv;               /* [nseg] elites of every segment done */
    int *attempts, *retries; /* [nseg] */
    double *mult;            /* [nseg] sample count factor */
    sc_samcon_segment *acc;  /* [nseg] samples and failures over all attempts */
    long samples, numeric_failures;
    int backtracks;
    double wall_seconds, sample_seconds;
    double wall_start, wall_before; /* not saved: when this run started, and the seconds of the runs it resumes */
    sc_checkpoint_writer writer;    /* rank 0: the checkpoint being written */
} search_state;

static void segment_span(const sc_samcon_config *c, int j, int nseg, double t_first, double t_last, double *t0, double *t1);
static double median_of(double *v, int n);

/* the per-sample values a guide gathers (none without a guide) */
static int guide_naux(const sc_samcon_run *run) { return run->guide ? run->guide->naux : 0; }

#define BLOB_MAGIC    0x53434b5054303031ll /* "SCKPT001" */
#define SAMCON_SCHEMA "softcon.samcon_checkpoint/2"

static void put_level(sc_blob_writer *b, const level *l)
{
    sc_blob_put_i64(b, l->n);
    for (int i = 0; i < l->n; i++) {
        sc_blob_put_i64(b, l->sample[i]);
        sc_blob_put_i64(b, l->parent[i]);
        sc_blob_put_i64(b, l->attempt[i]);
        sc_blob_put_i64(b, l->end_step[i]);
        sc_blob_put_i64(b, l->steps[i]);
    }
    sc_blob_put(b, l->cost, 8 * (size_t)l->n);
    sc_blob_put(b, l->path_cost, 8 * (size_t)l->n);
    sc_blob_put(b, l->terms, 8 * (size_t)l->n * SC_COST_TERMS);
    sc_blob_put(b, l->scale, 8 * (size_t)l->n);
    sc_blob_put(b, l->offset, 8 * (size_t)l->n * (size_t)l->ndof);
    sc_blob_put(b, l->aux, 8 * (size_t)l->n * (size_t)l->naux);
    sc_blob_put(b, &l->stats, sizeof l->stats);
    int with_states = l->state && l->n > 0 && l->state[0];
    sc_blob_put_i64(b, with_states);
    if (with_states)
        for (int i = 0; i < l->n; i++) {
            sc_blob_put_i64(b, (int64_t)l->state_size[i]);
            sc_blob_put(b, l->state[i], l->state_size[i]);
        }
}

static int get_level(sc_blob_reader *r, level *l, int ndof, int naux, int max_elites, size_t max_state, sc_err *err)
{
    int64_t n = sc_blob_get_i64(r);
    if (r->bad || n < 1 || n > max_elites)
        return sc_fail(err, SC_EINPUT, "checkpoint: damaged elite list (%lld elites, at most %d)", (long long)n, max_elites);
    int rc = level_alloc(l, (int)n, ndof, naux, err);
    if (rc) return rc;
    for (int i = 0; i < l->n; i++) {
        l->sample[i] = (int)sc_blob_get_i64(r);
        l->parent[i] = (int)sc_blob_get_i64(r);
        l->attempt[i] = (int)sc_blob_get_i64(r);
        l->end_step[i] = (long)sc_blob_get_i64(r);
        l->steps[i] = (long)sc_blob_get_i64(r);
    }
    sc_blob_get(r, l->cost, 8 * (size_t)l->n);
    sc_blob_get(r, l->path_cost, 8 * (size_t)l->n);
    sc_blob_get(r, l->terms, 8 * (size_t)l->n * SC_COST_TERMS);
    sc_blob_get(r, l->scale, 8 * (size_t)l->n);
    sc_blob_get(r, l->offset, 8 * (size_t)l->n * (size_t)ndof);
    sc_blob_get(r, l->aux, 8 * (size_t)l->n * (size_t)naux);
    sc_blob_get(r, &l->stats, sizeof l->stats);
    int64_t with_states = sc_blob_get_i64(r);
    if (with_states != 0 && with_states != 1)
        return sc_fail(err, SC_EINPUT, "checkpoint: damaged elite list (states flag %lld)", (long long)with_states);
    if (with_states) {
        for (int i = 0; i < l->n && !r->bad; i++) {
            int64_t sz = sc_blob_get_i64(r);
            if (sz <= 0 || (uint64_t)sz > r->left || (uint64_t)sz > max_state) {
                r->bad = 1;
                break;
            }
            l->state[i] = malloc((size_t)sz);
            if (!l->state[i]) return sc_fail(err, SC_EIO, "out of memory reading elite states");
            l->state_size[i] = (size_t)sz;
            sc_blob_get(r, l->state[i], (size_t)sz);
        }
    } else {
        level_free_states(l);
    }
    return r->bad ? sc_fail(err, SC_EINPUT, "checkpoint: truncated elite list") : SC_OK;
}

static int serialize(const sc_samcon_run *run, const search_state *search, uint64_t run_hash, sc_blob_writer *b, sc_err *err)
{
    sc_blob_writer_init(b);
    sc_blob_put_i64(b, BLOB_MAGIC);
    sc_blob_put_i64(b, (int64_t)run_hash);
    sc_blob_put_i64(b, search->nseg);
    sc_blob_put_i64(b, search->ndof);
    sc_blob_put_i64(b, search->naux);
    sc_blob_put_i64(b, search->k);
    sc_blob_put_i64(b, search->samples);
    sc_blob_put_i64(b, search->numeric_failures);
    sc_blob_put_i64(b, search->backtracks);
    sc_blob_put_f64(b, search->wall_seconds);
    sc_blob_put_f64(b, search->sample_seconds);
    for (int j = 0; j < search->nseg; j++) {
        sc_blob_put_i64(b, search->attempts[j]);
        sc_blob_put_i64(b, search->retries[j]);
    }
    sc_blob_put(b, search->mult, 8 * (size_t)search->nseg);
    sc_blob_put(b, search->acc, sizeof *search->acc * (size_t)search->nseg);
    for (int j = 0; j < search->k; j++) put_level(b, &search->lv[j]);
    if (run->guide && run->guide->save_gathered) {
        unsigned char *g = NULL;
        size_t gn = 0;
        if (run->guide->save_gathered(run->guide->ctx, &g, &gn)) b->failed = 1;
        sc_blob_put_i64(b, (int64_t)gn);
        sc_blob_put(b, g, gn);
        free(g);
    }
    if (b->failed) {
        sc_blob_writer_free(b);
        return sc_fail(err, SC_EIO, "out of memory writing the checkpoint");
    }
    return SC_OK;
}

static int deserialize(const sc_samcon_run *run, search_state *search, uint64_t run_hash, size_t max_state, const unsigned char *p, size_t n,
                       sc_err *err)
{
    sc_blob_reader r;
    sc_blob_reader_init(&r, p, n);
    if (sc_blob_get_i64(&r) != BLOB_MAGIC) return sc_fail(err, SC_EINPUT, "checkpoint: not a sampler checkpoint");
    if ((uint64_t)sc_blob_get_i64(&r) != run_hash)
        return sc_fail(err, SC_EINPUT, "checkpoint: made for other inputs (config, character, reference, seed or build differ)");
    if (sc_blob_get_i64(&r) != search->nseg || sc_blob_get_i64(&r) != search->ndof || sc_blob_get_i64(&r) != search->naux)
        return sc_fail(err, SC_EINPUT, "checkpoint: made for another segmentation");
    int64_t k = sc_blob_get_i64(&r);
    if (k < 0 || k > search->nseg) return sc_fail(err, SC_EINPUT, "checkpoint: damaged (segment %lld)", (long long)k);
    search->k = (int)k;
    search->samples = sc_blob_get_i64(&r);
    search->numeric_failures = sc_blob_get_i64(&r);
    search->backtracks = (int)sc_blob_get_i64(&r);
    search->wall_seconds = sc_blob_get_f64(&r);
    search->sample_seconds = sc_blob_get_f64(&r);
    for (int j = 0; j < search->nseg; j++) {
        search->attempts[j] = (int)sc_blob_get_i64(&r);
        search->retries[j] = (int)sc_blob_get_i64(&r);
    }
    sc_blob_get(&r, search->mult, 8 * (size_t)search->nseg);
    sc_blob_get(&r, search->acc, sizeof *search->acc * (size_t)search->nseg);
    for (int j = 0; j < search->k; j++) {
        int rc = get_level(&r, &search->lv[j], search->ndof, search->naux, run->cfg->elites, max_state, err);
        if (rc) return rc;
    }
    if (run->guide && run->guide->restore_gathered) {
        int64_t gn = sc_blob_get_i64(&r);
        if (r.bad || gn < 0 || (size_t)gn > r.left || run->guide->restore_gathered(run->guide->ctx, r.p, (size_t)gn))
            return sc_fail(err, SC_EINPUT, "checkpoint: damaged (the gathered samples)");
        (void)sc_blob_take(&r, (size_t)gn);
    }
    if (r.bad || r.left) return sc_fail(err, SC_EINPUT, "checkpoint: damaged (%zu bytes unread)", r.left);
    return SC_OK;
}

/* async: written by a thread of rank 0 while every rank samples the next segment (its error
   comes with the next write or at the end); else now, after the one in flight. */
static int write_checkpoint(const sc_samcon_run *run, search_state *search, int async, sc_err *err)
{
    sc_blob_writer b;
    int rc = serialize(run, search, run->run_hash, &b, err);
    if (rc) return rc;
    sc_checkpoint_info info = {SAMCON_SCHEMA,  "sample-openloop's search after its last completed segment: continue it with --resume",
                               "/search",      "the search state (elites with their simulation snapshots, counters), softcon's own layout",
                               "next_segment", search->k,
                               run->run_hash};
    double t0 = sc_wall_time();
    if (async) {
        rc = sc_checkpoint_write_async(&search->writer, run->checkpoint, &info, b.p, b.n, err); /* takes b.p */
    } else {
        rc = sc_checkpoint_wait(&search->writer, err);
        if (!rc) rc = sc_checkpoint_write(run->checkpoint, &info, b.p, b.n, err);
        sc_blob_writer_free(&b);
    }
    sc_par_time_add(run->par, SC_PAR_CHECKPOINT, sc_wall_time() - t0);
    return rc;
}

/* The sample count of an attempt at segment k (never fewer than the elites). */
static int attempt_samples(const sc_samcon_config *c, const search_state *search, int k)
{
    int n = (int)lround(c->samples * search->mult[k]);
    return n < c->elites ? c->elites : n;
}

static int search_clock_ok(double s) { return isfinite(s) && s >= 0; }

/* The counters of a search read back, checked against one another and the config: what no run
   can have made is refused. */
static int check_counters(const sc_samcon_config *c, const search_state *search, sc_err *err)
{
    long samples = 0, numeric = 0, retries = 0;
    if (search->samples < 0 || search->numeric_failures < 0 || search->backtracks < 0 || !search_clock_ok(search->wall_seconds) ||
        !search_clock_ok(search->sample_seconds))
        return sc_fail(err, SC_EINPUT, "checkpoint: damaged counters (samples %ld, numeric failures %ld, backtracks %d, %g s, %g s)", search->samples,
                       search->numeric_failures, search->backtracks, search->wall_seconds, search->sample_seconds);
    for (int j = 0; j < search->nseg; j++) {
        const sc_samcon_segment *a = &search->acc[j];
        double m = search->mult[j];
        int legal = m == 1;
        for (int q = 1; q <= c->max_retries && !legal; q++) legal = m == fmax(1, pow(c->growth, q));
        if (!legal)
            return sc_fail(err, SC_EINPUT, "checkpoint: segment %d: sample multiplier %g is not 1 or a power of growth %g up to %d", j + 1, m,
                           c->growth, c->max_retries);
        if (search->retries[j] < 0 || search->retries[j] > c->max_retries + 1 || search->attempts[j] < search->retries[j] ||
            search->attempts[j] != a->attempts || (j < search->k && search->attempts[j] < 1))
            return sc_fail(err, SC_EINPUT, "checkpoint: segment %d: damaged attempts (%d, %d counted) or retries (%d)", j + 1, search->attempts[j],
                           a->attempts, search->retries[j]);
        long kinds = 0;
        for (int f = 0; f < SC_FAIL_KINDS; f++) {
            if (a->fail_kind[f] < 0 || a->fail_kind[f] > a->samples)
                return sc_fail(err, SC_EINPUT, "checkpoint: segment %d: damaged failure counts", j + 1);
            kinds += a->fail_kind[f];
        }
        if (a->samples < 0 || kinds != a->samples || a->failures != a->samples - a->fail_kind[SC_FAIL_NONE] ||
            (long)a->samples < (long)a->attempts * c->elites)
            return sc_fail(err, SC_EINPUT, "checkpoint: segment %d: damaged sample counts (%d samples, %d failed)", j + 1, a->samples, a->failures);
        samples += a->samples;
        numeric += a->fail_kind[SC_FAIL_NUMERIC];
        retries += search->retries[j];
    }
    if (samples != search->samples || numeric != search->numeric_failures || (search->backtracks != retries && search->backtracks != retries - 1))
        return sc_fail(err, SC_EINPUT,
                       "checkpoint: damaged totals (%ld samples, %ld numeric failures, %d backtracks; the segments say %ld, %ld, %ld)",
                       search->samples, search->numeric_failures, search->backtracks, samples, numeric, retries);
    return SC_OK;
}

/* Segment k's elites read back, each checked against its parent and, where the sampler can
   draw it again, against its own sample: index, attempt, steps, costs, scale, offsets and
   statistics exactly as the run made them; its states restored once (a damaged snapshot is
   refused here, not by a sample). */
static int check_level(const sc_samcon_run *run, segment_sampler *sampler, const search_state *search, int k, double t_first, double t_last,
                       sc_err *err)
{
    const sc_samcon_config *c = run->cfg;
    const level *l = &search->lv[k], *p = k ? &search->lv[k - 1] : &search->start;
    int nsamp = attempt_samples(c, search, k), ndof = search->ndof;
    sampler->k = k;
    segment_span(c, k, search->nseg, t_first, t_last, &sampler->ref_t0, &sampler->ref_t1);
    double scale_sum = 0, span = sampler->ref_t1 - sampler->ref_t0;
    for (int e = 0; e < l->n; e++) {
        int i = l->sample[e], pe = l->parent[e];
        if (i < 0 || i >= nsamp || pe < 0 || pe >= p->n || pe != i % p->n)
            return sc_fail(err, SC_EINPUT, "checkpoint: segment %d, elite %d: sample %d of %d, parent %d of %d", k + 1, e, i, nsamp, pe, p->n);
        if (l->attempt[e] != search->attempts[k] - 1)
            return sc_fail(err, SC_EINPUT, "checkpoint: segment %d, elite %d: attempt %d, the segment's last was %d", k + 1, e, l->attempt[e],
                           search->attempts[k] - 1);
        double scale, off[SC_MAX_DOFS];
        draw_sample(sampler, k, l->attempt[e], i, NULL, &scale, off);
        long steps = segment_steps(sampler, scale);
        if (l->steps[e] != steps || l->end_step[e] != p->end_step[pe] + steps || l->scale[e] != steps * sampler->sim->o.dt / span)
            return sc_fail(err, SC_EINPUT, "checkpoint: segment %d, elite %d: %ld steps ending at step %ld (scale %g), its sample has %ld", k + 1, e,
                           l->steps[e], l->end_step[e], l->scale[e], steps);
        double cost = l->cost[e];
        if (!isfinite(cost) || cost < 0 || (c->max_cost > 0 && cost > c->max_cost) || l->path_cost[e] != p->path_cost[pe] + cost ||
            (e > 0 && l->path_cost[e] < l->path_cost[e - 1]))
            return sc_fail(err, SC_EINPUT, "checkpoint: segment %d, elite %d: cost %g, path cost %g (its parent's %g)", k + 1, e, cost,
                           l->path_cost[e], p->path_cost[pe]);
        for (int t = 0; t < SC_COST_TERMS; t++)
            if (!isfinite(l->terms[SC_COST_TERMS * e + t]) || l->terms[SC_COST_TERMS * e + t] < 0)
                return sc_fail(err, SC_EINPUT, "checkpoint: segment %d, elite %d: cost term %d is %g", k + 1, e, t, l->terms[SC_COST_TERMS * e + t]);
        for (int d = 0; d < ndof; d++) {
            double o = l->offset[(size_t)e * ndof + d];
            /* a guided sample's centre is the policy's: its offsets are only bounded */
            if (run->guide ? !(fabs(o) <= 1e3) : o != off[d])
                return sc_fail(err, SC_EINPUT, "checkpoint: segment %d, elite %d: offset %d is %g%s", k + 1, e, d, o,
                               run->guide ? "" : ", not its sample's");
        }
        for (int a = 0; a < search->naux; a++)
            if (!isfinite(l->aux[(size_t)e * search->naux + a]))
                return sc_fail(err, SC_EINPUT, "checkpoint: segment %d, elite %d: value %d is not finite", k + 1, e, a);
        scale_sum += l->scale[e];
    }
    double *pc = l->path_cost;
    if (l->stats.best_elite != pc[0] || l->stats.median_elite != median_of(pc, l->n) || l->stats.mean_scale_elites != scale_sum / l->n)
        return sc_fail(err, SC_EINPUT, "checkpoint: segment %d: damaged elite statistics", k + 1);
    if (!l->state && k == search->k - 1) return sc_fail(err, SC_EINPUT, "checkpoint: segment %d: the elites' states are missing", k + 1);
    for (int e = 0; l->state && e < l->n; e++) {
        int rc = sc_sim_snapshot_restore(sampler->sim, l->state[e], l->state_size[e], err);
        if (rc) return sc_err_prefix(err, "checkpoint: segment %d, elite %d: ", k + 1, e);
    }
    return SC_OK;
}

/* A sealed checkpoint's search (the seal already checked) into search, checked through. */
static int decode_search(const sc_samcon_run *run, segment_sampler *sampler, search_state *search, const unsigned char *data, size_t n, sc_err *err)
{
    if (n < SC_CHECKPOINT_HEADER) return sc_fail(err, SC_EINPUT, "checkpoint: no header");
    double t_first, t_last;
    int nseg;
    int rc = sc_samcon_span(run->cfg, run->ref, NULL, &t_first, &t_last, &nseg, err);
    if (!rc) rc = deserialize(run, search, run->run_hash, sampler->scratch_cap, data + SC_CHECKPOINT_HEADER, n - SC_CHECKPOINT_HEADER, err);
    if (!rc) rc = check_counters(run->cfg, search, err);
    for (int j = 0; !rc && j < search->k; j++) rc = check_level(run, sampler, search, j, t_first, t_last, err);
    return rc;
}

/* Rank 0 reads the checkpoint (its seal checked) and every rank gets the search from it, checked
   through. Every error names the checkpoint. */
static int read_checkpoint(const sc_samcon_run *run, search_state *search, segment_sampler *sampler, sc_err *err)
{
    unsigned char *data;
    size_t n;
    int rc = sc_par_rank(run->par) == 0 ? sc_checkpoint_read(run->checkpoint, "/search", SAMCON_SCHEMA, run->run_hash, &data, &n, err) : SC_OK;
    rc = sc_par_share_bytes(run->par, rc, &data, &n, err);
    if (rc) return rc;
    rc = decode_search(run, sampler, search, data, n, err);
    free(data);
    if (rc) sc_err_prefix(err, "%s: ", run->checkpoint);
    return rc;
}

/* ---- the search ------------------------------------------------------------------------- */

static void search_free(search_state *search)
{
    level_free(&search->start);
    if (search->lv)
        for (int j = 0; j < search->nseg; j++) level_free(&search->lv[j]);
    free(search->lv);
    free(search->attempts);
    free(search->retries);
    free(search->mult);
    free(search->acc);
}

static int search_alloc(search_state *search, int nseg, int ndof, int naux, sc_err *err)
{
    search->nseg = nseg;
    search->ndof = ndof;
    search->naux = naux;
    search->lv = calloc((size_t)nseg, sizeof *search->lv);
    search->attempts = calloc((size_t)nseg, sizeof(int));
    search->retries = calloc((size_t)nseg, sizeof(int));
    search->mult = calloc((size_t)nseg, sizeof(double));
    search->acc = calloc((size_t)nseg, sizeof *search->acc);
    if (!search->lv || !search->attempts || !search->retries || !search->mult || !search->acc) {
        search_free(search);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    for (int j = 0; j < nseg; j++) search->mult[j] = 1;
    return SC_OK;
}

/* The seconds this run and the runs it resumes have taken. */
static void search_clock(search_state *search) { search->wall_seconds = search->wall_before + (sc_wall_time() - search->wall_start); }

int sc_samcon_start_state(const sc_samcon_run *run, sc_sim *s, sc_err *err)
{
    const sc_model *m = run->m;
    double root[3], root_vel[3], w[3 * SC_SIM_MAX_BONES];
    sc_quat q[SC_SIM_MAX_BONES];
    int rc = sc_reference_state_at(run->ref, m, run->ref->time[0] + run->cfg->start, root, q, root_vel, w, err);
    if (rc) return rc;
    sc_sim_set_pose(s, root, q, root_vel, w);
    return sc_sim_settle(s, err);
}

int sc_samcon_span(const sc_samcon_config *c, const sc_reference *ref, const char *ref_name, double *t_first, double *t_last, int *nseg, sc_err *err)
{
    const char *name = ref_name ? ref_name : "the reference";
    double clip = ref->time[ref->n - 1] - ref->time[0], slack = ref->n > 1 ? ref->time[1] - ref->time[0] : 0;
    if (c->start >= clip)
        return sc_fail(err, SC_EINPUT, "%s: sampling.start %g s is not before the end of %s (%g s long)", c->start_where, c->start, name, clip);
    if (c->end > clip + slack) /* like start: never clamped silently */
        return sc_fail(err, SC_EINPUT, "%s: sampling.end %g s is past the end of %s (%g s long; 0 tracks to its end)", c->end_where, c->end, name,
                       clip);
    *t_first = ref->time[0] + c->start;
    *t_last = c->end > 0 && c->end < clip ? ref->time[0] + c->end : ref->time[ref->n - 1];
    if (!(*t_last - *t_first > 1e-9))
        return sc_fail(err, SC_EINPUT, "%s: sampling.end %g s is not after sampling.start %g s: nothing of %s to track", c->end_where, c->end,
                       c->start, name);
    if (c->segment > *t_last - *t_first + 1e-9)
        return sc_fail(err, SC_EINPUT,
                       "%s: sampling.segment %g s is longer than the %g s of %s tracked (sampling.start to end): a shorter segment "
                       "or a longer reference is needed",
                       c->segment_where, c->segment, *t_last - *t_first, name);
    *nseg = (int)ceil((*t_last - *t_first) / c->segment - 1e-6);
    return SC_OK;
}

/* Segment j's span of reference time (the last one ends at t_last). */
static void segment_span(const sc_samcon_config *c, int j, int nseg, double t_first, double t_last, double *t0, double *t1)
{
    *t0 = t_first + j * c->segment;
    *t1 = j == nseg - 1 ? t_last : t_first + (j + 1) * c->segment;
}

static void sampler_free(segment_sampler *sampler)
{
    sc_tracker_free(&sampler->tracker);
    for (int t = 0; sampler->w && t < sampler->nworkers; t++) {
        sc_sim_free(sampler->w[t].sim);
        free(sampler->w[t].scratch);
        free(sampler->w[t].targets);
    }
    free(sampler->w);
}

/* The sampler's tracker and a worker for each of `threads` threads: its simulation and buffers,
   its segment controller playing the base targets. */
static int sampler_init(segment_sampler *sampler, const sc_samcon_run *run, int nseg, int threads, sc_err *err)
{
    const sc_samcon_config *c = run->cfg;
    const sc_reference *ref = run->ref;
    sampler->run = run;
    sampler->cfg = c;
    sampler->m = run->m;
    sampler->ndof = run->dofs->n;
    sampler->nseg = nseg;
    int rc = sc_tracker_init(&sampler->tracker, run->m, ref, &c->tracker, err);
    if (rc) return rc;
    if (!(sampler->w = calloc((size_t)threads, sizeof *sampler->w))) return sc_fail(err, SC_EIO, "out of memory");
    sampler->nworkers = threads;
    for (int t = 0; t < threads; t++) {
        sample_worker *w = &sampler->w[t];
        w->sampler = sampler;
        if ((rc = sc_sim_create(run->m, run->sim_opts, &w->sim, err))) return rc;
        sampler->scratch_cap = sc_sim_snapshot_capacity(w->sim);
        w->scratch = malloc(sampler->scratch_cap);
        w->targets = malloc(sizeof(sc_quat) * (size_t)run->m->nbones);
        if (!w->scratch || !w->targets) return sc_fail(err, SC_EIO, "out of memory");
        w->ctrl =
            (sc_segment_controller){run->m, run->dofs, ref->time, c->base == SC_BASE_ID ? ref->target_quat : ref->local_quat, ref->n, &w->seg, 1};
    }
    sampler->sim = sampler->w[0].sim;
    sampler->scratch = sampler->w[0].scratch;
    /* a sample's record: sample_result, then ndof offsets and naux values */
    sampler->rsize = sizeof(sample_result) + sizeof(double) * (size_t)(sampler->ndof + guide_naux(run));
    return SC_OK;
}

/* The start: the reference's first state, at step 0, as a level of one; then the checkpoint's
   search when resuming. */
static int search_start(const sc_samcon_run *run, search_state *search, segment_sampler *sampler, sc_err *err)
{
    int rc;
    if ((rc = level_alloc(&search->start, 1, search->ndof, search->naux, err)) || (rc = sc_samcon_start_state(run, sampler->sim, err))) return rc;
    search->start.state_size[0] = sc_sim_snapshot_save(sampler->sim, sampler->scratch, sampler->scratch_cap);
    if (!(search->start.state[0] = malloc(search->start.state_size[0]))) return sc_fail(err, SC_EIO, "out of memory");
    memcpy(search->start.state[0], sampler->scratch, search->start.state_size[0]);
    if (run->resume && (rc = read_checkpoint(run, search, sampler, err))) return rc;
    search->wall_before = search->wall_seconds;
    return SC_OK;
}

static double median_of(double *v, int n)
{
    /* v is sorted (elites are kept in path-cost order) */
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0;
}

/* Segment k's elites from the samples: records from the results, states from their owners. */
static int make_level(segment_sampler *sampler, search_state *search, const sample_result *res, const double *extra, const int *owner,
                      const int *chosen, int ne, sc_err *err)
{
    level *l = &search->lv[sampler->k];
    int naux = search->naux, ndof = search->ndof, rc = level_alloc(l, ne, ndof, naux, err);
    if (rc) return rc;
    sc_par *par = sampler->run->par;
    int *root = malloc(sizeof(int) * (size_t)(ne ? ne : 1)), no_memory = !root;
    if (sc_par_any(par, no_memory)) {
        free(root);
        return sc_fail(err, SC_EIO, "out of memory for %d elites", ne);
    }
    double scale_sum = 0;
    for (int e = 0; e < ne; e++) {
        int i = chosen[e];
        const sample_result *sample = &res[i];
        l->sample[e] = i;
        l->parent[e] = (int)sample->elite;
        l->attempt[e] = sampler->attempt;
        l->steps[e] = sample->steps;
        l->end_step[e] = sampler->parent->end_step[sample->elite] + sample->steps;
        l->cost[e] = sample->cost;
        l->path_cost[e] = sample->path_cost;
        memcpy(l->terms + SC_COST_TERMS * e, sample->terms, sizeof sample->terms);
        l->scale[e] = sample->steps * sampler->sim->o.dt / (sampler->ref_t1 - sampler->ref_t0);
        scale_sum += l->scale[e];
        const double *x = extra + (size_t)i * (size_t)(ndof + naux);
        memcpy(l->offset + (size_t)e * ndof, x, sizeof(double) * (size_t)ndof);
        memcpy(l->aux + (size_t)e * naux, x + ndof, sizeof(double) * (size_t)naux);
        l->state_size[e] = (size_t)sample->state_bytes;
        root[e] = owner[i];
        if (sc_par_rank(par) == owner[i]) {
            l->state[e] = sampler->pool[i];
            sampler->pool[i] = NULL;
        } else if (!(l->state[e] = malloc(l->state_size[e]))) {
            no_memory = 1;
        }
    }
    if (sc_par_any(par, no_memory)) rc = sc_fail(err, SC_EIO, "out of memory receiving elite states");
    else rc = sc_par_bcast_many(par, ne, (void *const *)l->state, l->state_size, root, err);
    free(root);
    if (rc) return rc;
    l->stats.best_elite = ne ? l->path_cost[0] : 0;
    l->stats.median_elite = median_of(l->path_cost, ne);
    l->stats.mean_scale_elites = ne ? scale_sum / ne : 0;
    return SC_OK;
}

/* The progress line of the attempt just made, to run->monitor.progress on rank 0 (S: the search). */
static void report_segment(const sc_samcon_run *run, const search_state *S, const segment_sampler *sampler, int n, const sample_result *res, int ne,
                           double seconds)
{
    int k = sampler->k;
    if (!run->monitor.progress || sc_par_rank(run->par) != 0) return;
    long kinds[SC_FAIL_KINDS] = {0};
    for (int i = 0; i < n; i++) kinds[res[i].failed]++;
    char line[512];
    double t0 = run->ref->time[0];
    int len = snprintf(line, sizeof line, "segment %d/%d [%.2f-%.2f s] attempt %d: %d samples, %.0f%% failed", k + 1, S->nseg, sampler->ref_t0 - t0,
                       sampler->ref_t1 - t0, S->attempts[k], n, 100.0 * (n - kinds[0]) / n);
    if (n - kinds[0] > 0) {
        len += snprintf(line + len, sizeof line - (size_t)len, " (");
        for (int f = 1; f < SC_FAIL_KINDS; f++)
            if (kinds[f])
                len += snprintf(line + len, sizeof line - (size_t)len, "%s%s %ld", line[len - 1] == '(' ? "" : ", ", sc_failure_names[f], kinds[f]);
        len += snprintf(line + len, sizeof line - (size_t)len, ")");
    }
    if (ne) {
        const level *l = &S->lv[k];
        len += snprintf(line + len, sizeof line - (size_t)len, "; elites: best %.3f, median %.3f, scale %.3f", l->stats.best_elite,
                        l->stats.median_elite, l->stats.mean_scale_elites);
    } else {
        len += snprintf(line + len, sizeof line - (size_t)len, "; no sample survived");
    }
    double rate = seconds > 0 ? n / seconds : 0, left = 0;
    int remaining = S->nseg - k - 1;
    if (rate > 0) left = remaining * run->cfg->samples / rate;
    snprintf(line + len, sizeof line - (size_t)len, "; %.1f samples/s, %.0f s elapsed, ETA %.0f s", rate, S->wall_seconds, left);
    run->monitor.progress(run->monitor.ctx, S->k, S->nseg, line);
}

/* ---- one attempt at a segment ------------------------------------------------------------ */

/* The buffers of one attempt of n samples. */
typedef struct attempt {
    int n;
    sample_result *res;
    int *owner, *order, *chosen; /* the rank that simulated each sample; the selection's scratch */
    unsigned char *records;      /* [n] sc_par_map's records */
    double *extra;               /* [n * (ndof + naux)] each sample's offsets and aux values */
    double *cost;                /* [n] each sample's steps: the order the map runs them in */
} attempt;

static void attempt_free(attempt *a, segment_sampler *sampler)
{
    if (sampler->pool)
        for (int i = 0; i < a->n; i++) free(sampler->pool[i]);
    free(sampler->pool);
    sampler->pool = NULL;
    free(a->records);
    free(a->extra);
    free(a->cost);
    free(a->res);
    free(a->owner);
    free(a->order);
    free(a->chosen);
}

/* The next attempt at segment search->k: its span, the elites it starts from, and its samples
   (grown after failures, never fewer than the elites). */
static int attempt_begin(attempt *a, search_state *search, segment_sampler *sampler, double t_first, double t_last, sc_err *err)
{
    const sc_samcon_config *c = sampler->cfg;
    int k = search->k;
    sampler->k = k;
    sampler->attempt = search->attempts[k]++;
    sampler->parent = k ? &search->lv[k - 1] : &search->start;
    segment_span(c, k, search->nseg, t_first, t_last, &sampler->ref_t0, &sampler->ref_t1);
    int n = (int)lround(c->samples * search->mult[k]);
    if (n < c->elites) n = c->elites;
    a->n = n;
    a->res = calloc((size_t)n, sizeof *a->res);
    a->owner = calloc((size_t)n, sizeof(int));
    a->order = malloc((size_t)n * sizeof(int));
    a->chosen = malloc((size_t)n * sizeof(int));
    a->records = malloc((size_t)n * sampler->rsize);
    a->cost = malloc((size_t)n * sizeof(double));
    a->extra = malloc((size_t)n * (size_t)(search->ndof + search->naux + 1) * sizeof(double));
    sampler->pool = calloc((size_t)n, sizeof *sampler->pool);
    if (!a->res || !a->owner || !a->order || !a->chosen || !sampler->pool || !a->records || !a->extra || !a->cost)
        return sc_fail(err, SC_EIO, "out of memory for %d samples", n);
    return SC_OK;
}

/* Simulates the attempt's samples, spread over the ranks, and unpacks every rank's records. When
   a signal stopped it, the attempt did not happen: the search is checkpointed and
   SC_EINTERRUPTED returned. */
static int attempt_run(const sc_samcon_run *run, search_state *search, segment_sampler *sampler, attempt *a, sc_err *err)
{
    int n = a->n, k = sampler->k, stopped = 0;
    size_t nextra = (size_t)(search->ndof + search->naux);
    for (int i = 0; i < n; i++) a->cost[i] = sample_cost(sampler, i);
    int rc = sc_par_map_weighted(run->par, n, a->cost, sampler->rsize, sample_task, sampler, run->monitor.stop, a->records, a->owner, &stopped, err);
    for (int i = 0; !rc && !stopped && i < n; i++) { /* a record: the result, then offsets and aux */
        memcpy(&a->res[i], a->records + (size_t)i * sampler->rsize, sizeof *a->res);
        memcpy(a->extra + (size_t)i * nextra, a->records + (size_t)i * sampler->rsize + sizeof *a->res, sizeof(double) * nextra);
    }
    if (!rc && stopped) {
        search->attempts[k]--; /* this attempt did not happen */
        search_clock(search);
        if (run->checkpoint && sc_par_rank(run->par) == 0) rc = write_checkpoint(run, search, 0, err);
        if (!rc)
            rc = sc_fail(err, SC_EINTERRUPTED, "stopped by a signal before segment %d/%d; the search up to there is in %s", k + 1, search->nseg,
                         run->checkpoint ? run->checkpoint : "(no checkpoint)");
    }
    return rc;
}

/* Every sample of the attempt to on_samples (learn-feedback's model fitting). */
static int attempt_hand_over(const sc_samcon_run *run, int k, int n, const double *extra, const sample_result *res, sc_err *err)
{
    int rc = SC_OK;
    unsigned char *failed = malloc((size_t)n);
    if (!failed) rc = sc_fail(err, SC_EIO, "out of memory");
    for (int i = 0; !rc && i < n; i++) failed[i] = res[i].failed != 0;
    if (!rc) run->guide->on_samples(run->guide->ctx, k, n, extra, failed);
    free(failed);
    return rc;
}

/* The attempt's samples and failures, added to the search's counts. */
static void attempt_count(search_state *search, int k, const sample_result *res, int n)
{
    search->samples += n;
    search->acc[k].samples += n;
    for (int i = 0; i < n; i++) {
        search->acc[k].fail_kind[res[i].failed]++;
        search->acc[k].failures += res[i].failed != 0;
        search->numeric_failures += res[i].failed == SC_FAIL_NUMERIC;
        search->sample_seconds += res[i].seconds;
    }
    search->acc[k].attempts++;
}

/* No sample of segment k survived: back up `backtrack` segments (to one whose parent states are
   still held) and sample them again with more samples. Returns 1 when segment k's retries are
   spent: the search gives up. */
static int back_up(search_state *search, const sc_samcon_config *c, int k)
{
    if (search->retries[k]++ >= c->max_retries) return 1;
    int back = k < c->backtrack ? k : c->backtrack;
    while (back > 0 && k - back - 1 >= 0 && !search->lv[k - back - 1].state) back--;
    /* the retried segments get growth^(retries of the one that failed): failures do not compound */
    double mult = pow(c->growth, search->retries[k]);
    for (int j = k - back; j <= k; j++) search->mult[j] = fmax(search->mult[j], mult);
    for (int j = k - back; j < k; j++) level_free(&search->lv[j]);
    search->k = k - back;
    search->backtracks++;
    return 0;
}

/* The attempt's elites become segment k's level and the search goes on to the next segment, or
   it backs up; then the progress line and the checkpoint. */
static int attempt_conclude(const sc_samcon_run *run, search_state *search, segment_sampler *sampler, attempt *a, double t0, int *give_up,
                            sc_err *err)
{
    const sc_samcon_config *c = run->cfg;
    int k = sampler->k, n = a->n, rc = SC_OK;
    int ne = select_elites(c, a->res, n, a->order, a->chosen);
    attempt_count(search, k, a->res, n);
    if (ne > 0) {
        level_free(&search->lv[k]);
        rc = make_level(sampler, search, a->res, a->extra, a->owner, a->chosen, ne, err);
        /* elite states outside the backtracking window are no longer needed */
        if (!rc && k - c->backtrack - 1 >= 0) level_free_states(&search->lv[k - c->backtrack - 1]);
        search->k = k + 1;
    } else {
        *give_up = back_up(search, c, k);
    }
    search_clock(search);
    report_segment(run, search, sampler, n, a->res, ne, sc_wall_time() - t0);
    if (!rc && run->checkpoint && sc_par_rank(run->par) == 0) rc = write_checkpoint(run, search, 1, err);
    return rc;
}

/* One attempt at the next segment. */
static int sample_segment(const sc_samcon_run *run, search_state *search, segment_sampler *sampler, double t_first, double t_last, int *give_up,
                          sc_err *err)
{
    attempt a = {0};
    int rc = attempt_begin(&a, search, sampler, t_first, t_last, err);
    if (!rc) {
        double t0 = sc_wall_time();
        rc = attempt_run(run, search, sampler, &a, err);
        if (!rc && run->guide && run->guide->on_samples) rc = attempt_hand_over(run, sampler->k, a.n, a.extra, a.res, err);
        if (!rc) rc = attempt_conclude(run, search, sampler, &a, t0, give_up, err);
    }
    attempt_free(&a, sampler);
    return rc;
}

/* ---- the timeline ------------------------------------------------------------------------ */

/* Every rank's phase seconds since the last mark, as a row of r's timeline (rank 0 keeps them). */
static int timeline_mark(const sc_samcon_run *run, sc_par_clock *since, int segment, sc_samcon_result *r, sc_err *err)
{
    int ranks = sc_par_size(run->par), rank0 = sc_par_rank(run->par) == 0;
    size_t row = (size_t)ranks * SC_PAR_PHASES;
    if (rank0) {
        double *t = realloc(r->timeline, (r->ntimeline + 1) * row * sizeof(double));
        int *g = t ? realloc(r->timeline_segment, (r->ntimeline + 1) * sizeof(int)) : NULL;
        if (t) r->timeline = t;
        if (g) r->timeline_segment = g;
        if (!t || !g) return sc_fail(err, SC_EIO, "out of memory for the timeline");
    }
    int rc = sc_par_timeline_mark(run->par, since, rank0 ? r->timeline + r->ntimeline * row : NULL, err);
    if (!rc && rank0) r->timeline_segment[r->ntimeline++] = segment;
    return rc;
}

/* ---- the result ------------------------------------------------------------------------- */

/* Every segment's elites (last attempt), in path-cost order, each marked kept when an elite of the
   last segment reached descends from it. */
static void collect_elites(const search_state *search, int depth, sc_samcon_result *r)
{
    size_t total = 0;
    for (int j = 0; j < depth; j++) total += (size_t)search->lv[j].n;
    size_t at = total; /* where level j's elites start, from the last level back: its elites are kept, then their parents */
    for (int j = depth - 1; j >= 0; j--) {
        const level *l = &search->lv[j];
        at -= (size_t)l->n;
        for (int i = 0; i < l->n; i++) {
            if (j == depth - 1) r->elite_kept[at + i] = 1;
            if (j > 0 && r->elite_kept[at + i]) r->elite_kept[at - (size_t)search->lv[j - 1].n + (size_t)l->parent[i]] = 1;
        }
    }
    total = 0;
    for (int j = 0; j < depth; j++) {
        const level *l = &search->lv[j];
        r->nelites[j] = l->n;
        memcpy(r->elite_offset + total * (size_t)search->ndof, l->offset, sizeof(double) * (size_t)l->n * (size_t)search->ndof);
        memcpy(r->elite_aux + total * (size_t)search->naux, l->aux, sizeof(double) * (size_t)l->n * (size_t)search->naux);
        total += (size_t)l->n;
    }
}

/* The cheapest path, traced back from the best elite of the deepest level through the parents. */
static void trace_cheapest_path(const sc_samcon_config *c, const search_state *search, int depth, double t_first, double t_last, sc_samcon_result *r)
{
    int e = 0;
    for (int j = depth - 1; j >= 0; j--) {
        const level *l = &search->lv[j];
        sc_samcon_segment *g = &r->seg[j];
        *g = search->acc[j];
        g->best_elite = l->stats.best_elite;
        g->median_elite = l->stats.median_elite;
        g->mean_scale_elites = l->stats.mean_scale_elites;
        segment_span(c, j, search->nseg, t_first, t_last, &g->ref_t0, &g->ref_t1);
        g->steps = l->steps[e];
        g->start_step = l->end_step[e] - l->steps[e];
        g->scale = l->scale[e];
        g->cost = l->cost[e];
        g->path_cost = l->path_cost[e];
        memcpy(g->terms, l->terms + SC_COST_TERMS * e, sizeof g->terms);
        memcpy(r->offset + (size_t)j * search->ndof, l->offset + (size_t)e * search->ndof, sizeof(double) * (size_t)search->ndof);
        e = l->parent[e];
    }
}

/* The result of the search, up to the deepest level reached. */
static int collect_result(const sc_samcon_run *run, const search_state *search, double t_first, double t_last, sc_samcon_result *r, sc_err *err)
{
    int depth = search->k, ndof = search->ndof, naux = search->naux;
    r->nseg_total = search->nseg;
    r->nseg = depth;
    r->completed = depth == search->nseg;
    r->samples = search->samples;
    r->numeric_failures = search->numeric_failures;
    r->wall_seconds = search->wall_seconds;
    r->sample_seconds = search->sample_seconds;
    r->ranks = sc_par_size(run->par);
    r->threads = sc_par_threads(run->par);
    r->backtracks = search->backtracks;
    r->seg = calloc((size_t)(depth ? depth : 1), sizeof *r->seg);
    r->offset = calloc((size_t)(depth ? depth : 1) * (size_t)(ndof ? ndof : 1), sizeof(double));
    if (!r->seg || !r->offset) return sc_fail(err, SC_EIO, "out of memory");
    size_t total = 0;
    for (int j = 0; j < depth; j++) total += (size_t)search->lv[j].n;
    r->nelites = calloc((size_t)(depth ? depth : 1), sizeof(int));
    r->elite_offset = malloc((total ? total : 1) * (size_t)(ndof ? ndof : 1) * sizeof(double));
    r->elite_aux = malloc((total ? total : 1) * (size_t)(naux ? naux : 1) * sizeof(double));
    r->elite_kept = calloc(total ? total : 1, 1);
    if (!r->nelites || !r->elite_offset || !r->elite_aux || !r->elite_kept) return sc_fail(err, SC_EIO, "out of memory");
    collect_elites(search, depth, r);
    trace_cheapest_path(run->cfg, search, depth, t_first, t_last, r);
    return SC_OK;
}

int sc_samcon(const sc_samcon_run *run, sc_samcon_result *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    double t_first, t_last;
    int nseg;
    int rc = sc_samcon_span(run->cfg, run->ref, NULL, &t_first, &t_last, &nseg, err);
    if (rc) return rc;
    search_state search = {0};
    segment_sampler sampler = {0};
    sc_par_clock clock;
    sc_par_clock_read(run->par, 0, &clock);
    search.wall_start = sc_wall_time();
    if ((rc = search_alloc(&search, nseg, run->dofs->n, guide_naux(run), err))) return rc;
    if ((rc = sampler_init(&sampler, run, nseg, sc_par_threads(run->par), err)) || (rc = search_start(run, &search, &sampler, err))) goto done;
    if ((rc = timeline_mark(run, &clock, -1, r, err))) goto done;
    int give_up = 0, interrupted = 0;
    sc_err stop_msg;
    while (search.k < search.nseg && !give_up) {
        int k = search.k;
        rc = sample_segment(run, &search, &sampler, t_first, t_last, &give_up, err);
        int mark_rc = timeline_mark(run, &clock, k, r, err);
        if (!rc) rc = mark_rc;
        /* an error one rank met alone (a checkpoint rank 0 could not write) stops every rank */
        int elsewhere = sc_par_any(run->par, rc != SC_OK && rc != SC_EINTERRUPTED);
        if (rc == SC_EINTERRUPTED && !elsewhere) { /* every rank stops together: the path so far is the result */
            stop_msg = *err;
            interrupted = 1;
            rc = SC_OK;
            break;
        }
        if (rc) goto done;
        if (elsewhere) {
            rc = sc_fail(err, SC_EIO, "stopped: another rank failed (its message says why)");
            goto done;
        }
    }
    /* the last checkpoint on disk before the result: its error stops every rank */
    if (sc_par_rank(run->par) == 0) rc = sc_checkpoint_wait(&search.writer, err);
    if (sc_par_any(run->par, rc != SC_OK)) {
        if (!rc) rc = sc_fail(err, SC_EIO, "stopped: another rank failed (its message says why)");
        goto done;
    }
    rc = collect_result(run, &search, t_first, t_last, r, err);
    if (!rc && sc_par_rank(run->par) == 0 && !(r->peak_memory = malloc(sizeof(double) * (size_t)r->ranks)))
        rc = sc_fail(err, SC_EIO, "out of memory");
    if (!rc) rc = sc_par_gather(run->par, sc_peak_memory_bytes(), r->peak_memory, err);
    if (!rc && interrupted) {
        r->interrupted = 1;
        *err = stop_msg;
        rc = SC_EINTERRUPTED;
    }
done:
    if (search.writer.thread) {
        sc_err late;
        sc_checkpoint_wait(&search.writer, &late);
    }
    sampler_free(&sampler);
    search_free(&search);
    if (rc && rc != SC_EINTERRUPTED) sc_samcon_result_free(r);
    return rc;
}

int sc_samcon_checkpoint_check(const sc_samcon_run *run, const unsigned char *blob, size_t n, sc_err *err)
{
    double t_first, t_last;
    int nseg;
    int rc = sc_samcon_span(run->cfg, run->ref, NULL, &t_first, &t_last, &nseg, err);
    if (rc) return rc;
    const unsigned char *payload;
    size_t np;
    if ((rc = sc_checkpoint_unseal(blob, n, SAMCON_SCHEMA, run->run_hash, &payload, &np, err))) return rc;
    search_state search = {0};
    segment_sampler sampler = {0};
    if ((rc = search_alloc(&search, nseg, run->dofs->n, guide_naux(run), err))) return rc;
    sc_samcon_run quiet = *run;
    quiet.resume = 0;
    if (!(rc = sampler_init(&sampler, &quiet, nseg, 1, err)) && !(rc = search_start(&quiet, &search, &sampler, err)))
        rc = decode_search(run, &sampler, &search, blob, n, err);
    sampler_free(&sampler);
    search_free(&search);
    return rc;
}

void sc_samcon_result_free(sc_samcon_result *r)
{
    free(r->timeline);
    free(r->timeline_segment);
    free(r->peak_memory);
    free(r->seg);
    free(r->offset);
    free(r->nelites);
    free(r->elite_offset);
    free(r->elite_aux);
    free(r->elite_kept);
    memset(r, 0, sizeof *r);
}

int sc_samcon_cycle_setup(const sc_reference *ref, sc_samcon_config *cfg, sc_cycle *cycle, sc_reference *repeated, int *fragments, sc_err *err)
{
    *fragments = 0;
    if (!cfg->cycle) return SC_OK;
    int rc = cfg->cycle == SC_CYCLE_AUTO ? sc_cycle_find(ref, cfg->cycle_period[0], cfg->cycle_period[1], cycle, err)
                                         : sc_cycle_from_times(ref, cfg->cycle_span[0], cfg->cycle_span[1], cycle, err);
    if (rc || (rc = sc_cycle_repeat(ref, cycle, cfg->cycles, repeated, err))) return rc;
    double period = cycle->t1 - cycle->t0;
    *fragments = (int)lround(period / cfg->segment);
    if (*fragments < 1) *fragments = 1;
    cfg->segment = period / *fragments;
    return SC_OK;
}

void sc_samcon_controller(const sc_samcon_run *run, const sc_samcon_result *r, sc_segment *seg, sc_segment_controller *c)
{
    for (int j = 0; j < r->nseg; j++)
        seg[j] = (sc_segment){r->seg[j].ref_t0, r->seg[j].ref_t1, r->seg[j].start_step, r->seg[j].steps, r->offset + (size_t)j * run->dofs->n};
    const sc_reference *ref = run->ref;
    *c = (sc_segment_controller){run->m, run->dofs, ref->time, run->cfg->base == SC_BASE_ID ? ref->target_quat : ref->local_quat,
                                 ref->n, seg,       r->nseg};
}

/* ---- replay ----------------------------------------------------------------------------- */

typedef struct replay_ctx {
    const sc_samcon_result *r;
    const sc_tracker *tracker;
    int next;     /* next segment end to check */
    int mismatch; /* 1 + the segment whose cost differs */
    double got;
    sc_rollout_hook hook;
    void *hook_ctx;
} replay_ctx;

static int replay_hook(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    replay_ctx *q = ctx;
    const sc_samcon_segment *g = q->next < q->r->nseg ? &q->r->seg[q->next] : NULL;
    if (g && s->step == g->start_step + g->steps) {
        double terms[SC_COST_TERMS], c = sc_tracker_cost(q->tracker, s, g->ref_t1, terms);
        if (c != g->cost && !q->mismatch) {
            q->mismatch = q->next + 1;
            q->got = c;
        }
        q->next++;
    }
    return q->hook ? q->hook(q->hook_ctx, s, targets, push) : 0;
}

int sc_samcon_replay(const sc_samcon_run *run, const sc_samcon_result *r, sc_sim *s, sc_rollout_hook hook, void *hook_ctx, sc_err *err)
{
    sc_tracker tracker;
    sc_segment *seg = malloc(sizeof *seg * (size_t)(r->nseg ? r->nseg : 1));
    sc_quat *targets = malloc(sizeof *targets * (size_t)run->m->nbones);
    int rc = !seg || !targets ? sc_fail(err, SC_EIO, "out of memory") : sc_tracker_init(&tracker, run->m, run->ref, &run->cfg->tracker, err);
    if (rc) {
        free(seg);
        free(targets);
        return rc;
    }
    sc_segment_controller c;
    sc_samcon_controller(run, r, seg, &c);
    replay_ctx q = {r, &tracker, 0, 0, 0, hook, hook_ctx};
    long end = r->nseg ? r->seg[r->nseg - 1].start_step + r->seg[r->nseg - 1].steps : 0;
    sc_rollout_result rr;
    if (!(rc = sc_samcon_start_state(run, s, err)) && r->nseg > 0)
        rc = sc_rollout(s, sc_segment_source(&c), NULL, end, replay_hook, &q, targets, &rr, err);
    if (!rc && q.mismatch)
        rc = sc_fail(err, SC_ENUMERIC,
                     "the replay of the path differs from the sampling at segment %d (cost %.17g, sampled %.17g): "
                     "the simulation did not repeat itself",
                     q.mismatch, q.got, r->seg[q.mismatch - 1].cost);
    sc_tracker_free(&tracker);
    free(seg);
    free(targets);
    return rc;
}

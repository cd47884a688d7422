#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/controller.h"
#include "sampling/samcon.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/rng.h"
#include "io/config.h"
#include "io/h5.h"
#include "io/checkpoint.h"
#include "par/par.h"

/* ---- configuration ---------------------------------------------------------------------- */

/* default half-widths (rad) per joint class (segments.h), about the joint frame's x (flexion for
   a character facing +z), y (twist) and z */
static const double class_box[SC_JOINT_CLASSES][3] = {
    {0.5, 0.1, 0.2}, {0.4, 0, 0}, {0.4, 0.1, 0.2}, {0.2, 0.1, 0.1}, {0.2, 0.2, 0.2}, {0, 0, 0}};

/* A box: one number (every axis of a ball joint, or a hinge's angle) or [x, y, z] (ball only). */
static int read_box(sc_cfg_node *v, int hinge, double out[3], sc_err *err)
{
    char w[256];
    if (sc_cfg_is_scalar(v)) {
        double x;
        int rc = sc_cfg_scalar_double(v, &x, err);
        if (rc) return rc;
        out[0] = out[1] = out[2] = x;
    } else if (sc_cfg_is_seq(v) && sc_cfg_len(v) == 3 && !hinge) {
        for (int k = 0; k < 3; k++) {
            int rc = sc_cfg_scalar_double(sc_cfg_at(v, k), &out[k], err);
            if (rc) return rc;
        }
    } else {
        return sc_fail(err, SC_EINPUT, "%s: a box is %s (radians)", sc_cfg_where(v, w, sizeof w),
                       hinge ? "one half-width (a hinge)" : "one half-width or [x, y, z]");
    }
    for (int k = 0; k < 3; k++)
        if (!(out[k] >= 0 && out[k] <= SC_PI))
            return sc_fail(err, SC_EINPUT, "%s: box half-width %g is outside [0, pi]", sc_cfg_where(v, w, sizeof w), out[k]);
    return SC_OK;
}

int sc_samcon_read_config(sc_cfg *cfg, const sc_model *m, const sc_control_dofs *dofs, sc_samcon_config *c, sc_err *err)
{
    sc_cfg_node *root = sc_cfg_root(cfg), *s, *boxes, *joints, *cost, *fail;
    char w[256];
    long n;
    int rc;
    memset(c, 0, sizeof *c);
    sc_tracker_default_opts(&c->tracker);
    static const char *const selections[] = {"greedy", "spread"}, *const bases[] = {"id", "reference"},
                             *const elite_costs[] = {"path", "segment"};
#define TRY(x) if ((rc = (x))) return rc
    TRY(sc_cfg_section(root, "sampling", &s, err));
    TRY(sc_cfg_double_range(s, "segment", 0.1, 0.005, 10, &c->segment, err));
    TRY(sc_cfg_int(s, "samples", 1000, 1, 1000000, &n, err));
    c->samples = (int)n;
    TRY(sc_cfg_int(s, "elites", 100, 1, 100000, &n, err));
    c->elites = (int)n;
    if (c->elites > c->samples)
        return sc_fail(err, SC_EINPUT, "%s: sampling.elites = %d is more than sampling.samples = %d", sc_cfg_where(sc_cfg_get(s, "elites"), w, sizeof w),
                       c->elites, c->samples);
    TRY(sc_cfg_enum(s, "selection", selections, 2, SC_SELECT_GREEDY, &c->selection, err));
    TRY(sc_cfg_enum(s, "elite_cost", elite_costs, 2, SC_ELITE_BY_PATH, &c->elite_cost, err));
    TRY(sc_cfg_enum(s, "initial", bases, 2, SC_BASE_ID, &c->base, err));
    TRY(sc_cfg_bool(s, "time_scaling", 1, &c->time_scaling, err));
    TRY(sc_cfg_double_range(s, "time_scale_min", 0.8, 0.1, 10, &c->scale_min, err));
    TRY(sc_cfg_double_range(s, "time_scale_max", 1.25, 0.1, 10, &c->scale_max, err));
    if (c->scale_min > c->scale_max)
        return sc_fail(err, SC_EINPUT, "%s: sampling.time_scale_min = %g is above time_scale_max = %g",
                       sc_cfg_where(sc_cfg_get(s, "time_scale_min"), w, sizeof w), c->scale_min, c->scale_max);
    if (!c->time_scaling) c->scale_min = c->scale_max = 1;
    TRY(sc_cfg_double_range(s, "start", 0, 0, 1e5, &c->start, err));
    TRY(sc_cfg_double_range(s, "end", 0, 0, 1e5, &c->end, err));
    TRY(sc_cfg_int(s, "backtrack", 2, 0, 1000, &n, err));
    c->backtrack = (int)n;
    TRY(sc_cfg_int(s, "max_retries", 4, 0, 1000, &n, err));
    c->max_retries = (int)n;
    TRY(sc_cfg_double_range(s, "growth", 2, 1, 100, &c->growth, err));
    TRY(sc_cfg_double_range(s, "max_cost", 0, 0, 1e12, &c->max_cost, err));
    sc_cfg_node *cyc = sc_cfg_get(s, "cycle");
    if (!cyc || (sc_cfg_is_scalar(cyc) && !strcmp(sc_cfg_scalar(cyc), "none"))) {
        c->cycle = SC_CYCLE_NONE;
        if (!cyc) TRY(sc_cfg_string(s, "cycle", "none", w, sizeof w, err));
    } else if (sc_cfg_is_scalar(cyc) && !strcmp(sc_cfg_scalar(cyc), "auto")) {
        c->cycle = SC_CYCLE_AUTO;
    } else if (sc_cfg_is_seq(cyc) && sc_cfg_len(cyc) == 2) {
        c->cycle = SC_CYCLE_GIVEN;
        TRY(sc_cfg_vec_range(s, "cycle", 2, NULL, 0, 1e5, c->cycle_span, err));
        if (!(c->cycle_span[1] > c->cycle_span[0] && c->cycle_span[0] >= 0))
            return sc_fail(err, SC_EINPUT, "%s: sampling.cycle [%g, %g] is not a span of the reference (s)", sc_cfg_where(cyc, w, sizeof w),
                           c->cycle_span[0], c->cycle_span[1]);
    } else {
        return sc_fail(err, SC_EINPUT, "%s: sampling.cycle is none, auto or [t0, t1] (s of the reference)", sc_cfg_where(cyc, w, sizeof w));
    }
    double period_def[2] = {0.4, 2.0};
    TRY(sc_cfg_vec_range(s, "cycle_period", 2, period_def, 0, 1e4, c->cycle_period, err));
    if (!(c->cycle_period[0] > 0 && c->cycle_period[1] > c->cycle_period[0]))
        return sc_fail(err, SC_EINPUT, "%s: sampling.cycle_period [%g, %g] is not a range of periods (s)",
                       sc_cfg_where(sc_cfg_get(s, "cycle_period"), w, sizeof w), c->cycle_period[0], c->cycle_period[1]);
    TRY(sc_cfg_int(s, "cycles", 1, 1, 10000, &n, err));
    c->cycles = (int)n;
    if (c->cycle && (c->start > 0 || c->end > 0))
        return sc_fail(err, SC_EINPUT, "%s: sampling.start and end do not apply with a cycle (the cycle sets the span)", sc_cfg_where(cyc, w, sizeof w));

    /* offset boxes: class defaults, then the config's classes, then per joint */
    double cls[SC_JOINT_CLASSES][3];
    memcpy(cls, class_box, sizeof cls);
    TRY(sc_cfg_section(s, "boxes", &boxes, err));
    for (int i = 0; i < sc_cfg_len(boxes); i++) {
        const char *key = sc_cfg_key_at(boxes, i);
        int k = 0;
        while (k < SC_JOINT_CLASSES && strcmp(sc_joint_class_names[k], key)) k++;
        if (k == SC_JOINT_CLASSES)
            return sc_fail(err, SC_EINPUT, "%s: sampling.boxes has no joint class '%s' (classes: hips, knees, ankles, spine, shoulders, "
                           "others; single joints go under sampling.joints)", sc_cfg_where(sc_cfg_at(boxes, i), w, sizeof w), key);
        TRY(read_box(sc_cfg_at(boxes, i), 0, cls[k], err));
    }
    for (int k = 0; k < SC_JOINT_CLASSES; k++) (void)sc_cfg_get(boxes, sc_joint_class_names[k]);
    for (int d = 0; d < dofs->n; d++) {
        const double *b = cls[sc_joint_class(m->bone_name[dofs->bone[d]])];
        c->box[d] = dofs->axis[d] < 0 ? b[0] : b[dofs->axis[d]];
    }
    TRY(sc_cfg_section(s, "joints", &joints, err));
    for (int i = 0; i < sc_cfg_len(joints); i++) {
        const char *key = sc_cfg_key_at(joints, i);
        int b = sc_model_bone_index(m, key);
        if (b < 0 || dofs->first[b] < 0)
            return sc_fail(err, SC_EINPUT, "%s: sampling.joints names '%s', which is not a joint of the character%s",
                           sc_cfg_where(sc_cfg_at(joints, i), w, sizeof w), key, b == 0 ? " (the root is never sampled)" : "");
        double box[3];
        int hinge = m->joint_type[b] == SC_JOINT_HINGE;
        TRY(read_box(sc_cfg_at(joints, i), hinge, box, err));
        for (int k = 0; k < (hinge ? 1 : 3); k++) c->box[dofs->first[b] + k] = box[k];
    }

    TRY(sc_cfg_section(s, "cost", &cost, err));
    static const char *const frames[] = {"world", "heading"};
    TRY(sc_cfg_enum(cost, "frame", frames, 2, SC_COST_FRAME_WORLD, &c->tracker.frame, err));
    for (int i = 0; i < SC_COST_TERMS; i++)
        TRY(sc_cfg_double_range(cost, sc_cost_term_names[i], c->tracker.weights[i], 0, 1e6, &c->tracker.weights[i], err));
    TRY(sc_cfg_section(s, "failure", &fail, err));
    double tilt_deg;
    TRY(sc_cfg_double_range(fail, "min_root_height", c->tracker.min_root_height, 0, 1, &c->tracker.min_root_height, err));
    TRY(sc_cfg_double_range(fail, "max_tilt", 40, 1, 180, &tilt_deg, err));
    c->tracker.max_tilt = tilt_deg * SC_PI / 180;
    sc_cfg_node *allowed = sc_cfg_get(fail, "allowed_contacts");
    if (!allowed || (sc_cfg_is_scalar(allowed) && !strcmp(sc_cfg_scalar(allowed), "reference"))) {
        c->tracker.allowed_from_reference = 1;
        if (!allowed) {
            char def[32] = "reference";
            TRY(sc_cfg_string(fail, "allowed_contacts", def, def, sizeof def, err));
        }
    } else if (sc_cfg_is_seq(allowed)) {
        c->tracker.allowed_from_reference = 0;
        for (int i = 0; i < sc_cfg_len(allowed); i++) {
            const char *name = sc_cfg_scalar(sc_cfg_at(allowed, i));
            int b = name ? sc_model_bone_index(m, name) : -1;
            if (b < 0)
                return sc_fail(err, SC_EINPUT, "%s: sampling.failure.allowed_contacts names '%s', which is not a bone of the character",
                               sc_cfg_where(sc_cfg_at(allowed, i), w, sizeof w), name ? name : "?");
            c->tracker.allowed[b] = 1;
        }
    } else {
        return sc_fail(err, SC_EINPUT, "%s: sampling.failure.allowed_contacts is 'reference' (the bones the reference has on the ground) "
                       "or a list of bone names", sc_cfg_where(allowed, w, sizeof w));
    }
#undef TRY
    return SC_OK;
}

/* ---- elites ----------------------------------------------------------------------------- */

/* The elites of one segment (or the start state, as a level of one). */
typedef struct level {
    int n, ndof;
    int *sample, *parent, *attempt;
    long *end_step, *steps;
    double *cost, *path_cost, *terms, *scale, *offset, *aux;
    int naux;
    unsigned char **state;  /* NULL entries (or NULL) outside the backtracking window */
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
    if (!l->sample || !l->parent || !l->attempt || !l->end_step || !l->steps || !l->cost || !l->path_cost || !l->terms || !l->scale ||
        !l->offset || !l->aux || !l->state || !l->state_size) {
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

typedef struct sampler {
    const sc_samcon_run *run;
    const sc_samcon_config *cfg;
    const sc_model *m;
    int ndof, nseg;
    sc_sim *sim;
    sc_tracker tracker;
    sc_quat *targets;
    unsigned char *scratch;  /* a snapshot buffer of full capacity */
    size_t scratch_cap;
    /* the segment being sampled */
    int k, attempt;
    const level *parent;
    double ref_t0, ref_t1;
    unsigned char **pool;    /* [N] end states of the samples this rank ran */
    size_t rsize;            /* a sample's record: sample_result, then ndof offsets and naux values */
    sc_segment seg;
    sc_segment_controller ctrl;
} sampler;

/* Sample i of segment k at this attempt: its time scale and offsets about `center` (NULL: 0),
   from its own stream. */
static void draw_sample(const sampler *S, int k, int attempt, int i, const double *center, double *scale, double *offset)
{
    const sc_samcon_config *c = S->cfg;
    sc_rng r;
    sc_rng_init(&r, S->run->seed, (uint32_t)k, ((uint32_t)attempt << 20) | (uint32_t)i);
    double u = sc_rng_uniform(&r);
    *scale = c->scale_min + u * (c->scale_max - c->scale_min);
    for (int d = 0; d < S->ndof; d++) {
        double v = sc_rng_uniform(&r);
        offset[d] = (center ? center[d] : 0) + (c->box[d] > 0 ? c->box[d] * (2 * v - 1) : 0);
    }
}

static long segment_steps(const sampler *S, double scale)
{
    if (S->run->segment_steps) return S->run->segment_steps[S->k];
    long n = lround(scale * (S->ref_t1 - S->ref_t0) / S->sim->o.dt);
    return n < 1 ? 1 : n;
}

static int failure_hook(void *ctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    const sampler *S = ctx;
    return sc_tracker_failure(&S->tracker, s, sc_segment_ref_time(&S->ctrl, s->step, NULL));
}

static int sample_task(void *ctx, int i, void *out, sc_err *err)
{
    sampler *S = ctx;
    sample_result *res = out;
    double t0 = sc_wall_time();
    memset(out, 0, S->rsize);
    double *offset = (double *)(res + 1), *aux = offset + S->ndof, center[SC_MAX_DOFS];
    int e = i % S->parent->n;
    res->elite = e;
    int rc = sc_sim_snapshot_restore(S->sim, S->parent->state[e], S->parent->state_size[e], err);
    if (rc) return sc_err_prefix(err, "sample %d of segment %d: elite %d: ", i, S->k, e);
    if (S->run->guide) S->run->guide->center(S->run->guide->ctx, S->k, S->sim, center, aux);
    draw_sample(S, S->k, S->attempt, i, S->run->guide ? center : NULL, &res->scale, offset);
    res->steps = segment_steps(S, res->scale);
    S->seg = (sc_segment){S->ref_t0, S->ref_t1, S->parent->end_step[e], res->steps, offset};
    sc_rollout_result rr;
    sc_err step_err;
    rc = sc_rollout(S->sim, sc_segment_source(&S->ctrl), NULL, S->seg.start_step + res->steps, failure_hook, S, S->targets, &rr, &step_err);
    if (rc == SC_ENUMERIC) {
        res->failed = SC_FAIL_NUMERIC;
    } else if (rc) {
        *err = step_err;
        return rc;
    } else if (rr.stopped) {
        res->failed = rr.stopped;
    }
    res->fail_step = rr.steps;
    if (!res->failed && S->run->guide && S->run->guide->finish) S->run->guide->finish(S->run->guide->ctx, S->k, S->sim, aux);
    if (!res->failed) {
        res->cost = sc_tracker_cost(&S->tracker, S->sim, S->ref_t1, res->terms);
        res->path_cost = S->parent->path_cost[e] + res->cost;
        if (!isfinite(res->cost)) res->failed = SC_FAIL_NUMERIC;
    }
    if (!res->failed && S->cfg->max_cost > 0 && res->cost > S->cfg->max_cost) res->failed = SC_FAIL_COST;
    if (!res->failed) {
        size_t n = sc_sim_snapshot_save(S->sim, S->scratch, S->scratch_cap);
        S->pool[i] = malloc(n);
        if (!S->pool[i]) return sc_fail(err, SC_EIO, "out of memory keeping the end state of sample %d", i);
        memcpy(S->pool[i], S->scratch, n);
        res->state_bytes = (int64_t)n;
    }
    res->seconds = sc_wall_time() - t0;
    return SC_OK;
}

/* ---- selection -------------------------------------------------------------------------- */

static const sample_result *g_sort_results; /* qsort has no context argument; the sampler is single-threaded */
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
                if (d < bd) { bd = d; best = q; }
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

typedef struct search {
    int nseg, ndof, naux, k;    /* k: the next segment to sample */
    level start;                /* the reference's first state, a level of one */
    level *lv;                  /* [nseg] elites of every segment done */
    int *attempts, *retries;    /* [nseg] */
    double *mult;               /* [nseg] sample count factor */
    sc_samcon_segment *acc;     /* [nseg] samples and failures over all attempts */
    long samples, numeric_failures;
    int backtracks;
    double wall_seconds, sample_seconds;
} search;

typedef struct blob { unsigned char *p; size_t n, cap; int oom; } blob;
static void bput(blob *b, const void *v, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 1 << 16;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) { b->oom = 1; return; }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, v, n);
    b->n += n;
}
static void bput_i(blob *b, int64_t v) { bput(b, &v, 8); }
typedef struct bread { const unsigned char *p; size_t left; int bad; } bread;
static void bget(bread *r, void *v, size_t n)
{
    if (r->bad || r->left < n) { r->bad = 1; memset(v, 0, n); return; }
    memcpy(v, r->p, n);
    r->p += n;
    r->left -= n;
}
static int64_t bget_i(bread *r) { int64_t v; bget(r, &v, 8); return v; }

#define BLOB_MAGIC 0x53434b5054303031ll /* "SCKPT001" */

static void put_level(blob *b, const level *l)
{
    bput_i(b, l->n);
    for (int i = 0; i < l->n; i++) {
        bput_i(b, l->sample[i]); bput_i(b, l->parent[i]); bput_i(b, l->attempt[i]); bput_i(b, l->end_step[i]); bput_i(b, l->steps[i]);
    }
    bput(b, l->cost, 8 * (size_t)l->n);
    bput(b, l->path_cost, 8 * (size_t)l->n);
    bput(b, l->terms, 8 * (size_t)l->n * SC_COST_TERMS);
    bput(b, l->scale, 8 * (size_t)l->n);
    bput(b, l->offset, 8 * (size_t)l->n * (size_t)l->ndof);
    bput(b, l->aux, 8 * (size_t)l->n * (size_t)l->naux);
    bput(b, &l->stats, sizeof l->stats);
    int with_states = l->state && l->n > 0 && l->state[0];
    bput_i(b, with_states);
    if (with_states)
        for (int i = 0; i < l->n; i++) {
            bput_i(b, (int64_t)l->state_size[i]);
            bput(b, l->state[i], l->state_size[i]);
        }
}

static int get_level(bread *r, level *l, int ndof, int naux, sc_err *err)
{
    int64_t n = bget_i(r);
    if (r->bad || n < 0 || n > 10000000) return sc_fail(err, SC_EINPUT, "checkpoint: damaged elite list");
    int rc = level_alloc(l, (int)n, ndof, naux, err);
    if (rc) return rc;
    for (int i = 0; i < l->n; i++) {
        l->sample[i] = (int)bget_i(r); l->parent[i] = (int)bget_i(r); l->attempt[i] = (int)bget_i(r);
        l->end_step[i] = (long)bget_i(r); l->steps[i] = (long)bget_i(r);
    }
    bget(r, l->cost, 8 * (size_t)l->n);
    bget(r, l->path_cost, 8 * (size_t)l->n);
    bget(r, l->terms, 8 * (size_t)l->n * SC_COST_TERMS);
    bget(r, l->scale, 8 * (size_t)l->n);
    bget(r, l->offset, 8 * (size_t)l->n * (size_t)ndof);
    bget(r, l->aux, 8 * (size_t)l->n * (size_t)naux);
    bget(r, &l->stats, sizeof l->stats);
    if (bget_i(r)) {
        for (int i = 0; i < l->n && !r->bad; i++) {
            int64_t sz = bget_i(r);
            if (sz <= 0 || (uint64_t)sz > r->left) { r->bad = 1; break; }
            l->state[i] = malloc((size_t)sz);
            if (!l->state[i]) return sc_fail(err, SC_EIO, "out of memory reading elite states");
            l->state_size[i] = (size_t)sz;
            bget(r, l->state[i], (size_t)sz);
        }
    } else {
        level_free_states(l);
    }
    return r->bad ? sc_fail(err, SC_EINPUT, "checkpoint: truncated elite list") : SC_OK;
}

static int serialize(const sc_samcon_run *run, const search *S, uint64_t run_hash, blob *b, sc_err *err)
{
    memset(b, 0, sizeof *b);
    bput_i(b, BLOB_MAGIC);
    bput_i(b, (int64_t)run_hash);
    bput_i(b, S->nseg); bput_i(b, S->ndof); bput_i(b, S->naux); bput_i(b, S->k);
    bput_i(b, S->samples); bput_i(b, S->numeric_failures); bput_i(b, S->backtracks);
    bput(b, &S->wall_seconds, 8);
    bput(b, &S->sample_seconds, 8);
    for (int j = 0; j < S->nseg; j++) { bput_i(b, S->attempts[j]); bput_i(b, S->retries[j]); }
    bput(b, S->mult, 8 * (size_t)S->nseg);
    bput(b, S->acc, sizeof *S->acc * (size_t)S->nseg);
    for (int j = 0; j < S->k; j++) put_level(b, &S->lv[j]);
    if (run->guide && run->guide->save_gathered) {
        unsigned char *g = NULL;
        size_t gn = 0;
        if (run->guide->save_gathered(run->guide->ctx, &g, &gn)) b->oom = 1;
        bput_i(b, (int64_t)gn);
        bput(b, g, gn);
        free(g);
    }
    if (b->oom) { free(b->p); return sc_fail(err, SC_EIO, "out of memory writing the checkpoint"); }
    return SC_OK;
}

static int deserialize(const sc_samcon_run *run, search *S, uint64_t run_hash, const unsigned char *p, size_t n, sc_err *err)
{
    bread r = {p, n, 0};
    if (bget_i(&r) != BLOB_MAGIC) return sc_fail(err, SC_EINPUT, "checkpoint: not a sampler checkpoint");
    if ((uint64_t)bget_i(&r) != run_hash)
        return sc_fail(err, SC_EINPUT, "checkpoint: made for other inputs (config, character, reference, seed or build differ)");
    if (bget_i(&r) != S->nseg || bget_i(&r) != S->ndof || bget_i(&r) != S->naux)
        return sc_fail(err, SC_EINPUT, "checkpoint: made for another segmentation");
    int64_t k = bget_i(&r);
    if (k < 0 || k > S->nseg) return sc_fail(err, SC_EINPUT, "checkpoint: damaged (segment %lld)", (long long)k);
    S->k = (int)k;
    S->samples = bget_i(&r); S->numeric_failures = bget_i(&r); S->backtracks = (int)bget_i(&r);
    bget(&r, &S->wall_seconds, 8);
    bget(&r, &S->sample_seconds, 8);
    for (int j = 0; j < S->nseg; j++) { S->attempts[j] = (int)bget_i(&r); S->retries[j] = (int)bget_i(&r); }
    bget(&r, S->mult, 8 * (size_t)S->nseg);
    bget(&r, S->acc, sizeof *S->acc * (size_t)S->nseg);
    for (int j = 0; j < S->k; j++) {
        int rc = get_level(&r, &S->lv[j], S->ndof, S->naux, err);
        if (rc) return rc;
    }
    if (run->guide && run->guide->restore_gathered) {
        int64_t gn = bget_i(&r);
        if (r.bad || gn < 0 || (size_t)gn > r.left || run->guide->restore_gathered(run->guide->ctx, r.p, (size_t)gn))
            return sc_fail(err, SC_EINPUT, "checkpoint: damaged (the gathered samples)");
        r.p += gn;
        r.left -= (size_t)gn;
    }
    if (r.bad || r.left) return sc_fail(err, SC_EINPUT, "checkpoint: damaged (%zu bytes unread)", r.left);
    return SC_OK;
}

static int write_checkpoint(const sc_samcon_run *run, const search *S, sc_err *err)
{
    blob b;
    int rc = serialize(run, S, run->run_hash, &b, err);
    if (rc) return rc;
    sc_checkpoint_info info = {"softcon.samcon_checkpoint/1", "sample-openloop's search after its last completed segment: continue it with --resume",
                               "/search", "the search state (elites with their simulation snapshots, counters), softcon's own layout",
                               "next_segment", S->k, run->run_hash};
    rc = sc_checkpoint_write(run->checkpoint, &info, b.p, b.n, err);
    free(b.p);
    return rc;
}

/* Rank 0 reads the checkpoint and every rank gets the search from it. */
static int read_checkpoint(const sc_samcon_run *run, search *S, sc_err *err)
{
    unsigned char *data;
    size_t n;
    int rc = sc_par_rank(run->par) == 0 ? sc_checkpoint_read(run->checkpoint, "/search", &data, &n, err) : SC_OK;
    rc = sc_par_share_bytes(run->par, rc, &data, &n, err);
    if (rc) return rc;
    rc = deserialize(run, S, run->run_hash, data, n, err);
    free(data);
    if (rc) sc_err_prefix(err, "%s: ", run->checkpoint);
    return rc;
}

/* ---- the search ------------------------------------------------------------------------- */

static void search_free(search *S)
{
    level_free(&S->start);
    if (S->lv)
        for (int j = 0; j < S->nseg; j++) level_free(&S->lv[j]);
    free(S->lv);
    free(S->attempts);
    free(S->retries);
    free(S->mult);
    free(S->acc);
}

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

static double median_of(double *v, int n)
{
    /* v is sorted (elites are kept in path-cost order) */
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0;
}

/* Segment k's elites from the samples: records from the results, states from their owners. */
static int make_level(sampler *W, search *S, const sample_result *res, const double *extra, const int *owner, const int *chosen, int ne,
                      sc_err *err)
{
    level *l = &S->lv[W->k];
    int naux = S->naux, rc = level_alloc(l, ne, S->ndof, naux, err);
    if (rc) return rc;
    sc_par *par = W->run->par;
    double scale_sum = 0;
    for (int e = 0; e < ne; e++) {
        int i = chosen[e];
        const sample_result *r = &res[i];
        l->sample[e] = i;
        l->parent[e] = (int)r->elite;
        l->attempt[e] = W->attempt;
        l->steps[e] = r->steps;
        l->end_step[e] = W->parent->end_step[r->elite] + r->steps;
        l->cost[e] = r->cost;
        l->path_cost[e] = r->path_cost;
        memcpy(l->terms + SC_COST_TERMS * e, r->terms, sizeof r->terms);
        l->scale[e] = r->steps * W->sim->o.dt / (W->ref_t1 - W->ref_t0);
        scale_sum += l->scale[e];
        const double *x = extra + (size_t)i * (size_t)(S->ndof + naux);
        memcpy(l->offset + (size_t)e * S->ndof, x, sizeof(double) * (size_t)S->ndof);
        memcpy(l->aux + (size_t)e * naux, x + S->ndof, sizeof(double) * (size_t)naux);
        l->state_size[e] = (size_t)r->state_bytes;
        if (sc_par_rank(par) == owner[i]) {
            l->state[e] = W->pool[i];
            W->pool[i] = NULL;
        } else if (!(l->state[e] = malloc(l->state_size[e]))) {
            return sc_fail(err, SC_EIO, "out of memory receiving elite states");
        }
        if ((rc = sc_par_bcast(par, l->state[e], l->state_size[e], owner[i], err))) return rc;
    }
    l->stats.best_elite = ne ? l->path_cost[0] : 0;
    l->stats.median_elite = median_of(l->path_cost, ne);
    l->stats.mean_scale_elites = ne ? scale_sum / ne : 0;
    return SC_OK;
}

static void report_segment(const sc_samcon_run *run, const search *S, const sampler *W, int n, const sample_result *res, int ne, double seconds)
{
    int k = W->k;
    if (!run->monitor.progress || sc_par_rank(run->par) != 0) return;
    long kinds[SC_FAIL_KINDS] = {0};
    for (int i = 0; i < n; i++) kinds[res[i].failed]++;
    char line[512];
    double t0 = run->ref->time[0];
    int len = snprintf(line, sizeof line, "segment %d/%d [%.2f-%.2f s] attempt %d: %d samples, %.0f%% failed", k + 1, S->nseg, W->ref_t0 - t0,
                       W->ref_t1 - t0, S->attempts[k], n, 100.0 * (n - kinds[0]) / n);
    if (n - kinds[0] > 0) {
        len += snprintf(line + len, sizeof line - (size_t)len, " (");
        for (int f = 1; f < SC_FAIL_KINDS; f++)
            if (kinds[f]) len += snprintf(line + len, sizeof line - (size_t)len, "%s%s %ld", line[len - 1] == '(' ? "" : ", ", sc_failure_names[f], kinds[f]);
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

int sc_samcon(const sc_samcon_run *run, sc_samcon_result *r, sc_err *err)
{
    const sc_samcon_config *c = run->cfg;
    const sc_reference *ref = run->ref;
    memset(r, 0, sizeof *r);
    double t_first = ref->time[0] + c->start, t_last = c->end > 0 ? ref->time[0] + c->end : ref->time[ref->n - 1];
    if (t_last > ref->time[ref->n - 1]) t_last = ref->time[ref->n - 1];
    if (!(t_last - t_first > 1e-9))
        return sc_fail(err, SC_EINPUT, "sampling: start %g s and end %g s leave nothing of the %g s reference to track", c->start, c->end,
                       ref->time[ref->n - 1] - ref->time[0]);
    search S = {0};
    sampler W = {0};
    S.nseg = (int)ceil((t_last - t_first) / c->segment - 1e-6);
    S.ndof = run->dofs->n;
    S.naux = run->guide ? run->guide->naux : 0;
    W.run = run;
    W.cfg = c;
    W.m = run->m;
    W.ndof = S.ndof;
    W.nseg = S.nseg;
    double wall0 = sc_wall_time();
    int rc;
    S.lv = calloc((size_t)S.nseg, sizeof *S.lv);
    S.attempts = calloc((size_t)S.nseg, sizeof(int));
    S.retries = calloc((size_t)S.nseg, sizeof(int));
    S.mult = calloc((size_t)S.nseg, sizeof(double));
    S.acc = calloc((size_t)S.nseg, sizeof *S.acc);
    if (!S.lv || !S.attempts || !S.retries || !S.mult || !S.acc) { search_free(&S); return sc_fail(err, SC_EIO, "out of memory"); }
    for (int j = 0; j < S.nseg; j++) S.mult[j] = 1;
    if ((rc = sc_sim_create(run->m, run->sim_opts, &W.sim, err)) || (rc = sc_tracker_init(&W.tracker, run->m, ref, &c->tracker, err)))
        goto done;
    W.scratch_cap = sc_sim_snapshot_capacity(W.sim);
    W.scratch = malloc(W.scratch_cap);
    W.targets = malloc(sizeof(sc_quat) * (size_t)run->m->nbones);
    if (!W.scratch || !W.targets) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    W.ctrl = (sc_segment_controller){run->m, run->dofs, ref->time, c->base == SC_BASE_ID ? ref->target_quat : ref->local_quat, ref->n, &W.seg, 1};

    /* the start: the reference's first state, at step 0 */
    W.rsize = sizeof(sample_result) + sizeof(double) * (size_t)(S.ndof + S.naux);
    if ((rc = level_alloc(&S.start, 1, S.ndof, S.naux, err)) || (rc = sc_samcon_start_state(run, W.sim, err))) goto done;
    S.start.state_size[0] = sc_sim_snapshot_save(W.sim, W.scratch, W.scratch_cap);
    if (!(S.start.state[0] = malloc(S.start.state_size[0]))) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    memcpy(S.start.state[0], W.scratch, S.start.state_size[0]);
    if (run->resume && (rc = read_checkpoint(run, &S, err))) goto done;
    double wall_before = S.wall_seconds;

    int give_up = 0;
    while (S.k < S.nseg && !give_up) {
        int k = S.k;
        W.k = k;
        W.attempt = S.attempts[k]++;
        W.parent = k ? &S.lv[k - 1] : &S.start;
        W.ref_t0 = t_first + k * c->segment;
        W.ref_t1 = k == S.nseg - 1 ? t_last : t_first + (k + 1) * c->segment;
        int n = (int)lround(c->samples * S.mult[k]);
        if (n < c->elites) n = c->elites;
        sample_result *res = calloc((size_t)n, sizeof *res);
        int *owner = calloc((size_t)n, sizeof(int)), *order = malloc((size_t)n * sizeof(int)), *chosen = malloc((size_t)n * sizeof(int));
        unsigned char *records = malloc((size_t)n * W.rsize);
        double *extra = malloc((size_t)n * (size_t)(S.ndof + S.naux + 1) * sizeof(double));
        W.pool = calloc((size_t)n, sizeof *W.pool);
        if (!res || !owner || !order || !chosen || !W.pool || !records || !extra) {
            rc = sc_fail(err, SC_EIO, "out of memory for %d samples", n);
        } else {
            double t0 = sc_wall_time();
            int stopped = 0;
            rc = sc_par_map(run->par, n, W.rsize, sample_task, &W, run->monitor.stop, records, owner, &stopped, err);
            for (int i = 0; !rc && !stopped && i < n; i++) { /* a record: the result, then offsets and aux */
                memcpy(&res[i], records + (size_t)i * W.rsize, sizeof *res);
                memcpy(extra + (size_t)i * (size_t)(S.ndof + S.naux), records + (size_t)i * W.rsize + sizeof *res,
                       sizeof(double) * (size_t)(S.ndof + S.naux));
            }
            if (!rc && stopped) {
                S.attempts[k]--; /* this attempt did not happen */
                S.wall_seconds = wall_before + (sc_wall_time() - wall0);
                if (run->checkpoint && sc_par_rank(run->par) == 0) rc = write_checkpoint(run, &S, err);
                if (!rc) rc = sc_fail(err, SC_EINTERRUPTED, "stopped by a signal before segment %d/%d; the search up to there is in %s", k + 1,
                                      S.nseg, run->checkpoint ? run->checkpoint : "(no checkpoint)");
            }
            if (!rc && run->guide && run->guide->on_samples) {
                unsigned char *failed = malloc((size_t)n);
                if (!failed) rc = sc_fail(err, SC_EIO, "out of memory");
                for (int i = 0; !rc && i < n; i++) failed[i] = res[i].failed != 0;
                if (!rc) run->guide->on_samples(run->guide->ctx, k, n, extra, failed);
                free(failed);
            }
            if (!rc) {
                int ne = select_elites(c, res, n, order, chosen);
                S.samples += n;
                S.acc[k].samples += n;
                for (int i = 0; i < n; i++) {
                    S.acc[k].fail_kind[res[i].failed]++;
                    S.acc[k].failures += res[i].failed != 0;
                    S.numeric_failures += res[i].failed == SC_FAIL_NUMERIC;
                    S.sample_seconds += res[i].seconds;
                }
                S.acc[k].attempts++;
                if (ne > 0) {
                    level_free(&S.lv[k]);
                    rc = make_level(&W, &S, res, extra, owner, chosen, ne, err);
                    /* elite states outside the backtracking window are no longer needed */
                    if (!rc && k - c->backtrack - 1 >= 0) level_free_states(&S.lv[k - c->backtrack - 1]);
                    S.k = k + 1;
                } else if (S.retries[k]++ >= c->max_retries) {
                    give_up = 1;
                } else {
                    /* back up to a segment whose parent states are still held */
                    int back = k < c->backtrack ? k : c->backtrack;
                    while (back > 0 && k - back - 1 >= 0 && !S.lv[k - back - 1].state) back--;
                    /* the retried segments get growth^(retries of the one that failed): failures do not compound */
                    double mult = pow(c->growth, S.retries[k]);
                    for (int j = k - back; j <= k; j++) S.mult[j] = fmax(S.mult[j], mult);
                    for (int j = k - back; j < k; j++) level_free(&S.lv[j]);
                    S.k = k - back;
                    S.backtracks++;
                }
                S.wall_seconds = wall_before + (sc_wall_time() - wall0);
                report_segment(run, &S, &W, n, res, ne, sc_wall_time() - t0);
                if (!rc && run->checkpoint && sc_par_rank(run->par) == 0) rc = write_checkpoint(run, &S, err);
            }
        }
        if (W.pool)
            for (int i = 0; i < n; i++) free(W.pool[i]);
        free(W.pool);
        W.pool = NULL;
        free(records);
        free(extra);
        free(res); free(owner); free(order); free(chosen);
        /* an error one rank met alone (a checkpoint rank 0 could not write) stops every rank */
        int elsewhere = sc_par_any(run->par, rc != SC_OK && rc != SC_EINTERRUPTED);
        if (rc) goto done;
        if (elsewhere) { rc = sc_fail(err, SC_EIO, "stopped: another rank failed (its message says why)"); goto done; }
    }

    /* trace back the cheapest path through the deepest level reached */
    int depth = S.k;
    r->nseg_total = S.nseg;
    r->nseg = depth;
    r->completed = depth == S.nseg;
    r->samples = S.samples;
    r->numeric_failures = S.numeric_failures;
    r->wall_seconds = S.wall_seconds;
    r->sample_seconds = S.sample_seconds;
    r->ranks = sc_par_size(run->par);
    r->backtracks = S.backtracks;
    r->seg = calloc((size_t)(depth ? depth : 1), sizeof *r->seg);
    r->offset = calloc((size_t)(depth ? depth : 1) * (size_t)(S.ndof ? S.ndof : 1), sizeof(double));
    if (!r->seg || !r->offset) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    size_t total = 0;
    for (int j = 0; j < depth; j++) total += (size_t)S.lv[j].n;
    r->nelites = calloc((size_t)(depth ? depth : 1), sizeof(int));
    r->elite_offset = malloc((total ? total : 1) * (size_t)(S.ndof ? S.ndof : 1) * sizeof(double));
    r->elite_aux = malloc((total ? total : 1) * (size_t)(S.naux ? S.naux : 1) * sizeof(double));
    r->elite_kept = calloc(total ? total : 1, 1);
    if (!r->nelites || !r->elite_offset || !r->elite_aux || !r->elite_kept) { rc = sc_fail(err, SC_EIO, "out of memory"); goto done; }
    size_t at = total; /* where level j's elites start, from the last level back: its elites are kept, then their parents */
    for (int j = depth - 1; j >= 0; j--) {
        const level *l = &S.lv[j];
        at -= (size_t)l->n;
        for (int i = 0; i < l->n; i++) {
            if (j == depth - 1) r->elite_kept[at + i] = 1;
            if (j > 0 && r->elite_kept[at + i]) r->elite_kept[at - (size_t)S.lv[j - 1].n + (size_t)l->parent[i]] = 1;
        }
    }
    total = 0;
    for (int j = 0; j < depth; j++) {
        const level *l = &S.lv[j];
        r->nelites[j] = l->n;
        memcpy(r->elite_offset + total * (size_t)S.ndof, l->offset, sizeof(double) * (size_t)l->n * (size_t)S.ndof);
        memcpy(r->elite_aux + total * (size_t)S.naux, l->aux, sizeof(double) * (size_t)l->n * (size_t)S.naux);
        total += (size_t)l->n;
    }
    int e = 0;
    for (int j = depth - 1; j >= 0; j--) {
        const level *l = &S.lv[j];
        sc_samcon_segment *g = &r->seg[j];
        *g = S.acc[j];
        g->best_elite = l->stats.best_elite;
        g->median_elite = l->stats.median_elite;
        g->mean_scale_elites = l->stats.mean_scale_elites;
        g->ref_t0 = t_first + j * c->segment;
        g->ref_t1 = j == S.nseg - 1 ? t_last : t_first + (j + 1) * c->segment;
        g->steps = l->steps[e];
        g->start_step = l->end_step[e] - l->steps[e];
        g->scale = l->scale[e];
        g->cost = l->cost[e];
        g->path_cost = l->path_cost[e];
        memcpy(g->terms, l->terms + SC_COST_TERMS * e, sizeof g->terms);
        memcpy(r->offset + (size_t)j * S.ndof, l->offset + (size_t)e * S.ndof, sizeof(double) * (size_t)S.ndof);
        e = l->parent[e];
    }
    rc = SC_OK;
done:
    sc_tracker_free(&W.tracker);
    sc_sim_free(W.sim);
    free(W.scratch);
    free(W.targets);
    search_free(&S);
    if (rc && rc != SC_EINTERRUPTED) sc_samcon_result_free(r);
    return rc;
}

void sc_samcon_result_free(sc_samcon_result *r)
{
    free(r->seg);
    free(r->offset);
    free(r->nelites);
    free(r->elite_offset);
    free(r->elite_aux);
    free(r->elite_kept);
    memset(r, 0, sizeof *r);
}

void sc_samcon_controller(const sc_samcon_run *run, const sc_samcon_result *r, sc_segment *seg, sc_segment_controller *c)
{
    for (int j = 0; j < r->nseg; j++)
        seg[j] = (sc_segment){r->seg[j].ref_t0, r->seg[j].ref_t1, r->seg[j].start_step, r->seg[j].steps, r->offset + (size_t)j * run->dofs->n};
    const sc_reference *ref = run->ref;
    *c = (sc_segment_controller){run->m, run->dofs, ref->time, run->cfg->base == SC_BASE_ID ? ref->target_quat : ref->local_quat, ref->n, seg, r->nseg};
}

/* ---- replay ----------------------------------------------------------------------------- */

typedef struct replay_ctx {
    const sc_samcon_result *r;
    const sc_tracker *tracker;
    int next;                 /* next segment end to check */
    int mismatch;             /* 1 + the segment whose cost differs */
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
        if (c != g->cost && !q->mismatch) { q->mismatch = q->next + 1; q->got = c; }
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
    if (rc) { free(seg); free(targets); return rc; }
    sc_segment_controller c;
    sc_samcon_controller(run, r, seg, &c);
    replay_ctx q = {r, &tracker, 0, 0, 0, hook, hook_ctx};
    long end = r->nseg ? r->seg[r->nseg - 1].start_step + r->seg[r->nseg - 1].steps : 0;
    sc_rollout_result rr;
    if (!(rc = sc_samcon_start_state(run, s, err)) && r->nseg > 0)
        rc = sc_rollout(s, sc_segment_source(&c), NULL, end, replay_hook, &q, targets, &rr, err);
    if (!rc && q.mismatch)
        rc = sc_fail(err, SC_ENUMERIC, "the replay of the path differs from the sampling at segment %d (cost %.17g, sampled %.17g): "
                     "the simulation did not repeat itself", q.mismatch, q.got, r->seg[q.mismatch - 1].cost);
    sc_tracker_free(&tracker);
    free(seg);
    free(targets);
    return rc;
}

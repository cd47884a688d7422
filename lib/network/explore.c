#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/blob.h"
#include "core/log.h"
#include "core/rng.h"
#include "io/checkpoint.h"
#include "network/explore.h"
#include "network/physics.h"
#include "network/rbf.h"

const char *const sc_measure_names[SC_MEASURES] = {"distance", "speed", "turn_rate", "jump_distance", "jump_height"};
const char *const sc_measure_units[SC_MEASURES] = {"m", "m/s", "deg/s", "m", "m"};

/* rng streams: (seed, purpose << 16 | round, index) */
enum { STREAM_INITIAL = 1, STREAM_TARGET = 2, STREAM_LOCAL = 3 };

/* One thread's simulation: the settled start as a snapshot, a network copy the knobs are set on */
typedef struct worker {
    sc_sim *sim;
    unsigned char *start;
    size_t start_size;
    sc_net_params params;
    int ready;
} worker;

typedef struct ctx {
    const sc_model *m;
    const sc_scenario *sc;
    const sc_net_params *base;
    const sc_explore_config *cfg;
    worker *w;
    const sc_trial *trial; /* the trials of the map, x filled */
} ctx;

typedef struct outcome {
    double d[SC_EXPLORE_MAX_OBJ];
    double fail_time;
    int outcome;
} outcome;

static int worker_init(const ctx *c, worker *w, sc_err *err)
{
    memset(w, 0, sizeof *w);
    int rc = sc_sim_create(c->m, &c->sc->sim, &w->sim, err);
    if (rc) return rc;
    w->params = *c->base;
    if ((rc = sc_network_clone(&c->base->net, &w->params.net, err))) return rc;
    sc_net_controller ctl;
    if ((rc = sc_net_controller_init(&ctl, &w->params, w->sim->m, err))) return rc;
    rc = sc_net_controller_start(&ctl, w->sim, c->sc->drop_height, c->sc->init_vel, err);
    sc_net_controller_free(&ctl);
    if (rc || (rc = sc_sim_settle(w->sim, err))) return rc;
    const size_t cap = sc_sim_snapshot_capacity(w->sim);
    if (!(w->start = malloc(cap))) return sc_fail(err, SC_EIO, "out of memory");
    w->start_size = sc_sim_snapshot_save(w->sim, w->start, cap);
    w->ready = 1;
    return SC_OK;
}

static void worker_free(worker *w)
{
    if (w->sim) sc_sim_free(w->sim);
    free(w->start);
    sc_network_free(&w->params.net);
    memset(w, 0, sizeof *w);
}

/* what the hook follows during a trial */
typedef struct watch {
    const sc_explore_config *cfg;
    const int *foot;
    sc_vec3 p0, fwd, com0;
    double h0, heading, last_heading, from_heading, com_top, t0;
    double path; /* m: the root's way along its own heading over the window */
    sc_vec3 p_from;
    int from_taken, need_com, outcome;
    double fail_time;
    /* a jump: the feet's midpoint at the start and where they first land after a flight (no
       contact for at least SC_MIN_FLIGHT) */
    sc_vec3 feet0, landing;
    double airborne_since;
    int flew, landed;
} watch;

#define SC_MIN_FLIGHT 0.05 /* s: shorter losses of contact (a toe lifting in the push) are no flight */

static sc_vec3 feet_midpoint(const sc_sim *s, const int *foot) { return sc_v3_scale(sc_v3_add(s->pose[foot[0]].p, s->pose[foot[1]].p), 0.5); }

static double heading_of(sc_quat q, sc_vec3 fwd)
{
    sc_vec3 f = sc_q_rotate(q, fwd);
    return atan2(f.x * fwd.z - f.z * fwd.x, f.x * fwd.x + f.z * fwd.z); /* about +y from fwd */
}

static int trial_hook(void *vctx, const sc_sim *s, const sc_quat *targets, const double push[3])
{
    (void)targets;
    (void)push;
    watch *w = vctx;
    const sc_explore_config *cfg = w->cfg;
    const double h = heading_of(s->pose[0].q, w->fwd);
    w->heading += sc_wrap_angle(h - w->last_heading); /* unwrapped */
    w->last_heading = h;
    if (!w->from_taken && s->t - w->t0 >= cfg->measure_from - 1e-9) {
        w->from_taken = 1;
        w->p_from = s->pose[0].p;
        w->from_heading = w->heading;
    } else if (w->from_taken) { /* a turning walk's speed is along its heading, not the start's */
        const double c = cos(w->heading), sn = sin(w->heading);
        const sc_vec3 along = sc_v3(c * w->fwd.x + sn * w->fwd.z, 0, -sn * w->fwd.x + c * w->fwd.z);
        w->path += s->o.dt * sc_v3_dot(sc_v3_load(s->lin_vel), along);
    }
    if (w->need_com) {
        sc_sim_diag d;
        sc_sim_diagnostics(s, &d);
        w->com_top = fmax(w->com_top, d.com[1]);
        if (s->contact.count > 0) {
            if (w->flew && !w->landed) w->landed = 1, w->landing = feet_midpoint(s, w->foot);
            w->airborne_since = NAN;
        } else if (isnan(w->airborne_since)) w->airborne_since = s->t;
        else if (s->t - w->airborne_since >= SC_MIN_FLIGHT) w->flew = 1;
    }
    const double tilt = acos(fmax(-1, fmin(1, sc_q_rotate(s->pose[0].q, sc_v3(0, 1, 0)).y)));
    int bad = s->pose[0].p.y < 0.5 * w->h0 || tilt > cfg->max_tilt ? SC_TRIAL_FELL : 0;
    for (int b = 0; !bad && cfg->bad_contacts && b < s->nb; b++) {
        const int is_foot = sc_bone_is_below(s->m, b, w->foot[0]) || sc_bone_is_below(s->m, b, w->foot[1]);
        if (!is_foot && sc_sim_bone_touches(s, b)) bad = SC_TRIAL_BAD_CONTACT;
    }
    if (bad) {
        w->outcome = bad;
        w->fail_time = s->t - w->t0;
    }
    return bad;
}

static int run_trial(void *vctx, int thread, int i, void *result, sc_err *err)
{
    const ctx *c = vctx;
    const sc_explore_config *cfg = c->cfg;
    worker *w = &c->w[thread];
    outcome *out = result;
    int rc;
    if (!w->ready && (rc = worker_init(c, w, err))) return rc;
    const sc_trial *t = &c->trial[i];
    for (int k = 0; k < cfg->nknobs; k++)
        if ((rc = sc_network_set_value(&w->params.net, cfg->knob[k].node, cfg->knob[k].point, t->x[k], err))) return rc;
    if ((rc = sc_sim_snapshot_restore(w->sim, w->start, w->start_size, err))) return rc;
    sc_net_controller ctl;
    if ((rc = sc_net_controller_init(&ctl, &w->params, w->sim->m, err))) return rc;
    sc_sim *s = w->sim;
    watch wt = {.cfg = cfg, .foot = w->params.foot, .p0 = s->pose[0].p, .h0 = s->pose[0].p.y, .t0 = s->t, .fail_time = NAN, .airborne_since = NAN};
    wt.feet0 = feet_midpoint(s, wt.foot);
    sc_vec3 f = sc_q_rotate(s->pose[0].q, ctl.fwd);
    f.y = 0;
    wt.fwd = sc_v3_normalize(f);
    wt.last_heading = heading_of(s->pose[0].q, wt.fwd);
    for (int k = 0; k < cfg->nobj; k++)
        wt.need_com |= cfg->obj[k].measure == SC_MEASURE_JUMP_DISTANCE || cfg->obj[k].measure == SC_MEASURE_JUMP_HEIGHT;
    wt.need_com |= cfg->settle_speed > 0;
    sc_sim_diag d0;
    sc_sim_diagnostics(s, &d0);
    wt.com0 = sc_v3_load(d0.com);
    wt.com_top = d0.com[1];
    sc_quat targets[SC_SIM_MAX_BONES];
    sc_rollout_result rr;
    sc_err step_err = {0};
    rc = sc_rollout(s, sc_net_controller_source(&ctl), NULL, s->step + lround(cfg->duration / s->o.dt), trial_hook, &wt, targets, &rr, &step_err);
    sc_net_controller_free(&ctl);
    for (int k = 0; k < SC_EXPLORE_MAX_OBJ; k++) out->d[k] = NAN;
    out->outcome = rc ? SC_TRIAL_FAILED : wt.outcome;
    out->fail_time = rc ? s->t - wt.t0 : wt.fail_time;
    if (out->outcome) return SC_OK;
    sc_sim_diag d;
    sc_sim_diagnostics(s, &d);
    if (cfg->settle_speed > 0 && sc_v3_norm(sc_v3_load(d.linear)) / d.mass > cfg->settle_speed) {
        out->outcome = SC_TRIAL_MOVING;
        return SC_OK;
    }
    const sc_vec3 p = s->pose[0].p;
    const double window = cfg->duration - cfg->measure_from;
    for (int k = 0; k < cfg->nobj; k++) {
        double v = 0;
        switch (cfg->obj[k].measure) {
            case SC_MEASURE_DISTANCE: v = sc_v3_dot(sc_v3_sub(p, wt.p0), wt.fwd); break;
            case SC_MEASURE_SPEED: v = wt.path / window; break;
            case SC_MEASURE_TURN_RATE: v = (wt.heading - wt.from_heading) * 180 / SC_PI / window; break;
            case SC_MEASURE_JUMP_DISTANCE: v = wt.landed ? sc_v3_dot(sc_v3_sub(wt.landing, wt.feet0), wt.fwd) : 0; break;
            case SC_MEASURE_JUMP_HEIGHT: v = wt.com_top - wt.com0.y; break;
        }
        out->d[k] = v;
    }
    return SC_OK;
}

static int push_trial(sc_explore_result *res, const sc_trial *t, sc_err *err)
{
    if (res->ntrials == res->cap) {
        const int cap = res->cap ? 2 * res->cap : 256;
        sc_trial *p = realloc(res->trial, (size_t)cap * sizeof *p);
        if (!p) return sc_fail(err, SC_EIO, "out of memory");
        res->trial = p;
        res->cap = cap;
    }
    res->trial[res->ntrials++] = *t;
    return SC_OK;
}

static int in_range(const sc_explore_config *cfg, const double *d)
{
    for (int k = 0; k < cfg->nobj; k++)
        if (!(d[k] >= cfg->obj[k].lo && d[k] <= cfg->obj[k].hi)) return 0;
    return 1;
}

static int within(const sc_explore_config *cfg, const double *d, const double *target)
{
    for (int k = 0; k < cfg->nobj; k++)
        if (!(fabs(d[k] - target[k]) <= cfg->obj[k].tolerance)) return 0;
    return 1;
}

/* runs trials[0..n) (x set) through the map and appends them to res */
static int run_batch(sc_par *par, ctx *c, sc_trial *trials, int n, int (*stop)(void), sc_explore_result *res, sc_err *err)
{
    outcome *out = calloc((size_t)n + 1, sizeof *out);
    int *owner = malloc(((size_t)n + 1) * sizeof *owner), stopped = 0;
    if (!out || !owner) {
        free(out);
        free(owner);
        return sc_fail(err, SC_EIO, "out of memory");
    }
    c->trial = trials;
    int rc = sc_par_map(par, n, sizeof *out, run_trial, c, stop, out, owner, &stopped, err);
    if (!rc && stopped) rc = sc_fail(err, SC_EINTERRUPTED, "stopped by a signal");
    for (int i = 0; i < n && !rc; i++) {
        sc_trial *t = &trials[i];
        memcpy(t->d, out[i].d, sizeof t->d);
        t->outcome = out[i].outcome;
        t->fail_time = out[i].fail_time;
        t->success = t->outcome == SC_TRIAL_OK && in_range(c->cfg, t->d);
        t->hit = t->success && t->kind != SC_TRIAL_INITIAL && within(c->cfg, t->d, t->target);
        rc = push_trial(res, t, err);
    }
    free(out);
    free(owner);
    return rc;
}

static void clamp_knobs(const sc_explore_result *res, const sc_explore_config *cfg, double *x)
{
    for (int k = 0; k < cfg->nknobs; k++) x[k] = fmin(res->hi[k], fmax(res->lo[k], x[k]));
}

/* round 0: uniform batches, bounds grown after a batch without success */
static int initial_round(sc_par *par, ctx *c, int (*stop)(void), sc_explore_result *res, sc_err *err)
{
    const sc_explore_config *cfg = c->cfg;
    sc_trial *batch = calloc((size_t)cfg->batch, sizeof *batch);
    if (!batch) return sc_fail(err, SC_EIO, "out of memory");
    int rc = SC_OK, successes = 0;
    sc_explore_round *r = &res->round[0];
    for (int b = 0; b < cfg->max_batches && successes < cfg->min_success && !rc; b++) {
        for (int i = 0; i < cfg->batch; i++) {
            sc_trial *t = &batch[i];
            memset(t, 0, sizeof *t);
            sc_rng rng;
            sc_rng_init(&rng, cfg->seed, STREAM_INITIAL << 16, (uint32_t)(b * cfg->batch + i));
            for (int k = 0; k < cfg->nknobs; k++) t->x[k] = res->lo[k] + (res->hi[k] - res->lo[k]) * sc_rng_uniform(&rng);
            for (int k = 0; k < SC_EXPLORE_MAX_OBJ; k++) t->target[k] = NAN;
            t->target_index = -1;
        }
        const int before = res->ntrials;
        if ((rc = run_batch(par, c, batch, cfg->batch, stop, res, err))) break;
        int found = 0;
        for (int i = before; i < res->ntrials; i++) found += res->trial[i].success;
        successes += found;
        r->trials += cfg->batch;
        if (!found && successes < cfg->min_success) { /* widen about the centres */
            res->grows++;
            for (int k = 0; k < cfg->nknobs; k++) {
                const double mid = 0.5 * (res->lo[k] + res->hi[k]), half = 0.5 * cfg->grow * (res->hi[k] - res->lo[k]);
                res->lo[k] = mid - half;
                res->hi[k] = mid + half;
            }
        }
    }
    r->successes = successes;
    free(batch);
    return rc;
}

/* the k successes nearest to target in objective space (each objective over its range), the
   knobs interpolated over them */
static int interpolate(const sc_explore_result *res, const sc_explore_config *cfg, const double *target, double *x, sc_err *err)
{
    int idx[SC_RBF_MAX], n = 0;
    double dist[SC_RBF_MAX];
    const int k = cfg->k < SC_RBF_MAX ? cfg->k : SC_RBF_MAX;
    for (int i = 0; i < res->ntrials; i++) {
        const sc_trial *t = &res->trial[i];
        if (!t->success) continue;
        double s = 0;
        for (int j = 0; j < cfg->nobj; j++) {
            const double u = (t->d[j] - target[j]) / (cfg->obj[j].hi - cfg->obj[j].lo);
            s += u * u;
        }
        if (n == k && !(s < dist[k - 1])) continue; /* kept sorted, the nearest first, ties by trial order */
        int at = n < k ? n++ : k - 1;
        for (; at > 0 && s < dist[at - 1]; at--) {
            dist[at] = dist[at - 1];
            idx[at] = idx[at - 1];
        }
        dist[at] = s;
        idx[at] = i;
    }
    if (!n) return sc_fail(err, SC_EPARTIAL, "no successful trial to interpolate from");
    double centres[SC_RBF_MAX * SC_RBF_MAX_DIM], values[SC_RBF_MAX * SC_RBF_MAX_VALS], q[SC_RBF_MAX_DIM];
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < cfg->nobj; j++) centres[i * cfg->nobj + j] = res->trial[idx[i]].d[j] / (cfg->obj[j].hi - cfg->obj[j].lo);
        memcpy(values + i * cfg->nknobs, res->trial[idx[i]].x, (size_t)cfg->nknobs * sizeof *values);
    }
    for (int j = 0; j < cfg->nobj; j++) q[j] = target[j] / (cfg->obj[j].hi - cfg->obj[j].lo);
    sc_rbf r;
    sc_err fit_err = {0};
    if (sc_rbf_fit(n, cfg->nobj, centres, cfg->nknobs, values, &r, &fit_err)) { /* degenerate: the nearest success */
        memcpy(x, res->trial[idx[0]].x, (size_t)cfg->nknobs * sizeof *x);
        return SC_OK;
    }
    sc_rbf_eval(&r, q, x);
    /* within the examples' own box: the cubic overshoots between close objectives reached by
       unlike knobs */
    for (int j = 0; j < cfg->nknobs; j++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < n; i++) {
            lo = fmin(lo, res->trial[idx[i]].x[j]);
            hi = fmax(hi, res->trial[idx[i]].x[j]);
        }
        x[j] = fmin(hi, fmax(lo, x[j]));
    }
    return SC_OK;
}

static int later_round(sc_par *par, ctx *c, int round, int (*stop)(void), sc_explore_result *res, sc_err *err)
{
    const sc_explore_config *cfg = c->cfg;
    const int nt = cfg->targets, nl = cfg->targets * cfg->local;
    sc_trial *tr = calloc((size_t)(nt + nl) + 1, sizeof *tr);
    if (!tr) return sc_fail(err, SC_EIO, "out of memory");
    int rc = SC_OK;
    for (int i = 0; i < nt && !rc; i++) {
        sc_trial *t = &tr[i];
        sc_rng rng;
        sc_rng_init(&rng, cfg->seed, (uint32_t)(STREAM_TARGET << 16 | round), (uint32_t)i);
        for (int j = 0; j < cfg->nobj; j++) t->target[j] = cfg->obj[j].lo + (cfg->obj[j].hi - cfg->obj[j].lo) * sc_rng_uniform(&rng);
        for (int j = cfg->nobj; j < SC_EXPLORE_MAX_OBJ; j++) t->target[j] = NAN;
        t->round = round;
        t->kind = SC_TRIAL_INTERPOLATED;
        t->target_index = i;
        rc = interpolate(res, cfg, t->target, t->x, err);
    }
    const int first = res->ntrials;
    if (!rc) rc = run_batch(par, c, tr, nt, stop, res, err);
    for (int i = 0; i < nl && !rc; i++) { /* local samples about each interpolated controller */
        sc_trial *t = &tr[nt + i];
        const sc_trial *centre = &res->trial[first + i / cfg->local];
        *t = *centre;
        t->kind = SC_TRIAL_LOCAL;
        sc_rng rng;
        sc_rng_init(&rng, cfg->seed, (uint32_t)(STREAM_LOCAL << 16 | round), (uint32_t)i);
        for (int k = 0; k < cfg->nknobs; k++) t->x[k] += cfg->sigma * (res->hi[k] - res->lo[k]) * sc_rng_normal(&rng);
        clamp_knobs(res, cfg, t->x);
    }
    if (!rc && nl) rc = run_batch(par, c, tr + nt, nl, stop, res, err);
    if (!rc) { /* the round's figures */
        sc_explore_round *r = &res->round[round];
        r->trials = nt + nl;
        int failed_interp = 0;
        for (int j = 0; j < cfg->nobj; j++) r->interp_error[j] = r->best_error[j] = 0;
        for (int i = 0; i < nt; i++) {
            const sc_trial *t = &res->trial[first + i];
            r->interp_hits += t->hit;
            if (t->outcome) failed_interp++;
            else
                for (int j = 0; j < cfg->nobj; j++) r->interp_error[j] += fabs(t->d[j] - t->target[j]);
            double best[SC_EXPLORE_MAX_OBJ];
            int any = 0, hit = t->hit;
            for (int j = 0; j < cfg->nobj; j++) best[j] = t->success ? fabs(t->d[j] - t->target[j]) : INFINITY;
            any = t->success;
            for (int l = 0; l < cfg->local; l++) {
                const sc_trial *u = &res->trial[first + nt + i * cfg->local + l];
                hit |= u->hit;
                if (!u->success) continue;
                any = 1;
                for (int j = 0; j < cfg->nobj; j++) best[j] = fmin(best[j], fabs(u->d[j] - u->target[j]));
            }
            r->targets_hit += hit;
            for (int j = 0; j < cfg->nobj; j++) r->best_error[j] += any ? best[j] : NAN;
        }
        for (int j = 0; j < cfg->nobj; j++) {
            r->interp_error[j] = nt > failed_interp ? r->interp_error[j] / (nt - failed_interp) : NAN;
            r->best_error[j] /= nt;
        }
        for (int i = first; i < res->ntrials; i++) r->successes += res->trial[i].success;
    }
    free(tr);
    return rc;
}

#define CHECKPOINT_SCHEMA "softcon.explore_checkpoint/1"
#define CHECKPOINT_MAGIC  0x31504b4350584553ll /* "SEXPCKP1" */

static void put_trial(sc_blob_writer *w, const sc_explore_config *cfg, const sc_trial *t)
{
    sc_blob_put(w, t->x, sizeof(double) * (size_t)cfg->nknobs);
    sc_blob_put(w, t->d, sizeof(double) * (size_t)cfg->nobj);
    sc_blob_put(w, t->target, sizeof(double) * (size_t)cfg->nobj);
    const int64_t v[6] = {t->round, t->kind, t->target_index, t->outcome, t->success, t->hit};
    sc_blob_put(w, v, sizeof v);
    sc_blob_put_f64(w, t->fail_time);
}

/* the rounds done, every trial and the bounds */
static int serialize(uint64_t run_hash, const sc_explore_config *cfg, const sc_explore_result *res, double wall, sc_blob_writer *out, sc_err *err)
{
    sc_blob_writer w;
    sc_blob_writer_init(&w);
    sc_blob_put_i64(&w, CHECKPOINT_MAGIC);
    sc_blob_put_i64(&w, (int64_t)run_hash);
    sc_blob_put_i64(&w, cfg->nknobs);
    sc_blob_put_i64(&w, cfg->nobj);
    sc_blob_put_i64(&w, res->nrounds);
    sc_blob_put_i64(&w, res->grows);
    sc_blob_put_f64(&w, wall);
    sc_blob_put(&w, res->lo, sizeof res->lo);
    sc_blob_put(&w, res->hi, sizeof res->hi);
    sc_blob_put(&w, res->round, sizeof(sc_explore_round) * (size_t)res->nrounds);
    sc_blob_put_i64(&w, res->ntrials);
    for (int i = 0; i < res->ntrials; i++) put_trial(&w, cfg, &res->trial[i]);
    if (w.failed) {
        sc_blob_writer_free(&w);
        return sc_fail(err, SC_EIO, "out of memory writing the checkpoint");
    }
    *out = w;
    return SC_OK;
}

/* rank 0 */
static int write_checkpoint(const sc_explore_checkpoint *ck, const sc_explore_config *cfg, const sc_explore_result *res, double wall, sc_err *err)
{
    sc_blob_writer w;
    int rc = serialize(ck->run_hash, cfg, res, wall, &w, err);
    if (rc) return rc;
    const sc_checkpoint_info info = {CHECKPOINT_SCHEMA, "network-sample after its last completed round: continue it with --resume",
                                     "/search",         "the trials so far, the bounds and the rounds' figures, softcon's own layout",
                                     "rounds_done",     res->nrounds,
                                     ck->run_hash};
    rc = sc_checkpoint_write(ck->path, &info, w.p, w.n, err);
    sc_blob_writer_free(&w);
    return rc;
}

static int finite_all(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* A sealed checkpoint into res, every count, index and value checked. */
static int decode_checkpoint(const unsigned char *blob, size_t n, const sc_explore_checkpoint *ck, const sc_explore_config *cfg,
                             sc_explore_result *res, double *wall, sc_err *err)
{
    const unsigned char *data;
    int rc = sc_checkpoint_unseal(blob, n, CHECKPOINT_SCHEMA, ck->run_hash, &data, &n, err);
    if (rc) return rc;
    sc_blob_reader r;
    sc_blob_reader_init(&r, data, n);
    const int64_t magic = sc_blob_get_i64(&r), hash = sc_blob_get_i64(&r), nk = sc_blob_get_i64(&r), no = sc_blob_get_i64(&r);
    const int64_t rounds = sc_blob_get_i64(&r), grows = sc_blob_get_i64(&r);
    *wall = sc_blob_get_f64(&r);
    if (r.bad || magic != CHECKPOINT_MAGIC) return sc_fail(err, SC_EINPUT, "damaged or truncated");
    if ((uint64_t)hash != ck->run_hash) return sc_fail(err, SC_EINPUT, "made for other inputs (config, network, character, seed or build differ)");
    if (nk != cfg->nknobs || no != cfg->nobj || rounds < 1 || rounds > cfg->rounds + 1 || grows < 0 || grows > cfg->max_batches || !isfinite(*wall))
        return sc_fail(err, SC_EINPUT, "damaged: %lld knobs, %lld objectives, %lld rounds done, %lld widenings", (long long)nk, (long long)no,
                       (long long)rounds, (long long)grows);
    res->nrounds = (int)rounds;
    res->grows = (int)grows;
    sc_blob_get(&r, res->lo, sizeof res->lo);
    sc_blob_get(&r, res->hi, sizeof res->hi);
    sc_blob_get(&r, res->round, sizeof(sc_explore_round) * (size_t)rounds);
    const int64_t ntrials = sc_blob_get_i64(&r);
    const size_t per = sizeof(double) * (size_t)(cfg->nknobs + 2 * cfg->nobj + 1) + 6 * sizeof(int64_t);
    if (r.bad || ntrials < 1 || (size_t)ntrials != r.left / per || r.left % per)
        return sc_fail(err, SC_EINPUT, "damaged: %lld trials", (long long)ntrials);
    for (int k = 0; k < cfg->nknobs; k++)
        if (!(isfinite(res->lo[k]) && isfinite(res->hi[k]) && res->lo[k] < res->hi[k]))
            return sc_fail(err, SC_EINPUT, "damaged: knob %d's bounds [%g, %g]", k, res->lo[k], res->hi[k]);
    for (int64_t i = 0; i < ntrials; i++) {
        sc_trial t;
        memset(&t, 0, sizeof t);
        for (int k = 0; k < SC_EXPLORE_MAX_OBJ; k++) t.d[k] = t.target[k] = NAN;
        sc_blob_get(&r, t.x, sizeof(double) * (size_t)cfg->nknobs);
        sc_blob_get(&r, t.d, sizeof(double) * (size_t)cfg->nobj);
        sc_blob_get(&r, t.target, sizeof(double) * (size_t)cfg->nobj);
        int64_t v[6];
        sc_blob_get(&r, v, sizeof v);
        t.fail_time = sc_blob_get_f64(&r);
        if (r.bad || !finite_all(t.x, cfg->nknobs) || v[0] < 0 || v[0] >= rounds || v[1] < SC_TRIAL_INITIAL || v[1] > SC_TRIAL_LOCAL || v[2] < -1 ||
            v[2] >= cfg->targets || v[3] < SC_TRIAL_OK || v[3] > SC_TRIAL_FAILED || (v[4] != 0 && v[4] != 1) || (v[5] != 0 && v[5] != 1) ||
            (v[4] && !finite_all(t.d, cfg->nobj)))
            return sc_fail(err, SC_EINPUT, "damaged: trial %lld", (long long)i);
        t.round = (int)v[0];
        t.kind = (int)v[1];
        t.target_index = (int)v[2];
        t.outcome = (int)v[3];
        t.success = (int)v[4];
        t.hit = (int)v[5];
        if ((rc = push_trial(res, &t, err))) return rc;
    }
    return SC_OK;
}

int sc_explore_checkpoint_check(const unsigned char *blob, size_t n, uint64_t run_hash, const sc_explore_config *cfg, sc_err *err)
{
    sc_explore_result *res = calloc(1, sizeof *res);
    if (!res) return sc_fail(err, SC_EIO, "out of memory");
    const sc_explore_checkpoint ck = {NULL, 1, run_hash};
    double wall;
    const int rc = decode_checkpoint(blob, n, &ck, cfg, res, &wall, err);
    sc_explore_result_free(res);
    free(res);
    return rc;
}

int sc_explore_checkpoint_example(uint64_t run_hash, const sc_explore_config *cfg, int rounds, unsigned char **blob, size_t *n, sc_err *err)
{
    sc_explore_result *res = calloc(1, sizeof *res);
    if (!res) return sc_fail(err, SC_EIO, "out of memory");
    int rc = SC_OK;
    res->nrounds = rounds;
    for (int k = 0; k < cfg->nknobs; k++) {
        res->lo[k] = cfg->knob[k].lo;
        res->hi[k] = cfg->knob[k].hi;
    }
    for (int r = 0; r < rounds && !rc; r++)
        for (int i = 0; i < 3 && !rc; i++) {
            sc_trial t;
            memset(&t, 0, sizeof t);
            for (int k = 0; k < cfg->nknobs; k++) t.x[k] = 0.5 * (res->lo[k] + res->hi[k]);
            for (int k = 0; k < SC_EXPLORE_MAX_OBJ; k++) t.d[k] = t.target[k] = NAN;
            for (int k = 0; k < cfg->nobj; k++) {
                t.d[k] = cfg->obj[k].lo + 0.25 * i * (cfg->obj[k].hi - cfg->obj[k].lo);
                if (r) t.target[k] = t.d[k];
            }
            t.round = r;
            t.kind = r ? (i ? SC_TRIAL_LOCAL : SC_TRIAL_INTERPOLATED) : SC_TRIAL_INITIAL;
            t.target_index = r ? 0 : -1;
            t.success = t.hit = r > 0;
            t.fail_time = NAN;
            rc = push_trial(res, &t, err);
        }
    sc_blob_writer w;
    if (!rc && !(rc = serialize(run_hash, cfg, res, 1.5, &w, err))) {
        rc = sc_checkpoint_seal(CHECKPOINT_SCHEMA, run_hash, w.p, w.n, blob, n, err);
        sc_blob_writer_free(&w);
    }
    sc_explore_result_free(res);
    free(res);
    return rc;
}

static int read_checkpoint(sc_par *par, const sc_explore_checkpoint *ck, const sc_explore_config *cfg, sc_explore_result *res, double *wall,
                           sc_err *err)
{
    unsigned char *data = NULL;
    size_t n = 0;
    int rc = sc_par_rank(par) == 0 ? sc_checkpoint_read(ck->path, "/search", CHECKPOINT_SCHEMA, ck->run_hash, &data, &n, err) : SC_OK;
    if ((rc = sc_par_share_bytes(par, rc, &data, &n, err))) return rc;
    rc = decode_checkpoint(data, n, ck, cfg, res, wall, err);
    free(data);
    if (rc) sc_err_prefix(err, "%s: ", ck->path);
    return rc;
}

/* after a round: rank 0 saves, every rank learns how it went */
static int save_round(sc_par *par, const sc_explore_checkpoint *ck, const sc_explore_config *cfg, const sc_explore_result *res, double wall,
                      sc_err *err)
{
    if (!ck || !ck->path) return SC_OK;
    int rc = sc_par_rank(par) == 0 ? write_checkpoint(ck, cfg, res, wall, err) : SC_OK;
    unsigned char *none = NULL;
    size_t zero = 0;
    rc = sc_par_share_bytes(par, rc, &none, &zero, err);
    free(none);
    return rc;
}

int sc_explore_run(sc_par *par, const sc_model *m, const sc_scenario *sc, const sc_net_params *base, const sc_explore_config *cfg,
                   const sc_explore_checkpoint *ck, int (*stop)(void), sc_explore_result *res, sc_err *err)
{
    memset(res, 0, sizeof *res);
    if (cfg->rounds + 1 > (int)(sizeof res->round / sizeof res->round[0]))
        return sc_fail(err, SC_EINPUT, "explore: %d rounds, more than %zu", cfg->rounds, sizeof res->round / sizeof res->round[0] - 1);
    for (int k = 0; k < cfg->nknobs; k++) {
        res->lo[k] = cfg->knob[k].lo;
        res->hi[k] = cfg->knob[k].hi;
    }
    const double t0 = sc_wall_time();
    double before = 0; /* s: the runs before a resume */
    const int threads = sc_par_threads(par);
    ctx c = {m, sc, base, cfg, calloc((size_t)threads, sizeof(worker)), NULL};
    if (!c.w) return sc_fail(err, SC_EIO, "out of memory");
    int rc = SC_OK;
    if (ck && ck->resume) rc = read_checkpoint(par, ck, cfg, res, &before, err);
    else if (!(rc = initial_round(par, &c, stop, res, err))) {
        res->nrounds = 1;
        rc = save_round(par, ck, cfg, res, before + sc_wall_time() - t0, err);
    }
    for (int r = res->nrounds; r <= cfg->rounds && !rc; r++) {
        if (!res->round[0].successes) {
            rc = sc_fail(err, SC_EPARTIAL, "round 0 found no success in %d trials (bounds grown %d times)", res->round[0].trials, res->grows);
            break;
        }
        if (!(rc = later_round(par, &c, r, stop, res, err))) {
            res->nrounds = r + 1;
            rc = save_round(par, ck, cfg, res, before + sc_wall_time() - t0, err);
        }
    }
    for (int i = 0; i < threads; i++) worker_free(&c.w[i]);
    free(c.w);
    res->wall_seconds = before + sc_wall_time() - t0;
    res->ranks = sc_par_size(par);
    res->threads = threads;
    return rc;
}

void sc_explore_result_free(sc_explore_result *res)
{
    free(res->trial);
    memset(res, 0, sizeof *res);
}

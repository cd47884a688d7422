/* SAMCON over the muscle controller's targets: see muscle_samcon.h. */
#include "sampling/muscle_samcon.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "core/rng.h"
#include "par/par.h"

void sc_msamcon_default_config(sc_msamcon_config *c)
{
    memset(c, 0, sizeof *c);
    c->segment = 0.1;
    c->samples = 100;
    c->elites = 10;
    c->seed = 1;
    c->max_volume_change = 0.15;
}

void sc_msamcon_result_free(sc_msamcon_result *r)
{
    free(r->seg);
    free(r->offset);
    memset(r, 0, sizeof *r);
}

int sc_msamcon_check(const sc_msamcon_config *c, const sc_muscle_run_opts *o, sc_err *err)
{
    if (o->solver == SC_RUN_PASSIVE) return sc_fail(err, SC_EINPUT, "muscle sampling: a passive run has no targets to sample");
    const double per = c->segment / o->control.period;
    if (!(c->segment > 0) || fabs(per - lround(per)) > 1e-6 || lround(per) < 1)
        return sc_fail(err, SC_EINPUT, "muscle sampling: the segment %g s is not a whole number of control periods (%g s)", c->segment,
                       o->control.period);
    if (!(c->duration >= c->segment)) return sc_fail(err, SC_EINPUT, "muscle sampling: duration %g s is shorter than a segment", c->duration);
    if (c->samples < 1 || c->elites < 1 || c->elites > c->samples)
        return sc_fail(err, SC_EINPUT, "muscle sampling: need 1 <= elites (%d) <= samples (%d)", c->elites, c->samples);
    if (c->ncontrols < 1) return sc_fail(err, SC_EINPUT, "muscle sampling: no controls to sample");
    for (int k = 0; k < c->ncontrols; k++) {
        const sc_msamcon_control *u = &c->controls[k];
        if (u->objective < 0 || u->objective >= o->control.nobjectives)
            return sc_fail(err, SC_EINPUT, "muscle sampling: control %d names objective %d; muscle_control has %d (0-based)", k, u->objective,
                           o->control.nobjectives);
        if (u->axis < 0 || u->axis > 2 || !(u->half_width > 0))
            return sc_fail(err, SC_EINPUT, "muscle sampling: control %d: axis must be x, y or z and half_width > 0", k);
    }
    for (int k = 0; k < o->control.nobjectives; k++)
        if (o->control.objectives[k].anchored)
            return sc_fail(err, SC_EINPUT, "muscle sampling: objective %d is anchored: its anchor is the controller's state, not the snapshots'", k);
    if (c->nterms < 1) return sc_fail(err, SC_EINPUT, "muscle sampling: no cost terms");
    for (int j = 0; j < c->nterms; j++)
        if (!(c->terms[j].to > c->terms[j].from) || !(c->terms[j].weight >= 0))
            return sc_fail(err, SC_EINPUT, "muscle sampling: cost term %d needs to > from and weight >= 0", j);
    return SC_OK;
}

/* ---- one path's measures and cost ---- */

static void path_start(sc_mpath *p, const sc_softbody *s)
{
    memset(p, 0, sizeof *p);
    const sc_mat3 R = sc_softbody_orientation(s);
    memcpy(p->R, R.m, sizeof p->R);
}

/* The cost rate of the terms at the body's state after a period (unwrapping the turn first). */
static double period_cost(const sc_msamcon_config *c, const sc_softbody *s, sc_mpath *p)
{
    const sc_mat3 R = sc_softbody_orientation(s);
    sc_mat3 R0;
    memcpy(R0.m, p->R, sizeof p->R);
    const sc_vec3 w = sc_q_log(sc_q_from_m3(sc_m3_mul(R, sc_m3_transpose(R0)))); /* the period's rotation vector */
    p->turn[0] += w.x;
    p->turn[1] += w.y;
    p->turn[2] += w.z;
    memcpy(p->R, R.m, sizeof p->R);
    const sc_model *m = s->m;
    double mass = 0, com[3] = {0, 0, 0}, vel[3] = {0, 0, 0};
    for (int i = 0; i < m->nnodes; i++) {
        mass += m->node_mass[i];
        for (int k = 0; k < 3; k++) {
            com[k] += m->node_mass[i] * s->x[3 * i + k];
            vel[k] += m->node_mass[i] * s->v[3 * i + k];
        }
    }
    double sum = 0;
    for (int j = 0; j < c->nterms; j++) {
        const sc_mcost_term *t = &c->terms[j];
        if (s->t < t->from || s->t >= t->to) continue;
        double e2 = 0;
        if (t->type == SC_MCOST_TURN) {
            const double turn = (p->turn[0] * t->axis[0] + p->turn[1] * t->axis[1] + p->turn[2] * t->axis[2]) * 180 / M_PI;
            const double e = turn - (t->start + (t->target[0] - t->start) * (s->t - t->from) / (t->to - t->from));
            e2 = e * e;
        } else {
            const double *q = t->type == SC_MCOST_COM ? com : vel;
            for (int k = 0; k < 3; k++) {
                const double e = q[k] / mass - t->target[k];
                e2 += t->axes[k] * e * e;
            }
        }
        sum += t->weight * e2;
    }
    return sum;
}

static void set_targets(const sc_msamcon_config *c, const sc_objective *base, sc_objective *objs, const double *offset)
{
    for (int k = 0; k < c->ncontrols; k++) {
        const sc_msamcon_control *u = &c->controls[k];
        objs[u->objective].target[u->axis] = base[u->objective].target[u->axis] + (offset ? offset[k] : 0);
    }
}

static double volume_change(const sc_softbody *s)
{
    sc_softbody_diag d;
    sc_softbody_diagnostics(s, &d);
    return fabs(d.volume_ratio - 1);
}

/* Runs one segment from the run's state with its targets set: the segment's cost (the mean
 * rate over its periods), or SC_ENUMERIC / *failed on a blow-up or too large a volume change. */
static int run_segment(const sc_msamcon_config *c, sc_muscle_run *r, sc_mpath *p, double *cost, int *failed, sc_err *err)
{
    const long steps = lround(c->segment / r->o->body.dt);
    double sum = 0;
    int periods = 0;
    *failed = 0;
    for (long k = 0; k < steps; k++) {
        sc_err step_err;
        int rc = sc_muscle_run_step(r, &step_err);
        if (rc == SC_ENUMERIC) {
            *failed = 1;
            return SC_OK;
        }
        if (rc) return sc_fail(err, rc, "%s", step_err.msg);
        if (r->s->step % r->plan_every == 0) {
            sum += period_cost(c, r->s, p);
            periods++;
            if (volume_change(r->s) > c->max_volume_change) {
                *failed = 1;
                return SC_OK;
            }
        }
    }
    *cost = sum / periods;
    p->cost += *cost;
    return SC_OK;
}

/* ---- the search ---- */

typedef struct worker {
    sc_muscle_run_opts o;
    sc_objective *objs;
    sc_muscle_run run;
} worker;

typedef struct sample_rec {
    int failed, parent;
    double cost;
    sc_mpath path;
    double offset[SC_MSAMCON_MAX_CONTROLS];
} sample_rec;

typedef struct search {
    const sc_msamcon_config *c;
    const sc_muscle_run_opts *o;
    int nworkers;
    worker *w;
    size_t snap;
    int seg, nelite;
    int greedy;                 /* the elite on the greedy path (every offset 0), -1 once that path failed */
    unsigned char *elite_state; /* [elites * snap] */
    sc_mpath *elite_path;       /* [elites] */
    unsigned char *store;       /* [samples * snap] this rank's samples' end states */
} search;

static int worker_init(worker *w, const sc_model *m, const sc_muscles *mu, const sc_muscle_run_opts *o, sc_err *err)
{
    memset(w, 0, sizeof *w);
    w->o = *o;
    w->objs = malloc((size_t)o->control.nobjectives * sizeof *w->objs);
    if (!w->objs) return sc_fail(err, SC_EIO, "out of memory");
    memcpy(w->objs, o->control.objectives, (size_t)o->control.nobjectives * sizeof *w->objs);
    w->o.control.objectives = w->objs;
    return sc_muscle_run_create(m, mu, &w->o, &w->run, err);
}

static void worker_free(worker *w)
{
    sc_muscle_run_free(&w->run);
    free(w->objs);
}

/* Sample i's offsets; the first sample of each elite (i < nelite) continues it with the
   controller's own targets, so the greedy path stays in the search while it is among the best. */
static void draw_offsets(const sc_msamcon_config *c, int seg, int i, int nelite, double *offset)
{
    if (i < nelite) {
        memset(offset, 0, (size_t)c->ncontrols * sizeof *offset);
        return;
    }
    sc_rng g;
    sc_rng_init(&g, c->seed, (uint32_t)seg, (uint32_t)i);
    for (int k = 0; k < c->ncontrols; k++) offset[k] = (2 * sc_rng_uniform(&g) - 1) * c->controls[k].half_width;
}

static int sample_task(void *ctx, int thread, int i, void *result, sc_err *err)
{
    search *S = ctx;
    const sc_msamcon_config *c = S->c;
    worker *w = &S->w[thread];
    sample_rec *rec = result;
    memset(rec, 0, sizeof *rec);
    rec->parent = i % S->nelite;
    int rc = sc_softbody_snapshot_restore(w->run.s, S->elite_state + (size_t)rec->parent * S->snap, S->snap, err);
    if (rc) return rc;
    rec->path = S->elite_path[rec->parent];
    draw_offsets(c, S->seg, i, S->nelite, rec->offset);
    set_targets(c, S->o->control.objectives, w->objs, rec->offset);
    if ((rc = run_segment(c, &w->run, &rec->path, &rec->cost, &rec->failed, err))) return rc;
    if (!rec->failed) sc_softbody_snapshot_save(w->run.s, S->store + (size_t)i * S->snap);
    return SC_OK;
}

/* The greedy controller's path cost over the whole search (every offset 0). */
static int greedy_task(void *ctx, int thread, int i, void *result, sc_err *err)
{
    (void)i;
    search *S = ctx;
    worker *w = &S->w[thread];
    const int nseg = (int)lround(S->c->duration / S->c->segment);
    int rc = sc_softbody_snapshot_restore(w->run.s, S->elite_state, S->snap, err);
    if (rc) return rc;
    set_targets(S->c, S->o->control.objectives, w->objs, NULL);
    sc_mpath p = S->elite_path[0];
    double cost;
    int failed = 0;
    for (int k = 0; k < nseg && !failed; k++)
        if ((rc = run_segment(S->c, &w->run, &p, &cost, &failed, err))) return rc;
    *(double *)result = failed ? INFINITY : p.cost;
    return SC_OK;
}

static int by_cost(const void *a, const void *b)
{
    const sample_rec *x = *(sample_rec *const *)a, *y = *(sample_rec *const *)b;
    if (x->path.cost != y->path.cost) return x->path.cost < y->path.cost ? -1 : 1;
    return x < y ? -1 : x > y;
}

int sc_msamcon_search(sc_par *par, const sc_model *m, const sc_muscles *mu, const sc_muscle_run_opts *o, const sc_msamcon_config *c,
                      int (*stop)(void), sc_msamcon_result *res, sc_err *err)
{
    memset(res, 0, sizeof *res);
    int rc = sc_msamcon_check(c, o, err);
    if (rc) return rc;
    const double t_start = sc_wall_time();
    const int N = c->samples, K = c->elites, nc = c->ncontrols;
    const int nseg = (int)lround(c->duration / c->segment);
    search S = {.c = c, .o = o, .nworkers = sc_par_threads(par), .nelite = 1, .greedy = 0};
    S.w = calloc((size_t)S.nworkers, sizeof *S.w);
    sample_rec *recs = calloc((size_t)N, sizeof *recs);
    sample_rec **order = calloc((size_t)N, sizeof *order);
    int *owner = calloc((size_t)N, sizeof *owner);
    int *elite_parent = calloc((size_t)nseg * K, sizeof *elite_parent);
    double *elite_offset = calloc((size_t)nseg * K * nc, sizeof *elite_offset), *elite_cost = calloc((size_t)nseg * K, sizeof *elite_cost);
    res->seg = calloc((size_t)nseg, sizeof *res->seg);
    res->offset = calloc((size_t)nseg * nc + 1, sizeof *res->offset);
    if (!S.w || !recs || !order || !owner || !elite_parent || !elite_offset || !elite_cost || !res->seg || !res->offset) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done;
    }
    for (int t = 0; t < S.nworkers; t++)
        if ((rc = worker_init(&S.w[t], m, mu, o, err))) goto done;
    S.snap = sc_softbody_snapshot_size(S.w[0].run.s);
    S.elite_state = malloc((size_t)K * S.snap);
    unsigned char *next_state = malloc((size_t)K * S.snap);
    S.elite_path = calloc((size_t)K, sizeof *S.elite_path);
    sc_mpath *next_path = calloc((size_t)K, sizeof *next_path);
    S.store = malloc((size_t)N * S.snap);
    void **bufs = calloc((size_t)K, sizeof *bufs);
    size_t *bytes = calloc((size_t)K, sizeof *bytes);
    int *roots = calloc((size_t)K, sizeof *roots);
    if (!S.elite_state || !next_state || !S.elite_path || !next_path || !S.store || !bufs || !bytes || !roots) {
        rc = sc_fail(err, SC_EIO, "out of memory");
        goto done_search;
    }
    sc_softbody_snapshot_save(S.w[0].run.s, S.elite_state);
    path_start(&S.elite_path[0], S.w[0].run.s);
    int stopped = 0, gowner;
    if ((rc = sc_par_map(par, 1, sizeof res->greedy_cost, greedy_task, &S, stop, &res->greedy_cost, &gowner, &stopped, err))) goto done_search;
    const int me = sc_par_rank(par);
    res->nseg_total = nseg;
    res->completed = 1;
    for (int k = 0; k < nseg && !stopped; k++) {
        S.seg = k;
        if ((rc = sc_par_map(par, N, sizeof *recs, sample_task, &S, stop, recs, owner, &stopped, err))) goto done_search;
        if (stopped) break;
        int ok = 0, failures = 0;
        for (int i = 0; i < N; i++) {
            if (recs[i].failed) failures++;
            else order[ok++] = &recs[i];
        }
        res->samples += N;
        res->failures += failures;
        if (ok == 0) {
            res->completed = 0;
            sc_log_info("muscle sampling: every sample of segment %d (from t = %.2f s) failed: keeping the path so far", k + 1, k * c->segment);
            break;
        }
        qsort(order, (size_t)ok, sizeof *order, by_cost);
        const int ne = ok < K ? ok : K;
        /* the greedy path's sample (its elite's first, offset 0) stays an elite: the path found
           never costs more than the controller's own */
        int g = -1;
        for (int e = 0; S.greedy >= 0 && e < ok; e++)
            if (order[e] == &recs[S.greedy]) g = e;
        if (g >= ne) {
            order[ne - 1] = &recs[S.greedy];
            g = ne - 1;
        }
        S.greedy = g;
        for (int e = 0; e < ne; e++) {
            const sample_rec *r = order[e];
            const int i = (int)(r - recs);
            elite_parent[k * K + e] = r->parent;
            elite_cost[k * K + e] = r->cost;
            memcpy(elite_offset + ((size_t)k * K + e) * nc, r->offset, (size_t)nc * sizeof(double));
            next_path[e] = r->path;
            if (owner[i] == me) memcpy(next_state + (size_t)e * S.snap, S.store + (size_t)i * S.snap, S.snap);
            bufs[e] = next_state + (size_t)e * S.snap;
            bytes[e] = S.snap;
            roots[e] = owner[i];
        }
        if ((rc = sc_par_bcast_many(par, ne, bufs, bytes, roots, err))) goto done_search;
        memcpy(S.elite_state, next_state, (size_t)ne * S.snap);
        memcpy(S.elite_path, next_path, (size_t)ne * sizeof *next_path);
        S.nelite = ne;
        sc_msamcon_segment *sg = &res->seg[k];
        sg->t0 = k * c->segment;
        sg->t1 = (k + 1) * c->segment;
        sg->failures = failures;
        sg->best_elite = order[0]->path.cost;
        sg->median_elite = order[(ne - 1) / 2]->path.cost;
        res->nseg = k + 1;
        sc_log_info("muscle sampling: segment %d/%d (t = %.2f s): %d of %d failed; path cost best %.4g, median elite %.4g", k + 1, nseg, sg->t1,
                    failures, N, sg->best_elite, sg->median_elite);
    }
    if (stopped) {
        rc = sc_fail(err, SC_EINTERRUPTED, "muscle sampling: stopped by a signal at segment %d of %d", res->nseg, nseg);
        goto done_search;
    }
    /* trace the cheapest path back through the elites' parents */
    for (int k = res->nseg - 1, e = 0; k >= 0; k--) {
        memcpy(res->offset + (size_t)k * nc, elite_offset + ((size_t)k * K + e) * nc, (size_t)nc * sizeof(double));
        res->seg[k].cost = elite_cost[k * K + e];
        e = elite_parent[k * K + e];
    }
    for (int k = 0; k < res->nseg; k++) res->seg[k].path_cost = (k ? res->seg[k - 1].path_cost : 0) + res->seg[k].cost;
    res->ranks = sc_par_size(par);
    res->threads = S.nworkers;
    res->wall_seconds = sc_wall_time() - t_start;
done_search:
    free(next_state);
    free(next_path);
    free(bufs);
    free(bytes);
    free(roots);
done:
    if (S.w)
        for (int t = 0; t < S.nworkers; t++) worker_free(&S.w[t]);
    free(S.w);
    free(S.elite_state);
    free(S.elite_path);
    free(S.store);
    free(recs);
    free(order);
    free(owner);
    free(elite_parent);
    free(elite_offset);
    free(elite_cost);
    if (rc) sc_msamcon_result_free(res);
    return rc;
}

/* ---- following a path ---- */

void sc_muscle_follow_init(sc_muscle_follow *f, const sc_msamcon_config *c, const sc_msamcon_result *res, const sc_muscle_run_opts *o,
                           sc_objective *objectives, const sc_muscle_run *r)
{
    memset(f, 0, sizeof *f);
    f->c = c;
    f->res = res;
    f->o = o;
    f->objectives = objectives;
    f->seg_steps = lround(c->segment / o->body.dt);
    path_start(&f->path, r->s);
}

int sc_muscle_follow_step(sc_muscle_follow *f, sc_muscle_run *r, int *done, sc_err *err)
{
    const sc_msamcon_config *c = f->c;
    *done = 0;
    if (f->seg >= f->res->nseg) {
        *done = 1;
        return SC_OK;
    }
    if (f->steps_in_seg == 0) {
        set_targets(c, f->o->control.objectives, f->objectives, f->res->offset + (size_t)f->seg * c->ncontrols);
        f->seg_cost = 0;
    }
    int rc = sc_muscle_run_step(r, err);
    if (rc) return rc;
    f->steps_in_seg++;
    if (r->s->step % r->plan_every == 0) f->seg_cost += period_cost(c, r->s, &f->path);
    if (f->steps_in_seg == f->seg_steps) {
        const double cost = f->seg_cost / (double)(f->seg_steps / r->plan_every);
        if (cost != f->res->seg[f->seg].cost)
            return sc_fail(err, SC_ENUMERIC,
                           "muscle sampling: following the path, segment %d costs %.17g, the search found %.17g (not bit-identical)", f->seg, cost,
                           f->res->seg[f->seg].cost);
        f->seg++;
        f->steps_in_seg = 0;
        *done = f->seg >= f->res->nseg;
    }
    return SC_OK;
}

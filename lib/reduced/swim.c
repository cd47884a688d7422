/* Swimming by DMP control, optimised by L-BFGS over forward simulations (swim.h). */
#include "reduced/swim.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "core/rng.h"

#define LENGTH_FRACTION 0.1 /* l: the static bend that a unit variable asks of a mode, in body lengths */

int sc_swim_trace_create(int nframes, int nmodes, sc_swim_trace *t, sc_err *err)
{
    memset(t, 0, sizeof *t);
    t->cap = nframes;
    t->nmodes = nmodes;
    t->time = sc_alloc(err, (size_t)nframes, sizeof(double));
    t->com = sc_alloc(err, 3 * (size_t)nframes, sizeof(double));
    t->vel = sc_alloc(err, 3 * (size_t)nframes, sizeof(double));
    t->rot = sc_alloc(err, 4 * (size_t)nframes, sizeof(double));
    t->q = sc_alloc(err, (size_t)nframes * nmodes, sizeof(double));
    t->control = sc_alloc(err, (size_t)nframes * nmodes, sizeof(double));
    if (!t->time || !t->com || !t->vel || !t->rot || !t->q || !t->control) {
        sc_swim_trace_free(t);
        return SC_EIO;
    }
    return SC_OK;
}

void sc_swim_trace_free(sc_swim_trace *t)
{
    free(t->time);
    free(t->com);
    free(t->vel);
    free(t->rot);
    free(t->q);
    free(t->control);
    memset(t, 0, sizeof *t);
}

static void trace_add(sc_swim_trace *t, double time, const double com[3], const double vel[3], sc_quat rot, const double *q, const double *u)
{
    if (!t || t->nframes >= t->cap) return;
    const int f = t->nframes++, k = t->nmodes;
    t->time[f] = time;
    memcpy(t->com + 3 * f, com, 3 * sizeof(double));
    memcpy(t->vel + 3 * f, vel, 3 * sizeof(double));
    const double r[4] = {rot.w, rot.x, rot.y, rot.z};
    memcpy(t->rot + 4 * f, r, sizeof r);
    memcpy(t->q + (size_t)f * k, q, k * sizeof(double));
    memcpy(t->control + (size_t)f * k, u, k * sizeof(double));
}

/* ---- the objective's running sums, shared by the reduced and the full run ---- */

typedef struct score {
    double speed, effort, balance, u2;
    long n;
    double start[3], start_t; /* the centre of mass at the end of the warm-up */
} score;

static void score_begin(score *sc) { memset(sc, 0, sizeof *sc); }

/* the state after a step: time t (the warm-up's end is step `warm`), centre of mass c, its velocity
   v, orientation R, the step's controls u */
static void score_add(const sc_swim_problem *p, score *sc, long step, long warm, double t, const double c[3], const double v[3], sc_mat3 R,
                      const double *u)
{
    if (step == warm) {
        memcpy(sc->start, c, sizeof sc->start);
        sc->start_t = t;
    }
    if (step <= warm) return;
    const sc_swim_objective *o = &p->obj;
    double dv = 0;
    for (int a = 0; a < 3; a++) {
        const double e = v[a] - o->target_speed * o->direction[a];
        dv += e * e;
    }
    sc->speed += dv / (o->target_speed * o->target_speed);
    const sc_vec3 axis = sc_v3_load(o->balance_axis), ra = sc_m3_mulv(R, axis);
    sc->balance += sc_v3_dot(sc_v3_sub(ra, axis), sc_v3_sub(ra, axis));
    for (int k = 0; k < p->rm->nmodes; k++) {
        const double r = u[k] / p->scale[k];
        sc->effort += r * r;
        sc->u2 += u[k] * u[k];
    }
    sc->n++;
}

static void score_end(const sc_swim_problem *p, const score *sc, double t_end, const double c_end[3], sc_swim_terms *terms)
{
    const sc_swim_objective *o = &p->obj;
    const double n = sc->n > 0 ? (double)sc->n : 1;
    terms->speed = o->speed_weight * sc->speed / n;
    terms->effort = o->effort_weight * sc->effort / n;
    terms->balance = o->balance_weight * sc->balance / n;
    terms->total = terms->speed + terms->effort + terms->balance;
    terms->control_rms = sqrt(sc->u2 / (n * p->rm->nmodes));
    const double span = t_end - sc->start_t;
    double along = 0, d[3];
    for (int a = 0; a < 3; a++) {
        d[a] = c_end[a] - sc->start[a];
        along += d[a] * o->direction[a];
    }
    double across = 0;
    for (int a = 0; a < 3; a++) across += (d[a] - along * o->direction[a]) * (d[a] - along * o->direction[a]);
    terms->achieved = span > 0 ? along / span : 0;
    terms->drift = span > 0 ? sqrt(across) / span : 0;
}

/* ---- the problem ---- */

int sc_swim_problem_create(const sc_reduced_model *rm, const sc_swim_objective *obj, int kind, int nbasis, double period0, int free_period,
                           int threads, sc_swim_problem *p, sc_err *err)
{
    memset(p, 0, sizeof *p);
    const sc_swim_objective *o = obj;
    const double dn = sc_v3_norm(sc_v3_load(o->direction)), an = sc_v3_norm(sc_v3_load(o->balance_axis));
    if (!(o->duration > o->warmup) || !(o->warmup >= 0) || !(o->target_speed > 0) || !(dn > 0) || !(an > 0) || !(o->speed_weight >= 0) ||
        !(o->effort_weight >= 0) || !(o->balance_weight >= 0))
        return sc_fail(err, SC_EINPUT,
                       "swim: duration %g s must exceed the warm-up %g s, target speed %g m/s be positive, the direction and the "
                       "balance axis non-zero, the weights non-negative",
                       o->duration, o->warmup, o->target_speed);
    if (threads < 1 || threads > SC_SWIM_MAX_THREADS) return sc_fail(err, SC_EINPUT, "swim: threads %d outside 1..%d", threads, SC_SWIM_MAX_THREADS);
    p->rm = rm;
    p->obj = *o;
    for (int a = 0; a < 3; a++) {
        p->obj.direction[a] /= dn;
        p->obj.balance_axis[a] /= an;
    }
    p->kind = kind;
    p->nbasis = nbasis;
    p->period0 = period0;
    p->free_period = free_period;
    p->threads = threads;
    p->fd_step = 1e-4;
    const int K = rm->nmodes;
    p->nvars = K * nbasis + (free_period ? 1 : 0);
    p->nsteps = lround(o->duration / rm->o.dt);
    p->warmup_steps = lround(o->warmup / rm->o.dt);
    /* l: a tenth of the largest rest extent */
    const sc_model *m = rm->m;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < m->nnodes; i++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fmin(lo[a], m->rest_pos[3 * i + a]);
            hi[a] = fmax(hi[a], m->rest_pos[3 * i + a]);
        }
    p->length = LENGTH_FRACTION * fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    int rc = SC_EIO;
    p->scale = sc_alloc(err, K, sizeof(double));
    p->states = sc_alloc(err, threads, sizeof(sc_reduced_state));
    p->dmps = sc_alloc(err, threads, sizeof(sc_dmp));
    p->fd_values = sc_alloc(err, 2 * (size_t)p->nvars + 1, sizeof(double));
    p->fd_points = sc_alloc(err, (size_t)threads * p->nvars, sizeof(double));
    if (!p->scale || !p->states || !p->dmps || !p->fd_values || !p->fd_points) goto fail;
    for (int k = 0; k < K; k++) p->scale[k] = rm->b->eigenvalue[k] * sqrt(rm->b->mass) * p->length;
    for (int t = 0; t < threads; t++) {
        if ((rc = sc_reduced_state_create(rm, &p->states[t], err)) || (rc = sc_dmp_create(kind, K, nbasis, period0, &p->dmps[t], err))) {
            p->threads = t + 1;
            goto fail;
        }
    }
    return SC_OK;
fail:
    sc_swim_problem_free(p);
    return rc;
}

void sc_swim_problem_free(sc_swim_problem *p)
{
    for (int t = 0; p->states && p->dmps && t < p->threads; t++) {
        if (p->states[t].q) sc_reduced_state_free(&p->states[t]);
        sc_dmp_free(&p->dmps[t]);
    }
    free(p->states);
    free(p->dmps);
    free(p->scale);
    free(p->fd_values);
    free(p->fd_points);
    memset(p, 0, sizeof *p);
}

void sc_swim_to_dmp(const sc_swim_problem *p, const double *x, sc_dmp *d)
{
    const int K = p->rm->nmodes, N = p->nbasis;
    for (int k = 0; k < K; k++)
        for (int i = 0; i < N; i++) d->weight[k * N + i] = p->scale[k] * x[k * N + i];
    d->period = p->free_period ? p->period0 * exp(x[K * N]) : p->period0;
}

void sc_swim_from_dmp(const sc_swim_problem *p, const sc_dmp *d, double *x)
{
    const int K = p->rm->nmodes, N = p->nbasis;
    for (int k = 0; k < K; k++)
        for (int i = 0; i < N; i++) x[k * N + i] = d->weight[k * N + i] / p->scale[k];
    if (p->free_period) x[K * N] = log(d->period / p->period0);
}

void sc_swim_initial_guess(const sc_swim_problem *p, unsigned long seed, double amplitude, double *x)
{
    sc_rng r;
    sc_rng_init(&r, seed, 17, 0);
    const int K = p->rm->nmodes, N = p->nbasis;
    for (int i = 0; i < K * N; i++) x[i] = amplitude * (2 * sc_rng_uniform(&r) - 1);
    if (p->free_period) x[K * N] = 0;
}

int sc_swim_simulate(const sc_swim_problem *p, sc_reduced_state *s, const sc_dmp *d, sc_swim_terms *terms, sc_swim_trace *trace, int every,
                     sc_err *err)
{
    const sc_reduced_model *rm = p->rm;
    sc_reduced_state_reset(rm, s);
    score sc;
    score_begin(&sc);
    if (trace) trace->nframes = 0;
    const double dt = rm->o.dt;
    sc_dmp_eval(d, 0, s->control);
    if (trace) trace_add(trace, s->t, s->pos, s->vel, s->rot, s->q, s->control);
    score_add(p, &sc, 0, p->warmup_steps, 0, s->pos, s->vel, sc_q_to_m3(s->rot), s->control);
    for (long k = 0; k < p->nsteps; k++) {
        /* the controls of the step's start (the step takes its forces from there) */
        sc_dmp_eval(d, (double)k * dt, s->control);
        int rc = sc_reduced_step(rm, s, err);
        if (rc) return rc;
        score_add(p, &sc, k + 1, p->warmup_steps, s->t, s->pos, s->vel, sc_q_to_m3(s->rot), s->control);
        if (trace && (k + 1) % every == 0) trace_add(trace, s->t, s->pos, s->vel, s->rot, s->q, s->control);
    }
    score_end(p, &sc, s->t, s->pos, terms);
    return SC_OK;
}

/* ---- the central-difference gradient over threads ---- */

typedef struct fd_job {
    sc_swim_problem *p;
    const double *x;
    int thread;
    int rc;
    sc_err err;
} fd_job;

/* evaluation j: 2 i and 2 i + 1 are x + h e_i and x - h e_i, 2 nvars is x itself */
static void *fd_worker(void *arg)
{
    fd_job *job = arg;
    sc_swim_problem *p = job->p;
    const int n = p->nvars, total = 2 * n + 1;
    double *xt = p->fd_points + (size_t)job->thread * n;
    for (int j = job->thread; j < total; j += p->threads) {
        memcpy(xt, job->x, sizeof(double) * n);
        if (j < 2 * n) xt[j / 2] += (j % 2 ? -1 : 1) * p->fd_step;
        sc_swim_to_dmp(p, xt, &p->dmps[job->thread]);
        sc_swim_terms terms;
        job->rc = sc_swim_simulate(p, &p->states[job->thread], &p->dmps[job->thread], &terms, NULL, 1, &job->err);
        if (job->rc) return NULL;
        p->fd_values[j] = terms.total;
    }
    return NULL;
}

int sc_swim_objective_gradient(sc_swim_problem *p, const double *x, double *f, double *g, sc_err *err)
{
    const int n = p->nvars;
    if (!g) {
        sc_swim_to_dmp(p, x, &p->dmps[0]);
        sc_swim_terms terms;
        int rc = sc_swim_simulate(p, &p->states[0], &p->dmps[0], &terms, NULL, 1, err);
        p->evaluations++;
        *f = terms.total;
        return rc;
    }
    fd_job jobs[SC_SWIM_MAX_THREADS] = {{0}};
    pthread_t tid[SC_SWIM_MAX_THREADS];
    int started[SC_SWIM_MAX_THREADS] = {0};
    for (int t = 0; t < p->threads; t++) {
        jobs[t] = (fd_job){p, x, t, 0, {0, ""}};
        if (t > 0) started[t] = pthread_create(&tid[t], NULL, fd_worker, &jobs[t]) == 0;
    }
    /* share 0 runs here, and so does the share of a thread that could not start (its own slots,
       state and DMP: the same results) */
    for (int t = 0; t < p->threads; t++)
        if (!started[t]) fd_worker(&jobs[t]);
    for (int t = 1; t < p->threads; t++)
        if (started[t]) pthread_join(tid[t], NULL);
    p->evaluations += 2 * n + 1;
    for (int t = 0; t < p->threads; t++)
        if (jobs[t].rc) {
            *err = jobs[t].err;
            return jobs[t].rc;
        }
    *f = p->fd_values[2 * n];
    for (int i = 0; i < n; i++) g[i] = (p->fd_values[2 * i] - p->fd_values[2 * i + 1]) / (2 * p->fd_step);
    return SC_OK;
}

/* ---- the optimisation ---- */

typedef struct opt_ctx {
    sc_swim_problem *p;
    sc_swim_history *h;
    double t0;
} opt_ctx;

static int opt_fn(void *ctx, const double *x, double *f, double *g, sc_err *err)
{
    opt_ctx *c = ctx;
    return sc_swim_objective_gradient(c->p, x, f, g, err);
}

static int history_add(sc_swim_history *h, double f, double achieved, double seconds)
{
    if (h->n == h->cap) {
        const int cap = h->cap ? 2 * h->cap : 64;
        double *a = realloc(h->objective, sizeof(double) * cap), *b = a ? realloc(h->achieved, sizeof(double) * cap) : NULL,
               *c = b ? realloc(h->seconds, sizeof(double) * cap) : NULL;
        if (a) h->objective = a;
        if (b) h->achieved = b;
        if (!c) return SC_EIO;
        h->seconds = c;
        h->cap = cap;
    }
    h->objective[h->n] = f;
    h->achieved[h->n] = achieved;
    h->seconds[h->n] = seconds;
    h->n++;
    return SC_OK;
}

/* the achieved speed of x (one more forward run, on state 0: the gradient's runs are over) */
static double achieved_speed(sc_swim_problem *p, const double *x)
{
    sc_swim_to_dmp(p, x, &p->dmps[0]);
    sc_swim_terms terms;
    sc_err err;
    return sc_swim_simulate(p, &p->states[0], &p->dmps[0], &terms, NULL, 1, &err) ? NAN : terms.achieved;
}

static void opt_progress(void *ctx, int it, const double *x, double f, double gnorm)
{
    opt_ctx *c = ctx;
    const double v = achieved_speed(c->p, x), sec = sc_wall_time() - c->t0;
    if (c->h) history_add(c->h, f, v, sec);
    sc_log_info("reduced-opt: iteration %d: objective %.6g, speed %.4f m/s (target %.4f), |g| %.3g, %.1f s", it, f, v, c->p->obj.target_speed, gnorm,
                sec);
}

void sc_swim_history_free(sc_swim_history *h)
{
    free(h->objective);
    free(h->achieved);
    free(h->seconds);
    memset(h, 0, sizeof *h);
}

int sc_swim_optimise(sc_swim_problem *p, const sc_lbfgs_opts *o, double *x, sc_swim_history *history, sc_lbfgs_result *r, sc_err *err)
{
    opt_ctx c = {p, history, sc_wall_time()};
    if (history) {
        memset(history, 0, sizeof *history);
        double f;
        int rc = sc_swim_objective_gradient(p, x, &f, NULL, err);
        if (rc) return rc;
        if (history_add(history, f, achieved_speed(p, x), 0)) return sc_fail(err, SC_EIO, "swim: out of memory");
    }
    return sc_lbfgs_minimize(p->nvars, x, opt_fn, &c, o, opt_progress, r, err);
}

/* ---- the full FEM replay ---- */

int sc_swim_replay_full(const sc_swim_problem *p, const sc_model *m, const sc_softbody_opts *o, const sc_dmp *d, sc_swim_terms *terms,
                        sc_swim_trace *trace, int every, sc_err *err)
{
    const sc_reduced_model *rm = p->rm;
    const sc_reduced_basis *b = rm->b;
    const int K = rm->nmodes, nn = m->nnodes;
    sc_softbody *s;
    int rc = sc_softbody_create(m, NULL, o, &s, err);
    if (rc) return rc;
    sc_reduced_state *proj = &p->states[0]; /* the nodes projected on the frame and modes, for the record */
    double u[SC_REDUCED_MAX_MODES];
    const long nsteps = lround(p->obj.duration / o->dt), warm = lround(p->obj.warmup / o->dt);
    score sc;
    score_begin(&sc);
    if (trace) trace->nframes = 0;
    double mass = 0;
    for (int i = 0; i < nn; i++) mass += m->node_mass[i];
    sc_dmp_eval(d, 0, u);
    for (long k = 0; k <= nsteps; k++) {
        double c[3] = {0, 0, 0}, v[3] = {0, 0, 0};
        for (int i = 0; i < nn; i++)
            for (int a = 0; a < 3; a++) {
                c[a] += m->node_mass[i] * s->x[3 * i + a] / mass;
                v[a] += m->node_mass[i] * s->v[3 * i + a] / mass;
            }
        const sc_mat3 R = sc_softbody_orientation(s);
        score_add(p, &sc, k, warm, s->t, c, v, R, u); /* u: the controls of the step that ended here */
        sc_dmp_eval(d, s->t, u);
        if (trace && k % every == 0) {
            sc_reduced_set_nodes(rm, proj, s->x, s->v);
            trace_add(trace, s->t, c, v, sc_q_from_m3(R), proj->q, u);
        }
        if (k == nsteps) break;
        /* f = M R Phi u on every node */
        for (int i = 0; i < nn; i++) {
            double local[3] = {0, 0, 0};
            for (int a = 0; a < 3; a++) {
                const double *row = b->phi + (size_t)(3 * i + a) * K;
                for (int j = 0; j < K; j++) local[a] += row[j] * u[j];
            }
            sc_v3_store(s->ext + 3 * i, sc_v3_scale(sc_m3_mulv(R, sc_v3_load(local)), m->node_mass[i]));
        }
        if ((rc = sc_softbody_step(s, err))) break;
    }
    if (!rc) {
        double c[3] = {0, 0, 0};
        for (int i = 0; i < nn; i++)
            for (int a = 0; a < 3; a++) c[a] += m->node_mass[i] * s->x[3 * i + a] / mass;
        score_end(p, &sc, s->t, c, terms);
    }
    sc_softbody_free(s);
    return rc;
}

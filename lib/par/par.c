/* The MPI side of par.h: the only file that includes mpi.h. */
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/log.h"
#include "par/par.h"

typedef struct thread_pool thread_pool;

struct sc_par {
    int rank, size;
    int threads;                 /* sc_par_set_threads */
    thread_pool *pool;           /* its helpers, started by the first map that needs them */
    double phase[SC_PAR_PHASES]; /* seconds in each phase since sc_par_init (other: unused) */
    double start;                /* MPI_Wtime at sc_par_init */
};

static void pool_destroy(thread_pool *tp);

const char *const sc_par_phase_names[SC_PAR_PHASES] = {"simulate", "wait", "share", "checkpoint", "other"};

void sc_par_time_add(sc_par *p, int phase, double seconds)
{
    if (p && phase >= 0 && phase < SC_PAR_PHASES) p->phase[phase] += seconds;
}

/* Seconds since *t0, added to the phase; *t0 becomes now. */
static void lap(sc_par *p, int phase, double *t0)
{
    double t = MPI_Wtime();
    p->phase[phase] += t - *t0;
    *t0 = t;
}

void sc_par_clock_read(const sc_par *p, int since_start, sc_par_clock *c)
{
    if (since_start) {
        memset(c, 0, sizeof *c);
        c->at = p->start;
        return;
    }
    c->at = MPI_Wtime();
    memcpy(c->phase, p->phase, sizeof c->phase);
}

int sc_par_timeline_mark(sc_par *p, sc_par_clock *since, double *all, sc_err *err)
{
    sc_par_clock now;
    sc_par_clock_read(p, 0, &now);
    double mine[SC_PAR_PHASES], known = 0;
    for (int k = 0; k < SC_PAR_OTHER; k++) known += mine[k] = now.phase[k] - since->phase[k];
    mine[SC_PAR_OTHER] = now.at - since->at - known;
    if (mine[SC_PAR_OTHER] < 0) mine[SC_PAR_OTHER] = 0;
    *since = now;
    if (MPI_Gather(mine, SC_PAR_PHASES, MPI_DOUBLE, all, SC_PAR_PHASES, MPI_DOUBLE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return sc_fail(err, SC_EIO, "MPI_Gather of the timeline failed");
    return SC_OK;
}

int sc_par_init(int *argc, char ***argv, int expected_tasks, sc_par **out, sc_err *err)
{
    *out = NULL;
    int inited = 0;
    MPI_Initialized(&inited);
    /* funneled: a rank's helper threads run tasks, only the thread that called this calls MPI */
    int provided;
    if (!inited && MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return sc_fail(err, SC_EIO, "MPI_Init failed");
    sc_par *p = calloc(1, sizeof *p);
    if (!p) return sc_fail(err, SC_EIO, "out of memory");
    p->threads = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &p->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p->size);
    p->start = MPI_Wtime();
    if (p->size == 1 && expected_tasks > 1) {
        free(p);
        return sc_fail(err, SC_EUSAGE,
                       "this is one MPI process, but SLURM_NTASKS=%d: the tasks were started without a matching MPI launcher "
                       "(mpiexec of another MPI, or srun without PMI), so each would run the whole job alone. Start it with "
                       "mpiexec.mpich -n %d (or unset SLURM_NTASKS to run one process)",
                       expected_tasks, expected_tasks);
    }
    if (p->size > 1) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "[rank %d] ", p->rank);
        sc_log_set_prefix(prefix);
    }
    *out = p;
    return SC_OK;
}

void sc_par_finalize(sc_par *p)
{
    if (p) pool_destroy(p->pool);
    free(p);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
}

void sc_par_abort(sc_par *p, int code)
{
    (void)p;
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

int sc_par_rank(const sc_par *p) { return p->rank; }
int sc_par_size(const sc_par *p) { return p->size; }
int sc_par_threads(const sc_par *p) { return p->threads; }

void sc_par_set_threads(sc_par *p, int n)
{
    n = n < 1 ? 1 : n > 1024 ? 1024 : n;
    if (p->pool && n != p->threads) {
        pool_destroy(p->pool);
        p->pool = NULL;
    }
    p->threads = n;
}

const char *sc_par_library(void)
{
    static char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    char *nl = strchr(v, '\n');
    if (nl) *nl = 0;
    return v;
}

int sc_par_bcast(sc_par *p, void *buf, size_t bytes, int root, sc_err *err)
{
    double t0 = MPI_Wtime();
    char *c = buf;
    while (bytes > 0) { /* MPI counts are ints */
        int n = bytes > (size_t)INT_MAX ? INT_MAX : (int)bytes;
        if (MPI_Bcast(c, n, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS) return sc_fail(err, SC_EIO, "MPI_Bcast failed");
        c += n;
        bytes -= (size_t)n;
    }
    lap(p, SC_PAR_SHARE, &t0);
    return SC_OK;
}

int sc_par_bcast_many(sc_par *p, int n, void *const *buf, const size_t *bytes, const int *root, sc_err *err)
{
    double t0 = MPI_Wtime();
    int parts = 0;
    for (int k = 0; k < n; k++) parts += bytes[k] ? (int)((bytes[k] + (size_t)INT_MAX - 1) / (size_t)INT_MAX) : 0;
    MPI_Request *req = malloc(sizeof *req * (size_t)(parts ? parts : 1));
    if (sc_par_any(p, !req)) {
        free(req);
        return sc_fail(err, SC_EIO, "out of memory for %d broadcasts", n);
    }
    int m = 0, rc = MPI_SUCCESS;
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++)
        for (size_t at = 0; at < bytes[k] && rc == MPI_SUCCESS;) { /* MPI counts are ints */
            int c = bytes[k] - at > (size_t)INT_MAX ? INT_MAX : (int)(bytes[k] - at);
            rc = MPI_Ibcast((char *)buf[k] + at, c, MPI_BYTE, root[k], MPI_COMM_WORLD, &req[m++]);
            at += (size_t)c;
        }
    for (int k = 0; k < m && rc == MPI_SUCCESS; k++) rc = MPI_Wait(&req[k], MPI_STATUS_IGNORE); /* progresses every one */
    free(req);
    lap(p, SC_PAR_SHARE, &t0);
    return rc == MPI_SUCCESS ? SC_OK : sc_fail(err, SC_EIO, "MPI_Ibcast failed");
}

int sc_par_any(sc_par *p, int flag)
{
    (void)p;
    int in = flag != 0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return out;
}

void sc_par_barrier(sc_par *p)
{
    (void)p;
    MPI_Barrier(MPI_COMM_WORLD);
}

int sc_par_gather(sc_par *p, double mine, double *all, sc_err *err)
{
    (void)p;
    if (MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) return sc_fail(err, SC_EIO, "MPI_Gather failed");
    return SC_OK;
}

/* ---- the map ---------------------------------------------------------------------------- */

typedef struct {
    int n;
    size_t rsize;
    sc_par_task task;
    void *ctx;
    char *results;
    int *owner;
    const int *order; /* the task at each position of the run order (NULL: position = task) */
    sc_par *par;      /* its thread count and pool */
} map_job;

static inline int task_at(const map_job *j, int64_t position) { return j->order ? j->order[position] : (int)position; }
static inline int run_task(map_job *j, int thread, int64_t position, sc_err *err)
{
    int i = task_at(j, position);
    return j->task(j->ctx, thread, i, j->results + (size_t)i * j->rsize, err);
}

/* ---- the threads of a rank -------------------------------------------------------------- */

/* A rank's threads: the one that calls sc_par_map (thread 0) and n - 1 helpers that sleep
   between batches. A batch is a range of positions in the run order; each thread claims the next
   under the lock, so when position i fails every one before it has already been claimed and runs
   to its end: the first failing position is the one a single thread would have stopped at. */
struct thread_pool {
    int n;
    struct helper {
        thread_pool *tp;
        pthread_t id;
        int thread;
    } * helper; /* [n - 1], threads 1 .. n - 1 */
    int started;
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;
    unsigned long generation; /* batches started */
    int busy;                 /* helpers still in this batch */
    int quit;
    /* the batch */
    map_job *j;
    int64_t start, end, next, fail_at;
    int (*stop)(void);
    int halt, stopped, fail_rc;
    sc_err fail_err;
    unsigned char *ok; /* [end - start] task completed */
    size_t ok_cap;
    void (*poll)(void *ctx); /* thread 0 calls it between its tasks (NULL: none) */
    void *poll_ctx;
};

/* Claims and runs the batch's tasks until there are none left, one failed or stop() says so. */
static void batch_work(thread_pool *tp, int thread)
{
    sc_err e = {0};
    pthread_mutex_lock(&tp->lock);
    while (!tp->halt && tp->next < tp->end) {
        if (tp->stop && tp->stop()) {
            tp->halt = tp->stopped = 1;
            break;
        }
        int64_t i = tp->next++;
        pthread_mutex_unlock(&tp->lock);
        int rc = run_task(tp->j, thread, i, &e);
        if (thread == 0 && tp->poll) tp->poll(tp->poll_ctx); /* may shrink end or halt: under the lock */
        pthread_mutex_lock(&tp->lock);
        if (!rc) {
            tp->ok[i - tp->start] = 1;
        } else {
            tp->halt = 1;
            if (i < tp->fail_at) {
                tp->fail_at = i;
                tp->fail_rc = rc;
                tp->fail_err = e;
            }
        }
    }
    pthread_mutex_unlock(&tp->lock);
}

static void *helper_main(void *arg)
{
    struct helper *h = arg;
    thread_pool *tp = h->tp;
    unsigned long seen = 0;
    pthread_mutex_lock(&tp->lock);
    for (;;) {
        while (!tp->quit && tp->generation == seen) pthread_cond_wait(&tp->wake, &tp->lock);
        if (tp->quit) break;
        seen = tp->generation;
        pthread_mutex_unlock(&tp->lock);
        batch_work(tp, h->thread);
        pthread_mutex_lock(&tp->lock);
        if (--tp->busy == 0) pthread_cond_signal(&tp->idle);
    }
    pthread_mutex_unlock(&tp->lock);
    return NULL;
}

static void pool_destroy(thread_pool *tp)
{
    if (!tp) return;
    pthread_mutex_lock(&tp->lock);
    tp->quit = 1;
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->lock);
    for (int t = 0; t < tp->started; t++) pthread_join(tp->helper[t].id, NULL);
    pthread_mutex_destroy(&tp->lock);
    pthread_cond_destroy(&tp->wake);
    pthread_cond_destroy(&tp->idle);
    free(tp->helper);
    free(tp->ok);
    free(tp);
}

/* The rank's helpers, started once. They block every signal: the handlers' flags are read by
   the thread that calls MPI, and a signal never interrupts a helper's task. Their stacks are at
   least 8 MiB, a main thread's usual. */
static int pool_start(sc_par *p, sc_err *err)
{
    if (p->pool) return SC_OK;
    thread_pool *tp = calloc(1, sizeof *tp);
    if (!tp || !(tp->helper = calloc((size_t)p->threads, sizeof *tp->helper))) {
        free(tp);
        return sc_fail(err, SC_EIO, "out of memory for %d threads", p->threads);
    }
    tp->n = p->threads;
    pthread_mutex_init(&tp->lock, NULL);
    pthread_cond_init(&tp->wake, NULL);
    pthread_cond_init(&tp->idle, NULL);
    pthread_attr_t attr;
    size_t stack = 0;
    pthread_attr_init(&attr);
    if (!pthread_attr_getstacksize(&attr, &stack) && stack < ((size_t)8 << 20)) pthread_attr_setstacksize(&attr, (size_t)8 << 20);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = 0;
    for (int t = 1; t < tp->n && !rc; t++) {
        struct helper *h = &tp->helper[t - 1];
        *h = (struct helper){tp, 0, t};
        if (!(rc = pthread_create(&h->id, &attr, helper_main, h))) tp->started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc) {
        pool_destroy(tp);
        return sc_fail(err, SC_EIO, "could not start thread %d of %d: %s", 1 + tp->started, p->threads, strerror(rc));
    }
    p->pool = tp;
    return SC_OK;
}

/* Runs tasks [start, start + count) on the rank's pool until none is left (poll may take some
   away), one fails or stop() says so; the outcome in the pool's fields. */
static int pool_run(map_job *j, int64_t start, int64_t count, int (*stop)(void), void (*poll)(void *), void *poll_ctx, sc_err *err)
{
    int rc = pool_start(j->par, err);
    if (rc) return rc;
    thread_pool *tp = j->par->pool;
    if ((size_t)count > tp->ok_cap) {
        unsigned char *ok = realloc(tp->ok, (size_t)count);
        if (!ok) return sc_fail(err, SC_EIO, "out of memory for %lld tasks", (long long)count);
        tp->ok = ok;
        tp->ok_cap = (size_t)count;
    }
    memset(tp->ok, 0, (size_t)count);
    pthread_mutex_lock(&tp->lock);
    tp->j = j;
    tp->start = tp->next = start;
    tp->end = tp->fail_at = start + count;
    tp->stop = stop;
    tp->halt = tp->stopped = tp->fail_rc = 0;
    tp->poll = poll;
    tp->poll_ctx = poll_ctx;
    tp->busy = tp->started;
    tp->generation++;
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->lock);
    batch_work(tp, 0);
    pthread_mutex_lock(&tp->lock);
    while (tp->busy) pthread_cond_wait(&tp->idle, &tp->lock);
    tp->poll = NULL;
    pthread_mutex_unlock(&tp->lock);
    return SC_OK;
}

/* ---- the ranks of a map: a block each, stealing for the tail ------------------------------- */

/* Every rank starts with a contiguous block of the tasks (samples of a segment cost nearly the
   same) and runs it on its threads, which claim one task at a time; its main thread answers
   requests between its own tasks. A rank that runs out asks the others in turn for half of what
   they have left. No rank serves the others while they wait, no thread waits for a batch, and
   nothing goes through rank 0 until the results are shared. */
enum { TAG_STEAL = 103, TAG_GIVE = 104, TAG_HALT = 105 };

typedef struct {
    sc_par *p;
    map_job *j;
    int (*stop)(void);
    int64_t next, end;    /* the tasks this rank has left: [next, end) (the pool's while it runs) */
    thread_pool *running; /* the pool while it runs this rank's tasks */
    int halting;          /* an error or a stop, here or elsewhere: run nothing more */
    int halt_sent, halts_received;
    int status, stopped; /* this rank's own error (its first failing position: fail_at) or stop */
    int64_t fail_at;
    sc_err err;
    double t; /* the timeline's clock */
} rank_share;

/* Between polls of a rank with nothing to run: its core may be shared with a rank that works. */
static void pause_briefly(void)
{
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

/* Tells every other rank to stop running tasks (once). */
static void halt_others(rank_share *R)
{
    R->halting = 1;
    if (R->halt_sent) return;
    R->halt_sent = 1;
    int one = 1;
    for (int r = 0; r < R->p->size; r++)
        if (r != R->p->rank) MPI_Send(&one, 1, MPI_INT, r, TAG_HALT, MPI_COMM_WORLD);
}

/* Answers the requests that have arrived: half of what is left to a thief (the upper half, so
   this rank goes on with its own next task), nothing once halting. */
static void serve(rank_share *R)
{
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_HALT, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            int one;
            MPI_Recv(&one, 1, MPI_INT, st.MPI_SOURCE, TAG_HALT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            R->halts_received++;
            R->halting = 1;
            continue;
        }
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_STEAL, MPI_COMM_WORLD, &flag, &st);
        if (!flag) return;
        MPI_Recv(NULL, 0, MPI_BYTE, st.MPI_SOURCE, TAG_STEAL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        thread_pool *tp = R->running;
        if (tp) pthread_mutex_lock(&tp->lock);
        int64_t *next = tp ? &tp->next : &R->next, *end = tp ? &tp->end : &R->end;
        int64_t give[2] = {0, 0}, left = *end - *next;
        if (!R->halting && left >= 2) {
            give[1] = left / 2;
            give[0] = *end - give[1];
            *end = give[0];
        }
        if (tp) pthread_mutex_unlock(&tp->lock);
        MPI_Send(give, 2, MPI_INT64_T, st.MPI_SOURCE, TAG_GIVE, MPI_COMM_WORLD);
    }
}

/* The pool's main thread, between its tasks: the requests, and a halt from elsewhere stops the
   threads claiming more. */
static void serve_between_tasks(void *arg)
{
    rank_share *R = arg;
    serve(R);
    if (R->halting) {
        pthread_mutex_lock(&R->running->lock);
        R->running->halt = 1;
        pthread_mutex_unlock(&R->running->lock);
    }
}

/* Runs what is left of this rank's tasks, answering requests between them: serially, or on the
   pool, whose main thread answers between its own tasks. */
static void run_block(rank_share *R)
{
    map_job *j = R->j;
    int rank = R->p->rank;
    if (R->p->threads <= 1) {
        while (R->next < R->end && !R->halting) {
            if (R->stop && R->stop()) {
                R->stopped = 1;
                halt_others(R);
                return;
            }
            int64_t i = R->next++;
            int rc = run_task(j, 0, i, &R->err);
            if (rc) {
                R->status = rc;
                R->fail_at = i;
                halt_others(R);
                return;
            }
            j->owner[task_at(j, i)] = rank;
            serve(R);
        }
        return;
    }
    int64_t start = R->next, count = R->end - R->next;
    if (pool_start(R->p, &R->err)) { /* no threads: this rank's error */
        R->status = R->err.code ? R->err.code : SC_EIO;
        R->fail_at = start;
        halt_others(R);
        return;
    }
    thread_pool *tp = R->p->pool;
    R->running = tp;
    int rc = pool_run(j, start, count, R->stop, serve_between_tasks, R, &R->err);
    R->running = NULL;
    if (rc) {
        R->status = rc;
        R->fail_at = start;
        halt_others(R);
        return;
    }
    for (int64_t i = start; i < tp->end; i++)
        if (tp->ok[i - start]) j->owner[task_at(j, i)] = rank;
    R->next = R->end = tp->end;
    if (tp->fail_at < start + count) {
        R->status = tp->fail_rc;
        R->fail_at = tp->fail_at;
        R->err = tp->fail_err;
        halt_others(R);
    } else if (tp->stopped) {
        R->stopped = 1;
        halt_others(R);
    }
}

/* Asks the other ranks in turn for work; 1 when some came. */
static int steal(rank_share *R)
{
    int size = R->p->size, rank = R->p->rank;
    for (int v = 1; v < size && !R->halting; v++) {
        int victim = (rank + v) % size, flag = 0;
        MPI_Send(NULL, 0, MPI_BYTE, victim, TAG_STEAL, MPI_COMM_WORLD);
        int64_t got[2];
        while (!flag) { /* answer the others while the victim finishes its current task */
            MPI_Iprobe(victim, TAG_GIVE, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (!flag) {
                serve(R);
                pause_briefly();
            }
        }
        MPI_Recv(got, 2, MPI_INT64_T, victim, TAG_GIVE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (got[1] > 0 && !R->halting) {
            R->next = got[0];
            R->end = got[0] + got[1];
            return 1;
        }
    }
    return 0;
}

/* This rank's part of a map: its block, then stolen tasks, until there is no work left anywhere
   it can take (or a halt); then it waits for every rank, answering requests meanwhile. */
static void run_share(rank_share *R)
{
    R->t = MPI_Wtime();
    for (;;) {
        serve(R);
        if (!R->halting && R->stop && R->stop()) {
            R->stopped = 1;
            halt_others(R);
        }
        if (R->halting) break;
        if (R->next < R->end) {
            lap(R->p, SC_PAR_SHARE, &R->t);
            run_block(R);
            lap(R->p, SC_PAR_SIMULATE, &R->t);
            continue;
        }
        lap(R->p, SC_PAR_SHARE, &R->t);
        int got = steal(R);
        lap(R->p, SC_PAR_WAIT, &R->t);
        if (!got) break;
    }
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (int flag = 0; !flag;) {
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (!flag) {
            serve(R);
            pause_briefly();
        }
    }
    /* the halts still on their way, so that none is left for the next map */
    int sent = R->halt_sent, total = 0;
    MPI_Allreduce(&sent, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int expect = total - sent; R->halts_received < expect; R->halts_received++) {
        int one;
        MPI_Recv(&one, 1, MPI_INT, MPI_ANY_SOURCE, TAG_HALT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    lap(R->p, SC_PAR_WAIT, &R->t);
}

/* Every rank's results to every rank: owner[] by a max-reduction (-1 where a rank did not run
   the task), then each rank's records, packed in task order, by one all-gather. */
static int share_results(sc_par *p, map_job *j, sc_err *err)
{
    double t = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, j->owner, j->n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int size = p->size, mine = 0;
    for (int i = 0; i < j->n; i++) mine += j->owner[i] == p->rank;
    int *count = malloc(sizeof(int) * 2 * (size_t)size), *displ = count ? count + size : NULL;
    char *packed = malloc((size_t)(mine ? mine : 1) * j->rsize), *all = malloc((size_t)(j->n ? j->n : 1) * j->rsize);
    int rc = SC_OK;
    if (!count || !packed || !all) rc = sc_fail(err, SC_EIO, "out of memory sharing %d results", j->n);
    else if ((double)j->n * (double)j->rsize > INT_MAX)
        rc = sc_fail(err, SC_EIO, "%d results of %zu bytes: too many to share at once", j->n, j->rsize);
    int any = 0;
    MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && !rc) rc = sc_fail(err, SC_EIO, "another rank could not share its results (out of memory)");
    if (!rc) {
        size_t at = 0;
        for (int i = 0; i < j->n; i++)
            if (j->owner[i] == p->rank) memcpy(packed + j->rsize * at++, j->results + (size_t)i * j->rsize, j->rsize);
        int bytes = mine * (int)j->rsize;
        MPI_Allgather(&bytes, 1, MPI_INT, count, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0, d = 0; r < size; r++) {
            displ[r] = d;
            d += count[r];
        }
        MPI_Allgatherv(packed, bytes, MPI_BYTE, all, count, displ, MPI_BYTE, MPI_COMM_WORLD);
        for (int i = 0; i < j->n; i++) {
            int r = j->owner[i];
            memcpy(j->results + (size_t)i * j->rsize, all + displ[r], j->rsize);
            displ[r] += (int)j->rsize;
        }
    }
    free(count);
    free(packed);
    free(all);
    lap(p, SC_PAR_SHARE, &t);
    return rc;
}

static const double *g_order_cost; /* qsort has no context argument; only a rank's main thread orders */
static int by_cost_descending(const void *a, const void *b)
{
    int i = *(const int *)a, k = *(const int *)b;
    double ci = g_order_cost[i], ck = g_order_cost[k];
    return ci > ck ? -1 : ci < ck ? 1 : (i > k) - (i < k);
}

/* The run order (longest first, so every rank and thread ends on its shortest tasks: the tail is
   short) and this rank's block of it: the positions whose cost, summed from the start, falls in
   its 1/size share of the total. */
static int order_by_cost(const sc_par *p, int n, const double *cost, int *order, int64_t *first, int64_t *end)
{
    double total = 0, sum = 0;
    for (int i = 0; i < n; i++) {
        if (!(cost[i] >= 0) || !isfinite(cost[i])) return 0; /* not a cost: equal blocks */
        order[i] = i;
        total += cost[i];
    }
    if (!(total > 0)) return 0;
    g_order_cost = cost;
    qsort(order, (size_t)n, sizeof *order, by_cost_descending);
    g_order_cost = NULL;
    *first = *end = n;
    double from = total * p->rank / p->size, to = total * (p->rank + 1) / p->size;
    for (int64_t k = 0; k < n; k++) { /* position k belongs to the rank whose share holds its cost's midpoint */
        double mid = sum + 0.5 * cost[order[k]];
        if (mid >= from && *first == n) *first = k;
        if (mid >= to) {
            *end = k;
            break;
        }
        sum += cost[order[k]];
    }
    if (p->rank == p->size - 1) *end = n;
    if (*end < *first) *end = *first;
    return 1;
}

int sc_par_map(sc_par *p, int n, size_t result_size, sc_par_task task, void *ctx, int (*stop)(void), void *results, int *owner, int *stopped,
               sc_err *err)
{
    return sc_par_map_weighted(p, n, NULL, result_size, task, ctx, stop, results, owner, stopped, err);
}

int sc_par_map_weighted(sc_par *p, int n, const double *cost, size_t result_size, sc_par_task task, void *ctx, int (*stop)(void), void *results,
                        int *owner, int *stopped, sc_err *err)
{
    map_job j = {n, result_size, task, ctx, results, owner, NULL, p};
    *stopped = 0;
    int *own = owner ? owner : malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *order = cost ? malloc(sizeof(int) * (size_t)(n ? n : 1)) : NULL;
    int no_memory = !own || (cost && !order);
    if (sc_par_any(p, no_memory)) {
        if (!owner) free(own);
        free(order);
        return sc_fail(err, SC_EIO, "out of memory for a map of %d tasks", n);
    }
    j.owner = own;
    for (int i = 0; i < n; i++) own[i] = -1;
    rank_share R = {.p = p, .j = &j, .stop = stop, .next = (int64_t)n * p->rank / p->size, .end = (int64_t)n * (p->rank + 1) / p->size};
    if (cost && order_by_cost(p, n, cost, order, &R.next, &R.end)) j.order = order;
    sc_err_clear(&R.err);
    if (p->size == 1) { /* alone: nothing to steal or share */
        double t = MPI_Wtime();
        run_block(&R);
        lap(p, SC_PAR_SIMULATE, &t);
        if (!owner) free(own);
        free(order);
        if (R.status) *err = R.err;
        *stopped = R.stopped && !R.status;
        return R.status;
    }
    run_share(&R);
    /* the outcome: the error of the first failing position among those that ran (the others stopped
       at the first halt), else a stop anywhere, else every result everywhere */
    int fail[2] = {R.status ? (int)R.fail_at : INT_MAX, p->rank}, first[2], any_stop = 0;
    MPI_Allreduce(fail, first, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    MPI_Allreduce(&R.stopped, &any_stop, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    int rc = SC_OK;
    if (first[0] != INT_MAX) {
        int code = R.status;
        if (p->rank == first[1]) *err = R.err;
        MPI_Bcast(&code, 1, MPI_INT, first[1], MPI_COMM_WORLD);
        MPI_Bcast(err->msg, SC_ERR_MSG, MPI_CHAR, first[1], MPI_COMM_WORLD);
        err->code = code;
        rc = code;
    } else if (any_stop) {
        *stopped = 1;
    } else {
        rc = share_results(p, &j, err);
    }
    if (!owner) free(own);
    free(order);
    return rc;
}

int sc_par_share_bytes(sc_par *p, int rc, unsigned char **data, size_t *n, sc_err *err)
{
    int64_t len = 0;
    if (sc_par_rank(p) == 0) len = rc ? -rc : (int64_t)*n;
    else *data = NULL;
    sc_par_bcast(p, &len, sizeof len, 0, err);
    sc_par_bcast(p, err->msg, SC_ERR_MSG, 0, err);
    if (len < 0) {
        free(*data);
        *data = NULL;
        err->code = (int)-len;
        return (int)-len;
    }
    if (!*data && !(*data = malloc((size_t)len + 1))) return sc_fail(err, SC_EIO, "out of memory for %lld shared bytes", (long long)len);
    if ((rc = sc_par_bcast(p, *data, (size_t)len, 0, err))) {
        free(*data);
        *data = NULL;
        return rc;
    }
    *n = (size_t)len;
    return SC_OK;
}

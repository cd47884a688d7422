/* The MPI side of par.h: the only file that includes mpi.h. */
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "par/par.h"

typedef struct thread_pool thread_pool;

struct sc_par {
    int rank, size;
    int threads;                 /* sc_par_set_threads */
    thread_pool *pool;           /* its helpers, started by the first map that needs them */
    double phase[SC_PAR_PHASES]; /* seconds since the last mark */
    double mark;                 /* MPI_Wtime of the last mark */
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

int sc_par_timeline_mark(sc_par *p, double *all, sc_err *err)
{
    double now = MPI_Wtime(), mine[SC_PAR_PHASES], known = 0;
    for (int k = 0; k < SC_PAR_OTHER; k++) known += p->phase[k];
    p->phase[SC_PAR_OTHER] = now - p->mark - known;
    if (p->phase[SC_PAR_OTHER] < 0) p->phase[SC_PAR_OTHER] = 0;
    memcpy(mine, p->phase, sizeof mine);
    memset(p->phase, 0, sizeof p->phase);
    p->mark = now;
    if (MPI_Gather(mine, SC_PAR_PHASES, MPI_DOUBLE, all, SC_PAR_PHASES, MPI_DOUBLE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return sc_fail(err, SC_EIO, "MPI_Gather of the timeline failed");
    return SC_OK;
}

enum { TAG_WORK = 101, TAG_RESULT = 102 };

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
    p->mark = MPI_Wtime();
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

/* A result message: this header, then the error text (when status != 0), then the results. */
typedef struct {
    int64_t start, done, status, stop;
} result_header;

typedef struct {
    int n;
    size_t rsize;
    sc_par_task task;
    void *ctx;
    char *results;
    int *owner;
    sc_par *par; /* its thread count and pool */
} map_job;

/* ---- the threads of a rank -------------------------------------------------------------- */

/* A rank's threads: the one that calls sc_par_map (thread 0) and n - 1 helpers that sleep
   between batches. A batch is a range of tasks; each thread claims the next index under the
   lock, so when task i fails every index below i has already been claimed and runs to its end:
   the lowest failing index is the one a single thread would have stopped at. */
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
        map_job *j = tp->j;
        int rc = j->task(j->ctx, thread, (int)i, j->results + (size_t)i * j->rsize, &e);
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

/* Runs tasks [start, start + count) on this rank's threads. *done: how many of them, from
   start, completed (a prefix: the tasks after the first unfinished one do not count); owner[i]
   = rank for those. Returns 0, a task's error (the lowest failing index's), or -1 when stop()
   ended the range early. */
static int run_range(map_job *j, int64_t start, int64_t count, int rank, int (*stop)(void), int64_t *done, sc_err *err)
{
    *done = 0;
    if (!j->par || j->par->threads <= 1 || count <= 1) {
        for (int64_t i = start; i < start + count; i++) {
            if (stop && stop()) return -1;
            int rc = j->task(j->ctx, 0, (int)i, j->results + (size_t)i * j->rsize, err);
            if (rc) return rc;
            if (j->owner) j->owner[i] = rank;
            (*done)++;
        }
        return 0;
    }
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
    tp->busy = tp->started;
    tp->generation++;
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->lock);
    batch_work(tp, 0);
    pthread_mutex_lock(&tp->lock);
    while (tp->busy) pthread_cond_wait(&tp->idle, &tp->lock);
    pthread_mutex_unlock(&tp->lock);
    while (*done < count && tp->ok[*done]) {
        if (j->owner) j->owner[start + *done] = rank;
        (*done)++;
    }
    if (tp->fail_at < start + count) {
        *err = tp->fail_err;
        return tp->fail_rc;
    }
    return tp->stopped ? -1 : 0;
}

static void worker(sc_par *p, map_job *j, int chunk, int (*stop)(void))
{
    size_t cap = sizeof(result_header) + SC_ERR_MSG + (size_t)chunk * j->rsize;
    char *msg = malloc(cap);
    int64_t queue[4][2];
    int nq = 0, halted = 0, ended = 0;
    int64_t status = 0;
    sc_err err = {0};
    double t = MPI_Wtime();
    while (!ended) {
        /* take every chunk that has arrived; wait for one if there is nothing to do */
        for (;;) {
            int flag = 0;
            MPI_Status st;
            if (nq == 0) flag = 1;
            else MPI_Iprobe(0, TAG_WORK, MPI_COMM_WORLD, &flag, &st);
            if (!flag) break;
            int64_t w[2];
            MPI_Recv(w, 2, MPI_INT64_T, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            lap(p, nq == 0 ? SC_PAR_WAIT : SC_PAR_SHARE, &t);
            if (w[1] == 0) {
                ended = 1;
                break;
            }
            queue[nq][0] = w[0];
            queue[nq][1] = w[1];
            nq++;
        }
        if (ended) break;
        int64_t start = queue[0][0], count = queue[0][1], done = 0;
        memmove(queue[0], queue[1], sizeof queue[0] * (size_t)(--nq));
        if (!halted) {
            int rc = run_range(j, start, count, p->rank, stop, &done, &err);
            if (rc > 0) status = rc;
            if (rc) halted = 1;
        }
        lap(p, SC_PAR_SIMULATE, &t);
        result_header h = {start, done, status, halted};
        size_t len = sizeof h;
        memcpy(msg, &h, sizeof h);
        if (status) {
            memcpy(msg + len, err.msg, SC_ERR_MSG);
            len += SC_ERR_MSG;
        }
        if (msg) {
            memcpy(msg + len, j->results + (size_t)start * j->rsize, (size_t)done * j->rsize);
            len += (size_t)done * j->rsize;
        }
        MPI_Send(msg, (int)len, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
        lap(p, SC_PAR_SHARE, &t);
    }
    free(msg);
}

static void master(sc_par *p, map_job *j, int chunk, int (*stop)(void), int64_t *status, int *stopped, sc_err *err)
{
    int64_t next = 0;
    int *outstanding = calloc((size_t)p->size, sizeof(int)), total_out = 0, halting = 0;
    size_t cap = sizeof(result_header) + SC_ERR_MSG + (size_t)chunk * j->rsize;
    char *msg = malloc(cap);
    double t = MPI_Wtime();
    for (int w = 1; w < p->size; w++)
        for (int q = 0; q < 2 && next < j->n; q++) {
            int64_t c = next + chunk <= j->n ? chunk : j->n - next, work[2] = {next, c};
            MPI_Send(work, 2, MPI_INT64_T, w, TAG_WORK, MPI_COMM_WORLD);
            next += c;
            outstanding[w]++;
            total_out++;
        }
    for (;;) {
        /* serve every result that has arrived; block only when there is nothing else to do */
        for (;;) {
            int flag = 0;
            MPI_Status st;
            int local_work = !halting && next < j->n;
            if (total_out == 0) break;
            if (local_work) MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &st);
            else {
                lap(p, SC_PAR_SHARE, &t);
                MPI_Probe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
                lap(p, SC_PAR_WAIT, &t);
                flag = 1;
            }
            if (!flag) break;
            int len;
            MPI_Get_count(&st, MPI_BYTE, &len);
            int src = st.MPI_SOURCE;
            MPI_Recv(msg, len, MPI_BYTE, src, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            result_header h;
            memcpy(&h, msg, sizeof h);
            size_t off = sizeof h;
            if (h.status) {
                if (!*status) {
                    *status = h.status;
                    memcpy(err->msg, msg + off, SC_ERR_MSG);
                    err->msg[SC_ERR_MSG - 1] = 0;
                    err->code = (int)h.status;
                }
                off += SC_ERR_MSG;
            }
            memcpy(j->results + (size_t)h.start * j->rsize, msg + off, (size_t)h.done * j->rsize);
            if (j->owner)
                for (int64_t i = h.start; i < h.start + h.done; i++) j->owner[i] = src;
            outstanding[src]--;
            total_out--;
            if (h.status || h.stop) halting = 1;
            if (!halting && next < j->n) {
                int64_t c = next + chunk <= j->n ? chunk : j->n - next, work[2] = {next, c};
                MPI_Send(work, 2, MPI_INT64_T, src, TAG_WORK, MPI_COMM_WORLD);
                next += c;
                outstanding[src]++;
                total_out++;
            }
        }
        if (!halting && stop && stop()) halting = 1;
        if (!halting && next < j->n) {
            int64_t done;
            sc_err terr = {0};
            lap(p, SC_PAR_SHARE, &t);
            int rc = run_range(j, next, 1, 0, NULL, &done, &terr);
            lap(p, SC_PAR_SIMULATE, &t);
            next++;
            if (rc) {
                halting = 1;
                if (!*status) {
                    *status = rc;
                    *err = terr;
                }
            }
            continue;
        }
        if (total_out == 0) break;
    }
    int64_t end[2] = {0, 0};
    for (int w = 1; w < p->size; w++) MPI_Send(end, 2, MPI_INT64_T, w, TAG_WORK, MPI_COMM_WORLD);
    lap(p, SC_PAR_SHARE, &t);
    *stopped = halting && !*status;
    free(outstanding);
    free(msg);
}

int sc_par_map(sc_par *p, int n, size_t result_size, sc_par_task task, void *ctx, int (*stop)(void), void *results, int *owner, int *stopped,
               sc_err *err)
{
    map_job j = {n, result_size, task, ctx, results, owner, p};
    *stopped = 0;
    /* chunks small enough to balance, large enough that rank 0 is not asked too often */
    int chunk = n / (p->size * 16);
    chunk = chunk < 1 ? 1 : chunk > 8 ? 8 : chunk;
    int64_t status = 0;
    double t = MPI_Wtime();
    if (p->size == 1) {
        int64_t done;
        int rc = run_range(&j, 0, n, 0, stop, &done, err);
        lap(p, SC_PAR_SIMULATE, &t);
        if (rc > 0) return rc;
        *stopped = rc < 0;
        return SC_OK;
    }
    if (p->rank == 0) master(p, &j, chunk, stop, &status, stopped, err);
    else worker(p, &j, chunk, stop);
    /* everyone learns the outcome (waiting here for the slowest rank: the tail) and every result */
    t = MPI_Wtime();
    int64_t outcome[2] = {status, *stopped};
    MPI_Bcast(outcome, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(err->msg, SC_ERR_MSG, MPI_CHAR, 0, MPI_COMM_WORLD);
    lap(p, SC_PAR_WAIT, &t);
    if (outcome[0]) {
        err->code = (int)outcome[0];
        return (int)outcome[0];
    }
    *stopped = (int)outcome[1];
    if (*stopped) return SC_OK;
    int rc = sc_par_bcast(p, results, (size_t)n * result_size, 0, err);
    if (!rc && owner) rc = sc_par_bcast(p, owner, (size_t)n * sizeof(int), 0, err);
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

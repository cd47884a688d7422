/* sc_par_map on one rank's threads (in a child process: MPI is initialized once per process):
 * every task run once with its results in place, the lowest failing index's error whichever
 * thread fails first, a stop that leaves a prefix of completed tasks. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "par/par.h"
#include "test.h"

typedef struct {
    int fail_a, fail_b; /* indices that fail (-1: none); fail_a sleeps first, so fail_b fails earlier */
} task_ctx;

static atomic_int g_ran;

static int square_task(void *ctx, int thread, int i, void *result, sc_err *err)
{
    const task_ctx *c = ctx;
    atomic_fetch_add(&g_ran, 1);
    if (i == c->fail_a) {
        usleep(100000);
        return sc_fail(err, SC_EINPUT, "task %d failed", i);
    }
    if (i == c->fail_b) return sc_fail(err, SC_ENUMERIC, "task %d failed", i);
    usleep(2000);
    long *r = result;
    r[0] = (long)i * i;
    r[1] = thread;
    return SC_OK;
}

static int stop_after_8(void) { return atomic_load(&g_ran) >= 8; }

/* The child's checks: 0 when all hold, else the line of the first that does not. */
static int child_checks(char *msg, size_t n)
{
    sc_par *p;
    sc_err err = {0};
    if (sc_par_init(NULL, NULL, 0, &p, &err)) return snprintf(msg, n, "sc_par_init: %s", err.msg), __LINE__;
    sc_par_set_threads(p, 3);
    if (sc_par_threads(p) != 3) return __LINE__;
    enum { N = 40 };
    long res[N][2];
    int owner[N], stopped = 1;
    task_ctx ok = {-1, -1};
    memset(res, 0, sizeof res);
    for (int round = 0; round < 2; round++) { /* the second reuses the pool */
        if (sc_par_map(p, N, sizeof res[0], square_task, &ok, NULL, res, owner, &stopped, &err) || stopped)
            return snprintf(msg, n, "map: %s", err.msg), __LINE__;
        for (int i = 0; i < N; i++)
            if (res[i][0] != (long)i * i || res[i][1] < 0 || res[i][1] >= 3 || owner[i] != 0)
                return snprintf(msg, n, "task %d: %ld on thread %ld", i, res[i][0], res[i][1]), __LINE__;
    }
    /* task 7 fails at once, task 5 only after 0.1 s: the error is task 5's, as on one thread */
    task_ctx bad = {5, 7};
    int rc = sc_par_map(p, N, sizeof res[0], square_task, &bad, NULL, res, owner, &stopped, &err);
    if (rc != SC_EINPUT || strcmp(err.msg, "task 5 failed")) return snprintf(msg, n, "rc %d: %s", rc, err.msg), __LINE__;
    atomic_store(&g_ran, 0);
    rc = sc_par_map(p, N, sizeof res[0], square_task, &ok, stop_after_8, res, owner, &stopped, &err);
    if (rc || !stopped) return snprintf(msg, n, "stop: rc %d, stopped %d", rc, stopped), __LINE__;
    if (atomic_load(&g_ran) >= N) return snprintf(msg, n, "stop: all %d tasks ran", N), __LINE__;
    /* back to one thread: the pool goes, the map runs on the caller */
    sc_par_set_threads(p, 1);
    if (sc_par_map(p, N, sizeof res[0], square_task, &ok, NULL, res, owner, &stopped, &err) || stopped || res[N - 1][1] != 0) return __LINE__;
    sc_par_finalize(p);
    return 0;
}

TEST(par_map_on_threads_runs_every_task_and_reports_the_lowest_failure)
{
    int fd, pid = sc_test_fork(&fd);
    ENSURE(pid >= 0);
    if (pid == 0) {
        char msg[512] = "";
        int line = child_checks(msg, sizeof msg);
        dprintf(fd, "%d %s", line, msg);
        _exit(0);
    }
    char buf[1024];
    int status = 0;
    size_t got = sc_test_child_output(pid, fd, buf, sizeof buf, &status);
    ENSURE_MSG(got > 0 && WIFEXITED(status), "the child ended without a word (status %d)", status);
    int line = -1;
    ENSURE(sscanf(buf, "%d", &line) == 1);
    ENSURE_MSG(line == 0, "check at tests/test_par.c:%d failed: %s", line, buf);
    sc_test_report("3 threads: 40 tasks twice on one pool, results in place; task 7 failing before task 5 still reports task 5's "
                   "error; a stop after 8 tasks leaves the map stopped");
}

/* ---- several ranks: blocks, steals, halts ------------------------------------------------------ */

typedef struct {
    int slow_below; /* tasks below it take 20 ms, the rest 2 ms: the first block's rank is robbed */
    int fail_a, fail_b;
} ranks_ctx;

static int ranks_task(void *ctx, int thread, int i, void *result, sc_err *err)
{
    const ranks_ctx *c = ctx;
    (void)thread;
    if (i == c->fail_a || i == c->fail_b) return sc_fail(err, SC_EINPUT, "task %d failed", i);
    usleep(i < c->slow_below ? 20000 : 2000);
    *(long *)result = 3L * i + 1;
    atomic_fetch_add(&g_ran, 1);
    return SC_OK;
}

static int stop_after_5(void) { return atomic_load(&g_ran) >= 5; }

/* One rank's checks; every rank must see the same outcomes. 0, else the failing line. */
static int ranks_checks(sc_par *p, int threads)
{
    enum { N = 60 };
    long res[N];
    int owner[N], stopped = 0, rank = sc_par_rank(p), size = sc_par_size(p);
    sc_err err = {0};
    sc_par_set_threads(p, threads);
    ranks_ctx slow = {N / size, -1, -1}, bad = {0, 37, 41};
    for (int round = 0; round < 2; round++) {
        memset(res, 0, sizeof res);
        if (sc_par_map(p, N, sizeof res[0], ranks_task, &slow, NULL, res, owner, &stopped, &err) || stopped) return __LINE__;
        int robbed = 0;
        for (int i = 0; i < N; i++) {
            if (res[i] != 3L * i + 1 || owner[i] < 0 || owner[i] >= size) return __LINE__;
            robbed += i < N / size && owner[i] != 0;
        }
        if (!robbed) return __LINE__; /* the slow first block was shared out */
        /* a failure stops every rank with the same error, and leaves no message behind */
        int rc = sc_par_map(p, N, sizeof res[0], ranks_task, &bad, NULL, res, owner, &stopped, &err);
        if (rc != SC_EINPUT || (strcmp(err.msg, "task 37 failed") && strcmp(err.msg, "task 41 failed"))) return __LINE__;
        int is37 = !strcmp(err.msg, "task 37 failed"), some37 = sc_par_any(p, is37), some41 = sc_par_any(p, !is37);
        if (some37 && some41) return __LINE__;
        /* a stop seen by one rank stops them all */
        atomic_store(&g_ran, 0);
        rc = sc_par_map(p, N, sizeof res[0], ranks_task, &slow, rank == size - 1 ? stop_after_5 : NULL, res, owner, &stopped, &err);
        if (rc || !stopped) return __LINE__;
    }
    /* with costs the costliest task runs first, on rank 0, though it lies in the last rank's equal block */
    double cost[N];
    for (int i = 0; i < N; i++) cost[i] = i == N - 2 ? 100 : 1 + i % 3;
    ranks_ctx fast = {0, -1, -1};
    memset(res, 0, sizeof res);
    if (sc_par_map_weighted(p, N, cost, sizeof res[0], ranks_task, &fast, NULL, res, owner, &stopped, &err) || stopped) return __LINE__;
    for (int i = 0; i < N; i++)
        if (res[i] != 3L * i + 1 || owner[i] < 0 || owner[i] >= size) return __LINE__;
    if (owner[N - 2] != 0) return __LINE__;
    return 0;
}

int sc_test_par_ranks(int threads)
{
    sc_par *p;
    sc_err err = {0};
    if (sc_par_init(NULL, NULL, 0, &p, &err)) return fprintf(stderr, "sc_par_init: %s\n", err.msg), 2;
    int line = ranks_checks(p, threads);
    int failed = sc_par_any(p, line != 0);
    if (line) fprintf(stderr, "rank %d: check at tests/test_par.c:%d failed\n", sc_par_rank(p), line);
    sc_par_finalize(p);
    return failed ? 1 : 0;
}

TEST(par_map_on_ranks_steals_halts_and_stops_together)
{
    char out[8192];
    static const char *const layouts[][2] = {{"3", "1"}, {"2", "2"}};
    for (size_t k = 0; k < 2; k++) {
        int rc = sc_test_sh(out, sizeof out, "mpiexec.mpich -n %s %s --par-ranks %s", layouts[k][0], sc_test_self(), layouts[k][1]);
        ENSURE_MSG(rc == 0, "%s ranks x %s threads: exit %d: %s", layouts[k][0], layouts[k][1], rc, out);
    }
    sc_test_report("3 ranks x 1 thread and 2 x 2, twice each: 60 tasks with results and owners everywhere, the slow first block "
                   "shared out by stealing; a failure on one rank is the same error on all; a stop on the last rank stops all; "
                   "no message left between maps; with costs, the costliest task (in the last rank's equal block) runs on rank 0");
}

/* --threads does something only in the MPI tools; the others refuse it rather than ignore it */
TEST(threads_option_refused_by_the_one_thread_tools)
{
    static const char *const tools[] = {"mesh-prep", "skin-weights", "inverse-dynamics", "simulate", "render"};
    char out[4096];
    for (size_t t = 0; t < sizeof tools / sizeof *tools; t++) {
        int rc = sc_test_sh(out, sizeof out, "%s --threads 2 -c none.yaml -o none.h5 a b", sc_test_tool(tools[t]));
        ENSURE_MSG(rc == 1 && strstr(out, "option --threads"), "%s --threads 2: exit %d: %s", tools[t], rc, out);
    }
    int rc = sc_test_sh(out, sizeof out, "%s --help", sc_test_tool("sample-openloop"));
    ENSURE_MSG(rc == 0 && strstr(out, "--threads N"), "sample-openloop --help: %s", out);
    sc_test_report("mesh-prep, skin-weights, inverse-dynamics, simulate, render: --threads is exit 1 naming it; sample-openloop lists it");
}

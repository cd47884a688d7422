/* Processes working together under MPI (the only file that includes mpi.h). A tool calls
 * sc_par_init once; without mpiexec it runs as one rank. Work is spread by sc_par_map: each
 * rank starts with a contiguous block of the tasks and runs it on its threads; a rank that runs
 * out takes half of what another has left (work stealing), so no rank serves the others and a
 * slow rank does not hold them up. What a task computes must depend on its index alone (never on
 * the rank or thread), so results are the same whatever the number of processes and threads. */
#ifndef SC_PAR_H
#define SC_PAR_H
#include <stddef.h>
#include "core/status.h"

typedef struct sc_par sc_par;

/* MPI_Init; refuses (SC_EUSAGE) to run as a single rank when expected_tasks (the job's task
 * count, SLURM_NTASKS in the tools; 0: unknown) says the job has more (an mpiexec from another
 * MPI started N independent copies). */
int sc_par_init(int *argc, char ***argv, int expected_tasks, sc_par **out, sc_err *err);
void sc_par_finalize(sc_par *p);
/* Ends every rank of the job with this exit code (for errors one rank sees alone). */
void sc_par_abort(sc_par *p, int code) __attribute__((noreturn));
int sc_par_rank(const sc_par *p);
int sc_par_size(const sc_par *p);
/* MPI implementation and version, for provenance. */
const char *sc_par_library(void);
/* Threads of this rank that run sc_par_map's tasks (1 by default: the caller alone; at most
 * 1024). The helpers start at the first map that needs them and are joined by sc_par_finalize.
 * Each task gets its thread's index in [0, n) for its per-thread state; results stay a function
 * of the task's index alone. */
void sc_par_set_threads(sc_par *p, int n);
int sc_par_threads(const sc_par *p);

int sc_par_bcast(sc_par *p, void *buf, size_t bytes, int root, sc_err *err);
/* n broadcasts at once (buf[k], bytes[k] from root[k]; every rank gives the same bytes and roots):
 * they overlap instead of waiting for each other. */
int sc_par_bcast_many(sc_par *p, int n, void *const *buf, const size_t *bytes, const int *root, sc_err *err);
/* 1 on every rank if flag is non-zero on any rank. */
/* Gives every rank what rank 0 got: its status rc (with its error message) and, when rc is
 * SC_OK, its *n bytes at *data (malloc'd on the other ranks). On an error *data is freed and NULL
 * on every rank and the same code is returned everywhere. */
int sc_par_share_bytes(sc_par *p, int rc, unsigned char **data, size_t *n, sc_err *err);
int sc_par_any(sc_par *p, int flag);
void sc_par_barrier(sc_par *p);

/* Runs task(ctx, thread, i, results + i * result_size) for i in [0, n) across the ranks and
 * each rank's threads (thread: the index of the rank's thread that runs it). Afterwards
 * every rank holds all results and owner[i], the rank that ran task i. A task returning
 * non-zero is an error: the map stops and every rank returns that code with the message (the
 * task fills err; of several failing tasks that ran, the one first in the run order: on one rank
 * and thread the one it stopped at). stop (may be NULL) is polled between tasks on every rank; when it returns non-zero
 * anywhere, every rank stops taking tasks and returns with *stopped = 1 (results incomplete). */
typedef int (*sc_par_task)(void *ctx, int thread, int i, void *result, sc_err *err);
int sc_par_map(sc_par *p, int n, size_t result_size, sc_par_task task, void *ctx, int (*stop)(void), void *results, int *owner, int *stopped,
               sc_err *err);
/* The same with each task's expected cost (e.g. its steps; NULL, or any negative or non-finite
 * value: all equal). Tasks run longest first, and each rank starts with an equal share of the
 * total cost: no rank or thread is left with a long task at the end. Which rank runs what changes,
 * never the results. */
int sc_par_map_weighted(sc_par *p, int n, const double *cost, size_t result_size, sc_par_task task, void *ctx, int (*stop)(void), void *results,
                        int *owner, int *stopped, sc_err *err);

/* ---- the timeline: where each rank's wall time goes ---------------------------------------
 * simulate: running tasks; wait: blocked for work, for results or for the slowest rank at the
 * end of a map (the tail); share: moving results and states (the map's gathering, sc_par_bcast,
 * sc_par_share_bytes); checkpoint: noted by the caller (sc_par_time_add); other: the rest of the
 * wall time (selection, set-up). */
enum { SC_PAR_SIMULATE, SC_PAR_WAIT, SC_PAR_SHARE, SC_PAR_CHECKPOINT, SC_PAR_OTHER, SC_PAR_PHASES };
extern const char *const sc_par_phase_names[SC_PAR_PHASES];
void sc_par_time_add(sc_par *p, int phase, double seconds);
/* A reading of this rank's clock: a timeline row runs from one reading to the next. */
typedef struct sc_par_clock {
    double at, phase[SC_PAR_PHASES];
} sc_par_clock;
/* Now (since_start = 0), or the moment sc_par_init began (1: the whole run). */
void sc_par_clock_read(const sc_par *p, int since_start, sc_par_clock *c);
/* Collective: this rank's seconds per phase since *since (then read again), gathered into
 * all[size * SC_PAR_PHASES] on rank 0 (all may be NULL elsewhere). */
int sc_par_timeline_mark(sc_par *p, sc_par_clock *since, double *all, sc_err *err);
/* Collective: every rank's value into all[size] on rank 0 (all may be NULL elsewhere). */
int sc_par_gather(sc_par *p, double mine, double *all, sc_err *err);

#endif

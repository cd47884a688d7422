/* The start, error exit, signals and checks the long-running MPI tools share (longrun.h). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/cleanup.h"
#include "core/log.h"
#include "environment.h"
#include "longrun.h"
#include "par/par.h"

static const sc_cli *g_cli;
static sc_par *g_par;
static volatile sig_atomic_t g_stop;

void sc_longrun_begin(const sc_cli *cli, sc_par *par)
{
    g_cli = cli;
    g_par = par;
}

static sc_longrun_opts g_opts;

static void finalize(void)
{
    if (g_par) sc_par_finalize(g_par);
    g_par = NULL;
}

static int longrun_opt(const char *name, const char *value, int *used)
{
    *used = 1;
    if (!strcmp(name, "--resume")) return g_opts.resume = 1;
    if (!strcmp(name, "--checkpoint") && value) {
        *used = 2;
        g_opts.checkpoint = value;
        return 1;
    }
    return 0;
}

static int agree(int code, sc_err *err);

int sc_longrun_start(sc_cli *cli, int *argc, char ***argv, const char *usage, int ninputs, int checkpoints, sc_longrun_opts *opts, sc_par **par)
{
    sc_err err = {0};
    *par = NULL;
    sc_longrun_begin(cli, NULL);
    sc_environment_apply();
    if (sc_par_init(argc, argv, sc_environment_tasks(), par, &err)) sc_longrun_die(&err);
    sc_longrun_begin(cli, *par);
    int rank = sc_par_rank(*par);
    sc_cli_set_die(sc_longrun_die); /* a clash of files: rank 0 says so, every rank finalizes */
    sc_cli_set_leave(finalize);
    sc_cli_take_threads();
    /* the output's lock is rank 0's alone, taken with the checkpoint's (sc_longrun_checkpoint) */
    sc_cli_parse(cli, *argc, *argv, cli->tool, usage, ninputs, ninputs, 1, SC_CLI_OUTPUT | SC_CLI_DEFER_LOCK, checkpoints ? longrun_opt : NULL);
    *opts = g_opts;
    sc_par_set_threads(*par, cli->threads);
    if (rank != 0 && sc_log_level() > SC_LOG_WARN) sc_log_set_level(SC_LOG_WARN);
    if (checkpoints) sc_longrun_catch_signals();
    else if (agree(rank == 0 ? sc_cli_lock(cli->output, "output", cli->argc, cli->argv, &err) : 0, &err))
        sc_longrun_die(&err); /* no checkpoint to take it with */
    return rank;
}

void sc_longrun_die(const sc_err *err)
{
    if (!g_par || sc_par_rank(g_par) == 0) fprintf(stderr, "%s: error: %s\n", g_cli && g_cli->tool ? g_cli->tool : "softcon", err->msg);
    sc_longrun_exit(err->code ? err->code : 1);
}

void sc_longrun_exit(int code)
{
    if (!g_par) exit(code);
    if (!g_stop || !code || !getenv("PMI_RANK")) { /* no process manager (a singleton): the exit is the status */
        sc_par_finalize(g_par);
        exit(code);
    }
    /* Signalled, mpiexec.mpich (Hydra 4.0) reports 0 for the ranks it reaps last, so exit codes
       are lost; the code of an abort is mpiexec's own. Rank 0 aborts once every rank is done;
       the others wait in MPI_Finalize to be ended with it. */
    fflush(stdout);
    fflush(stderr);
    int rank = sc_par_rank(g_par);
    sc_par_barrier(g_par);
    if (rank == 0) {
        sc_cleanup_run(0); /* an abort skips atexit: temporary files and locks go now */
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDERR_FILENO); /* MPICH's "Abort(6) ..." line would read as a crash */
        sc_par_abort(g_par, code);
    }
    sc_par_finalize(g_par);
    exit(code);
}

static void on_signal(int sig) { g_stop = sig; }

void sc_longrun_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

int sc_longrun_stop_requested(void) { return g_stop != 0; }

/* Rank 0's code and message to every rank. */
static int agree(int code, sc_err *err)
{
    if (g_par) {
        sc_par_bcast(g_par, &code, sizeof code, 0, err);
        if (code) sc_par_bcast(g_par, err->msg, sizeof err->msg, 0, err);
        err->code = code;
    }
    return code;
}

void sc_longrun_checkpoint(sc_cli *cli, const char *given, int resume, char *path, size_t n, int *exists)
{
    sc_err err = {0};
    if ((size_t)(given ? snprintf(path, n, "%s", given) : snprintf(path, n, "%s.ckpt", cli->output)) >= n) {
        sc_fail(&err, SC_EIO, "%s: the checkpoint's name is too long", given ? given : cli->output);
        sc_longrun_die(&err);
    }
    /* the checkpoint is removed when the run completes: never the output, an input or the config */
    sc_cli_add_output_named(cli, path, "checkpoint");
    /* the run owns its output and checkpoint before it looks at either (a second run, --resume
       or not, is refused here), and both can be written: found now, not after the first segment */
    static int output_locked;
    int code = 0;
    if (!g_par || sc_par_rank(g_par) == 0) {
        code = output_locked ? 0 : sc_cli_lock(cli->output, "output", cli->argc, cli->argv, &err);
        output_locked = 1;
        if (!code) code = sc_cli_check_writable(path, "checkpoint", &err);
        if (!code) code = sc_cli_lock(path, "checkpoint", cli->argc, cli->argv, &err);
    }
    if (agree(code, &err)) sc_longrun_die(&err);
    struct stat st;
    *exists = stat(path, &st) == 0;
    if (*exists && !resume) {
        sc_fail(&err, SC_EUSAGE, "%s holds the work of an earlier run: pass --resume to continue it, or delete it to start afresh", path);
        sc_longrun_die(&err);
    }
}

int sc_longrun_check_output(const char *output, sc_err *err)
{
    int code = 0;
    if (!g_par || sc_par_rank(g_par) == 0) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", output);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else snprintf(dir, sizeof dir, ".");
        if (access(dir, W_OK)) code = sc_fail(err, SC_EIO, "%s: cannot write into %s", output, dir[0] ? dir : "/");
    }
    return agree(code, err);
}

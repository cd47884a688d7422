/* What the long-running MPI tools (sample-openloop, learn-feedback) share: one error exit for
 * every rank, signals that ask for a checkpoint and a clean stop, and the checks made before
 * hours of work (a checkpoint left by an earlier run, an output that cannot be written). */
#ifndef SC_LONGRUN_H
#define SC_LONGRUN_H
#include "cli.h"

struct sc_par;
/* Records the tool's ranks and command line for sc_longrun_die. */
void sc_longrun_begin(const sc_cli *cli, struct sc_par *par);
/* The options every such tool takes besides the common ones. */
typedef struct sc_longrun_opts {
    int resume;             /* --resume */
    const char *checkpoint; /* --checkpoint FILE, or NULL */
} sc_longrun_opts;
/* The start every such tool makes: MPI, the arguments (a CONFIG, an OUTPUT, ninputs inputs and,
 * with checkpoints, the options above), ranks other than 0 quiet below warnings (rank 0 reports)
 * and, with checkpoints, the signals caught (without, a signal ends the run and removes its
 * unfinished output). Returns the rank; exits on an error. */
int sc_longrun_start(sc_cli *cli, int *argc, char ***argv, const char *usage, int ninputs, int checkpoints, sc_longrun_opts *opts,
                     struct sc_par **par);
/* Rank 0 prints the error (every rank meets the same input errors); all ranks finalize MPI and
 * exit with the error's code. */
void sc_longrun_die(const sc_err *err) __attribute__((noreturn));
/* Every rank ends with code (the same on all), MPI finalized. After a stop signal a nonzero code
 * ends the job through an abort on rank 0, so that mpiexec.mpich's own status is the code. */
void sc_longrun_exit(int code) __attribute__((noreturn));
/* SIGTERM, SIGUSR1 and SIGINT set a flag sc_longrun_stop_requested reads (the library polls it
 * between samples, checkpoints and returns SC_EINTERRUPTED). */
void sc_longrun_catch_signals(void);
int sc_longrun_stop_requested(void);
/* The checkpoint path (given, or OUTPUT.ckpt) and whether one is there, before any work: the
 * checkpoint may not be the output, another file written, an input or the config (exit 1);
 * rank 0 takes the run's locks on the output (at the first call) and the checkpoint (cli.h,
 * sc_cli_lock: held by another run -> exit 1 naming it, --resume or not) and checks that the
 * checkpoint can be written (exit 3 naming it). Without --resume an existing checkpoint is a
 * usage error (it would be overwritten). */
void sc_longrun_checkpoint(sc_cli *cli, const char *given, int resume, char *path, size_t n, int *exists);
/* SC_EIO when the output's folder is not writable (checked on rank 0, agreed by all). */
int sc_longrun_check_output(const char *output, sc_err *err);

#endif

/* Shared command-line handling for the softcon tools: `tool -c config.yaml [-o out.h5]
 * [options] [inputs]`, --help, --version, -v/-q, --seed, --threads. Only cmd/ prints and exits.
 *
 * What every tool gets from sc_cli_parse, before it does any work:
 *  - usage errors exit 1 (SC_EUSAGE): unknown options, a missing value, `-o ''`;
 *  - the output must not be the same file (device and inode, so links and other spellings
 *    count; for files that do not exist yet, the real path of the folder + the name) as any
 *    input or the config, nor as another file the run writes: exit 1. Every other file the run
 *    reads or writes (a tool's own options, files named in the config or inside an input, the
 *    .xdmf, the checkpoint) joins the check through sc_cli_add_input / sc_cli_add_output;
 *  - the output's folder must be writable and its temporary name short enough: exit 3;
 *  - the run owns its output: an advisory lock (flock) on OUTPUT.lock, which names the holder
 *    (pid, host, start, command line), is held until the process ends and removed at exit; a
 *    second run on the same output is refused at once, exit 1, naming the holder. A lock file
 *    left by a killed run holds no lock and does not block;
 *  - SIGINT, SIGTERM, SIGHUP and SIGUSR1 remove every temporary file and unfinished output in
 *    the registry of core/cleanup.h (filled by the HDF5 layer and the file writers) and end the
 *    process by the signal (shell status 128 + N); signals ignored at start-up (nohup, a
 *    background job's SIGINT) stay ignored. A tool that must stop cleanly instead (write a
 *    checkpoint, exit with its own code) calls sc_cli_poll_signals() and checks
 *    sc_cli_stop_requested() at safe points; a second signal then ends it at once;
 *  - at exit the temporary files still registered are removed; sc_cli_die removes the
 *    unfinished outputs too, so a failed run leaves nothing;
 *  - the environment variables of environment.h are read and handed to the library first;
 *  - library code that cannot return an error (an ODE assertion outside a step) ends the process
 *    through sc_fatal with the tool's name, its code and the same clean-up. */
#ifndef SC_CLI_H
#define SC_CLI_H
#include <stdint.h>
#include "core/status.h"

#define SC_CLI_MAX_INPUTS 8
#define SC_CLI_MAX_FILES  16

/* need_output of sc_cli_parse */
enum {
    SC_CLI_NO_OUTPUT = 0,       /* -o optional */
    SC_CLI_OUTPUT = 1,          /* -o required; it may not be an input or the config */
    SC_CLI_OUTPUT_IN_PLACE = 2, /* -o required; it may be an input (the tool replaces it atomically) */
    SC_CLI_OUTPUT_DIR = 3,      /* -o required, a folder the tool fills (render) */
    SC_CLI_DEFER_LOCK = 16      /* or'ed in: the tool takes the output's lock itself (sc_cli_lock) */
};

typedef struct sc_cli {
    const char *tool;
    const char *config; /* -c */
    const char *output; /* -o */
    const char *inputs[SC_CLI_MAX_INPUTS];
    int ninputs;
    uint64_t seed; /* --seed, default 1 */
    int seed_given;
    int threads; /* --threads, default 1 (sc_cli_take_threads) */
    int argc;
    char **argv;
    /* every file the run reads / writes, for the same-file check */
    const char *read[SC_CLI_MAX_FILES], *written[SC_CLI_MAX_FILES];
    const char *read_what[SC_CLI_MAX_FILES], *written_what[SC_CLI_MAX_FILES]; /* "config", "checkpoint", ... */
    int nread, nwritten, in_place;
} sc_cli;

/* A tool's own option: called with an option the common parser does not know and the next
 * argument (NULL at the end); returns 1 and sets *used (1: the option alone, 2: with its
 * value) if it is the tool's, -1 if it is the tool's but needs a value that is missing,
 * else 0. */
typedef int (*sc_cli_extra_fn)(const char *name, const char *value, int *used);

/* Parses argv; prints usage and exits 0 for --help / --version; exits SC_EUSAGE on bad usage
 * or when the output is an input or the config; exits SC_EIO when an output file cannot be
 * created (probed before any work). extra (may be NULL) takes the tool's own options.
 * need_output: one of SC_CLI_*OUTPUT*. Installs the signal and exit handlers described above. */
void sc_cli_parse(sc_cli *cli, int argc, char **argv, const char *tool, const char *usage, int min_inputs, int max_inputs, int need_config,
                  int need_output, sc_cli_extra_fn extra);
/* Another file the run reads (an option's value: simulate --trajectory) or writes (mesh-prep
 * --surface-obj, the .xdmf beside an output): checked against the other side at once, exit
 * SC_EUSAGE naming both on a clash. NULL is ignored. */
void sc_cli_add_input(sc_cli *cli, const char *path);
void sc_cli_add_output(sc_cli *cli, const char *path);
/* The same, saying what the file is in the message ("motion.bvh of the config", "checkpoint"). */
void sc_cli_add_input_named(sc_cli *cli, const char *path, const char *what);
void sc_cli_add_output_named(sc_cli *cli, const char *path, const char *what);
/* SC_EIO naming the path when `what` (an output, a checkpoint) cannot be written: a folder
 * missing or read-only, a name whose temporary name (core/cleanup.h) would be too long, a
 * directory. Probed by creating and removing a temporary file. */
int sc_cli_check_writable(const char *path, const char *what, sc_err *err);
/* Takes the run's lock on PATH.lock (PATH without trailing '/': a folder's lock is beside it),
 * writing the holder's pid, host, start time and command line into it: SC_EUSAGE naming the
 * holder when another run holds it, SC_EIO when it cannot be created. Held until the process
 * ends; the file is removed at exit (core/cleanup.h). */
int sc_cli_lock(const char *path, const char *what, int argc, char **argv, sc_err *err);
/* How the usage errors found after parsing end the process (default: print, exit): the MPI
 * tools pass sc_longrun_die so that one rank reports and every rank finalizes. */
void sc_cli_set_die(void (*die)(const sc_err *err));
/* Called before the parser's own exits (--help, --version, usage errors): the MPI tools finalize
 * there, so that even `--help` leaves MPI as it found it. */
void sc_cli_set_leave(void (*leave)(void));
/* Lets sc_cli_parse take --threads N (threads of a rank: the MPI tools, before parsing); the
 * other tools refuse it as a usage error naming it. */
void sc_cli_take_threads(void);
/* Prints "tool: error: message" on stderr, removes temporary files and unfinished outputs
 * (core/cleanup.h) and exits with err->code. */
void sc_cli_die(const sc_cli *cli, const sc_err *err) __attribute__((noreturn));

/* Opt-in for tools that stop at safe points: SIGINT, SIGTERM, SIGHUP and SIGUSR1 only record
 * the signal; sc_cli_stop_requested() returns its number (0: none). Temporary files are still
 * removed at exit. */
void sc_cli_poll_signals(void);
int sc_cli_stop_requested(void);

#endif

#ifndef SC_CLI_CONFIG
#define SC_CLI_CONFIG
struct sc_cfg;
/* One config file may carry the sections of several tools: each tool reads its own and
 * calls this to leave the others' alone (any other top-level key is still an error). */
void sc_cli_ignore_other_sections(struct sc_cfg *cfg);
#endif
